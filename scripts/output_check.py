#!/usr/bin/env python3
"""Every dev query's full answer, to diff across trees: what a change outside the ranking
must leave byte-identical.

    python scripts/output_check.py --home DIR --tree PATH --out FILE [--cli N]

For each shape of `query_shapes.shapes()` (task, keywords, short, long, expanded) and each
query (its kind filter; limit 8), the whole JSON-RPC response of ``boost_search`` from one
``boost mcp`` server of ``--tree``, then the same shapes with no kind filter; then
``boost search --json --no-llm`` (``--keywords`` for the keyword shape) of the first ``--cli``
queries of the task and keyword shapes, each as a fresh process. One line per answer, in a
fixed order: ``cmp`` two files to compare trees (the index and the home are shared).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import query_shapes as qs  # noqa: E402


def mcp_answers(home: Path, tree: Path) -> List[str]:
    server = qs.Server(home, tree)
    out: List[str] = []
    try:
        for shape, queries in qs.shapes().items():
            for filtered in (True, False):
                for q in queries:
                    args: Dict[str, Any] = {"query": q["query"], "limit": qs.MCP_LIMIT}
                    if filtered and q["kind"]:
                        args["kind"] = q["kind"]
                    if q["keywords"]:
                        args["keywords"] = q["keywords"]
                    reply = server.request(
                        "tools/call", {"name": "boost_search", "arguments": args}
                    )
                    reply.pop("id", None)
                    out.append(json.dumps([shape, q["id"], filtered, reply], sort_keys=True))
    finally:
        server.close()
    return out


def cli_answers(home: Path, tree: Path, count: int) -> List[str]:
    out: List[str] = []
    all_shapes = qs.shapes()
    for shape in ("task", "keywords"):
        for q in all_shapes.get(shape, [])[:count]:
            cmd = [sys.executable, "-m", "boost_cli", "search", q["query"], "--json", "--no-llm"]
            cmd += ["--limit", str(qs.MCP_LIMIT)]
            if q["kind"]:
                cmd += ["--kind", q["kind"]]
            if q["keywords"]:
                cmd += ["--keywords", ",".join(q["keywords"])]
            done = subprocess.run(
                cmd, capture_output=True, env=qs.tree_env(home, tree), cwd=str(tree), check=False
            )
            out.append(json.dumps([shape, q["id"], done.returncode, done.stdout.decode("utf-8")]))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--tree", type=Path, default=qs.ROOT)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cli", type=int, default=10, help="boost search runs per shape")
    args = ap.parse_args(argv)
    if not qs.shapes():
        print("no ../shared/eval: nothing to check", file=sys.stderr)
        return 0
    tree = args.tree.resolve()
    lines = mcp_answers(args.home, tree) + cli_answers(args.home, tree, args.cli)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} answers → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
