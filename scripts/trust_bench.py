#!/usr/bin/env python3
"""What the trust scan costs, before and after, in one session: ``boost tap`` of the 12
corpus registries, a no-op ``boost reindex`` and a cold ``boost search --json``, each run
alternately with a reference checkout (``--base DIR``: a copy of the code before the scan,
e.g. ``git archive <commit> | tar -x -C DIR``) and this one, on the same home.

    python scripts/trust_bench.py --base /tmp/h23-basecode [--runs 7] [--tap-runs 2]

Prints medians and p90 (ms) with the load average beside each block, and the ratio of the
medians. Subprocesses run with a bytecode cache (one per checkout), as an installed boost
has. Other processes share the CPU: read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import corpus  # noqa: E402

QUERIES = [
    "test my React app",
    "write a migration for postgres",
    "review a pull request",
    "make my page usable for blind people",
    "fill in a pdf form",
]


PYC = Path(tempfile.mkdtemp(prefix="boost-trust-bench-pyc-"))


def run(code: Path, args: List[str], home: Path) -> float:
    env = {**os.environ, "BOOST_HOME": str(home), "PYTHONPATH": str(code)}
    # A bytecode cache per checkout, as an installed boost has (a warm-up run fills it).
    env["PYTHONPYCACHEPREFIX"] = str(PYC / code.name)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        check=True,
        capture_output=True,
        cwd=str(code),
    )
    return (time.perf_counter() - t0) * 1000


def stats(xs: List[float]) -> Dict[str, float]:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
    return {"median": round(statistics.median(xs), 1), "p90": round(p90, 1), "n": len(xs)}


def tap_all(code: Path, home: Path) -> float:
    t0 = time.perf_counter()
    for repo in corpus.prepare_repos():
        run(code, ["tap", str(repo), "--name", repo.name], home)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the reference checkout")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tap-runs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--home",
        type=Path,
        help="an indexed home to time reindex and search in (default: "
        "the first home tapped by this checkout)",
    )
    args = ap.parse_args()
    if not corpus.CORPUS.is_dir():
        print(f"no corpus at {corpus.CORPUS}; nothing to do", file=sys.stderr)
        return 0
    codes = {"before": args.base.resolve(), "after": ROOT}
    tmp = Path(tempfile.mkdtemp(prefix="boost-trust-bench-"))
    out: Dict[str, Dict[str, object]] = {}
    times: Dict[str, Dict[str, List[float]]] = {
        k: {"tap": [], "reindex": [], "search": []} for k in codes
    }
    loads: Dict[str, List[float]] = {"tap": [], "reindex": [], "search": []}
    for i in range(args.tap_runs):
        for label, code in codes.items():
            loads["tap"].append(os.getloadavg()[0])
            times[label]["tap"].append(tap_all(code, tmp / f"tap-{label}-{i}"))
    home = args.home or tmp / "tap-after-0"  # tapped by this code: it has trust findings too
    run(ROOT, ["reindex"], home)
    for code in codes.values():  # warm both bytecode caches
        run(code, ["reindex"], home)
        run(code, ["search", QUERIES[0], "--no-llm", "--json"], home)
    for i in range(args.runs):
        order = list(codes.items()) if i % 2 == 0 else list(reversed(codes.items()))
        for label, code in order:  # each first in turn: no order bias
            loads["reindex"].append(os.getloadavg()[0])
            times[label]["reindex"].append(run(code, ["reindex"], home))
            loads["search"].append(os.getloadavg()[0])
            q = QUERIES[i % len(QUERIES)]
            times[label]["search"].append(run(code, ["search", q, "--no-llm", "--json"], home))
    for what in ("tap", "reindex", "search"):
        if not times["before"][what]:
            continue
        b, a = stats(times["before"][what]), stats(times["after"][what])
        out[what] = {
            "before": b,
            "after": a,
            "ratio": round(a["median"] / b["median"], 3),
            "load": [round(min(loads[what]), 2), round(max(loads[what]), 2)],
        }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{'':10} {'before med/p90 ms':>20} {'after med/p90 ms':>20} {'ratio':>7}  load (1-min)")
    for what, r in out.items():
        b, a = r["before"], r["after"]
        print(
            f"{what:10} {b['median']:>10}/{b['p90']:<9} {a['median']:>10}/{a['p90']:<9} "
            f"{r['ratio']:>7}  {r['load'][0]}-{r['load'][1]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
