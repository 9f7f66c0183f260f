"""The evaluation math of scripts/eval.py, on hand-computed examples."""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path
from typing import List

import pytest

from tests.helpers import ROOT, indexed_example

sys.path.insert(0, str(ROOT / "scripts"))
import eval as ev  # noqa: E402


def test_perfect_ranking() -> None:
    m = ev.score_query(["a", "b"], {"a": 2, "b": 1}, {})
    assert m == {"ndcg@10": 1.0, "recall@10": 1.0, "mrr@10": 1.0, "success@1": 1.0}


def test_hand_computed() -> None:
    # ranked x (0), a (grade 1), b (grade 2): DCG = 1/log2(3) + 2/log2(4) = 0.6309 + 1.0
    # ideal: 2/log2(2) + 1/log2(3) = 2 + 0.6309
    m = ev.score_query(["x", "a", "b"], {"a": 1, "b": 2}, {})
    assert m["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1.0) / (2 + 1 / math.log2(3)))
    assert m["mrr@10"] == 0.5 and m["recall@10"] == 1.0 and m["success@1"] == 0.0


def test_groups_collapse_copies_and_take_best_grade() -> None:
    groups = {"a1": "A", "a2": "A", "b": "B"}
    # a1 and a2 are one group: the second copy is skipped, so b counts at rank 2
    m = ev.score_query(["a1", "a2", "b"], {"a2": 2, "b": 1}, groups)
    assert m["ndcg@10"] == pytest.approx(1.0)
    assert m["success@1"] == 1.0


def test_recall_caps_at_k() -> None:
    rel = {f"d{i}": 1 for i in range(20)}
    m = ev.score_query([f"d{i}" for i in range(10)], rel, {})
    assert m["recall@10"] == 1.0


def test_aggregate_per_type() -> None:
    rows = [
        {"type": "task", "ndcg@10": 1.0, "recall@10": 1.0, "mrr@10": 1.0, "success@1": 1.0},
        {"type": "gap", "ndcg@10": 0.0, "recall@10": 0.0, "mrr@10": 0.0, "success@1": 0.0},
    ]
    agg = ev.aggregate(rows)
    assert agg["all"]["ndcg@10"] == 0.5 and agg["task"]["n"] == 1 and agg["gap"]["ndcg@10"] == 0.0


def _expand_dirs(where: Path) -> List[Path]:
    return sorted(where.glob("boost-eval-expand-*"))


def test_a_pipeline_run_leaves_no_expansion_cache_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate_pipeline` made one /tmp/boost-eval-expand-* per run and never removed it
    (469 of them piled up in a day): it is removed when the run ends, and when it fails."""
    from boost_cli.core import search

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("BOOST_HOME", str(indexed_example(tmp_path)))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    queries = [{"id": "q1", "type": "task", "query": "fill a pdf form", "relevant": {"x/y": 1}}]
    result = ev.evaluate_pipeline("plain", queries, {}, {})
    assert result["summary"]["all"]["n"] == 1
    assert _expand_dirs(scratch) == []

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("search failed")

    monkeypatch.setattr(search, "run", broken)
    with pytest.raises(RuntimeError):
        ev.evaluate_pipeline("plain", queries, {}, {})
    assert _expand_dirs(scratch) == []
