"""Rank fusion against hand-computed examples: the pure functions the hybrid engine runs."""

from __future__ import annotations

from typing import List, Optional, Tuple

import pytest

from boost_cli.core.fusion import (
    NORMS,
    collapse,
    fuse,
    fusion_keys,
    merge_hits,
    minmax,
    normalise,
    rrf,
    weighted_minmax,
    weighted_scores,
)
from boost_cli.core.models import Entry, Hit


def test_rrf_hand_computed() -> None:
    fused = rrf({"bm25": ["a", "b", "c"], "dense": ["b", "d", "a"]})
    # b: 1/61 + 1/62; a: 1/61 + 1/63; d: 1/62; c: 1/63
    assert [d for d, _ in fused] == ["b", "a", "d", "c"]
    scores = dict(fused)
    assert scores["b"] == pytest.approx(0.0325224749)
    assert scores["a"] == pytest.approx(0.0322664585)
    assert scores["d"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63)


def test_rrf_ties_break_on_best_rank_then_id() -> None:
    # k = 0: a = 1/1, c = 1/1, b = 1/2 + 1/2 — all exactly 1.0.
    fused = rrf({"x": ["a", "b"], "y": ["c", "b"]}, k=0)
    assert fused == [("a", 1.0), ("c", 1.0), ("b", 1.0)]
    assert [d for d, _ in rrf({"x": ["q", "p"], "y": ["p", "q"]})] == ["p", "q"]


def test_rrf_is_independent_of_engine_order_and_ignores_repeats() -> None:
    one = rrf({"x": ["a", "b", "c"], "y": ["c", "a"]})
    two = rrf({"y": ["c", "a"], "x": ["a", "b", "c"]})
    assert one == two
    assert rrf({"x": ["a", "a", "b"]}) == [("a", 1 / 61), ("b", 1 / 63)]
    assert rrf({}) == [] and rrf({"x": []}) == []
    with pytest.raises(ValueError, match=r"^rrf k must be >= 0, not -1$"):
        rrf({"x": ["a"]}, k=-1)


def test_minmax() -> None:
    assert minmax({"a": 10, "b": 5, "c": 0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert minmax({"a": 3, "b": 3}) == {"a": 1.0, "b": 1.0}
    assert minmax({}) == {}


def test_weighted_minmax_hand_computed() -> None:
    fused = weighted_minmax(
        {"bm25": {"a": 10, "b": 5, "c": 0}, "dense": {"b": 0.9, "d": 0.5, "a": 0.7}},
        {"bm25": 0.3, "dense": 0.7},
    )
    # a = .3·1 + .7·.5 = .65; b = .3·.5 + .7·1 = .85; c = d = 0, both ranked 3rd: by id
    assert [d for d, _ in fused] == ["b", "a", "c", "d"]
    assert dict(fused) == pytest.approx({"b": 0.85, "a": 0.65, "d": 0.0, "c": 0.0})
    # An engine without a weight counts for nothing.
    assert dict(weighted_minmax({"x": {"a": 1.0, "b": 0.0}}, {})) == {"a": 0.0, "b": 0.0}


def test_weighted_minmax_ties_break_on_best_rank_then_id() -> None:
    # No weights: every total is 0. The engine ranked b (score 1) above a (score 0).
    assert weighted_minmax({"x": {"b": 1.0, "a": 0.0}}, {}) == [("b", 0.0), ("a", 0.0)]
    # c is 1st in y and 3rd in x, a 2nd in x and absent from y: best rank 1 beats 2.
    fused = weighted_minmax({"x": {"b": 3.0, "a": 2.0, "c": 1.0}, "y": {"c": 5.0}}, {})
    assert [d for d, _ in fused] == ["b", "c", "a"]


def test_normalise_each_way() -> None:
    scores = {"a": 8.0, "b": 2.0, "c": 0.0}
    assert normalise(scores, "max") == {"a": 1.0, "b": 0.25, "c": 0.0}
    assert normalise(scores, "minmax") == {"a": 1.0, "b": 0.25, "c": 0.0}
    assert normalise({"a": 0.6, "b": 0.2}, "minmax") == pytest.approx({"a": 1.0, "b": 0.0})
    assert normalise({"a": 0.6, "b": -0.2}, "unit") == pytest.approx({"a": 0.8, "b": 0.4})
    assert normalise({"a": 0.6}, "raw") == {"a": 0.6}
    assert normalise({"a": 0.0}, "max") == {"a": 0.0} and normalise({}, "max") == {}
    with pytest.raises(ValueError, match=r"^unknown normalisation 'z'$"):
        normalise(scores, "z")
    # NORMS lists exactly what normalise accepts (the values config and callers may pass).
    assert [sorted(normalise({"a": 1.0, "b": 0.0}, n).items()) for n in NORMS] == [
        [("a", 1.0), ("b", 0.0)],
        [("a", 1.0), ("b", 0.0)],
        [("a", 1.0), ("b", 0.5)],
        [("a", 1.0), ("b", 0.0)],
    ]


def test_weighted_scores_hand_computed() -> None:
    scores = {"bm25": {"a": 10.0, "b": 5.0}, "dense": {"b": 0.8, "d": 0.4, "a": 0.2}}
    weights = {"bm25": 0.6, "dense": 0.4}
    fused = weighted_scores(scores, weights, {"bm25": "max", "dense": "max"})
    # a = .6·1 + .4·.25 = .7; b = .6·.5 + .4·1 = .7 (tie: a's best rank 1 beats b's 1 by id);
    # d = .4·.5 = .2
    assert [d for d, _ in fused] == ["a", "b", "d"]
    assert dict(fused) == pytest.approx({"a": 0.7, "b": 0.7, "d": 0.2})
    floored = dict(weighted_scores(scores, weights, {"bm25": "max", "dense": "max"}, True))
    # d was not among BM25's: it gets BM25's lowest normalised score, .5
    assert floored["d"] == pytest.approx(0.6 * 0.5 + 0.4 * 0.5)
    # An engine without a norm is max-normalised; one that returned nothing adds nothing,
    # floor or not (it has no lowest score to give).
    assert weighted_scores(scores, weights, {}) == fused
    silent = {"bm25": {"a": 4.0, "b": 1.0}, "dense": {}}
    assert weighted_scores(silent, weights, {}, True) == [("a", 0.6), ("b", 0.15)]


def test_weighted_scores_ties_break_on_best_rank_then_id() -> None:
    # y has no weight: every total is 0 and y's order decides (b above a), then the id (c, d).
    tied = weighted_scores({"y": {"b": 3.0, "a": 1.0, "d": 0.5, "c": 0.5}}, {}, {})
    assert tied == [("b", 0.0), ("a", 0.0), ("c", 0.0), ("d", 0.0)]
    # An engine missing from the weights adds nothing: x alone decides.
    fused = weighted_scores({"x": {"a": 1.0, "b": 2.0}, "y": {"a": 4.0}}, {"x": 1.0}, {})
    assert fused == [("b", 1.0), ("a", 0.5)]


def test_the_default_fusion_is_max_normalised_scores() -> None:
    hits = fuse({"bm25": bm25_hits(), "dense": dense_hits()}, 10)
    # bm25 /9: a 1, b 7/9, c 2/9; dense /.9: b 1, d 8/9, c 7/9 — weighted .6 / .4
    assert [h.entry.name for h in hits] == ["b", "a", "c", "d"]
    assert hits[0].score == pytest.approx(0.6 * 7 / 9 + 0.4)
    assert dict(hits[0].ranks) == {"bm25": 2, "dense": 1}  # --explain shows both ranks


# --------------------------------------------------------------------------- hybrid


def entry(name: str, kind: str = "skill") -> Entry:
    return Entry(name, kind, f"{name} description", "tap", name, f"{name}/SKILL.md")


def bm25_hits() -> List[Hit]:
    return [
        Hit(entry("a"), 9.0, snippet="a from bm25", ranks={"bm25": 1}, content_hash="ha"),
        Hit(entry("b"), 7.0, snippet="b from bm25", ranks={"bm25": 2}),
        Hit(entry("c", "rule"), 2.0, snippet="", ranks={"bm25": 3}),
    ]


def dense_hits() -> List[Hit]:
    return [
        Hit(entry("b"), 0.9, snippet="b from dense", ranks={"dense": 1}, content_hash="hb"),
        Hit(entry("d"), 0.8, snippet="d from dense", ranks={"dense": 2}),
        Hit(entry("c", "rule"), 0.7, snippet="c from dense", ranks={"dense": 3}),
    ]


def test_fuse_rrf_merges_hits_keeping_bm25_snippets() -> None:
    hits = fuse({"bm25": bm25_hits(), "dense": dense_hits()}, 3, "rrf")
    # b: 1/62 + 1/61; c: 1/63 + 1/63; a: 1/61; d: 1/62
    assert [h.entry.name for h in hits] == ["b", "c", "a"]
    b, c, a = hits
    assert b.snippet == "b from bm25" and b.content_hash == "hb"
    assert dict(b.ranks) == {"bm25": 2, "dense": 1}
    assert c.snippet == "c from dense"  # BM25 had none
    assert dict(a.ranks) == {"bm25": 1} and a.content_hash == "ha"
    assert b.score == pytest.approx(1 / 62 + 1 / 61)


def test_fuse_minmax_and_depth() -> None:
    weights = {"bm25": 0.3, "dense": 0.7}
    hits = fuse({"bm25": bm25_hits(), "dense": dense_hits()}, 10, "minmax", weights=weights)
    # bm25 norm: a 1, b 5/7, c 0; dense norm: b 1, d .5, c 0
    # a .3; b .3·5/7 + .7 = .9143; d .35; c 0
    assert [h.entry.name for h in hits] == ["b", "d", "a", "c"]
    assert hits[0].score == pytest.approx(0.3 * 5 / 7 + 0.7)
    # depth 1 (k 1): each engine votes with its first file only.
    one = fuse({"bm25": bm25_hits(), "dense": dense_hits()}, 1, "rrf", depth=1)
    assert [h.entry.name for h in one] == ["a"] and one[0].score == pytest.approx(1 / 61)
    with pytest.raises(ValueError, match=r"^unknown fusion method 'sum'$"):
        fuse({}, 3, "sum")


def test_collapse_merges_copies_into_the_best_ranked_hit() -> None:
    def hit(name: str, tap: str, key: Optional[str], also: Tuple[str, ...] = ()) -> Hit:
        e = Entry(name, "skill", "", tap, name, f"{name}/SKILL.md")
        return Hit(e, 1.0, also_in=also, content_hash=key)

    a = hit("a", "t1", "h1")
    b = hit("a", "t2", "h1")
    c = hit("c", "t1", "h2")
    d = hit("a", "t3", "h1", ("t4:a", "t2:a"))
    e = hit("e", "t1", None)
    f = hit("e", "t2", None)
    out = collapse([a, b, c, d, e, f], lambda h: h.content_hash)
    assert [h.entry.qualified_name for h in out] == ["t1:a", "t1:c", "t1:e", "t2:e"]
    assert out[0].also_in == ("t2:a", "t3:a", "t4:a")
    assert out[1].also_in == () and out[2].also_in == ()


def test_fuse_counts_the_default_depth_of_80_files_per_engine() -> None:
    # BM25 ranks 81 files (f01 far ahead); dense ranks f81, then f80. Depth 80 keeps BM25's
    # 80th file (f80 keeps both ranks) and cuts its 81st (f81 is scored by dense alone).
    bm25 = [Hit(entry("f01"), 100.0)] + [
        Hit(entry(f"f{i:02d}"), 10.0 - i / 100) for i in range(2, 82)
    ]
    dense = [Hit(entry("f81"), 0.9), Hit(entry("f80"), 0.45)]
    hits = fuse({"bm25": bm25, "dense": dense}, 3)
    assert [(h.entry.name, dict(h.ranks)) for h in hits] == [
        ("f01", {"bm25": 1}),
        ("f81", {"dense": 1}),
        ("f80", {"bm25": 80, "dense": 2}),
    ]
    assert [h.score for h in hits] == pytest.approx([0.6, 0.4, 0.6 * 9.2 / 100 + 0.4 * 0.5])


def copy_hit(tap: str, name: str, sha: str, **fields: object) -> Hit:
    e = Entry(name, "skill", f"{name} description", tap, name, f"{name}/SKILL.md")
    return Hit(e, 1.0, content_hash=sha, **fields)  # type: ignore[arg-type]


def test_fuse_counts_copies_of_one_file_as_one_candidate() -> None:
    """BM25 names copy x:a of a file, the dense engine ranks the copies y:a and x:a first:
    the file gets both engines' rank-1 votes, and dense's next file is its #2."""
    bm25 = [copy_hit("x", "a", "H1", snippet="a via bm25"), copy_hit("x", "b", "H2")]
    dense = [copy_hit("y", "a", "H1"), copy_hit("x", "a", "H1"), copy_hit("z", "c", "H3")]
    hits = fuse({"bm25": bm25, "dense": dense}, 3, "rrf")
    assert [h.entry.qualified_name for h in hits] == ["x:a", "x:b", "z:c"]
    top = hits[0]
    assert dict(top.ranks) == {"bm25": 1, "dense": 1} and top.score == pytest.approx(2 / 61)
    assert top.also_in == ("y:a",) and top.snippet == "a via bm25"
    assert dict(hits[2].ranks) == {"dense": 2}
    assert [h.also_in for h in hits[1:]] == [(), ()]


def test_merge_hits_fills_missing_fields_from_the_next_engine() -> None:
    bm25 = [
        copy_hit("t", "a", "H1", ranks={"title": 2}),
        copy_hit("t", "b", "H2", why="b from bm25"),
    ]
    dense = [copy_hit("t", "a", "H1", snippet="dense passage", why="dense says so")]
    keys = {"t:a/SKILL.md": "H1", "t:b/SKILL.md": "H2"}
    a, b = merge_hits([("H1", 0.5), ("H2", 0.25)], {"bm25": bm25, "dense": dense}, keys)
    assert (a.snippet, a.why, a.score) == ("dense passage", "dense says so", 0.5)
    # Ranks the hits carried from engines outside this fusion stay; both engines' ranks join.
    assert dict(a.ranks) == {"title": 2, "bm25": 1, "dense": 1}
    assert (b.snippet, b.why, dict(b.ranks)) == ("", "b from bm25", {"bm25": 2})
    lone = merge_hits([("t:c/SKILL.md", 1.0)], {"bm25": [copy_hit("t", "c", "")]})
    assert (lone[0].snippet, lone[0].why, lone[0].content_hash) == ("", "", None)


def test_merge_hits_skips_unknown_ids_and_keeps_going() -> None:
    out = merge_hits([("tap:zzz", 1.0), ("tap:a/SKILL.md", 0.5)], {"bm25": bm25_hits()})
    assert [(h.entry.name, h.score) for h in out] == [("a", 0.5)]


def test_fusion_keys_chain_group_hash_and_listing_evidence() -> None:
    """One skill seen five ways: BM25's hit x1 (group G, hash H1); dense's copy of x1's file
    (H1), an edited copy in group G that took y's name and description, and a copy of y.
    Each pair shares a group, a hash or a listing, so all of them and y are one key."""

    def hit(name: str, tap: str, rel: str, **fields: object) -> Hit:
        e = Entry(name, "skill", f"{name} tool", tap, rel, f"{rel}/SKILL.md")
        return Hit(e, 1.0, **fields)  # type: ignore[arg-type]

    bm25 = [hit("x", "a", "x", group="G", content_hash="H1"), hit("y", "a", "y", content_hash="H2")]
    dense = [
        hit("x", "b", "x", content_hash="H1"),
        hit("y", "c", "x3", group="G", content_hash="H3"),
        hit("y", "d", "y", content_hash="H4"),
    ]
    keys = fusion_keys({"bm25": bm25, "dense": dense})
    # The key is the first id seen: BM25's first hit's group.
    assert len(keys) == 5 and set(keys.values()) == {"G"}
    # Nothing shared: every entry keeps a key of its own, its group, else its hash, else its id.
    apart = [hit("p", "a", "p", group="G1"), hit("q", "a", "q", content_hash="H9")]
    assert fusion_keys({"bm25": apart, "dense": [hit("r", "b", "r")]}) == {
        "a:p/SKILL.md": "G1",
        "a:q/SKILL.md": "H9",
        "b:r/SKILL.md": "b:r/SKILL.md",
    }
    # A group on one side and the file's hash on the other are enough to fuse.
    fused = fuse(
        {
            "bm25": [hit("x", "a", "x", group="G", content_hash="H1")],
            "dense": [hit("z", "b", "z", content_hash="H1")],
        },
        5,
    )
    assert [(h.entry.qualified_name, dict(h.ranks)) for h in fused] == [
        ("a:x", {"bm25": 1, "dense": 1})
    ]
