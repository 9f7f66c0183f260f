"""The search pipeline shared by `boost search` and the MCP `boost_search` tool.

retrieve (best ready engine, restricted to the asked taps: 60 candidates for a reranker,
else just the shortlist; every engine returns distinct files) → rerank with an LLM when one
is available → shortlist with a *why* per pick.
Every stage degrades instead of failing, and says why in ``notes``/``diagnostics``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import registry, retrieval
from boost_cli.core.errors import UsageError
from boost_cli.core.models import KINDS, Hit, TapSnapshot
from boost_cli.core.text import clip
from boost_cli.core.tokenize import tokenize

CANDIDATES = 60
WHY_CHARS = 160
MAX_KEYWORDS = 12
MAX_KEYWORD_CHARS = 60


@dataclass(frozen=True)
class SearchOptions:
    query: str
    limit: int = 10
    kind: Optional[str] = None
    taps: Tuple[str, ...] = ()
    rerank: str = "auto"  # auto | none | api | cli
    engine: Optional[str] = None  # None = best available; else lexical | bm25 | dense | hybrid
    keywords: Tuple[str, ...] = ()  # extra words a skill's author would use (see `keyword_list`)


@dataclass
class SearchOutcome:
    hits: List[Hit]
    engine: str
    notes: List[str] = field(default_factory=list)
    diagnostics: Dict[str, Any] = field(default_factory=dict)


def validate(opts: SearchOptions) -> None:
    if not opts.query or not opts.query.strip():
        raise UsageError(
            "the query is empty", "describe the task, e.g. boost search 'test my React app'"
        )
    if opts.kind is not None and opts.kind not in KINDS:
        raise UsageError(f"unknown kind {opts.kind!r}", f"use one of: {', '.join(KINDS)}")
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
) -> SearchOutcome:
    """Run the whole pipeline. Raises only for usage problems and when nothing is tapped.

    ``engines`` keeps indexes open across calls (a long-lived server passes one);
    ``snapshots`` stands in for the registry's (tests, evaluation)."""
    validate(opts)
    t0 = time.perf_counter()
    timings: Dict[str, float] = {}
    taps = registry.require_taps(opts.taps)
    choice = retrieval.get_retriever(
        opts.engine,
        current={t.name: t.commit for t in taps},
        snapshots=(lambda: snapshots) if snapshots is not None else registry.snapshots,
        engines=engines,
    )
    timings["open_ms"] = _ms(t0)
    t1 = time.perf_counter()
    pool = pool_size(opts)
    got = choice.retriever.query(
        opts.query, k=pool, kind=opts.kind, taps=opts.taps or None, keywords=opts.keywords
    )
    candidates = got.hits
    timings["retrieve_ms"] = _ms(t1)
    notes = [*choice.notes, *got.notes]
    diagnostics: Dict[str, Any] = {
        "engine": choice.retriever.name,
        "engine_notes": list(notes),
        "keywords": list(opts.keywords),
        "index": choice.info,
        "pool": pool,
        "candidates": len(candidates),
        "timings": timings,
    }
    t3 = time.perf_counter()
    hits, rerank_status = _rerank(opts, candidates)
    timings["rerank_ms"] = _ms(t3)
    diagnostics["rerank"] = rerank_status
    if rerank_status.get("status") == "failed":
        notes.append(
            f"rerank skipped: {rerank_status.get('reason')}; showing {choice.retriever.name} order"
        )
    timings["total_ms"] = _ms(t0)
    return SearchOutcome(
        hits=hits[: opts.limit], engine=choice.retriever.name, notes=notes, diagnostics=diagnostics
    )


def pool_size(opts: SearchOptions) -> int:
    """How many candidates to retrieve: a reranking pool (`CANDIDATES`) when an LLM will
    rerank, else just the shortlist (the engines return distinct files in final order, so
    more would never be shown; why it matters: docs/benchmarks.md)."""
    if opts.rerank == "none":
        return opts.limit
    if opts.rerank == "auto":
        from boost_cli.core import llm

        if llm.auto_backend() is None:
            return opts.limit
    return CANDIDATES


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def _rerank(opts: SearchOptions, hits: List[Hit]) -> Tuple[List[Hit], Dict[str, Any]]:
    """Reorder ``hits`` with the LLM when asked/available; fill in a *why* for the shortlist."""
    if opts.rerank == "none" or not hits:
        status: Dict[str, Any] = (
            {"status": "off", "reason": "disabled"}
            if opts.rerank == "none"
            else {"status": "skipped", "reason": "no candidates"}
        )
        return _with_why(opts, hits), status
    from boost_cli.core import rerank

    cands = [
        rerank.Candidate(
            id=h.entry.qualified_name,
            name=h.entry.name,
            kind=h.entry.kind,
            description=h.entry.description,
            snippet=h.snippet,
        )
        for h in hits[:30]
    ]
    result = rerank.rerank(opts.query, cands, opts.limit, backend=opts.rerank)
    if isinstance(result, rerank.RerankFailure):
        outcome = "unavailable" if result.backend is None and opts.rerank == "auto" else "failed"
        return _with_why(opts, hits), {
            "status": outcome,
            "reason": result.reason,
            "backend": result.backend,
        }
    by_id = {h.entry.qualified_name: h for h in hits}
    ordered: List[Hit] = []
    for cid, why in result.order:
        h = by_id.pop(cid, None)
        if h is not None:
            ordered.append(replace(h, why=why, ranks={**dict(h.ranks), "rerank": len(ordered) + 1}))
    ordered.extend(h for h in hits if h.entry.qualified_name in by_id)
    status = {
        "status": "ok",
        "backend": result.backend,
        "model": result.model,
        "elapsed_ms": round(result.elapsed_ms, 1),
    }
    return _with_why(opts, ordered), status


def _with_why(opts: SearchOptions, hits: List[Hit]) -> List[Hit]:
    """The shortlist, each hit with a *why* (the reranker's, else one from its best passage)."""
    text = " ".join([opts.query, *opts.keywords])
    return [replace(h, why=h.why or why_from_snippet(text, h)) for h in hits[: opts.limit]]


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def why_from_snippet(query: str, hit: Hit) -> str:
    """A one-line justification without an LLM: the prose sentence of the best-matching
    passage that shares the most query terms with the query, when it shares at least one
    and no fewer than the description does; else the description (code lines, table rows
    and fragments are never picked: they make poor reasons)."""
    terms = set(tokenize(query))
    desc = _clean(hit.entry.description)
    desc_score = len(terms.intersection(tokenize(desc))) if desc else 0
    best, best_score = "", max(desc_score, 1) - 1
    # A stem's first four letters survive in every word it came from ("happi" < "happy"),
    # so a sentence without any of them cannot share a term: skip tokenizing it.
    heads = {t[:4] for t in terms}
    for sentence in _SENTENCE.split(hit.snippet or ""):
        s = _clean(sentence)
        if len(s) < 20:
            continue
        lower = s.lower()
        if not any(h in lower for h in heads):
            continue
        score = len(terms.intersection(tokenize(s)))
        if score > best_score and not _looks_like_code(s):
            best, best_score = s, score
    best = best or desc or _clean(hit.snippet)
    return clip(best, WHY_CHARS)


_CODE = re.compile(
    r"[{};=<>$]|^\s*(import|from|const|let|var|def|class|return|npm|pip|git|for|if|while|with|elif|else|try|except|await|async)\b|\(\)|\|.*\|"
)


_NOT_PROSE = re.compile(r"[^\w ]|[\d_]")


def _looks_like_code(text: str) -> bool:
    """Code, a table row, a command or a fragment: anything but a sentence of prose."""
    if _CODE.search(text) or text.rstrip().endswith(":") or len(text.split()) < 4:
        return True
    return len(_NOT_PROSE.findall(text)) > 0.2 * len(text)


_LEAD = re.compile(r"^[#>*\-\s`|]+")
_MARKUP = re.compile(r"[`*_]{1,3}")


def _clean(text: str) -> str:
    """Markdown markers and extra white space out of one sentence."""
    return " ".join(_MARKUP.sub("", _LEAD.sub("", text.strip())).split())
