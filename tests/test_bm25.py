"""BM25 math against numbers computed by hand (k1 = 1.2, b = 0.75 throughout)."""

from __future__ import annotations

import math

import pytest

from boost_cli.core import bm25

# Three tiny documents, already tokenized; avgdl = (3 + 2 + 4) / 3 = 3, N = 3.
DOCS = {
    "d1": ["cat", "cat", "dog"],
    "d2": ["dog", "bird"],
    "d3": ["cat", "fish", "fish", "bird"],
}
N = 3
AVGDL = 3.0
DF = {"cat": 2, "dog": 2, "bird": 2, "fish": 1}


def tf(doc: str) -> dict:
    counts: dict = {}
    for t in DOCS[doc]:
        counts[t] = counts.get(t, 0) + 1
    return counts


def test_idf_by_hand() -> None:
    # df = 2: ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6) = 0.4700036
    assert bm25.idf(2, 3) == pytest.approx(0.4700036, abs=1e-7)
    # df = 1: ln(1 + 2.5 / 1.5) = ln(2.6666667) = 0.9808293
    assert bm25.idf(1, 3) == pytest.approx(0.9808293, abs=1e-7)


def test_idf_never_negative_and_decreasing() -> None:
    # Robertson-Spärck Jones would give ln(0.5 / 100.5) < 0 for a term in every document.
    assert bm25.idf(100, 100) == pytest.approx(math.log(1 + 0.5 / 100.5))
    assert bm25.idf(100, 100) > 0
    assert bm25.idf(1, 100) > bm25.idf(10, 100) > bm25.idf(100, 100)


def test_length_norm_by_hand() -> None:
    # K = k1 * (1 - b + b * dl / avgdl)
    assert bm25.length_norm(3, 3.0) == pytest.approx(1.2)  # average length: K = k1
    assert bm25.length_norm(2, 3.0) == pytest.approx(0.9)  # 1.2 * (0.25 + 0.5)
    assert bm25.length_norm(4, 3.0) == pytest.approx(1.5)  # 1.2 * (0.25 + 1.0)
    assert bm25.length_norm(7, 0.0) == pytest.approx(1.2)  # empty collection: no length part
    assert bm25.length_norm(6, 3.0, k1=2.0, b=0.0) == pytest.approx(2.0)  # b = 0: none


def test_term_weight_by_hand() -> None:
    # tf = 2, dl = avgdl: 2 * 2.2 / (2 + 1.2) = 1.375
    assert bm25.term_weight(2, 3, AVGDL) == pytest.approx(1.375)
    # tf = 1, dl = 2: 2.2 / (1 + 0.9) = 1.1578947
    assert bm25.term_weight(1, 2, AVGDL) == pytest.approx(1.1578947, abs=1e-7)
    # tf = 1, dl = 4: 2.2 / (1 + 1.5) = 0.88
    assert bm25.term_weight(1, 4, AVGDL) == pytest.approx(0.88)
    assert bm25.term_weight(0, 4, AVGDL) == 0.0


def test_term_weight_saturates_below_k1_plus_1() -> None:
    weights = [bm25.term_weight(t, 3, AVGDL) for t in (1, 2, 5, 50, 5000)]
    assert weights == sorted(weights)
    assert weights[-1] < 2.2


def test_score_three_documents_by_hand() -> None:
    query = ["cat", "bird"]
    idf2 = 0.4700036  # both query terms have df = 2
    # d1: cat tf 2 at dl 3 -> 1.375; no bird.           0.4700036 * 1.375     = 0.6462550
    # d2: bird tf 1 at dl 2 -> 1.1578947; no cat.        0.4700036 * 1.1578947 = 0.5442147
    # d3: cat and bird tf 1 at dl 4 -> 0.88 each.        0.4700036 * 1.76      = 0.8272064
    expected = {"d1": idf2 * 1.375, "d2": idf2 * 2.2 / 1.9, "d3": idf2 * 1.76}
    got = {d: bm25.score(query, tf(d), len(DOCS[d]), AVGDL, DF, N) for d in DOCS}
    for d in DOCS:
        assert got[d] == pytest.approx(expected[d], abs=1e-6)
    assert got["d1"] == pytest.approx(0.6462550, abs=1e-6)
    assert got["d2"] == pytest.approx(0.5442147, abs=1e-6)
    assert got["d3"] == pytest.approx(0.8272064, abs=1e-6)
    assert sorted(got, key=got.__getitem__, reverse=True) == ["d3", "d1", "d2"]


def test_score_counts_repeated_query_terms_and_ignores_unknown_ones() -> None:
    once = bm25.score(["fish"], tf("d3"), 4, AVGDL, DF, N)
    # fish: df 1 -> idf 0.9808293; tf 2 at dl 4 -> 4.4 / 3.5 = 1.2571429
    assert once == pytest.approx(0.9808293 * 4.4 / 3.5, abs=1e-6)
    assert bm25.score(["fish", "fish"], tf("d3"), 4, AVGDL, DF, N) == pytest.approx(2 * once)
    assert bm25.score(["zebra"], tf("d3"), 4, AVGDL, DF, N) == 0.0
    assert bm25.score([], tf("d3"), 4, AVGDL, DF, N) == 0.0


def test_length_norm_when_the_average_chunk_is_shorter_than_one_term() -> None:
    # Chunks of 0 and 1 terms: avgdl = 0.5; a 1-term chunk is twice the average.
    # K = 1.2 * (0.25 + 0.75 * 1 / 0.5) = 1.2 * 1.75 = 2.1
    assert bm25.length_norm(1, 0.5) == pytest.approx(2.1)
    assert bm25.length_norm(0, 0.5) == pytest.approx(0.3)  # 1.2 * 0.25


def test_k1_zero_is_binary_bm25() -> None:
    # k1 = 0: w = tf * 1 / (tf + 0) = 1 for any tf > 0, and an absent term weighs 0.
    assert bm25.term_weight(3, 5, AVGDL, k1=0.0) == pytest.approx(1.0)
    assert bm25.term_weight(1, 1, AVGDL, k1=0.0) == pytest.approx(1.0)
    assert bm25.term_weight(0, 5, AVGDL, k1=0.0) == 0.0


def test_score_ignores_a_document_term_missing_from_df() -> None:
    # "zebra" is in the document's tf but not in df (no statistics for it): it adds nothing.
    doc = {"zebra": 2, "fish": 2}
    fish = 0.9808293 * 4.4 / 3.5  # as in d3: df 1, tf 2 at dl 4
    assert bm25.score(["zebra"], doc, 4, AVGDL, DF, N) == 0.0
    assert bm25.score(["zebra", "fish"], doc, 4, AVGDL, DF, N) == pytest.approx(fish, abs=1e-6)
