#!/usr/bin/env python3
"""Dense and hybrid retrieval, measured: fusion sweeps, entry vs chunk text units, latency.

    python scripts/dense_eval.py fusion  --home DIR [--qcache FILE] [--json FILE]
    python scripts/dense_eval.py units   --home entry=DIR --home chunk=DIR [--report unit=FILE]
    python scripts/dense_eval.py latency --home DIR [--reps 10] [--python PY] [--warm-rounds 3]

Every HOME is a BOOST_HOME with taps, the BM25 index and a dense store built with the
embedder configured in the environment (BOOST_EMBED_BASE_URL, BOOST_EMBED_MODEL, ...;
see docs/dense.md). Scoring reuses scripts/eval.py (`score_query`, `aggregate`, the
duplicate groups). Query vectors are cached in --qcache (JSON, keyed by embedder and
text), so a sweep embeds each dev query once, ever; the latency runs do not use it.

`fusion` retrieves each query's BM25 and dense candidates once (--max-depth deep) and
replays `retrieval.HybridRetriever` over them for every method, RRF k / weights, and depth,
exactly as `boost search` runs it (k = 60, copies collapsed by content). It prints the
grids so a choice can be judged by its neighbourhood, not its peak.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval import EVAL, aggregate, load_groups, load_queries, ranked_ids, score_query  # noqa: E402

from boost_cli.core.models import Hit  # noqa: E402

CANDIDATES = 60  # what the hybrid engine fuses per engine (fusion.DEPTH)
METRICS = ("ndcg@10", "recall@10", "mrr@10", "success@1")
RRF_KS = (5, 10, 20, 30, 60, 100)
DENSE_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
DEPTHS = (20, 40, 60, 100, 200)
DEFAULT_QCACHE = Path(tempfile.gettempdir()) / "boost-dense-eval-qvectors.json"


# --------------------------------------------------------------------------- query vectors


class QueryVectors:
    """Query embeddings by (provider, model, dimensions, text), in a JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: Dict[str, List[float]] = {}
        if path.exists():
            self.data = json.loads(path.read_text())

    @staticmethod
    def key(config: Any, text: str) -> str:
        from boost_cli.core.embed import cache_model

        raw = f"{config.provider}\x1f{cache_model(config)}\x1f{config.dimensions or 0}\x1f{text}"
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def get(self, config: Any, texts: Sequence[str]) -> Dict[str, List[float]]:
        """``{text: vector}`` for ``texts``, embedding (as queries) only the missing ones."""
        from boost_cli.core.embed import EmbedFailure, embed

        missing = [t for t in dict.fromkeys(texts) if self.key(config, t) not in self.data]
        if missing:
            outcome = embed(missing, config=config, input_type="query")
            if isinstance(outcome, EmbedFailure):
                raise SystemExit(f"cannot embed the queries: {outcome.reason}")
            for text, vector in zip(missing, outcome.vectors):
                self.data[self.key(config, text)] = vector
            self.path.write_text(json.dumps(self.data))
        return {t: self.data[self.key(config, t)] for t in texts}


def embed_config() -> Any:
    from boost_cli.core import config as config_file
    from boost_cli.core.embed import resolve_config

    cfg = resolve_config(config_file.load(), os.environ)
    if cfg is None:
        raise SystemExit("no embedding provider configured: set BOOST_EMBED_BASE_URL etc.")
    return cfg


# --------------------------------------------------------------------------- candidates


class Fixed:
    """A retriever that replays precomputed hits (``name`` bm25 or dense)."""

    def __init__(self, name: str, hits: Mapping[str, Sequence[Hit]]) -> None:
        self.name = name
        self.hits = hits

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Any:
        from boost_cli.core.retrieval import Retrieved

        return Retrieved(list(self.hits[text][:k]))


def candidates(
    home: Path, queries: Sequence[Dict[str, Any]], depth: int, qcache: Path
) -> Tuple[Dict[str, List[Hit]], Dict[str, List[Hit]]]:
    """Each query's BM25 and dense hits, ``depth`` deep, with the home's indexes."""
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import dense, retrieval

    bm25 = retrieval.get_retriever("bm25").retriever
    config = embed_config()
    vectors = QueryVectors(qcache).get(config, [q["query"] for q in queries])
    index = dense.DenseIndex(config)
    status = index.status()
    if not status.ready:
        raise SystemExit(f"the dense store in {home} is not ready: {status.reason}")
    lex: Dict[str, List[Hit]] = {}
    sem: Dict[str, List[Hit]] = {}
    for q in queries:
        lex[q["query"]] = bm25.query(q["query"], k=depth, kind=q.get("kind")).hits
        sem[q["query"]] = index.search_vector(vectors[q["query"]], k=depth, kind=q.get("kind"))
    return lex, sem


def score_run(
    run: Mapping[str, Sequence[Hit]],
    queries: Sequence[Dict[str, Any]],
    groups: Mapping[str, str],
) -> List[Dict[str, Any]]:
    """Per-query metrics of ``{query text: hits}`` after collapsing copies, as search does."""
    from boost_cli.core.fusion import collapse

    rows = []
    for q in queries:
        ranked = ranked_ids(collapse(run[q["query"]], lambda h: h.content_hash))
        rows.append(
            {**score_query(ranked, q["relevant"], groups), "id": q["id"], "type": q["type"]}
        )
    return rows


def hybrid_run(
    lex: Mapping[str, Sequence[Hit]],
    sem: Mapping[str, Sequence[Hit]],
    queries: Sequence[Dict[str, Any]],
    **params: Any,
) -> Dict[str, List[Hit]]:
    from boost_cli.core.retrieval import HybridRetriever

    hybrid = HybridRetriever(Fixed("bm25", lex), Fixed("dense", sem), **params)
    # The retriever fuses max(k, depth) candidates per engine: a depth under 60 needs k = depth.
    k = min(CANDIDATES, hybrid.depth)
    return {q["query"]: hybrid.query(q["query"], k=k, kind=q.get("kind")).hits for q in queries}


# --------------------------------------------------------------------------- fusion


SCORE_NORMS = (("max", "max"), ("max", "unit"), ("max", "minmax"), ("max", "raw"))
SCORE_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)


def configs() -> Iterable[Tuple[str, Dict[str, Any]]]:
    for depth in DEPTHS:
        for k in RRF_KS:
            yield f"rrf k={k} depth={depth}", {"method": "rrf", "rrf_k": k, "depth": depth}
        for w in DENSE_WEIGHTS:
            weights = {"bm25": round(1 - w, 2), "dense": w}
            yield (
                f"minmax dense={w} depth={depth}",
                {"method": "minmax", "weights": weights, "depth": depth},
            )
        for lex_norm, sem_norm in SCORE_NORMS:
            for w in SCORE_WEIGHTS:
                for floor in (False, True):
                    weights = {"bm25": round(1 - w, 2), "dense": w}
                    norms = {"bm25": lex_norm, "dense": sem_norm}
                    yield (
                        f"scores {lex_norm}/{sem_norm} dense={w}{' floor' if floor else ''}"
                        f" depth={depth}",
                        {
                            "method": "scores",
                            "weights": weights,
                            "norms": norms,
                            "floor": floor,
                            "depth": depth,
                        },
                    )


def cmd_fusion(args: argparse.Namespace) -> int:
    queries = load_queries(args.queries)
    groups = load_groups(args.groups)
    t0 = time.perf_counter()
    lex, sem = candidates(args.home, queries, args.max_depth, args.qcache)
    print(f"candidates for {len(queries)} queries in {time.perf_counter() - t0:.1f} s")
    results: Dict[str, Dict[str, Any]] = {}
    cut = {text: hits[:CANDIDATES] for text, hits in lex.items()}
    results["bm25"] = summarise(score_run(cut, queries, groups))
    cut = {text: hits[:CANDIDATES] for text, hits in sem.items()}
    results["dense"] = summarise(score_run(cut, queries, groups))
    for name, params in configs():
        run = hybrid_run(lex, sem, queries, **params)
        results[name] = {**summarise(score_run(run, queries, groups)), "params": params}
    print_fusion(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def summarise(per_query: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    return {"summary": aggregate(per_query), "per_query": list(per_query)}


def _grid(results: Mapping[str, Dict[str, Any]], method: str, values: Sequence[Any]) -> None:
    label = "k" if method == "rrf" else "w_dense"
    print(f"\n{method}: nDCG@10 (all) by {label} (rows) and depth (columns)")
    print(f"{label:>8} " + " ".join(f"{d:>6}" for d in DEPTHS))
    for v in values:
        cells = []
        for d in DEPTHS:
            name = f"rrf k={v} depth={d}" if method == "rrf" else f"minmax dense={v} depth={d}"
            cells.append(f"{results[name]['summary']['all']['ndcg@10']:6.3f}")
        print(f"{v!s:>8} " + " ".join(cells))


def _score_grid(results: Mapping[str, Dict[str, Any]]) -> None:
    for lex_norm, sem_norm in SCORE_NORMS:
        for floor in ("", " floor"):
            print(
                f"\nscores bm25/{lex_norm} + cosine/{sem_norm}{floor}: nDCG@10 (all) by "
                "w_dense (rows) and depth (columns)"
            )
            print(f"{'w_dense':>8} " + " ".join(f"{d:>6}" for d in DEPTHS))
            for w in SCORE_WEIGHTS:
                name = f"scores {lex_norm}/{sem_norm} dense={w}{floor} depth={{}}"
                cells = [
                    f"{results[name.format(d)]['summary']['all']['ndcg@10']:6.3f}" for d in DEPTHS
                ]
                print(f"{w!s:>8} " + " ".join(cells))


def print_fusion(results: Mapping[str, Dict[str, Any]]) -> None:
    _grid(results, "rrf", RRF_KS)
    _grid(results, "minmax", DENSE_WEIGHTS)
    _score_grid(results)
    ranked = sorted(
        (n for n in results if n not in ("bm25", "dense")),
        key=lambda n: -results[n]["summary"]["all"]["ndcg@10"],
    )
    print("\nbest ten, and the baselines (nDCG@10 per type)")
    print_table(results, ["bm25", "dense", *ranked[:10]])


def print_table(results: Mapping[str, Dict[str, Any]], names: Sequence[str]) -> None:
    types = ("all", "task", "gap", "keyword", "kind")
    print(
        f"{'run':32} " + " ".join(f"{t:>8}" for t in types) + f" {'R@10':>6} {'MRR':>6} {'S@1':>6}"
    )
    for name in names:
        s = results[name]["summary"]
        cells = " ".join(f"{s[t]['ndcg@10']:8.3f}" if t in s else f"{'-':>8}" for t in types)
        a = s["all"]
        print(f"{name:32} {cells} {a['recall@10']:6.3f} {a['mrr@10']:6.3f} {a['success@1']:6.3f}")


def paired(a: Sequence[Dict[str, Any]], b: Sequence[Dict[str, Any]]) -> str:
    """Wins/ties/losses of run ``a`` over ``b`` on per-query nDCG@10."""
    wins = sum(1 for x, y in zip(a, b) if x["ndcg@10"] > y["ndcg@10"] + 1e-9)
    losses = sum(1 for x, y in zip(a, b) if x["ndcg@10"] < y["ndcg@10"] - 1e-9)
    return f"{wins} better, {len(a) - wins - losses} equal, {losses} worse"


# --------------------------------------------------------------------------- units


def cmd_units(args: argparse.Namespace) -> int:
    homes = dict(_pair(h) for h in args.home)
    reports = dict(_pair(r) for r in args.report or [])
    queries = load_queries(args.queries)
    groups = load_groups(args.groups)
    taps = {p.name for home in homes.values() for p in (Path(home) / "repos").iterdir()}
    subset = []
    for q in queries:
        rel = {d: g for d, g in q["relevant"].items() if d.split("/", 1)[0] in taps}
        if any(g > 0 for g in rel.values()):
            subset.append({**q, "relevant": rel})
    print(f"taps: {', '.join(sorted(taps))}")
    print(f"{len(subset)} of {len(queries)} dev queries have a relevant document in them")
    results: Dict[str, Dict[str, Any]] = {}
    from boost_cli.core.retrieval import HybridRetriever

    defaults = HybridRetriever(Fixed("bm25", {}), Fixed("dense", {}))
    params = {"method": defaults.method, "rrf_k": defaults.rrf_k, "weights": defaults.weights}
    for unit, home in homes.items():
        lex, sem = candidates(Path(home), subset, 200, args.qcache)
        if "bm25" not in results:
            cut = {t: h[:CANDIDATES] for t, h in lex.items()}
            results["bm25"] = summarise(score_run(cut, subset, groups))
        cut = {t: h[:CANDIDATES] for t, h in sem.items()}
        results[f"dense ({unit})"] = summarise(score_run(cut, subset, groups))
        run = hybrid_run(lex, sem, subset, depth=defaults.depth, **params)
        results[f"hybrid ({unit})"] = summarise(score_run(run, subset, groups))
        store = Path(home) / "cache" / "vectors.sqlite"
        size = store.stat().st_size if store.exists() else 0
        line = f"{unit}: store {size / 1e6:.1f} MB"
        if unit in reports:
            rep = json.loads(Path(reports[unit]).read_text()).get("dense", {})
            line += (
                f", {rep.get('texts')} vectors, {rep.get('sent')} texts embedded "
                f"({rep.get('chars_sent', 0) / 1e6:.1f} M chars) in {rep.get('seconds', 0):.0f} s"
            )
        print(line)
    print_table(results, list(results))
    base = results["bm25"]["per_query"]
    for name in results:
        if name != "bm25":
            print(f"{name} vs bm25: {paired(results[name]['per_query'], base)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _pair(text: str) -> Tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        raise SystemExit(f"expected NAME=VALUE, not {text!r}")
    return name, value


# --------------------------------------------------------------------------- latency


def cmd_latency(args: argparse.Namespace) -> int:
    queries = load_queries(args.queries)
    texts = [(q["query"], q.get("kind")) for q in queries]
    out: Dict[str, Any] = {}
    for engine in args.engine:
        cold = cold_cli(args.home, engine, texts[: args.reps], args.python, args.pycache)
        out[f"{engine} cold"] = cold
        print(
            f"{engine:7} cold CLI ({args.python}{', bytecode cached' if args.pycache else ''}): "
            f"median {statistics.median(cold):.0f} ms over {len(cold)} runs "
            f"(min {min(cold):.0f}, max {max(cold):.0f})"
        )
    if args.python == sys.executable:
        os.environ["BOOST_HOME"] = str(args.home)
        for engine in args.engine:
            warm = warm_search(engine, texts, args.warm_rounds)
            out[f"{engine} warm"] = warm
            print(
                f"{engine:7} warm search.run: median {statistics.median(warm):.1f} ms, "
                f"p95 {percentile(warm, 95):.1f} ms over {len(warm)} queries"
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def cold_cli(
    home: Path,
    engine: str,
    texts: Sequence[Tuple[str, Optional[str]]],
    python: str,
    pycache: Optional[Path] = None,
) -> List[float]:
    """Wall time of a whole `boost search --engine E --no-rerank` process per query.

    With ``pycache``, bytecode is cached there (PYTHONPYCACHEPREFIX, outside the tree) and
    one untimed run fills it first, as an installed package would have it; without, the
    environment decides (PYTHONDONTWRITEBYTECODE=1 means every run compiles the sources)."""
    env = {**os.environ, "BOOST_HOME": str(home), "PYTHONPATH": str(ROOT)}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
        texts = [texts[0], *texts]
    times = []
    for text, kind in texts:
        argv = [python, "-m", "boost_cli", "search", "--engine", engine, "--no-rerank", text]
        if kind:
            argv[-1:-1] = ["--kind", kind]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=str(ROOT))
        times.append((time.perf_counter() - t0) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"boost search failed ({proc.returncode}): {proc.stderr.strip()}")
    return times[1:] if pycache is not None else times


def warm_search(
    engine: str, texts: Sequence[Tuple[str, Optional[str]]], rounds: int
) -> List[float]:
    """Per-query ms of `search.run` in this process after one warm-up round (what a
    long-lived MCP server pays): engine open, query embedding, retrieval, collapse."""
    from boost_cli.core import search

    def once(text: str, kind: Optional[str]) -> float:
        opts = search.SearchOptions(query=text, kind=kind, rerank="none", engine=engine)
        t0 = time.perf_counter()
        search.run(opts)
        return (time.perf_counter() - t0) * 1000

    for text, kind in texts:
        once(text, kind)
    return [once(text, kind) for _ in range(rounds) for text, kind in texts]


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--queries", type=Path, default=EVAL / "dev.jsonl")
    common.add_argument("--groups", type=Path, default=EVAL / "groups.json")
    common.add_argument("--qcache", type=Path, default=DEFAULT_QCACHE)
    common.add_argument("--json", type=Path, help="write the full results here")
    f = sub.add_parser("fusion", parents=[common], help="sweep fusion methods on the dev set")
    f.add_argument("--home", type=Path, required=True)
    f.add_argument("--max-depth", type=int, default=max(DEPTHS))
    u = sub.add_parser("units", parents=[common], help="entry vs chunk vectors on a subset")
    u.add_argument("--home", action="append", required=True, help="UNIT=DIR, one per unit")
    u.add_argument("--report", action="append", help="UNIT=FILE: `reindex --dense --json` output")
    lat = sub.add_parser("latency", parents=[common], help="cold CLI and warm in-process latency")
    lat.add_argument("--home", type=Path, required=True)
    lat.add_argument("--engine", action="append", help="default: bm25, dense, hybrid")
    lat.add_argument("--reps", type=int, default=10, help="cold CLI runs per engine")
    lat.add_argument("--warm-rounds", type=int, default=3)
    lat.add_argument("--python", default=sys.executable, help="interpreter for the cold runs")
    lat.add_argument(
        "--pycache", type=Path, help="cache bytecode here for the cold runs (as installed)"
    )
    args = ap.parse_args()
    if args.cmd == "latency" and not args.engine:
        args.engine = ["bm25", "dense", "hybrid"]
    return {"fusion": cmd_fusion, "units": cmd_units, "latency": cmd_latency}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
