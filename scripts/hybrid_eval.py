#!/usr/bin/env python3
"""Hybrid retrieval variants, measured with two-fold cross-validation on the dev set.

    python scripts/hybrid_eval.py --home DIR [--work DIR] [--only NAME ...] [--per-query] [--signals]
    python scripts/hybrid_eval.py --home DIR --show QUERY [--show QUERY ...] [--only NAME ...]
    python scripts/hybrid_eval.py --home DIR --latency ROUNDS

``--latency`` times the real hybrid engine in one warm process (k = 10, as `boost search`
asks), the dev queries in turn without the feedback search, with it, and with it and BM25
widened from the nearest files (the default), interleaved query by query, and prints the
median and p90 of each, wall and CPU (with the load average).

HOME is a BOOST_HOME with the corpus tapped, the BM25 index and a local (entry unit)
vector store built by the configured embedder. Every variant is replayed with the real
`fusion.fuse` (as `retrieval.HybridRetriever` runs it) over each query's BM25 candidates (200 deep)
and dense scores computed in numpy from the store's own vectors (the exact cosine of every
item: what `DenseIndex` returns, and also the cosine of items it would not return), so a
variant is scored without rebuilding anything. Extra texts a variant embeds (a vector of
the name and description alone, ...) and query vectors are cached under --work.

Each variant is reported on both halves of `dev.jsonl` (ids a* and b*) and by query type,
so a rule can be judged on the half it was not tuned on. ``--only`` picks variants by name.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval import EVAL, aggregate, load_groups, load_queries, ranked_ids, score_query  # noqa: E402

from boost_cli.core.models import Entry, Hit  # noqa: E402

K = 100  # what scripts/eval.py asks an engine for
TYPES = ("all", "task", "gap", "keyword", "kind")


class Vectors:
    """Vectors by (purpose, text) in an .npy-backed JSON-free cache."""

    def __init__(self, work: Path, config: Any) -> None:
        import numpy as np

        self.np = np
        self.work = work
        self.config = config
        work.mkdir(parents=True, exist_ok=True)
        self.path = work / "vectors.npz"
        self.data: Dict[str, Any] = {}
        if self.path.exists():
            with np.load(self.path) as z:
                self.data = {k: z[k] for k in z.files}

    def key(self, text: str, input_type: str) -> str:
        return hashlib.sha256(f"{input_type}\x1f{text}".encode()).hexdigest()[:32]

    def get(self, texts: Sequence[str], input_type: str = "document") -> Any:
        from boost_cli.core.embed import EmbedFailure, embed

        missing = [t for t in dict.fromkeys(texts) if self.key(t, input_type) not in self.data]
        if missing:
            t0 = time.perf_counter()
            outcome = embed(missing, config=self.config, input_type=input_type)
            if isinstance(outcome, EmbedFailure):
                raise SystemExit(f"cannot embed: {outcome.reason}")
            for text, vec in zip(missing, outcome.vectors):
                self.data[self.key(text, input_type)] = self.np.asarray(vec, dtype="float32")
            self.np.savez(self.path, **self.data)
            print(
                f"embedded {len(missing)} {input_type} texts in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
        return self.np.stack([self.data[self.key(t, input_type)] for t in texts])


class Corpus:
    """The store's items as numpy rows, with their entries."""

    def __init__(self, store_path: Path) -> None:
        import sqlite3

        import numpy as np

        conn = sqlite3.connect(str(store_path))
        entries = {
            eid: (Entry.from_dict(json.loads(js)), sha)
            for eid, js, sha in conn.execute(
                "SELECT entry_id, entry_json, file_sha256 FROM entries"
            )
        }
        rows = conn.execute(
            "SELECT entry_id, kind, snippet, vector FROM items WHERE chunk = -1 ORDER BY id"
        ).fetchall()
        conn.close()
        self.entries = [entries[r[0]][0] for r in rows]
        self.shas = [entries[r[0]][1] for r in rows]
        self.kinds = np.array([r[1] for r in rows])
        self.snippets = [r[2] for r in rows]
        self.matrix = np.stack([np.frombuffer(r[3], dtype="<f4") for r in rows])
        self.row_of = {e.id: i for i, e in enumerate(self.entries)}

    def hits(self, scores: Any, k: int, kind: Optional[str], tag: str = "dense") -> List[Hit]:
        """One hit per distinct file, best first (as `dense.query._hits` gives)."""
        import numpy as np

        s = scores.copy()
        if kind:
            s[self.kinds != kind] = -np.inf
        order = [i for i in np.argsort(-s, kind="stable") if np.isfinite(s[i])]
        wanted = 2 * k  # as `dense.query._nearest` asks, widening while short of k files
        while True:
            best: Dict[str, Tuple[int, List[str]]] = {}
            for i in order[:wanted]:
                key = self.shas[i] or self.entries[i].id
                if key in best:
                    best[key][1].append(self.entries[i].qualified_name)
                elif len(best) < k:
                    best[key] = (int(i), [])
            if len(best) >= k or wanted >= len(order):
                break
            wanted *= 4
        out = []
        for i, copies in best.values():
            out.append(
                Hit(
                    entry=self.entries[i],
                    score=float(s[i]),
                    snippet=self.snippets[i],
                    also_in=tuple(
                        n for n in dict.fromkeys(copies) if n != self.entries[i].qualified_name
                    ),
                    ranks={tag: len(out) + 1},
                    content_hash=self.shas[i],
                )
            )
        return out


class Fixed:
    def __init__(self, name: str, fn: Callable[[str, int, Optional[str]], List[Hit]]) -> None:
        self.name = name
        self.fn = fn

    def query(self, text, k=60, kind=None, taps=None, keywords=()):  # type: ignore[no-untyped-def]
        from boost_cli.core.retrieval import Retrieved

        return Retrieved(self.fn(text, k, kind))


def score(run: Mapping[str, Sequence[Hit]], queries, groups) -> List[Dict[str, Any]]:  # type: ignore[no-untyped-def]
    rows = []
    for q in queries:
        ranked = ranked_ids(run[q["id"]])
        rows.append(
            {**score_query(ranked, q["relevant"], groups), "id": q["id"], "type": q["type"]}
        )
    return rows


def table(name: str, rows: Sequence[Dict[str, Any]]) -> str:
    cells = []
    for half in ("a", "b", ""):
        part = [r for r in rows if r["id"].startswith(half)]
        s = aggregate(part)
        cells.append(" ".join(f"{s[t]['ndcg@10']:.3f}" if t in s else "  -  " for t in TYPES))
    return f"{name:34} | " + " | ".join(cells)


def header() -> str:
    t = " ".join(f"{x[:5]:5}" for x in TYPES)
    return f"{'variant':34} | a: {t[3:]} | b: {t[3:]} | both: {t[6:]}"


def latency(queries: Sequence[Dict[str, Any]], rounds: int) -> int:
    import statistics

    from boost_cli.core import fusion, retrieval

    engines = retrieval.Engines()
    hybrid = retrieval.get_retriever("hybrid", engines=engines).retriever
    for q in queries[:5]:  # warm-up: the model, the flat index, the BM25 reader
        hybrid.query(q["query"], k=10)
    table = hybrid.related  # type: ignore[attr-defined]
    modes = {
        "no feedback": (0.0, None),
        "feedback, BM25 not widened": (fusion.FEEDBACK, None),
        "feedback + BM25 widened (default)": (fusion.FEEDBACK, table),
    }
    times: Dict[str, List[float]] = {m: [] for m in modes}
    cpu: Dict[str, List[float]] = {m: [] for m in modes}
    load = [os.getloadavg()[0]]
    for _ in range(rounds):
        for q in queries:
            for mode, (feedback, related) in modes.items():
                hybrid.feedback = feedback  # type: ignore[attr-defined]
                hybrid.related = related  # type: ignore[attr-defined]
                t0, c0 = time.perf_counter(), time.process_time()
                hybrid.query(q["query"], k=10, kind=q.get("kind"))
                cpu[mode].append((time.process_time() - c0) * 1000)
                times[mode].append((time.perf_counter() - t0) * 1000)
    load.append(os.getloadavg()[0])
    for mode, ms in times.items():
        ms.sort()
        c = sorted(cpu[mode])
        p90 = ms[int(0.9 * (len(ms) - 1))]
        print(
            f"{mode}: wall median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms; CPU median "
            f"{statistics.median(c):.1f} ms, p90 {c[int(0.9 * (len(c) - 1))]:.1f} ms "
            f"({len(ms)} searches, load {load[0]:.1f} -> {load[1]:.1f})"
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/boost-hybrid-eval"))
    ap.add_argument("--queries", type=Path, default=EVAL / "dev.jsonl")
    ap.add_argument("--groups", type=Path, default=EVAL / "groups.json")
    ap.add_argument("--only", action="append")
    ap.add_argument("--per-query", action="store_true")
    ap.add_argument("--signals", action="store_true", help="print per-query fusion signals")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--show", action="append", default=[], help="a query: print each variant's top 3"
    )
    ap.add_argument("--latency", type=int, metavar="ROUNDS", help="time feedback on and off")
    args = ap.parse_args()
    os.environ["BOOST_HOME"] = str(args.home)
    if args.latency:
        return latency(load_queries(args.queries), args.latency)
    import hybrid_variants as variants  # type: ignore[import-not-found]
    import numpy as np

    from boost_cli.core import config as config_file
    from boost_cli.core import retrieval
    from boost_cli.core.embed import resolve_config

    queries = load_queries(args.queries)
    groups = load_groups(args.groups)
    cfg = resolve_config(config_file.load(), os.environ)
    vectors = Vectors(args.work, cfg)
    corpus = Corpus(args.home / "cache" / "vectors.sqlite")
    # The hybrid's BM25 half is the task's own words (the plain path's related-terms
    # widening is off there); the table is kept for the variants that widen from vectors.
    widening = retrieval.get_retriever("bm25").retriever
    bm25 = retrieval.without_related(widening)
    reader = bm25.reader  # type: ignore[attr-defined]
    shown = [
        {"id": f"x{i}", "query": t, "kind": None, "type": "shown", "relevant": {}}
        for i, t in enumerate(args.show)
    ]
    if shown:
        queries = shown
    lex = {q["id"]: bm25.query(q["query"], k=200, kind=q.get("kind")).hits for q in queries}
    ctx = variants.Context(
        np=np,
        queries=queries,
        corpus=corpus,
        vectors=vectors,
        lex=lex,
        groups=reader.group_keys,
        bm25=bm25,
    )
    ctx.memo["related"] = getattr(widening, "related", None)
    results = {}
    if not shown:
        print(header())
    for name, make in variants.VARIANTS.items():
        if args.only and not any(o in name for o in args.only):
            continue
        run = make(ctx)
        if shown:
            for q in shown:
                top = "; ".join(
                    f"{h.entry.name} ({h.entry.tap.split('__')[0]})" for h in run[q["id"]][:3]
                )
                print(f"{name:34} | {q['query'][:40]:40} | {top}")
            continue
        rows = score(run, queries, groups)
        results[name] = rows
        print(table(name, rows), flush=True)
    if args.signals:
        for q, r_b, r_d in zip(queries, results.get("bm25", []), results.get("dense entry", [])):
            sig = variants.signals(ctx, q)
            cells = " ".join(f"{k}={v:.2f}" for k, v in sig.items())
            print(
                f"{q['id']:4} {q['type']:8} bm25 {r_b['ndcg@10']:.2f} dense {r_d['ndcg@10']:.2f} {cells}"
            )
    if args.per_query:
        names = list(results)
        for i, q in enumerate(queries):
            cells = " ".join(f"{results[n][i]['ndcg@10']:.2f}" for n in names)
            print(f"{q['id']:4} {q['type']:8} {cells}  {q['query'][:60]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
