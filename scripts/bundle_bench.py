#!/usr/bin/env python3
"""Bundles and relocatable homes on the corpus: size, export and import times, determinism,
same answers in the replica, and a moved home's no-op reindex.

    python scripts/bundle_bench.py [--home DIR] [--json]

Taps the 12 corpus registries (scripts/corpus.py) into a home (or uses --home), builds its
index, exports a bundle twice (timed; the two must be the same bytes), imports it into a
fresh home (timed), re-exports from the replica (the same members), compares the top 10 ids
and scores of every dev query in both homes, then moves the source home to another path
and times its no-op `boost reindex` (it must rebuild nothing). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))


def boost(args: List[str], home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "BOOST_HOME": str(home)}
    r = subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit(f"boost {' '.join(args)} failed: {r.stderr.strip()}")
    return r


def timed(args: List[str], home: Path) -> float:
    t0 = time.perf_counter()
    boost(args, home)
    return round(time.perf_counter() - t0, 2)


def rankings(home: Path) -> List[List[Any]]:
    out = []
    for line in (SHARED / "eval" / "dev.jsonl").read_text().splitlines():
        q = json.loads(line)
        args = ["search", q["query"], "--json", "--no-rerank", "--limit", "10"]
        if q.get("kind"):
            args += ["--kind", q["kind"]]
        hits = json.loads(boost(args, home).stdout)
        out.append([(h["id"], h["score"]) for h in hits])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="boost-bundle-bench-"))
    try:
        home = args.home
        if home is None:
            from scripts import corpus

            home = work / "source"
            corpus.tap_all(home)
        boost(["reindex"], home)
        a, b = work / "a.bundle", work / "b.bundle"
        row: Dict[str, Any] = {"load_start": round(os.getloadavg()[0], 2)}
        row["export_s"] = [
            timed(["bundle", "export", str(a)], home),
            timed(["bundle", "export", str(b)], home),
        ]
        row["bundle_mb"] = round(a.stat().st_size / 1e6, 1)
        row["identical"] = a.read_bytes() == b.read_bytes()
        row["sha256"] = hashlib.sha256(a.read_bytes()).hexdigest()[:16]
        replica = work / "replica"
        t0 = time.perf_counter()
        imported = json.loads(boost(["bundle", "import", str(a), "--json"], replica).stdout)
        row["import_s"] = round(time.perf_counter() - t0, 2)
        row["import_rebuilt_taps"] = imported[-1]["index"]["built"]
        row["taps"] = len(imported[0]["taps"])
        row["files"] = sum(t["files"] for t in imported[0]["taps"])
        c = work / "c.bundle"
        boost(["bundle", "export", str(c)], replica)
        row["replica_reexport_identical"] = c.read_bytes() == a.read_bytes()
        row["replica_noop_reindex_s"] = timed(["reindex"], replica)
        if (SHARED / "eval" / "dev.jsonl").exists():
            row["same_rankings_40_dev_queries"] = rankings(home) == rankings(replica)
        moved = work / "moved-home"
        shutil.move(str(home), str(moved)) if args.home is None else shutil.copytree(
            home, moved, symlinks=True
        )
        t0 = time.perf_counter()
        report = json.loads(boost(["reindex", "--json"], moved).stdout)
        row["moved_home_noop_reindex_s"] = round(time.perf_counter() - t0, 2)
        row["moved_home_rebuilt"] = report.get("built", report)
        row["load_end"] = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(row, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
