"""One tap's segment: its files chunked, tokenized and inverted into one immutable file
(`segment_bytes`), and that file opened for queries and for the merge (`Segment`).

A segment is a pure function of the tap's files at one commit, its entries and the
chunking parameters; `segment_key` hashes exactly those, so a changed tap gets a new file.
Sections and their types: docs/index-format.md.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from array import array
from collections import Counter
from itertools import accumulate, chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from boost_cli.core.binio import from_le, to_le
from boost_cli.core.index.container import Container, dumps, pack
from boost_cli.core.index.layout import (
    FORMAT_VERSION,
    KIND_BITS,
    NO_SPAN,
    SEGMENT_MAGIC,
    damaged,
)
from boost_cli.core.index.params import IndexParams
from boost_cli.core.models import MAX_FILE_BYTES, TapSnapshot
from boost_cli.core.tokenize import tokenize

_TF_MAX = 255  # tf is stored in one byte: no ~1000-character chunk holds a term 256 times
_DL_MAX = 0xFFFF
_TERM_MAX_BYTES = 255  # the dictionary stores a term's length in one byte
_SPAN = struct.Struct("<5I")  # chunk_span row: start, end (characters), start, end (bytes), crc32
_U32X2 = struct.Struct("<II")
_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,80}")


def safe_name(name: str) -> str:
    """A file-name-safe form of a tap name (the key keeps distinct taps apart)."""
    if _SAFE_NAME.fullmatch(name) and name not in (".", ".."):
        return name
    return f"tap{zlib.crc32(name.encode('utf-8')):08x}"


def segment_key(snap: TapSnapshot, params: IndexParams, prefix: bool) -> str:
    """What a segment depends on: commit, root, entries, chunking, prefix, boost version."""
    import hashlib

    from boost_cli import __version__

    entries = sorted((e.to_dict() for e in snap.entries), key=itemgetter("path"))
    blob = dumps(
        [
            FORMAT_VERSION,
            __version__,
            snap.name,
            snap.commit,
            str(snap.root),
            prefix,
            [params.chunk_target, params.chunk_overlap, params.max_chunks],
            entries,
        ]
    )
    return hashlib.sha256(blob).hexdigest()[:16]


def _read_file(path: Path) -> Optional[bytes]:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _byte_spans(text: str, spans: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
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


def segment_bytes(
    snap: TapSnapshot, params: IndexParams, prefix: bool, key: str
) -> Tuple[bytes, List[str]]:
    """Chunk, tokenize and invert one tap: the segment file's bytes and the skipped entry ids.

    Byte-identical files inside the tap are indexed once (their entries share one
    content). A pure function of its arguments and the tap's files, so it can run in a
    worker process.
    """
    import hashlib

    from boost_cli.core.chunker import chunk_body, context_prefix
    from boost_cli.core.frontmatter import split

    entries = sorted(snap.entries, key=lambda e: e.path)
    by_hash: Dict[bytes, int] = {}
    c_hash: List[bytes] = []
    c_entries: List[List[Dict[str, Any]]] = []
    c_records: List[Dict[str, Any]] = []
    c_headings: List[List[List[str]]] = []
    chunk_span = array("I")
    c_kinds = bytearray()
    c_first = array("I", [0])
    chunk_content = array("I")
    chunk_dl = array("H")
    post: Dict[str, List[int]] = {}
    skipped: List[str] = []
    for e in entries:
        # Bytes, not snapshot.text(): a content is keyed by the hash of the file's bytes
        # (the hash `search.collapse_copies` uses too); decoded exactly as text() does.
        data = _read_file(snap.root / e.path)
        if data is None:
            skipped.append(e.id)
            continue
        digest = hashlib.sha256(data).digest()
        j = by_hash.get(digest)
        if j is not None:
            c_entries[j].append(e.to_dict())
            c_kinds[j] |= KIND_BITS.get(e.kind, 0)
            continue
        j = by_hash[digest] = len(c_hash)
        c_hash.append(digest)
        c_entries.append([e.to_dict()])
        c_kinds.append(KIND_BITS.get(e.kind, 0))
        head_bytes = data[:MAX_FILE_BYTES]
        text = head_bytes.decode("utf-8", errors="replace")
        _, body, offset = split(text)
        chunks = [
            (offset + ch.start, offset + ch.end, ch.heading, ch.score_text)
            for ch in chunk_body(
                body,
                entry_id=e.id,
                tap=snap.name,
                kind=e.kind,
                target=params.chunk_target,
                overlap=params.chunk_overlap,
                max_chunks=params.max_chunks,
            )
        ]
        if not chunks and prefix:
            chunks = [(0, 0, (), "")]  # an empty body is still found by name and description
        # Snippets are read back from the file by byte range and checked by CRC32; when
        # the file is not valid UTF-8 the byte range is unknown and the whole file is read.
        valid = text.encode("utf-8") == head_bytes
        spans = _byte_spans(text, [(s, e_) for s, e_, _, _ in chunks]) if valid else None
        headings: List[List[str]] = []
        prefixes: Dict[Tuple[str, ...], List[str]] = {}
        for n, (start, end, heading, score_text) in enumerate(chunks):
            terms = tokenize(score_text)
            if prefix:
                head = prefixes.get(heading)
                if head is None:
                    head = prefixes[heading] = tokenize(
                        context_prefix(e.name, e.description, heading)
                    )
                terms = head + terms
            cid = len(chunk_dl)
            chunk_dl.append(min(len(terms), _DL_MAX))
            chunk_content.append(j)
            # One int per posting: chunk id in the high bits, tf (capped) in the low byte.
            shifted = cid << 8
            for term, tf in Counter(terms).items():
                code = shifted | (tf if tf < _TF_MAX else _TF_MAX)
                plist = post.get(term)
                if plist is None:
                    post[term] = [code]
                else:
                    plist.append(code)
            if spans is not None:
                bs, be = spans[n]
                chunk_span.extend((start, end, bs, be, zlib.crc32(head_bytes[bs:be])))
            else:
                chunk_span.extend((start, end, NO_SPAN, NO_SPAN, 0))
            headings.append(list(heading))
        c_records.append({"size": len(data), "crc32": zlib.crc32(data)})
        c_headings.append(headings)
        c_first.append(len(chunk_dl))

    # Term dictionary: rows sorted by (hash bucket, term); a bucket → byte-range table.
    terms_sorted = [t for t in sorted(post) if len(t.encode("utf-8")) <= _TERM_MAX_BYTES]
    encoded = [t.encode("utf-8") for t in terms_sorted]
    n_buckets = _bucket_count(len(encoded))
    mask = n_buckets - 1
    bucket_of = [zlib.crc32(t) & mask for t in encoded]
    order = sorted(range(len(encoded)), key=bucket_of.__getitem__)
    lists = [post[terms_sorted[i]] for i in order]
    starts = accumulate(map(len, lists), initial=0)
    rows = [
        bytes((len(encoded[i]),)) + encoded[i] + _U32X2.pack(start, len(plist))
        for i, start, plist in zip(order, starts, lists)
    ]
    bucket_bytes = [0] * n_buckets
    for i, row in zip(order, rows):
        bucket_bytes[bucket_of[i]] += len(row)
    flat = list(chain.from_iterable(lists))
    id_code = "H" if len(chunk_dl) <= 0x10000 else "I"
    # Records are read one at a time (only the hits'), so each is compressed on its own.
    content_json = [
        zlib.compress(dumps({**rec, "entries": en}), 6) for rec, en in zip(c_records, c_entries)
    ]
    sections = [
        ("dict_buckets", to_le(array("I", accumulate(bucket_bytes, initial=0)))),
        ("dict_rows", b"".join(rows)),
        ("vocab", b"\n".join(sorted(encoded))),
        ("post_ids", to_le(array(id_code, map((8).__rrshift__, flat)))),
        ("post_tfs", bytes(map((0xFF).__and__, flat))),
        ("chunk_content", to_le(chunk_content)),
        ("chunk_dl", to_le(chunk_dl)),
        ("chunk_span", to_le(chunk_span)),
        ("content_first", to_le(c_first)),
        ("content_kinds", bytes(c_kinds)),
        ("content_hash", b"".join(c_hash)),
        ("content_off", to_le(array("I", accumulate(map(len, content_json), initial=0)))),
        ("content_json", b"".join(content_json)),
        ("headings", zlib.compress(dumps(c_headings), 6)),
    ]
    meta = {
        "kind": "segment",
        "tap": snap.name,
        "commit": snap.commit,
        "root": str(snap.root),
        "key": key,
        "id_code": id_code,
        "buckets": n_buckets,
        "counts": {
            "entries": sum(len(x) for x in c_entries),
            "contents": len(c_hash),
            "chunks": len(chunk_dl),
            "terms": len(rows),
            "postings": len(flat),
        },
    }
    return pack(SEGMENT_MAGIC, meta, sections), skipped


def _bucket_count(n_terms: int) -> int:
    """A power of two near ``n_terms / 2``: ~2 terms per bucket, one small read a look-up."""
    n = 1
    while n * 2 < n_terms:
        n *= 2
    return n


def segment_job(args: Tuple[TapSnapshot, IndexParams, bool, str, str]) -> Tuple[str, List[str]]:
    """Build one segment and write it (also the worker-process entry); returns (tap, skipped)."""
    from boost_cli.core.atomic import write_bytes

    snap, params, prefix, key, path = args
    data, skipped = segment_bytes(snap, params, prefix, key)
    write_bytes(path, data)
    return snap.name, skipped


class Segment:
    """One tap's segment, opened for queries and for the merge."""

    def __init__(self, path: Path) -> None:
        self.c = c = Container(path, SEGMENT_MAGIC)
        meta = c.meta
        try:
            self.tap = str(meta["tap"])
            self.key = str(meta["key"])
            self.root = Path(meta["root"])
            self.commit = str(meta["commit"])
            self.id_code = str(meta["id_code"])
            self.n_buckets = int(meta["buckets"])
            self.counts: Dict[str, int] = {k: int(v) for k, v in meta["counts"].items()}
        except (KeyError, TypeError, ValueError) as exc:
            c.close()
            raise damaged(f"{path.name} has a bad table of contents") from exc
        n = self.n_buckets
        if self.id_code not in ("H", "I") or n < 1 or n & (n - 1):
            c.close()
            raise damaged(f"{path.name} has a bad table of contents")
        self.width = 2 if self.id_code == "H" else 4
        self._buckets = c.span("dict_buckets")
        self._rows = c.span("dict_rows")
        self._ids = c.span("post_ids")
        self._tfs = c.span("post_tfs")
        self._coff = c.span("content_off")
        self._cjson = c.span("content_json")
        self._chash = c.span("content_hash")
        self._cspan = c.span("chunk_span")
        if self._buckets[1] != 4 * (n + 1):
            c.close()
            raise damaged(f"{path.name}: bad length of dict_buckets")

    def postings(self, term: bytes, crc: int) -> Optional[Tuple[array[int], bytes]]:
        """The term's postings here: (chunk ids local to this segment, ascending; tfs)."""
        c = self.c
        bucket = crc & (self.n_buckets - 1)
        lo, hi = _U32X2.unpack(c.slice(self._buckets, 4 * bucket, 4 * bucket + 8))
        data = c.slice(self._rows, lo, hi)
        i = 0
        size = len(data)
        while i < size:
            n = data[i]
            j = i + 1 + n
            if j + 8 > size:
                raise damaged(f"{c.path.name}: bad dictionary row")
            if data[i + 1 : j] == term:
                start, count = _U32X2.unpack_from(data, j)
                w = self.width
                ids = from_le(self.id_code, c.slice(self._ids, start * w, (start + count) * w))
                return ids, c.slice(self._tfs, start, start + count)
            i = j + 8
        return None

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

    def headings(self) -> List[List[List[str]]]:
        """Per content, per chunk, the heading path the chunk sits under (not used by queries)."""
        try:
            value = json.loads(zlib.decompress(self.c.read("headings")))
        except (ValueError, zlib.error) as exc:
            raise damaged(f"{self.c.path.name}: bad headings") from exc
        if not isinstance(value, list):
            raise damaged(f"{self.c.path.name}: bad headings")
        return value

    def content_hash(self, j: int) -> str:
        return self.c.slice(self._chash, 32 * j, 32 * j + 32).hex()
