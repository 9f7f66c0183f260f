"""One tap's segment: its files chunked, tokenized and inverted (`segment_bytes`) into one
immutable file of everything but the postings, and its postings, which go on into a tier
(`tier.py`); the segment opened for hits and for the merge (`Segment`).

A segment is a pure function of the tap's files at one commit, its entries and the
chunking parameters; `segment_key` hashes exactly those, so a changed tap gets a new file.
Sections and their types: docs/index-format.md.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from array import array
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any, Dict, List, Tuple

from boost_cli.core import paths
from boost_cli.core.binio import to_le
from boost_cli.core.index.container import Container, dumps, pack
from boost_cli.core.index.contents import (
    DL_MAX,
    ChunkRow,
    ChunkTable,
    ContentTable,
    chunk_file,
    read_file,
)
from boost_cli.core.index.layout import (
    ENRICH_SPAN,
    FORMAT_VERSION,
    SEGMENT_MAGIC,
    TAP_MAGIC,
    damaged,
)
from boost_cli.core.index.neardup import KEY_BYTES, NO_SKETCH, sketch
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.postings import invert, tap_sections
from boost_cli.core.models import MAX_FILE_BYTES, Entry, TapSnapshot
from boost_cli.core.tokenize import tokenize

_SPAN = struct.Struct("<5I")  # chunk_span row: start, end (characters), start, end (bytes), crc32
_U32X2 = struct.Struct("<II")
_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,80}")

# Which sections `pack_segment` writes. It is part of every segment's key, so a build never
# reuses a segment another layout wrote and an incremental build stays byte-identical to
# one from scratch. Readers do not need it: they look sections up by name. 2: the
# `headings` section, which no query read, is gone. 3 (format 2): the entry field
# postings and the near-duplicate signatures. 4 (format 3): the postings go to the tiers.
# 5: `content_name` is a JSON list (a name with a newline split the old "\n"-joined
# table), and a root inside BOOST_HOME is recorded relative to it (`portable_root`).
SEGMENT_LAYOUT = 5
HOME_PREFIX = "$BOOST_HOME/"  # a recorded root inside the home: `portable_root`


def portable_root(root: Path) -> str:
    """How the index records a tap's folder: relative to BOOST_HOME (``$BOOST_HOME/repos/x``)
    when it is inside the home, so a home copied or moved elsewhere keeps every key and
    segment; any other folder as it is. `resolve_root` reads it back."""
    try:
        rel = Path(root).relative_to(paths.boost_home())
    except ValueError:
        return str(root)
    return HOME_PREFIX + rel.as_posix()


def resolve_root(recorded: str) -> Path:
    """The folder a root recorded by `portable_root` names, in the home of this process."""
    if recorded.startswith(HOME_PREFIX):
        return paths.boost_home() / recorded[len(HOME_PREFIX) :]
    return Path(recorded)


def safe_name(name: str) -> str:
    """A file-name-safe form of a tap name (the key keeps distinct taps apart)."""
    if _SAFE_NAME.fullmatch(name) and name not in (".", ".."):
        return name
    return f"tap{zlib.crc32(name.encode('utf-8')):08x}"


def segment_key(snap: TapSnapshot, params: IndexParams, prefix: bool) -> str:
    """What a segment depends on: commit, entries, chunking, prefix, layout, boost version.
    Not the tap's folder: a home moved elsewhere, or a replica's imported copy, keys the
    same files the same."""
    from boost_cli import __version__

    entries = sorted((e.to_dict() for e in snap.entries), key=itemgetter("path"))
    blob = dumps(
        [
            FORMAT_VERSION,
            SEGMENT_LAYOUT,
            __version__,
            snap.name,
            snap.commit,
            portable_root(snap.root),
            prefix,
            [params.chunk_target, params.chunk_overlap, params.max_chunks],
            *([params.enrich_shape()] if params.enrich_shape() else []),
            entries,
        ]
    )
    return hashlib.sha256(blob).hexdigest()[:16]


def enrichment_texts(params: IndexParams) -> Dict[str, str]:
    """The store's texts by item digest when ``params`` index enrichment, else {}. A store
    damaged since the key was taken indexes none (the next build keys it so)."""
    if not params.enrich_shape():
        return {}
    from boost_cli.core.enrich import store as enrich_store

    try:
        return enrich_store.texts()
    except enrich_store.EnrichDamaged:
        return {}


def enrichment_terms(entry: Entry, data: bytes, enriched: Dict[str, str]) -> List[str]:
    """The terms of ``entry``'s enrichment (its sentence and task phrasings), or [] when it
    has none. Keyed by the entry's prompt item (`enrich.prompt.item_of`), as stored."""
    from boost_cli.core.enrich.prompt import item_of

    text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    item = item_of(entry.kind, entry.name, entry.description, text)
    words = enriched.get(item.digest)
    return tokenize(words) if words else []


def with_context(
    entry: Entry, rows: List[ChunkRow], terms: List[str], weight: int, prefix: bool
) -> List[ChunkRow]:
    """``rows`` with the enrichment's ``terms`` added ``weight`` times to every chunk, as
    contextual retrieval prepends a chunk's context to it: a query word the skill's text
    lacks then meets the skill's own words in one chunk. A file with no chunk gets one
    holding its context prefix and the enrichment (`ENRICH_SPAN`: no text of the file)."""
    extra = terms * weight
    if not rows:
        from boost_cli.core.chunker import context_prefix

        head = tokenize(context_prefix(entry.name, entry.description, ())) if prefix else []
        return [ChunkRow(*ENRICH_SPAN, head + extra)]
    return [row._replace(terms=row.terms + extra) for row in rows]


def segment_bytes(
    snap: TapSnapshot, params: IndexParams, prefix: bool, key: str
) -> Tuple[bytes, bytes, List[str]]:
    """Chunk, tokenize and invert one tap: the segment file's bytes, the tap's postings
    file's bytes (`tier.TapPostings` reads it), and the skipped entry ids.

    Steps: contents (read each file, dedupe by content hash, chunk, sketch), invert the
    chunks and the entry fields, pack. A pure function of its arguments and the tap's
    files, so it can run in a worker process.
    """
    contents = ContentTable()
    chunks = ChunkTable()
    postings: Dict[str, List[int]] = {}
    skipped: List[str] = []
    enriched = enrichment_texts(params)
    for entry in sorted(snap.entries, key=lambda e: e.path):
        data = read_file(snap.root / entry.path)
        if data is None:
            skipped.append(entry.id)
            continue
        j = contents.add(entry, data)
        if j is None:
            continue  # byte-identical to an earlier file: the entry joined that content
        chunked = chunk_file(entry, data, snap.name, params, prefix)
        terms = enrichment_terms(entry, data, enriched) if enriched else []
        if terms:
            chunked.rows[:] = with_context(entry, chunked.rows, terms, params.enrich_weight, prefix)
        invert(postings, len(chunks), [row.terms for row in chunked.rows])
        chunks.add(j, chunked.rows)
        contents.sketches.append(sketch(chunked.body_terms))
    fields: Dict[str, List[int]] = {}
    invert(fields, 0, contents.field_terms)  # a field posting's id is the content id
    id_code = "H" if len(chunks) <= 0x10000 else "I"
    field_code = "H" if len(contents) <= 0x10000 else "I"
    tap_meta = {
        "kind": "tap",
        "tap": snap.name,
        "key": key,
        "chunks": len(chunks),
        "contents": len(contents),
        "id_code": id_code,
        "field_code": field_code,
    }
    sections = tap_sections(postings, fields, id_code, field_code)
    counts = {"postings": sum(map(len, postings.values())), "terms": len(postings)}
    seg = pack_segment(snap, key, contents, chunks, counts)
    return seg, pack(TAP_MAGIC, tap_meta, sections), skipped


def pack_segment(
    snap: TapSnapshot,
    key: str,
    contents: ContentTable,
    chunks: ChunkTable,
    counts: Dict[str, int],
) -> bytes:
    """The segment file: its tables as sections, and what the reader needs in the meta."""
    keys = [sorted(k) for k in contents.keys]
    # Records are read one at a time (only the hits'), so each is compressed on its own.
    content_json = [
        zlib.compress(dumps({**rec, "entries": en}), 6)
        for rec, en in zip(contents.records, contents.entries)
    ]
    sections = [
        ("chunk_content", to_le(chunks.content)),
        ("chunk_dl", to_le(chunks.dl)),
        ("chunk_span", to_le(chunks.span)),
        ("content_first", to_le(chunks.content_first)),
        ("content_kinds", bytes(contents.kinds)),
        ("content_hash", b"".join(contents.hashes)),
        ("content_off", to_le(array("I", accumulate(map(len, content_json), initial=0)))),
        ("content_json", b"".join(content_json)),
        ("field_dl", to_le(array("H", (min(len(t), DL_MAX) for t in contents.field_terms)))),
        ("content_name", dumps(contents.names)),
        ("listing_off", to_le(array("I", accumulate(map(len, keys), initial=0)))),
        ("listing_keys", b"".join(h for k in keys for h in k)),
        ("content_sketch", b"".join(contents.sketches)),
    ]
    meta = {
        "kind": "segment",
        "tap": snap.name,
        "commit": snap.commit,
        "root": portable_root(snap.root),
        "key": key,
        "counts": {
            "entries": sum(len(x) for x in contents.entries),
            "contents": len(contents),
            "chunks": len(chunks),
            **counts,
        },
    }
    return pack(SEGMENT_MAGIC, meta, sections)


class Segment:
    """One tap's segment, opened for hits and for the merge."""

    def __init__(self, path: Path) -> None:
        self.c = c = Container(path, SEGMENT_MAGIC)
        meta = c.meta
        try:
            try:
                self.tap = str(meta["tap"])
                self.key = str(meta["key"])
                self.recorded_root = str(meta["root"])
                self.root = resolve_root(self.recorded_root)
                self.commit = str(meta["commit"])
                self.counts: Dict[str, int] = {k: int(v) for k, v in meta["counts"].items()}
            except (KeyError, TypeError, ValueError) as exc:
                raise damaged(f"{path.name} has a bad table of contents") from exc
            self._coff = c.span("content_off")
            self._cjson = c.span("content_json")
            self._chash = c.span("content_hash")
            self._cspan = c.span("chunk_span")
        except BaseException:
            c.close()
            raise

    def record(self, j: int) -> Dict[str, Any]:
        """Content ``j``'s record: its entries (dicts), and its file's size and CRC32."""
        a, b = _U32X2.unpack(self.c.slice(self._coff, 4 * j, 4 * j + 8))
        try:
            rec = json.loads(zlib.decompress(self.c.slice(self._cjson, a, b)))
        except (ValueError, zlib.error) as exc:
            raise damaged(f"{self.c.path.name}: bad content record") from exc
        if not isinstance(rec, dict):
            raise damaged(f"{self.c.path.name}: bad content record")
        return rec

    def span(self, chunk: int) -> Tuple[int, int, int, int, int]:
        """Local chunk ``chunk``'s (start, end) in characters, (start, end) in bytes, CRC32."""
        a, b, bs, be, crc = _SPAN.unpack(self.c.slice(self._cspan, 20 * chunk, 20 * chunk + 20))
        return a, b, bs, be, crc

    def content_hash(self, j: int) -> str:
        return self.c.slice(self._chash, 32 * j, 32 * j + 32).hex()

    def signatures(self, n_contents: int) -> Tuple[List[str], List[List[bytes]], List[bytes]]:
        """Per content its name, its listing-key hashes and its sketch (for the merge)."""
        c = self.c
        try:
            names = json.loads(c.read("content_name"))
        except ValueError:
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise damaged(f"{c.path.name}: bad name table")
        off = c.ints("listing_off", "I")
        raw_keys = c.read("listing_keys")
        raw_sketch = c.read("content_sketch")
        size = len(NO_SKETCH)
        if (
            len(names) != n_contents
            or len(off) != n_contents + 1
            or off[-1] * KEY_BYTES != len(raw_keys)
            or len(raw_sketch) != size * n_contents
        ):
            raise damaged(f"{c.path.name}: tables disagree")
        keys = [
            [raw_keys[KEY_BYTES * i : KEY_BYTES * (i + 1)] for i in range(off[j], off[j + 1])]
            for j in range(n_contents)
        ]
        sketches = [raw_sketch[size * j : size * (j + 1)] for j in range(n_contents)]
        return names, keys, sketches
