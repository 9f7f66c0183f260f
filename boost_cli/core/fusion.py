"""Fusing rankings from several engines (BM25 + dense) into one, as pure functions.

- `weighted_scores` (the default, method ``scores``) — each engine's scores rescaled
  (`normalise`: BM25 over its best score, the cosine over its best), then
  ``Σ_e w_e · norm_e(d)`` with w = 0.6 for BM25 and 0.4 for dense (an engine that did not
  return ``d`` adds 0).
- `rrf` — reciprocal-rank fusion: ``score(d) = Σ_e 1 / (k + rank_e(d))`` over the engines
  that returned ``d`` (ranks 1-based, ``k = 60`` as in Cormack et al. 2009). Uses ranks
  only, so it needs no score calibration.
- `weighted_minmax` — each engine's scores min-max normalised to [0, 1] over the results
  it returned, then weighted and summed like `weighted_scores`.
- `feedback_vector` — the dense half's second look (pseudo-relevance feedback, Rocchio
  in embedding space): the query vector moved towards the vector of the file the first
  fusion ranked best, ``q + β·d`` renormalised, with β = `FEEDBACK` (0.5); the hybrid
  engine then searches the vectors again with it and fuses once more.
- `collapse` — copies of one file (any key) merged into their best-ranked hit.
- `fuse` — the entry-level pipeline the hybrid engine runs: copies and near-duplicates
  become one candidate (`fusion_keys`), each engine's list is cut to ``depth``, fused, and
  merged back into hits that keep every engine's rank.

Every fusion breaks ties deterministically: higher score, then better (smaller) best rank,
then id. Why max-normalised scores, 0.6/0.4, 80 deep, is the default: docs/dense.md (the
fusion sweep: 0.651 nDCG@10 on the dev set where RRF gives 0.633).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.models import Hit

RRF_K = 60
DEFAULT_WEIGHTS: Mapping[str, float] = {"bm25": 0.6, "dense": 0.4}
METHODS = ("scores", "rrf", "minmax")
DEFAULT_METHOD = "scores"
# How `weighted_scores` rescales each engine's scores before weighing them.
NORMS = ("max", "minmax", "unit", "raw")
DEFAULT_NORMS: Mapping[str, str] = {"bm25": "max", "dense": "max"}
DEPTH = 80  # candidates each engine contributes (at least the k asked for)
# How far the hybrid's second dense search moves the query vector towards the vector of the
# first fusion's top file (`feedback_vector`); 0 turns the second search off. Measured:
# docs/dense.md ("Pseudo-relevance feedback"): 0.25-1.0 score alike, 0.5 is the middle.
FEEDBACK = 0.5


def _best_ranks(rankings: Mapping[str, Sequence[str]]) -> Dict[str, int]:
    best: Dict[str, int] = {}
    for ids in rankings.values():
        for rank, doc in enumerate(ids, start=1):
            if rank < best.get(doc, rank + 1):
                best[doc] = rank
    return best


def _order(scores: Mapping[str, float], best: Mapping[str, int]) -> List[Tuple[str, float]]:
    return sorted(scores.items(), key=lambda kv: (-kv[1], best.get(kv[0], 0), kv[0]))


def rrf(rankings: Mapping[str, Sequence[str]], k: int = RRF_K) -> List[Tuple[str, float]]:
    """Reciprocal-rank fusion of ``{engine: [id, ...] best first}`` → ``[(id, score)]``
    best first. An id repeated within one engine's list counts at its first rank."""
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, not {k}")
    parts: Dict[str, List[float]] = {}
    for ids in rankings.values():
        seen = set()
        for rank, doc in enumerate(ids, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            parts.setdefault(doc, []).append(1.0 / (k + rank))
    # fsum over sorted terms: the same total whatever order the engines came in.
    scores = {doc: math.fsum(sorted(terms)) for doc, terms in parts.items()}
    return _order(scores, _best_ranks(rankings))


def minmax(scores: Mapping[str, float]) -> Dict[str, float]:
    """Scores rescaled to [0, 1]; all equal (or a single one) → all 1.0."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {doc: 1.0 for doc in scores}
    return {doc: (s - lo) / (hi - lo) for doc, s in scores.items()}


def weighted_minmax(
    scores: Mapping[str, Mapping[str, float]], weights: Mapping[str, float]
) -> List[Tuple[str, float]]:
    """``{engine: {id: score}}`` → ``[(id, Σ w_e · minmax_e(score))]`` best first.
    An engine missing from ``weights`` gets weight 0."""
    total: Dict[str, List[float]] = {}
    best: Dict[str, int] = {}
    for engine, engine_scores in scores.items():
        w = weights.get(engine, 0.0)
        normalised = minmax(engine_scores)
        ranked = sorted(engine_scores, key=lambda d: (-engine_scores[d], d))
        for rank, doc in enumerate(ranked, start=1):
            total.setdefault(doc, []).append(w * normalised[doc])
            if rank < best.get(doc, rank + 1):
                best[doc] = rank
    return _order({doc: math.fsum(sorted(t)) for doc, t in total.items()}, best)


def normalise(scores: Mapping[str, float], norm: str) -> Dict[str, float]:
    """One engine's scores rescaled: ``max`` — s / the best s (BM25's scores are positive);
    ``minmax`` — `minmax`; ``unit`` — (s + 1) / 2, a cosine mapped to [0, 1]; ``raw`` — s."""
    if norm == "minmax":
        return minmax(scores)
    if norm == "unit":
        return {doc: (s + 1.0) / 2.0 for doc, s in scores.items()}
    if norm == "max":
        top = max(scores.values(), default=0.0)
        return {doc: s / top if top > 0 else 0.0 for doc, s in scores.items()}
    if norm == "raw":
        return dict(scores)
    raise ValueError(f"unknown normalisation {norm!r}")


def weighted_scores(
    scores: Mapping[str, Mapping[str, float]],
    weights: Mapping[str, float],
    norms: Mapping[str, str],
    floor: bool = False,
) -> List[Tuple[str, float]]:
    """``{engine: {id: score}}`` → ``[(id, Σ_e w_e · norm_e(score))]`` best first, each
    engine's scores rescaled by ``norms[engine]`` (`normalise`). An id an engine did not
    return adds 0 from it, or, with ``floor``, that engine's lowest normalised score (its
    true score is no higher)."""
    total: Dict[str, List[float]] = {}
    best: Dict[str, int] = {}
    normalised = {e: normalise(s, norms.get(e, "max")) for e, s in scores.items()}
    every = {doc for s in scores.values() for doc in s}
    for engine, engine_scores in scores.items():
        w = weights.get(engine, 0.0)
        norm = normalised[engine]
        low = min(norm.values(), default=0.0) if floor else 0.0
        ranked = sorted(engine_scores, key=lambda d: (-engine_scores[d], d))
        for rank, doc in enumerate(ranked, start=1):
            if rank < best.get(doc, rank + 1):
                best[doc] = rank
        for doc in every:
            total.setdefault(doc, []).append(w * norm.get(doc, low))
    return _order({doc: math.fsum(sorted(t)) for doc, t in total.items()}, best)


def feedback_vector(
    query: Sequence[float], found: Sequence[float], beta: float = FEEDBACK
) -> List[float]:
    """``query + beta · found``, scaled to unit length (the query as it was when that sum is
    zero): a query vector moved towards a document judged relevant (Rocchio), for vectors
    compared by their dot product."""
    if len(query) != len(found):
        raise ValueError(f"vectors of {len(query)} and {len(found)} dimensions")
    moved = [q + beta * d for q, d in zip(query, found)]
    norm = math.sqrt(math.fsum(x * x for x in moved))
    if norm == 0.0 or not math.isfinite(norm):
        return list(query)
    return [x / norm for x in moved]


def fusion_keys(per_engine: Mapping[str, Sequence[Hit]]) -> Dict[str, str]:
    """Entry id → the key its hits are fused on, so every engine's votes for one skill add
    up and the fused list shows it once. Hits are one skill when they share a near-duplicate
    group (`Hit.group`, from the index), a content hash (copies of one file: BM25 and the
    dense engine may show different copies), or a listing key (`Entry.listing_key`: the
    same name and description — for hits whose group is unknown). The key is the first
    (in engine order, then rank) such id: a group, else a content hash, else an entry id."""
    parent: Dict[str, str] = {}
    seen: Dict[str, int] = {}  # id → when it was first seen

    def find(x: str) -> str:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(x: str, y: str) -> None:
        rx, ry = sorted((find(x), find(y)), key=seen.__getitem__)
        if rx != ry:
            parent[ry] = rx  # the first seen stays the key

    ids: Dict[str, str] = {}
    for hits in per_engine.values():
        for hit in hits:
            eid = hit.entry.id
            own = ids.setdefault(eid, hit.group or hit.content_hash or eid)
            for x in (own, hit.group, hit.content_hash, "\0" + hit.entry.listing_key):
                if x:
                    if x not in parent:
                        parent[x] = x
                        seen[x] = len(seen)
                    union(own, x)
    return {eid: find(own) for eid, own in ids.items()}


def collapse(hits: Sequence[Hit], key: Callable[[Hit], Optional[str]]) -> List[Hit]:
    """``hits`` with one hit per ``key`` (the best-ranked; a None key is unique): each
    later copy's name and its own ``also_in`` names join the kept hit's ``also_in``."""
    out: List[Hit] = []
    where: Dict[str, int] = {}
    for hit in hits:
        k = key(hit)
        i = where.get(k) if k is not None else None
        if i is None:
            if k is not None:
                where[k] = len(out)
            out.append(hit)
            continue
        keep = out[i]
        names = (hit.entry.qualified_name, *hit.also_in)
        extra = tuple(n for n in names if n != keep.entry.qualified_name and n not in keep.also_in)
        if extra:
            differs = hit.content_hash is None or hit.content_hash != keep.content_hash
            new_similar = tuple(n for n in extra if differs or n in hit.similar)
            out[i] = replace(
                keep,
                also_in=keep.also_in + tuple(dict.fromkeys(extra)),
                similar=keep.similar + tuple(dict.fromkeys(new_similar)),
            )
    return out


def distinct(hits: Sequence[Hit], keys: Mapping[str, str]) -> List[Hit]:
    """``hits`` with one hit per fusion key (`fusion_keys`), so an engine's ranks count
    distinct files, as BM25's do."""
    return collapse(hits, lambda h: keys.get(h.entry.id, h.entry.id))


def merge_hits(
    fused: Sequence[Tuple[str, float]],
    per_engine: Mapping[str, Sequence[Hit]],
    keys: Optional[Mapping[str, str]] = None,
) -> List[Hit]:
    """Entry-level hits for ``fused`` ids: the first engine's hit (in ``per_engine`` order,
    BM25 first) gives the entry, snippet, why and content hash; a missing snippet/why/hash is
    taken from the next engine that has one; ``ranks`` holds every engine's 1-based rank.
    ``keys`` maps entry ids to the ids ``fused`` uses (`fusion_keys`); default: entry ids."""
    by_engine: Dict[str, Dict[str, Tuple[int, Hit]]] = {}
    for engine, hits in per_engine.items():
        table: Dict[str, Tuple[int, Hit]] = {}
        for rank, hit in enumerate(hits, start=1):
            key = keys.get(hit.entry.id, hit.entry.id) if keys is not None else hit.entry.id
            table.setdefault(key, (rank, hit))
        by_engine[engine] = table
    out: List[Hit] = []
    for doc, score in fused:
        found = [(e, by_engine[e][doc]) for e in per_engine if doc in by_engine[e]]
        if not found:
            continue
        base = found[0][1][1]
        ranks: Dict[str, int] = {}
        for engine, (rank, hit) in found:
            ranks.update({k: v for k, v in hit.ranks.items() if k not in per_engine})
            ranks[engine] = rank
        snippet = next((h.snippet for _, (_, h) in found if h.snippet), "")
        why = next((h.why for _, (_, h) in found if h.why), "")
        content_hash = next((h.content_hash for _, (_, h) in found if h.content_hash), None)
        names = [h.entry.qualified_name for _, (_, h) in found]
        names += [x for _, (_, h) in found for x in h.also_in]
        also_in = tuple(n for n in dict.fromkeys(names) if n != base.entry.qualified_name)
        differ = [
            h
            for _, (_, h) in found
            if h.content_hash is None or h.content_hash != base.content_hash
        ]
        similar_names = {n for _, (_, h) in found for n in h.similar}
        similar_names |= {n for h in differ for n in (h.entry.qualified_name, *h.also_in)}
        similar = tuple(n for n in also_in if n in similar_names)
        out.append(
            replace(
                base,
                score=score,
                snippet=snippet,
                why=why,
                content_hash=content_hash,
                also_in=also_in,
                similar=similar,
                ranks=ranks,
            )
        )
    return out


def fuse(
    per_engine: Mapping[str, Sequence[Hit]],
    k: int,
    method: str = DEFAULT_METHOD,
    *,
    rrf_k: int = RRF_K,
    weights: Optional[Mapping[str, float]] = None,
    depth: int = DEPTH,
    norms: Optional[Mapping[str, str]] = None,
    floor: bool = False,
) -> List[Hit]:
    """The top ``k`` of ``{engine: hits best first}`` fused with ``method`` (`METHODS`):
    copies of one file are one candidate (`fusion_keys`), each engine's list cut to
    ``max(k, depth)`` distinct files first; hits keep every engine's rank. ``norms`` and
    ``floor`` are `weighted_scores`'s (method ``scores``)."""
    if method not in METHODS:
        raise ValueError(f"unknown fusion method {method!r}")
    keys = fusion_keys(per_engine)
    lists = {e: distinct(hits, keys)[: max(k, depth)] for e, hits in per_engine.items()}
    w = weights if weights is not None else DEFAULT_WEIGHTS
    firsts = {e: _first_scores(hits, keys) for e, hits in lists.items()}
    if method == "rrf":
        fused = rrf({e: [keys[h.entry.id] for h in hits] for e, hits in lists.items()}, rrf_k)
    elif method == "minmax":
        fused = weighted_minmax(firsts, w)
    else:
        fused = weighted_scores(firsts, w, norms if norms is not None else DEFAULT_NORMS, floor)
    return merge_hits(fused[:k], lists, keys)


def _first_scores(hits: Sequence[Hit], keys: Mapping[str, str]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for h in hits:
        out.setdefault(keys[h.entry.id], h.score)
    return out


def true_ranks(hits: Sequence[Hit], lists: Mapping[str, Sequence[Hit]]) -> List[Hit]:
    """``hits`` whose ``ranks[e]`` is the 1-based rank of the hit's file in ``lists[e]``
    (distinct files, as `fuse` counts them), absent when the file is not there; other
    ranks are kept. The hybrid's second fusion ranks the dense half from a moved vector:
    this puts back the rank the user's words had ("dense #N" is the rank `--engine dense`
    shows) and reports the moved search's under its own name."""
    keys = fusion_keys({**lists, "\0fused": hits})
    tables: Dict[str, Dict[str, int]] = {}
    for engine, listed in lists.items():
        table: Dict[str, int] = {}
        for rank, hit in enumerate(distinct(listed, keys), start=1):
            table.setdefault(keys[hit.entry.id], rank)
        tables[engine] = table
    out: List[Hit] = []
    for hit in hits:
        ranks = {k: v for k, v in hit.ranks.items() if k not in lists}
        for engine, table in tables.items():
            at = table.get(keys[hit.entry.id])
            if at is not None:
                ranks[engine] = at
        out.append(replace(hit, ranks=ranks))
    return out
