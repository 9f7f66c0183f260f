"""What a tap's files become in its segment: distinct contents (byte-identical files are
indexed once; their entries share the content) with their entry field ("name.
description") and near-duplicate signature, and each content's chunks with the terms they
are scored by, and the byte range a snippet is read back from.

The first step of a segment build (`segment.segment_bytes`): read, dedupe by content
hash, chunk; `postings` inverts what this step yields.
"""

from __future__ import annotations

import hashlib
import zlib
from array import array
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from boost_cli.core.index.layout import KIND_BITS, NO_SPAN
from boost_cli.core.index.neardup import key_hash, names_of
from boost_cli.core.index.params import IndexParams
from boost_cli.core.models import MAX_FILE_BYTES, Entry
from boost_cli.core.tokenize import tokenize

DL_MAX = 0xFFFF  # chunk_dl and field_dl are u16


class ChunkRow(NamedTuple):
    """One chunk of a file: where it is, and the terms it is scored by."""

    start: int  # characters of the file's text
    end: int
    byte_start: int  # bytes of the file; NO_SPAN when the file is not valid UTF-8
    byte_end: int
    crc32: int  # of those bytes (0 when NO_SPAN)
    terms: List[str]


def read_file(path: Path) -> Optional[bytes]:
    """The file's bytes, or None when it cannot be read (its entry is skipped)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def byte_spans(text: str, spans: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Character spans of ``text`` as byte spans of its UTF-8 encoding (spans ascending)."""
    if text.isascii():
        return list(spans)
    out = []
    pos = 0
    nbytes = 0
    for s, e in spans:
        bs = nbytes + len(text[pos:s].encode("utf-8"))
        be = bs + len(text[s:e].encode("utf-8"))
        out.append((bs, be))
        pos, nbytes = s, bs
    return out


class Chunked(NamedTuple):
    """A file chunked: its chunks, and the terms of its body for its sketch (`neardup`):
    the chunks' own terms one after the other (no prefix; the overlaps only repeat
    shingles, so the body is not tokenized a second time)."""

    rows: List[ChunkRow]
    body_terms: List[str]


def chunk_file(entry: Entry, data: bytes, tap: str, params: IndexParams, prefix: bool) -> Chunked:
    """The chunks of the file ``entry`` names, whose bytes are ``data``.

    With ``prefix`` every chunk's terms start with those of its context prefix (name,
    description, heading path), and a file with an empty body still gets one empty
    chunk, so it is found by name and description.
    """
    # Imported here: queries never chunk, and `import boost_cli.core.index` stays lean.
    from boost_cli.core.chunker import chunk_body, context_prefix
    from boost_cli.core.frontmatter import split

    head_bytes = data[:MAX_FILE_BYTES]
    text = head_bytes.decode("utf-8", errors="replace")  # as TapSnapshot.text() decodes
    _, body, offset = split(text)
    chunks = [
        (offset + ch.start, offset + ch.end, ch.heading, ch.score_text)
        for ch in chunk_body(
            body,
            entry_id=entry.id,
            tap=tap,
            kind=entry.kind,
            target=params.chunk_target,
            overlap=params.chunk_overlap,
            max_chunks=params.max_chunks,
        )
    ]
    if not chunks and prefix:
        chunks = [(0, 0, (), "")]
    # Snippets are read back from the file by byte range and checked by CRC32; when the
    # file is not valid UTF-8 the byte range is unknown and the whole file is read.
    valid = text.encode("utf-8") == head_bytes
    spans = byte_spans(text, [(s, e) for s, e, _, _ in chunks]) if valid else None
    prefixes: Dict[Tuple[str, ...], List[str]] = {}
    rows = []
    body_terms: List[str] = []
    for n, (start, end, heading, score_text) in enumerate(chunks):
        terms = tokenize(score_text)
        body_terms += terms
        if prefix:
            head = prefixes.get(heading)
            if head is None:
                head = prefixes[heading] = tokenize(
                    context_prefix(entry.name, entry.description, heading)
                )
            terms = head + terms
        if spans is not None:
            bs, be = spans[n]
            rows.append(ChunkRow(start, end, bs, be, zlib.crc32(head_bytes[bs:be]), terms))
        else:
            rows.append(ChunkRow(start, end, NO_SPAN, NO_SPAN, 0, terms))
    return Chunked(rows, body_terms)


class ContentTable:
    """A tap's distinct files in path order: per content its SHA-256, entries, kinds, its
    file's size and CRC32 (the check a snippet read makes), the terms of its entry field
    ("name. description" of its first entry, full description), its names, the hashes of
    its entries' listing keys and its body sketch (`neardup`)."""

    def __init__(self) -> None:
        self.ids: Dict[bytes, int] = {}  # SHA-256 → content id
        self.hashes: List[bytes] = []
        self.entries: List[List[Dict[str, Any]]] = []
        self.records: List[Dict[str, Any]] = []
        self.kinds = bytearray()
        self.field_terms: List[List[str]] = []
        self.names: List[str] = []
        self.keys: List[Set[bytes]] = []
        self.sketches: List[bytes] = []  # set by the segment build once the file is chunked

    def __len__(self) -> int:
        return len(self.hashes)

    def add(self, entry: Entry, data: bytes) -> Optional[int]:
        """The new content id for ``data``; None when it is a copy of an earlier file (the
        entry then joins that content)."""
        # Keyed by the hash of the file's bytes, the hash `search.collapse_copies` uses too.
        digest = hashlib.sha256(data).digest()
        j = self.ids.get(digest)
        if j is not None:
            self.entries[j].append(entry.to_dict())
            self.kinds[j] |= KIND_BITS.get(entry.kind, 0)
            self.keys[j].add(key_hash(entry.listing_key))
            return None
        j = self.ids[digest] = len(self.hashes)
        self.hashes.append(digest)
        self.entries.append([entry.to_dict()])
        self.kinds.append(KIND_BITS.get(entry.kind, 0))
        self.records.append({"size": len(data), "crc32": zlib.crc32(data)})
        self.field_terms.append(tokenize(f"{entry.name}. {entry.description}"))
        self.names.append(names_of(entry.name, entry.path))
        self.keys.append({key_hash(entry.listing_key)})
        return j


class ChunkTable:
    """Every chunk of a tap in content order: its content, its length in terms, and its
    span; and per content its first chunk."""

    def __init__(self) -> None:
        self.content = array("I")
        self.dl = array("H")
        self.span = array("I")  # 5 per chunk: start, end, byte start, byte end, crc32
        self.content_first = array("I", [0])

    def __len__(self) -> int:
        return len(self.dl)

    def add(self, content: int, rows: Sequence[ChunkRow]) -> None:
        """Append the chunks of ``content`` (the next content: contents come in order)."""
        for row in rows:
            self.content.append(content)
            self.dl.append(min(len(row.terms), DL_MAX))
            self.span.extend((row.start, row.end, row.byte_start, row.byte_end, row.crc32))
        self.content_first.append(len(self.dl))
