"""The top k with numpy, when the process already has it (format 4): the same contract and
the same result as `bounds.top_groups`, with every posting scored in C loops.

`bounds` reads content postings to bound each content and scores exactly, in Python, the
contents that can still enter; at 10x the corpus that is ~1,300 exact scores a keyword
query (every copy of a top skill has the same bound) and a scatter over ~160 k content
postings. Here each tier's chunk postings are scored whole, term at a time, into one
float64 array of the tier's chunks (small enough to stay in the CPU's cache):
``acc[ids] += tf × (k1 + 1) / (tf + norm) × w``, the same IEEE operations in the same
order as `ranking.accumulate` and `bounds._exact` (`bm25.term_weight`'s expression one
operation at a time, as Python evaluates it; a chunk has at most one posting a term), so
every chunk score is the same float, not a close one; the entry-field scores likewise.
Each content is then bounded from its chunks' floats: its best chunk score, + T ln n for
lse over its n chunks (a soft maximum of n values none above the best is at most that;
counting only the matching chunks bounds tighter but costs a pass more than the extra
exact scores), × 1.25 for max2, + its field score, raised past float error. Contents are taken
best bound first (only the best few hundred are ever sorted), across tiers through a
heap; each is scored exactly by `ranking.content_scored` over its chunks' floats (the
function the other paths use) and offered to the shared top k, until the k-th best
group beats the next bound: a few hundred contents, not thousands.

numpy is used only when the process has already imported it (`available`): a cold
`boost search` never pays its import (~60-100 ms, more than the whole 1x ranking); the
long-lived servers (`boost mcp`, `boost mcp --http`) import it at start when it is
installed (the [local] extra brings it: `preload`), and a hybrid search has it from the
vector store. `BOOST_NUMPY_RANKING=0` keeps the pure-Python path everywhere.
"""

from __future__ import annotations

import heapq
import os
import sys
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import damaged
from boost_cli.core.index.ranking import (
    _EPS,
    LSE_TEMPERATURE,
    MAX2_BONUS,
    QueryTerm,
    Ranked,
    _TopGroups,
    content_scored,
    query_terms,
)

_FIRST = 256  # candidates a tier sorts first (then 4x as many more at a time)
OFF = "BOOST_NUMPY_RANKING"  # "0": never rank with numpy (the pure-Python path always)


def _off() -> bool:
    return os.environ.get(OFF, "1") == "0"


def available() -> bool:
    """Whether this process ranks with numpy: it is imported already, and not turned off."""
    return "numpy" in sys.modules and not _off()


def preload() -> bool:
    """Import numpy when it is installed (a server's start: every later query gains);
    False when it is not there or turned off."""
    if _off():
        return False
    import importlib.util

    if "numpy" not in sys.modules and importlib.util.find_spec("numpy") is None:
        return False
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _norm(np: Any, lengths: Any, avgdl: float, k1: float, b: float) -> Any:
    """`bm25.length_norm` over an array of lengths, each operation as Python evaluates it."""
    if avgdl <= 0:
        return np.full(len(lengths), k1, dtype=np.float64)
    return k1 * ((1.0 - b) + (b * np.asarray(lengths, dtype=np.float64)) / avgdl)


def _kept(gen: Generation, key: Tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """``make()``, once per generation (kept in its memo while the reader is open)."""
    got = gen.memo.get(("vectorized", *key))
    if got is None:
        got = gen.memo[("vectorized", *key)] = make()
    return got


def _tables(np: Any, gen: Generation, t: int, what: str, k1: float, b: float) -> Any:
    """Per tier and parameters: the length norm of every chunk (``what`` "chunk") or
    entry field ("field")."""

    def make() -> Any:
        if what == "chunk":
            lengths, avgdl = gen.tier_lengths(t), gen.avgdl
        else:
            lengths, avgdl = gen.tier_field_lengths(t), gen.field_avgdl
        return _norm(np, np.frombuffer(lengths, dtype=np.uint16), avgdl, k1, b)

    return _kept(gen, (what, t, k1, b), make)


def _layout(np: Any, gen: Generation, t: int) -> Tuple[Any, Any, Any, Any, Any, Any]:
    """Tier ``t``'s contents: each one's first chunk (tier-local), chunk count and whether
    it is live; the first chunks of those with chunks, which those are, and their
    ``T ln n`` (what lse can add to the best of n chunks)."""

    def make() -> Tuple[Any, Any, Any, Any, Any, Any]:
        tier = gen.tiers[t]
        ob, cb = gen.tier_content_base[t], gen.tier_chunk_base[t]
        first = np.frombuffer(gen.content_first, dtype=np.uint32)[ob : ob + tier.contents + 1]
        first = first.astype(np.int64) - cb
        counts = np.diff(first)
        # a tier's contents cover its chunks exactly, in order
        if len(first) != tier.contents + 1 or first[0] != 0 or first[-1] != tier.chunks:
            raise damaged(f"{tier.c.path.name}: contents and chunks disagree")
        if (counts < 0).any():
            raise damaged(f"{tier.c.path.name}: contents and chunks disagree")
        live = np.frombuffer(gen.live, dtype=np.uint8)[ob : ob + tier.contents] != 0
        has = counts > 0
        slack = LSE_TEMPERATURE * np.log(counts[has])
        return first, counts, live, first[:-1][has], has, slack

    return _kept(gen, ("layout", t), make)


def _tf_tables(np: Any, gen: Generation, k1: float) -> Tuple[Any, Any]:
    """tf (0-255, a posting's byte) → tf as float64, and → ``tf × (k1 + 1)`` (the tf-part's
    numerator, the same float as Python's)."""

    def make() -> Tuple[Any, Any]:
        tf = np.arange(256, dtype=np.float64)
        return tf, tf * (k1 + 1.0)

    return _kept(gen, ("tf", k1), make)


def _scores(
    np: Any,
    tier: Any,
    row: Any,
    field: bool,
    norm: Any,
    tfs: Tuple[Any, Any],
    params: Tuple[float, float],
    w: float,
) -> Tuple[Any, Any]:
    """A term's postings in the tier: ids (as indexes) and each one's part of the score,
    ``tf × (k1 + 1) / (tf + norm) × w`` (`bm25.term_weight` × the term's weight, the same
    float); ids past the tier or a short list: damaged."""
    raw, width, tf_bytes = tier.raw_postings(row, field)
    ids = np.frombuffer(raw, dtype="<u2" if width == 2 else "<u4")
    tf = np.frombuffer(tf_bytes, dtype=np.uint8)
    size = tier.contents if field else tier.chunks
    if len(tf) != len(ids) or (len(ids) and int(ids[-1]) >= size):
        raise damaged(f"{tier.c.path.name}: postings out of bounds")
    ids = ids.astype(np.intp)
    k1, b = params
    tf_f, num = tfs  # `_tf_tables` of k1
    part = norm.take(ids)
    part += tf_f.take(tf)  # tf + norm
    if k1 > 0.0 and 0.0 <= b < 1.0:  # every norm > 0: a tf 0 (damaged) scores 0.0 / norm
        np.divide(num.take(tf), part, out=part)
    else:  # a norm can be 0: a tf 0 still scores 0.0, as in `bm25.term_weight`
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(num.take(tf), part, out=part)
        part[tf == 0] = 0.0
    part *= w
    return ids, part


class _Tier:
    """One tier's chunk scores, field scores and per-content bounds for the query."""

    def __init__(
        self,
        np: Any,
        gen: Generation,
        t: int,
        terms: List[QueryTerm],
        how: str,
        chunk_params: Tuple[float, float],
        field_params: Tuple[float, float],
    ) -> None:
        self.gen, self.t, self.how = gen, t, how
        tier = gen.tiers[t]
        self.cb, self.ob = gen.tier_chunk_base[t], gen.tier_content_base[t]
        k1, b = chunk_params
        fk1, fb = field_params
        acc = fld = None
        for qt in terms:
            row = qt.rows[t]
            if row is None:
                continue
            if qt.w and row.n:
                if acc is None:  # the tier's first chunk list: its norms, once
                    acc = np.zeros(tier.chunks, dtype=np.float64)
                    norm = _tables(np, gen, t, "chunk", k1, b)
                    tfs = _tf_tables(np, gen, k1)
                idx, part = _scores(np, tier, row, False, norm, tfs, chunk_params, qt.w)
                acc[idx] += part  # as `ranking.accumulate` adds it
            if qt.wf and row.fn:
                if fld is None:
                    fld = np.zeros(tier.contents, dtype=np.float64)
                    fnorm = _tables(np, gen, t, "field", fk1, fb)
                    ftfs = _tf_tables(np, gen, fk1)
                fidx, fpart = _scores(np, tier, row, True, fnorm, ftfs, field_params, qt.wf)
                fld[fidx] += fpart
        self.acc, self.fld = acc, fld
        self.cand: List[int] = []
        self.ub: List[float] = []
        if acc is None and fld is None:
            return
        first, counts, live, starts, has, slack = _layout(np, gen, t)
        part = np.zeros(tier.contents, dtype=np.float64)
        if acc is not None:
            # per content with chunks (they cover the tier's chunks in order): its best
            # chunk score, and how many of its chunks match
            top = np.maximum.reduceat(acc, starts)
            if how == "max":
                est = top
            elif how == "max2":  # at most best + bonus × best
                est = np.where(counts[has] > 1, top + MAX2_BONUS * top, top)
            else:  # lse over n chunks, none above the best: at most best + T ln n
                est = top + slack
            part[has] = np.where(top > 0.0, est, 0.0)
        bound = part + fld if fld is not None else part
        hit = part > 0.0 if fld is None else (part > 0.0) | (fld > 0.0)
        cand = np.flatnonzero(hit & live)
        # Raised past the float error of the sums (as `ranking._up`), best first; ties by
        # content id, as the other paths meet them.
        ub = bound[cand]
        self._np, self._rest, self._rest_ub = np, cand, ub + np.abs(ub) * _EPS + 1e-12
        self._more(_FIRST)

    def _more(self, n: int) -> bool:
        """Append the next ``n`` best candidates (by bound, ties by id) to ``cand`` and
        ``ub``; False when none is left. Only the best few are ever sorted: the k-th best
        is usually above the bound of the 100th."""
        np, cand, ub = self._np, self._rest, self._rest_ub
        if not len(cand):
            return False
        if len(cand) > n:
            # the n best bounds, and every candidate tied with the n-th (ties go by id)
            cut = np.partition(ub, len(ub) - n)[len(ub) - n]
            take = ub >= cut
            self._rest, self._rest_ub = cand[~take], ub[~take]
            cand, ub = cand[take], ub[take]
        else:
            self._rest, self._rest_ub = cand[:0], ub[:0]
        order = np.lexsort((cand, -ub))
        self.cand.extend(cand[order].tolist())
        self.ub.extend(ub[order].tolist())
        return True

    def exact(self, g: int) -> Optional[Tuple[float, int]]:
        """Content ``g``'s (tier-local) exact score and best global chunk (None: no
        match), from the same floats as the other paths (`ranking.content_scored`)."""
        j = self.ob + g
        first, end = self.gen.content_first[j], self.gen.content_first[j + 1]
        vals = self.acc[first - self.cb : end - self.cb].tolist() if self.acc is not None else []
        f = float(self.fld[g]) if self.fld is not None else 0.0
        return content_scored(vals, f if f > 0.0 else None, first, end, self.how)


def top_groups(
    gen: Generation,
    weights: Mapping[str, float],
    k: int,
    how: str,
    accept: Optional[Callable[[int], bool]] = None,
    group: Optional[Sequence[int]] = None,
    chunk_params: Tuple[float, float] = (bm25.K1, bm25.B),
    field: Tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> List[Ranked]:
    """The top ``k`` groups as (score, shown content, its best chunk), best first: the
    contract and the result of `bounds.top_groups`, with numpy (module docstring)."""
    import numpy as np

    alpha, fk1, fb = field
    terms = query_terms(gen, weights, alpha)
    if not terms or k <= 0:
        return []
    top = _TopGroups(k)
    tiers = [_Tier(np, gen, t, terms, how, chunk_params, (fk1, fb)) for t in range(len(gen.tiers))]
    tiers = [tr for tr in tiers if tr.cand]
    # Every tier's candidates by falling bound, merged: the k-th best rises fastest so.
    heads = [(-tr.ub[0], x, 0) for x, tr in enumerate(tiers)]
    heapq.heapify(heads)
    best = top.best
    while heads:
        negative, x, i = heapq.heappop(heads)
        ub = -negative
        if top.kth() > ub:
            break
        tr = tiers[x]
        if i + 1 < len(tr.cand) or tr._more(4 * len(tr.cand)):
            heapq.heappush(heads, (-tr.ub[i + 1], x, i + 1))
        g = tr.cand[i]
        j = tr.ob + g
        key = group[j] if group is not None else j
        cur = best.get(key)
        if cur is not None and cur[0] > ub:
            continue  # its group already has a better member
        if accept is not None and not accept(j):
            continue
        scored = tr.exact(g)
        if scored is not None:
            top.offer(key, scored[0], j, scored[1])
    return top.ranked()
