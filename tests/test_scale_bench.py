"""scripts/scale_bench.py's figures and report on hand-made samples, and its corpus reuse."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict

import pytest

from tests.helpers import ROOT


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "boost_scripts_scale_bench", ROOT / "scripts" / "scale_bench.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


scale = _load()


def _scale(k: float, stats: Dict[str, int]) -> Dict[str, Any]:
    """One scale's reindex samples, every time ``k`` times the 1x one."""
    run = {"s": 2.0 * k, "cpu_s": 3.0 * k, "pass_s": 0.02, "maxrss_kb": int(100_000 * k)}
    return {
        "load": {"full": "1.00 1.00 1.00"},
        "full": [{**run, "peaks_kb": {"main": 50_000, "child1": int(100_000 * k)}}],
        "noop": [{"s": 0.2, "cpu_s": 0.05, "pass_s": 0.02}],
        "update": [{"s": 0.5, "cpu_s": 0.3, "pass_s": 0.02}],
        "one_tap": [{"s": 0.4 * k, "cpu_s": 0.2, "pass_s": 0.02, "maxrss_kb": 60_000}],
        "stats": stats,
        "index_bytes": int(25e6 * k),
    }


def _warm(ms: float) -> Dict[str, Any]:
    samples = [ms * (1 + i / 10) for i in range(10)]  # median 1.45 ms, p90 1.8 ms
    return {
        "search_run": {"wall_ms": samples, "cpu_ms": samples},
        "reader_k10": {"wall_ms": samples, "cpu_ms": samples},
        "maxrss_kb": 30_000,
    }


def raw() -> Dict[str, Any]:
    stats = {"taps": 12, "entries": 9, "contents": 7, "chunks": 88, "terms": 76}
    return {
        "machine": {
            "date": "today",
            "platform": "Linux",
            "python": "3.11",
            "nproc": 2,
            "load_start": "1.00 1.00 1.00",
            "load_end": "2.00 2.00 2.00",
        },
        "big": "10x",
        "reindex": {"1x": _scale(1.0, stats), "10x": _scale(10.0, {**stats, "taps": 120})},
        "cold": {
            "pass_s": [0.02] * 5,
            "1x": {"s": [0.1] * 5, "cpu_s": [0.08] * 5, "maxrss_kb": [25_000] * 5},
            "10x": {"s": [0.2] * 5, "cpu_s": [0.15] * 5, "maxrss_kb": [50_000] * 5},
        },
        "warm": {"1x": _warm(10.0), "10x": _warm(100.0)},
        "mcp": {
            "1x": {"median_ms": 9.0, "p95_ms": 20.0},
            "10x": {"median_ms": 18.0, "p95_ms": 40.0},
        },
    }


def test_figures_are_medians_maxima_and_percentiles() -> None:
    f = scale.figures(raw(), "10x")
    assert f["search_cold_ms"] == pytest.approx(200.0)
    assert f["search_cold_rss_mb"] == pytest.approx(50_000 / 1024)
    assert f["warm_median_ms"] == pytest.approx(145.0)
    assert f["warm_p90_ms"] == pytest.approx(180.0)  # nearest rank: the 9th of 10
    assert f["reindex_full_rss_mb"] == pytest.approx(1_000_000 / 1024)
    assert f["index_mb"] == pytest.approx(250.0)
    assert f["mcp_median_ms"] == 18.0


def test_report_compares_the_scales_and_says_what_missed() -> None:
    text = scale.report(raw())
    rows = text.splitlines()

    class Lines:
        def __getitem__(self, label: str) -> str:
            (line,) = [r for r in rows if r.startswith(label + "  ")]
            return line

    lines = Lines()
    cold = lines["cold boost search (median, wall)"]
    assert "100 ms" in cold and "200 ms" in cold and "2.00" in cold
    assert "5.0x" in cold and "10.0x" in cold  # x pass: 100 and 200 ms over 20 ms
    assert "<= 1.5 x its 1x time: MISSED (-33 %)" in cold
    assert "<= 40 MB: MISSED" in lines["  peak RSS (max)"]
    assert "<= 15 ms: MISSED" in lines["warm search.run median (wall)"]
    assert "<= 20 ms: met (+10 %)" in lines["MCP boost_search warm median"]
    assert "<= 0.5 s: met (+60 %)" in lines["reindex, nothing changed (wall)"]
    assert "<= 12 x its 1x time: met (+17 %)" in lines["full reindex --force (wall)"]
    assert "<= 250 MB: MISSED" in lines["  peak RSS, any process"]
    assert "<= 11 x its 1x size: met (+9 %)" in lines["index on disk"]
    assert "10x full reindex, peak RSS per process (MB): main 49, child1 977" in text


def test_a_complete_scaled_corpus_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regs = [{"dir": "a", "files": 3}, {"dir": "b", "files": 1}]
    monkeypatch.setattr(scale.corpus, "manifest", lambda: {"registries": regs})
    for name in ("a__v0", "a__v1", "b__v0", "b__v1"):
        (tmp_path / name / ".git").mkdir(parents=True)
    got = scale.scaled_corpus(2, tmp_path)
    assert [p.name for p in got] == ["a__v0", "a__v1", "b__v0", "b__v1"]
    assert scale.smallest([tmp_path / "a", tmp_path / "b"]).name == "b"
