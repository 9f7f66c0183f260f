#!/usr/bin/env python3
"""How `boost mcp --http` treats one connection: latency kept alive, slow clients, SIGTERM.

    python scripts/http_bench.py [--root DIR] [-n 200] [--json]

Runs ``python -m boost_cli mcp --http 127.0.0.1:0`` from ``--root`` (default: this
checkout; give an older checkout, e.g. a ``git archive`` of main, to measure "before")
against a fresh home with the example registry tapped and indexed, and reports:

- ``ping kept-alive`` / ``ping fresh``: ``ping`` round trips (request written → whole
  answer read) on one kept-alive raw socket, and on a new connection each;
- ``search kept-alive``: ``boost_search`` calls the same way, on one kept-alive socket;
- ``SDK search over HTTP`` / ``over stdio``: ``call_tool boost_search`` through the
  official MCP Python SDK client (when installed), against ``--http`` and against the
  stdio ``boost mcp``, the same queries;
- ``answered beside 48 drippers``: the time a search takes while 48 other connections
  each send one header byte every 0.5 s (``no answer`` after 20 s);
- ``SIGTERM → exit``: seconds from SIGTERM to the process's exit while four clients keep
  pinging on kept-alive connections (``still running`` after 60 s; then it is killed).

Each latency is the median and p90 in ms; ``/proc/loadavg`` is printed before and after.
Everything listens on 127.0.0.1 and is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "test my React app",
    "write a pdf report",
    "deploy to kubernetes",
    "review a pull request",
    "format python code",
]
LEGACY = "2025-11-25"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def prepare_home(root: Path, base: Path) -> Path:
    repo = Path(shutil.copytree(root / "examples" / "registry", base / "registry"))
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "registry"], check=True)
    home = base / "home"
    for args in (["tap", str(repo), "--name", "example"], ["reindex"]):
        boost(root, home, args)
    return home


def boost(root: Path, home: Path, args: List[str]) -> None:
    env = {**os.environ, "BOOST_HOME": str(home)}
    r = subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        cwd=str(root),
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode:
        sys.exit(f"http_bench: boost {' '.join(args)} failed: {r.stderr.strip()}")


class Server:
    def __init__(self, root: Path, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp", "--http", "127.0.0.1:0"],
            cwd=str(root),
            env={**os.environ, "BOOST_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        found = re.search(r"http://[^ ]+:(\d+)/mcp", self.proc.stderr.readline())
        if not found:
            self.proc.kill()
            sys.exit("http_bench: the server printed no ready line")
        self.port = int(found.group(1))
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # the access log

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def request(body: Dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: "
        + LEGACY.encode()
        + b"\r\nContent-Length: "
        + str(len(data)).encode()
        + b"\r\n\r\n"
        + data
    )


def read_response(sock: socket.socket, buf: bytearray) -> Tuple[int, bytes]:
    """One response from ``sock`` (``buf`` keeps what was read past it)."""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        buf += data
    end = buf.index(b"\r\n\r\n") + 4
    head = bytes(buf[:end]).decode("latin-1")
    found = re.search(r"(?i)\r\ncontent-length: *(\d+)", head)
    length = int(found.group(1)) if found else 0
    while len(buf) < end + length:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        buf += data
    body = bytes(buf[end : end + length])
    del buf[: end + length]
    return int(head.split(" ", 2)[1]), body


def search_call(i: int) -> Dict[str, Any]:
    args = {"query": QUERIES[i % len(QUERIES)], "limit": 3}
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "boost_search", "arguments": args},
    }


def kept_alive(port: int, n: int, make: Any) -> List[float]:
    times = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        buf = bytearray()
        for i in range(n):
            t0 = time.perf_counter()
            sock.sendall(request(make(i)))
            status, _ = read_response(sock, buf)
            times.append(time.perf_counter() - t0)
            assert status == 200, status
    return times


def fresh(port: int, n: int) -> List[float]:
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(request({"jsonrpc": "2.0", "id": i, "method": "ping"}))
            assert read_response(sock, bytearray())[0] == 200
        times.append(time.perf_counter() - t0)
    return times


def sdk_times(target: Any, n: int) -> Optional[List[float]]:
    try:
        from mcp import Client
    except ImportError:
        return None

    async def run() -> List[float]:
        out = []
        async with Client(target) as c:
            await c.call_tool("boost_search", {"query": "warm up", "limit": 3})
            for i in range(n):
                t0 = time.perf_counter()
                await c.call_tool("boost_search", {"query": QUERIES[i % len(QUERIES)], "limit": 3})
                out.append(time.perf_counter() - t0)
        return out

    return asyncio.run(run())


def stdio_target(root: Path, home: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "boost_cli", "mcp"],
        cwd=str(root),
        env={**os.environ, "BOOST_HOME": str(home)},
    )


def beside_drippers(port: int, count: int = 48) -> Optional[float]:
    drips = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
    stop = threading.Event()
    text = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000

    def drip() -> None:
        for i in range(len(text)):
            for sock in drips:
                with contextlib.suppress(OSError):
                    sock.sendall(text[i : i + 1])
            if stop.wait(0.5):
                return

    t = threading.Thread(target=drip, daemon=True)
    t.start()
    time.sleep(1.5)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            t0 = time.perf_counter()
            sock.sendall(request(search_call(1)))
            read_response(sock, bytearray())
            return time.perf_counter() - t0
    except OSError:
        return None
    finally:
        stop.set()
        t.join()
        for sock in drips:
            sock.close()


def sigterm_exit(root: Path, home: Path) -> Optional[float]:
    server = Server(root, home)
    stop = threading.Event()

    def client() -> None:
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
                buf = bytearray()
                while not stop.is_set():
                    sock.sendall(request({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
                    read_response(sock, buf)
        except OSError:
            return

    clients = [threading.Thread(target=client, daemon=True) for _ in range(4)]
    for c in clients:
        c.start()
    time.sleep(1.0)
    t0 = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(timeout=60)
        took: Optional[float] = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        took = None
    stop.set()
    server.stop()
    return took


def summary(times: Optional[List[float]]) -> Optional[Dict[str, float]]:
    if not times:
        return None
    ms = sorted(t * 1000 for t in times)
    return {
        "median_ms": round(statistics.median(ms), 2),
        "p90_ms": round(ms[min(len(ms) - 1, int(0.9 * len(ms)))], 2),
        "n": len(ms),
    }


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the boost checkout to run")
    ap.add_argument("-n", type=int, default=200, help="round trips per latency figure")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    n = args.n
    out: Dict[str, Any] = {"root": str(root), "load_before": loadavg()}
    with tempfile.TemporaryDirectory(prefix="boost-http-bench-") as tmp:
        home = prepare_home(root, Path(tmp))
        server = Server(root, home)
        try:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            kept_alive(server.port, 5, lambda i: ping)  # warm up
            out["ping kept-alive"] = summary(kept_alive(server.port, n, lambda i: ping))
            out["ping fresh"] = summary(fresh(server.port, n))
            out["search kept-alive"] = summary(kept_alive(server.port, n // 2, search_call))
            url = f"http://127.0.0.1:{server.port}/mcp"
            out["SDK search over HTTP"] = summary(sdk_times(url, n // 4))
            took = beside_drippers(server.port)
            out["answered beside 48 drippers (ms)"] = (
                round(took * 1000, 1) if took is not None else "no answer in 20 s"
            )
        finally:
            server.stop()
        try:
            out["SDK search over stdio"] = summary(sdk_times(stdio_target(root, home), n // 4))
        except ImportError:
            out["SDK search over stdio"] = None
        took = sigterm_exit(root, home)
        out["SIGTERM -> exit (s)"] = round(took, 2) if took is not None else "still running at 60 s"
    out["load_after"] = loadavg()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:34} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
