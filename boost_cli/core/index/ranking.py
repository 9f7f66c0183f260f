"""Scoring one query: the query terms (`query_terms`), the exhaustive scores every exact
top k is tested against (`accumulate`, `content_score`), and what the top k is built
from (`_TopGroups`, the aggregation bounds, `_slice_part`); `bounds.top_groups` finds the
top k groups without scoring every posting.

A content (distinct file) scores ``aggregate(its chunks' scores) + field``: the chunk
aggregate (`content_score`) plus ``field_weight`` × BM25 of its entry's "name.
description" (one field document per live content, with its own N, avgdl and df). A
chunk scores Σ over the query terms, in query order, of ``idf × weight × tf-part``. A
group scores its best member's score; the member shown is that one.
"""

from __future__ import annotations

import math
import zlib
from bisect import bisect_left, insort
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Set, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.postings import Row

MAX2_BONUS = 0.25  # max2: best chunk + MAX2_BONUS × second-best chunk
LSE_TEMPERATURE = 2.0  # lse: T · ln Σ exp(score / T), a soft maximum (T: docs/benchmarks.md)
_EPS = 1e-9  # bounds are raised by this much (relative) over float error in the sums

Ranked = Tuple[float, int, int]  # (score, global content id, its best global chunk or -1)


class QueryTerm(NamedTuple):
    """A query term: its chunk weight (idf × weight; 0.0 when no live chunk has it), its
    field weight (field weight × weight × field idf; 0.0: none) and its row in each tier."""

    w: float
    wf: float
    rows: List[Optional[Row]]


def query_terms(gen: Generation, weights: Mapping[str, float], alpha: float) -> List[QueryTerm]:
    """The query's terms with a positive weight that some live chunk or field has, in query
    order; df and the field df are the sums of the tiers' live counts."""
    out: List[QueryTerm] = []
    for term, weight in weights.items():
        if weight <= 0.0:
            continue
        tb = term.encode("utf-8")
        rows = gen.term_rows(tb, zlib.crc32(tb))
        df = sum(r.live for r in rows if r is not None)
        fdf = sum(r.flive for r in rows if r is not None)
        w = bm25.idf(df, gen.n) * weight if df else 0.0
        wf = alpha * weight * bm25.idf(fdf, gen.field_n) if fdf and alpha > 0.0 else 0.0
        if w or wf:
            out.append(QueryTerm(w, wf, rows))
    return out


# --------------------------------------------------------------------------- exhaustive


class ChunkScores(NamedTuple):
    """Every chunk's score by global chunk id, and every live content's field score."""

    acc: List[float]
    field: Dict[int, float]


def accumulate(
    gen: Generation,
    weights: Mapping[str, float],
    k1: float,
    b: float,
    field: Tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> Optional[ChunkScores]:
    """Every chunk's BM25 score for the query terms (term → weight: a weight multiplies
    the term's idf) and, with ``field`` = (weight, k1, b), every entry field's; None when
    no term is known. Scores every posting: the definition `top_groups` is tested against."""
    alpha, fk1, fb = field
    terms = query_terms(gen, weights, alpha)
    if not terms:
        return None
    acc = [0.0] * len(gen.chunk_content)
    scores: Dict[int, float] = {}
    live = gen.live
    for qt in terms:
        for t, row in enumerate(qt.rows):
            if row is None:
                continue
            tier = gen.tiers[t]
            if qt.w and row.n:
                rows, base = gen.chunk_rows(t, k1, b), gen.tier_chunk_base[t]
                ids, tfs = tier.chunk_postings(row)
                for c, tf in zip(ids, tfs):
                    acc[base + c] += rows[c][tf] * qt.w
            if qt.wf and row.fn:
                frows, base = gen.field_rows(t, fk1, fb), gen.tier_content_base[t]
                fids, ftfs = tier.field_postings(row)
                for g, tf in zip(fids, ftfs):
                    if live[base + g]:
                        scores[base + g] = scores.get(base + g, 0.0) + frows[g][tf] * qt.wf
    return ChunkScores(acc, scores)


def content_score(gen: Generation, acc: List[float], gcid: int, best: int, how: str) -> float:
    """A content's score from its chunks': max, max + bonus × second best, or soft max
    over its matching chunks; 0.0 when none matched (``best`` -1: it has no chunks)."""
    top = acc[best] if best >= 0 else 0.0
    if top <= 0.0 or how == "max":
        return max(top, 0.0)
    first, end = gen.chunk_range(gcid)
    scores = acc[first:end]  # chunks without a query term score 0.0
    if how == "max2":
        if len(scores) < 2:
            return top
        scores.remove(top)
        return top + MAX2_BONUS * max(scores)
    t = LSE_TEMPERATURE
    return top + t * math.log(sum(math.exp((s - top) / t) for s in scores if s > 0.0))


# --------------------------------------------------------------------------- top k


class _TopGroups:
    """The best score seen per group (and the member that has it), and the k-th best of
    those scores: what an unscored content must beat to matter."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.best: Dict[int, Ranked] = {}  # group → (score, member, best chunk)
        self.top: List[Tuple[float, int]] = []  # the k best (score, group), ascending
        self.in_top: Set[int] = set()

    def kth(self) -> float:
        """The k-th best group score so far (-inf while fewer than k groups were seen)."""
        return self.top[0][0] if len(self.top) >= self.k else -math.inf

    def offer(self, group: int, score: float, member: int, chunk: int) -> None:
        """A member's exact score. A group keeps its best member (ties: the smaller id)."""
        cur = self.best.get(group)
        if cur is not None:
            if score < cur[0] or (score == cur[0] and member > cur[1]):
                return
            self.best[group] = (score, member, chunk)
            if score == cur[0]:
                return  # only which member shows changed
            if group in self.in_top:
                del self.top[bisect_left(self.top, (cur[0], group))]
                insort(self.top, (score, group))
                return
        else:
            self.best[group] = (score, member, chunk)
        if len(self.top) < self.k:
            insort(self.top, (score, group))
            self.in_top.add(group)
        elif score > self.top[0][0]:
            self.in_top.discard(self.top.pop(0)[1])
            insort(self.top, (score, group))
            self.in_top.add(group)

    def ranked(self) -> List[Ranked]:
        """The top k groups' best members, best first (ties: the smaller member id)."""
        return sorted(self.best.values(), key=lambda x: (-x[0], x[1]))[: self.k]


def _bound(how: str, max_chunks: int) -> Callable[[float, int], float]:
    """``bound(s, n)``: the most a content with ``n`` chunks, none above ``s``, can score
    from its chunks."""
    if how == "max2":
        return lambda s, n: s + MAX2_BONUS * s if n > 1 else s
    if how == "lse":
        t = LSE_TEMPERATURE
        slack = [0.0] + [t * math.log(n) for n in range(1, max(max_chunks, 1) + 1)]
        last = len(slack) - 1
        return lambda s, n: s + (slack[n] if n <= last else t * math.log(n))
    return lambda s, n: s


def _up(x: float) -> float:
    """``x`` raised past the float error of the sums it bounds."""
    return x + abs(x) * _EPS + 1e-12


def _floor(how: str, target: float, n: int) -> float:
    """The least best-chunk score ``s`` with ``bound(s, n) >= target`` (a little less)."""
    if how == "lse" and n > 1:
        target -= LSE_TEMPERATURE * math.log(n)
    elif how == "max2" and n > 1:
        target /= 1.0 + MAX2_BONUS
    return target - abs(target) * _EPS - 1e-12


def _slice_part(vals: List[float], how: str) -> Tuple[float, int]:
    """`content_score` of a content whose chunks (in order, 0.0 without a query term)
    score ``vals``, with at least one above 0, and the index of its best chunk (the
    first best): the same operations in the same order, so the same float."""
    top = max(vals)
    best = vals.index(top)
    if how == "max":
        return top, best
    if how == "max2":
        if len(vals) < 2:
            return top, best
        rest = list(vals)
        rest.remove(top)
        return top + MAX2_BONUS * max(rest), best
    t = LSE_TEMPERATURE
    return top + t * math.log(sum(math.exp((s - top) / t) for s in vals if s > 0.0)), best


def content_scored(
    vals: List[float], field: Optional[float], first: int, end: int, how: str
) -> Optional[Tuple[float, int]]:
    """A content's exact score and its best global chunk (-1: it has none), from its
    chunks' scores ``vals`` (in chunk order; ``first``, ``end``: its global chunk range)
    and its field score ``field`` (None: no field posting); None when no query term
    matched. Both top-k paths (`bounds`, `vectorized`) score through it: the same floats."""
    if vals and max(vals) > 0.0:
        part, best = _slice_part(vals, how)
        chunk = first + best
    elif field is not None:
        part, chunk = 0.0, (first if end > first else -1)
    else:
        return None
    return part + (field if field is not None else 0.0), chunk
