"""What is embedded for an entry: the "entry" unit (name, description, start of the
body) or the "chunk" unit (one text per chunk), each with the snippet a hit shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from boost_cli.core.models import MAX_FILE_BYTES, Entry, TapSnapshot, content_hash
from boost_cli.core.text import clip_words

UNITS = ("entry", "chunk")
ENTRY_BODY_CHARS = 800  # the body excerpt embedded with name + description ("entry" unit)
SNIPPET_CHARS = 300


@dataclass(frozen=True)
class Unit:
    """One text to embed: an entry (chunk -1) or one of its chunks."""

    entry: Entry
    chunk: int
    text: str
    snippet: str


def _read(snapshot: TapSnapshot, entry: Entry) -> Tuple[str, str]:
    """(file text, `content_hash` of its bytes): copies of one file share the hash."""
    with open(snapshot.root / entry.path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES)
    return data.decode("utf-8", errors="replace"), content_hash(data)


def entry_text(entry: Entry, body: str) -> str:
    """The "entry" unit: name and description, then the first ~800 characters of the body
    (code-fence and table noise dropped, whitespace collapsed)."""
    from boost_cli.core.chunker import clean_score_text, context_prefix

    head = context_prefix(entry.name, entry.description, ())
    excerpt = clip_words(clean_score_text(body[: ENTRY_BODY_CHARS * 3]), ENTRY_BODY_CHARS)
    return f"{head}\n\n{excerpt}" if excerpt else head


def units_for(entry: Entry, text: str, unit: str) -> List[Unit]:
    """The texts embedded for one entry whose whole file is ``text``."""
    from boost_cli.core.chunker import chunk_body, context_prefix
    from boost_cli.core.frontmatter import split

    _, body, _ = split(text)
    if unit == "chunk":
        chunks = chunk_body(body, entry_id=entry.id, tap=entry.tap, kind=entry.kind)
        if chunks:
            return [
                Unit(
                    entry,
                    c.index,
                    context_prefix(entry.name, entry.description, c.heading)
                    + "\n\n"
                    + " ".join(c.score_text.split()),
                    clip_words(c.text, SNIPPET_CHARS),
                )
                for c in chunks
            ]
    return [Unit(entry, -1, entry_text(entry, body), clip_words(body, SNIPPET_CHARS))]


def tap_units(snapshot: TapSnapshot, unit: str) -> Tuple[List[Unit], Dict[str, Optional[str]], int]:
    """(units, entry id -> file sha256, entries skipped because their file vanished)."""
    units: List[Unit] = []
    hashes: Dict[str, Optional[str]] = {}
    skipped = 0
    for entry in snapshot.entries:
        try:
            text, digest = _read(snapshot, entry)
        except OSError:
            skipped += 1  # removed since the scan: the next scan drops it too
            continue
        hashes[entry.id] = digest
        units.extend(units_for(entry, text, unit))
    return units, hashes, skipped
