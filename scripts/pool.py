#!/usr/bin/env python3
"""Pool candidates for judging a new query set, and merge the grades back into it.

    python scripts/pool.py pool --home DIR --queries Q.jsonl --out POOL.jsonl [--depth 15]
    python scripts/pool.py merge --queries Q.jsonl --grades G.jsonl [--grades ...] --out SET.jsonl

``pool``: for each query (``{"id", "query", "kind", "type", "target"}``), the first ``depth``
duplicate groups of every engine ready in DIR (lexical, bm25, dense, hybrid: BOOST_HOME with
the corpus tapped as `scripts/corpus.py` does, ideally with a local vector store), plus the
query's target, one member per group, in an order that says nothing of which engine found it
(sorted by a hash of the doc id). Each candidate carries its name, description and the
start of its body, which is what a judge reads. Scoring at group level
(`scripts/eval.py`) gives a judged doc's grade to every copy in its group.

``merge``: grades (``{"id", "grades": {doc id: 0 | 1 | 2}}`` per line, from one or more
judges) become the ``relevant`` map of each query (grades 1 and 2 kept), in the format of
``../shared/eval/dev.jsonl``, so `scripts/eval.py --queries SET.jsonl` scores it. A query
with no grade-2 doc is dropped (and said so on stderr).

The pool comes from this tool's own engines (as the shared judgments were pooled from
several lexical methods): a doc none of them ranks in its first ``depth`` groups counts as
not relevant, which favours these engines over one that finds good unjudged docs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval import EVAL, load_groups, load_queries, run_engine  # noqa: E402

ENGINES = ("lexical", "bm25", "dense", "hybrid")
EXCERPT = 700  # characters of the body a judge reads


def describe(doc: str, home: Path) -> Dict[str, str]:
    """Name, description and the start of the body of ``doc`` (tap/path) in ``home``."""
    from boost_cli.core.frontmatter import parse

    tap, _, path = doc.partition("/")
    raw = (home / "repos" / tap / path).read_bytes()[:200_000].decode("utf-8", "replace")
    meta, body = parse(raw)
    return {
        "doc": doc,
        "name": str(meta.get("name") or Path(path).stem),
        "description": str(meta.get("description") or "")[:600],
        "excerpt": " ".join(body.split())[:EXCERPT],
    }


def pool(args: argparse.Namespace) -> int:
    os.environ["BOOST_HOME"] = str(args.home)
    from boost_cli.core.errors import BoostError

    queries = load_queries(args.queries)
    groups = load_groups(args.groups)
    found: Dict[str, Dict[str, str]] = {q["id"]: {} for q in queries}  # id → group → doc
    for engine in ENGINES:
        try:
            rows = run_engine(engine, queries, k=args.depth * 8)
        except BoostError as exc:  # an engine not ready in this home: left out, said why
            print(f"{engine}: not pooled ({exc})", file=sys.stderr)
            continue
        for row in rows:
            taken = found[row["id"]]
            seen = set()
            for doc in row["ranked"]:
                g = groups.get(doc, doc)
                if g in seen:
                    continue
                seen.add(g)
                taken.setdefault(g, doc)
                if len(seen) >= args.depth:
                    break
        print(f"{engine}: pooled", file=sys.stderr)
    with args.out.open("w") as out:
        for q in queries:
            taken = found[q["id"]]
            if q.get("target"):
                taken.setdefault(groups.get(q["target"], q["target"]), q["target"])
            docs = sorted(taken.values(), key=lambda d: hashlib.sha256(d.encode()).hexdigest())
            cands = [describe(d, args.home) for d in docs]
            out.write(
                json.dumps(
                    {k: q.get(k) for k in ("id", "query", "kind", "type")} | {"candidates": cands}
                )
                + "\n"
            )
    sizes = [len(v) for v in found.values()]
    print(f"{len(queries)} queries, {sum(sizes)} candidates ({min(sizes)}-{max(sizes)} a query)")
    return 0


def merge(args: argparse.Namespace) -> int:
    grades: Dict[str, Dict[str, int]] = {}
    for path in args.grades:
        for row in load_queries(path):
            grades.setdefault(row["id"], {}).update(
                {d: int(g) for d, g in row["grades"].items() if int(g) in (0, 1, 2)}
            )
    kept: List[Dict[str, Any]] = []
    for q in load_queries(args.queries):
        rel = {d: g for d, g in grades.get(q["id"], {}).items() if g > 0}
        if 2 not in rel.values():
            print(f"{q['id']}: no grade-2 doc, dropped", file=sys.stderr)
            continue
        kept.append({**q, "relevant": rel})
    args.out.write_text("".join(json.dumps(q) + "\n" for q in kept))
    print(f"{len(kept)} queries with judgments -> {args.out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pool")
    p.add_argument("--home", type=Path, required=True)
    p.add_argument("--queries", type=Path, required=True)
    p.add_argument("--groups", type=Path, default=EVAL / "groups.json")
    p.add_argument("--depth", type=int, default=15)
    p.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("merge")
    m.add_argument("--queries", type=Path, required=True)
    m.add_argument("--grades", type=Path, action="append", required=True)
    m.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    return pool(args) if args.cmd == "pool" else merge(args)


if __name__ == "__main__":
    sys.exit(main())
