"""A tap's inverted index: per term its postings (`invert`), and the hash-bucketed term
dictionary that finds them (`term_dictionary` writes it, `find_term` reads one bucket).

A posting is one int while building: the chunk id (or, for entry fields, the content id)
in the high bits, the term's frequency in the chunk (capped at 255) in the low byte. The
segment stores ids and tfs apart. One dictionary row serves both lists of a term, the
chunks' and the entry fields', so a query term costs one look-up per segment.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from collections import Counter
from itertools import accumulate, chain
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from boost_cli.core.binio import to_le

_TF_MAX = 255  # tf is stored in one byte: no ~1000-character chunk holds a term 256 times
_TERM_MAX_BYTES = 255  # a dictionary row stores its term's length in one byte
_ROW_TAIL = struct.Struct("<II")  # after a row's term: first chunk posting, count (| _HAS_FIELD)
_HAS_FIELD = 0x80000000  # set in the count: a second tail follows, first field posting, count


def invert(postings: Dict[str, List[int]], first: int, chunks: Iterable[Sequence[str]]) -> None:
    """Add the terms of chunks ``first``, ``first + 1``, … to ``postings`` (term → postings,
    chunk ids ascending when chunks are added in order)."""
    for cid, terms in enumerate(chunks, start=first):
        shifted = cid << 8
        for term, tf in Counter(terms).items():
            code = shifted | (tf if tf < _TF_MAX else _TF_MAX)
            plist = postings.get(term)
            if plist is None:
                postings[term] = [code]
            else:
                plist.append(code)


class TermDictionary(NamedTuple):
    """The dictionary's sections, and the postings in the order its rows point into."""

    buckets: bytes  # u32 × (n_buckets + 1): byte offset of each bucket's rows
    rows: bytes  # per term, by (bucket, term): u8 length, the term, u32 first, u32 count;
    # when the count has `_HAS_FIELD`, u32 first and u32 count of the field postings too
    vocab: bytes  # every chunk term, sorted, newline-separated
    postings: List[int]  # chunk postings, term after term, in row order
    field_postings: List[int]  # entry-field postings, term after term, in row order
    n_buckets: int
    n_terms: int  # terms with chunk postings
    n_field_terms: int  # terms with field postings


def bucket_count(n_terms: int) -> int:
    """A power of two near ``n_terms / 2``: ~2 terms per bucket, one small read a look-up."""
    n = 1
    while n * 2 < n_terms:
        n *= 2
    return n


def term_dictionary(
    postings: Dict[str, List[int]], fields: Optional[Dict[str, List[int]]] = None
) -> TermDictionary:
    """Rows sorted by (hash bucket, term) and a bucket → byte-range table; a term's bucket
    is ``crc32(utf-8 term) & (n_buckets - 1)``. A row points at the term's chunk postings
    and at its entry-field postings (``fields``; count 0 when it has none). Terms longer
    than 255 bytes are left out."""
    fields = fields or {}
    terms_sorted = [
        t
        for t in sorted(postings.keys() | fields.keys())
        if len(t.encode("utf-8")) <= _TERM_MAX_BYTES
    ]
    encoded = [t.encode("utf-8") for t in terms_sorted]
    n_buckets = bucket_count(len(encoded))
    mask = n_buckets - 1
    bucket_of = [zlib.crc32(t) & mask for t in encoded]
    order = sorted(range(len(encoded)), key=bucket_of.__getitem__)
    lists = [postings.get(terms_sorted[i], []) for i in order]
    field_lists = [fields.get(terms_sorted[i], []) for i in order]
    starts = accumulate(map(len, lists), initial=0)
    field_starts = accumulate(map(len, field_lists), initial=0)
    rows = [
        bytes((len(encoded[i]),))
        + encoded[i]
        + (
            _ROW_TAIL.pack(start, len(a) | _HAS_FIELD) + _ROW_TAIL.pack(fstart, len(b))
            if b
            else _ROW_TAIL.pack(start, len(a))
        )
        for i, start, a, fstart, b in zip(order, starts, lists, field_starts, field_lists)
    ]
    bucket_bytes = [0] * n_buckets
    for i, row in zip(order, rows):
        bucket_bytes[bucket_of[i]] += len(row)
    chunk_terms = sorted(e for e, t in zip(encoded, terms_sorted) if t in postings)
    return TermDictionary(
        buckets=to_le(array("I", accumulate(bucket_bytes, initial=0))),
        rows=b"".join(rows),
        vocab=b"\n".join(chunk_terms),
        postings=list(chain.from_iterable(lists)),
        field_postings=list(chain.from_iterable(field_lists)),
        n_buckets=n_buckets,
        n_terms=len(chunk_terms),
        n_field_terms=sum(1 for b in field_lists if b),
    )


def find_term(bucket: bytes, term: bytes) -> Optional[Tuple[int, int, int, int]]:
    """(chunk first, count, field first, count) of ``term``'s postings, from one bucket's
    rows; None when it is not there.

    Raises ValueError when a row runs past the end of the bucket.
    """
    i = 0
    size = len(bucket)
    while i < size:
        j = i + 1 + bucket[i]
        if j + 8 > size:
            raise ValueError("bad dictionary row")
        first, count = _ROW_TAIL.unpack_from(bucket, j)
        end = j + (16 if count & _HAS_FIELD else 8)
        if end > size:
            raise ValueError("bad dictionary row")
        if bucket[i + 1 : j] == term:
            if count & _HAS_FIELD:
                ffirst, fcount = _ROW_TAIL.unpack_from(bucket, j + 8)
                return first, count & ~_HAS_FIELD, ffirst, fcount
            return first, count, 0, 0
        i = end
    return None
