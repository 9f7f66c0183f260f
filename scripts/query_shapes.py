#!/usr/bin/env python3
"""Query latency by the shapes people and agents really send, warm and cold, A/B across trees.

    python scripts/query_shapes.py --home DIR [--home DIR10 --label 10x] [--tree NAME=PATH ...]
        [--warm-repeats N] [--mcp-passes N] [--cold-runs N] [--only warm,mcp,cold]
        [--json FILE]
        [--home-suffix NAME=SUFFIX]   # tree NAME uses HOME+SUFFIX (an older index format)
    python scripts/query_shapes.py --home DIR --dump FILE [--k 100]   # rankings, to diff

The shapes (`shapes()`), all from ../shared/eval (skipped cleanly without it):

- ``short``: the dev set's keyword queries (1-3 words) and four classic short tasks;
- ``task``: the 40 dev queries as written (median 13.5 words), with their kind filter;
- ``long``: the dev queries of 18 words or more (a "20-word task", median 20.5 words);
- ``keywords``: the dev queries with the agent's keywords (``dev-keywords.jsonl``), as an
  agent calls ``boost_search``;
- ``expanded``: the dev queries with the recorded LLM expansion
  (``scripts/fixtures/llm-dev.jsonl``), what ``boost search`` adds when an LLM is there.

Measures, per tree (``--tree NAME=PATH``: a checkout whose ``boost_cli`` is put first on
``PYTHONPATH``, so one venv and one index serve a before/after pair; default: this tree),
the trees taken in turn so both see the same load:

- **warm**: a child process per tree; per shape and round, a new `retrieval.Engines` (as
  ``boost mcp`` keeps one) warmed up on `WARM_UP` (other tasks than the dev set's, so what
  it keeps between queries is what other queries left), then each query of the shape
  timed once: the retrieval alone (the `bm25` engine's `query`, k = 8) and the pipeline as the
  MCP tool runs it (`search.run`: limit 8, no LLM), wall and CPU (``time.process_time``);
- **mcp**: per shape and pass, a fresh ``boost mcp`` server per tree, warmed up the same
  way, then each query once (limit 8) over stdio: the round trip's wall time and the
  **server's CPU per call**, read from ``/proc/<pid>/task/*/schedstat`` (nanoseconds run
  on a CPU) before and after each call;
- **cold**: whole ``boost search QUERY --no-llm`` processes (``--keywords`` for the keyword
  shapes), each round ``python -c pass`` then every tree, wall and CPU (``wait4``) and the
  ratio to the pass run of the same round.

Every phase records ``uptime``'s load averages: the machine is shared, the CPU figures and
the paired ratios move much less than the wall times. Medians and p90 (nearest rank).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
EVAL = SHARED / "eval"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHORT_TASKS = (
    "terraform",
    "test my React app",
    "k8s helm chart",
    "write unit tests for a React app",
)
# A server's first calls, before the timed ones: tasks of other wording than the dev set's,
# so what a warm server keeps (dictionary rows, decoded lists) is what other queries left,
# as for an agent's next task, not the answer to the very query being timed.
WARM_UP = (
    "set up a CI pipeline that builds and tests a node project on every pull request",
    "write clear API documentation for our REST endpoints with examples",
    "help me debug a memory leak in a long running python service",
    "refactor a large React component into smaller hooks and components",
    "review this SQL schema for missing indexes and normalisation problems",
    "create a Dockerfile and compose setup for a django app with postgres",
    "add structured logging and tracing to a go microservice",
    "plan a database migration without downtime",
    "write end to end browser tests for the checkout flow",
    "harden an nginx configuration and check TLS settings",
    "summarise a long pdf report into key points",
    "generate release notes from the git history since the last tag",
    "design a caching layer with redis for slow queries",
    "audit npm dependencies for known vulnerabilities",
    "build a command line tool in rust that parses csv files",
    "improve the accessibility of a web form for screen readers",
)
LONG_WORDS = 18
MCP_LIMIT = 8
PROTOCOL = "2025-06-18"
SHAPES = ("short", "task", "long", "keywords", "expanded")
Query = Dict[str, Any]  # {"id", "query", "kind", "keywords": [...]}


# --------------------------------------------------------------------------- the shapes


def _jsonl(path: Path) -> List[Dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def expansions(path: Path = FIXTURES / "llm-dev.jsonl") -> Dict[str, List[str]]:
    """Query id → the keywords of its recorded LLM expansion."""
    out: Dict[str, List[str]] = {}
    for row in _jsonl(path):
        if row.get("purpose") != "expand":
            continue
        try:
            out[row["id"]] = [str(k) for k in json.loads(row["answer"])["keywords"]]
        except (ValueError, KeyError, TypeError):
            continue
    return out


def shapes() -> Dict[str, List[Query]]:
    """Each shape's queries (empty when ../shared/eval is absent)."""
    dev = _jsonl(EVAL / "dev.jsonl")
    if not dev:
        return {}
    agent = {r["id"]: list(r["keywords"]) for r in _jsonl(EVAL / "dev-keywords.jsonl")}
    llm = expansions()

    def q(d: Dict[str, Any], keywords: Sequence[str] = ()) -> Query:
        return {
            "id": d["id"],
            "query": d["query"],
            "kind": d.get("kind"),
            "keywords": list(keywords),
        }

    short = [q(d) for d in dev if d.get("type") == "keyword"]
    short += [
        {"id": f"s{i}", "query": t, "kind": None, "keywords": []} for i, t in enumerate(SHORT_TASKS)
    ]
    return {
        "short": short,
        "task": [q(d) for d in dev],
        "long": [q(d) for d in dev if len(d["query"].split()) >= LONG_WORDS],
        "keywords": [q(d, agent.get(d["id"], ())) for d in dev],
        "expanded": [q(d, llm.get(d["id"], ())) for d in dev],
    }


# --------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest rank: the smallest value with at least ``p`` % of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * p // 100) - 1)] if ordered else float("nan")


def summary(values: Sequence[float]) -> Dict[str, float]:
    if not values:
        return {"median": float("nan"), "p90": float("nan"), "n": 0}
    return {
        "median": round(statistics.median(values), 3),
        "p90": round(percentile(values, 90), 3),
        "n": len(values),
    }


def uptime() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


# --------------------------------------------------------------------------- trees


# tree path → suffix of its BOOST_HOME (``--home-suffix NAME=SUFFIX``): a tree that reads
# another index format than the others gets its own copy of each home, built by it.
HOME_SUFFIX: Dict[str, str] = {}


def home_of(home: Path, tree: Path) -> Path:
    """The BOOST_HOME ``tree`` uses for ``home``: itself, or its copy named by the suffix."""
    return Path(str(home) + HOME_SUFFIX.get(str(tree), ""))


def tree_env(home: Path, tree: Path) -> Dict[str, str]:
    home = home_of(home, tree)
    env = {**os.environ, "BOOST_HOME": str(home), "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def parse_trees(specs: Sequence[str]) -> Dict[str, Path]:
    if not specs:
        return {"this": ROOT}
    out: Dict[str, Path] = {}
    for spec in specs:
        name, _, path = spec.partition("=")
        if not path or not (Path(path) / "boost_cli").is_dir():
            raise SystemExit(f"--tree {spec!r}: give NAME=PATH of a checkout with boost_cli/")
        out[name] = Path(path).resolve()
    return out


# --------------------------------------------------------------------------- warm, in a child


def warm_child(home: Path, repeats: int, which: Sequence[str]) -> Dict[str, Any]:
    """Runs in a child with the tree's boost_cli first on the path."""
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import retrieval, search

    all_shapes = shapes()
    out: Dict[str, Any] = {"load_start": uptime(), "shapes": {}}
    warm_up = [{"query": t, "kind": None, "keywords": []} for t in WARM_UP]

    def fresh() -> Tuple[Any, Any]:
        """New engines (nothing kept from earlier queries), warmed up on `WARM_UP`."""
        engines = retrieval.Engines()
        reader = engines.index_reader()
        if reader is None:
            raise SystemExit(f"no index in {home}")
        # The BM25 engine as a search gets it (with what `get_retriever` hands it, such as
        # the related-terms table), not a bare reader.
        bm25 = retrieval.get_retriever("bm25", engines=engines).retriever
        for q in warm_up:
            pipeline(engines, bm25, q)
        return engines, bm25

    def retrieve(engines: Any, bm25: Any, q: Query) -> None:
        bm25.query(q["query"], MCP_LIMIT, q["kind"], None, q["keywords"])

    def pipeline(engines: Any, bm25: Any, q: Query) -> None:
        opts = search.SearchOptions(
            query=q["query"],
            limit=MCP_LIMIT,
            kind=q["kind"],
            rerank="none",
            expand="none",
            keywords=tuple(q["keywords"]),
        )
        search.run(opts, engines=engines)

    for shape in which:
        got: Dict[str, Any] = {}
        for name, fn in (("retrieve", retrieve), ("pipeline", pipeline)):
            wall: List[float] = []
            cpu: List[float] = []
            for _ in range(repeats):  # each query once per warmed-up engine
                engines, bm25 = fresh()
                for q in all_shapes[shape]:
                    t, c = time.perf_counter(), time.process_time()
                    fn(engines, bm25, q)
                    cpu.append((time.process_time() - c) * 1000)
                    wall.append((time.perf_counter() - t) * 1000)
            got[name] = {"wall_ms": wall, "cpu_ms": cpu}
        out["shapes"][shape] = got
    out["load_end"] = uptime()
    return out


def warm(home: Path, trees: Dict[str, Path], repeats: int, which: Sequence[str]) -> Dict[str, Any]:
    """A child per tree, in turn, ``rounds`` of them (the samples pooled)."""
    out: Dict[str, Any] = {t: {} for t in trees}
    for _ in range(2):  # two rounds: A B A B
        for name, tree in trees.items():
            cmd = [sys.executable, str(Path(__file__).resolve())]
            cmd += ["--warm-child", str(home_of(home, tree))]
            cmd += ["--warm-repeats", str(repeats), "--only", ",".join(which)]
            got = subprocess.run(
                cmd,
                env=tree_env(home, tree),
                cwd=str(tree),
                check=True,
                capture_output=True,
                text=True,
            )
            res = json.loads(got.stdout)
            slot = out[name]
            slot.setdefault("load", []).append([res["load_start"], res["load_end"]])
            for shape, per in res["shapes"].items():
                for what, series in per.items():
                    dst = slot.setdefault(shape, {}).setdefault(what, {"wall_ms": [], "cpu_ms": []})
                    dst["wall_ms"] += series["wall_ms"]
                    dst["cpu_ms"] += series["cpu_ms"]
    return out


# --------------------------------------------------------------------------- MCP server CPU


def proc_cpu_ns(pid: int) -> int:
    """Nanoseconds the process's threads have run on a CPU (``schedstat``), or its
    utime + stime in clock ticks converted when schedstat is unavailable."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total += int(fh.read().split()[0])
        return total
    except (OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


class Server:
    """A ``boost mcp`` subprocess and a newline-delimited JSON-RPC client for it."""

    def __init__(self, home: Path, tree: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=tree_env(home, tree),
            cwd=str(tree),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in: IO[bytes] = self.proc.stdin
        self._out: IO[bytes] = self.proc.stdout
        self._next = 0
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "query_shapes", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: Dict[str, Any]) -> None:
        self._in.write(json.dumps(message).encode("utf-8") + b"\n")
        self._in.flush()

    def request(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        line = self._out.readline()
        if not line:
            raise RuntimeError(f"boost mcp exited (rc={self.proc.poll()}) before answering")
        reply: Dict[str, Any] = json.loads(line)
        if reply.get("id") != self._next or "error" in reply:
            raise RuntimeError(f"unexpected reply to {method}: {line[:300]!r}")
        return reply

    def search(self, q: Query) -> Tuple[float, float]:
        """One boost_search call: (round-trip wall ms, server CPU ms)."""
        args: Dict[str, Any] = {"query": q["query"], "limit": MCP_LIMIT}
        if q["kind"]:
            args["kind"] = q["kind"]
        if q["keywords"]:
            args["keywords"] = q["keywords"]
        c0 = proc_cpu_ns(self.proc.pid)
        t0 = time.perf_counter()
        reply = self.request("tools/call", {"name": "boost_search", "arguments": args})
        wall = (time.perf_counter() - t0) * 1000
        cpu = (proc_cpu_ns(self.proc.pid) - c0) / 1e6
        if reply["result"].get("isError"):
            raise RuntimeError(f"boost_search {args!r}: {reply['result']['content'][0]['text']}")
        return wall, cpu

    def close(self) -> None:
        self._in.close()
        self.proc.wait(timeout=30)


def mcp(home: Path, trees: Dict[str, Path], passes: int, which: Sequence[str]) -> Dict[str, Any]:
    """Per shape and pass, a fresh server per tree warmed up on `WARM_UP`; then each query
    of the shape once to every tree in turn (the servers open at once)."""
    all_shapes = shapes()
    warm_up = [{"query": t, "kind": None, "keywords": []} for t in WARM_UP]
    out: Dict[str, Any] = {"load_start": uptime()}
    for shape in which:
        res = {name: {"wall_ms": [], "cpu_ms": []} for name in trees}
        for _ in range(passes):
            servers = {name: Server(home, tree) for name, tree in trees.items()}
            try:
                for q in warm_up:
                    for srv in servers.values():
                        srv.search(q)
                for q in all_shapes[shape]:
                    for name, srv in servers.items():
                        wall, cpu = srv.search(q)
                        res[name]["wall_ms"].append(wall)
                        res[name]["cpu_ms"].append(cpu)
            finally:
                for srv in servers.values():
                    srv.close()
        out[shape] = res
    out["load_end"] = uptime()
    return out


# --------------------------------------------------------------------------- cold


def _run(cmd: List[str], env: Dict[str, str], cwd: str) -> Tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[-4:]} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def boost_bin() -> List[str]:
    """The venv's ``boost`` script next to this interpreter, else ``python -m boost_cli``."""
    script = Path(sys.executable).parent / "boost"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "boost_cli"]


def cold(home: Path, trees: Dict[str, Path], runs: int, which: Sequence[str]) -> Dict[str, Any]:
    """Rounds of ``python -c pass`` then ``boost search`` with every tree, queries in turn."""
    all_shapes = shapes()
    out: Dict[str, Any] = {"load_start": uptime()}
    boost = boost_bin()
    for tree in trees.values():  # bytecode and page caches
        _run([*boost, "search", "warm up", "--no-llm"], tree_env(home, tree), "/")
    for shape in which:
        qs = all_shapes[shape]
        res: Dict[str, Any] = {"pass": {"wall_ms": [], "cpu_ms": []}}
        res.update({name: {"wall_ms": [], "cpu_ms": [], "x_pass": []} for name in trees})
        for n in range(runs):
            q = qs[n % len(qs)]
            cmd = [*boost, "search", q["query"], "--no-llm"]
            if q["kind"]:
                cmd += ["--kind", q["kind"]]
            if q["keywords"]:
                cmd += ["--keywords", ", ".join(q["keywords"])]
            any_env = tree_env(home, next(iter(trees.values())))
            pw, pc = _run([sys.executable, "-c", "pass"], any_env, "/")
            res["pass"]["wall_ms"].append(pw)
            res["pass"]["cpu_ms"].append(pc)
            for name, tree in trees.items():
                wall, cpu = _run(cmd, tree_env(home, tree), "/")
                res[name]["wall_ms"].append(wall)
                res[name]["cpu_ms"].append(cpu)
                res[name]["x_pass"].append(wall / pw)
        out[shape] = res
    out["load_end"] = uptime()
    return out


# --------------------------------------------------------------------------- rankings


def dump_child(home: Path, k: int, out_path: Path, engine: str = "bm25") -> None:
    """Every shape's full ranking (ids, scores, copies, snippets): a file to diff."""
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import retrieval

    engines = retrieval.Engines()
    choice = retrieval.get_retriever(engine, engines=engines)
    with open(out_path, "w", encoding="utf-8") as fh:
        for shape, qs in shapes().items():
            for q in qs:
                for kk in (1, 8, k):
                    hits = choice.retriever.query(
                        q["query"], kk, q["kind"], None, q["keywords"]
                    ).hits
                    row = {
                        "shape": shape,
                        "id": q["id"],
                        "k": kk,
                        "hits": [
                            [h.entry.id, repr(h.score), list(h.also_in), h.snippet, h.group]
                            for h in hits
                        ],
                    }
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- report


def report(raw: Dict[str, Any]) -> str:
    lines = [f"{raw['date']}  python {raw['python']}  nproc {raw['nproc']}  trees {raw['trees']}"]
    for scale, got in raw["scales"].items():
        lines.append(f"\n== {scale} ({got['home']})")
        if "warm" in got:
            lines.append(
                "warm, in process (ms; median / p90; load per child "
                + str([v.get("load") for v in got["warm"].values()])
                + ")"
            )
            for shape in SHAPES:
                for what in ("retrieve", "pipeline"):
                    cells = []
                    for name in raw["trees"]:
                        s = got["warm"][name].get(shape, {}).get(what)
                        if not s:
                            continue
                        w, c = summary(s["wall_ms"]), summary(s["cpu_ms"])
                        cells.append(
                            f"{name}: wall {w['median']:.1f} / {w['p90']:.1f}  cpu {c['median']:.1f} / {c['p90']:.1f}"
                        )
                    if cells:
                        lines.append(f"  {shape:9} {what:9} " + "   |   ".join(cells))
        if "mcp" in got:
            m = got["mcp"]
            lines.append(
                f"boost mcp boost_search (ms; median / p90; load {m['load_start']} → {m['load_end']})"
            )
            for shape in SHAPES:
                if shape not in m:
                    continue
                cells = []
                for name in raw["trees"]:
                    w, c = summary(m[shape][name]["wall_ms"]), summary(m[shape][name]["cpu_ms"])
                    cells.append(
                        f"{name}: server cpu {c['median']:.1f} / {c['p90']:.1f}  wall {w['median']:.1f} / {w['p90']:.1f}"
                    )
                lines.append(f"  {shape:9} " + "   |   ".join(cells))
        if "cold" in got:
            c = got["cold"]
            lines.append(
                f"cold boost search --no-llm (ms; median / p90; load {c['load_start']} → {c['load_end']})"
            )
            for shape in SHAPES:
                if shape not in c:
                    continue
                p = summary(c[shape]["pass"]["wall_ms"])
                cells = [f"pass {p['median']:.1f}"]
                for name in raw["trees"]:
                    w, cp = summary(c[shape][name]["wall_ms"]), summary(c[shape][name]["cpu_ms"])
                    x = summary(c[shape][name]["x_pass"])
                    cells.append(
                        f"{name}: wall {w['median']:.1f} / {w['p90']:.1f}  cpu {cp['median']:.1f} / {cp['p90']:.1f}  {x['median']:.2f}x pass"
                    )
                lines.append(f"  {shape:9} " + "   |   ".join(cells))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--home", type=Path, action="append", default=[], help="a BOOST_HOME (repeat: 1x, 10x)"
    )
    ap.add_argument(
        "--label", action="append", default=[], help="a name per --home (default 1x, 10x)"
    )
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (repeat)")
    ap.add_argument(
        "--home-suffix",
        action="append",
        default=[],
        help="NAME=SUFFIX: tree NAME uses HOME+SUFFIX (another index format's copy)",
    )
    ap.add_argument("--only", default="warm,mcp,cold", help="phases, or in a child: shapes")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="shapes to time")
    ap.add_argument("--warm-repeats", type=int, default=2)
    ap.add_argument("--mcp-passes", type=int, default=2)
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--dump", type=Path, help="write every shape's rankings here and stop")
    ap.add_argument("--k", type=int, default=100, help="with --dump: the deepest k")
    ap.add_argument("--engine", default="bm25", help="with --dump: bm25 or hybrid")
    ap.add_argument("--warm-child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.warm_child:
        print(json.dumps(warm_child(args.warm_child, args.warm_repeats, args.only.split(","))))
        return 0
    if not shapes():
        print(f"no dev set at {EVAL}; nothing to measure", file=sys.stderr)
        return 0
    if args.dump:
        dump_child(args.home[0], args.k, args.dump, args.engine)
        return 0
    trees = parse_trees(args.tree)
    for spec in args.home_suffix:
        name, _, suffix = spec.partition("=")
        if name not in trees:
            raise SystemExit(f"--home-suffix {spec!r}: no --tree named {name!r}")
        HOME_SUFFIX[str(trees[name])] = suffix
    which = [s for s in args.shapes.split(",") if s]
    phases = set(args.only.split(","))
    labels = args.label or ["1x", "10x", "other"][: len(args.home)]
    raw: Dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": platform.python_version(),
        "nproc": os.cpu_count(),
        "trees": {k: str(v) for k, v in trees.items()},
        "scales": {},
    }
    for label, home in zip(labels, args.home):
        got: Dict[str, Any] = {"home": str(home)}
        raw["scales"][label] = got
        if "warm" in phases:
            print(f"{label}: warm ...", file=sys.stderr)
            got["warm"] = warm(home, trees, args.warm_repeats, which)
        if "mcp" in phases:
            print(f"{label}: mcp ...", file=sys.stderr)
            got["mcp"] = mcp(home, trees, args.mcp_passes, which)
        if "cold" in phases:
            print(f"{label}: cold ...", file=sys.stderr)
            got["cold"] = cold(home, trees, args.cold_runs, which)
        if args.json:
            args.json.write_text(json.dumps(raw, indent=1))
    print(report(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
