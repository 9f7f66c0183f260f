#!/usr/bin/env python3
"""BEIR SciFact through the hybrid engine: BM25, dense, and the hybrid's steps, end to end.

    python scripts/beir_hybrid.py [--work DIR] [--split test] [--data DIR] [--json FILE]

A check of the hybrid outside the skills it was tuned on. Each SciFact document becomes a
skill (`beir.py`'s ``desc`` layout: name = id, description = title, body = abstract) in a
git repo, tapped into ``--work``'s BOOST_HOME with the real CLI, which also builds the
BM25 index and the related-terms table; ``boost reindex --dense`` embeds it with the
configured provider (the ``[local]`` extra's MiniLM by default; kept in ``--work``, so a
second run embeds nothing). Then the 300 test claims (k = 100) through
`retrieval.get_retriever`: BM25 alone (the plain path's widening off, as the hybrid's BM25
half), dense alone, and the hybrid without the feedback search, with it, and with it and
BM25 widened from the nearest documents (the default). nDCG@10 and recall@100 as
`beir.py` computes them. Exits 0 with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from beir import DATA, doc_id, evaluate, load_corpus, load_qrels, load_queries, write_repo  # noqa: E402

K = 100


def boost(args: Sequence[str], home: Path) -> None:
    env = {**os.environ, "BOOST_HOME": str(home)}
    cmd = [sys.executable, "-m", "boost_cli", *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"boost {' '.join(args)} failed: {proc.stderr.strip()}")


def prepare(work: Path, data: Path) -> Path:
    """The home with SciFact tapped, indexed and embedded (once per --work)."""
    home = work / "home"
    repo = work / "scifact-desc"
    if not (home / "cache" / "vectors.sqlite").exists():
        if not repo.exists():
            repo.mkdir(parents=True)
            write_repo(repo, load_corpus(data / "corpus.jsonl"), "desc")
        t0 = time.perf_counter()
        boost(["tap", str(repo), "--name", "scifact"], home)
        boost(["reindex", "--dense"], home)
        print(f"tapped, indexed and embedded in {time.perf_counter() - t0:.0f} s", flush=True)
    return home


def modes(engines: Any) -> Dict[str, Any]:
    from boost_cli.core import fusion, retrieval

    hybrid = retrieval.get_retriever("hybrid", engines=engines).retriever
    dense = retrieval.get_retriever("dense", engines=engines).retriever
    bm25 = retrieval.without_related(retrieval.get_retriever("bm25", engines=engines).retriever)
    table = hybrid.related  # type: ignore[attr-defined]

    def hybrid_as(feedback: float, related: Any) -> Any:
        def query(text: str) -> Any:
            hybrid.feedback, hybrid.related = feedback, related  # type: ignore[attr-defined]
            return hybrid.query(text, k=K)

        return query

    return {
        "bm25 (task words only)": lambda text: bm25.query(text, k=K),
        "dense": lambda text: dense.query(text, k=K),
        "hybrid, no feedback": hybrid_as(0.0, None),
        "hybrid + feedback": hybrid_as(fusion.FEEDBACK, None),
        "hybrid + feedback + BM25 widened (default)": hybrid_as(fusion.FEEDBACK, table),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/boost-beir-hybrid"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    qrels_path = args.data / "qrels" / f"{args.split}.tsv"
    if not qrels_path.is_file() or not (args.data / "corpus.jsonl").is_file():
        print(f"no BEIR data in {args.data}; nothing to do", file=sys.stderr)
        return 0
    home = prepare(args.work, args.data)
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import retrieval

    queries = load_queries(args.data / "queries.jsonl")
    qrels = load_qrels(qrels_path)
    engines = retrieval.Engines()
    results: List[Dict[str, Any]] = []
    load = os.getloadavg()[0]
    for name, query in modes(engines).items():
        run: Dict[str, List[str]] = {}
        times = []
        widened = 0
        for qid in qrels:
            t0 = time.perf_counter()
            got = query(queries[qid])
            times.append((time.perf_counter() - t0) * 1000)
            widened += bool(got.related)
            run[qid] = [doc_id(h.entry.path) for h in got.hits]
        scores = evaluate(run, qrels)
        results.append({"mode": name, **scores, "median_ms": statistics.median(times)})
        print(
            f"{name:44} nDCG@10 {scores['ndcg@10']:.4f}  R@100 {scores['recall@100']:.4f}"
            f"  ({statistics.median(times):.1f} ms a query; {widened} widened)",
            flush=True,
        )
    print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
