"""Related terms (`core/related.py`): the association math, the table, the file format."""

from __future__ import annotations

import math
import struct

import pytest

from boost_cli.core import related
from boost_cli.core.related import Related, RelatedDamaged, association, build, pack, unpack


def test_association_hand_computed_values() -> None:
    # 3 of q's 4 fields hold e; e in 10 of 100 fields: 0.75 × ln(1 + 10) / ln(101)
    assert association(3, 4, 10, 100) == pytest.approx(0.75 * math.log(11) / math.log(101))
    assert association(0, 4, 10, 100) == 0.0
    assert association(4, 4, 1, 100) == pytest.approx(1.0 * math.log(101) / math.log(101))
    # Not symmetric: a rare term suggests a common one weakly, the other way less still.
    assert association(3, 3, 30, 100) > association(3, 30, 3, 100)


def _fields() -> list:
    # "flaki" keeps company with "test" and "retri"; "deploi" with "kubernet".
    rows = (
        [["flaki", "test", "retri"]] * 3
        + [["flaki", "test", "ci"]]
        + [["deploi", "kubernet", "helm"]] * 3
        + [["deploi", "kubernet", f"f{i}"] for i in range(2)]
        + [["test", "unit", f"g{i}"] for i in range(8)]
        + [[f"x{i}", f"y{i}"] for i in range(40)]
    )
    # Identical fields count once: make the repeated ones distinct by a unique filler term.
    return [r + [f"u{i}"] for i, r in enumerate(rows)]


def test_build_keeps_associated_terms_only() -> None:
    rel = build(_fields(), key="k1", min_df=2, max_df_share=0.5, min_cooc=3)
    assert rel.key == "k1" and rel.n == 57
    names = dict(rel.neighbours("flaki"))
    assert set(names) == {"retri", "test"}  # "ci": once together only (min_cooc 3)
    assert names["retri"] > names["test"]  # "test" is everywhere, "retri" is not
    assert [t for t, _ in rel.neighbours("deploi")] == ["kubernet", "helm"] or [
        t for t, _ in rel.neighbours("deploi")
    ] == ["helm", "kubernet"]
    assert rel.neighbours("unknown") == []
    for term in rel.terms:
        for _, s in rel.neighbours(term):
            assert 0.0 < s <= 1.0


def test_build_leaves_out_common_and_rare_terms() -> None:
    rel = build(_fields(), min_df=2, max_df_share=0.1, min_cooc=3)
    assert "test" not in rel.terms  # 12 of 57 fields > 10 %
    assert "x1" not in rel.terms  # in one field
    assert "u0" not in rel.terms


def test_build_counts_repeated_fields_once() -> None:
    once = build([["a", "b"], ["c", "d"]] * 5, min_df=1, max_df_share=1.0, min_cooc=1)
    assert once.n == 2


def test_expand_sums_over_content_terms_and_skips_the_query() -> None:
    rel = build(_fields(), min_df=2, max_df_share=0.5, min_cooc=3)
    out = rel.expand({"flaki": 1.0, "test": 1.0}, terms=5, weight=0.3, min_terms=1)
    assert "flaki" not in out and "test" not in out
    assert max(out.values()) == pytest.approx(0.3)
    # A softened filler term (weight < 1) is not expanded.
    assert rel.expand({"flaki": 0.25}, min_terms=1) == {}
    one = rel.expand({"deploi": 1.0}, terms=1, min_terms=1)
    assert len(one) == 1 and set(one) <= {"kubernet", "helm"}
    assert rel.expand({"deploi": 1.0}, terms=0, min_terms=1) == {}
    assert rel.expand({"nothing": 1.0}, min_terms=1) == {}


def test_expand_leaves_short_queries_alone() -> None:
    rel = build(_fields(), min_df=2, max_df_share=0.5, min_cooc=3)
    two = {"flaki": 1.0, "deploi": 1.0}
    assert rel.expand(two, min_terms=3) == {}  # a keyword search: as it is
    assert rel.expand(two, min_terms=2)
    # Terms without neighbours do not count towards the minimum.
    assert rel.expand({**two, "nothing": 1.0, "x1": 1.0}, min_terms=3) == {}
    assert rel.expand({**two, "unit": 1.0}, min_terms=3)


def test_expand_weights_follow_the_scores() -> None:
    rel = build(_fields(), min_df=2, max_df_share=0.5, min_cooc=3)
    out = rel.expand({"deploi": 1.0, "flaki": 1.0}, terms=10, weight=1.0, min_terms=1)
    scores: dict = {}
    for q in ("deploi", "flaki"):
        i = list(rel.terms).index(q)
        idf = math.log(1 + rel.n / rel.df[i])
        for e, s in rel.neighbours(q):
            scores[e] = scores.get(e, 0.0) + idf * s
    top = max(scores.values())
    assert out == pytest.approx({e: s / top for e, s in scores.items()})


def test_pack_round_trip() -> None:
    rel = build(_fields(), key="abc", min_df=2, max_df_share=0.5, min_cooc=3)
    back = unpack(pack(rel))
    assert back.key == "abc" and back.n == rel.n
    assert list(back.terms) == list(rel.terms)
    assert [back.neighbours(t) for t in back.terms] == [rel.neighbours(t) for t in rel.terms]
    empty = build([], key="")
    assert unpack(pack(empty)).terms == []


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda b: b"NOTBOOST" + b[8:], "not a related-terms file"),
        (lambda b: b[:8] + struct.pack("<I", 99) + b[12:], "format 99"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum mismatch"),
        (lambda b: b[:10], "too short"),
    ],
)
def test_unpack_rejects_damage(damage, reason: str) -> None:
    data = pack(build(_fields(), key="abc", min_df=2, max_df_share=0.5, min_cooc=3))
    with pytest.raises(RelatedDamaged, match=reason):
        unpack(damage(data))


def test_load_checks_the_key() -> None:
    data = pack(build(_fields(), key="abc", min_df=2, max_df_share=0.5, min_cooc=3))
    assert isinstance(related.load(data, "abc"), Related)
    assert related.load(data, "other") is None
    assert related.load(None, "abc") is None
    assert related.load(b"junk", "abc") is None


class _Source:
    """Stands in for an `index.TapSource`: counts how often its catalog is loaded."""

    def __init__(self, name: str, descriptions: list) -> None:
        self.name, self.loads = name, 0
        self.descriptions = descriptions

    def load(self) -> object:
        from types import SimpleNamespace

        self.loads += 1
        entries = [
            SimpleNamespace(name=f"s{i}", description=d) for i, d in enumerate(self.descriptions)
        ]
        return SimpleNamespace(entries=entries)


def test_refresh_loads_only_the_taps_that_changed(
    boost_home: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boost_cli.core import index, indexing, paths

    manifest = {"segments": {"a": {"key": "a1"}, "b": {"key": "b1"}}}
    monkeypatch.setattr(index, "previous_manifest", lambda root: manifest)
    a = _Source("a", ["flaky tests retried", "flaky tests quarantined"] * 3)
    b = _Source("b", ["deploy helm charts"] * 4)
    assert indexing.refresh_related([a, b]) is True
    assert (a.loads, b.loads) == (1, 1)
    first = unpack(paths.related_path().read_bytes())
    assert first.key == related.corpus_key(manifest["segments"])
    assert indexing.refresh_related([a, b]) is False  # nothing changed: nothing loaded
    assert (a.loads, b.loads) == (1, 1)
    manifest["segments"]["b"] = {"key": "b2"}  # tap b changed
    b.descriptions = ["deploy kubernetes manifests"]
    assert indexing.refresh_related([a, b]) is True
    assert (a.loads, b.loads) == (1, 2)
    second = unpack(paths.related_path().read_bytes())
    assert second.key != first.key and (first.n, second.n) == (10, 7)
    # The table is the same as one built from scratch from both taps' entries.
    paths.related_fields_path().unlink()
    paths.related_path().unlink()
    assert indexing.refresh_related([a, b]) is True
    assert (a.loads, b.loads) == (2, 3)
    again = unpack(paths.related_path().read_bytes())
    assert related.pack(again) == related.pack(second)
    # No tap indexed: both files go.
    manifest["segments"] = {}
    assert indexing.refresh_related([a, b]) is False
    assert not paths.related_path().exists() and not paths.related_fields_path().exists()
