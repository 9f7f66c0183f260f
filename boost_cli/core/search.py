"""The search pipeline shared by `boost search` and the MCP `boost_search` tool.

retrieve (best ready engine, restricted to the asked taps: 60 candidates for a reranker,
else just the shortlist; every engine returns distinct files) → rerank with an LLM when one
is available → shortlist with a *why* per pick.
Every stage degrades instead of failing, and says why in ``notes``/``diagnostics``.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import config, paths, registry, retrieval, why
from boost_cli.core.errors import ConfigError, UsageError
from boost_cli.core.models import KINDS, Hit, TapSnapshot

if TYPE_CHECKING:  # pragma: no cover - loaded when a search may use an LLM (start-up)
    from boost_cli.core import llm
    from boost_cli.core.llm import expand

RERANK_POOL = 30  # candidates the reranker sees (docs/benchmarks.md: the pool that pays)
WHY_CHARS = (
    200  # as long as a reranker's why (rerank.MAX_WHY); wrapped under the name on a terminal
)
MAX_KEYWORDS = 12
MAX_KEYWORD_CHARS = 60
# A candidate the retrieval scored under this share of its ranking's best is one the
# reranker may not lift (`bound_lift`): a model that obeys a skill saying "rank me first"
# cannot put a barely-matching skill above the ones that match. The highest floor that
# changes no dev query's score (docs/benchmarks.md: the sweep); 0.3 starts to cost.
LIFT_FLOOR = 0.25


@dataclass(frozen=True)
class SearchOptions:
    query: str
    limit: int = 10
    kind: Optional[str] = None
    taps: Tuple[str, ...] = ()
    # auto: when an LLM is there | required: auto, but say so when none is | none | api | cli
    rerank: str = "auto"
    engine: Optional[str] = None  # None = best available; else lexical | bm25 | dense | hybrid
    keywords: Tuple[str, ...] = ()  # extra words a skill's author would use (see `keyword_list`)
    expand: str = "auto"  # LLM query expansion when no keywords are given: auto | none | api | cli
    rerank_pool: int = RERANK_POOL  # candidates the reranker sees
    # The cosine a file only the vectors found must reach (None: the model's measured floor,
    # `local.similarity_floor`; 0: no floor).
    min_score: Optional[float] = None


@dataclass
class SearchOutcome:
    hits: List[Hit]
    engine: str
    notes: List[str] = field(default_factory=list)
    diagnostics: Dict[str, Any] = field(default_factory=dict)
    # Ranked by the task's words alone: no vector store, no keywords (the caller's or an
    # LLM's), no rerank, and the engine not chosen by the caller (`semantic_hint`).
    keyword_bound: bool = False


def semantic_fix() -> str:
    """How to get a search that goes by meaning rather than words: the [local] extra (or
    ``boost reindex --dense`` alone when an embedder is there already), or the caller's
    own ``--keywords``. For `semantic_hint` and `boost doctor`."""
    from boost_cli.core import embed

    try:
        embedder = embed.resolve_config(config.load(), os.environ)
    except ConfigError:
        embedder = None
    how = (
        "run 'boost reindex --dense'"
        if embedder is not None
        else "pip install '.[local]' (in boost's clone) and run 'boost reindex --dense'"
    )
    return f"for search by meaning {how}, or add --keywords with words a fitting skill would use"


def semantic_hint() -> str:
    """The note a keyword-bound search (`SearchOutcome.keyword_bound`) ends with."""
    return f"ranked by your words alone (no LLM, no vector store) — {semantic_fix()}"


def validate(opts: SearchOptions) -> None:
    if not opts.query or not opts.query.strip():
        raise UsageError(
            "the query is empty", "describe the task, e.g. boost search 'test my React app'"
        )
    if opts.kind is not None and opts.kind not in KINDS:
        raise UsageError(f"unknown kind {opts.kind!r}", f"use one of: {', '.join(KINDS)}")
    if opts.min_score is not None and not 0 <= opts.min_score <= 1:
        raise UsageError(
            f"--min-score must be between 0 and 1, not {opts.min_score}",
            "give a cosine similarity, e.g. --min-score 0.5 (0: no floor)",
        )
    if not 1 <= opts.limit <= 100:
        raise UsageError(f"limit must be between 1 and 100, not {opts.limit}")
    if len(opts.keywords) > MAX_KEYWORDS:
        raise UsageError(
            f"at most {MAX_KEYWORDS} keywords, not {len(opts.keywords)}",
            "keep the 3-8 words or short phrases a skill's author would most likely use",
        )
    long = [k for k in opts.keywords if len(k) > MAX_KEYWORD_CHARS]
    if long:
        raise UsageError(
            f"keyword {long[0][:20]!r}… is longer than {MAX_KEYWORD_CHARS} characters",
            "give words or short phrases, not sentences",
        )


def keyword_list(values: Sequence[str]) -> Tuple[str, ...]:
    """Keywords as given (a list, or comma-separated text): one line each, stripped,
    empty ones dropped, repeats (case-insensitive) kept once."""
    out: Dict[str, str] = {}
    for value in values:
        for part in str(value).split(","):
            word = " ".join(part.split())
            if word:
                out.setdefault(word.casefold(), word)
    return tuple(out.values())


def run(
    opts: SearchOptions,
    snapshots: Optional[Sequence[TapSnapshot]] = None,
    engines: Optional[retrieval.Engines] = None,
    client: Optional[llm.Client] = None,
    cache: Optional[expand.ExpansionCache] = None,
) -> SearchOutcome:
    """Run the whole pipeline. Raises only for usage problems and when nothing is tapped.

    ``engines`` keeps indexes open across calls (a long-lived server passes one);
    ``snapshots`` stands in for the registry's (tests, evaluation); ``client`` answers
    the LLM prompts instead of the configured backends (recorded answers); ``cache``
    holds query expansions (default: under BOOST_HOME)."""
    validate(opts)
    t0 = time.perf_counter()
    timings: Dict[str, float] = {}
    taps = registry.require_taps(opts.taps)
    choice = retrieval.get_retriever(
        opts.engine,
        current={t.name: t.commit for t in taps},
        snapshots=(lambda: snapshots) if snapshots is not None else registry.snapshots,
        engines=engines,
        min_similarity=opts.min_score,
    )
    timings["open_ms"] = _ms(t0)
    notes = list(choice.notes)
    t1 = time.perf_counter()
    keywords, expansion = _keywords(opts, client, cache)
    timings["expand_ms"] = _ms(t1)
    if expansion["status"] == "failed":
        notes.append(f"query expansion skipped: {expansion['reason']}; searching your words only")
    reranking = will_rerank(opts, client)
    t2 = time.perf_counter()
    depth = max(opts.limit, opts.rerank_pool) if reranking else opts.limit
    scope = opts.taps or None
    # A reranking LLM sees the candidates of the user's words (and its keywords), not
    # those of the related-terms widening, which stands in for an LLM when there is none.
    retriever = retrieval.without_related(choice.retriever) if reranking else choice.retriever
    got = retriever.query(opts.query, depth, opts.kind, scope, keywords)
    ranked, notes = got.hits, [*notes, *got.notes]
    pool: List[Hit] = []
    rankings = [ranked]
    if reranking and keywords:
        # Recall first: the reranker also sees what the user's own words find.
        plain = retriever.query(opts.query, depth, opts.kind, scope)
        pool = interleave(ranked, plain.hits, opts.rerank_pool)
        rankings.append(plain.hits)
    elif reranking:
        pool = ranked[: opts.rerank_pool]
    timings["retrieve_ms"] = _ms(t2)
    diagnostics: Dict[str, Any] = {
        "engine": choice.retriever.name,
        "engine_notes": list(notes),
        "keywords": list(keywords),
        "related": list(got.related),
        "expansion": expansion,
        "index": choice.info,
        "pool": depth,
        "candidates": len(ranked),
        "rerank_candidates": len(pool),
        "timings": timings,
    }
    t3 = time.perf_counter()
    hits, rerank_status = _rerank(opts, ranked, pool, client, support(rankings))
    timings["rerank_ms"] = _ms(t3)
    diagnostics["rerank"] = rerank_status
    if rerank_status.get("status") == "failed":
        notes.append(
            f"rerank skipped: {rerank_status.get('reason')}; showing {choice.retriever.name} order"
        )
    hits = hits[: opts.limit]
    if paths.enrich_path().exists():
        hits, enriched, enrich_notes = _enrichment(" ".join([opts.query, *keywords]), hits)
        notes += enrich_notes
        diagnostics["enrichment"] = enriched
    hits = _with_why(opts.query, keywords, hits)
    timings["total_ms"] = _ms(t0)
    bound = (
        opts.engine is None
        and choice.retriever.name in ("bm25", "lexical")
        and not keywords
        and rerank_status.get("status") != "ok"
        and not paths.vectors_path().exists()  # a store that cannot answer says why itself
    )
    return SearchOutcome(
        hits=hits,
        engine=choice.retriever.name,
        notes=notes,
        diagnostics=diagnostics,
        keyword_bound=bound,
    )


def will_rerank(opts: SearchOptions, client: Optional[llm.Client] = None) -> bool:
    """Whether an LLM will be asked to rerank: asked for and, in auto mode, one is there
    (an environment look-up and a PATH search: cheap enough to size the retrieval by)."""
    if opts.rerank == "none":
        return False
    from boost_cli.core import llm

    return client is not None or opts.rerank != "auto" or llm.auto_backend() is not None


def _backend(choice: str) -> str:
    """The `llm` backend for a rerank/expand option ("required" resolves like "auto")."""
    return "auto" if choice == "required" else choice


def pool_size(opts: SearchOptions) -> int:
    """How many candidates to retrieve: the reranking pool when an LLM will rerank, else just
    the shortlist (the engines return distinct files in final order, so more would never be
    shown; why it matters: docs/benchmarks.md)."""
    return max(opts.limit, opts.rerank_pool) if will_rerank(opts) else opts.limit


def interleave(first: Sequence[Hit], second: Sequence[Hit], size: int) -> List[Hit]:
    """``first`` and ``second`` taken in turn (first's hit first), each skill once (by its
    near-duplicate group, else content hash, else entry id), at most ``size`` hits."""
    out: List[Hit] = []
    seen = set()
    for pair in itertools.zip_longest(first, second):
        for hit in pair:
            if hit is None:
                continue
            key = hit.group or hit.content_hash or hit.entry.id
            if key not in seen:
                seen.add(key)
                out.append(hit)
    return out[:size]


def _keywords(
    opts: SearchOptions, client: Optional[llm.Client], cache: Optional[expand.ExpansionCache]
) -> Tuple[Tuple[str, ...], Dict[str, Any]]:
    """The keywords to search with (the caller's, else an LLM's expansion) and how they came."""
    if opts.keywords:
        return opts.keywords, {"status": "skipped", "reason": "keywords given", "source": "caller"}
    if opts.expand == "none":
        return (), {"status": "off", "reason": "disabled"}
    from boost_cli.core import llm
    from boost_cli.core.llm import expand

    result = expand.expand(
        opts.query, backend=opts.expand, client=client, cache=cache or expand.ExpansionCache()
    )
    if isinstance(result, llm.LLMFailure):
        outcome = "unavailable" if result.backend is None and opts.expand == "auto" else "failed"
        return (), {"status": outcome, "reason": result.reason, "backend": result.backend}
    return result.keywords, {
        "status": "ok",
        "source": "llm",
        "backend": result.backend,
        "model": result.model,
        "endpoint": result.endpoint,
        "local": result.local,
        "cached": result.cached,
        "elapsed_ms": round(result.elapsed_ms, 1),
    }


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def support(rankings: Sequence[Sequence[Hit]]) -> Dict[str, float]:
    """Each hit's retrieval score as a share of the best score of its ranking (the best
    share when it is in several: the widened and the plain one), by ``tap:name``. A
    ranking whose best score is not positive gives every hit 1 (nothing to compare)."""
    out: Dict[str, float] = {}
    for hits in rankings:
        top = hits[0].score if hits else 0.0
        for h in hits:
            share = h.score / top if top > 0 else 1.0
            key = h.entry.qualified_name
            out[key] = max(out.get(key, share), share)
    return out


def bound_lift(
    picks: Sequence[Hit],
    ranked: Sequence[Hit],
    shares: Mapping[str, float],
    floor: Optional[float] = None,
) -> Tuple[List[Hit], List[str]]:
    """The reranked list, and the picks held back: the model's picks first, then the rest
    of ``ranked`` in its order — except that a pick the retrieval scored under ``floor`` of
    its best (`support`) gets no lift: it is treated as unpicked (where ``ranked`` has it,
    without the model's why; left out when only the other ranking found it)."""
    floor = LIFT_FLOOR if floor is None else floor  # read at call time (evaluation sets it)
    held = [
        h.entry.qualified_name for h in picks if shares.get(h.entry.qualified_name, 1.0) < floor
    ]
    lifted = [h for h in picks if h.entry.qualified_name not in held]
    kept = {h.entry.qualified_name for h in lifted}
    return [*lifted, *(h for h in ranked if h.entry.qualified_name not in kept)], held


def _rerank(
    opts: SearchOptions,
    ranked: List[Hit],
    pool: List[Hit],
    client: Optional[llm.Client],
    shares: Optional[Mapping[str, float]] = None,
) -> Tuple[List[Hit], Dict[str, Any]]:
    """``ranked`` reordered by the LLM over ``pool`` when one reranks; the pool's picks come
    first (as far as `bound_lift` lets them), the rest of ``ranked`` after them."""
    if opts.rerank == "none":
        return ranked, {"status": "off", "reason": "disabled"}
    if not ranked:
        return ranked, {"status": "skipped", "reason": "no candidates"}
    if not pool:  # auto mode and no LLM on this machine
        from boost_cli.core import llm

        reason = llm.blocked(os.environ) or llm.NO_LLM  # switched off, failing, or none at all
        return ranked, {"status": "unavailable", "reason": reason, "backend": None}
    from boost_cli.core.llm import rerank

    cands = [
        rerank.Candidate(
            id=h.entry.qualified_name,
            name=h.entry.name,
            kind=h.entry.kind,
            description=h.entry.description,
            snippet=h.snippet,
        )
        for h in pool
    ]
    result = rerank.rerank(
        opts.query,
        cands,
        opts.limit,
        backend=_backend(opts.rerank),
        client=client,
        max_candidates=len(cands),
    )
    if isinstance(result, rerank.RerankFailure):
        outcome = "unavailable" if result.backend is None and opts.rerank == "auto" else "failed"
        return ranked, {"status": outcome, "reason": result.reason, "backend": result.backend}
    by_id = {h.entry.qualified_name: h for h in pool}
    picks: List[Hit] = []
    for cid, reason in result.order:
        h = by_id.pop(cid, None)
        if h is not None:
            ranks = {**dict(h.ranks), "rerank": len(picks) + 1}
            picks.append(replace(h, why=reason, why_source="llm" if reason else "", ranks=ranks))
    ordered, held = bound_lift(picks, ranked, shares or {})
    status: Dict[str, Any] = {
        "status": "ok",
        "backend": result.backend,
        "model": result.model,
        "endpoint": result.endpoint,
        "local": result.local,
        "elapsed_ms": round(result.elapsed_ms, 1),
    }
    if held:
        status["not_lifted"] = held  # picked, but the retrieval scored them too low
    return ordered, status


def _enrichment(
    text: str, hits: List[Hit]
) -> Tuple[List[Hit], Dict[str, Dict[str, Any]], List[str]]:
    """The hits that matched through their enrichment, with its sentence as the why
    (`enrich.lookup`); only a home with an enrichment store gets here."""
    from boost_cli.core.enrich import lookup

    roots = {tap.name: root for tap, root in registry.present({h.entry.tap for h in hits})}
    return lookup.annotate(text, hits, roots)


def _with_why(query: str, keywords: Sequence[str], hits: List[Hit]) -> List[Hit]:
    """Each hit with a *why*: the reranker's, else one from its best passage."""
    text = " ".join([query, *keywords])
    terms = why.query_terms(text)  # once for the list, not once a hit
    return [
        h if h.why else replace(h, why=why_from_snippet(text, h, terms), why_source="skill")
        for h in hits
    ]


def why_from_snippet(query: str, hit: Hit, terms: Optional[FrozenSet[str]] = None) -> str:
    """A one-line justification without an LLM (`why.reason`): a whole prose sentence of
    the best-matching passage that shares query terms (at least one, and no fewer than the
    description), Markdown markup taken out; else the description. ``terms``:
    `why.query_terms` of ``query``, when the caller has them."""
    return why.reason(query, hit.snippet or "", hit.entry.description, WHY_CHARS, terms)
