#!/usr/bin/env python3
"""Scale benchmark: every figure of issue 12's table at 1x and Nx the shared corpus, in one run.

    python scripts/scale_bench.py --times 10 [--corpus DIR] [--work DIR] [--runs N]
        [--full-runs N] [--search-runs N] [--repeats N] [--mcp-calls N] [--dense]
        [--json FILE] [--keep]

The Nx corpus is built with ../shared/tools/scale_corpus.py (every registry copied N
times, each copy's Markdown made unique) into ``--corpus`` (default
/tmp/boost-scale-<N>), or reused from there when it is complete: it is only read. Both
corpora are tapped into fresh homes under the work folder, the smallest registry (copy 0
at Nx) from a private copy, so "one small tap changed" can commit to it. Then, at both
scales in the same run, each process measure right after a ``python -c pass`` run (its
baseline, taken under the same load):

- full ``boost reindex --force``: wall and CPU time, peak RSS of any process (GNU time
  for the main process, /proc samples for each worker);
- ``boost reindex`` with nothing changed;
- one small tap changed: ``boost update <tap>`` after a commit (fetch, scan, and the index
  refresh that update does), and ``boost reindex --tap <tap>`` (the tap's segment rebuilt,
  the merge and the manifest redone);
- the index's size on disk;
- cold ``boost search "<dev query>" --no-rerank`` (1x and Nx interleaved): wall, CPU, peak RSS;
- warm ``search.run`` (no rerank, engine bm25, 10 hits) and ``IndexReader.query`` (k=10)
  in a child process per scale: median and p90, wall and CPU;
- warm ``boost_search`` through ``boost mcp`` (scripts/mcp_latency.py);
- with ``--dense``: the vector store built with the offline ``hash`` provider (one vector
  per entry), and warm dense queries against it, per backend that loads here.

``uptime``'s load average is recorded with every phase: on a shared machine wall times
move with it; CPU times and the ratios measured in the same run move much less.
Exits 0 with a message when the shared corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (scripts/bench.py: process measurement helpers)
import corpus  # noqa: E402  (scripts/corpus.py: the shared corpus as local git repos)

SCALE_TOOL = corpus.SHARED / "tools" / "scale_corpus.py"

# Issue 12's targets at Nx: (figure, limit, what the limit is relative to).
TARGETS: Dict[str, Tuple[float, str]] = {
    "search_cold_ratio": (1.5, "x its 1x time"),
    "search_cold_rss_mb": (40.0, "MB"),
    "warm_median_ms": (15.0, "ms"),
    "warm_p90_ms": (30.0, "ms"),
    "mcp_median_ms": (20.0, "ms"),
    "reindex_noop_s": (0.5, "s"),
    "one_tap_s": (2.0, "s"),
    "reindex_full_ratio": (12.0, "x its 1x time"),
    "reindex_full_rss_mb": (250.0, "MB"),
    "index_ratio": (11.0, "x its 1x size"),
}


def uptime() -> str:
    """The load averages, as ``uptime`` prints them."""
    return " ".join(f"{x:.2f}" for x in bench.load_avg())


def p90(values: Sequence[float]) -> float:
    return bench.percentile(values, 90)


# --------------------------------------------------------------------------- set-up


def scaled_corpus(times: int, folder: Path) -> List[Path]:
    """The ``times``-fold corpus under ``folder``: reused when every copy is there as a git
    repo, else built with the shared tool (which replaces the folder)."""
    regs = [r["dir"] for r in corpus.manifest()["registries"]]
    want = [folder / f"{r}__v{i}" for r in regs for i in range(times)]
    if all((p / ".git").is_dir() for p in want):
        print(f"reusing the {times}x corpus in {folder}", file=sys.stderr)
        return sorted(want)
    print(f"building the {times}x corpus in {folder} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, str(SCALE_TOOL), "--times", str(times), "--out", str(folder)],
        check=True,
    )
    return sorted(want)


def smallest(repos: Sequence[Path]) -> Path:
    """The registry with the fewest files in the corpus manifest (the "one small tap", as
    scripts/bench.py picks it)."""
    regs = corpus.manifest()["registries"]
    name = min(regs, key=lambda r: (r["files"], r["dir"]))["dir"]
    return next(r for r in repos if r.name == name)


def tap_home(work: Path, repos: Sequence[Path], small: Path) -> bench.Setup:
    """Tap ``repos`` into ``work/home``, ``small`` from a private copy (``work/src``)."""
    private = work / "src" / small.name
    shutil.copytree(small, private, symlinks=True)
    for p in [private, *private.rglob("*")]:  # a read-only source stays writable here
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o200)
    home = work / "home"
    tapped = corpus.tap_all(home, [private if r == small else r for r in repos])
    env = {**os.environ, "BOOST_HOME": str(home), "PYTHONPYCACHEPREFIX": str(work / "pyc")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return bench.Setup(work, home, env, corpus.boost_cmd(), private, tapped["seconds"])


# --------------------------------------------------------------------------- measures


def measured(s: bench.Setup, cmd: List[str], sample: bool = False) -> bench.Run:
    return bench.checked(bench.run_measured(cmd, s.env, sample=sample), " ".join(cmd[-3:]))


def passed(s: bench.Setup) -> float:
    return measured(s, bench.PASS).seconds


def reindex_figures(
    scales: Dict[str, bench.Setup], runs: int, full_runs: int
) -> Dict[str, Dict[str, Any]]:
    """Full, nothing-changed and one-tap reindexes at every scale, each after a pass run."""
    out: Dict[str, Dict[str, Any]] = {k: {"load": {}} for k in scales}
    reindex = [*corpus.boost_cmd(), "reindex"]
    for name, s in scales.items():
        out[name]["load"]["first_build"] = uptime()
        first = measured(s, reindex, sample=True)
        out[name]["first_build_s"] = first.seconds
    for name, s in scales.items():
        r = out[name]
        r["load"]["full"] = uptime()
        r["full"] = []
        for _ in range(full_runs):
            base = passed(s)
            run = measured(s, [*reindex, "--force"], sample=True)
            r["full"].append(
                {
                    "s": run.seconds,
                    "cpu_s": run.cpu_seconds,
                    "pass_s": base,
                    "maxrss_kb": max([run.maxrss_kb, *run.peaks_kb.values()]),
                    "peaks_kb": run.peaks_kb,
                    "tree_sum_kb": run.tree_sum_kb,
                }
            )
    for name, s in scales.items():
        r = out[name]
        r["load"]["noop"] = uptime()
        r["noop"] = []
        for _ in range(runs):
            base = passed(s)
            run = measured(s, reindex)
            r["noop"].append({"s": run.seconds, "cpu_s": run.cpu_seconds, "pass_s": base})
    for name, s in scales.items():
        r = out[name]
        r["load"]["one_tap"] = uptime()
        r["update"], r["one_tap"] = [], []
        for n in range(runs):
            bench.change_small_repo(s.small, n)
            base = passed(s)
            up = measured(s, [*corpus.boost_cmd(), "update", s.small.name])
            r["update"].append({"s": up.seconds, "cpu_s": up.cpu_seconds, "pass_s": base})
            base = passed(s)
            run = measured(s, [*reindex, "--tap", s.small.name], sample=True)
            r["one_tap"].append(
                {
                    "s": run.seconds,
                    "cpu_s": run.cpu_seconds,
                    "pass_s": base,
                    "maxrss_kb": run.maxrss_kb,
                }
            )
        bench._check_indexed(s)
        manifest = json.loads((s.home / "cache" / "index" / "manifest.json").read_text())
        r["stats"] = manifest["stats"]
        r["index_bytes"] = bench._dir_bytes(s.home / "cache" / "index")
    return out


def cold_figures(scales: Dict[str, bench.Setup], runs: int) -> Dict[str, Any]:
    """Cold searches, the scales interleaved, each round after one pass run."""
    queries = bench.dev_queries()
    for s in scales.values():  # warm the bytecode cache and the page cache
        measured(s, [*corpus.boost_cmd(), "search", "warm up", "--no-rerank"])
    out: Dict[str, Any] = {"load_start": uptime(), "pass_s": [], "pass_maxrss_kb": []}
    for name in scales:
        out[name] = {"s": [], "cpu_s": [], "maxrss_kb": []}
    any_setup = next(iter(scales.values()))
    for n in range(runs):
        q = queries[n % len(queries)]["query"]
        base = measured(any_setup, bench.PASS)
        out["pass_s"].append(base.seconds)
        out["pass_maxrss_kb"].append(base.maxrss_kb)
        for name, s in scales.items():
            run = measured(s, [*corpus.boost_cmd(), "search", q, "--no-rerank"])
            out[name]["s"].append(run.seconds)
            out[name]["cpu_s"].append(run.cpu_seconds)
            out[name]["maxrss_kb"].append(run.maxrss_kb)
    out["load_end"] = uptime()
    return out


def warm_child(home: Path, repeats: int) -> Dict[str, Any]:
    """In this process: warm `search.run` and `IndexReader.query` over the dev queries."""
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import index, retrieval, search

    queries = [q["query"] for q in bench.dev_queries()]
    reader = index.open_index()
    if reader is None:
        raise SystemExit(f"no index in {home}")

    def pipeline(q: str) -> None:
        search.run(search.SearchOptions(query=q, rerank="none", engine="bm25"))

    def direct(q: str) -> None:
        reader.query(q, k=10)

    import query_shapes

    engines = retrieval.Engines()
    agent = {q["query"]: q for q in query_shapes.shapes().get("keywords", [])}

    def keywords(q: str) -> None:
        """As an agent calls boost_search: its keywords, the kind filter, 8 hits."""
        a = agent.get(q) or {"kind": None, "keywords": []}
        opts = search.SearchOptions(
            query=q,
            limit=query_shapes.MCP_LIMIT,
            kind=a["kind"],
            keywords=tuple(a["keywords"]),
            rerank="none",
            expand="none",
            engine="bm25",
        )
        search.run(opts, engines=engines)

    out: Dict[str, Any] = {"load_start": uptime()}
    for name, fn in (("search_run", pipeline), ("reader_k10", direct), ("keywords", keywords)):
        for q in queries:  # warm-up pass
            fn(q)
        wall, cpu = [], []
        for _ in range(repeats):
            for q in queries:
                t, c = time.perf_counter(), time.process_time()
                fn(q)
                cpu.append((time.process_time() - c) * 1000)
                wall.append((time.perf_counter() - t) * 1000)
        out[name] = {"wall_ms": wall, "cpu_ms": cpu}
    out["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["load_end"] = uptime()
    return out


def warm_figures(s: bench.Setup, repeats: int) -> Dict[str, Any]:
    cmd = [sys.executable, __file__, "--warm-child", str(s.home), "--repeats", str(repeats)]
    got = subprocess.run(cmd, env=s.env, check=True, capture_output=True, text=True)
    result: Dict[str, Any] = json.loads(got.stdout)
    return result


def mcp_figures(s: bench.Setup, calls: int) -> Dict[str, Any]:
    cmd = [sys.executable, str(ROOT / "scripts" / "mcp_latency.py")]
    cmd += ["--home", str(s.home), "-n", str(calls), "--json"]
    load = uptime()
    got = subprocess.run(cmd, env=s.env, check=True, capture_output=True, text=True)
    result: Dict[str, Any] = json.loads(got.stdout)
    result["load"] = load
    return result


def dense_child(home: Path, repeats: int) -> Dict[str, Any]:
    """In this process: warm dense queries (the store's own backend) over the dev queries."""
    os.environ["BOOST_HOME"] = str(home)
    from boost_cli.core import dense, search

    queries = [q["query"] for q in bench.dev_queries()]
    backend, note = dense.backend_status()
    out: Dict[str, Any] = {"backend": backend, "note": note, "load_start": uptime()}

    def pipeline(q: str) -> None:
        search.run(search.SearchOptions(query=q, rerank="none", engine="dense"))

    for q in queries:
        pipeline(q)
    wall, cpu = [], []
    for _ in range(repeats):
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            pipeline(q)
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - t) * 1000)
    out.update(wall_ms=wall, cpu_ms=cpu, load_end=uptime())
    out["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return out


def dense_figures(s: bench.Setup, repeats: int, pythons: Sequence[str]) -> List[Dict[str, Any]]:
    """Per interpreter (the first is this one): `boost reindex --dense` with the hash
    provider (after the first, nothing is embedded again: the store syncs its own backend's
    index), a cold dense search, and warm dense queries in a child process."""
    env = {**s.env, "BOOST_EMBED_PROVIDER": "hash"}
    cold_q = bench.dev_queries()[0]["query"]
    out = []
    for py in pythons:
        boost = [py, "-m", "boost_cli"]
        load = uptime()
        build = bench.checked(
            bench.run_measured([*boost, "reindex", "--dense", "--yes"], env), "reindex --dense"
        )
        cold = bench.checked(
            bench.run_measured([*boost, "search", cold_q, "--no-rerank", "--engine", "dense"], env),
            "search --engine dense",
        )
        cmd = [py, __file__, "--dense-child", str(s.home), "--repeats", str(repeats)]
        got = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
        warm: Dict[str, Any] = json.loads(got.stdout)
        store = s.home / "cache" / "vectors.sqlite"
        out.append(
            {
                "python": py,
                "load": load,
                "build_s": build.seconds,
                "build_cpu_s": build.cpu_seconds,
                "build_maxrss_kb": build.maxrss_kb,
                "store_bytes": store.stat().st_size if store.exists() else 0,
                "cold_s": cold.seconds,
                "cold_maxrss_kb": cold.maxrss_kb,
                "warm": warm,
            }
        )
    return out


# --------------------------------------------------------------------------- report


def figures(raw: Dict[str, Any], scale: str) -> Dict[str, float]:
    """The headline numbers of one scale (medians unless named otherwise)."""
    med = statistics.median
    r, c, w = raw["reindex"][scale], raw["cold"], raw["warm"][scale]
    out = {
        "search_cold_ms": med(c[scale]["s"]) * 1000,
        "search_cold_cpu_ms": med(c[scale]["cpu_s"]) * 1000,
        "search_cold_rss_mb": max(c[scale]["maxrss_kb"]) / 1024,
        "warm_median_ms": med(w["search_run"]["wall_ms"]),
        "warm_p90_ms": p90(w["search_run"]["wall_ms"]),
        "warm_cpu_median_ms": med(w["search_run"]["cpu_ms"]),
        "warm_cpu_p90_ms": p90(w["search_run"]["cpu_ms"]),
        "reader_median_ms": med(w["reader_k10"]["wall_ms"]),
        "reader_cpu_median_ms": med(w["reader_k10"]["cpu_ms"]),
        "reader_cpu_p90_ms": p90(w["reader_k10"]["cpu_ms"]),
        "keywords_cpu_median_ms": med(w["keywords"]["cpu_ms"]) if "keywords" in w else 0.0,
        "keywords_cpu_p90_ms": p90(w["keywords"]["cpu_ms"]) if "keywords" in w else 0.0,
        "warm_rss_mb": w["maxrss_kb"] / 1024,
        "reindex_noop_s": med([x["s"] for x in r["noop"]]),
        "reindex_noop_cpu_s": med([x["cpu_s"] for x in r["noop"]]),
        "update_s": med([x["s"] for x in r["update"]]),
        "one_tap_s": med([x["s"] for x in r["one_tap"]]),
        "one_tap_cpu_s": med([x["cpu_s"] for x in r["one_tap"]]),
        "reindex_full_s": med([x["s"] for x in r["full"]]),
        "reindex_full_cpu_s": med([x["cpu_s"] for x in r["full"]]),
        "reindex_full_rss_mb": max(x["maxrss_kb"] for x in r["full"]) / 1024,
        "index_mb": r["index_bytes"] / 1e6,
        "pass_full_ms": med([x["pass_s"] for x in r["full"]]) * 1000,
        "pass_noop_ms": med([x["pass_s"] for x in r["noop"]]) * 1000,
        "pass_tap_ms": med([x["pass_s"] for x in r["one_tap"]]) * 1000,
    }
    mcp = raw.get("mcp", {}).get(scale)
    if mcp:
        out["mcp_median_ms"] = mcp["median_ms"]
        out["mcp_p95_ms"] = mcp["p95_ms"]
    return out


def report(raw: Dict[str, Any]) -> str:
    big = raw["big"]
    f1, fn = figures(raw, "1x"), figures(raw, big)
    pass_ms = statistics.median(raw["cold"]["pass_s"]) * 1000
    derived = {
        "search_cold_ratio": fn["search_cold_ms"] / f1["search_cold_ms"],
        "reindex_full_ratio": fn["reindex_full_s"] / f1["reindex_full_s"],
        "index_ratio": fn["index_mb"] / f1["index_mb"],
    }

    def verdict(key: str) -> str:
        if key not in TARGETS:
            return ""
        limit, unit = TARGETS[key]
        value = derived[key] if key in derived else fn[key]
        return f"<= {limit:g} {unit}: " + bench.verdict(value, limit)

    def x_pass(value_ms: float, base_ms: float) -> str:
        return f"{value_ms / base_ms:.1f}x" if base_ms > 0 else ""

    rows = [["measure", "1x", f"{big}", f"{big}/1x", "1x / pass", f"{big} / pass", "target"]]

    def row(label: str, key: str, fmt: str, scale_ms: float = 0.0, base: str = "") -> None:
        a, b = f1.get(key), fn.get(key)
        ratio = f"{b / a:.2f}" if a and b is not None else ""
        xa = x_pass(a * scale_ms, f1[base]) if scale_ms and base and a else ""
        xb = x_pass(b * scale_ms, fn[base]) if scale_ms and base and b else ""
        cells = [
            label,
            "" if a is None else fmt.format(a),
            "" if b is None else fmt.format(b),
            ratio,
            xa,
            xb,
        ]
        target_key = {
            "search_cold_ms": "search_cold_ratio",
            "reindex_full_s": "reindex_full_ratio",
            "index_mb": "index_ratio",
        }.get(key, key)
        rows.append([*cells, verdict(target_key)])

    f1["pass_cold_ms"] = fn["pass_cold_ms"] = pass_ms
    row("cold boost search (median, wall)", "search_cold_ms", "{:.0f} ms", 1, "pass_cold_ms")
    row("  CPU (median)", "search_cold_cpu_ms", "{:.0f} ms", 1, "pass_cold_ms")
    row("  peak RSS (max)", "search_cold_rss_mb", "{:.1f} MB")
    row("warm search.run median (wall)", "warm_median_ms", "{:.1f} ms")
    row("  p90 (wall)", "warm_p90_ms", "{:.1f} ms")
    row("  CPU median", "warm_cpu_median_ms", "{:.1f} ms")
    row("  CPU p90", "warm_cpu_p90_ms", "{:.1f} ms")
    row("warm IndexReader.query k=10, CPU median", "reader_cpu_median_ms", "{:.1f} ms")
    row("  CPU p90", "reader_cpu_p90_ms", "{:.1f} ms")
    row(
        "warm search.run with agent keywords (8 hits), CPU median",
        "keywords_cpu_median_ms",
        "{:.1f} ms",
    )
    row("  CPU p90", "keywords_cpu_p90_ms", "{:.1f} ms")
    row("warm process peak RSS", "warm_rss_mb", "{:.1f} MB")
    row("MCP boost_search warm median", "mcp_median_ms", "{:.1f} ms")
    row("  p95", "mcp_p95_ms", "{:.1f} ms")
    row("reindex, nothing changed (wall)", "reindex_noop_s", "{:.2f} s", 1000, "pass_noop_ms")
    row("  CPU", "reindex_noop_cpu_s", "{:.2f} s", 1000, "pass_noop_ms")
    row("boost update <small tap> (wall)", "update_s", "{:.2f} s", 1000, "pass_tap_ms")
    row("reindex --tap <small tap> (wall)", "one_tap_s", "{:.2f} s", 1000, "pass_tap_ms")
    row("  CPU", "one_tap_cpu_s", "{:.2f} s", 1000, "pass_tap_ms")
    row("full reindex --force (wall)", "reindex_full_s", "{:.1f} s", 1000, "pass_full_ms")
    row("  CPU, all processes", "reindex_full_cpu_s", "{:.1f} s", 1000, "pass_full_ms")
    row("  peak RSS, any process", "reindex_full_rss_mb", "{:.0f} MB")
    row("index on disk", "index_mb", "{:.1f} MB")
    m = raw["machine"]
    lines = [
        f"{m['date']}  {m['platform']}  python {m['python']}  nproc {m['nproc']}",
        f"load average: start {m['load_start']}, end {m['load_end']}",
    ]
    for scale in ("1x", big):
        st = raw["reindex"][scale]["stats"]
        lines.append(
            f"{scale}: {st['taps']} taps, {st['entries']} entries, {st['contents']} contents, "
            f"{st['chunks']} chunks, {st['terms']} terms; load by phase "
            f"{raw['reindex'][scale]['load']}"
        )
    lines.append(
        f"python -c pass, median wall: {pass_ms:.1f} ms (cold searches); "
        f"1x phases: full {f1['pass_full_ms']:.1f}, no-op {f1['pass_noop_ms']:.1f}, "
        f"one tap {f1['pass_tap_ms']:.1f} ms; {big}: full {fn['pass_full_ms']:.1f}, "
        f"no-op {fn['pass_noop_ms']:.1f}, one tap {fn['pass_tap_ms']:.1f} ms"
    )
    peaks = raw["reindex"][big]["full"][0]["peaks_kb"]
    lines.append(
        f"{big} full reindex, peak RSS per process (MB): "
        + ", ".join(f"{k} {v / 1024:.0f}" for k, v in peaks.items())
    )
    lines.append("")
    text = "\n".join(lines) + bench.format_table(rows)
    for d in raw.get("dense", []):
        w = d["warm"]
        text += (
            f"\n\ndense at {big}, backend {w['backend']} ({d['python']}; hash provider, entry "
            f"vectors; load {d['load']}): reindex --dense {d['build_s']:.1f} s wall / "
            f"{d['build_cpu_s']:.1f} s CPU, peak RSS {d['build_maxrss_kb'] / 1024:.0f} MB, store "
            f"{d['store_bytes'] / 1e6:.1f} MB; cold search --engine dense "
            f"{d['cold_s'] * 1000:.0f} ms, {d['cold_maxrss_kb'] / 1024:.0f} MB; warm search.run "
            f"median {statistics.median(w['wall_ms']):.1f} ms wall, CPU median "
            f"{statistics.median(w['cpu_ms']):.1f} / p90 {p90(w['cpu_ms']):.1f} ms"
        )
    return text


# --------------------------------------------------------------------------- main


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--times", type=int, default=10, help="the scale (default 10)")
    ap.add_argument("--corpus", type=Path, help="where the Nx corpus is, or is built")
    ap.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    ap.add_argument("--runs", type=int, default=3, help="runs of the no-op / one-tap measures")
    ap.add_argument("--full-runs", type=int, default=1, help="runs of the full reindex")
    ap.add_argument("--search-runs", type=int, default=20, help="cold searches per scale")
    ap.add_argument("--repeats", type=int, default=3, help="warm passes over the dev queries")
    ap.add_argument("--mcp-calls", type=int, default=100, help="timed MCP calls per scale")
    ap.add_argument("--dense", action="store_true", help="also the dense store at Nx")
    ap.add_argument(
        "--dense-python",
        action="append",
        default=[],
        metavar="PY",
        help="with --dense: also query with this interpreter (e.g. one where sqlite-vec loads)",
    )
    ap.add_argument("--json", type=Path, help="write every sample and figure here")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--warm-child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--dense-child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.warm_child:
        print(json.dumps(warm_child(args.warm_child, args.repeats)))
        return 0
    if args.dense_child:
        print(json.dumps(dense_child(args.dense_child, args.repeats)))
        return 0
    if not (corpus.CORPUS / "MANIFEST.json").is_file():
        print(f"no corpus at {corpus.CORPUS}; nothing to benchmark", file=sys.stderr)
        return 0
    if args.times < 2 or min(args.runs, args.full_runs, args.repeats) < 1:
        ap.error("use --times >= 2 and --runs, --full-runs, --repeats >= 1")
    if args.search_runs < 5:
        ap.error("use --search-runs >= 5")
    big = f"{args.times}x"
    machine: Dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "platform": __import__("platform").platform(terse=True),
        "python": sys.version.split()[0],
        "nproc": os.cpu_count(),
        "load_start": uptime(),
    }
    work = args.work or Path(tempfile.mkdtemp(prefix="boost-scale-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        one = corpus.prepare_repos()
        many = scaled_corpus(
            args.times, args.corpus or Path(tempfile.gettempdir()) / f"boost-scale-{args.times}"
        )
        small = smallest(one)
        print("tapping ...", file=sys.stderr)
        scales = {
            "1x": tap_home(work / "1x", one, small),
            big: tap_home(work / big, many, next(r for r in many if r.name == f"{small.name}__v0")),
        }
        raw: Dict[str, Any] = {"machine": machine, "big": big, "times": args.times}
        raw["tap_s"] = {k: s.tap_seconds for k, s in scales.items()}
        print("reindex measures ...", file=sys.stderr)
        raw["reindex"] = reindex_figures(scales, args.runs, args.full_runs)
        print("cold searches ...", file=sys.stderr)
        raw["cold"] = cold_figures(scales, args.search_runs)
        print("warm queries ...", file=sys.stderr)
        raw["warm"] = {k: warm_figures(s, args.repeats) for k, s in scales.items()}
        print("MCP ...", file=sys.stderr)
        raw["mcp"] = {k: mcp_figures(s, args.mcp_calls) for k, s in scales.items()}
        if args.dense:
            print("dense ...", file=sys.stderr)
            pythons = [sys.executable, *args.dense_python]
            raw["dense"] = dense_figures(scales[big], args.repeats, pythons)
        machine["load_end"] = uptime()
        raw["figures"] = {k: figures(raw, k) for k in scales}
        print(report(raw))
        if args.json:
            args.json.write_text(json.dumps(raw, indent=1))
    finally:
        if args.keep or args.work:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
