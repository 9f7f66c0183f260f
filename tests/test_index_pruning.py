"""Exact top k for the queries agents send: many terms, weighted keywords, kind and tap
filters, against the exhaustive reference (`test_index_ranking.reference`), on every path
of the content-bound ranking (`index/bounds.py`: one tier and many, one round of
cut-offs and many, the chunk-mass bound), with what a warm reader keeps between
queries (`index/cache.py`) and without it.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from boost_cli.core import bm25, index
from boost_cli.core.index import bounds, cache, ranking, tier
from boost_cli.core.index.postings import DL_BITS, TF_LEVELS, code_points, impact_codes
from boost_cli.core.index.reader import IndexReader
from boost_cli.core.tokenize import query_weights
from tests.test_index import make_tap
from tests.test_index_ranking import (
    WORDS,
    generation,
    open_reader,
    query_checked,
    random_corpus,
)

FILLER = ["help", "me", "please", "really", "keeps", "the", "with", "my"]
EXTRA = ["shared", "padding", "edit", "filler", "part", "text"]
KINDS = (None, None, "skill", "rule", "workflow")
# A Zipf-like vocabulary: a few words in most chunks, most words in few (as in real skills),
# so a many-term query has rare terms that set a high k-th score and common ones to skip.
VOCAB = [
    f"{a}{b}"
    for a in ("lo", "ka", "mi", "tu", "re", "sa", "no", "vi")
    for b in ("rp", "nd", "st", "lk", "mb", "gx")
]
ZIPF = [1.0 / (r + 1) for r in range(len(VOCAB))]


def zipf_corpus(tmp_path: Path, rng: random.Random) -> list:
    """Three taps of 40 files with 1-6 chunks of Zipf-distributed words: byte-identical
    copies across taps, same name and description in several taps (one group), all
    three kinds, descriptions from the same vocabulary (the field score)."""
    bodies = []
    for i in range(70):
        parts = []
        for p in range(1 + i % 6):
            words = rng.choices(VOCAB, ZIPF, k=rng.randint(20, 140))
            parts.append(f"## Part {p}\n\n" + " ".join(words) + "\n")
        bodies.append("\n".join(parts))
    taps = []
    for t, tap in enumerate(("a", "b", "c")):
        files: Dict[str, str] = {}
        desc: Dict[str, str] = {}
        for i in range(40):
            ext = ("SKILL.md", "rule.mdc", "flow.md")[(i + t) % 3]
            rel = f"{tap}{i}/SKILL.md" if ext == "SKILL.md" else f"{tap}{i}-{ext}"
            n = (i * 7 + t * 11) % 70
            files[rel] = bodies[n] if i % 5 else bodies[n] + f"\n<!-- {tap}{i} -->\n"
            desc[rel] = " ".join(rng.choices(VOCAB, ZIPF, k=rng.randint(2, 9)))
        files["same/SKILL.md"] = bodies[t] + f"\n{tap}\n"  # one group across taps
        desc["same/SKILL.md"] = "one skill in every tap"
        taps.append(make_tap(tmp_path, tap, files, descriptions=desc))
    return taps


def agent_query(rng: random.Random, pool: List[str]) -> Tuple[str, List[str]]:
    """A task sentence of 8-20 words (query-stoplist filler among them, repeats) and 3-8
    keywords (single words and two-word phrases, some repeating task words)."""
    words = [rng.choice(pool if rng.random() < 0.6 else FILLER) for _ in range(rng.randint(8, 20))]
    keywords = []
    for _ in range(rng.randint(3, 8)):
        if rng.random() < 0.3:
            keywords.append(f"{rng.choice(pool)} {rng.choice(pool)}")
        else:
            keywords.append(rng.choice(pool))
    return " ".join(words), keywords


def check(
    reader: IndexReader,
    rng: random.Random,
    n: int,
    taps: Tuple[Optional[Tuple[str, ...]], ...],
    pool: List[str],
) -> Dict[str, int]:
    """``n`` agent queries (k, kind, taps, aggregation and collapse drawn at random),
    each checked against the exhaustive reference; counts of what was covered."""
    seen = {"hits": 0, "terms": 0, "filtered": 0, "keyword_weights": 0}
    for _ in range(n):
        task, keywords = agent_query(rng, pool)
        weights = query_weights(task, keywords)
        k = rng.choice((1, 3, 8, 10, 25))
        kind = rng.choice(KINDS)
        scope = rng.choice(taps)
        how = rng.choice(index.AGGREGATIONS)
        level = rng.choice(index.COLLAPSE)
        try:
            hits = query_checked(reader, weights, k, kind, scope, how, level)
        except AssertionError as exc:
            raise AssertionError((task, keywords, k, kind, scope, how, level)) from exc
        seen["hits"] += len(hits)
        seen["terms"] = max(seen["terms"], len(weights))
        seen["filtered"] += kind is not None or scope is not None
        seen["keyword_weights"] += any(w not in (0.25, 1.0) for w in weights.values())
    return seen


def spy(
    monkeypatch: pytest.MonkeyPatch,
    depth: Optional[int] = None,
    rest: Optional[float] = None,
    sparse: Optional[int] = None,
) -> Dict[str, int]:
    """Count what the content-bound ranking does: contents bounded, bounds the chunk mass
    made lower than ``S + T ln n``, contents scored exactly, tiers bounded over the
    contents their lists touch only (sparse), lists skipped (MaxScore). ``depth``: the
    first cut-off (0: the largest sum, so many rounds; large: every touched content in
    one round); ``rest``: the share of the k-th best skipped lists may add (1e9: as many
    as the bound allows); ``sparse``: a tier is bounded sparse when its postings times
    this are fewer than its contents (0: always, 1 << 30: never)."""
    if depth is not None:
        monkeypatch.setattr(bounds, "_DEPTH", depth)
    if rest is not None:
        monkeypatch.setattr(bounds, "_REST", rest)
    if sparse is not None:
        monkeypatch.setattr(bounds, "_SPARSE", sparse)
    counts = {"bounded": 0, "tightened": 0, "exact": 0, "sparse": 0, "skipped": 0}
    counts.update(read=0, accumulated=0)
    real_bound, real_exact = bounds.BoundRanker._bound_of, bounds.BoundRanker._exact
    real_accumulate, real_read = bounds.BoundRanker.accumulate, bounds.BoundRanker.read

    def read(self: bounds.BoundRanker) -> None:
        real_read(self)
        counts["read"] += 1

    def accumulate(self: bounds.BoundRanker, theta: float = -math.inf) -> None:
        real_accumulate(self, theta)
        counts["accumulated"] += 1
        counts["sparse"] += isinstance(self.cand, list)
        counts["skipped"] += len(self.skipped)

    def bound_of(self: bounds.BoundRanker, s: float, mass: float, f: float, n: int) -> float:
        counts["bounded"] += 1
        got = real_bound(self, s, mass, f, n)
        counts["tightened"] += s > 0.0 and got < ranking._up(self.bound(s, n) + f)
        return got

    def exact(self: bounds.BoundRanker, gcid: int, field: float) -> None:
        counts["exact"] += 1
        real_exact(self, gcid, field)

    monkeypatch.setattr(bounds.BoundRanker, "_bound_of", bound_of)
    monkeypatch.setattr(bounds.BoundRanker, "_exact", exact)
    monkeypatch.setattr(bounds.BoundRanker, "accumulate", accumulate)
    monkeypatch.setattr(bounds.BoundRanker, "read", read)
    return counts


@pytest.mark.parametrize("seed", [11, 12])
def test_many_term_weighted_queries_with_filters_equal_exhaustive_scoring(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(zipf_corpus(tmp_path, random.Random(seed)))
    reader = open_reader()
    taps = (None, None, ("a",), ("b", "c"), ("c",))
    seen = check(reader, random.Random(seed), 40, taps, VOCAB)
    assert seen["hits"] > 150 and seen["terms"] >= 12
    assert seen["filtered"] > 10 and seen["keyword_weights"] > 30
    counts = spy(monkeypatch)
    check(reader, random.Random(seed + 100), 40, taps, VOCAB)
    # Most bounded contents were never scored, and the chunk mass lowered some bounds.
    assert 0 < counts["exact"] < counts["bounded"] // 2 and counts["tightened"] > 0
    for depth in (0, 1000):  # many rounds of cut-offs; all contents in one
        spy(monkeypatch, depth)
        check(reader, random.Random(seed + depth), 20, taps, VOCAB)


@pytest.mark.parametrize("seed", [13, 14])
def test_many_term_queries_over_many_tiers_equal_exhaustive_scoring(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tier, "TIER_CHUNKS", 70)
    index.build(zipf_corpus(tmp_path, random.Random(seed)))
    reader = open_reader()
    assert len(generation(reader).tiers) >= 3
    taps = (None, ("a",), ("b", "c"))
    counts = spy(monkeypatch)
    check(reader, random.Random(seed), 30, taps, VOCAB)
    assert 0 < counts["exact"] < counts["bounded"] and counts["tightened"] > 0
    # A rare word weighted up and a common one: the tiers without the rare word cannot
    # reach the k-th best of those with it, and are not read.
    counts = spy(monkeypatch)
    for rare in VOCAB[-12:]:
        for how in index.AGGREGATIONS:
            weights = {rare: 3.0, VOCAB[0]: 0.25, VOCAB[1]: 0.25}
            query_checked(reader, weights, 1, None, None, how, "none")
    assert 0 < counts["accumulated"] < counts["read"]
    spy(monkeypatch, 0)
    check(reader, random.Random(seed + 100), 30, taps, VOCAB)
    # Later tiers skip the lists of least reach (MaxScore), as many as the bound allows;
    # every tier bounded over the contents its lists touch only, or over all of them.
    for rest, sparse in ((1e9, None), (1e9, 1 << 30), (1e9, 0), (0.2, 1 << 30)):
        counts = spy(monkeypatch, rest=rest, sparse=sparse)
        check(reader, random.Random(seed + 200), 30, taps, VOCAB)
        assert counts["skipped"] > 0
        if sparse is not None:  # always sparse, or never
            assert counts["sparse"] > 0 if sparse == 0 else counts["sparse"] == 0


def test_the_old_corpus_with_agent_queries_equals_exhaustive_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `test_index_ranking.random_corpus`: few words, many copies, ties, long descriptions.
    index.build(random_corpus(tmp_path, random.Random(15)))
    reader = open_reader()
    check(reader, random.Random(15), 30, (None, ("a",), ("b", "c")), WORDS + EXTRA)
    spy(monkeypatch, 0)
    check(reader, random.Random(16), 30, (None, ("a",), ("b", "c")), WORDS + EXTRA)


def test_the_warm_caches_change_no_ranking_and_follow_a_rebuild(tmp_path: Path) -> None:
    rng = random.Random(5)
    taps = random_corpus(tmp_path, rng)
    index.build(taps)
    warm = open_reader()
    queries = [agent_query(rng, WORDS + EXTRA) for _ in range(12)]
    first = [warm.query(weights=query_weights(*q), k=8) for q in queries]
    again = [warm.query(weights=query_weights(*q), k=8) for q in queries]  # all cached now
    fresh = [open_reader().query(weights=query_weights(*q), k=8) for q in queries]
    assert first == again == fresh
    gen = generation(warm)
    assert len(gen._terms) > 0 and gen._codes
    # A rebuild with one tap changed: the warm reader opens the new generation, whose
    # caches start empty, and answers as a reader opened afterwards does.
    files = {"zz/SKILL.md": " ".join(WORDS) + " brand new words\n"}
    index.build([*taps[:2], make_tap(tmp_path / "v2", "c", files, commit="c2")])
    after = [warm.query(weights=query_weights(*q), k=8) for q in queries]
    assert after == [open_reader().query(weights=query_weights(*q), k=8) for q in queries]
    assert after != first
    assert generation(warm) is not gen


def test_lru_drops_the_least_recently_used_past_its_budget() -> None:
    lru: cache.Lru[str] = cache.Lru(10)
    lru.put("a", "A", 4)
    lru.put("b", "B", 4)
    assert lru.get("a") == "A"  # now b is the oldest
    lru.put("c", "C", 4)
    assert lru.get("b") is None and lru.get("a") == "A" and lru.get("c") == "C"
    assert lru.size == 8 and len(lru) == 2
    lru.put("a", "A2", 1)  # replacing counts the new size only
    assert lru.size == 5 and lru.get("a") == "A2"
    lru.put("big", "X", 50)  # alone past the budget: kept, the rest dropped
    assert len(lru) == 1 and lru.get("big") == "X"
    lru.clear()
    assert len(lru) == 0 and lru.size == 0


def test_a_search_process_never_imports_the_build_side_or_the_llm_client() -> None:
    code = (
        "import sys\n"
        "from boost_cli import cli\n"
        "from boost_cli.commands import search\n"
        "from boost_cli.core import index, retrieval\n"
        "bad = [m for m in ('boost_cli.core.index.builder', 'boost_cli.core.index.workers',"
        " 'boost_cli.core.llm', 'boost_cli.core.llm.expand', 'boost_cli.core.http') if m in sys.modules]\n"
        "assert index.build is not None and 'boost_cli.core.index.builder' in sys.modules\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_impact_codes_bound_every_pair_for_any_params() -> None:
    rng = random.Random(7)
    points = code_points()
    pairs = [(rng.randint(1, 255), rng.choice((1, 2, 16, 17, 18, 65535, rng.randint(1, 3000))))]
    pairs += [(rng.randint(1, 255), rng.randint(1, 65535)) for _ in range(2000)]
    pairs += [(tf, dl) for tf in range(1, 40) for dl in range(1, 60)]
    for (tf, dl), code in zip(pairs, impact_codes(*zip(*pairs))):
        ptf, pdl = points[code]
        assert ptf >= tf and pdl <= dl, (tf, dl, code)
        for k1, b, avgdl in (
            (1.2, 0.75, 150.0),
            (2.0, 0.75, 9.5),
            (0.0, 0.0, 1.0),
            (3.0, 1.0, 400.0),
        ):
            assert bm25.term_weight(ptf, pdl, avgdl, k1, b) >= bm25.term_weight(
                tf, dl, avgdl, k1, b
            )
    assert len(points) == len(TF_LEVELS) << DL_BITS


def test_content_runs_are_one_posting_per_content() -> None:
    rng = random.Random(8)
    owner = sorted(rng.randrange(30) for _ in range(200))
    dls = [rng.randint(1, 400) for _ in owner]
    ids = sorted(rng.sample(range(200), 90))
    tfs = bytes(rng.randint(1, 255) for _ in ids)
    conts, codes, counts = tier.content_runs(ids, tfs, owner, dls)
    want: Dict[int, List[Tuple[int, int]]] = {}
    for c, tf in zip(ids, tfs):
        want.setdefault(owner[c], []).append((tf, dls[c]))
    assert conts == sorted(want) and counts == [len(want[g]) for g in conts]
    best = [(max(tf for tf, _ in want[g]), min(dl for _, dl in want[g])) for g in conts]
    assert codes == impact_codes(*zip(*best))
    assert tier.content_runs([], b"", owner, dls) == ([], [], [])


def test_every_tier_holds_content_postings_that_match_its_chunk_postings(tmp_path: Path) -> None:
    index.build(zipf_corpus(tmp_path, random.Random(9)))
    gen = generation(open_reader())
    checked = 0
    for t, tr in enumerate(gen.tiers):
        ob, cb = gen.tier_content_base[t], gen.tier_chunk_base[t]
        owner = [0] * tr.chunks  # tier-local content of every chunk, dead copies' too
        for j in range(tr.contents):
            a, z = gen.chunk_range(ob + j)
            owner[a - cb : z - cb] = [j] * (z - a)
        for term in VOCAB:
            row = tr.find(term.encode(), zlib.crc32(term.encode()))
            if row is None or not row.n:
                continue
            ids, tfs = tr.chunk_postings(row)
            cids, codes, counts = tr.content_postings(row)
            runs = tier.content_runs(ids, tfs, owner, gen.tier_lengths(t))
            assert (list(cids), list(codes), list(counts)) == (runs[0], runs[1], runs[2])
            assert sum(counts) == row.n and row.cn == len(cids)
            checked += 1
    assert checked > 20
