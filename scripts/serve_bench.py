#!/usr/bin/env python3
"""Replicas of `boost mcp --http` behind nginx, under load, with one replica killed mid-run.

    python scripts/serve_bench.py [--bundle FILE | --corpus] [--replicas 1,2]
                                  [--connections 8] [--seconds 20] [--kill-at 0.5]

For each replica count N: N fresh homes each import the same bundle (`boost bundle
import`, timed), N servers start on 127.0.0.1 (port 0), a generated nginx config on
127.0.0.1 balances over them (round robin; a failed connection is retried on another
replica: boost's tools only read, so a retry is safe), and wrk drives M connections for T
seconds with `boost_search` calls (the dev queries as written, with their agent keywords).
At ``--kill-at`` of the run one replica is killed with SIGKILL. Reported per N: requests,
throughput, p50/p99 latency, failed requests (non-200, or a tool error), the load average.

Needs nginx and wrk (Debian: `apt-get install nginx wrk`; the script installs them when
missing and it runs as root). Without --bundle it exports one: from the 12-registry corpus
with --corpus (scripts/corpus.py), else from the bundled example registry. Every process it
starts listens on 127.0.0.1 only and is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))

LUA = r"""
local bodies = {}
local threads = {}
local n = 0
function setup(thread) table.insert(threads, thread) end
function init(args)
  ok = 0; bad = 0; statuses = ""
  for line in io.lines(os.getenv("BOOST_BENCH_BODIES")) do table.insert(bodies, line) end
end
function request()
  n = n + 1
  local body = bodies[(n % #bodies) + 1]
  return wrk.format("POST", "/mcp", {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = "2025-11-25",
  }, body)
end
function response(status, headers, body)
  if status == 200 and body:find('"isError":false', 1, true) then ok = ok + 1
  else bad = bad + 1; if #statuses < 200 then statuses = statuses .. status .. " " end end
end
function done(summary, latency, requests)
  local o, b, s = 0, 0, ""
  for _, t in ipairs(threads) do o = o + t:get("ok"); b = b + t:get("bad"); s = s .. t:get("statuses") end
  io.write(string.format("BOOST ok=%d bad=%d errors=%d p50=%.2f p90=%.2f p99=%.2f statuses=%s\n",
    o, b, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, s))
end
"""

NGINX = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  upstream boost {{
{servers}
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    location /mcp {{
      proxy_pass http://boost;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1;
      proxy_buffering off;
      # boost's tools only read: a request is safe to send to another replica.
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_connect_timeout 1s;
      proxy_read_timeout 60s;
    }}
  }}
}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_tools() -> None:
    missing = [
        t
        for t in ("nginx", "wrk")
        if shutil.which(t) is None and not Path(f"/usr/sbin/{t}").exists()
    ]
    if not missing:
        return
    if os.geteuid() != 0:
        sys.exit(f"serve_bench: needs {', '.join(missing)} (apt-get install nginx wrk)")
    subprocess.run(["apt-get", "install", "-y", *missing], check=False, capture_output=True)
    if any(shutil.which(t) is None and not Path(f"/usr/sbin/{t}").exists() for t in missing):
        subprocess.run(["apt-get", "update"], check=False, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", *missing], check=True, capture_output=True)


def _boost(args: List[str], home: Path, **kw: Any) -> subprocess.CompletedProcess:
    env = {**os.environ, "BOOST_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        cwd=str(ROOT),
        check=True,
        capture_output=True,
        text=True,
        **kw,
    )


def make_bundle(work: Path, corpus: bool) -> Path:
    home = work / "source-home"
    if corpus:
        from scripts import corpus as corpus_mod

        corpus_mod.tap_all(home)
    else:
        repo = work / "example-registry"
        shutil.copytree(ROOT / "examples" / "registry", repo)
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.invalid",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.invalid",
        }
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "x"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        _boost(["tap", str(repo), "--name", "example"], home)
    _boost(["reindex"], home)
    out = work / "bench.bundle"
    t0 = time.perf_counter()
    _boost(["bundle", "export", str(out)], home)
    print(f"exported {out.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t0:.2f} s")
    return out


def _bodies(path: Path) -> int:
    dev = SHARED / "eval" / "dev.jsonl"
    kw = SHARED / "eval" / "dev-keywords.jsonl"
    queries: List[Dict[str, Any]] = []
    if dev.exists():
        keywords = {}
        if kw.exists():
            for line in kw.read_text().splitlines():
                row = json.loads(line)
                keywords[row["id"]] = row.get("keywords") or []
        for line in dev.read_text().splitlines():
            row = json.loads(line)
            args: Dict[str, Any] = {"query": row["query"], "limit": 8}
            if keywords.get(row["id"]):
                args["keywords"] = keywords[row["id"]][:12]
            queries.append(args)
    else:
        queries = [
            {"query": q, "limit": 8}
            for q in (
                "test my React app",
                "review a pull request",
                "make my web page usable with a screen reader",
            )
        ]
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "boost_search", "arguments": a},
            }
        )
        for i, a in enumerate(queries)
    ]
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


class Replica:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "BOOST_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp", "--http", "127.0.0.1:0"],
            env=env,
            cwd=str(ROOT),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        found = re.search(r":(\d+)/mcp", line)
        if not found:
            raise SystemExit(f"replica did not start: {line!r}")
        self.port = int(found.group(1))
        # Keep reading the access log so the pipe never fills.
        import threading

        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()  # type: ignore[union-attr]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def run_one(
    n: int, bundle: Path, work: Path, args: argparse.Namespace, bodies: Path
) -> Dict[str, Any]:
    replicas: List[Replica] = []
    imports = []
    for i in range(n):
        home = work / f"replica-{n}-{i}"
        t0 = time.perf_counter()
        _boost(["bundle", "import", str(bundle)], home)
        imports.append(time.perf_counter() - t0)
        replicas.append(Replica(home))
    prefix = work / f"nginx-{n}"
    prefix.mkdir()
    port = _free_port()
    servers = "\n".join(
        f"    server 127.0.0.1:{r.port} max_fails=1 fail_timeout=5s;" for r in replicas
    )
    conf = prefix / "nginx.conf"
    conf.write_text(NGINX.format(prefix=prefix, servers=servers, port=port))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    subprocess.run([nginx, "-c", str(conf), "-p", str(prefix)], check=True)
    lua = work / "bench.lua"
    lua.write_text(LUA)
    try:
        time.sleep(0.5)
        wrk = shutil.which("wrk") or "/usr/bin/wrk"
        cmd = [
            wrk,
            "-t2",
            f"-c{args.connections}",
            f"-d{args.seconds}s",
            "--timeout",
            "30s",
            "-s",
            str(lua),
            f"http://127.0.0.1:{port}/mcp",
        ]
        load0 = os.getloadavg()[0]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "BOOST_BENCH_BODIES": str(bodies)},
        )
        killed_at = None
        if args.kill_at > 0:
            time.sleep(args.seconds * args.kill_at)
            replicas[0].kill()
            killed_at = round(args.seconds * args.kill_at, 1)
        out, _ = proc.communicate(timeout=args.seconds + 120)
        load1 = os.getloadavg()[0]
    finally:
        subprocess.run(
            [nginx, "-c", str(conf), "-p", str(prefix), "-s", "stop"],
            check=False,
            capture_output=True,
        )
        for r in replicas:
            r.stop()
    found = re.search(
        r"BOOST ok=(\d+) bad=(\d+) errors=(\d+) p50=([\d.]+) p90=([\d.]+) p99=([\d.]+) statuses=(.*)",
        out,
    )
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not found or not rps:
        raise SystemExit(f"could not read wrk's output:\n{out}")
    ok, bad, errors = int(found.group(1)), int(found.group(2)), int(found.group(3))
    return {
        "replicas": n,
        "connections": args.connections,
        "seconds": args.seconds,
        "killed_one_at_s": killed_at,
        "requests": ok + bad,
        "failed": bad + errors,
        "rps": float(rps.group(1)),  # wrk's, failed answers included
        "ok_rps": round(ok / args.seconds, 1),
        "p50_ms": float(found.group(4)),
        "p90_ms": float(found.group(5)),
        "p99_ms": float(found.group(6)),
        "failed_statuses": found.group(7).strip(),
        "import_s": [round(x, 2) for x in imports],
        "load": [round(load0, 2), round(load1, 2)],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path)
    ap.add_argument("--corpus", action="store_true", help="export the 12-registry corpus")
    ap.add_argument("--replicas", default="1,2")
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--kill-at", type=float, default=0.5, help="fraction of the run (0: no kill)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    _ensure_tools()
    work = Path(tempfile.mkdtemp(prefix="boost-serve-bench-"))
    try:
        bundle = args.bundle or make_bundle(work, args.corpus)
        bodies = work / "bodies.jsonl"
        count = _bodies(bodies)
        print(f"{count} distinct requests; bundle {bundle.stat().st_size / 1e6:.1f} MB")
        rows = [run_one(int(n), bundle, work, args, bodies) for n in args.replicas.split(",")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            "| replicas | conns | s | killed at | requests | failed | ok req/s | p50 ms | p90 ms | p99 ms | import s | load |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['replicas']} | {r['connections']} | {r['seconds']} | {r['killed_one_at_s']} | {r['requests']} | {r['failed']} | {r['ok_rps']:.1f} | {r['p50_ms']:.1f} | {r['p90_ms']:.1f} | {r['p99_ms']:.1f} | {', '.join(map(str, r['import_s']))} | {r['load'][0]}-{r['load'][1]} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
