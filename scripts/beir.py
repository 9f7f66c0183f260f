#!/usr/bin/env python3
"""BEIR SciFact with the BM25 engine, end to end: nDCG@10 and recall@100 per variant.

    python scripts/beir.py [--split test] [--data DIR] [--json FILE]

Each SciFact document becomes ``docs/<id>/SKILL.md`` in a git repo that is tapped into a
temporary BOOST_HOME, indexed with `index.build` and queried with ``k=100`` through
`IndexReader.query`, so the scores come from the real catalog scan, chunker, tokenizer,
index and aggregation. Two layouts of the same documents:

- ``desc``: frontmatter ``name: <id>``, ``description: <title>``, body = abstract. With
  the context prefix on, the title is scored with every chunk (with one chunk a
  document: title + text once, as BEIR's BM25 baselines index it); with it off the
  title is not scored at all;
- ``body``: the same, but the body is title, blank line, abstract; for the variants
  without prefix (title scored once, in the first chunk).

Variants: the engine's defaults (chunks of ~1,000 characters, overlap 150, prefix,
the default aggregation), chunking effectively off (``chunk_target`` 100,000: one chunk a document),
prefix on and off, other aggregations and BM25 parameters at query time.

Metrics as BEIR computes them with pytrec_eval: nDCG@10 with gain = grade and discount
log2(rank + 1), ideal ranking from the qrels; recall@100 = relevant documents in the
top 100 / relevant documents; both averaged over the split's queries.
Exits 0 with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from boost_cli.core import index  # noqa: E402
from boost_cli.core.tokenize import query_weights  # noqa: E402

SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "beir" / "scifact"
WHOLE = 100_000  # a chunk target no SciFact abstract reaches: one chunk a document
GIT_ENV = {
    "GIT_AUTHOR_NAME": "beir",
    "GIT_AUTHOR_EMAIL": "beir@example.invalid",
    "GIT_COMMITTER_NAME": "beir",
    "GIT_COMMITTER_EMAIL": "beir@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


# --------------------------------------------------------------------------- data and metrics


def load_corpus(path: Path) -> List[Dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_queries(path: Path) -> Dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            out[str(q["_id"])] = str(q["text"])
    return out


def load_qrels(path: Path) -> Dict[str, Dict[str, int]]:
    """``query-id → {corpus-id: grade}`` from a BEIR qrels TSV (header line skipped)."""
    out: Dict[str, Dict[str, int]] = {}
    for n, line in enumerate(path.read_text().splitlines()):
        parts = line.split("\t")
        if n == 0 and parts[0] == "query-id" or len(parts) < 3:
            continue
        out.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return out


def ndcg_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    """trec_eval's ndcg_cut: ``Σ grade / log2(rank + 1)`` over the top ``k``, over the same
    sum for the ideal order of the judged grades; 0.0 when nothing is relevant."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 100) -> float:
    """Relevant documents in the top ``k`` over all relevant ones; 0.0 when there are none."""
    relevant = {d for d, g in rels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def evaluate(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]
) -> Dict[str, float]:
    """Mean nDCG@10 and recall@100 over the queries of ``qrels`` (missing runs score 0)."""
    ndcg = [ndcg_at_k(run.get(q, ()), rels, 10) for q, rels in qrels.items()]
    recall = [recall_at_k(run.get(q, ()), rels, 100) for q, rels in qrels.items()]
    return {"ndcg@10": statistics.fmean(ndcg), "recall@100": statistics.fmean(recall)}


# --------------------------------------------------------------------------- documents as a tap


def yaml_quote(text: str) -> str:
    """``text`` as a single-quoted YAML scalar on one line."""
    return "'" + " ".join(text.split()).replace("'", "''") + "'"


def skill_file(doc: Mapping[str, str], layout: str) -> str:
    """One SciFact document as a SKILL.md (see the module docstring for the layouts)."""
    title, text = doc.get("title", ""), doc.get("text", "")
    body = f"{title}\n\n{text}" if layout == "body" and title else text
    return (
        f"---\nname: {yaml_quote(str(doc['_id']))}\n"
        f"description: {yaml_quote(title or str(doc['_id']))}\n---\n{body}\n"
    )


def doc_id(path: str) -> str:
    """The corpus id of an entry path ``docs/<id>/SKILL.md``."""
    return path.split("/")[1]


def write_repo(folder: Path, docs: Sequence[Mapping[str, str]], layout: str) -> None:
    """``folder`` as a one-commit git repo holding ``docs/<id>/SKILL.md`` per document."""
    for doc in docs:
        path = folder / "docs" / str(doc["_id"]) / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(skill_file(doc, layout), encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "docs"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


# --------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Variant:
    name: str
    layout: str  # "desc" | "body"
    chunk_target: int
    prefix: bool
    aggregation: str = index.IndexParams().aggregation
    k1: Optional[float] = None  # None: the index's (bm25.K1)
    b: Optional[float] = None
    related: bool = False  # widen each query with the related-terms table (`core/related`)


VARIANTS = (
    Variant(
        f"engine defaults: chunks 1000/150, prefix, {index.IndexParams().aggregation}",
        "desc",
        1000,
        True,
    ),
    Variant(
        "  same, widened with related terms (the plain path)", "desc", 1000, True, related=True
    ),
    Variant("  same, max aggregation", "desc", 1000, True, "max"),
    Variant("  same, max2 aggregation", "desc", 1000, True, "max2"),
    Variant("chunks, no prefix, title in body", "body", 1000, False),
    Variant("  same, max aggregation", "body", 1000, False, "max"),
    Variant("  same, max2 aggregation", "body", 1000, False, "max2"),
    Variant("whole doc, prefix (title + text once)", "desc", WHOLE, True),
    Variant("  same, k1=0.9 b=0.4 (Anserini)", "desc", WHOLE, True, k1=0.9, b=0.4),
    Variant("whole doc, no prefix, title in body", "body", WHOLE, False),
    Variant("whole doc, no prefix, text only", "desc", WHOLE, False),
)


def run_variants(
    data: Path, split: str, variants: Sequence[Variant], work: Path, dump: Optional[Path] = None
) -> List[Dict[str, Any]]:
    os.environ["BOOST_HOME"] = str(work / "home")
    from boost_cli.core import index, registry

    docs = load_corpus(data / "corpus.jsonl")
    queries = load_queries(data / "queries.jsonl")
    qrels = load_qrels(data / "qrels" / f"{split}.tsv")
    titles = {str(d["_id"]): " ".join(d.get("title", "").split()) for d in docs}
    for layout in sorted({v.layout for v in variants}):
        repo = work / f"scifact-{layout}"
        write_repo(repo, docs, layout)
        info, scan = registry.add(str(repo), name=f"scifact-{layout}")
        if len(scan.entries) != len(docs):
            raise SystemExit(f"the scan found {len(scan.entries)} of {len(docs)} documents")
        clipped = sum(e.description != titles[doc_id(e.path)] for e in scan.entries)
        print(f"tapped {info.name}: {len(scan.entries)} documents ({clipped} titles clipped)")
    results: List[Dict[str, Any]] = []
    built: Optional[Tuple[str, int, bool]] = None
    build_s, chunks = 0.0, 0
    for v in variants:
        key = (v.layout, v.chunk_target, v.prefix)
        if key != built:
            params = index.IndexParams(chunk_target=v.chunk_target)
            report = index.build(
                registry.snapshots([f"scifact-{v.layout}"]), params=params, use_prefix=v.prefix
            )
            built, build_s = key, report.seconds
            chunks = report.chunks
        reader = index.open_index()
        if reader is None:
            raise SystemExit("no index after the build")
        table = None
        if v.related:
            from boost_cli.core import related
            from boost_cli.core.tokenize import tokenize

            (snap,) = registry.snapshots([f"scifact-{v.layout}"])
            table = related.build(tokenize(f"{e.name}. {e.description}") for e in snap.entries)
        run: Dict[str, List[str]] = {}
        scored: Dict[str, List[List[str]]] = {}
        times = []
        for qid in qrels:
            t0 = time.perf_counter()
            weights = query_weights(queries[qid])
            if table is not None:
                weights.update(table.expand(weights))
            hits = reader.query(
                k=100,
                weights=weights,
                aggregation=v.aggregation,
                k1=v.k1,
                b=v.b,
                snippets=False,
            )
            times.append((time.perf_counter() - t0) * 1000)
            run[qid] = [doc_id(h.entry.path) for h in hits]
            scored[qid] = [[doc_id(h.entry.path), repr(h.score)] for h in hits]
        reader.close()
        if dump is not None:  # the whole ranking, to compare two versions exactly
            with open(dump, "a", encoding="utf-8") as fh:
                for qid in qrels:
                    fh.write(json.dumps({"variant": v.name, "id": qid, "hits": scored[qid]}) + "\n")
        scores = evaluate(run, qrels)
        results.append(
            {
                "variant": v.name,
                "params": {
                    "layout": v.layout,
                    "chunk_target": v.chunk_target,
                    "prefix": v.prefix,
                    "aggregation": v.aggregation,
                    "k1": v.k1,
                    "b": v.b,
                    "related": v.related,
                },
                **scores,
                "queries": len(qrels),
                "chunks": chunks,
                "build_s": build_s,
                "query_median_ms": statistics.median(times),
            }
        )
        print(
            f"{v.name:48} nDCG@10 {scores['ndcg@10']:.4f}  R@100 {scores['recall@100']:.4f}"
            f"  ({chunks} chunks, build {build_s:.1f} s, query {statistics.median(times):.1f} ms)",
            flush=True,
        )
    return results


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="test", help="qrels split (default: test)")
    ap.add_argument("--data", type=Path, default=DATA, help="the BEIR scifact folder")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--dump", type=Path, help="write every query's top 100 (ids, scores) here")
    ap.add_argument("--first", type=int, help="run only the first N variants (1: the defaults)")
    args = ap.parse_args(argv)
    needed = [args.data / "corpus.jsonl", args.data / "queries.jsonl"]
    needed.append(args.data / "qrels" / f"{args.split}.tsv")
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        print(f"no BEIR data ({', '.join(missing)} missing); nothing to do", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="boost-beir-") as tmp:
        if args.dump is not None:
            args.dump.write_text("")
        variants = VARIANTS[: args.first] if args.first else VARIANTS
        results = run_variants(args.data, args.split, variants, Path(tmp), args.dump)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
