#!/usr/bin/env python3
"""What a cold long query would cost with perfect bounds: the floor of the ranking as built.

    python scripts/bound_floor.py --home DIR1X --home DIR10X [--runs N] [--shape long]
        [--json FILE]

The BM25 top k (`index.bounds`) bounds every content from its content postings, then
scores exactly, best bound first, each content whose bound can still reach the k-th best.
The bounds are loose (a long task's exact scores are a median ~0.55-0.6 of their bounds),
so most exact scores change nothing: at 10x the corpus (ten near-copies of every skill)
a 20-word task scores ~900 contents exactly and ~140 of them enter the top k or raise
their group's score. This script measures how much of a cold ``boost search`` that is,
by running the ranking with an *oracle*: the contents whose exact score changes the top
k are recorded first (one in-process query), then cold processes skip everything else:

- ``oracle-exact``: the exact score of a content outside the recorded set is skipped;
- ``oracle-pick``: such a content is not even bounded (no bisections of the skipped
  terms, no bound): what the ranking would cost if every bound were the exact score.

The accumulation of the content postings (the bounds' first pass), the tiers' reads, the
hits and the start-up stay. Each round runs ``python -c pass``, then every mode at every
home (the same wrapper process for all modes, so only the oracle differs); the output of
each oracle run is checked against the plain run's (the same ranking, byte for byte).
Reports medians and p90 of wall and CPU (``wait4``), each mode's ratio to ``python -c
pass`` in its round, and the last home's time over the first home's per mode (the
issue-21 target: cold long query at 10x ≤ 1.5x its 1x time). Records ``uptime``'s load.
Exits 0 with a message when ../shared/eval is absent.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import query_shapes  # noqa: E402  (the shapes, the load, the process runner)

MODES = ("plain", "oracle-exact", "oracle-pick")

# The child: records the contents that change the top k (RECORD=file), or runs the CLI
# with the oracle (ORACLE=file, MODE=oracle-exact|oracle-pick), or plainly.
CHILD = r"""
import json, os, sys
from boost_cli.core.index import bounds
mode = os.environ.get("MODE", "plain")
B = bounds.BoundRanker
if os.environ.get("RECORD"):
    needed = set()
    offer = B._offer
    def _offer(self, gcid, vals, field):
        top = self.top
        before = (top.kth(), dict(top.best))
        offer(self, gcid, vals, field)
        if (top.kth(), top.best) != before:
            needed.add(gcid)
    B._offer = _offer
elif mode != "plain":
    with open(os.environ["ORACLE"]) as fh:
        needed = set(json.load(fh))
    if mode == "oracle-exact":
        exact = B._exact
        def _exact(self, gcid, field):
            if gcid in needed:
                exact(self, gcid, field)
        B._exact = _exact
    else:
        accumulate = B.accumulate
        def _accumulate(self, theta=float("-inf")):
            accumulate(self, theta)
            n, ob = len(self.done), self.ob
            done = self.done = bytearray(b"\x01") * n
            for j in needed:
                if ob <= j < ob + n:
                    done[j - ob] = 0
        B.accumulate = _accumulate
from boost_cli import cli
code = cli.main(sys.argv[1:])
if os.environ.get("RECORD"):
    with open(os.environ["RECORD"], "w") as fh:
        json.dump(sorted(needed), fh)
sys.exit(code)
"""


def _env(home: Path, **extra: str) -> Dict[str, str]:
    """This tree's environment for ``home`` (`query_shapes.tree_env`), plus ``extra``."""
    return {**query_shapes.tree_env(home, ROOT), "NO_COLOR": "1", **extra}


def _output(cmd: List[str], env: Dict[str, str]) -> str:
    return subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout


def measure(
    homes: Sequence[Path], queries: Sequence[Dict[str, Any]], runs: int, work: Path
) -> Dict[str, Any]:
    child = [sys.executable, "-c", CHILD]
    args = [
        ["search", q["query"], "--no-llm", *(["--kind", q["kind"]] if q["kind"] else [])]
        for q in queries
    ]
    oracle: Dict[Tuple[int, int], Path] = {}
    for h, home in enumerate(homes):
        for i, a in enumerate(args):
            path = work / f"oracle-{h}-{i}.json"
            _output([*child, *a], _env(home, RECORD=str(path)))
            oracle[(h, i)] = path
            plain = _output([*child, *a], _env(home))
            for mode in MODES[1:]:
                got = _output([*child, *a], _env(home, MODE=mode, ORACLE=str(path)))
                if got != plain:
                    raise SystemExit(f"{mode} changed the output of {a[1]!r} at {home}")
    out: Dict[str, Any] = {"load_start": query_shapes.uptime(), "queries": len(queries)}
    cells = {
        (h, m): {"wall_ms": [], "cpu_ms": [], "x_pass": []}
        for h in range(len(homes))
        for m in MODES
    }
    passes: List[float] = []
    for n in range(runs):
        i = n % len(args)
        pw, _ = query_shapes._run([sys.executable, "-c", "pass"], _env(homes[0]), "/")
        passes.append(pw)
        for h, home in enumerate(homes):
            for mode in MODES:
                env = _env(home, MODE=mode, ORACLE=str(oracle[(h, i)]))
                wall, cpu = query_shapes._run([*child, *args[i]], env, "/")
                cell = cells[(h, mode)]
                cell["wall_ms"].append(wall)
                cell["cpu_ms"].append(cpu)
                cell["x_pass"].append(wall / pw)
    out["load_end"] = query_shapes.uptime()
    out["pass_ms"] = statistics.median(passes)
    out["cells"] = {f"{homes[h]}|{m}": v for (h, m), v in cells.items()}
    nq = min(runs, len(args))
    rows = []
    for mode in MODES:
        first = cells[(0, mode)]["wall_ms"]
        base = statistics.median(first)
        for h, home in enumerate(homes):
            c = cells[(h, mode)]
            wall, cpu = statistics.median(c["wall_ms"]), statistics.median(c["cpu_ms"])
            # per query: its median here over its median at the first home (paired rounds)
            per = [
                statistics.median(c["wall_ms"][i::nq]) / statistics.median(first[i::nq])
                for i in range(nq)
            ]
            rows.append(
                f"| {mode} | {home.name} | {wall:.1f} / {query_shapes.percentile(c['wall_ms'], 90):.1f} | "
                f"{cpu:.1f} / {query_shapes.percentile(c['cpu_ms'], 90):.1f} | {statistics.median(c['x_pass']):.2f}x | "
                f"{wall / base:.2f}x | {statistics.median(per):.2f}x ({min(per):.2f}-{max(per):.2f}) |"
            )
    out["table"] = "\n".join(
        [
            "| mode | home | wall ms (median / p90) | CPU ms (median / p90) | x `python -c pass` "
            "| over the first home | per query, median (range) |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, action="append", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--shape", default="long", choices=query_shapes.SHAPES[:3])
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    queries = query_shapes.shapes().get(a.shape, [])
    if not queries:
        print("no ../shared/eval here: nothing to measure")
        return 0
    with tempfile.TemporaryDirectory(prefix="boost-floor-") as tmp:
        t0 = time.perf_counter()
        got = measure(a.home, queries, a.runs, Path(tmp))
    print(
        f"load {got['load_start']} -> {got['load_end']}; {a.runs} rounds of {got['queries']} "
        f"{a.shape} queries; python -c pass {got['pass_ms']:.1f} ms; {time.perf_counter() - t0:.0f} s"
    )
    print(got["table"])
    if a.json:
        a.json.write_text(json.dumps(got, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
