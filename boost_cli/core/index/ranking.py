"""Ranking one query: every chunk's exact BM25 score (`accumulate`), then the top k
contents by an aggregate of their chunks' scores (`aggregate`), without scoring every content.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections import Counter
from typing import Callable, List, Optional, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import DEAD, damaged

MAX2_BONUS = 0.25  # max2: best chunk + MAX2_BONUS × second-best chunk
LSE_TEMPERATURE = 2.0  # lse: T · ln Σ exp(score / T), a soft maximum (T: docs/benchmarks.md)


class ChunkScores:
    """One query's chunk scores: per segment by local chunk id, and one global list.

    Accumulating by local ids skips adding each segment's base to every posting (costs:
    docs/index-format.md); only the chunks that make the cut get global ids.
    """

    def __init__(self, segs: List[Tuple[int, List[float], List[List[int]]]]) -> None:
        self.segs = segs  # (chunk base, scores by local chunk id, the postings' id lists)
        self.acc: List[float] = []  # by global chunk id
        for _, scores, _ in segs:
            self.acc.extend(scores)
        self.postings = sum(len(ids) for _, _, lists in segs for ids in lists)


def accumulate(gen: Generation, qtf: Counter[str], k1: float, b: float) -> Optional[ChunkScores]:
    """Every chunk's BM25 score for the query terms ``qtf``; None when no term is known."""
    # Phase 1: each term's postings in every segment, and its exact df over live chunks.
    found: List[Tuple[float, List[Tuple[int, List[int], bytes]]]] = []
    for term, count in qtf.items():
        tb = term.encode("utf-8")
        crc = zlib.crc32(tb)
        parts: List[Tuple[int, List[int], bytes]] = []
        df = 0
        for s, seg in enumerate(gen.segments):
            got = seg.postings(tb, crc)
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
            found.append((bm25.idf(df, gen.n) * count, parts))
    if not found:
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
    return ChunkScores(list(zip(gen.chunk_base, accs, lists)))


def aggregate(
    gen: Generation,
    scores: ChunkScores,
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
        slack = LSE_TEMPERATURE * math.log(max(gen.params.max_chunks, 1))

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
        contents = list(map(gen.chunk_content.__getitem__, top))
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
            score = content_score(gen, acc, j, b, how)
            picked.append((score, j, b))
            if len(kth) < k:
                heapq.heappush(kth, score)
            elif score > kth[0]:
                heapq.heapreplace(kth, score)
        picked.sort(key=lambda x: (-x[0], x[1]))
        if cut == -math.inf or (len(picked) >= k and picked[k - 1][0] >= bound(cut)):
            return picked[:k]
        depth *= 4


def content_score(gen: Generation, acc: List[float], gcid: int, best: int, how: str) -> float:
    """A content's score from its chunks': max, max + bonus × second best, or soft max."""
    top = acc[best]
    if how == "max":
        return top
    first, end = gen.chunk_range(gcid)
    scores = acc[first:end]  # chunks without a query term score 0.0
    if how == "max2":
        if len(scores) < 2:
            return top
        scores.remove(top)
        return top + MAX2_BONUS * max(scores)
    t = LSE_TEMPERATURE
    return top + t * math.log(sum(math.exp((s - top) / t) for s in scores if s > 0.0))
