"""The persisted BM25 index: built per tap, merged for exact global statistics, read lazily.

Layout under `index_dir()` (format `FORMAT_VERSION`; every data file is deterministic)::

    manifest.json               the one switch point: format version, when it was
                                generated, commits, params, stats, and the files of the
                                current generation with their sizes and CRC32s
    segments/<tap>-<key>.seg    one immutable file per tap snapshot: that tap's contents
                                chunked, tokenized and inverted (hash-bucketed term
                                dictionary, postings of chunk ids and tfs, per chunk its
                                length, offsets and heading path, per content its entries).
                                ``key`` hashes the commit, the entries and the chunking
                                params, so a changed tap gets a new file and a crash never
                                leaves a half-written one in use
    merge-<hash>.bin            the cross-tap part, small: which contents are byte-identical
                                copies of an earlier tap's (indexed once), where the copies
                                of each content live, N and avgdl, and per chunk its
                                content and length

Why segments are queried in place instead of merged into one postings file of
precomputed ``idf × tf-part`` impacts: the tf-part depends on the *global* avgdl, so such
a file must be rewritten — every posting — whenever any tap changes (measured: ~0.1 µs
per posting per pass in CPython, seconds for the 12-registry corpus, against a 15 %
budget for a one-tap refresh). Here a segment stores exact ``tf`` per posting and ``dl``
per chunk; the merge is O(chunks) array work; a query turns the postings it touches into
``idf × tf-part`` through per-length look-up rows (`_Rows`) and gets exact ``df`` by
counting the query terms' live postings over all segments. Scores are exact BM25 (no
quantisation), and an incremental build is byte-identical to one from scratch.

A query reads the manifest, each file's table of contents and the merge arrays (~7 bytes
per chunk, ~5 per content); then only, per query term and segment, one bucket of the term
dictionary and that term's postings; and per returned hit its content record and the
byte range of the tap file its snippet is (files are read with ``pread``, not ``mmap``:
on kernels that map page-cache folios whole, touching a mapping inflates RSS by whole
files).

Measured on the 12-registry corpus (9,223 entries, 7,062 distinct files, 88,572 chunks,
a 2-core machine where ``sum(range(10**6))`` takes 15 ms): full build 6.1 s with two
worker processes (11.5 s in one), 27.6 MB on disk; a build with nothing changed 0.1 s,
one small tap changed 0.2 s; a one-shot query in a new process 50-60 ms wall at
~20 MB RSS; warm queries 9.3 ms median (k=60 with snippets).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import math
import os
import re
import struct
import sys
import time
import zlib
from array import array
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from operator import itemgetter
from pathlib import Path
from typing import (
    Any,
    BinaryIO,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from boost_cli.core import bm25
from boost_cli.core.errors import IndexError_, UsageError
from boost_cli.core.models import KINDS, MAX_FILE_BYTES, Entry, Hit, TapSnapshot
from boost_cli.core.paths import index_dir
from boost_cli.core.tokenize import tokenize

__all__ = [
    "AGGREGATIONS",
    "FORMAT_VERSION",
    "BM25Retriever",
    "BuildReport",
    "IndexParams",
    "IndexReader",
    "build",
    "open_index",
]

FORMAT_VERSION = 1
ENGINE = "bm25"
MANIFEST = "manifest.json"
SEGMENTS = "segments"
SEGMENT_MAGIC = b"BOOSTSEG"
MERGE_MAGIC = b"BOOSTMRG"

# How a content's score is made from its chunks' scores (see `_content_score`).
AGGREGATIONS = ("max", "max2", "lse")
MAX2_BONUS = 0.25  # max2: best chunk + MAX2_BONUS × second-best chunk
LSE_TEMPERATURE = 2.0  # lse: T · ln Σ exp(score / T), a soft maximum (T: docs/benchmarks.md)

REINDEX = "run 'boost reindex'"
REINDEX_FORCE = "run 'boost reindex --force'"

DEAD = 0xFFFFFFFF  # chunk → content value of a chunk whose content is indexed elsewhere
_TF_MAX = 255  # tf is stored in one byte: no ~1000-character chunk holds a term 256 times
_DL_MAX = 0xFFFF
_TERM_MAX_BYTES = 255  # the dictionary stores a term's length in one byte
_NO_SPAN = 0xFFFFFFFF  # chunk_span byte offsets of a file that is not valid UTF-8
_SPAN = struct.Struct("<5I")  # chunk_span row: start, end (characters), start, end (bytes), crc32
_KIND_BITS = {k: 1 << i for i, k in enumerate(KINDS)}
_HEAD = struct.Struct("<8sIII")  # magic, format version, table of contents: length, CRC32
_U32X2 = struct.Struct("<II")
_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,80}")
_STALE_TMP_SECONDS = 3600
_PARALLEL_MIN_ENTRIES = 1500  # below this a worker pool costs more than it saves


@dataclass(frozen=True)
class IndexParams:
    """Everything that shapes the index; all of it is recorded in the manifest.

    ``k1``, ``b`` and ``aggregation`` act at query time (changing them rewrites only the
    manifest); the chunk sizes (and `build`'s ``use_prefix``) shape the segments.
    """

    k1: float = bm25.K1
    b: float = bm25.B
    chunk_target: int = 1000
    chunk_overlap: int = 150
    max_chunks: int = 40
    aggregation: str = "lse"  # best on dev + SciFact together: docs/benchmarks.md

    def validate(self) -> None:
        _check_aggregation(self.aggregation)
        if not (self.k1 >= 0 and 0 <= self.b <= 1):
            raise UsageError(
                f"bad BM25 params k1={self.k1} b={self.b}", "use k1 >= 0 and 0 <= b <= 1"
            )
        if not (
            self.chunk_target >= 100
            and 0 <= self.chunk_overlap <= self.chunk_target // 4
            and self.max_chunks >= 1
        ):
            raise UsageError(
                f"bad chunk sizes: target={self.chunk_target} overlap={self.chunk_overlap}"
                f" max_chunks={self.max_chunks}",
                "use target >= 100, 0 <= overlap <= target / 4 and max_chunks >= 1",
            )

    def to_dict(self, prefix: bool) -> Dict[str, Any]:
        return {
            "k1": self.k1,
            "b": self.b,
            "prefix": prefix,
            "chunk_target": self.chunk_target,
            "chunk_overlap": self.chunk_overlap,
            "max_chunks": self.max_chunks,
            "aggregation": self.aggregation,
            "quantisation": "none",  # exact tf and dl are stored: see the module docstring
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> IndexParams:
        return cls(
            k1=float(d["k1"]),
            b=float(d["b"]),
            chunk_target=int(d["chunk_target"]),
            chunk_overlap=int(d["chunk_overlap"]),
            max_chunks=int(d["max_chunks"]),
            aggregation=str(d["aggregation"]),
        )


def _check_aggregation(how: str) -> None:
    if how not in AGGREGATIONS:
        raise UsageError(f"unknown aggregation {how!r}", f"use one of: {', '.join(AGGREGATIONS)}")


@dataclass(frozen=True)
class BuildReport:
    """What `build` did: taps built / reused / removed, the index's size, and the time."""

    built: Tuple[str, ...]
    reused: Tuple[str, ...]
    removed: Tuple[str, ...]
    entries: int
    contents: int
    chunks: int
    terms: int
    bytes: int
    seconds: float
    skipped: Tuple[str, ...] = ()  # entry ids whose file could not be read

    @property
    def taps_total(self) -> int:
        return len(self.built) + len(self.reused)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "taps": self.taps_total,
            "built": list(self.built),
            "reused": list(self.reused),
            "removed": list(self.removed),
            "entries": self.entries,
            "contents": self.contents,
            "chunks": self.chunks,
            "terms": self.terms,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "skipped": list(self.skipped),
        }


def _damaged(detail: str) -> IndexError_:
    return IndexError_(f"the search index is damaged ({detail})", REINDEX_FORCE)


def _mismatch(found: object) -> IndexError_:
    return IndexError_(
        f"the search index has format version {found}, this boost reads version {FORMAT_VERSION}",
        REINDEX,
    )


# --------------------------------------------------------------------------- file container
#
# Every data file: header (magic, format version, TOC length and CRC32), a JSON table of contents
# {"meta": ..., "sections": {name: [offset, length, crc32]}}, then the sections, each
# 8-byte aligned. Integers are little-endian `array` dumps, decoded with `frombytes`.


def _le(values: array[int]) -> bytes:
    """``values`` as little-endian bytes (the on-disk byte order on every platform)."""
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_le(typecode: str, data: bytes) -> array[int]:
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return values


def _dumps(value: Any) -> bytes:
    """Deterministic compact JSON (sorted keys; unknown types as str)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


def _pack(magic: bytes, meta: Dict[str, Any], sections: Sequence[Tuple[str, bytes]]) -> bytes:
    """One container file: header, table of contents, aligned sections."""
    table: Dict[str, List[int]] = {}
    pos = 0
    for name, data in sections:
        table[name] = [pos, len(data), zlib.crc32(data)]
        pos += len(data) + (-len(data) % 8)
    toc = _dumps({"meta": meta, "sections": table})
    head = _HEAD.pack(magic, FORMAT_VERSION, len(toc), zlib.crc32(toc)) + toc
    head += b"\0" * (-len(head) % 8)
    parts = [head]
    for _, data in sections:
        parts.append(data)
        parts.append(b"\0" * (-len(data) % 8))
    return b"".join(parts)


if hasattr(os, "pread"):

    def _pread(fh: BinaryIO, offset: int, size: int) -> bytes:
        return os.pread(fh.fileno(), size, offset)

else:  # pragma: no cover - Windows: no pread; a reader is used from one thread

    def _pread(fh: BinaryIO, offset: int, size: int) -> bytes:
        fh.seek(offset)
        return fh.read(size)


class _Container:
    """A read-only view of one container file, read with positioned reads.

    Opening reads the header and the table of contents only. Sections read whole are
    checked against their CRC32; random-access reads are bounds-checked and must not
    come back short (`verify` checks every CRC).
    """

    def __init__(self, path: Path, magic: bytes) -> None:
        self.path = path
        name = path.name
        self.fh: BinaryIO = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open while in use
        try:
            self.size = os.fstat(self.fh.fileno()).st_size
            head = self.read_at(0, _HEAD.size)
            got_magic, version, toc_len, toc_crc = _HEAD.unpack(head)
            if got_magic != magic:
                raise _damaged(f"{name} has a bad header")
            if version != FORMAT_VERSION:
                raise _mismatch(version)
            self.toc_end = _HEAD.size + toc_len
            data_start = self.data_start = self.toc_end + (-self.toc_end % 8)
            raw_toc = self.read_at(_HEAD.size, toc_len) if self.toc_end <= self.size else b""
            if len(raw_toc) != toc_len or zlib.crc32(raw_toc) != toc_crc:
                raise _damaged(f"{name} has a bad table of contents")
            try:
                toc = json.loads(raw_toc)
                self.meta: Dict[str, Any] = toc["meta"]
                self.sections: Dict[str, Tuple[int, int, int]] = {
                    k: (data_start + int(v[0]), int(v[1]), int(v[2]))
                    for k, v in toc["sections"].items()
                }
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise _damaged(f"{name} has a bad table of contents") from exc
            for sec, (off, length, _) in self.sections.items():
                if off + length > self.size:
                    raise _damaged(f"{name} is truncated (section {sec})")
        except OSError as exc:
            self.fh.close()
            raise _damaged(f"{name} cannot be read: {exc.strerror or exc}") from exc
        except BaseException:
            self.fh.close()
            raise

    def close(self) -> None:
        self.fh.close()

    def read_at(self, offset: int, size: int) -> bytes:
        data = _pread(self.fh, offset, size) if size > 0 else b""
        if len(data) != size:
            raise _damaged(f"{self.path.name} is truncated")
        return data

    def span(self, name: str) -> Tuple[int, int]:
        try:
            off, length, _ = self.sections[name]
        except KeyError:
            raise _damaged(f"{self.path.name} has no section {name}") from None
        return off, length

    def read(self, name: str, check: bool = True) -> bytes:
        off, length = self.span(name)
        data = self.read_at(off, length)
        if check and zlib.crc32(data) != self.sections[name][2]:
            raise _damaged(f"{self.path.name}: checksum mismatch in {name}")
        return data

    def ints(self, name: str, typecode: str, check: bool = True) -> array[int]:
        data = self.read(name, check)
        if len(data) % array(typecode).itemsize:
            raise _damaged(f"{self.path.name}: bad length of {name}")
        return _from_le(typecode, data)

    def slice(self, span: Tuple[int, int], start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of a section, bounds-checked."""
        if not 0 <= start <= end <= span[1]:
            raise _damaged(f"{self.path.name}: a reference points outside its table")
        return self.read_at(span[0] + start, end - start)

    def verify(self) -> None:
        """Check every byte: each section's CRC32, and zeros in the padding between them."""
        data = self.read_at(0, self.size)
        pos = self.data_start
        if data[self.toc_end : pos].strip(b"\0"):
            raise _damaged(f"{self.path.name}: garbage after the table of contents")
        for name, (off, length, crc) in sorted(self.sections.items(), key=lambda x: x[1]):
            if off < pos or data[pos:off].strip(b"\0"):
                raise _damaged(f"{self.path.name}: garbage before section {name}")
            if zlib.crc32(data[off : off + length]) != crc:
                raise _damaged(f"{self.path.name}: checksum mismatch in {name}")
            pos = off + length
        end = pos + (-pos % 8)
        if end != self.size or data[pos:end].strip(b"\0"):
            raise _damaged(f"{self.path.name}: unexpected bytes at the end")


# --------------------------------------------------------------------------- segments


def _safe(name: str) -> str:
    """A file-name-safe form of a tap name (the key keeps distinct taps apart)."""
    if _SAFE_NAME.fullmatch(name) and name not in (".", ".."):
        return name
    return f"tap{zlib.crc32(name.encode('utf-8')):08x}"


def _segment_key(snap: TapSnapshot, params: IndexParams, prefix: bool) -> str:
    """What a segment depends on: commit, root, entries, chunking, prefix, boost version."""
    import hashlib

    from boost_cli import __version__

    entries = sorted((e.to_dict() for e in snap.entries), key=itemgetter("path"))
    blob = _dumps(
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


def _segment_bytes(
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
            c_kinds[j] |= _KIND_BITS.get(e.kind, 0)
            continue
        j = by_hash[digest] = len(c_hash)
        c_hash.append(digest)
        c_entries.append([e.to_dict()])
        c_kinds.append(_KIND_BITS.get(e.kind, 0))
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
                chunk_span.extend((start, end, _NO_SPAN, _NO_SPAN, 0))
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
        zlib.compress(_dumps({**rec, "entries": en}), 6) for rec, en in zip(c_records, c_entries)
    ]
    sections = [
        ("dict_buckets", _le(array("I", accumulate(bucket_bytes, initial=0)))),
        ("dict_rows", b"".join(rows)),
        ("vocab", b"\n".join(sorted(encoded))),
        ("post_ids", _le(array(id_code, map((8).__rrshift__, flat)))),
        ("post_tfs", bytes(map((0xFF).__and__, flat))),
        ("chunk_content", _le(chunk_content)),
        ("chunk_dl", _le(chunk_dl)),
        ("chunk_span", _le(chunk_span)),
        ("content_first", _le(c_first)),
        ("content_kinds", bytes(c_kinds)),
        ("content_hash", b"".join(c_hash)),
        ("content_off", _le(array("I", accumulate(map(len, content_json), initial=0)))),
        ("content_json", b"".join(content_json)),
        ("headings", zlib.compress(_dumps(c_headings), 6)),
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
    return _pack(SEGMENT_MAGIC, meta, sections), skipped


def _bucket_count(n_terms: int) -> int:
    """A power of two near ``n_terms / 2``: ~2 terms per bucket, one small read a look-up."""
    n = 1
    while n * 2 < n_terms:
        n *= 2
    return n


def _segment_job(args: Tuple[TapSnapshot, IndexParams, bool, str, str]) -> Tuple[str, List[str]]:
    """Build one segment and write it (also the worker-process entry); returns (tap, skipped)."""
    from boost_cli.core.atomic import write_bytes

    snap, params, prefix, key, path = args
    data, skipped = _segment_bytes(snap, params, prefix, key)
    write_bytes(path, data)
    return snap.name, skipped


class _Segment:
    """One tap's segment, opened for queries and for the merge."""

    def __init__(self, path: Path) -> None:
        self.c = c = _Container(path, SEGMENT_MAGIC)
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
            raise _damaged(f"{path.name} has a bad table of contents") from exc
        n = self.n_buckets
        if self.id_code not in ("H", "I") or n < 1 or n & (n - 1):
            c.close()
            raise _damaged(f"{path.name} has a bad table of contents")
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
            raise _damaged(f"{path.name}: bad length of dict_buckets")

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
                raise _damaged(f"{c.path.name}: bad dictionary row")
            if data[i + 1 : j] == term:
                start, count = _U32X2.unpack_from(data, j)
                w = self.width
                ids = _from_le(self.id_code, c.slice(self._ids, start * w, (start + count) * w))
                return ids, c.slice(self._tfs, start, start + count)
            i = j + 8
        return None

    def record(self, j: int) -> Dict[str, Any]:
        """Content ``j``'s record: its entries (dicts), and its file's size and CRC32."""
        a, b = _U32X2.unpack(self.c.slice(self._coff, 4 * j, 4 * j + 8))
        try:
            rec = json.loads(zlib.decompress(self.c.slice(self._cjson, a, b)))
        except (ValueError, zlib.error) as exc:
            raise _damaged(f"{self.c.path.name}: bad content record") from exc
        if not isinstance(rec, dict):
            raise _damaged(f"{self.c.path.name}: bad content record")
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
            raise _damaged(f"{self.c.path.name}: bad headings") from exc
        if not isinstance(value, list):
            raise _damaged(f"{self.c.path.name}: bad headings")
        return value

    def content_hash(self, j: int) -> str:
        return self.c.slice(self._chash, 32 * j, 32 * j + 32).hex()


# --------------------------------------------------------------------------- merge


def _merge(segments: Sequence[_Segment]) -> Tuple[bytes, Dict[str, Any]]:
    """The cross-tap file: copies, N, avgdl, chunk → content, chunk lengths. O(chunks).

    Taps come in name order and contents in path order inside a tap, so the first copy
    of a content by (tap, path) is the one indexed; later copies are dead (queries skip
    their chunks; N, avgdl and df leave them out).
    """
    owner: Dict[bytes, int] = {}  # content hash -> global content id of its live copy
    copies: Dict[int, List[int]] = {}
    chunk_content = array("I")
    chunk_dl = array("H")
    chunk_live = bytearray()
    content_first = array("I")
    content_kinds = bytearray()
    taps_meta: List[Dict[str, Any]] = []
    vocab: Set[bytes] = set()
    n_live = 0
    total_dl = 0
    entries = 0
    for seg in segments:
        c = seg.c
        hashes = c.read("content_hash")
        first = c.ints("content_first", "I")
        kinds = c.read("content_kinds")
        cc = c.ints("chunk_content", "I")
        dl = c.ints("chunk_dl", "H")
        n_contents = len(hashes) // 32
        if (
            len(first) != n_contents + 1
            or len(kinds) != n_contents
            or len(cc) != len(dl)
            or first[-1] != len(dl)
            or any(x >= n_contents for x in cc[-1:])
        ):
            raise _damaged(f"{c.path.name}: tables disagree")
        c_base = len(content_kinds)
        k_base = len(chunk_content)
        dead: List[int] = []
        for j in range(n_contents):
            h = hashes[32 * j : 32 * j + 32]
            live = owner.get(h)
            if live is None:
                owner[h] = c_base + j
            else:
                dead.append(j)
                copies.setdefault(live, []).append(c_base + j)
                content_kinds[live] |= kinds[j]
        content_kinds += kinds
        content_first.extend(map(k_base.__add__, first[:-1]))
        chunk_dl.extend(dl)
        if dead:
            cmap = array("I", map(c_base.__add__, range(n_contents)))
            for j in dead:
                cmap[j] = DEAD
            mapped = array("I", map(cmap.__getitem__, cc))
            live_bytes = bytes(x != DEAD for x in mapped)
            seg_dl = sum(compress(dl, live_bytes))
        else:
            mapped = array("I", map(c_base.__add__, cc))
            live_bytes = b"\x01" * len(cc)
            seg_dl = sum(dl)
        chunk_content.extend(mapped)
        chunk_live += live_bytes
        seg_live = live_bytes.count(1)
        n_live += seg_live
        total_dl += seg_dl
        entries += seg.counts.get("entries", 0)
        vocab.update(c.read("vocab").split(b"\n"))
        taps_meta.append(
            {
                "tap": seg.tap,
                "commit": seg.commit,
                "root": str(seg.root),
                "file": f"{SEGMENTS}/{c.path.name}",
                "content_base": c_base,
                "chunk_base": k_base,
                "dead_chunks": len(cc) - seg_live,
            }
        )
    content_first.append(len(chunk_content))
    vocab.discard(b"")
    meta = {
        "kind": "merge",
        "taps": taps_meta,
        "chunks": n_live,
        "total_dl": total_dl,
        "avgdl": total_dl / n_live if n_live else 0.0,
        "contents": len(owner),
        "entries": entries,
        "terms": len(vocab),
        "copies": {str(k): v for k, v in sorted(copies.items())},
    }
    sections = [
        ("chunk_content", _le(chunk_content)),
        ("chunk_dl", _le(chunk_dl)),
        ("chunk_live", bytes(chunk_live)),
        ("content_first", _le(content_first)),
        ("content_kinds", bytes(content_kinds)),
    ]
    return _pack(MERGE_MAGIC, meta, sections), meta


# --------------------------------------------------------------------------- build


def _load_manifest(root: Path) -> Optional[Dict[str, Any]]:
    """The manifest, None when there is none; IndexError_ when unreadable or foreign."""
    try:
        raw = (root / MANIFEST).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _damaged(f"{MANIFEST} cannot be read: {exc.strerror or exc}") from exc
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        raise _damaged(f"{MANIFEST} is not valid JSON") from exc
    if not isinstance(manifest, dict):
        raise _damaged(f"{MANIFEST} is not a JSON object")
    if manifest.get("version") != FORMAT_VERSION:
        raise _mismatch(manifest.get("version"))
    if manifest.get("engine") != ENGINE:
        raise _damaged(f"{MANIFEST} is for engine {manifest.get('engine')!r}")
    for k in ("segments", "merge", "params", "stats", "commits"):
        if not isinstance(manifest.get(k), dict):
            raise _damaged(f"{MANIFEST} lacks {k!r}")
    return manifest


def _previous_manifest(root: Path) -> Optional[Dict[str, Any]]:
    """The manifest a build can start from; a damaged or foreign one means: rebuild all."""
    try:
        return _load_manifest(root)
    except IndexError_:
        return None


def _file_record(root: Path, rel: str) -> Dict[str, Any]:
    data = (root / rel).read_bytes()
    return {"file": rel, "size": len(data), "crc32": zlib.crc32(data)}


def _files_intact(root: Path, manifest: Dict[str, Any]) -> bool:
    """Every file the manifest lists is there with its size and CRC32 (~30 ms for 30 MB)."""
    try:
        for rec in [*manifest["segments"].values(), manifest["merge"]]:
            got = _file_record(root, rec["file"])
            if (got["size"], got["crc32"]) != (rec["size"], rec["crc32"]):
                return False
    except (OSError, KeyError, TypeError):
        return False
    return True


def build(
    snapshots: Sequence[TapSnapshot],
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    params: Optional[IndexParams] = None,
    use_prefix: bool = True,
    progress: Optional[Callable[[int, int, str], None]] = None,
    workers: Optional[int] = None,
) -> BuildReport:
    """Bring the index under `index_dir()` up to date with ``snapshots``.

    A tap's segment is rebuilt only when its key (commit, entries, chunking, prefix)
    changed, or with ``force`` (every tap) / ``force_taps`` (those); taps not passed are
    dropped. New files are written
    beside the old ones and `manifest.json` is replaced last, atomically, so a crash at
    any point leaves the previous index usable. ``progress(done, total, tap)`` is called
    as each segment is built. ``workers``: processes for segment builds (None: 2 when there is
    enough work and a second CPU, else 1).
    """
    root = index_dir()
    root.mkdir(parents=True, exist_ok=True)
    with _build_lock(root):
        return _build(snapshots, force, set(force_taps), params, use_prefix, progress, workers)


@contextlib.contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    """One build at a time per index, so no build deletes files another is about to publish.

    A POSIX advisory lock; where there is none (Windows) builds are not serialised.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(root / ".lock", "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _build(
    snapshots: Sequence[TapSnapshot],
    force: bool,
    force_taps: Set[str],
    params: Optional[IndexParams],
    use_prefix: bool,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> BuildReport:
    from boost_cli.core.atomic import write_bytes, write_json

    t0 = time.perf_counter()
    params = params or IndexParams()
    params.validate()
    snaps = sorted(snapshots, key=lambda s: s.name)
    names = [s.name for s in snaps]
    if len(set(names)) != len(names):
        raise UsageError("two snapshots have the same tap name", "pass each tap once")
    root = index_dir()
    seg_dir = root / SEGMENTS
    old = _previous_manifest(root)
    param_dict = params.to_dict(use_prefix)
    keys = {s.name: _segment_key(s, params, use_prefix) for s in snaps}
    removed = tuple(sorted(set(old["commits"]) - set(names))) if old else ()

    if (
        old is not None
        and not force
        and not force_taps
        and old["params"] == param_dict
        and {t: r.get("key") for t, r in old["segments"].items()} == keys
        and _files_intact(root, old)
    ):
        st = old["stats"]
        return BuildReport(
            built=(),
            reused=tuple(names),
            removed=(),
            entries=int(st.get("entries", 0)),
            contents=int(st.get("contents", 0)),
            chunks=int(st.get("chunks", 0)),
            terms=int(st.get("terms", 0)),
            bytes=int(st.get("bytes", 0)),
            seconds=time.perf_counter() - t0,
        )

    seg_dir.mkdir(parents=True, exist_ok=True)
    files = {s.name: f"{_safe(s.name)}-{keys[s.name]}.seg" for s in snaps}
    opened: Dict[str, _Segment] = {}
    try:
        todo: List[TapSnapshot] = []
        for s in snaps:
            rebuild = force or s.name in force_taps
            seg = None if rebuild else _reusable(seg_dir / files[s.name], keys[s.name])
            if seg is None:
                todo.append(s)
            else:
                opened[s.name] = seg
        skipped = _build_segments(todo, params, use_prefix, keys, files, seg_dir, progress, workers)
        for s in todo:
            opened[s.name] = _Segment(seg_dir / files[s.name])
        merge_bytes, meta = _merge([opened[n] for n in names])
    finally:
        for seg in opened.values():
            seg.c.close()
    merge_name = f"merge-{zlib.crc32(merge_bytes):08x}{len(merge_bytes):08x}.bin"
    write_bytes(root / merge_name, merge_bytes)
    seg_records = {}
    for s in snaps:
        rec = _file_record(root, f"{SEGMENTS}/{files[s.name]}")
        rec["key"] = keys[s.name]
        seg_records[s.name] = rec
    merge_record = _file_record(root, merge_name)
    data_bytes = merge_record["size"] + sum(r["size"] for r in seg_records.values())
    stats = {
        "taps": len(snaps),
        "entries": meta["entries"],
        "contents": meta["contents"],
        "chunks": meta["chunks"],
        "terms": meta["terms"],
        "avgdl": round(meta["avgdl"], 6),
        "bytes": data_bytes,
    }
    manifest = {
        "version": FORMAT_VERSION,
        "engine": ENGINE,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commits": {s.name: s.commit for s in snaps},
        "params": param_dict,
        "stats": stats,
        "segments": seg_records,
        "merge": merge_record,
    }
    write_json(root / MANIFEST, manifest)
    _cleanup(root, {merge_name}, set(files.values()))
    built = {s.name for s in todo}
    return BuildReport(
        built=tuple(n for n in names if n in built),
        reused=tuple(n for n in names if n not in built),
        removed=removed,
        entries=stats["entries"],
        contents=stats["contents"],
        chunks=stats["chunks"],
        terms=stats["terms"],
        bytes=data_bytes,
        seconds=time.perf_counter() - t0,
        skipped=tuple(sorted(skipped)),
    )


def _reusable(path: Path, key: str) -> Optional[_Segment]:
    """The segment at ``path`` if it exists, is intact and has ``key``; else None (rebuild)."""
    try:
        seg = _Segment(path)
    except FileNotFoundError:
        return None
    except IndexError_:
        return None  # damaged or of another format: rebuilt
    try:
        if seg.key == key:
            seg.c.verify()
            return seg
    except IndexError_:
        pass  # a checksum mismatch: rebuilt
    seg.c.close()
    return None


def _build_segments(
    todo: Sequence[TapSnapshot],
    params: IndexParams,
    prefix: bool,
    keys: Dict[str, str],
    files: Dict[str, str],
    seg_dir: Path,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> List[str]:
    """Build and write the segments of ``todo``; returns the skipped entry ids."""
    jobs = [(s, params, prefix, keys[s.name], str(seg_dir / files[s.name])) for s in todo]
    if workers is None:
        enough = sum(len(s.entries) for s in todo) >= _PARALLEL_MIN_ENTRIES
        workers = 2 if enough and len(todo) > 1 and (os.cpu_count() or 1) > 1 else 1
    skipped: List[str] = []
    total = len(jobs)
    if workers <= 1 or total <= 1:
        for done, job in enumerate(jobs, start=1):
            name, skip = _segment_job(job)
            skipped += skip
            if progress:
                progress(done, total, name)
        return skipped
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Largest taps first, so the workers finish together.
    jobs.sort(key=lambda job: -len(job[0].entries))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_segment_job, job) for job in jobs]
        for done, fut in enumerate(as_completed(futures), start=1):
            name, skip = fut.result()
            skipped += skip
            if progress:
                progress(done, total, name)
    return skipped


def _cleanup(root: Path, keep_merge: Set[str], keep_segments: Set[str]) -> None:
    """Delete the files no manifest points to any more, and old temporaries of crashed builds.

    Deleting is best effort: a file still open in a reader on Windows cannot be deleted
    and is left for the next build (nothing refers to it).
    """
    now = time.time()

    def sweep(folder: Path, keep: Set[str], pattern: str) -> None:
        if not folder.is_dir():
            return
        for p in folder.iterdir():
            name = p.name
            with contextlib.suppress(OSError):
                if name.startswith(".") and name.endswith(".tmp"):
                    if now - p.stat().st_mtime > _STALE_TMP_SECONDS:
                        p.unlink()
                elif re.fullmatch(pattern, name) and name not in keep:
                    p.unlink()

    sweep(root, keep_merge, r"merge-[0-9a-f]{16}\.bin")
    sweep(root / SEGMENTS, keep_segments, r".+-[0-9a-f]{16}\.seg")


# --------------------------------------------------------------------------- query


class _TfRow(Dict[int, float]):
    """tf → BM25 tf-part for one document length; filled on first use."""

    def __init__(self, dl: int, avgdl: float, k1: float, b: float) -> None:
        super().__init__()
        self.dl, self.avgdl, self.k1, self.b = dl, avgdl, k1, b

    def __missing__(self, tf: int) -> float:
        w = bm25.term_weight(tf, self.dl, self.avgdl, self.k1, self.b)
        self[tf] = w
        return w


class _Rows(Dict[int, _TfRow]):
    """dl → its `_TfRow`, so a posting's weight is two C-level look-ups."""

    def __init__(self, avgdl: float, k1: float, b: float) -> None:
        super().__init__()
        self.avgdl, self.k1, self.b = avgdl, k1, b

    def __missing__(self, dl: int) -> _TfRow:
        row = _TfRow(dl, self.avgdl, self.k1, self.b)
        self[dl] = row
        return row


class _State:
    """One generation of the index, opened: manifest, merge arrays, segments."""

    def __init__(self, root: Path, manifest: Dict[str, Any]) -> None:
        self.manifest = manifest
        self._open: List[_Container] = []
        try:
            self._load(root, manifest)
        except BaseException:
            self.close()
            raise

    def _load(self, root: Path, manifest: Dict[str, Any]) -> None:
        try:
            merge_rec = manifest["merge"]
            self.params = IndexParams.from_dict(manifest["params"])
            seg_recs = manifest["segments"]
            merge_file = str(merge_rec["file"])
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(f"{MANIFEST} is incomplete") from exc
        self.merge = m = _Container(root / merge_file, MERGE_MAGIC)
        self._open.append(m)
        if m.size != merge_rec.get("size"):
            raise _damaged(f"{m.path.name} has the wrong size")
        meta = m.meta
        try:
            self.n = int(meta["chunks"])
            self.avgdl = float(meta["avgdl"])
            taps = meta["taps"]
            self.copies: Dict[int, List[int]] = {
                int(k): [int(x) for x in v] for k, v in meta["copies"].items()
            }
            self.content_base = [int(t["content_base"]) for t in taps]
            self.chunk_base = [int(t["chunk_base"]) for t in taps]
            self.has_dead = [int(t["dead_chunks"]) > 0 for t in taps]
            self.tap_names = [str(t["tap"]) for t in taps]
            self.roots = [str(t["root"]) for t in taps]
            seg_files = [str(t["file"]) for t in taps]
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(f"{m.path.name} has a bad table of contents") from exc
        self.segments: List[_Segment] = []
        for tap, rel in zip(self.tap_names, seg_files):
            seg = _Segment(root / rel)
            self._open.append(seg.c)
            rec = seg_recs.get(tap) or {}
            if seg.c.size != rec.get("size") or seg.tap != tap:
                raise _damaged(f"{seg.c.path.name} does not match the manifest")
            self.segments.append(seg)
        self.tap_index = {t: i for i, t in enumerate(self.tap_names)}
        self.chunk_content = m.ints("chunk_content", "I")
        self.chunk_live = m.read("chunk_live")
        self.content_first = m.ints("content_first", "I")
        self.content_kinds = m.read("content_kinds")
        if (
            len(self.chunk_live) != len(self.chunk_content)
            or len(self.content_first) != len(self.content_kinds) + 1
            or self.content_first[-1] != len(self.chunk_content)
            or self.chunk_live.count(1) != self.n
        ):
            raise _damaged(f"{m.path.name}: tables disagree")
        ends = [*self.chunk_base[1:], len(self.chunk_content)]
        self.seg_chunks = [end - base for base, end in zip(self.chunk_base, ends)]
        if any(n < 0 for n in self.seg_chunks):
            raise _damaged(f"{m.path.name}: tables disagree")
        self.seg_live = [self.chunk_live[base:end] for base, end in zip(self.chunk_base, ends)]
        self._rowref: Optional[List[List[_TfRow]]] = None
        self._rowref_key = (-1.0, -1.0)

    def close(self) -> None:
        for c in self._open:
            c.close()
        self._open = []

    def rowrefs(self, k1: float, b: float) -> List[List[_TfRow]]:
        """Per segment, local chunk id → the tf-part row for its length.

        Built on first use (~30 ns a chunk) and kept while k1 and b stay the same.
        """
        if self._rowref is None or self._rowref_key != (k1, b):
            dl = self.merge.ints("chunk_dl", "H")
            if len(dl) != len(self.chunk_content):
                raise _damaged(f"{self.merge.path.name}: tables disagree")
            rows = _Rows(self.avgdl, k1, b)
            self._rowref = [
                list(map(rows.__getitem__, dl[base : base + n]))
                for base, n in zip(self.chunk_base, self.seg_chunks)
            ]
            self._rowref_key = (k1, b)
        return self._rowref

    def seg_of(self, gcid: int) -> Tuple[int, int]:
        """Global content id → (segment index, content id local to that segment)."""
        s = bisect_right(self.content_base, gcid) - 1
        return s, gcid - self.content_base[s]

    def chunk_range(self, gcid: int) -> Tuple[int, int]:
        """The global chunk ids [first, end) of content ``gcid``."""
        return self.content_first[gcid], self.content_first[gcid + 1]

    def kinds(self, gcid: int) -> int:
        """The kind bits of every copy of content ``gcid``."""
        return self.content_kinds[gcid]


def _stat_sig(path: Path) -> Optional[Tuple[int, int, int]]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _open_state(root: Path) -> Optional[Tuple[_State, Tuple[int, int, int]]]:
    """Open the generation the manifest points to; retry if a build swaps it meanwhile."""
    for _ in range(5):
        sig = _stat_sig(root / MANIFEST)
        if sig is None:
            return None
        manifest = _load_manifest(root)
        if manifest is None:
            return None
        try:
            return _State(root, manifest), sig
        except FileNotFoundError as exc:
            if _stat_sig(root / MANIFEST) == sig:
                raise _damaged(f"{Path(exc.filename or '?').name} is missing") from exc
            # A build replaced the manifest and deleted the old files: read the new one.
    raise _damaged("it kept changing while being opened")


class IndexReader:
    """Answers queries from the index under ``root``; re-opens when a build replaced it.

    Opening reads the manifest, each file's table of contents and the merge arrays;
    every query first checks (one ``stat``) whether manifest.json was replaced.
    """

    def __init__(self, root: Path, state: _State, sig: Tuple[int, int, int]) -> None:
        self.root = root
        self._state: Optional[_State] = state
        self._sig: Optional[Tuple[int, int, int]] = sig

    @classmethod
    def open(cls, root: Optional[Path] = None) -> Optional[IndexReader]:
        root = root or index_dir()
        loaded = _open_state(root)
        if loaded is None:
            return None
        return cls(root, *loaded)

    def close(self) -> None:
        if self._state is not None:
            self._state.close()
        self._state, self._sig = None, None

    def _current(self) -> Optional[_State]:
        sig = _stat_sig(self.root / MANIFEST)
        if sig != self._sig:
            loaded = _open_state(self.root)
            if self._state is not None:
                self._state.close()
            self._state, self._sig = loaded if loaded is not None else (None, None)
        return self._state

    @property
    def manifest(self) -> Dict[str, Any]:
        st = self._current()
        return st.manifest if st else {}

    @property
    def commits(self) -> Dict[str, str]:
        return dict(self.manifest.get("commits", {}))

    @property
    def generated(self) -> str:
        return str(self.manifest.get("generated", ""))

    @property
    def stats(self) -> Dict[str, Any]:
        return dict(self.manifest.get("stats", {}))

    @property
    def params(self) -> Dict[str, Any]:
        return dict(self.manifest.get("params", {}))

    def verify(self) -> None:
        """Check every file's size and CRC32 against the manifest (reads everything)."""
        st = self._current()
        if st is None:
            return
        for rec in [*st.manifest["segments"].values(), st.manifest["merge"]]:
            try:
                data = (self.root / rec["file"]).read_bytes()
            except OSError as exc:
                raise _damaged(f"{rec['file']} cannot be read: {exc.strerror or exc}") from exc
            if len(data) != rec["size"] or zlib.crc32(data) != rec["crc32"]:
                raise _damaged(f"{rec['file']}: checksum mismatch")

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        *,
        aggregation: Optional[str] = None,
        k1: Optional[float] = None,
        b: Optional[float] = None,
        snippets: bool = True,
    ) -> List[Hit]:
        """The top ``k`` contents for ``text``, best first, one hit per distinct file.

        A hit's entry is the first copy (by tap, path) that passes the ``kind`` and
        ``taps`` filters; ``also_in`` names the other copies; ``snippet`` is its best
        chunk, read back from the tap file. ``aggregation``, ``k1`` and ``b`` override
        the indexed params for this query (for tuning).
        """
        if kind is not None and kind not in KINDS:
            raise UsageError(f"unknown kind {kind!r}", f"use one of: {', '.join(KINDS)}")
        st = self._current()
        if st is None or k <= 0 or st.n == 0:
            return []
        how = aggregation or st.params.aggregation
        _check_aggregation(how)
        scores = _accumulate(
            st,
            Counter(tokenize(text)),
            st.params.k1 if k1 is None else k1,
            st.params.b if b is None else b,
        )
        if scores is None:
            return []
        wanted = None if taps is None else {st.tap_index[t] for t in taps if t in st.tap_index}
        if wanted is not None and not wanted:
            return []
        kind_bit = _KIND_BITS[kind] if kind else 0

        def accept(gcid: int) -> bool:
            if kind_bit and not st.kinds(gcid) & kind_bit:  # kinds of all its copies
                return False
            if wanted is None:
                return True
            group = (gcid, *st.copies.get(gcid, ()))
            if not kind_bit or len(group) == 1:
                return any(st.seg_of(g)[0] in wanted for g in group)
            # Both filters and several copies (rare): one copy must pass both.
            return any(
                s in wanted
                and any(e.get("kind") == kind for e in st.segments[s].record(j)["entries"])
                for s, j in map(st.seg_of, group)
            )

        filtered = kind is not None or wanted is not None
        ranked = _aggregate(st, scores, k, how, accept if filtered else None)
        return [
            _hit(st, gcid, score, best, rank, kind, wanted, snippets)
            for rank, (score, gcid, best) in enumerate(ranked, start=1)
        ]


class _Scores:
    """One query's chunk scores: per segment by local chunk id, and one global list.

    Accumulating by local ids skips adding each segment's base to every posting
    (~45 ns a posting, measured); only the chunks that make the cut get global ids.
    """

    def __init__(self, segs: List[Tuple[int, List[float], List[List[int]]]]) -> None:
        self.segs = segs  # (chunk base, scores by local chunk id, the postings' id lists)
        self.acc: List[float] = []  # by global chunk id
        for _, scores, _ in segs:
            self.acc.extend(scores)
        self.postings = sum(len(ids) for _, _, lists in segs for ids in lists)


def _accumulate(st: _State, qtf: Counter[str], k1: float, b: float) -> Optional[_Scores]:
    """Every chunk's BM25 score for the query terms ``qtf``; None when no term is known."""
    # Phase 1: each term's postings in every segment, and its exact df over live chunks.
    found: List[Tuple[float, List[Tuple[int, List[int], bytes]]]] = []
    for term, count in qtf.items():
        tb = term.encode("utf-8")
        crc = zlib.crc32(tb)
        parts: List[Tuple[int, List[int], bytes]] = []
        df = 0
        for s, seg in enumerate(st.segments):
            got = seg.postings(tb, crc)
            if got is None:
                continue
            ids = got[0].tolist()
            if ids and ids[-1] >= st.seg_chunks[s]:
                raise _damaged(f"{seg.c.path.name}: postings out of bounds")
            if st.has_dead[s]:
                live = st.seg_live[s]
                df += sum([live[c] for c in ids])
            else:
                df += len(ids)
            parts.append((s, ids, got[1]))
        if df:
            found.append((bm25.idf(df, st.n) * count, parts))
    if not found:
        return None
    # Phase 2: add up idf × tf-part, tf-parts looked up in the chunk's length row. Plain
    # subscripts in a loop beat map() chains and a dict accumulator on CPython 3.11
    # (~100 vs ~125 vs ~270 ns a posting, measured).
    rowrefs = st.rowrefs(k1, b)
    accs = [[0.0] * n for n in st.seg_chunks]
    lists: List[List[List[int]]] = [[] for _ in st.seg_chunks]
    for weight, parts in found:
        for s, ids, tfs in parts:
            acc = accs[s]
            rows = rowrefs[s]
            lists[s].append(ids)
            for c, tf in zip(ids, tfs):
                acc[c] += rows[c][tf] * weight
    return _Scores(list(zip(st.chunk_base, accs, lists)))


def _aggregate(
    st: _State,
    scores: _Scores,
    k: int,
    how: str,
    accept: Optional[Callable[[int], bool]] = None,
) -> List[Tuple[float, int, int]]:
    """The top ``k`` accepted contents as (score, global content id, best chunk), best first.

    Only chunks scoring at least a cut-off are looked at (the cut-off is estimated from a
    sample of the scores; the filtering is C-level). It is lowered until no content left
    out could still enter the top ``k``: such a content's score is below ``bound(cut)``.
    """
    if how == "max2":

        def bound(s: float) -> float:
            return s * (1.0 + MAX2_BONUS)

    elif how == "lse":
        slack = LSE_TEMPERATURE * math.log(max(st.params.max_chunks, 1))

        def bound(s: float) -> float:
            return s + slack

    else:

        def bound(s: float) -> float:
            return s

    acc = scores.acc
    score_of = acc.__getitem__
    want = 32 * k  # postings to look at first: chunks repeat, contents too, filters reject
    step = max(1, scores.postings // 2048)
    sample = sorted(
        [a[c] for _, a, lists in scores.segs for ids in lists for c in ids[::step]],
        reverse=True,
    )
    depth = want // step + 1
    while True:
        cut = sample[depth] if depth < len(sample) else -math.inf
        top = list(
            dict.fromkeys(
                [
                    base + c
                    for base, a, lists in scores.segs
                    for ids in lists
                    for c in ids
                    if a[c] >= cut
                ]
            )
        )
        top.sort(key=score_of, reverse=True)
        contents = list(map(st.chunk_content.__getitem__, top))
        order = dict.fromkeys(contents)  # each content once, in the order of its best chunk
        order.pop(DEAD, None)
        best = dict(zip(reversed(contents), reversed(top)))  # content -> its best chunk
        # Contents come in the order of their best chunk, and a content scores at most
        # bound(best chunk): once the k-th best exact score beats that, no later content
        # can enter the top k, so their (costlier) aggregate is never computed.
        picked: List[Tuple[float, int, int]] = []
        kth: List[float] = []  # min-heap of the k best exact scores so far
        for j in order:
            b = best[j]
            if len(kth) >= k and kth[0] > bound(acc[b]):
                break
            if accept is not None and not accept(j):
                continue
            score = _content_score(st, acc, j, b, how)
            picked.append((score, j, b))
            if len(kth) < k:
                heapq.heappush(kth, score)
            elif score > kth[0]:
                heapq.heapreplace(kth, score)
        picked.sort(key=lambda x: (-x[0], x[1]))
        if cut == -math.inf or (len(picked) >= k and picked[k - 1][0] >= bound(cut)):
            return picked[:k]
        depth *= 4


def _content_score(st: _State, acc: List[float], gcid: int, best: int, how: str) -> float:
    """A content's score from its chunks': max, max + bonus × second best, or soft max."""
    top = acc[best]
    if how == "max":
        return top
    first, end = st.chunk_range(gcid)
    scores = acc[first:end]  # chunks without a query term score 0.0
    if how == "max2":
        if len(scores) < 2:
            return top
        scores.remove(top)
        return top + MAX2_BONUS * max(scores)
    t = LSE_TEMPERATURE
    return top + t * math.log(sum(math.exp((s - top) / t) for s in scores if s > 0.0))


def _hit(
    st: _State,
    gcid: int,
    score: float,
    best: int,
    rank: int,
    kind: Optional[str],
    wanted: Optional[Set[int]],
    snippets: bool,
) -> Hit:
    """One content as a hit: representative entry, copies, and its best chunk as snippet."""
    entries: List[Tuple[int, Entry]] = []
    record: Dict[str, Any] = {}
    for g in (gcid, *st.copies.get(gcid, ())):
        s, j = st.seg_of(g)
        rec = st.segments[s].record(j)
        if g == gcid:
            record = rec
        try:
            entries.extend((s, Entry.from_dict(d)) for d in rec["entries"])
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(f"{st.segments[s].c.path.name}: bad entry record") from exc
    if not entries:
        raise _damaged(f"content {gcid} has no entries")

    def fits(item: Tuple[int, Entry]) -> bool:
        s, e = item
        return (kind is None or e.kind == kind) and (wanted is None or s in wanted)

    rep_seg, rep = next((item for item in entries if fits(item)), entries[0])
    also = tuple(
        dict.fromkeys(
            e.qualified_name for _, e in entries if e.qualified_name != rep.qualified_name
        )
    )
    s, j = st.seg_of(gcid)
    snippet = ""
    if snippets:
        start, end, bs, be, crc = st.segments[s].span(best - st.chunk_base[s])
        try:
            size, file_crc = int(record["size"]), int(record["crc32"])
        except (KeyError, TypeError, ValueError) as exc:
            raise _damaged(f"{st.segments[s].c.path.name}: bad content record") from exc
        path = os.path.join(st.roots[rep_seg], rep.path)
        snippet = _snippet(path, size, file_crc, (start, end), (bs, be, crc), rep.description)
    return Hit(
        entry=rep,
        score=score,
        snippet=snippet,
        also_in=also,
        ranks={"bm25": rank},
        content_hash=st.segments[s].content_hash(j),
    )


def _snippet(
    path: str,
    size: int,
    file_crc: int,
    chars: Tuple[int, int],
    span: Tuple[int, int, int],
    fallback: str,
) -> str:
    """The chunk's text read back from the tap file; ``fallback`` if the file changed.

    Valid UTF-8 files: only the chunk's byte range is read, checked by its CRC32.
    Others: the whole file, checked by size and CRC32, then cut by characters.
    """
    bs, be, crc = span
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size != size:
                return fallback
            if bs != _NO_SPAN:
                data = _pread(fh, bs, be - bs) if be > bs else b""
                if zlib.crc32(data) != crc:
                    return fallback
                return data.decode("utf-8", errors="replace")
            data = fh.read()
    except OSError:
        return fallback
    if zlib.crc32(data) != file_crc:
        return fallback
    return data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")[chars[0] : chars[1]]


#: The reader `open_index` handed out last (at most one: a process queries one home).
_last_reader: List[IndexReader] = []


def open_index(root: Optional[Path] = None) -> Optional[IndexReader]:
    """The index under `index_dir()` opened for queries, or None when there is none yet.

    A long-lived process (``boost mcp``) calls this once per search: the reader opened
    last is handed out again while it still reads the current index (one ``stat`` of the
    manifest, the check `IndexReader` makes before every query anyway), so the merge
    arrays and scoring rows stay warm — 3-5 ms per call on the 12-registry corpus. A
    replaced index is re-opened; ``root`` is resolved at call time, so a changed
    BOOST_HOME gets its own reader.

    Raises IndexError_ (with the fix) when it is damaged or of another format version.
    """
    root = root or index_dir()
    last = _last_reader[0] if _last_reader else None
    if last is not None and last.root == root and last._current() is not None:
        return last
    reader = IndexReader.open(root)
    while _last_reader:
        _last_reader.pop().close()
    if reader is not None:
        _last_reader.append(reader)
    return reader


# --------------------------------------------------------------------------- retriever


class BM25Retriever:
    """The BM25 engine behind the `rag.Retriever` seam."""

    name = "bm25"

    def __init__(
        self,
        reader: Optional[IndexReader] = None,
        snapshots: Optional[Callable[[], Sequence[TapSnapshot]]] = None,
    ) -> None:
        self._reader = reader
        self._snapshots = snapshots

    def build(self, entries: Sequence[Entry]) -> BuildReport:
        """(Re)build the index for the taps of ``entries`` (incremental: see `build`)."""
        snaps = list(self._snapshots()) if self._snapshots else _snapshots_for(entries)
        report = build(snaps)
        self._reader = open_index()
        return report

    def query(self, text: str, k: int = 60, kind: Optional[str] = None) -> List[Hit]:
        reader = self._reader or open_index()
        if reader is None:
            raise IndexError_("no search index yet", REINDEX)
        self._reader = reader
        return reader.query(text, k=k, kind=kind)

    def ready(self) -> bool:
        if self._reader is None:
            try:
                self._reader = open_index()
            except IndexError_:
                return False
        return self._reader is not None and bool(self._reader.manifest)


def _snapshots_for(entries: Iterable[Entry]) -> List[TapSnapshot]:
    """``entries`` grouped into snapshots of their taps, at the commits the registry records."""
    from boost_cli.core import registry

    by_tap: Dict[str, List[Entry]] = {}
    for e in entries:
        by_tap.setdefault(e.tap, []).append(e)
    out = []
    for name, items in sorted(by_tap.items()):
        tap = registry.get_tap(name)
        out.append(TapSnapshot(name, tap.commit, tap.root, tuple(items)))
    return out
