"""The pure helpers of scripts/bench.py and scripts/beir.py, on hand-made examples."""

from __future__ import annotations

import importlib.util
import json
import math
import resource
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import ROOT, indexed_example


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


bench = _load("boost_scripts_bench", ROOT / "scripts" / "bench.py")
beir = _load("boost_scripts_beir", ROOT / "scripts" / "beir.py")


# --------------------------------------------------------------------------- bench


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 21))  # 1..20
    assert bench.percentile(values, 95) == 19
    assert bench.percentile(values, 100) == 20
    assert bench.percentile([4, 1, 3, 2], 50) == 2
    assert bench.percentile([7.5], 95) == 7.5
    with pytest.raises(ValueError):
        bench.percentile([], 50)
    with pytest.raises(ValueError):
        bench.percentile([1], 0)


def test_summarize() -> None:
    s = bench.summarize([3.0, 1.0, 2.0, 10.0])
    assert s == {"median": 2.5, "p95": 10.0, "min": 1.0, "max": 10.0, "n": 4}


def test_ratio_and_verdict() -> None:
    assert bench.ratio(30.0, 12.0) == 2.5
    assert bench.ratio(1.0, 0.0) is None
    assert bench.verdict(80.0, 100.0) == "met (+20 %)"
    assert bench.verdict(100.0, 100.0) == "met (+0 %)"
    assert bench.verdict(150.0, 100.0) == "MISSED (-50 %)"


def test_format_table_aligns_columns() -> None:
    text = bench.format_table([["a", "bb"], ["ccc", "d"]])
    assert text.splitlines() == ["a    bb", "---  --", "ccc  d"]


def test_run_measured_times_a_process_and_its_peak_rss() -> None:
    run = bench.run_measured([sys.executable, "-c", "bytearray(60_000_000)"], {})
    assert run.rc == 0 and run.seconds > 0 and run.cpu_seconds > 0
    assert run.maxrss_kb >= 60_000_000 // 1024


def test_run_measured_does_not_count_the_spawning_process() -> None:
    if not bench.exact_rss():
        pytest.skip("no GNU time: peak RSS is an upper bound")
    ballast = bytearray(150_000_000)  # make this process clearly bigger than the child
    ballast[::4096] = b"x" * len(ballast[::4096])
    own_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = bench.run_measured([sys.executable, "-c", "pass"], {})
    assert run.rc == 0
    assert 0 < run.maxrss_kb < own_kb - 100_000


def test_tree_sampler_sees_children() -> None:
    if not Path("/proc/self/task").is_dir():
        pytest.skip("no /proc")
    child = (
        "import time; b = bytearray(40_000_000); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.3)"
    )
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    run = bench.run_measured([sys.executable, "-c", parent], {}, sample=True)
    assert run.rc == 0
    assert set(run.peaks_kb) == {"main", "child1"}
    assert run.peaks_kb["child1"] >= 40_000
    assert run.tree_sum_kb >= run.peaks_kb["child1"]


def test_bench_skips_without_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench, "CORPUS", tmp_path / "no-corpus")
    assert bench.main([]) == 0
    assert "nothing to benchmark" in capsys.readouterr().err


# --------------------------------------------------------------------------- beir


def test_ndcg_hand_computed() -> None:
    rels = {"a": 1, "b": 2}
    # ranked x (0), a (1), b (2): DCG = 1/log2(3) + 2/log2(4); ideal 2/log2(2) + 1/log2(3)
    expected = (1 / math.log2(3) + 1.0) / (2.0 + 1 / math.log2(3))
    assert beir.ndcg_at_k(["x", "a", "b"], rels) == pytest.approx(expected)
    assert beir.ndcg_at_k(["b", "a"], rels) == pytest.approx(1.0)
    assert beir.ndcg_at_k(["x"], {"a": 0}) == 0.0


def test_ndcg_cuts_at_k() -> None:
    ranked = [f"d{i}" for i in range(10)] + ["a"]
    assert beir.ndcg_at_k(ranked, {"a": 1}, k=10) == 0.0
    assert beir.ndcg_at_k(ranked, {"a": 1}, k=11) == pytest.approx(1 / math.log2(12))


def test_recall_and_mean_over_qrels() -> None:
    assert beir.recall_at_k(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, k=2) == pytest.approx(1 / 3)
    run = {"q1": ["a"], "q3": ["z"]}  # q2 has no run: it scores 0
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    assert beir.evaluate(run, qrels) == {"ndcg@10": 0.5, "recall@100": 0.5}


def test_load_qrels_skips_the_header(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\t31715818\t1\n1\t42\t2\n3\t7\t1\n")
    assert beir.load_qrels(path) == {"1": {"31715818": 1, "42": 2}, "3": {"7": 1}}


def test_documents_become_skills_the_catalog_reads(tmp_path: Path) -> None:
    from boost_cli.core import catalog

    docs = [
        {"_id": "11", "title": "It's a 'quoted': title", "text": "Body one."},
        {"_id": "22", "title": "Plain", "text": "Body two."},
    ]
    beir.write_repo(tmp_path / "desc", docs, "desc")
    beir.write_repo(tmp_path / "body", docs, "body")
    scan = catalog.scan_tap("desc", tmp_path / "desc")
    got = {beir.doc_id(e.path): (e.name, e.description) for e in scan.entries}
    assert got == {"11": ("11", "It's a 'quoted': title"), "22": ("22", "Plain")}
    assert not scan.warnings
    body = (tmp_path / "body" / "docs" / "22" / "SKILL.md").read_text()
    assert body.endswith("---\nPlain\n\nBody two.\n")
    assert (tmp_path / "desc" / "docs" / "22" / "SKILL.md").read_text().endswith("---\nBody two.\n")


def test_beir_skips_without_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert beir.main(["--data", str(tmp_path / "none")]) == 0
    assert "nothing to do" in capsys.readouterr().err


# --------------------------------------------------------------------------- bound_floor


def test_bound_floor_oracles_keep_the_ranking_and_record_what_entered(tmp_path: Path) -> None:
    """The oracle runs of scripts/bound_floor.py skip work, never a result: `measure` checks
    each oracle's output against the plain run's (and stops if one differs), and the set it
    records holds the contents that made the top k."""
    floor = _load("boost_scripts_bound_floor", ROOT / "scripts" / "bound_floor.py")
    home = indexed_example(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    queries = [{"query": "write unit tests for a React app with testing library", "kind": None}]
    got = floor.measure([home, home], queries, 1, work)
    recorded = json.loads((work / "oracle-0-0.json").read_text())
    assert recorded and all(isinstance(g, int) for g in recorded)
    assert got["table"].count("\n| ") == len(floor.MODES) * 2
    assert set(got["cells"]) == {f"{home}|{m}" for m in floor.MODES}
