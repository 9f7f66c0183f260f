"""Ranking one query: the top k near-duplicate groups by the best score of their members
(`top_groups`), exact but without scoring every posting, and the exhaustive scores it is
tested against (`accumulate`).

A content (distinct file) scores ``aggregate(its chunks' scores) + field``: the chunk
aggregate (`content_score`) plus ``field_weight`` × BM25 of its entry's "name.
description" (one field document per live content, with its own N, avgdl and df). A
chunk scores Σ over the query terms, in query order, of ``idf × weight × tf-part``. A
group scores its best member's score; the member shown is that one.

`top_groups` is MaxScore, tier by tier, the tiers with the highest bounds first, with one
top k across them. A tier's lists (a term's chunk postings, or its field postings) are
taken in decreasing upper bound (`Tier.frontier`: the best tf-part of any block, times
the weight). Each is scored whole (term at a time, into an ``array('d')`` of the tier's
chunks) while a content none of whose postings was scored yet could still reach the k-th
best group score: ``bound(R, most chunks) + F`` (R, F: what the lists left could add).
After each such list the best few contents seen are scored exactly, to raise the k-th.
Then the contents with a scored posting, in decreasing bound ``bound(best chunk + R,
their chunks) + field so far + F``, are scored exactly until the k-th best beats the next
bound; in a tier scored sparse, a candidate is first bounded from its partial sums (every
chunk's plus what the skipped lists could add, aggregated as its score is: `_probe_bound`)
and left out unread when that cannot reach the k-th best. An exact score reads every query
term's postings of the content (a bisection in each list) and adds them in query order, and aggregates its chunks in chunk order: the
same floating-point operations as `accumulate`, so the scores are identical, not close.
"""

from __future__ import annotations

import heapq
import math
import zlib
from array import array
from bisect import bisect_left, insort
from itertools import compress
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import DEAD
from boost_cli.core.index.postings import Row

MAX2_BONUS = 0.25  # max2: best chunk + MAX2_BONUS × second-best chunk
LSE_TEMPERATURE = 2.0  # lse: T · ln Σ exp(score / T), a soft maximum (T: docs/benchmarks.md)
_EPS = 1e-9  # bounds are raised by this much (relative) over float error in the sums
_SEED = 4  # contents scored exactly up front, beyond k, to raise the k-th
# A tier whose lists hold fewer postings than this is scored whole: skipping lists saves
# less than looking postings up again for the contents they touch.
SKIP_MIN = 4096
_PROBE_COST = 2  # a bisection into a list, in postings scored whole

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


class _TierRanker:
    """MaxScore over one tier (see the module docstring), feeding the shared top k."""

    def __init__(
        self,
        gen: Generation,
        t: int,
        terms: List[QueryTerm],
        top: _TopGroups,
        how: str,
        accept: Optional[Callable[[int], bool]],
        group: Optional[Sequence[int]],
        chunk_params: Tuple[float, float],
        field_params: Tuple[float, float],
    ) -> None:
        self.gen, self.t, self.terms, self.top = gen, t, terms, top
        self.how, self.accept, self.group = how, accept, group
        self.tier = gen.tiers[t]
        self.cb, self.ob = gen.tier_chunk_base[t], gen.tier_content_base[t]
        self.max_n = gen.max_chunks(t)
        self.bound = _bound(how, self.max_n)
        self.chunk_params, self.field_params = chunk_params, field_params
        self.rows = gen.chunk_rows(t, *chunk_params)
        self.frows = gen.field_rows(t, *field_params) if any(q.wf for q in terms) else []
        self.chunk_lists: Dict[int, Tuple[array[int], bytes]] = {}  # read once a query
        self.field_lists: Dict[int, Tuple[array[int], bytes]] = {}
        self.evaluated: Set[int] = set()
        self._table: Optional[Tuple[List[Tuple[array[int], bytes, int, float]], ...]] = None
        self._partial: Tuple[array[float], Dict[int, float], float, float] = (
            array("d"),
            {},
            0.0,
            0.0,
        )
        # (upper bound, 0 chunk / 1 field, query term index)
        self.lists: List[Tuple[float, int, int]] = []
        for qi, q in enumerate(terms):
            row = q.rows[t]
            if row is None:
                continue
            if q.w and row.n:
                best = gen.list_bound(t, row, False, *chunk_params)
                self.lists.append((_up(best * q.w), 0, qi))
            if q.wf and row.fn:
                best = gen.list_bound(t, row, True, *field_params)
                self.lists.append((_up(best * q.wf), 1, qi))
        self.lists.sort(key=lambda x: (-x[0], x[1], x[2]))

    def potential(self) -> float:
        """The most any content of this tier can score."""
        r = sum(ub for ub, kind, _ in self.lists if kind == 0)
        f = sum(ub for ub, kind, _ in self.lists if kind == 1)
        return self._unseen(r, f)

    def _unseen(self, r: float, f: float) -> float:
        """The most a content none of whose postings was scored yet can score."""
        return _up((self.bound(r, self.max_n) if r > 0.0 else 0.0) + f)

    def _length(self, kind: int, qi: int) -> int:
        row = self.terms[qi].rows[self.t]
        assert row is not None
        return row.n if kind == 0 else row.fn

    def _row(self, qi: int) -> Row:
        row = self.terms[qi].rows[self.t]
        assert row is not None
        return row

    def _chunks(self, qi: int) -> Tuple[array[int], bytes]:
        got = self.chunk_lists.get(qi)
        if got is None:
            got = self.chunk_lists[qi] = self.gen.chunk_list(self.t, self._row(qi))
        return got

    def _fields(self, qi: int) -> Tuple[array[int], bytes]:
        got = self.field_lists.get(qi)
        if got is None:
            got = self.field_lists[qi] = self.gen.field_list(self.t, self._row(qi))
        return got

    def run(self) -> None:
        """Rank this tier's contents into the shared top k (module docstring)."""
        postings = sum(self._length(kind, qi) for _, kind, qi in self.lists)
        if postings >= SKIP_MIN and self._sparse_pays(postings):
            self._seed()  # a higher k-th best score: fewer essential lists
            skip = self._non_essential()
            self._sparse(
                [x for x in self.lists if (x[1], x[2]) not in skip],
                [x for x in self.lists if (x[1], x[2]) in skip],
            )
            return
        self._whole()

    def _sparse_pays(self, postings: int) -> bool:
        """Whether skipping the lists the k-th best score so far makes non-essential saves
        more than it costs: each posting of the essential lists may make a candidate whose
        exact score probes every list. Measured on the dev queries (docs/benchmarks.md,
        issue 21): MaxScore costs more than it saves whenever it skips less than this
        says, at 1x and at 10x — the `lse` slack keeps most lists essential and each
        candidate's probe bisects every list."""
        skip = self._non_essential()
        scored = sum(self._length(kind, qi) for _, kind, qi in self.lists if (kind, qi) not in skip)
        return bool(skip) and scored * (1 + _PROBE_COST * len(self.lists)) < postings

    def _accumulate(
        self, lists: Sequence[Tuple[float, int, int]]
    ) -> Tuple[array[float], Dict[int, float], List[array[int]]]:
        """Score ``lists`` whole, in the given order: chunk partial sums (an array over the
        tier's chunks), field partial sums (by tier-local content) and the lists' chunk ids."""
        terms, rows, frows = self.terms, self.rows, self.frows
        acc = array("d", bytes(8 * self.tier.chunks))
        facc: Dict[int, float] = {}
        get = facc.get
        scored: List[array[int]] = []
        for _, kind, qi in lists:
            if kind == 0:
                ids, tfs = self._chunks(qi)
                w = terms[qi].w
                for c, tf in zip(ids, tfs):
                    acc[c] += rows[c][tf] * w
                scored.append(ids)
            else:
                fids, ftfs = self._fields(qi)
                wf = terms[qi].wf
                for g, tf in zip(fids, ftfs):
                    facc[g] = get(g, 0.0) + frows[g][tf] * wf
        return acc, facc, scored

    def _whole(self) -> None:
        """Every list scored, in query order (chunk lists, then field lists: the two sums
        are apart), so the partial sums are the exact scores; then the contents by bound."""
        acc, facc, scored = self._accumulate(sorted(self.lists, key=lambda x: (x[1], x[2])))

        def exact(gcid: int) -> None:
            self.evaluated.add(gcid)
            if self.accept is None or self.accept(gcid):
                a, z = self._local_range(gcid)
                self._offer(gcid, acc[a:z].tolist(), facc.get(gcid - self.ob))

        self._candidates(acc, facc, scored, 0.0, 0.0, exact)

    def _sparse(
        self, essential: List[Tuple[float, int, int]], skipped: List[Tuple[float, int, int]]
    ) -> None:
        """MaxScore: the essential lists scored whole (partial sums: bounds only), then the
        contents they touch by bound, each scored exactly from its postings in every list."""
        acc, facc, scored = self._accumulate(essential)
        r = sum(ub for ub, kind, _ in skipped if kind == 0)
        f = sum(ub for ub, kind, _ in skipped if kind == 1)
        self._partial = (acc, facc, r, f)

        def probe(gcid: int) -> None:
            if self._probe_bound(gcid):
                self._exact(gcid)

        self._candidates(acc, facc, scored, r, f, probe)

    def _probe_bound(self, gcid: int) -> bool:
        """Whether content ``gcid`` must be scored exactly (sparse tiers): not when it
        fails the filters, or when its bound from the partial sums — each chunk's plus
        ``r``, aggregated as its score is, and its field's plus ``f`` — is below the k-th
        best or its group's best. Far tighter than ``bound(best chunk + r, n)``, whose
        ``T ln n`` counts every chunk as the best, and no list is read. A content left
        out is marked evaluated: the k-th best and a group's best only rise."""
        acc, facc, r, f = self._partial
        if self.accept is not None and not self.accept(gcid):
            self.evaluated.add(gcid)
            return False
        a, z = self._local_range(gcid)
        ub = facc.get(gcid - self.ob, 0.0) + f
        if z > a:
            vals = [x + r for x in acc[a:z]] if r else acc[a:z].tolist()
            if max(vals) > 0.0:
                ub += _slice_part(vals, self.how)[0]
        ub = _up(ub)
        top, group = self.top, self.group
        cur = top.best.get(group[gcid] if group is not None else gcid)
        if top.kth() > ub or (cur is not None and cur[0] > ub):
            self.evaluated.add(gcid)
            return False
        return True

    def _local_range(self, gcid: int) -> Tuple[int, int]:
        first = self.gen.content_first
        return first[gcid] - self.cb, first[gcid + 1] - self.cb

    def _non_essential(self) -> Set[Tuple[int, int]]:
        """Lists, lowest bounds first, that together cannot lift a content none of whose
        other postings was scored to the k-th best score."""
        kth = self.top.kth()
        out: Set[Tuple[int, int]] = set()
        r = f = 0.0
        for ub, kind, qi in reversed(self.lists):
            r2, f2 = (r + ub, f) if kind == 0 else (r, f + ub)
            if not kth > self._unseen(r2, f2):
                break
            out.add((kind, qi))
            r, f = r2, f2
        return out

    def _seed(self) -> None:
        """Score exactly the contents of the best few postings of the list with the highest
        bound, to start the k-th best score high."""
        ub, kind, qi = self.lists[0]
        want = self.top.k + _SEED
        gen, cc = self.gen, self.gen.chunk_content
        if kind == 0:
            ids, tfs = self._chunks(qi)
            step = max(1, len(ids) // 2048)
            rows = self.rows
            part = [(rows[c][tf], c) for c, tf in zip(ids[::step], tfs[::step])]
            contents = [cc[self.cb + c] for _, c in heapq.nlargest(want, part)]
        else:
            fids, ftfs = self._fields(qi)
            frows = self.frows
            part = [(frows[g][tf], g) for g, tf in zip(fids, ftfs)]
            contents = [self.ob + g for _, g in heapq.nlargest(want, part)]
        for gcid in dict.fromkeys(contents):
            if gcid != DEAD and gen.live[gcid] and gcid not in self.evaluated:
                self._exact(gcid)

    def _candidates(
        self,
        acc: array[float],
        facc: Dict[int, float],
        scored: List[array[int]],
        r: float,
        f: float,
        exact: Callable[[int], None],
    ) -> None:
        """The contents with a scored posting that could still enter, by falling bound
        ``bound(best chunk + r, its chunks) + field + f`` (r, f: what skipped lists could
        add), each scored by ``exact`` until the k-th best beats the next bound.

        Chunks scoring at least a cut-off are looked at first (estimated from a sample of
        the partial sums; the filtering is C-level); the cut-off is lowered until the k-th
        best beats what a content whose chunks are all below it can score from them. Then
        the contents below the cut-off that their field score could still lift.
        """
        top, gen, how = self.top, self.gen, self.how
        first, ob, bound, fget = gen.content_first, self.ob, self.bound, facc.get
        owner = gen.tier_chunk_content(self.t).__getitem__
        sample: List[float] = []
        step = depth = 1
        postings = sum(map(len, scored))
        if top.kth() == -math.inf:  # no k-th best yet to cut by: estimate a cut-off
            step = max(1, postings // 2048)
            sample = sorted([acc[c] for ids in scored for c in ids[::step]], reverse=True)
            depth = 32 * top.k // step + 1
        best: Dict[int, int] = {}
        while True:
            kth = top.kth()
            cut = sample[depth] if depth < len(sample) else -math.inf
            # Below this no chunk can lift its content past the k-th best: the last cut.
            last = _floor(how, kth - f, self.max_n) - r if kth > -math.inf else -math.inf
            cut = max(cut, last)
            if cut > 0.0 and postings > 2 * len(acc):  # one C-level pass over the sums
                chunks = list(compress(range(len(acc)), map(cut.__le__, acc)))
            else:  # only chunks with a scored posting have a sum above 0
                chunks = list(dict.fromkeys([c for ids in scored for c in ids if acc[c] >= cut]))
            chunks.sort(key=acc.__getitem__, reverse=True)
            best = dict(zip(reversed(list(map(owner, chunks))), reversed(chunks)))
            best.pop(DEAD, None)
            bounds = [
                (-_up(bound(acc[c] + r, first[j + 1] - first[j]) + fget(j - ob, 0.0) + f), j)
                for j, c in best.items()
                if j not in self.evaluated
            ]
            bounds.sort()
            self._evaluate(bounds, exact)
            if cut <= last or top.kth() > _up(bound(cut + r, self.max_n) + f):
                break
            depth *= 4
        # Contents with a field score and no chunk at the cut-off or above.
        live = gen.live
        kth = top.kth()
        lifted = []
        for g, fs in facc.items():
            j = ob + g
            if j in best or j in self.evaluated or not live[j]:
                continue
            n = first[j + 1] - first[j]
            if cut > -math.inf:
                chunk = bound(cut + r, n)  # its chunks are all below the cut
            else:
                chunk = bound(r, n) if r > 0.0 and n else 0.0
            ub = _up(chunk + fs + f)
            if not kth > ub:
                lifted.append((-ub, j))
        lifted.sort()
        self._evaluate(lifted, exact)

    def _evaluate(self, bounds: List[Tuple[float, int]], exact: Callable[[int], None]) -> None:
        """Score the contents of ``bounds`` ((-bound, content), by falling bound) with
        ``exact`` until the k-th best beats the next bound."""
        top, group = self.top, self.group
        for negative, gcid in bounds:
            ub = -negative
            if top.kth() > ub:
                break
            if gcid in self.evaluated:
                continue
            cur = top.best.get(group[gcid] if group is not None else gcid)
            if cur is not None and cur[0] > ub:
                continue  # its group already has a better member
            exact(gcid)

    def _offer(self, gcid: int, vals: List[float], field: Optional[float]) -> None:
        """Offer content ``gcid`` whose chunks score ``vals`` (in chunk order) and whose
        field scores ``field`` (None: no field posting) to the top k."""
        first, end = self.gen.content_first[gcid], self.gen.content_first[gcid + 1]
        if vals and max(vals) > 0.0:
            part, best = _slice_part(vals, self.how)
            chunk = first + best
        elif field is not None:
            part, chunk = 0.0, (first if end > first else -1)
        else:
            return  # no query term: not a match
        score = part + (field if field is not None else 0.0)
        group = self.group
        self.top.offer(group[gcid] if group is not None else gcid, score, gcid, chunk)

    def _exact(self, gcid: int) -> None:
        """Score content ``gcid`` exactly from its postings alone and offer it: one
        bisection into each list, its postings added in query order (as `accumulate`:
        the chunk sums and the field sum are apart, each in query order)."""
        self.evaluated.add(gcid)
        if self.accept is not None and not self.accept(gcid):
            return
        if self._table is None:
            self._table = self._probe_lists()
        chunk_lists, field_lists = self._table
        a, z = self._local_range(gcid)
        g = gcid - self.ob
        rows, frows = self.rows, self.frows
        vals = [0.0] * (z - a)
        for ids, tfs, n, w in chunk_lists:
            i = bisect_left(ids, a)
            if i < n and ids[i] < z:
                j = bisect_left(ids, z, i)
                for c, tf in zip(ids[i:j], tfs[i:j]):
                    vals[c - a] += rows[c][tf] * w
        field: Optional[float] = None
        for fids, ftfs, n, wf in field_lists:
            j = bisect_left(fids, g)
            if j < n and fids[j] == g:
                field = (field or 0.0) + frows[g][ftfs[j]] * wf
        self._offer(gcid, vals, field)

    def _probe_lists(self) -> Tuple[List[Tuple[array[int], bytes, int, float]], ...]:
        """Every chunk list and every field list of this tier, in query order, with its
        length and weight: what `_exact` bisects (read once per query and tier)."""
        chunk_lists, field_lists = [], []
        for qi, q in enumerate(self.terms):
            row = q.rows[self.t]
            if row is None:
                continue
            if q.w and row.n:
                ids, tfs = self._chunks(qi)
                chunk_lists.append((ids, tfs, len(ids), q.w))
            if q.wf and row.fn:
                fids, ftfs = self._fields(qi)
                field_lists.append((fids, ftfs, len(fids), q.wf))
        return chunk_lists, field_lists


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
    """The top ``k`` groups as (score, shown content, its best chunk), best first: a group
    (``group``: content → group id; None: every content alone) scores its best accepted
    member's score. ``weights``: term → weight; ``chunk_params``: BM25's (k1, b);
    ``field``: (field weight, k1, b). Exactly the ranking scoring every content gives."""
    alpha, fk1, fb = field
    terms = query_terms(gen, weights, alpha)
    if not terms or k <= 0:
        return []
    top = _TopGroups(k)
    rankers = [
        _TierRanker(gen, t, terms, top, how, accept, group, chunk_params, (fk1, fb))
        for t in range(len(gen.tiers))
    ]
    rankers = [rk for rk in rankers if rk.lists]
    rankers.sort(key=lambda rk: -rk.potential())
    for rk in rankers:
        if top.kth() > rk.potential():
            break  # by falling potential: no later tier can enter either
        rk.run()
    return top.ranked()
