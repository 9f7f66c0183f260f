"""Ranking one query: every chunk's exact BM25 score and every entry field's
(`accumulate`), then the top k near-duplicate groups by the best score of their members
(`aggregate`), without scoring every content.

A content (distinct file) scores ``aggregate(its chunks' scores) + field``: the chunk
aggregate (`content_score`) plus ``field_weight`` × BM25 of its entry's "name.
description" (one field document per live content, with its own N, avgdl and df). A
group scores its best member's score; the member shown is that one.
"""

from __future__ import annotations

import math
import zlib
from bisect import bisect_left, insort
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import DEAD, damaged

MAX2_BONUS = 0.25  # max2: best chunk + MAX2_BONUS × second-best chunk
LSE_TEMPERATURE = 2.0  # lse: T · ln Σ exp(score / T), a soft maximum (T: docs/benchmarks.md)

Ranked = Tuple[float, int, int]  # (score, global content id, its best global chunk or -1)


class ChunkScores:
    """One query's scores: chunks per segment by local chunk id and in one global list,
    and the entry-field score of every content that has one (global content id → score,
    already times the field weight).

    Accumulating by local ids skips adding each segment's base to every posting (costs:
    docs/index-format.md); only the chunks that make the cut get global ids.
    """

    def __init__(
        self, segs: List[Tuple[int, List[float], List[List[int]]]], field: Dict[int, float]
    ) -> None:
        self.segs = segs  # (chunk base, scores by local chunk id, the postings' id lists)
        self.acc: List[float] = []  # by global chunk id
        for _, scores, _ in segs:
            self.acc.extend(scores)
        self.postings = sum(len(ids) for _, _, lists in segs for ids in lists)
        self.field = field


def accumulate(
    gen: Generation,
    weights: Mapping[str, float],
    k1: float,
    b: float,
    field: Tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> Optional[ChunkScores]:
    """Every chunk's BM25 score for the query terms (term → weight, e.g.
    `tokenize.query_weights`: a weight multiplies the term's idf), and with ``field`` =
    (weight, k1, b) every entry field's; None when no term is known."""
    # Phase 1: each term's postings in every segment (one dictionary row gives the chunk
    # and the entry-field postings), and its exact df over live chunks.
    found: List[Tuple[float, List[Tuple[int, List[int], bytes]]]] = []
    field_parts: List[Tuple[float, List[Tuple[int, List[int], bytes]]]] = []
    for term, weight in weights.items():
        if weight <= 0.0:
            continue
        tb = term.encode("utf-8")
        crc = zlib.crc32(tb)
        parts: List[Tuple[int, List[int], bytes]] = []
        fparts: List[Tuple[int, List[int], bytes]] = []
        df = 0
        for s, seg in enumerate(gen.segments):
            got, fgot = seg.lookup(tb, crc)
            if fgot is not None:
                fparts.append((s, fgot[0].tolist(), fgot[1]))
            if got is None:
                continue
            ids = got[0].tolist()
            if ids and ids[-1] >= gen.seg_chunks[s]:
                raise damaged(f"{seg.c.path.name}: postings out of bounds")
            if gen.has_dead[s]:
                live = gen.seg_live[s]
                df += sum([live[c] for c in ids])
            else:
                df += len(ids)
            parts.append((s, ids, got[1]))
        if df:
            found.append((bm25.idf(df, gen.n) * weight, parts))
        if fparts:
            field_parts.append((weight, fparts))
    scores = _field_scores(gen, field_parts, *field) if field[0] > 0.0 else {}
    if not found and not scores:
        return None
    # Phase 2: add up idf × tf-part, tf-parts looked up in the chunk's length row. Plain
    # subscripts in a loop are the fastest form on CPython (docs/index-format.md).
    rowrefs = gen.rowrefs(k1, b)
    accs = [[0.0] * n for n in gen.seg_chunks]
    lists: List[List[List[int]]] = [[] for _ in gen.seg_chunks]
    for weight, parts in found:
        for s, ids, tfs in parts:
            acc = accs[s]
            rows = rowrefs[s]
            lists[s].append(ids)
            for c, tf in zip(ids, tfs):
                acc[c] += rows[c][tf] * weight
    return ChunkScores(list(zip(gen.chunk_base, accs, lists)), scores)


def _field_scores(
    gen: Generation,
    terms: List[Tuple[float, List[Tuple[int, List[int], bytes]]]],
    alpha: float,
    k1: float,
    b: float,
) -> Dict[int, float]:
    """Global content id → alpha × BM25 of its entry field, over live contents; ``terms``
    are (weight, per segment its local content ids and tfs)."""
    out: Dict[int, float] = {}
    if not gen.field_n:
        return out
    live = gen.live
    rows = gen.field_rows(k1, b)
    n_contents = len(live)
    for weight, parts in terms:
        gparts: List[Tuple[List[int], bytes]] = []
        df = 0
        for s, local, tfs in parts:
            base = gen.content_base[s]
            ids = [base + j for j in local]
            if ids and ids[-1] >= n_contents:
                raise damaged(f"{gen.segments[s].c.path.name}: postings out of bounds")
            df += sum([live[g] for g in ids])
            gparts.append((ids, tfs))
        if not df:
            continue
        w = alpha * weight * bm25.idf(df, gen.field_n)
        get = out.get
        for ids, tfs in gparts:
            for g, tf in zip(ids, tfs):
                if live[g]:
                    out[g] = get(g, 0.0) + rows[g][tf] * w
    return out


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


def aggregate(
    gen: Generation,
    scores: ChunkScores,
    k: int,
    how: str,
    accept: Optional[Callable[[int], bool]] = None,
    group: Optional[Sequence[int]] = None,
) -> List[Ranked]:
    """The top ``k`` groups as (score, shown content, its best chunk), best first: a group
    (``group``: content → group id; None: every content alone) scores its best accepted
    member's score.

    Exactly the ranking that scoring every touched content would give, but only contents
    that could still enter the top k are scored. Chunks scoring at least a cut-off are
    looked at first (the cut-off is estimated from a sample of the scores; the filtering
    is C-level). A content with such a chunk scores at most ``bound(its best chunk, its
    chunk count) + field``; one without scores at most ``bound(cut, chunk count) + field``
    (a content no chunk of which matched: exactly its field score). Contents are scored in
    descending bound until the k-th best group score so far beats the next bound; the cut
    is lowered until that k-th score beats ``bound(cut, max chunks)`` too (or no chunk is
    left out), and then the contents below the cut with a field score are taken the same
    way, in descending field score.
    """
    acc = scores.acc
    field = scores.field
    fget = field.get
    first_chunk = gen.content_first
    bound = _bound(how, gen.params.max_chunks)
    score_of = acc.__getitem__
    want = 32 * k  # postings to look at first: chunks repeat, contents too, filters reject
    step = max(1, scores.postings // 2048)
    sample = sorted(
        [a[c] for _, a, lists in scores.segs for ids in lists for c in ids[::step]],
        reverse=True,
    )
    depth = want // step + 1
    max_chunks = gen.params.max_chunks

    def take(state: _TopGroups, j: int, chunk: int) -> None:
        if accept is not None and not accept(j):
            return
        score = content_score(gen, acc, j, chunk, how) + fget(j, 0.0)
        state.offer(group[j] if group is not None else j, score, j, chunk)

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
        contents = list(map(gen.chunk_content.__getitem__, top))
        best = dict(zip(reversed(contents), reversed(top)))  # content -> its best chunk
        best.pop(DEAD, None)
        state = _TopGroups(k)

        # Contents with a chunk above the cut, in descending upper bound (negated: a plain
        # tuple sort, no key function).
        bounds = [
            (-(bound(acc[c], first_chunk[j + 1] - first_chunk[j]) + fget(j, 0.0)), j)
            for j, c in best.items()
        ]
        bounds.sort()
        for negative, j in bounds:
            if state.kth() > -negative:
                break
            take(state, j, best[j])
        # A content left out scores at most `ceiling` from its chunks (0.0 when no chunk
        # of it matched): while the k-th best does not beat that, look deeper first.
        ceiling = bound(cut, max_chunks) if cut != -math.inf else 0.0
        if cut != -math.inf and not state.kth() > ceiling:
            depth *= 4
            continue
        # Contents whose chunks are all below the cut: only a field score can lift them.
        if field:
            kth = state.kth()
            lifted = [(-f, j) for j, f in field.items() if ceiling + f >= kth and j not in best]
            lifted.sort()
            for negative, j in lifted:
                f = -negative
                if state.kth() > ceiling + f:
                    break  # by descending field score: no later one can reach the k-th
                start, end = first_chunk[j], first_chunk[j + 1]
                if cut != -math.inf and state.kth() > bound(cut, end - start) + f:
                    continue
                chunk = max(range(start, end), key=score_of, default=-1)
                take(state, j, chunk)
        return state.ranked()


def _bound(how: str, max_chunks: int) -> Callable[[float, int], float]:
    """``bound(s, n)``: the most a content with ``n`` chunks, none above ``s``, can score
    from its chunks (computed as `content_score` computes, so floats keep the order)."""
    if how == "max2":
        return lambda s, n: s + MAX2_BONUS * s if n > 1 else s
    if how == "lse":
        t = LSE_TEMPERATURE
        slack = [0.0] + [t * math.log(n) for n in range(1, max(max_chunks, 1) + 1)]
        last = len(slack) - 1
        return lambda s, n: s + (slack[n] if n <= last else t * math.log(n))
    return lambda s, n: s


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
