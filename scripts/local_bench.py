#!/usr/bin/env python3
"""Measure the local embedding provider (the [local] extra) on a copy of a tapped home.

    python scripts/local_bench.py --home /work/base/home [--work DIR] [--only STEP,...]

Copies ``--home`` (never changed) to ``WORK/home``, brings its BM25 index up to date, then
measures, each whole-process run with wall time, CPU time and peak RSS (GNU time), and the
load average before and after (a shared machine: say it with every figure):

- ``build``: ``boost reindex --dense`` from an empty vector store (nothing cached);
- ``force``: ``boost reindex --dense --force``: every vector again, all from the cache (the
  report's dense seconds are the rebuild; the command also rebuilds BM25);
- ``one-tap``: one commit to the smallest tap (a private copy of its source becomes its
  origin), ``boost update``, ``boost reindex --dense``;
- ``cold``: ``boost search QUERY --no-llm`` (hybrid) as a whole process, 10 dev queries, and
  the model-load part measured alone: import numpy + onnxruntime, vocabulary + session
  (no graph optimisation, as a one-shot query), first query;
- ``warm``: ``search.run`` in one process keeping one `Engines` (what ``boost mcp`` does),
  3 rounds of the 40 dev queries after a warm-up round, hybrid.

Writes ``WORK/local_bench.json`` and prints a table. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (run_measured, load_avg, percentile)

SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
STEPS = ("build", "force", "one-tap", "cold", "warm")


def boost_cmd() -> List[str]:
    return [sys.executable, "-m", "boost_cli"]


def measured(cmd: Sequence[str], env: Dict[str, str]) -> Dict[str, Any]:
    before = bench.load_avg()
    run = bench.checked(bench.run_measured(cmd, env), " ".join(cmd[2:]))
    return {
        "seconds": round(run.seconds, 2),
        "cpu_seconds": round(run.cpu_seconds, 2),
        "peak_rss_mb": round(run.maxrss_kb / 1024, 1),
        "load_before": before,
        "load_after": bench.load_avg(),
    }


def json_run(cmd: Sequence[str], env: Dict[str, str]) -> Dict[str, Any]:
    """``cmd`` (with --json) measured, plus its report."""
    before = bench.load_avg()
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M %U %S", *cmd], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    rss_kb, user, system = proc.stderr.strip().splitlines()[-1].split()
    return {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(float(user) + float(system), 2),
        "peak_rss_mb": round(int(rss_kb) / 1024, 1),
        "load_before": before,
        "load_after": bench.load_avg(),
        "report": json.loads(proc.stdout),
    }


def prepare(base: Path, work: Path) -> Dict[str, str]:
    home = work / "home"
    if not home.exists():
        shutil.copytree(base, home, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOOST_", "VOYAGE_"))}
    env.pop("OPENAI_API_KEY", None)
    env.update(
        {
            "BOOST_HOME": str(home),
            "BOOST_EMBED_PROVIDER": "local",
            "PYTHONPYCACHEPREFIX": str(work / "pyc"),
            "PYTHONPATH": str(ROOT),
        }
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([*boost_cmd(), "reindex"], env=env, check=True, capture_output=True)
    return env


def smallest_tap(home: Path) -> str:
    cfg = json.loads((home / "config.json").read_text(encoding="utf-8"))
    return min(cfg["taps"], key=lambda n: (sum(cfg["taps"][n]["counts"].values()), n))


def change_one_tap(work: Path, env: Dict[str, str]) -> str:
    """A commit to the smallest tap, through a private copy of its source as its origin."""
    home = Path(env["BOOST_HOME"])
    name = smallest_tap(home)
    clone = home / "repos" / name
    src = work / "src" / name
    if not src.exists():
        shutil.copytree(clone, src, symlinks=True)
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", str(src)], check=True)
    target = sorted(src.rglob("SKILL.md"))[0]  # its description: a text the store embeds
    text = target.read_text(encoding="utf-8")
    edit = f"description: Benchmark edit {int(time.time())}. "
    target.write_text(text.replace("description: ", edit, 1), encoding="utf-8")
    subprocess.run(["git", "-C", str(src), "commit", "-q", "-am", "benchmark edit"], check=True)
    subprocess.run([*boost_cmd(), "update", name], env=env, check=True, capture_output=True)
    return name


def dev_queries() -> List[Dict[str, Any]]:
    with open(SHARED / "eval" / "dev.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


_LOAD_PARTS = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy, onnxruntime
t1 = time.perf_counter()
from boost_cli.core.embed import local
t2 = time.perf_counter()
emb = local.LocalEmbedder(local.MINILM, optimize=sys.argv[1] == "1", verify=False)
t3 = time.perf_counter()
emb.embed([sys.argv[2]])
t4 = time.perf_counter()
emb.embed([sys.argv[2] + " again"])
t5 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "boost_import_ms": (t2 - t1) * 1e3,
                  "session_ms": (t3 - t2) * 1e3, "first_query_ms": (t4 - t3) * 1e3,
                  "second_query_ms": (t5 - t4) * 1e3}))
"""


def cold(env: Dict[str, str], queries: Sequence[Dict[str, Any]], runs: int) -> Dict[str, Any]:
    cmd = boost_cmd()
    subprocess.run(
        [*cmd, "search", "warm the bytecode cache", "--no-llm"],
        env=env,
        check=True,
        capture_output=True,
    )
    walls: List[float] = []
    rss: List[float] = []
    parts: Dict[str, List[float]] = {}
    engines = set()
    before = bench.load_avg()
    for q in queries[:runs]:
        run = bench.checked(
            bench.run_measured([*cmd, "search", q["query"], "--no-llm"], env), "search"
        )
        walls.append(run.seconds * 1e3)
        rss.append(run.maxrss_kb / 1024)
        probe = subprocess.run(
            [*cmd, "search", q["query"], "--no-llm", "--explain"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        engines.update(line for line in probe.stdout.splitlines() if line.startswith("engine:"))
        for optimize in ("0", "1"):
            got = subprocess.run(
                [sys.executable, "-c", _LOAD_PARTS, optimize, q["query"]],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for k, v in json.loads(got.stdout).items():
                parts.setdefault(f"{k}{'_optimised' if optimize == '1' else ''}", []).append(v)
    baseline = [
        bench.run_measured([sys.executable, "-c", "pass"], env).seconds * 1e3 for _ in range(5)
    ]
    return {
        "median_ms": round(statistics.median(walls), 1),
        "p95_ms": round(bench.percentile(walls, 95), 1),
        "peak_rss_mb": round(max(rss), 1),
        "python_startup_ms": round(statistics.median(baseline), 1),
        "engines": sorted(engines),
        "model_parts_median_ms": {k: round(statistics.median(v), 1) for k, v in parts.items()},
        "load_before": before,
        "load_after": bench.load_avg(),
    }


def warm(env: Dict[str, str], queries: Sequence[Dict[str, Any]], rounds: int) -> Dict[str, Any]:
    os.environ.update(env)
    from boost_cli.core import retrieval, search

    engines = retrieval.Engines()
    opts = [search.SearchOptions(query=q["query"], rerank="none", expand="none") for q in queries]
    for o in opts:
        got = search.run(o, engines=engines)
    before = bench.load_avg()
    times: List[float] = []
    for _ in range(rounds):
        for o in opts:
            t0 = time.perf_counter()
            got = search.run(o, engines=engines)
            times.append((time.perf_counter() - t0) * 1e3)
    return {
        "engine": got.engine,
        "median_ms": round(statistics.median(times), 1),
        "p95_ms": round(bench.percentile(times, 95), 1),
        "load_before": before,
        "load_after": bench.load_avg(),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, default=Path("/work/base/home"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/boost-local-bench"))
    ap.add_argument("--only", default=",".join(STEPS), help=f"steps, from {', '.join(STEPS)}")
    ap.add_argument("--cold-runs", type=int, default=10)
    args = ap.parse_args(argv)
    steps = [s for s in args.only.split(",") if s]
    args.work.mkdir(parents=True, exist_ok=True)
    env = prepare(args.home, args.work)
    out_path = args.work / "local_bench.json"
    raw: Dict[str, Any] = json.loads(out_path.read_text()) if out_path.exists() else {}
    raw["cores"] = len(os.sched_getaffinity(0))
    cmd = boost_cmd()
    store = Path(env["BOOST_HOME"]) / "cache" / "vectors.sqlite"
    if "build" in steps:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store}{suffix}").unlink(missing_ok=True)
        raw["build"] = json_run([*cmd, "reindex", "--dense", "--json"], env)
        raw["store_mb"] = round(
            sum(
                Path(f"{store}{s}").stat().st_size
                for s in ("", "-wal")
                if Path(f"{store}{s}").exists()
            )
            / 1e6,
            1,
        )
    if "force" in steps:
        raw["force"] = json_run([*cmd, "reindex", "--dense", "--force", "--json"], env)
    if "one-tap" in steps:
        raw["one_tap_name"] = change_one_tap(args.work, env)
        raw["one_tap"] = json_run([*cmd, "reindex", "--dense", "--json"], env)
    # Written before the query steps too: a build measured is not lost to a later step.
    out_path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    queries = dev_queries() if {"cold", "warm"} & set(steps) else []
    if "cold" in steps:
        raw["cold"] = cold(env, queries, args.cold_runs)
    if "warm" in steps:
        raw["warm"] = warm(env, queries, 3)
    out_path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(raw, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
