"""The ``flat`` backend: exact top-k cosine over an int8 copy of the vectors, in pure Python
or, when this process has numpy loaded already, with numpy.

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
import sys
from array import array
from typing import (
    AbstractSet,
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

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
    return _dots_of(query, _vectors(conn, ids))


def _vectors(conn: sqlite3.Connection, ids: Sequence[int]) -> List[Tuple[int, bytes]]:
    """(item id, float32 blob) for ``ids``."""
    out: List[Tuple[int, bytes]] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT id, vector FROM items WHERE id IN ({marks})"
        out.extend((int(i), blob) for i, blob in conn.execute(sql, part))
    return out


def _dots_of(query: Sequence[float], rows: Iterable[Tuple[int, bytes]]) -> List[Tuple[int, float]]:
    """The scores every backend reports: ``query`` · vector summed by `sum` in double
    precision, as `scan_knn` does."""
    q = list(query)
    mul = operator.mul
    return [(i, sum(map(mul, q, unpack(blob)))) for i, blob in rows]


def _exact_numpy(
    np: Any, conn: sqlite3.Connection, query: Sequence[float], ids: Sequence[int], k: int
) -> List[Tuple[int, float]]:
    """`exact`'s scores for those of ``ids`` that can be in its top k: numpy's dot
    products (any summation order) pick them, and only they are summed like `exact`.

    Both sums of the n products are within ``γ_n·Σ|q_i·v_i| ≤ γ_n·‖q‖·‖v‖`` of the true
    dot product (γ_n ≈ n·2⁻⁵³), so they differ by at most ``δ = 2γ_n‖q‖‖v‖``; whatever
    `exact` ranks in its top k (ties included) is within 2δ of numpy's k-th best. The
    window used is 32 times wider."""
    rows = _vectors(conn, ids)
    if len(rows) > k:
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), "<f4").reshape(len(rows), -1)
        scores = matrix @ np.asarray(query, np.float64)
        longest = float(np.sqrt((matrix.astype(np.float64) ** 2).sum(axis=1)).max())
        width = len(query) * 2.0**-46 * math.sqrt(math.fsum(x * x for x in query)) * longest
        floor = np.partition(scores, len(rows) - k)[len(rows) - k] - width
        rows = [rows[i] for i in np.flatnonzero(scores >= floor)]
    return _dots_of(query, rows)


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
    """Exact top-k cosine without sqlite-vec, much faster than scanning floats (figures:
    docs/dense.md).

    Every vector is stored as int8 codes with a per-vector scale (`_quantise`) and the
    exact size of its rounding error. A query is quantised the same way; the integer dot
    products with all N vectors come from one pass over the codes. In pure Python that
    pass is big-integer arithmetic: code column ``i`` (dimension ``i`` of every vector) is
    one Python int with a 32-bit lane per vector, so ``Σ_i p_i · column_i`` is ``dims``
    multiply-adds of C-speed big integers whose lanes hold every vector's dot product (the
    codes are offset to be positive, so lanes never borrow; the offsets are subtracted per
    vector afterwards). Where numpy is loaded already (the local provider runs its model
    with it), the same integers come from one matrix-vector product, ~10x faster.

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
        self._codes = codes
        # Built on first use, by whichever path the process takes (`knn`).
        self._columns: Optional[List[int]] = None
        self._arrays: Optional[_Arrays] = None

    def _big_columns(self) -> List[int]:
        """The code columns as big integers, one 32-bit lane per vector (built once)."""
        if self._columns is None:
            # One reused buffer of n 32-bit lanes: each column's codes go in the low bytes,
            # the high bytes stay zero. Column by column: the transient is one column.
            n, codes = self.n, self._codes
            lanes = bytearray(_SLOT_BYTES * n)
            columns = []
            for i in range(self.dims):
                lanes[0::_SLOT_BYTES] = codes[i * n : (i + 1) * n]
                columns.append(int.from_bytes(lanes, "little"))
            self._columns = columns
        return self._columns

    def _numpy_arrays(self, np: Any) -> _Arrays:
        """The same codes and per-vector fields as numpy arrays (built once; the codes
        are a view of the loaded bytes, not a copy)."""
        if self._arrays is None:
            self._arrays = _Arrays(
                codes=np.frombuffer(self._codes, np.uint8).reshape(self.dims, self.n),
                sums=np.asarray(self.sums, np.int64),
                scales=np.asarray(self.scales, np.float64),
                errors=np.asarray(self.errors, np.float64),
                ids=np.asarray(self.ids, np.int64),
                kinds=np.frombuffer(self.kinds, np.uint8),
            )
        return self._arrays

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

    def _dots(self, p: bytes) -> Sequence[int]:
        """``q̂ · ĉ_j`` for every vector j (exact integers), ``p`` the query's codes."""
        acc = 0
        for weight, column in zip(p, self._big_columns()):
            acc += weight * column
        lanes = from_le(_U32, acc.to_bytes(_SLOT_BYTES * self.n, "little"))
        offset = self._offset(p)
        return [lane - 128 * total - offset for lane, total in zip(lanes, self.sums)]

    def _offset(self, p: bytes) -> int:
        """What the stored offsets add to every ``Σ_i p_i·c_ij`` besides ``128·Σĉ_j``:
        ``Σ p_i·c_ij = q̂·ĉ_j + 128·Σĉ_j + 128·Σq̂ + 128²·dims``."""
        return 128 * (sum(p) - 128 * self.dims) + 16384 * self.dims

    def knn(
        self,
        conn: sqlite3.Connection,
        query: Sequence[float],
        k: int,
        kind: Optional[str],
        among: Optional[AbstractSet[int]] = None,
        *,
        use_numpy: Optional[bool] = None,
    ) -> List[Tuple[int, float]]:
        """(item id, exact cosine) of the ``k`` nearest vectors of ``kind`` (and, when
        ``among`` is given, with one of those item ids), best first.

        The candidates come from one pass over the codes: with numpy when ``use_numpy``
        (None: when this process has imported numpy already, `loaded_numpy`), else with
        big integers. Both compute the same integers and the same bounds in the same
        floating-point order, so they keep the same candidates; either way those are
        rescored exactly, so the ranking is `scan_knn`'s."""
        check_dimensions(len(query), self.dims)
        code: Optional[int] = None
        if kind is not None:
            if kind not in self.kind_names:
                return []
            code = self.kind_names.index(kind)
        np = loaded_numpy() if use_numpy is None else (_import_numpy() if use_numpy else None)
        codes, scale, _, error = _quantise(query)
        probe = _Probe(codes, scale, error, k, code, among)
        if np is not None:
            keep = self._candidates_numpy(np, probe)
            return ranked(_exact_numpy(np, conn, query, keep, k))[:k] if keep else []
        keep = self._candidates(probe)
        return ranked(exact(conn, query, keep))[:k] if keep else []

    def _candidates(self, q: _Probe) -> List[int]:
        """The item ids that can still be in the top k (pure Python)."""
        if q.kind is not None:
            rows: Sequence[int] = [j for j, c in enumerate(self.kinds) if c == q.kind]
        else:
            rows = range(self.n)
        if q.among is not None:
            among = q.among
            rows = [j for j in rows if self.ids[j] in among]
        if not rows:
            return []
        dots = self._dots(q.codes)
        scales, errors, scale_q, error_q, k = self.scales, self.errors, q.scale, q.error, q.k
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
        return [ids[j] for j in keep]

    def _candidates_numpy(self, np: Any, q: _Probe) -> List[int]:
        """`_candidates` as one integer matrix-vector product (exact in int32: every
        Σ p_i·c_ij ≤ 255²·dims < 2³¹) and array arithmetic in the same order."""
        a = self._numpy_arrays(np)
        mask = None if q.kind is None else a.kinds == q.kind
        if q.among is not None:
            wanted = np.isin(a.ids, np.fromiter(q.among, np.int64, len(q.among)))
            mask = wanted if mask is None else mask & wanted
        rows = np.arange(self.n) if mask is None else np.flatnonzero(mask)
        if not len(rows):
            return []
        query_codes = np.frombuffer(q.codes, np.uint8)
        raw = np.einsum("i,ij->j", query_codes, a.codes, dtype=np.int32, casting="unsafe")
        dots = (raw[rows] - 128 * a.sums[rows] - self._offset(q.codes)).astype(np.float64)
        errors = a.errors[rows]
        approx = dots * q.scale * a.scales[rows]
        bound = errors + q.error * (1 + errors) + 1e-9
        if len(rows) > q.k:
            low = approx - bound
            floor = np.partition(low, len(low) - q.k)[len(low) - q.k]
            rows = rows[approx + bound >= floor]
        return [int(i) for i in a.ids[rows]]


class _Probe(NamedTuple):
    """One query as both candidate passes take it: its codes, scale and error
    (`_quantise`), the k wanted, and the filters (a kind's code, item ids)."""

    codes: bytes
    scale: float
    error: float
    k: int
    kind: Optional[int]
    among: Optional[AbstractSet[int]]


class _Arrays(NamedTuple):
    """`FlatIndex`'s fields as numpy arrays (typed loosely: numpy is optional)."""

    codes: Any  # uint8 (dims, n), offset by 128 as stored
    sums: Any
    scales: Any
    errors: Any
    ids: Any
    kinds: Any


def loaded_numpy() -> Any:
    """numpy when this process has imported it already (the local provider does, to run
    its model), else None: the flat search never pays numpy's import itself, which costs
    more than a whole pure-Python query (docs/dense.md)."""
    np = sys.modules.get("numpy")
    return np if np is not None and hasattr(np, "einsum") else None


def _import_numpy() -> Any:
    """numpy, imported now (a caller asked for the numpy path), or None when absent."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


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
