#!/usr/bin/env python3
"""Warm `boost_search` latency through the real `boost mcp` stdio server.

Starts `boost mcp` once against a home with the shared corpus tapped and indexed,
initializes, warms up, then times each ``tools/call boost_search`` round trip (request
written → response line read) over varied queries: the dev-set queries of
../shared/eval/dev.jsonl, cycled with kind filters and limits. Prints the median, p95
and max, and their ratio to ``python -c pass`` measured in the same run (so a figure from
a busy or slow machine can be read against one from another).

    python scripts/mcp_latency.py [--home DIR] [-n 100] [--json] [--check]
    python scripts/mcp_latency.py --skills [--home DIR] [--passes 5] [--sample 200] [--json]

``--skills`` times the MCP Skills extension instead, as a 2026-07-28 client (no
handshake, the envelope on every request): ``skills/list`` full passes (every page; the
first pass of a fresh server reported apart, as it loads the skill map), then
``skills/get`` and ``resources/read`` of every file of a sample of skills, each read
checked against its digest and size. It reports the warm median and p95 per call, the
server's CPU time per call (from /proc/<pid>/stat, so Linux only), and the corpus counts:
skills served, refused by reason.

Without ``--home`` it prepares a temporary home with scripts/corpus.py and
``boost reindex``. Skips (exit 0) when ../shared/corpus is absent. ``--check`` exits 1
when the median misses ``--target-ms`` (default 15).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import corpus  # noqa: E402  (scripts/corpus.py: the shared corpus as local git repos)

DEV = corpus.SHARED / "eval" / "dev.jsonl"
KINDS: Tuple[Optional[str], ...] = (None, None, "skill", None, "workflow", "rule")
LIMITS = (8, 5, 10, 3, 20, 8, 1)
FALLBACK_QUERIES = (
    "test my React app",
    "write a pull request description",
    "set up CI with GitHub Actions",
    "review python code for security problems",
    "design a postgres schema",
)
PROTOCOL = "2025-06-18"


def queries() -> List[str]:
    """The dev-set queries (or a few built-in ones when the eval set is absent)."""
    if not DEV.is_file():
        return list(FALLBACK_QUERIES)
    out = []
    for line in DEV.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(str(json.loads(line)["query"]))
    return out or list(FALLBACK_QUERIES)


def varied(base: List[str], n: int) -> Iterator[Dict[str, Any]]:
    """``n`` boost_search argument sets: queries cycled, each pass with other kinds/limits.

    The second and later passes over the query list shorten or reorder the words, so the
    server never answers the very same request twice in a row.
    """
    for i in range(n):
        lap, j = divmod(i, len(base))
        words = base[j].split()
        if lap % 3 == 1 and len(words) > 3:
            words = words[: max(3, len(words) * 2 // 3)]
        elif lap % 3 == 2:
            words = words[::-1]
        args: Dict[str, Any] = {"query": " ".join(words), "limit": LIMITS[i % len(LIMITS)]}
        kind = KINDS[(i + lap) % len(KINDS)]
        if kind:
            args["kind"] = kind
        yield args


def python_startup_ms(runs: int = 5) -> float:
    """Median wall time of ``python -c pass`` (this interpreter), in ms."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def prepare_home() -> Path:
    """A temporary home with every corpus registry tapped and the BM25 index built."""
    home = Path(tempfile.mkdtemp(prefix="boost-mcp-latency-"))
    print(f"preparing {home} (tap the corpus, reindex) ...", file=sys.stderr)
    corpus.tap_all(home)
    env = {**os.environ, "BOOST_HOME": str(home)}
    subprocess.run([*corpus.boost_cmd(), "reindex"], env=env, check=True, capture_output=True)
    return home


class Client:
    """A minimal newline-delimited JSON-RPC client over a `boost mcp` subprocess."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "BOOST_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(ROOT),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in: IO[bytes] = self.proc.stdin
        self._out: IO[bytes] = self.proc.stdout
        self._next = 0

    def request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        line = self._out.readline()
        if not line:
            raise RuntimeError(f"boost mcp exited (rc={self.proc.poll()}) before answering")
        reply: Dict[str, Any] = json.loads(line)
        if reply.get("id") != self._next or "error" in reply:
            raise RuntimeError(f"unexpected reply to {method}: {line[:300]!r}")
        return reply

    def send(self, message: Dict[str, Any]) -> None:
        self._in.write(json.dumps(message).encode("utf-8") + b"\n")
        self._in.flush()

    def close(self) -> int:
        self._in.close()
        return self.proc.wait(timeout=30)


def search(client: Client, args: Dict[str, Any]) -> float:
    """One boost_search round trip, in ms; raises when the tool reports an error."""
    t0 = time.perf_counter()
    reply = client.request("tools/call", {"name": "boost_search", "arguments": args})
    ms = (time.perf_counter() - t0) * 1000
    result = reply["result"]
    if result.get("isError"):
        raise RuntimeError(f"boost_search {args!r} failed: {result['content'][0]['text']}")
    return ms


def measure(home: Path, n: int, warmup: int) -> Dict[str, Any]:
    base = queries()
    client = Client(home)
    try:
        client.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "mcp_latency", "version": "1"},
            },
        )
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for args in list(varied(base, warmup)):
            search(client, args)
        times = [search(client, args) for args in varied(base, n)]
    finally:
        rc = client.close()
    startup = python_startup_ms()
    ordered = sorted(times)
    median = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {
        "home": str(home),
        "calls": len(times),
        "warmup": warmup,
        "median_ms": round(median, 2),
        "p95_ms": round(p95, 2),
        "max_ms": round(ordered[-1], 2),
        "min_ms": round(ordered[0], 2),
        "python_startup_ms": round(startup, 2),
        "median_over_startup": round(median / startup, 3),
        "p95_over_startup": round(p95 / startup, 3),
        "server_exit": rc,
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "mcp_latency", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _pct(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def skill_counts(home: Path) -> Dict[str, int]:
    """Served and refused skills (by reason) of ``home``, from boost's own skill map."""
    os.environ["BOOST_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))
    from boost_cli.core import skillmap

    return skillmap.for_taps().counts()


def measure_skills(home: Path, passes: int, sample: int) -> Dict[str, Any]:
    import base64
    import hashlib

    client = Client(home)
    pid = client.proc.pid

    def call(method: str, params: Dict[str, Any]) -> Tuple[Dict[str, Any], float]:
        t0 = time.perf_counter()
        reply = client.request(method, {**params, "_meta": ENVELOPE})
        return reply["result"], (time.perf_counter() - t0) * 1000

    def full_pass() -> Tuple[List[Dict[str, Any]], float, int]:
        skills: List[Dict[str, Any]] = []
        cursor: Optional[str] = None
        total = 0.0
        pages = 0
        while True:
            result, ms = call("skills/list", {"cursor": cursor} if cursor else {})
            total += ms
            pages += 1
            skills.extend(result["skills"])
            cursor = result.get("nextCursor")
            if not cursor:
                return skills, total, pages

    try:
        call("server/discover", {})
        skills, cold_ms, pages = full_pass()
        cpu0 = _cpu_seconds(pid)
        list_ms = [full_pass()[1] for _ in range(passes)]
        list_cpu = (_cpu_seconds(pid) - cpu0) / max(passes, 1)
        step = max(1, len(skills) // max(sample, 1))
        chosen = skills[::step][:sample]
        get_ms: List[float] = []
        read_ms: List[float] = []
        read_bytes = 0
        cpu0 = _cpu_seconds(pid)
        for entry in chosen:
            _, ms = call("skills/get", {"uri": entry["uri"]})
            get_ms.append(ms)
            for res in entry["resources"]:
                result, ms = call("resources/read", {"uri": res["uri"]})
                read_ms.append(ms)
                item = result["contents"][0]
                data = (
                    item["text"].encode("utf-8")
                    if "text" in item
                    else base64.b64decode(item["blob"])
                )
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
                if len(data) != res["size"] or digest != res["digest"]:
                    raise RuntimeError(f"{res['uri']}: digest or size mismatch")
                read_bytes += len(data)
        calls = len(get_ms) + len(read_ms)
        get_read_cpu = (_cpu_seconds(pid) - cpu0) / max(calls, 1)
    finally:
        rc = client.close()
    return {
        "home": str(home),
        "skills_listed": len(skills),
        "pages": pages,
        "files_listed": sum(len(s["resources"]) for s in skills),
        "list_first_pass_ms": round(cold_ms, 1),
        "list_passes": passes,
        "list_pass_median_ms": round(statistics.median(list_ms), 1),
        "list_pass_p95_ms": round(_pct(list_ms, 0.95), 1),
        "list_pass_cpu_ms": round(list_cpu * 1000, 1),
        "sampled_skills": len(chosen),
        "get_calls": len(get_ms),
        "get_median_ms": round(statistics.median(get_ms), 2),
        "get_p95_ms": round(_pct(get_ms, 0.95), 2),
        "read_calls": len(read_ms),
        "read_bytes": read_bytes,
        "read_median_ms": round(statistics.median(read_ms), 2),
        "read_p95_ms": round(_pct(read_ms, 0.95), 2),
        "get_read_cpu_ms_per_call": round(get_read_cpu * 1000, 2),
        "verified": True,
        "counts": skill_counts(home),
        "python_startup_ms": round(python_startup_ms(), 1),
        "load": os.getloadavg(),
        "server_exit": rc,
    }


def print_skills(f: Dict[str, Any]) -> None:
    print(f"MCP Skills extension over stdio (2026-07-28), home {f['home']}  load {f['load']}")
    print(f"  served/refused: {json.dumps(f['counts'])}")
    print(
        f"  skills/list: {f['skills_listed']} skills, {f['files_listed']} files, "
        f"{f['pages']} pages; first pass {f['list_first_pass_ms']} ms; warm pass median "
        f"{f['list_pass_median_ms']} ms, p95 {f['list_pass_p95_ms']} ms, server CPU "
        f"{f['list_pass_cpu_ms']} ms per pass ({f['list_passes']} passes)"
    )
    print(
        f"  skills/get: {f['get_calls']} calls, median {f['get_median_ms']} ms, "
        f"p95 {f['get_p95_ms']} ms"
    )
    print(
        f"  resources/read: {f['read_calls']} files ({f['read_bytes']} bytes, every digest "
        f"verified), median {f['read_median_ms']} ms, p95 {f['read_p95_ms']} ms"
    )
    print(f"  server CPU per get/read call: {f['get_read_cpu_ms_per_call']} ms")
    print(f"  python -c pass in the same run: {f['python_startup_ms']} ms (the load reference)")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, help="a BOOST_HOME with taps and a built index")
    ap.add_argument("-n", type=int, default=100, help="timed calls (default 100)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    ap.add_argument("--target-ms", type=float, default=15.0, help="median target (default 15)")
    ap.add_argument("--check", action="store_true", help="exit 1 when the median misses it")
    ap.add_argument("--keep", action="store_true", help="keep a prepared temporary home")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--skills", action="store_true", help="time the Skills extension instead")
    ap.add_argument("--passes", type=int, default=5, help="--skills: warm skills/list passes")
    ap.add_argument("--sample", type=int, default=200, help="--skills: skills to get and read")
    args = ap.parse_args(argv)
    prepared = None
    if args.home is None:
        if not corpus.CORPUS.is_dir():
            print(f"skipped: no corpus at {corpus.CORPUS} (pass --home DIR)", file=sys.stderr)
            return 0
        prepared = args.home = prepare_home()
    try:
        if args.skills:
            skill_figures = measure_skills(args.home, args.passes, args.sample)
            if args.json:
                print(json.dumps(skill_figures, indent=2))
            else:
                print_skills(skill_figures)
            return 0
        figures = measure(args.home, args.n, args.warmup)
    finally:
        if prepared is not None and not args.keep:
            shutil.rmtree(prepared, ignore_errors=True)
    met = figures["median_ms"] <= args.target_ms
    figures["target_ms"] = args.target_ms
    figures["target_met"] = met
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"boost_search over stdio, {figures['calls']} warm calls "
            f"(after {figures['warmup']} warm-up calls), home {figures['home']}"
        )
        print(
            f"  median {figures['median_ms']:.1f} ms   p95 {figures['p95_ms']:.1f} ms   "
            f"max {figures['max_ms']:.1f} ms   min {figures['min_ms']:.1f} ms"
        )
        print(
            f"  python -c pass: {figures['python_startup_ms']:.1f} ms   "
            f"median/startup {figures['median_over_startup']:.2f}   "
            f"p95/startup {figures['p95_over_startup']:.2f}"
        )
        print(f"  target median <= {args.target_ms:g} ms: {'met' if met else 'MISSED'}")
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
