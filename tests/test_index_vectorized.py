"""The numpy top k (`index/vectorized.py`) against the exhaustive reference and against the
pure-Python content-bound ranking (`index/bounds.py`): the same groups, members, best
chunks and float scores, for agents' many-term weighted queries with kind and tap
filters, every aggregation and collapse level, one tier and many; when it is used; and
what a damaged index gives."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from boost_cli.core import index
from boost_cli.core.index import bounds, tier, vectorized
from boost_cli.core.index import reader as reader_mod
from boost_cli.core.index.ranking import query_terms
from boost_cli.core.retrieval import IndexUnavailable
from boost_cli.core.tokenize import query_weights
from tests.test_index_pruning import VOCAB, agent_query, check, zipf_corpus
from tests.test_index_ranking import WORDS, generation, open_reader, random_corpus

np = pytest.importorskip("numpy")


@pytest.fixture
def numpy_ranking(monkeypatch: pytest.MonkeyPatch) -> Dict[str, int]:
    """Rank with numpy; count the calls of each path."""
    monkeypatch.setenv(vectorized.OFF, "1")
    counts = {"numpy": 0, "python": 0}
    real_np, real_py = vectorized.top_groups, bounds.top_groups

    def np_path(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["numpy"] += 1
        return real_np(*args, **kwargs)

    def py_path(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["python"] += 1
        return real_py(*args, **kwargs)

    monkeypatch.setattr(vectorized, "top_groups", np_path)
    monkeypatch.setattr(reader_mod, "top_groups", py_path)
    return counts


def test_it_is_used_only_when_numpy_is_imported_and_not_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(vectorized.OFF, "1")
    assert vectorized.available()
    monkeypatch.setenv(vectorized.OFF, "0")
    assert not vectorized.available() and not vectorized.preload()
    # A fresh process (a cold search) has not imported numpy: the Python ranking, and no
    # import; a server's `preload` imports it.
    code = (
        "import sys; from boost_cli.core.index import vectorized as v; a = v.available();"
        " print(a, 'numpy' in sys.modules, v.preload(), v.available())"
    )
    env = {**os.environ, vectorized.OFF: "1"}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert got.stdout.split() == ["False", "False", "True", "True"], got.stderr


@pytest.mark.parametrize("seed", [21, 22])
def test_agent_queries_with_filters_equal_exhaustive_scoring(
    tmp_path: Path, seed: int, numpy_ranking: Dict[str, int]
) -> None:
    index.build(zipf_corpus(tmp_path, random.Random(seed)))
    reader = open_reader()
    taps = (None, None, ("a",), ("b", "c"), ("c",))
    seen = check(reader, random.Random(seed), 60, taps, VOCAB)
    assert seen["hits"] > 200 and seen["terms"] >= 12 and seen["filtered"] > 15
    assert numpy_ranking["numpy"] == 60 and numpy_ranking["python"] == 0


def test_many_tiers_and_the_old_corpus_equal_exhaustive_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, numpy_ranking: Dict[str, int]
) -> None:
    monkeypatch.setattr(tier, "TIER_CHUNKS", 70)
    index.build(zipf_corpus(tmp_path / "z", random.Random(23)))
    reader = open_reader()
    assert len(generation(reader).tiers) >= 3
    check(reader, random.Random(23), 40, (None, ("a",), ("b", "c")), VOCAB)
    # few words, many byte-identical copies and exact ties, long descriptions
    index.build(random_corpus(tmp_path / "r", random.Random(24)))
    check(open_reader(), random.Random(24), 40, (None, ("a",), ("b", "c")), WORDS)
    assert numpy_ranking["numpy"] == 80 and numpy_ranking["python"] == 0


def test_the_same_floats_members_and_chunks_as_the_python_ranking(tmp_path: Path) -> None:
    # Not only the same groups as the reference: the same (score, member, chunk) triples,
    # in the same order, with ties, at every k, aggregation and collapse level.
    index.build(random_corpus(tmp_path, random.Random(25)))
    gen = generation(open_reader())
    rng = random.Random(25)
    compared = 0
    for _ in range(60):
        task, keywords = agent_query(rng, WORDS)
        weights = query_weights(task, keywords)
        for how in index.AGGREGATIONS:
            for level in index.COLLAPSE:
                k = rng.choice((1, 2, 5, 10, 40))
                args = (gen, weights, k, how, None, gen.groups(level))
                field = (gen.params.field_weight, gen.params.field_k1, gen.params.field_b)
                want = bounds.top_groups(*args, field=field)
                assert vectorized.top_groups(*args, field=field) == want
                compared += bool(want)
    assert compared > 500


def test_a_damaged_posting_list_is_a_clear_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(random_corpus(tmp_path, random.Random(26)))
    gen = generation(open_reader())
    weights = query_weights("alpha beta gamma")
    assert query_terms(gen, weights, 0.0)
    t0 = gen.tiers[0]
    real = tier.Tier.raw_postings

    def past_the_tier(self: tier.Tier, row, field=False):  # type: ignore[no-untyped-def]
        raw, width, tfs = real(self, row, field)
        big = (self.contents if field else self.chunks) + 5
        return raw[:-width] + big.to_bytes(width, "little"), width, tfs

    def short_tfs(self: tier.Tier, row, field=False):  # type: ignore[no-untyped-def]
        raw, width, tfs = real(self, row, field)
        return raw, width, tfs[:-1]

    for broken in (past_the_tier, short_tfs):
        monkeypatch.setattr(tier.Tier, "raw_postings", broken)
        with pytest.raises(IndexUnavailable, match="damaged"):
            vectorized.top_groups(gen, weights, 10, "lse")
    assert t0 is gen.tiers[0]


def test_the_mcp_server_loads_numpy_to_rank_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from boost_cli.commands import mcp as mcp_cmd

    calls: List[str] = []
    monkeypatch.setattr(vectorized, "preload", lambda: calls.append("preload") or True)

    class Stop(Exception):
        pass

    def build_server(**kwargs):  # type: ignore[no-untyped-def]
        calls.append("server")
        raise Stop

    monkeypatch.setattr(mcp_cmd, "build_server", build_server)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    import argparse

    with pytest.raises(Stop):
        mcp_cmd.cmd_mcp(argparse.Namespace())
    assert calls == ["preload", "server"]


def test_the_tf_part_is_pythons_float_for_every_tf_and_length() -> None:
    # `_scores` against `bm25.term_weight` × w, bit for bit, over a grid of tfs (0
    # included: it scores 0.0 even where the norm is 0), lengths and parameters.
    from types import SimpleNamespace

    from boost_cli.core import bm25
    from boost_cli.core.index.vectorized import _norm, _scores, _tf_tables

    tf = np.repeat(np.arange(0, 256, 7, dtype=np.uint8), 9)
    dl = np.tile(np.array([0, 1, 2, 13, 100, 999, 4096, 30000, 65535]), len(tf) // 9)
    ids = np.arange(len(tf), dtype="<u4")
    tier = SimpleNamespace(
        chunks=len(tf),
        contents=len(tf),
        c=SimpleNamespace(path=Path("tier-0")),
        raw_postings=lambda row, field: (ids.tobytes(), 4, tf.tobytes()),
    )
    for k1, b, avgdl in ((1.2, 0.75, 37.3), (2.0, 0.75, 11.0), (0.0, 1.0, 5.5), (0.9, 0.4, 0.0)):
        gen = SimpleNamespace(memo={})
        norm = _norm(np, dl, avgdl, k1, b)
        for w in (1.0, 0.25, 3.7137):
            got_ids, part = _scores(
                np, tier, None, False, norm, _tf_tables(np, gen, k1), (k1, b), w
            )  # type: ignore[arg-type]
            want = [bm25.term_weight(int(t), int(d), avgdl, k1, b) * w for t, d in zip(tf, dl)]
            assert got_ids.tolist() == ids.tolist() and part.tolist() == want, (k1, b, avgdl, w)
