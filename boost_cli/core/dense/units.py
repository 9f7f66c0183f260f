"""What is embedded for an entry: the "entry" unit (name, description, the entry's
index-time enrichment when the store has one, start of the body) or the "chunk" unit (one
text per chunk), each with the snippet a hit shows.

The enrichment (docs/enrich.md) goes right after name and description, before the body
excerpt: the local model reads 128 tokens, which name, description and the excerpt already
fill, so an enrichment appended at the end would be cut away unread. Vectors are keyed by
the sha256 of the text embedded, so a changed enrichment re-embeds only its entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

from boost_cli.core.enrich import store as enrich_store
from boost_cli.core.enrich.prompt import item_of
from boost_cli.core.models import MAX_FILE_BYTES, Entry, TapSnapshot, content_hash
from boost_cli.core.text import clip_words

UNITS = ("entry", "chunk")
ENTRY_BODY_CHARS = 800  # the body excerpt embedded with name + description ("entry" unit)
SNIPPET_CHARS = 300


@dataclass(frozen=True)
class Unit:
    """One text to embed: an entry (chunk -1) or one of its chunks; ``enriched``: the text
    holds the entry's enrichment."""

    entry: Entry
    chunk: int
    text: str
    snippet: str
    enriched: bool = False


def _read(snapshot: TapSnapshot, entry: Entry) -> Tuple[str, str]:
    """(file text, `content_hash` of its bytes): copies of one file share the hash."""
    with open(snapshot.root / entry.path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES)
    return data.decode("utf-8", errors="replace"), content_hash(data)


def enrichments(unit: str) -> Dict[str, str]:
    """The enrichment texts (`enrich.store.texts`: sentence, then one phrase a line) by
    item digest that units of ``unit`` embed: none for the "chunk" unit, and none with no
    store or a damaged one (the plain text is embedded, as BM25 then indexes none)."""
    if unit != "entry":
        return {}
    try:
        return enrich_store.texts()
    except enrich_store.EnrichDamaged:
        return {}


def enrichment_key(enriched: Mapping[str, str]) -> str:
    """What a vector store records of the enrichment it embedded (`enrich.store.fingerprint`;
    "" for none): a build that finds another one re-reads every tap (the cache re-embeds
    only the texts that changed)."""
    return enrich_store.fingerprint(enriched)


def entry_text(entry: Entry, body: str, enrichment: str = "") -> str:
    """The "entry" unit: name and description, then the entry's ``enrichment`` (when it has
    one), then the first ~800 characters of the body (code-fence and table noise dropped,
    whitespace collapsed)."""
    from boost_cli.core.chunker import clean_score_text, context_prefix

    head = context_prefix(entry.name, entry.description, ())
    excerpt = clip_words(clean_score_text(body[: ENTRY_BODY_CHARS * 3]), ENTRY_BODY_CHARS)
    words = " ".join(enrichment.split())
    return "\n\n".join(part for part in (head, words, excerpt) if part)


def units_for(
    entry: Entry, text: str, unit: str, enriched: Optional[Mapping[str, str]] = None
) -> List[Unit]:
    """The texts embedded for one entry whose whole file is ``text``; ``enriched`` maps item
    digests to enrichment texts (`enrichments`), read by the "entry" unit only."""
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
    words = ""
    if enriched:
        words = enriched.get(item_of(entry.kind, entry.name, entry.description, text).digest, "")
    return [
        Unit(
            entry,
            -1,
            entry_text(entry, body, words),
            clip_words(body, SNIPPET_CHARS),
            bool(words.strip()),
        )
    ]


def tap_units(
    snapshot: TapSnapshot, unit: str, enriched: Optional[Mapping[str, str]] = None
) -> Tuple[List[Unit], Dict[str, Optional[str]], int]:
    """(units, entry id -> file sha256, entries skipped because their file vanished);
    ``enriched`` as in `units_for`."""
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
        units.extend(units_for(entry, text, unit, enriched))
    return units, hashes, skipped
