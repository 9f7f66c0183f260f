"""Postings: a tap's inverted index while it is built (`invert`), the tap's postings as
the worker hands them to the tier build (`tap_sections`), and the hash-bucketed term
dictionary of a tier file (`dictionary` writes it, `find_row` reads one bucket).

A posting is one int while building: the chunk id (or, for entry fields, the content id)
in the high bits, the term's frequency in the chunk (capped at 255) in the low byte.
Files store ids and tfs apart. One dictionary row serves both lists of a term, the
chunks' and the entry fields', so a query term costs one look-up per tier.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from bisect import bisect_right
from collections import Counter
from itertools import accumulate, chain
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from boost_cli.core.binio import to_le

TF_MAX = 255  # tf is stored in one byte: no ~1000-character chunk holds a term 256 times
TERM_MAX_BYTES = 255  # a dictionary row stores its term's length in one byte
HAS_FIELD = 0x80000000  # set in a row's count: the field part of the row follows
# After a row's term: the chunk postings' first, count (| HAS_FIELD), live count, first
# block, first frontier point, first content posting and content postings (u32 each),
# and the number of frontier points (u8) ...
_CHUNK_TAIL = struct.Struct("<IIIIIIIB")
# ... then, with HAS_FIELD, the field postings' first, count, live count, first frontier
# point and number of frontier points.
_FIELD_TAIL = struct.Struct("<IIIIB")


# Content postings store (highest tf, shortest chunk) as one u16 *impact code* on a fixed
# grid, so a query turns a posting into its bound with one list look-up (`code_points`):
# tf rounded up to one of 16 levels, the length down to one of 128 (exact to 16, then
# steps of ~10 %). tf-part grows with tf and falls with the length, so the code's point
# bounds the pair for any k1, b and avgdl.
TF_LEVELS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 30, 60, TF_MAX)


def _dl_edges() -> Tuple[int, ...]:
    edges = list(range(17))
    while edges[-1] < 0xFFFF:
        edges.append(min(0xFFFF, max(edges[-1] + 1, int(edges[-1] * 1.1))))
    return tuple(edges)


DL_EDGES = _dl_edges()  # lower edges: a length's level is the last edge at or below it
DL_BITS = 7
assert len(DL_EDGES) <= 1 << DL_BITS


_TF_CODE = [
    next(i for i, v in enumerate(TF_LEVELS) if v >= tf) << DL_BITS for tf in range(TF_MAX + 1)
]


def impact_codes(tfs: Iterable[int], dls: Iterable[int]) -> List[int]:
    """The impact code of each (tf, length) pair."""
    return [_TF_CODE[tf] | (bisect_right(DL_EDGES, dl) - 1) for tf, dl in zip(tfs, dls)]


def code_points() -> List[Tuple[int, int]]:
    """Per impact code, the (tf, length) whose tf-part bounds every pair with that code."""
    return [
        (TF_LEVELS[code >> DL_BITS], DL_EDGES[min(code & ((1 << DL_BITS) - 1), len(DL_EDGES) - 1)])
        for code in range(len(TF_LEVELS) << DL_BITS)
    ]


def invert(postings: Dict[str, List[int]], first: int, chunks: Iterable[Sequence[str]]) -> None:
    """Add the terms of chunks ``first``, ``first + 1``, … to ``postings`` (term → postings,
    chunk ids ascending when chunks are added in order)."""
    for cid, terms in enumerate(chunks, start=first):
        shifted = cid << 8
        for term, tf in Counter(terms).items():
            code = shifted | (tf if tf < TF_MAX else TF_MAX)
            plist = postings.get(term)
            if plist is None:
                postings[term] = [code]
            else:
                plist.append(code)


def tap_sections(
    postings: Dict[str, List[int]], fields: Dict[str, List[int]], id_code: str, field_code: str
) -> List[Tuple[str, bytes]]:
    """A tap's postings as sections, terms in byte order (terms longer than 255 bytes in
    UTF-8 are left out): ``terms`` (newline-separated), per term its chunk and field
    posting counts (u32), and the chunk and field ids and tfs, term after term."""
    encoded = sorted(
        (t.encode("utf-8"), t)
        for t in postings.keys() | fields.keys()
        if len(t.encode("utf-8")) <= TERM_MAX_BYTES
    )
    lists = [postings.get(t, []) for _, t in encoded]
    flists = [fields.get(t, []) for _, t in encoded]
    flat = list(chain.from_iterable(lists))
    fflat = list(chain.from_iterable(flists))
    return [
        ("terms", b"\n".join(e for e, _ in encoded)),
        ("counts", to_le(array("I", map(len, lists)))),
        ("field_counts", to_le(array("I", map(len, flists)))),
        ("post_ids", to_le(array(id_code, map((8).__rrshift__, flat)))),
        ("post_tfs", bytes(map((0xFF).__and__, flat))),
        ("field_ids", to_le(array(field_code, map((8).__rrshift__, fflat)))),
        ("field_tfs", bytes(map((0xFF).__and__, fflat))),
    ]


class Row(NamedTuple):
    """A term's dictionary row in a tier: where its chunk postings, blocks and frontier
    points are, how many of its postings are in live chunks, the same for its entry
    field postings (no blocks: one posting per content), and where its content postings
    are (one per content with the term in a chunk: the bounds the ranking starts from)."""

    first: int
    n: int  # chunk postings
    live: int
    block: int
    front: int
    n_front: int
    ffirst: int = 0
    fn: int = 0  # field postings
    flive: int = 0
    ffront: int = 0
    n_ffront: int = 0
    cfirst: int = 0
    cn: int = 0  # content postings

    def pack(self, term: bytes) -> bytes:
        count = self.n | (HAS_FIELD if self.fn else 0)
        row = (
            bytes((len(term),))
            + term
            + _CHUNK_TAIL.pack(
                self.first,
                count,
                self.live,
                self.block,
                self.front,
                self.cfirst,
                self.cn,
                self.n_front,
            )
        )
        if self.fn:
            row += _FIELD_TAIL.pack(self.ffirst, self.fn, self.flive, self.ffront, self.n_ffront)
        return row


def bucket_count(n_terms: int) -> int:
    """A power of two near ``n_terms / 2``: ~2 terms per bucket, one small read a look-up."""
    n = 1
    while n * 2 < n_terms:
        n *= 2
    return n


def dictionary(terms: Sequence[bytes], rows: Sequence[Row]) -> Tuple[bytes, bytes, int]:
    """(bucket offsets, rows, number of buckets): rows sorted by (hash bucket, term), a
    bucket → byte-range table; a term's bucket is ``crc32(term) & (n_buckets - 1)``."""
    n_buckets = bucket_count(len(terms))
    mask = n_buckets - 1
    bucket_of = [zlib.crc32(t) & mask for t in terms]
    order = sorted(range(len(terms)), key=lambda i: (bucket_of[i], terms[i]))
    packed = [rows[i].pack(terms[i]) for i in order]
    sizes = [0] * n_buckets
    for i, row in zip(order, packed):
        sizes[bucket_of[i]] += len(row)
    return to_le(array("I", accumulate(sizes, initial=0))), b"".join(packed), n_buckets


def _parse(data: bytes, i: int) -> Tuple[bytes, Row, int]:
    """The row at ``data[i:]``: (term, row, offset after it); ValueError if it runs past."""
    size = len(data)
    j = i + 1 + data[i]
    if j + _CHUNK_TAIL.size > size:
        raise ValueError("bad dictionary row")
    first, count, live, block, front, cfirst, cn, n_front = _CHUNK_TAIL.unpack_from(data, j)
    end = j + _CHUNK_TAIL.size
    if not count & HAS_FIELD:
        row = Row(first, count, live, block, front, n_front, cfirst=cfirst, cn=cn)
        return data[i + 1 : j], row, end
    if end + _FIELD_TAIL.size > size:
        raise ValueError("bad dictionary row")
    ffirst, fn, flive, ffront, n_ffront = _FIELD_TAIL.unpack_from(data, end)
    row = Row(
        first,
        count & ~HAS_FIELD,
        live,
        block,
        front,
        n_front,
        ffirst,
        fn,
        flive,
        ffront,
        n_ffront,
        cfirst,
        cn,
    )
    return data[i + 1 : j], row, end + _FIELD_TAIL.size


def find_row(bucket: bytes, term: bytes) -> Optional[Row]:
    """``term``'s row from one bucket's rows; None when it is not there.

    Raises ValueError when a row runs past the end of the bucket.
    """
    i = 0
    while i < len(bucket):
        found, row, i = _parse(bucket, i)
        if found == term:
            return row
    return None


def rows(data: bytes) -> Iterator[Tuple[bytes, Row]]:
    """Every (term, row) of a dictionary, in file order. Raises ValueError on a bad row."""
    i = 0
    while i < len(data):
        term, row, i = _parse(data, i)
        yield term, row
