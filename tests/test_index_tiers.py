"""Tiers: postings merged across taps, and MaxScore over them.

The tier size is made small (`tier.TIER_CHUNKS`) so a few hand-made taps make several
tiers; the pruned ranking is checked against exhaustive scoring (`test_index_ranking.
reference`) on both paths (whole tiers, and MaxScore with skipped lists), incremental
builds against builds from scratch, and crashes and damage while tiers are rebuilt.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Dict, List

import pytest

from boost_cli.core import index
from boost_cli.core.index import bounds, tier
from boost_cli.core.index.container import Container
from boost_cli.core.index.layout import TIER_MAGIC
from boost_cli.core.models import TapSnapshot
from boost_cli.core.paths import index_dir
from tests.test_index import data_files, make_tap, manifest_without_time
from tests.test_index_ranking import (
    WORDS,
    generation,
    open_reader,
    random_check,
    random_corpus,
)

NAMES = ["a", "b", "c", "d", "e", "f"]
KINDS = (None, None, "skill")


@pytest.fixture(autouse=True)
def small_tiers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tier, "TIER_CHUNKS", 70)


def corpus(tmp_path: Path, version: Dict[str, int]) -> List[TapSnapshot]:
    """Six taps of 12 files with 1-4 chunks (copies across taps, ties); ``version[tap]``
    edits that tap's files (a new commit)."""
    rng = random.Random(7)
    bodies = [
        "\n\n".join(
            f"## Part {p}\n\n"
            + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
            + " filler text " * 40
            for p in range(1 + i % 4)
        )
        for i in range(30)
    ]
    taps = []
    for t, name in enumerate(NAMES):
        v = version.get(name, 0)
        files = {}
        for i in range(12):
            body = bodies[(i * 5 + t * 3) % 30]
            if i % 4:  # some files byte-identical across taps
                body += f"\n<!-- {name}{i} v{v} -->\n"
            files[f"{name}{i}/SKILL.md"] = body
        taps.append(make_tap(tmp_path / f"v{v}", name, files, commit=f"c{v}"))
    return taps


def check_queries(reader: index.IndexReader, rng: random.Random, n: int) -> int:
    checked = 0
    for _ in range(n):
        hits = random_check(reader, rng, ["filler", "part", "text"], 4, (1, 3, 10), KINDS)[3]
        checked += len(hits)
    return checked


@pytest.mark.parametrize("seed", [3, 4])
def test_pruned_top_k_over_many_tiers_equals_exhaustive_scoring(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps = random_corpus(tmp_path, random.Random(seed))
    index.build(taps)
    reader = open_reader()
    assert len(generation(reader).tiers) >= 3
    assert check_queries(reader, random.Random(seed), 40) > 100
    # The first cut-off at the largest sum: many rounds, in every tier.
    monkeypatch.setattr(bounds, "_DEPTH", 0)
    assert check_queries(reader, random.Random(seed + 10), 40) > 100


def test_a_changed_tap_rebuilds_its_tier_only_and_equals_a_build_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(corpus(tmp_path, {}))
    first = {p.name for p in (index_dir() / "tiers").iterdir()}
    assert len(first) >= 3
    steps = [({"c": 1}, ("c",)), ({"c": 1, "e": 2}, ("e",))]  # one tap edited, another
    for version, built in steps:
        assert index.build(corpus(tmp_path, version)).built == built
    after = {p.name for p in (index_dir() / "tiers").iterdir()}
    assert len(after - first) <= 2  # the tiers of c and e; the others reused
    plus = [
        *corpus(tmp_path, steps[-1][0]),
        make_tap(tmp_path / "x", "cc", {"z/SKILL.md": "gamma"}),
    ]
    index.build(plus)  # a tap added between c and d
    minus = [t for t in plus if t.name != "b"]
    index.build(minus)  # a tap removed
    incremental = data_files(index_dir())
    inc_manifest = manifest_without_time(index_dir())
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "scratch-home"))
    index.build(minus)
    assert data_files(index_dir()) == incremental
    assert manifest_without_time(index_dir()) == inc_manifest


def test_a_crash_while_building_a_tier_leaves_the_previous_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(corpus(tmp_path, {}))
    before = [(h.entry.id, h.score) for h in open_reader().query("alpha beta", k=20)]
    files = data_files(index_dir())

    def crash(*args: object) -> bytes:
        raise OSError("disk full")

    real = tier.tier_bytes
    monkeypatch.setattr(tier, "tier_bytes", crash)
    with pytest.raises(OSError, match="disk full"):
        index.build(corpus(tmp_path, {"d": 1}))
    assert [(h.entry.id, h.score) for h in open_reader().query("alpha beta", k=20)] == before
    assert all(data_files(index_dir())[name] == data for name, data in files.items())
    monkeypatch.setattr(tier, "tier_bytes", real)
    report = index.build(corpus(tmp_path, {"d": 1}))
    assert report.built == ()  # d's segment and postings file survived the crash
    assert not list((index_dir() / "tiers").glob("*.tap"))  # merged, then deleted


def test_a_damaged_tier_holding_unchanged_taps_makes_them_rebuild(tmp_path: Path) -> None:
    index.build(corpus(tmp_path, {}))
    reader = open_reader()
    gen = generation(reader)
    tiers = [str(t.taps[0]["tap"]) for t in gen.tiers]
    reader.close()
    # Damage the postings of tap "a"'s tier in place (same size): "a" changes, so the
    # build takes the tier's other taps out of it, finds it damaged, and redoes them.
    holder = next((index_dir() / "tiers").glob(f"{tiers[0]}-*.tir"))
    c = Container(holder, TIER_MAGIC)
    off, length = c.span("post_ids")
    c.close()
    data = bytearray(holder.read_bytes())
    data[off + length // 2] ^= 0xFF
    holder.write_bytes(bytes(data))
    members = [str(t["tap"]) for t in gen.tiers[0].taps]
    report = index.build(corpus(tmp_path, {"a": 1}))
    assert set(report.built) == set(members) and len(members) > 1  # "a" and its tier's
    reader = open_reader()
    reader.verify()
    assert check_queries(reader, random.Random(5), 10) > 0
    assert not holder.exists()  # no manifest points to it any more


def test_block_maxima_and_frontier_bound_every_posting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stored per-block (last id, highest tf, shortest chunk) and each term's frontier
    # agree with the postings themselves, in every tier (blocks of 4: lists of many).
    monkeypatch.setattr(tier, "BLOCK", 4)
    index.build(corpus(tmp_path, {}))
    gen = generation(open_reader())
    dl = gen.merge.ints("chunk_dl", "H")
    checked = 0
    for t, tr in enumerate(gen.tiers):
        base = gen.tier_chunk_base[t]
        for term in (b"filler", b"part", b"text", *[w.encode() for w in WORDS[:20]]):
            row = tr.find(term, zlib.crc32(term))
            if row is None or not row.n:
                continue
            ids, tfs = tr.chunk_postings(row)
            last, top, short = tr.blocks(row)
            for i in range(len(last)):
                part = range(i * tr.block, min((i + 1) * tr.block, len(ids)))
                assert last[i] == ids[part[-1]]
                assert top[i] == max(tfs[j] for j in part)
                assert short[i] == min(dl[base + ids[j]] for j in part)
            front = tr.frontier(row)
            for j in range(len(ids)):  # no posting beats every frontier point
                assert any(tf >= tfs[j] and d <= dl[base + ids[j]] for tf, d in front)
            checked += len(last) > 1
    assert checked > 10


def test_a_tap_removed_from_the_middle_of_a_tier_equals_a_build_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One tier holds every tap; removing one in its middle leaves a gap between the taps
    # the rebuilt tier takes over from the old one (found by untapping a corpus tap).
    monkeypatch.setattr(tier, "TIER_CHUNKS", 1 << 16)
    monkeypatch.setattr(tier, "CUT_EVERY", 1 << 30)
    home = str(index_dir().parent.parent)  # BOOST_HOME, as the autouse fixture set it
    taps = corpus(tmp_path, {})
    index.build(taps)
    assert len(generation(open_reader()).tiers) == 1
    for gone in ("d", "f", "b"):
        taps = [t for t in taps if t.name != gone]
        index.build(taps)
        if gone != "b":  # the random check filters on taps a, b and c
            assert check_queries(open_reader(), random.Random(len(taps)), 10) > 10
        incremental = data_files(index_dir())
        monkeypatch.setenv("BOOST_HOME", str(tmp_path / f"scratch-{gone}"))
        index.build(taps)
        assert data_files(index_dir()) == incremental
        monkeypatch.setenv("BOOST_HOME", home)
