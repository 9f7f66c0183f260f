"""The top k from content bounds (format 4): exact, reading each query term's *content
postings* (one per content with the term in a chunk) instead of its chunk postings, and
the chunk postings only of the contents that can still enter.

A content's score is ``aggregate(chunk scores) + field`` (`ranking`). Per query term and
content the tier stores the highest tf and the shortest chunk with the term (and how many
of its chunks have it); BM25's tf-part grows with tf and falls with the length, so
``u = weight × idf × tf-part(highest tf, shortest chunk)`` is at least the term's part of
every chunk score of the content, for any k1, b and average length. Per tier:

1. **Bounds**, term at a time over the content postings (about a quarter of the chunk
   postings): ``S`` = Σ u (no chunk scores more), ``M`` = Σ u × chunks with the term (the
   chunk scores sum to no more), and the exact field score ``F`` (its postings are
   per content already), all in lists over the tier's contents. Once earlier tiers
   gave a k-th best, the terms of least reach (``umax``: the most their part of a chunk
   score can be in the tier, from its frontier) whose sum ``R`` cannot on its own lift a
   content to it, and stays under a share of it, are *skipped* (MaxScore at the content
   level): a content with none of the other terms and no field posting scores at most
   ``bound(R, most chunks)``, below the k-th best.
2. **Candidates** by falling bound: ``max``: S; ``max2``: S + ¼ S; ``lse``: the least of
   S + T ln n and T ln Z, where Z is the most Σ exp(chunk / T) can be for n chunks each at
   most S summing to at most M (⌊M / S⌋ chunks at S, one with the rest, the others near 0:
   a convex function is largest at a vertex), plus F. The contents looked at are those
   whose first bound (``S + R + T ln n + F`` for lse) is at or above a cut-off (one C-level
   pass over the tier's contents, or over only those its lists touch when they hold few
   postings for its size): first estimated from the tier's largest sums, then the last
   one, below which nothing can reach the k-th best. A tier read at a known k-th best
   computes its keys only for the contents whose ``S + F`` reaches what any key at the
   cut-off needs (`BoundRanker._reaching`: a few percent of them). A skipped term's real
   part of ``S`` and ``M`` replaces ``R`` (a bisection in its content postings) before
   the bound.
3. **Exact scores**, best bound first, until the k-th best group score is above the next
   bound: a content's chunk postings in each query term's list are a run of its chunk
   ids (two bisections), added in query order and aggregated in chunk order — the same
   floating-point operations as the exhaustive `ranking.accumulate`, so the scores are
   identical, not close.

Tiers go one at a time in falling potential (the bound of ``Σ umax`` plus the field
terms' most), sharing one top k: the first in rounds of cut-offs, the others in one, at
the k-th best so far; a tier whose potential is below it is not read. Property
tests: ``tests/test_index_pruning.py`` (against the exhaustive reference).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from itertools import chain, compress, repeat
from operator import add, mul
from typing import Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import damaged
from boost_cli.core.index.postings import Row
from boost_cli.core.index.ranking import (
    _EPS,
    LSE_TEMPERATURE,
    MAX2_BONUS,
    QueryTerm,
    Ranked,
    _bound,
    _floor,
    _TopGroups,
    _up,
    content_scored,
    query_terms,
)

_TINY = 5e-324  # the least positive float: a content with no posting sums to 0.0
_DEPTH = 4  # the first cut-off: about the (DEPTH × k)-th largest sum (then × 4)
_SAMPLE = 4096  # sums sorted to estimate it
# A tier bounds only the contents its lists touch when they hold fewer postings than its
# contents / this (the full-size pass over its contents costs more than the set).
_SPARSE = 2
# Skipped terms' most (R) stays under this share of the k-th best: every content with
# another term is first bounded with R, and a larger R lets so many through that their
# bisections cost more than the skipped postings (measured at 10x: 0.1-0.35 alike).
_REST = 0.2


class _Term:
    """One query term's chunk list in a tier: its row and chunk weight; its chunk postings
    (ids ascending, tfs) are read when a content's exact score first needs them (a
    content's chunks are a range of ids, so its run is found by bisection)."""

    __slots__ = ("row", "w")

    def __init__(self, row: Row, w: float) -> None:
        self.row, self.w = row, w


class BoundRanker:
    """The top k of one tier from its content bounds (module docstring), into the shared
    top k."""

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
        self.chunk_params, self.field_params = chunk_params, field_params
        self.max_n = gen.max_chunks(t)
        self.bound = _bound(how, self.max_n)
        # the query terms (indexes, in query order) with chunk / field postings in this tier
        rows = [q.rows[t] for q in terms]
        self.chunk_terms = [i for i, r in enumerate(rows) if r and r.n and terms[i].w]
        self.field_terms = [i for i, r in enumerate(rows) if r and r.fn and terms[i].wf]

    @property
    def has_lists(self) -> bool:
        return bool(self.chunk_terms or self.field_terms)

    def read(self) -> None:
        """Phase 0: each query term's content postings, and the most its part of a chunk
        score can be in this tier (from its frontier); the tier's potential (the bound
        of a content whose chunks score every term's most, plus every field term's most:
        no content of the tier scores more)."""
        gen, t, tier, terms = self.gen, self.t, self.tier, self.terms
        k1, b = self.chunk_params
        self.posts: List[Tuple[array[int], array[int], array[int]]] = []
        self.umax: List[float] = []
        for qi in self.chunk_terms:
            row = terms[qi].rows[t]
            assert row is not None
            self.posts.append(tier.content_postings(row))
            self.umax.append(gen.term_max(t, row, k1, b) * terms[qi].w)
        self.potential = self.bound(sum(self.umax), self.max_n) if self.umax else 0.0
        fk1, fb = self.field_params
        for qi in self.field_terms:
            row = terms[qi].rows[t]
            assert row is not None
            self.potential += gen.term_max(t, row, fk1, fb, field=True) * terms[qi].wf

    def accumulate(self, theta: float = -math.inf) -> None:
        """Phase 1: every content's ``S``, ``M`` (lse) and exact field score ``F``, term at
        a time over the content postings (lists of floats: faster than arrays here), and
        the first bound (``keys``) of the contents looked at (``cand``): all of the tier's,
        or, when its lists hold few postings for its size (a short query), only the
        contents they touch (the others have no query term: not a match).

        With a k-th best ``theta`` known (from earlier tiers), the terms of least ``umax``
        whose sum ``R`` cannot lift a content to ``theta`` on their own are *skipped*
        (MaxScore at the content level): their postings are not accumulated; the contents
        looked at are those of the other lists and the field lists, each first bounded with
        ``R`` for the skipped terms, then (`pick`) with their real codes, by bisection."""
        gen, t, tier, terms = self.gen, self.t, self.tier, self.terms
        n_contents = tier.contents
        self.lazy = False
        table = gen.code_table(*self.chunk_params)
        lse = self.how == "lse"
        s_acc = [0.0] * n_contents
        m_acc = [0.0] * n_contents if lse else s_acc
        f_acc = [0.0] * n_contents
        skip = self._skipped(theta)
        postings = sum(len(p[0]) for x, p in enumerate(self.posts) if x not in skip)
        for qi in self.field_terms:
            postings += terms[qi].rows[t].fn  # type: ignore[union-attr]
        sparse = postings * _SPARSE < n_contents
        touched: Optional[Set[int]] = set() if sparse else None
        lists: List[_Term] = []
        self.skipped: List[Tuple[array[int], array[int], array[int], float, float, int]] = []
        for x, qi in enumerate(self.chunk_terms):
            row = terms[qi].rows[t]
            assert row is not None
            ids, codes, cnt = self.posts[x]
            w = terms[qi].w
            lists.append(_Term(row, w))
            if x in skip:
                self.skipped.append((ids, codes, cnt, w, self.umax[x], len(ids)))
                continue
            try:
                if lse:
                    for g, c, n in zip(ids, codes, cnt):
                        u = table[c] * w
                        s_acc[g] += u
                        m_acc[g] += u * n
                else:
                    for g, c in zip(ids, codes):
                        s_acc[g] += table[c] * w
            except IndexError as exc:  # a code past the grid, a content past the tier
                raise damaged(f"{tier.c.path.name}: postings out of bounds") from exc
            if touched is not None:
                touched.update(ids)
        self.rest = sum(self.umax[x] for x in sorted(skip))
        # most reach first, each with the sum of the most the ones after it can add
        self.skipped.sort(key=lambda p: -p[4])
        tail = 0.0
        for x in range(len(self.skipped) - 1, -1, -1):
            ids, codes, cnt, w, u, size = self.skipped[x]
            self.skipped[x] = (ids, codes, cnt, w, tail, size)
            tail += u
        if self.field_terms:
            # Through the field length (not a tf-part row per content, `field_rows`): a
            # query's field postings are far fewer than the contents (18 k of 90 k for a
            # 20-word task at 10x), and those rows cost a cold search one pass over all.
            by_len = gen.field_length_rows(*self.field_params)
            fdl = gen.tier_field_lengths(t)
            for qi in self.field_terms:
                row = terms[qi].rows[t]
                assert row is not None
                fids, ftfs = gen.field_list(t, row)
                wf = terms[qi].wf
                for g, tf in zip(fids, ftfs):
                    f_acc[g] += by_len[fdl[g]][tf] * wf
                if touched is not None:
                    touched.update(fids)
        self._lists = lists
        self._opened: List[Tuple[Sequence[int], bytes, float, int]] = []
        self._dl = gen.tier_lengths(t)
        self.s_acc, self.m_acc, self.f_acc = s_acc, m_acc, f_acc
        self.done = bytearray(n_contents)
        if touched is not None:
            cand = sorted(touched)
            self.cand: Sequence[int] = cand
            r = self.rest
            self.keys: Iterable[float]
            if self.how == "max":
                self.keys = [s_acc[g] + r + f_acc[g] for g in cand]
            elif self.how == "lse":
                slack, counts = self._per_count("slack"), gen.chunk_counts(t)
                self.keys = [s_acc[g] + r + f_acc[g] + slack[counts[g]] for g in cand]
            else:
                factor, counts = self._per_count("factor"), gen.chunk_counts(t)
                self.keys = [(s_acc[g] + r) * factor[counts[g]] + f_acc[g] for g in cand]
            return
        self.cand = range(n_contents)
        if theta > -math.inf:
            # One round at a known k-th best (`_candidates`): the keys are not made for
            # every content; `pick` finds those that reach the cut (`_reaching`).
            self.keys, self.lazy = (), True
            return
        # Kept: rounds of cut-offs may follow (no k-th best yet: the first tier).
        self.keys = list(self._all_keys())

    def _all_keys(self) -> Iterable[float]:
        """Every content's first key, C-level passes over the tier's lists."""
        s_acc, n_contents = self.s_acc, len(self.s_acc)
        s_r: Iterable[float] = s_acc
        if self.rest:  # S + R: the keys bound the skipped terms with R
            s_r = map(add, s_acc, repeat(self.rest, n_contents))
        if self.how == "max2":  # 1.25 S + F
            keys: Iterable[float] = map(mul, s_r, self._static("factor"))
        else:
            keys = s_r
        if self.field_terms:
            keys = map(add, keys, self.f_acc)
        if self.how == "lse":  # S + F + T ln n (also over a field-only content's F)
            keys = map(add, keys, self._static("slack"))
        return keys

    def _reaching(self, cut: float) -> Iterator[int]:
        """The contents (ascending) whose first key reaches ``cut``: the key of
        `accumulate`'s full pass (``S + R + F + T ln n`` for lse, ``(S + R) × factor + F``
        for max2, ``S + R + F`` for max), computed with the same operations in the same
        order, but only for the contents whose ``S + F`` reaches what any key at ``cut``
        needs (the largest slack or factor, lowered past rounding): the few percent of
        the tier a later tier's k-th best leaves, not one key per content."""
        s_acc, f_acc, r, how = self.s_acc, self.f_acc, self.rest, self.how
        counts = self.gen.chunk_counts(self.t)
        slack = factor = None
        if how == "lse":
            slack = self._per_count("slack")
            most = LSE_TEMPERATURE * math.log(self.max_n) if self.max_n > 1 else 0.0
            need = cut - r - most
        elif how == "max2":
            factor = self._per_count("factor")
            need = cut / (1.0 + MAX2_BONUS) - r
        else:
            need = cut - r
        need = _down(need)
        if not need > 0.0:  # every content would pass the test: the C-level keys, then
            yield from compress(range(len(s_acc)), map(cut.__le__, self._all_keys()))
            return
        field = bool(self.field_terms)
        sums: Iterable[float] = map(add, s_acc, f_acc) if field else s_acc
        for g in compress(range(len(s_acc)), map(need.__le__, sums)):
            key = s_acc[g]
            if r:
                key = key + r
            if factor is not None:
                key = key * factor[counts[g]]
            if field:
                key = key + f_acc[g]
            if slack is not None:
                key = key + slack[counts[g]]
            if cut <= key:
                yield g

    def release(self) -> None:
        """Drop the tier's per-content lists once its candidates are scored: the next tier
        then reuses their memory (a cold process would otherwise take fresh pages for
        every tier's, ~29 tiers of floats at 10x)."""
        self.s_acc = self.m_acc = self.f_acc = []
        self.keys, self.cand, self.posts = [], [], []
        self._opened, self.skipped = [], []

    def _skipped(self, theta: float) -> Set[int]:
        """The chunk terms (indexes into ``chunk_terms``) of least ``umax`` whose sum ``R``
        bounds no content of the tier to ``theta``: a content with none of the other terms
        and no field posting scores at most ``bound(R, max_n)``, below the k-th best."""
        skip: Set[int] = set()
        if not theta > -math.inf or len(self.umax) < 2:
            return skip
        r = 0.0
        for u, x in sorted(zip(self.umax, range(len(self.umax)))):
            if not theta > _up(self.bound(r + u, self.max_n)) or r + u > _REST * theta:
                break
            r += u
            skip.add(x)
        if len(skip) == len(self.umax):  # keep one list: the contents come from it
            skip.discard(max(skip, key=self.umax.__getitem__))
        return skip

    def _per_count(self, what: str) -> List[float]:
        """By chunk count (0 to the tier's most), what it adds to the bound from ``S``:
        ``T ln n`` (lse) or the factor (max2)."""
        key = ("bounds", what, "per count", self.t)
        got = self.gen.memo.get(key)
        if got is None:
            top = self.max_n + 1
            if what == "slack":
                t = LSE_TEMPERATURE
                got = [t * math.log(n) if n > 1 else 0.0 for n in range(top)]
            else:
                got = [1.0 + MAX2_BONUS if n > 1 else 1.0 for n in range(top)]
            self.gen.memo[key] = got
        return got

    def _static(self, what: str) -> List[float]:
        """Per content of the tier, what its chunk count adds to the bound from ``S``
        (`_per_count`), for the C-level pass over every content's key; kept by the
        generation. The other paths look a content's count up (`_reaching`)."""
        key = ("bounds", what, self.t)
        got = self.gen.memo.get(key)
        if got is None:
            per_n = self._per_count(what)
            got = list(map(per_n.__getitem__, self.gen.chunk_counts(self.t)))
            self.gen.memo[key] = got
        return got

    def pick(self, cut: float, kth: float, out: List[Tuple[float, int, int]], r: int) -> None:
        """Add to ``out`` (-bound, tier ranker ``r``, content) each content not looked at
        yet whose first bound (``keys``) is at least ``cut`` and whose bound is not below
        ``kth``."""
        gen, ob, done = self.gen, self.ob, self.done
        first, live = gen.content_first, gen.live
        s_acc, m_acc, f_acc = self.s_acc, self.m_acc, self.f_acc
        skipped = self.skipped
        table = self.gen.code_table(*self.chunk_params) if skipped else []
        reaching = (
            self._reaching(cut) if self.lazy else compress(self.cand, map(cut.__le__, self.keys))
        )
        for g in reaching:
            if done[g]:
                continue
            done[g] = 1
            j = ob + g
            if not live[j]:
                continue
            s, m, f, n = s_acc[g], m_acc[g], f_acc[g], first[j + 1] - first[j]
            if skipped:  # the skipped terms' real parts, the most reach first
                floor = _floor(self.how, kth - f, n)
                for ids, codes, cnt, w, tail, size in skipped:
                    i = bisect_left(ids, g)
                    if i < size and ids[i] == g:
                        u = table[codes[i]] * w
                        s += u
                        m += u * cnt[i]
                    hi = s + tail  # >= 0: raised as `_up` raises it
                    if floor > hi + hi * _EPS + 1e-12:
                        break  # even the rest at their most cannot reach the k-th best
                else:
                    tail = 0.0
                if tail:
                    continue
            ub = self._bound_of(s, m, f, n)
            if not kth > ub:
                out.append((-ub, r, j))

    def _bound_of(self, s: float, mass: float, f: float, n: int) -> float:
        """The most a content of ``n`` chunks can score whose chunks score at most ``s``
        each and ``mass`` together (lse), and whose field scores ``f``."""
        if not s > 0.0:
            return _up(f)
        ub = self.bound(s, n)
        if self.how == "lse" and n > 1:
            full = min(int(mass / s), n)
            if full < n:
                t = LSE_TEMPERATURE
                rest = mass - full * s
                z = full + math.exp((rest - s) / t) + (n - full - 1) * math.exp(-s / t)
                ub = min(ub, s + t * math.log(z))
        return _up(ub + f)

    def _exact(self, gcid: int, field: float) -> None:
        """Score content ``gcid`` exactly from its chunk postings and offer it: each query
        term's run of its chunk postings added in query order (as `ranking.accumulate`),
        its chunks aggregated in chunk order (`ranking.content_scored`), so the same float."""
        gen, cb = self.gen, self.cb
        a = gen.content_first[gcid] - cb
        z = gen.content_first[gcid + 1] - cb
        lengths, dls = gen.length_rows(*self.chunk_params), self._dl
        span = z - a
        vals = [0.0] * span
        if not self._opened:
            self._opened = []
            for term in self._lists:
                got, tfs = gen.chunk_list(self.t, term.row)
                self._opened.append((got, tfs, term.w, len(got)))
        for cids, tfs, w, n in self._opened:
            lo = bisect_left(cids, a)
            if lo < n and cids[lo] < z:  # its run: at most one posting per chunk
                for x in range(lo, bisect_left(cids, z, lo, min(n, lo + span))):
                    c = cids[x]
                    vals[c - a] += lengths[dls[c]][tfs[x]] * w
        self._offer(gcid, vals, field if field > 0.0 else None)

    def _offer(self, gcid: int, vals: List[float], field: Optional[float]) -> None:
        """Offer content ``gcid`` whose chunks score ``vals`` (in chunk order) and whose
        field scores ``field`` (None: no field posting) to the top k."""
        first, end = self.gen.content_first[gcid], self.gen.content_first[gcid + 1]
        scored = content_scored(vals, field, first, end, self.how)
        if scored is None:
            return  # no query term: not a match
        score, chunk = scored
        group = self.group
        self.top.offer(group[gcid] if group is not None else gcid, score, gcid, chunk)


def _down(x: float) -> float:
    """``x`` lowered past the float error of a bound computed another way."""
    return x - abs(x) * 2 * _EPS - 2e-12


def _candidates(rankers: List[BoundRanker], top: _TopGroups) -> None:
    """Contents of every tier by falling bound, scored exactly until the k-th best beats
    the next bound. The contents looked at are those whose first bound (``S + T ln n + F``
    for lse) reaches a cut-off: while no k-th best is known, one estimated from a sample
    of those bounds (the 4k-th largest, then ×4), then the k-th best itself."""
    sample: List[float] = []
    step = 1
    if top.kth() == -math.inf:
        lists = [rk.keys for rk in rankers if isinstance(rk.keys, list)]
        assert len(lists) == len(rankers)  # no k-th best: the keys were kept (`accumulate`)
        total = sum(map(len, lists))
        step = max(1, total // _SAMPLE)
        sample = sorted(chain.from_iterable(keys[::step] for keys in lists), reverse=True)
    depth = _DEPTH * top.k
    while True:
        kth = top.kth()
        final = kth > -math.inf or depth // step >= len(sample)
        cut = max(_down(kth) if final else sample[depth // step], _TINY)
        bounds: List[Tuple[float, int, int]] = []
        for r, rk in enumerate(rankers):
            rk.pick(cut, kth, bounds, r)
        bounds.sort()
        for negative, r, j in bounds:
            ub = -negative
            if top.kth() > ub:
                break
            rk = rankers[r]
            cur = top.best.get(rk.group[j] if rk.group is not None else j)
            if cur is not None and cur[0] > ub:
                continue  # its group already has a better member
            if rk.accept is None or rk.accept(j):
                rk._exact(j, rk.f_acc[j - rk.ob])
        if final or cut <= _TINY or top.kth() > _up(cut):
            break  # every content whose bound reaches the k-th best was looked at
        depth = max(4 * depth, 1)


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
    same contract and the same result as `ranking.top_groups`, from content bounds."""
    alpha, fk1, fb = field
    terms = query_terms(gen, weights, alpha)
    if not terms or k <= 0:
        return []
    top = _TopGroups(k)
    rankers = [
        BoundRanker(gen, t, terms, top, how, accept, group, chunk_params, (fk1, fb))
        for t in range(len(gen.tiers))
    ]
    rankers = [rk for rk in rankers if rk.has_lists]
    for rk in rankers:
        rk.read()
    # Tier at a time by falling potential, sharing one top k: each tier skips the terms
    # the k-th best of the earlier ones puts out of reach, and is read in one round of
    # cut-offs (faster than all tiers at once in falling bound, measured at 1x and 10x).
    rankers.sort(key=lambda rk: -rk.potential)
    for rk in rankers:
        if top.kth() > _up(rk.potential):
            break  # no content of this tier or the next can reach the k-th best
        rk.accumulate(top.kth())
        _candidates([rk], top)
        rk.release()
    return top.ranked()
