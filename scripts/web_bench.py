#!/usr/bin/env python3
"""Server time of the team page's search on a home (the corpus), beside MCP's boost_search.

    python scripts/web_bench.py --home /work/corpus-home [-n 100] [--json]

Copies ``--home`` to a temporary folder (the server must not touch the original), starts
``python -m boost_cli mcp --http 127.0.0.1:0`` on the copy (pages on: loopback), warms it
up, then for each of ``-n`` queries (a fixed list of task phrasings, cycled) sends, on one
kept-alive connection each:

- ``GET /?q=…`` (the HTML search page, 20 results),
- ``GET /?q=…&format=json`` (its JSON view),
- ``POST /mcp`` ``tools/call boost_search`` with the same query (``limit`` 20).

For each it reports the median and p95 of the server's own time (the access log's
``…ms`` field: from the request's arrival whole to the answer built) and of the client's
wall time, in ms, with ``/proc/loadavg`` before and after. Everything is on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
# ``--home`` without an index is indexed first (on the copy).
QUERIES = [
    "fill in a pdf form",
    "test my React app",
    "deploy to kubernetes",
    "review a pull request for security problems",
    "format python code",
    "write a commit message",
    "make my site work for blind users",
    "scrape a website and save the data",
    "set up a postgres database migration",
    "write unit tests for a go service",
    "generate an openapi client",
    "debug a memory leak in node",
    "create a slide deck",
    "analyse a csv with pandas",
    "build a docker image",
    "refactor a large typescript codebase",
    "write documentation for an api",
    "optimise sql queries",
    "set up github actions ci",
    "translate a web app",
]
LOG_MS = re.compile(r" (GET|POST) (/mcp|/) 200 ([0-9.]+)ms")


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def pct(values: List[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="boost-web-bench-"))
    home = tmp / "home"
    shutil.copytree(args.home, home, symlinks=True)
    env = {**os.environ, "BOOST_HOME": str(home)}
    env.pop("BOOST_MCP_TOKEN", None)
    if not (home / "cache" / "index").exists():
        # A home with no index searches names and descriptions only (seconds per query on
        # the corpus): build it first, as a team server would have.
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "boost_cli", "reindex"],
            cwd=str(ROOT),
            env=env,
            check=True,
            capture_output=True,
        )
        print(f"built the index of the copy in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    proc = subprocess.Popen(
        [sys.executable, "-m", "boost_cli", "mcp", "--http", "127.0.0.1:0"],
        cwd=str(ROOT),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    port = int(re.search(r":(\d+)/mcp", first).group(1))  # type: ignore[union-attr]
    log: List[str] = []
    threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def page(q: str, fmt: str = "") -> float:
        params = {"q": q, **({"format": fmt} if fmt else {})}
        t = time.perf_counter()
        conn.request("GET", "/?" + urlencode(params))
        r = conn.getresponse()
        r.read()
        assert r.status == 200, r.status
        return (time.perf_counter() - t) * 1000

    def mcp(q: str) -> float:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "boost_search", "arguments": {"query": q, "limit": 20}},
        }
        t = time.perf_counter()
        conn.request(
            "POST",
            "/mcp",
            body=json.dumps(body),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "MCP-Protocol-Version": "2025-11-25",
            },
        )
        r = conn.getresponse()
        r.read()
        assert r.status == 200, r.status
        return (time.perf_counter() - t) * 1000

    results: Dict[str, Dict[str, List[float]]] = {}
    before = loadavg()
    try:
        for q in QUERIES[:5]:  # warm-up: index pages, the skill map
            page(q), page(q, "json"), mcp(q)
        time.sleep(0.3)
        for kind, call in (
            ("html", lambda q: page(q)),
            ("json", lambda q: page(q, "json")),
            ("mcp", mcp),
        ):
            mark = len(log)
            walls = [call(QUERIES[i % len(QUERIES)]) for i in range(args.n)]
            time.sleep(0.3)
            server = [float(m.group(3)) for line in log[mark:] if (m := LOG_MS.search(line))]
            results[kind] = {"wall": walls, "server": server[: args.n]}
    finally:
        conn.close()
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)
    after = loadavg()
    summary = {
        k: {
            "n": len(v["server"]),
            "server_median_ms": round(statistics.median(v["server"]), 1),
            "server_p95_ms": round(pct(v["server"], 95), 1),
            "wall_median_ms": round(statistics.median(v["wall"]), 1),
            "wall_p95_ms": round(pct(v["wall"], 95), 1),
        }
        for k, v in results.items()
    }
    if args.json:
        print(json.dumps({"load_before": before, "load_after": after, **summary}, indent=2))
        return 0
    print(f"load before {before}, after {after}; {args.n} queries each")
    print("| request | server median | server p95 | wall median | wall p95 |")
    print("|---|---|---|---|---|")
    names = {
        "html": "`GET /?q=…` (HTML)",
        "json": "`GET /?q=…&format=json`",
        "mcp": "`POST /mcp` boost_search",
    }
    for k, s in summary.items():
        print(
            f"| {names[k]} | {s['server_median_ms']} ms | {s['server_p95_ms']} ms | "
            f"{s['wall_median_ms']} ms | {s['wall_p95_ms']} ms |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
