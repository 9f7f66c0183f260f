"""The ``flat`` backend: exact top-k cosine in pure Python over an int8 copy of the vectors.

`FlatIndex` answers from a quantised copy of the store's ``items`` (kept in its ``flat``
table) and rescores the few candidates that can still reach the top k from their float32
vectors, so it ranks exactly like `scan_knn`, the plain scan it replaces. Ties are broken
by item id (`ranked`) so every backend orders alike.
"""

from __future__ import annotations

import heapq
import json
import math
import operator
import sqlite3
from array import array
from typing import AbstractSet, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.binio import from_le, to_le
from boost_cli.core.dense.errors import REINDEX_FIX, check_dimensions
from boost_cli.core.embed import unpack
from boost_cli.core.errors import IndexUnavailable


def ranked(pairs: Iterable[Tuple[int, float]]) -> List[Tuple[int, float]]:
    """Best first; ties broken by item id so every backend orders alike."""
    return sorted(pairs, key=lambda p: (-p[1], p[0]))


def scan_knn(
    conn: sqlite3.Connection,
    query: Sequence[float],
    k: int,
    kind: Optional[str],
    taps: Sequence[str] = (),
) -> List[Tuple[int, float]]:
    """Exact cosine over every stored vector (all unit length, so a dot product) of
    ``kind`` and in ``taps`` (empty: every tap): the fallback for a store whose
    `FlatIndex` is missing or stale."""
    where: List[str] = []
    params: List[Any] = []
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if taps:
        where.append(f"tap IN ({','.join('?' * len(taps))})")
        params.extend(taps)
    sql = "SELECT id, vector FROM items" + (" WHERE " + " AND ".join(where) if where else "")
    rows = conn.execute(sql, params).fetchall()
    q = list(query)
    mul = operator.mul
    scored = ((int(i), sum(map(mul, q, unpack(blob)))) for i, blob in rows)
    return ranked(heapq.nsmallest(k, scored, key=lambda p: (-p[1], p[0])))


def exact(
    conn: sqlite3.Connection, query: Sequence[float], ids: Sequence[int]
) -> List[Tuple[int, float]]:
    """(item id, exact dot product with ``query``) for ``ids``, in double precision."""
    q = list(query)
    mul = operator.mul
    out: List[Tuple[int, float]] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for i, blob in conn.execute(f"SELECT id, vector FROM items WHERE id IN ({marks})", part):
            out.append((int(i), sum(map(mul, q, unpack(blob)))))
    return out


_FLAT_LAYOUT = "1"
_SLOT_BYTES = 4  # one uint32 lane per vector in a column integer: 255 * 255 * dims < 2**32
_MAX_FLAT_DIMS = (2**32 - 1) // (255 * 255)  # 66,052 dimensions
_U32 = "I" if array("I").itemsize == 4 else "L"  # the array typecode of a 32-bit lane


def _quantise(vector: Sequence[float]) -> Tuple[bytes, float, int, float]:
    """``vector`` as int8 codes stored offset by 128 (bytes 1..255), with its scale ``s``
    (component ≈ s · (code - 128)), the sum of the signed codes, and the error
    ``‖v - s·ĉ‖₂`` (exact, computed in double precision)."""
    top = max(map(abs, vector))
    if not top:
        return bytes([128]) * len(vector), 1.0, 0, 0.0
    inv, scale = 127.0 / top, top / 127.0
    # x·inv is in [-127, 127]; + 128.5 then int() (floor, all positive) rounds half up.
    codes = bytes(map(int, map((128.5).__add__, map(inv.__mul__, vector))))
    signed = [c - 128 for c in codes]
    dot = math.fsum(map(operator.mul, vector, signed))
    sq = math.fsum(map(operator.mul, signed, signed))
    norm = math.fsum(map(operator.mul, vector, vector))
    error = math.sqrt(max(0.0, norm - 2 * scale * dot + scale * scale * sq))
    return codes, scale, sum(signed), error


class FlatIndex:
    """Exact top-k cosine without numpy or sqlite-vec, much faster than scanning floats
    (figures, and why not numpy: docs/dense.md).

    Every vector is stored as int8 codes with a per-vector scale (`_quantise`) and the
    exact size of its rounding error. A query is quantised the same way; the integer dot
    products with all N vectors come from one pass of big-integer arithmetic: code column
    ``i`` (dimension ``i`` of every vector) is one Python int with a 32-bit lane per
    vector, so ``Σ_i p_i · column_i`` is ``dims`` multiply-adds of C-speed big integers
    whose lanes hold every vector's dot product (the codes are offset to be positive, so
    lanes never borrow; the offsets are subtracted per vector afterwards).

    ``approx_j = s_q · s_j · (q̂ · ĉ_j)`` is within ``bound_j = e_j + e_q · (1 + e_j)`` of
    the true cosine (Cauchy-Schwarz on ``q·v - q̂·v̂ = q·(v - v̂) + (q - q̂)·v̂``, unit
    vectors). Any vector whose upper bound is below the k-th best lower bound cannot be
    in the top k; the rest (about 2k) are rescored exactly from their float32 blobs, so
    the ranking is the exact scan's, bit for bit.
    """

    def __init__(
        self,
        ids: Sequence[int],
        kinds: bytes,
        kind_names: Sequence[str],
        codes: bytes,
        scales: Sequence[float],
        sums: Sequence[int],
        errors: Sequence[float],
        dims: int,
    ) -> None:
        self.ids = ids
        self.kinds = kinds
        self.kind_names = list(kind_names)
        self.scales = scales
        self.sums = sums
        self.errors = errors
        self.dims = dims
        self.n = len(ids)
        # One reused buffer of n 32-bit lanes: each column's codes go in the low bytes, the
        # high bytes stay zero. Column by column, so the transient is one column, not all.
        lanes = bytearray(_SLOT_BYTES * self.n)
        n = self.n
        self._columns = []
        for i in range(dims):
            lanes[0::_SLOT_BYTES] = codes[i * n : (i + 1) * n]
            self._columns.append(int.from_bytes(lanes, "little"))

    # -- persistence: a few blobs in the store's ``flat`` table

    @staticmethod
    def encode(rows: Sequence[Tuple[int, str, bytes]]) -> Dict[str, bytes]:
        """The ``flat`` table's blobs for ``(item id, kind, float32 blob)`` rows."""
        ids = array("q")
        scales = array("d")
        sums = array("q")
        errors = array("d")
        kinds = bytearray()
        kind_names: List[str] = []
        row_codes: List[bytes] = []
        dims = 0
        for item_id, kind, blob in rows:
            vector = unpack(blob)
            dims = dims or len(vector)
            if len(vector) != dims:
                raise IndexUnavailable(
                    "the vector store holds vectors of different lengths", REINDEX_FIX
                )
            codes, scale, total, error = _quantise(vector)
            if kind not in kind_names:
                kind_names.append(kind)
            ids.append(int(item_id))
            kinds.append(kind_names.index(kind))
            scales.append(scale)
            sums.append(total)
            errors.append(error)
            row_codes.append(codes)
        rows_major = b"".join(row_codes)
        columns = b"".join(rows_major[i::dims] for i in range(dims)) if dims else b""
        head = {"layout": _FLAT_LAYOUT, "dims": dims, "kinds": kind_names, "n": len(ids)}
        return {
            "head": json.dumps(head).encode("utf-8"),
            "ids": to_le(ids),
            "kinds": bytes(kinds),
            "codes": columns,
            "scales": to_le(scales),
            "sums": to_le(sums),
            "errors": to_le(errors),
        }

    @classmethod
    def decode(cls, blobs: Mapping[str, bytes]) -> Optional[FlatIndex]:
        """The index from `encode`'s blobs, or None when they are of another layout,
        incomplete, or too wide for 32-bit lanes."""
        try:
            head = json.loads(blobs["head"].decode("utf-8"))
            if head.get("layout") != _FLAT_LAYOUT:
                return None
            dims, n, kind_names = int(head["dims"]), int(head["n"]), list(head["kinds"])
            ids, sums = from_le("q", blobs["ids"]), from_le("q", blobs["sums"])
            scales, errors = from_le("d", blobs["scales"]), from_le("d", blobs["errors"])
            kinds, codes = bytes(blobs["kinds"]), bytes(blobs["codes"])
        except (KeyError, ValueError, TypeError, AttributeError):
            return None
        sizes = {len(ids), len(sums), len(scales), len(errors), len(kinds)}
        if sizes != {n} or len(codes) != n * dims or not 0 < dims <= _MAX_FLAT_DIMS:
            return None
        return cls(ids, kinds, kind_names, codes, scales, sums, errors, dims)

    # -- queries

    def _dots(self, p: Sequence[int]) -> Sequence[int]:
        """``q̂ · ĉ_j`` for every vector j (exact integers), ``p`` the query's codes."""
        acc = 0
        for weight, column in zip(p, self._columns):
            acc += weight * column
        lanes = from_le(_U32, acc.to_bytes(_SLOT_BYTES * self.n, "little"))
        # Σ p_i·c_ij = q̂·ĉ_j + 128·Σĉ_j + 128·Σq̂ + 128²·dims
        offset = 128 * (sum(p) - 128 * self.dims) + 16384 * self.dims
        return [lane - 128 * total - offset for lane, total in zip(lanes, self.sums)]

    def knn(
        self,
        conn: sqlite3.Connection,
        query: Sequence[float],
        k: int,
        kind: Optional[str],
        among: Optional[AbstractSet[int]] = None,
    ) -> List[Tuple[int, float]]:
        """(item id, exact cosine) of the ``k`` nearest vectors of ``kind`` (and, when
        ``among`` is given, with one of those item ids), best first."""
        check_dimensions(len(query), self.dims)
        if kind is not None:
            if kind not in self.kind_names:
                return []
            code = self.kind_names.index(kind)
            rows: Sequence[int] = [j for j, c in enumerate(self.kinds) if c == code]
        else:
            rows = range(self.n)
        if among is not None:
            rows = [j for j in rows if self.ids[j] in among]
        if not rows:
            return []
        p, scale_q, _, error_q = _quantise(query)
        dots = self._dots(p)
        scales, errors = self.scales, self.errors
        # Slack covers float rounding in the bound arithmetic itself.
        approx = [
            (dots[j] * scale_q * scales[j], errors[j] + error_q * (1 + errors[j]) + 1e-9)
            for j in rows
        ]
        if len(approx) > k:
            floor = heapq.nlargest(k, [a - b for a, b in approx])[-1]
            keep = [rows[i] for i, (a, b) in enumerate(approx) if a + b >= floor]
        else:
            keep = list(rows)
        ids = self.ids
        return ranked(exact(conn, query, [ids[j] for j in keep]))[:k]


FlatKey = Tuple[str, str, str]  # (store file, generation, the index's random id)


class FlatCache:
    """The newest `FlatIndex` loaded and the key it was loaded under. Whoever keeps this
    object keeps the index warm (a `DenseIndex` holds one); a new one starts cold."""

    def __init__(self) -> None:
        self._key: Optional[FlatKey] = None
        self._index: Optional[FlatIndex] = None

    def get(self, key: FlatKey) -> Optional[FlatIndex]:
        return self._index if key == self._key else None

    def put(self, key: FlatKey, index: FlatIndex) -> None:
        """Keep ``index`` (and drop the one before: one store per process is the norm)."""
        self._key, self._index = key, index
