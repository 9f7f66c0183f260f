#!/usr/bin/env python3
"""Ranking quality on graded queries: nDCG@10, recall@10, MRR@10, success@1, per type.

    python scripts/eval.py --home DIR [--engine lexical|bm25|dense|hybrid ...] [--queries FILE]
                           [--keywords FILE]
    python scripts/eval.py --home DIR --pipeline plain,keywords,expand,rerank,both
                           [--keywords FILE] [--llm-answers FILE ...] [--pending FILE]
                           [--pool N ...] [--lift-floor F ...]

DIR is a BOOST_HOME where the shared corpus is tapped with tap name = registry folder
(`python scripts/corpus.py --home DIR`, then `boost reindex`). Doc ids are
`<registry folder>/<path of the defining file>`; scoring is at duplicate-group level
(../shared/eval/README.md): every ranked and judged doc maps to its group, the first
occurrence of a group counts, a group takes the best grade of its members.
Without --home, a temporary home is prepared from the corpus. --enrich-weight (with --reindex)
builds the index with the enrichment (cache/enrich.sqlite: `boost reindex --enrich`, or its
replay, docs/enrich.md) counted N times: the weight sweep. --keywords takes a JSONL file of
``{"id", "keywords": [...]}`` (e.g. ../shared/eval/dev-keywords.jsonl): each query is then
searched with its keywords, as an agent calling boost_search with `keywords` would.

--pipeline scores the whole `search.run` pipeline (shortlist of 10) in each mode: ``plain``
(no keywords, no LLM), ``keywords`` (the --keywords file), ``expand`` (LLM query expansion),
``rerank`` (LLM rerank over the user's words' candidates), ``both`` (expansion, then a
rerank over the widened and the plain candidates), ``keywords+rerank``. The LLM answers come
from --llm-answers (recorded: see scripts/recorded_llm.py), else from the configured backend;
--pending collects the prompts that had no recorded answer. --lift-floor scores the reranking
modes with other values of `search.LIFT_FLOOR` (the bound on lifting a pick the retrieval
scored low) and counts the picks it held back.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
EVAL = SHARED / "eval"


def load_queries(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_groups(path: Path) -> Dict[str, str]:
    return json.loads(path.read_text()) if path.exists() else {}


def score_query(
    ranked: Sequence[str], relevant: Mapping[str, int], groups: Mapping[str, str], k: int = 10
) -> Dict[str, float]:
    """Group-level metrics for one query. ``ranked`` are doc ids, best first."""
    g = lambda d: groups.get(d, d)  # noqa: E731
    grades: Dict[str, int] = {}
    for doc, grade in relevant.items():
        grades[g(doc)] = max(grades.get(g(doc), 0), int(grade))
    seen, top = set(), []
    for doc in ranked:
        gid = g(doc)
        if gid in seen:
            continue
        seen.add(gid)
        top.append(gid)
        if len(top) == k:
            break
    gains = [grades.get(gid, 0) for gid in top]
    dcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(gains))
    ideal = sorted((v for v in grades.values() if v > 0), reverse=True)[:k]
    idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    n_rel = sum(1 for v in grades.values() if v > 0)
    found = sum(1 for x in gains if x > 0)
    rr = next((1.0 / (i + 1) for i, x in enumerate(gains) if x > 0), 0.0)
    return {
        "ndcg@10": dcg / idcg if idcg else 0.0,
        "recall@10": found / min(n_rel, k) if n_rel else 0.0,
        "mrr@10": rr,
        "success@1": 1.0 if gains and gains[0] >= 2 else 0.0,
    }


def aggregate(per_query: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, float]]:
    """Mean of each metric overall and per query type."""
    buckets: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for row in per_query:
        buckets["all"].append(row)
        buckets[row["type"]].append(row)
    out: Dict[str, Dict[str, float]] = {}
    for name, rows in buckets.items():
        out[name] = {
            m: statistics.fmean(r[m] for r in rows)
            for m in ("ndcg@10", "recall@10", "mrr@10", "success@1")
        }
        out[name]["n"] = len(rows)
    return out


def ranked_ids(hits: Sequence[Any]) -> List[str]:
    """Doc ids of hits, each hit's collapsed copies right after it (same group anyway)."""
    return [f"{h.entry.tap}/{h.entry.path}" for h in hits]


def load_keywords(path: Optional[Path]) -> Dict[str, List[str]]:
    """Query id → keywords, from a JSONL file of ``{"id", "keywords"}`` (None: no keywords)."""
    if path is None:
        return {}
    return {r["id"]: list(r["keywords"]) for r in load_queries(path)}


def run_engine(
    engine: str,
    queries: Sequence[Dict[str, Any]],
    k: int = 100,
    keywords: Optional[Mapping[str, Sequence[str]]] = None,
) -> List[Dict[str, Any]]:
    from boost_cli.core import registry, retrieval

    choice = retrieval.get_retriever(engine, snapshots=registry.snapshots)
    rows = []
    for q in queries:
        words = tuple((keywords or {}).get(q["id"], ()))
        t0 = time.perf_counter()
        hits = choice.retriever.query(q["query"], k=k, kind=q.get("kind"), keywords=words).hits
        ms = (time.perf_counter() - t0) * 1000
        rows.append({"id": q["id"], "type": q["type"], "ranked": ranked_ids(hits), "ms": ms})
    return rows


def evaluate(
    engine: str,
    queries: Sequence[Dict[str, Any]],
    groups: Mapping[str, str],
    keywords: Optional[Mapping[str, Sequence[str]]] = None,
) -> Dict[str, Any]:
    rows = run_engine(engine, queries, keywords=keywords)
    by_id = {q["id"]: q for q in queries}
    per = []
    for r in rows:
        m = score_query(r["ranked"], by_id[r["id"]]["relevant"], groups)
        per.append({**m, "id": r["id"], "type": r["type"], "top": r["ranked"][:3]})
    return {
        "engine": engine,
        "summary": aggregate(per),
        "per_query": per,
        "median_ms": statistics.median(r["ms"] for r in rows),
    }


PIPELINES: Dict[str, Dict[str, Any]] = {
    "plain": {"expand": "none", "rerank": "none", "keywords": False},
    "keywords": {"expand": "none", "rerank": "none", "keywords": True},
    "expand": {"expand": "auto", "rerank": "none", "keywords": False},
    "rerank": {"expand": "none", "rerank": "auto", "keywords": False},
    "both": {"expand": "auto", "rerank": "auto", "keywords": False},
    "keywords+rerank": {"expand": "none", "rerank": "auto", "keywords": True},
}


def evaluate_pipeline(
    mode: str,
    queries: Sequence[Dict[str, Any]],
    groups: Mapping[str, str],
    keywords: Mapping[str, Sequence[str]],
    client: Any = None,
    engine: Optional[str] = None,
    pool: Optional[int] = None,
    floor: Optional[float] = None,
) -> Dict[str, Any]:
    """Group-level metrics of the shortlists `search.run` gives in ``mode`` (`PIPELINES`);
    ``floor`` replaces `search.LIFT_FLOOR` (the bound on how far a rerank may lift)."""
    from boost_cli.core import retrieval, search
    from boost_cli.core.llm import expand

    if floor is not None:
        search.LIFT_FLOOR = floor
    how = PIPELINES[mode]
    engines = retrieval.Engines()
    # The expansions cached for this run only, removed when it ends, however it ends
    # (a mkdtemp left one /tmp/boost-eval-expand-* behind per run).
    with tempfile.TemporaryDirectory(prefix="boost-eval-expand-") as scratch:
        cache = expand.ExpansionCache(Path(scratch))
        per, times, failed, held = [], [], 0, 0
        for q in queries:
            if client is not None:
                client.query_id = q["id"]
            opts = search.SearchOptions(
                query=q["query"],
                limit=10,
                kind=q.get("kind"),
                engine=engine,
                rerank=how["rerank"],
                expand=how["expand"],
                keywords=tuple(keywords.get(q["id"], ())) if how["keywords"] else (),
                rerank_pool=pool or search.RERANK_POOL,
            )
            t0 = time.perf_counter()
            out = search.run(opts, engines=engines, client=client, cache=cache)
            times.append((time.perf_counter() - t0) * 1000)
            d = out.diagnostics
            for stage in ("expansion", "rerank"):
                if (d.get(stage) or {}).get("status") == "failed":
                    failed += 1
            held += len((d.get("rerank") or {}).get("not_lifted", ()))
            ranked = ranked_ids(out.hits)
            m = score_query(ranked, q["relevant"], groups)
            per.append({**m, "id": q["id"], "type": q["type"], "top": ranked[:3]})
    label = mode if not pool else f"{mode}@{pool}"
    if floor is not None:
        label += f"/floor {floor:g}"
    return {
        "engine": label,
        "summary": aggregate(per),
        "per_query": per,
        "median_ms": statistics.median(times),
        "llm_failures": failed,
        "not_lifted": held,
    }


def print_summary(results: Sequence[Dict[str, Any]]) -> None:
    types = sorted({t for r in results for t in r["summary"]}, key=lambda t: (t != "all", t))
    print(f"{'engine':10} {'type':9} {'n':>3} {'nDCG@10':>8} {'R@10':>6} {'MRR@10':>7} {'S@1':>6}")
    for r in results:
        for t in types:
            s = r["summary"].get(t)
            if s:
                print(
                    f"{r['engine']:10} {t:9} {int(s['n']):3d} {s['ndcg@10']:8.3f} {s['recall@10']:6.3f} {s['mrr@10']:7.3f} {s['success@1']:6.3f}"
                )
        failures = f", {r['llm_failures']} LLM calls failed" if r.get("llm_failures") else ""
        if r.get("not_lifted"):
            failures += f", {r['not_lifted']} picks not lifted (scored under the floor)"
        print(f"{r['engine']:10} median query {r['median_ms']:.1f} ms{failures}")


def prepare_home(home: Optional[Path]) -> Path:
    if home:
        return home
    sys.path.insert(0, str(ROOT / "scripts"))
    import corpus  # type: ignore[import-not-found]

    home = Path(tempfile.mkdtemp(prefix="boost-eval-home-"))
    corpus.tap_all(home)
    return home


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path)
    ap.add_argument(
        "--engine", action="append", help="engines to score (default: lexical and bm25)"
    )
    ap.add_argument("--queries", type=Path, default=EVAL / "dev.jsonl")
    ap.add_argument("--groups", type=Path, default=EVAL / "groups.json")
    ap.add_argument("--reindex", action="store_true", help="(re)build the index in --home first")
    ap.add_argument(
        "--enrich-weight",
        type=int,
        help="with --reindex: count each enrichment's terms N times (0: none; docs/enrich.md)",
    )
    ap.add_argument("--json", type=Path, help="write full results (per query) here")
    ap.add_argument("--per-query", action="store_true", help="print each query's metrics")
    ap.add_argument("--keywords", type=Path, help="JSONL of {id, keywords}: search with them")
    ap.add_argument(
        "--pipeline",
        help="comma-separated modes of the whole search pipeline: " + ", ".join(PIPELINES),
    )
    ap.add_argument(
        "--llm-answers", type=Path, action="append", default=[], help="recorded LLM answers (JSONL)"
    )
    ap.add_argument("--pending", type=Path, help="write prompts without a recorded answer here")
    ap.add_argument("--pool", type=int, action="append", help="rerank pool sizes (default 30)")
    ap.add_argument(
        "--lift-floor",
        type=float,
        action="append",
        help="values of search.LIFT_FLOOR to score reranking modes with (default: the set one)",
    )
    args = ap.parse_args()
    if not args.queries.exists():
        print(f"no queries at {args.queries}; nothing to do", file=sys.stderr)
        return 0
    home = prepare_home(args.home)
    try:
        return _run(args, home)
    finally:
        if args.home is None:  # the corpus home made for this run only
            shutil.rmtree(home, ignore_errors=True)


def _run(args: argparse.Namespace, home: Path) -> int:
    os.environ["BOOST_HOME"] = str(home)
    if args.reindex or args.home is None:
        from boost_cli.core import index, registry

        params = None
        if args.enrich_weight is not None:
            params = index.IndexParams(enrich_weight=args.enrich_weight)
        index.build(registry.snapshots(), params=params)
    queries = load_queries(args.queries)
    groups = load_groups(args.groups)
    keywords = load_keywords(args.keywords)
    if args.pipeline:
        client = None
        if args.llm_answers or args.pending:
            sys.path.insert(0, str(ROOT / "scripts"))
            from recorded_llm import RecordedClient, load_answers

            client = RecordedClient(load_answers(args.llm_answers), args.pending)
        engine = args.engine[0] if args.engine else None
        results = []
        for mode in args.pipeline.split(","):
            uses_rerank = PIPELINES[mode]["rerank"] != "none"
            for pool in (args.pool or [None]) if uses_rerank else [None]:
                for floor in (args.lift_floor or [None]) if uses_rerank else [None]:
                    results.append(
                        evaluate_pipeline(
                            mode, queries, groups, keywords, client, engine, pool, floor
                        )
                    )
        if client is not None and client.missing:
            print(f"{client.missing} prompts had no recorded answer", file=sys.stderr)
    else:
        engines = args.engine or ["lexical", "bm25"]
        results = [evaluate(e, queries, groups, keywords) for e in engines]
    print_summary(results)
    if args.per_query:
        for r in results:
            for p in r["per_query"]:
                print(
                    f"{r['engine']:8} {p['id']:5} {p['type']:8} nDCG {p['ndcg@10']:.2f} top: {p['top'][:1]}"
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
