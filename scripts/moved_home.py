"""A copied or moved BOOST_HOME needs no rebuild (issue 17): the corpus home, indexed, then
copied to another path; `boost reindex` there must be a no-op, and searches must answer
the same (the home's own path taken out of the results).

    python scripts/moved_home.py [--runs 5] [--queries 20] [--json FILE]

Builds the 12-registry corpus home with `scripts/corpus.py` (under ``--work``), runs
`boost reindex` there, copies the home (``cp -a``) to a path of another length, and times
``--runs`` no-op `boost reindex` runs in the original and in the copy, alternately
(median and p90 of each, `uptime` beside them); reports what the first reindex of the
copy rebuilt, and compares `boost search --json --no-llm --engine bm25` for the first
``--queries`` dev queries (`../shared/eval/dev.jsonl`) in both homes. ``--boost`` runs
another checkout's CLI (e.g. the code before the fix) on the same homes.
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
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import corpus  # noqa: E402


def run(home: Path, args: List[str], code: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOST_")}
    env.update({"BOOST_HOME": str(home), "PYTHONPATH": str(code)})
    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        cwd=str(code),
        capture_output=True,
        text=True,
        check=True,
    )


def timed_reindex(home: Path, code: Path) -> Dict[str, Any]:
    t0 = time.perf_counter()
    out = run(home, ["reindex", "--json"], code).stdout
    seconds = time.perf_counter() - t0
    report = json.loads(out)["bm25"]
    return {"seconds": seconds, "built": report["built"], "reused": len(report["reused"])}


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def p90(values: List[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    ap.add_argument("--boost", type=Path, default=ROOT, help="the checkout whose CLI runs")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if not corpus.CORPUS.is_dir():
        print(f"no corpus at {corpus.CORPUS}; nothing to do", file=sys.stderr)
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="boost-moved-"))
    home = work / "home"
    code = args.boost.resolve()
    if not (home / "config.json").exists():
        corpus.tap_all(home)
    t0 = time.perf_counter()
    run(home, ["reindex"], code)
    first_build = time.perf_counter() - t0
    copy = work / "elsewhere" / "a-longer-path" / "copied-home"
    if copy.exists():
        subprocess.run(["rm", "-rf", str(copy)], check=True)
    copy.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run(["cp", "-a", str(home), str(copy)], check=True)
    copy_seconds = time.perf_counter() - t0
    load_before = load()
    first = timed_reindex(copy, code)
    times: Dict[str, List[float]] = {"original": [], "copy": []}
    loads = []
    for _ in range(args.runs):
        for name, where in (("original", home), ("copy", copy)):
            times[name].append(timed_reindex(where, code)["seconds"])
            loads.append(load())
    queries = [
        json.loads(line)["query"]
        for line in (corpus.SHARED / "eval" / "dev.jsonl").read_text().splitlines()[: args.queries]
    ]
    same = 0
    for q in queries:
        got = [
            run(
                where, ["search", q, "--json", "--no-llm", "--engine", "bm25"], code
            ).stdout.replace(str(where), "HOME")
            for where in (home, copy)
        ]
        same += got[0] == got[1]
    summary = {
        "code": str(code),
        "first_build_seconds": round(first_build, 2),
        "copy_seconds": round(copy_seconds, 2),
        "first_reindex_of_copy": {
            "seconds": round(first["seconds"], 3),
            "rebuilt": first["built"],
            "reused": first["reused"],
            "load": load_before,
        },
        "noop_reindex": {
            name: {
                "median": round(statistics.median(v), 3),
                "p90": round(p90(v), 3),
                "runs": len(v),
            }
            for name, v in times.items()
        },
        "loads": loads,
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        "queries_identical": f"{same}/{len(queries)}",
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if same == len(queries) and not first["built"] else 1


if __name__ == "__main__":
    sys.exit(main())
