"""The evaluation math of scripts/eval.py, on hand-computed examples."""

from __future__ import annotations

import math
import sys

import pytest

from tests.helpers import ROOT

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
