"""The retrieval seam: get_retriever's preference order, forced engines, staleness notes,
the engine adapters (taps filter, copies collapsed) and the hybrid degrade."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import pytest

from boost_cli.core import index, paths, registry, retrieval
from boost_cli.core.errors import IndexUnavailable, ProviderError, UsageError
from boost_cli.core.models import Entry, Hit
from tests.helpers import commit_all, skill


@pytest.fixture
def two_taps(repo_factory: Callable) -> list:
    a = repo_factory(
        "a", {"skills/alpha/SKILL.md": skill("alpha", "alpha things", "Alpha body about kafka.")}
    )
    b = repo_factory(
        "b", {"skills/beta/SKILL.md": skill("beta", "beta things", "Beta body about redis.")}
    )
    registry.add(str(a), name="a")
    registry.add(str(b), name="b")
    return [a, b]


def current() -> Dict[str, str]:
    return {t.name: t.commit for t in registry.list_taps()}


def test_auto_without_index_is_lexical(two_taps: list) -> None:
    choice = retrieval.get_retriever(snapshots=registry.snapshots)
    assert choice.retriever.name == "lexical"
    assert any("no search index yet" in n for n in choice.notes)
    assert [h.entry.name for h in choice.retriever.query("kafka alpha").hits] == ["alpha"]
    assert choice.retriever.query("alpha", taps=["b"]).hits == []


def test_forced_engines(two_taps: list) -> None:
    with pytest.raises(UsageError):
        retrieval.get_retriever("magic")
    with pytest.raises(IndexUnavailable, match="no search index yet"):
        retrieval.get_retriever("bm25")
    assert retrieval.get_retriever("lexical").retriever.name == "lexical"
    with pytest.raises(ProviderError):
        retrieval.get_retriever("dense")
    index.build(registry.snapshots())
    choice = retrieval.get_retriever(current=current())
    assert choice.retriever.name == "bm25" and choice.notes == []
    assert choice.info["commits"].keys() == {"a", "b"}
    got = choice.retriever.query("kafka")
    assert [h.entry.name for h in got.hits] == ["alpha"] and got.notes == ()
    assert choice.retriever.query("kafka", taps=["b"]).hits == []


def test_a_stale_index_is_named_and_never_rebuilt_by_a_query(two_taps: list) -> None:
    a, b = two_taps
    index.build(registry.snapshots())
    before = sorted(p.name for p in paths.index_dir().rglob("*"))
    (a / "skills" / "alpha" / "SKILL.md").write_text(
        skill("alpha", "alpha things", "Now about zookeeper.")
    )
    commit_all(a)
    registry.update(["a"])
    choice = retrieval.get_retriever(current=current())
    assert choice.info["stale_taps"] == ["a"]
    assert choice.notes == ["the search index is out of date for 1 tap (a) — run 'boost reindex'"]
    # The index still answers, from what it holds; nothing under the index was written.
    assert [h.entry.name for h in choice.retriever.query("kafka").hits] == ["alpha"]
    assert sorted(p.name for p in paths.index_dir().rglob("*")) == before


def test_removed_and_new_taps_count_as_stale(two_taps: list, repo_factory: Callable) -> None:
    index.build(registry.snapshots())
    registry.remove("b")
    c = repo_factory("c", {"skills/gamma/SKILL.md": skill("gamma", "gamma things", "Gamma.")})
    registry.add(str(c), name="c")
    choice = retrieval.get_retriever(current=current())
    assert choice.info["stale_taps"] == ["b", "c"]
    assert "out of date for 2 taps (b, c)" in choice.notes[0]


def test_stale_taps_and_tap_state() -> None:
    assert retrieval.stale_taps({"a": "1", "b": "2"}, {"a": "1", "b": "2"}) == []
    assert retrieval.stale_taps({"a": "1", "c": "3"}, {"a": "9", "b": "2"}) == ["a", "b", "c"]
    assert retrieval.tap_state("1", "1") == "indexed"
    assert retrieval.tap_state("1", "0") == "stale index"
    assert retrieval.tap_state("1", None) == "not indexed"


def test_engines_keep_one_warm_reader_until_the_index_or_home_changes(
    two_taps: list, boost_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engines = retrieval.Engines()
    assert engines.index_reader() is None
    index.build(registry.snapshots())
    first = engines.index_reader()
    assert first is not None and engines.index_reader() is first
    index.build(registry.snapshots(), force=True)  # replaced: the same reader re-opens itself
    assert engines.index_reader() is first and first.commits == current()
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "other-home"))
    assert engines.index_reader() is None
    assert retrieval.Engines().index_reader() is None


def test_a_damaged_index_degrades_to_lexical_in_auto_mode(two_taps: list) -> None:
    index.build(registry.snapshots())
    (paths.index_dir() / "manifest.json").write_text("{")
    choice = retrieval.get_retriever(snapshots=registry.snapshots)
    assert choice.retriever.name == "lexical"
    assert choice.notes[0].startswith("search index unusable (")
    with pytest.raises(IndexUnavailable):
        retrieval.get_retriever("bm25")


def test_lexical_engine_collapses_copies_of_one_file(repo_factory: Callable) -> None:
    text = skill("pdf", "pdf tables", "Extract tables from PDF files.")
    a = repo_factory("a", {"skills/pdf/SKILL.md": text})
    b = repo_factory(
        "b", {"skills/pdf/SKILL.md": text, "skills/pdf2/SKILL.md": skill("pdf2", "pdf forms", "x")}
    )
    registry.add(str(a), name="a")
    registry.add(str(b), name="b")
    got = retrieval.LexicalRetriever(registry.snapshots()).query("pdf", k=2)
    assert [h.entry.qualified_name for h in got.hits] == ["a:pdf", "b:pdf2"]
    assert got.hits[0].also_in == ("b:pdf",) and got.hits[0].content_hash
    only_b = retrieval.LexicalRetriever(registry.snapshots()).query("pdf", k=2, taps=["b"])
    assert [h.entry.qualified_name for h in only_b.hits] == ["b:pdf", "b:pdf2"]


# --------------------------------------------------------------------------- hybrid


def entry(name: str, kind: str = "skill", tap: str = "tap") -> Entry:
    return Entry(name, kind, f"{name} description", tap, name, f"{name}/SKILL.md")


class FakeEngine:
    def __init__(self, name: str, hits: Sequence[Hit], error: Optional[Exception] = None):
        self.name = name
        self.hits = list(hits)
        self.error = error
        self.calls: List[Dict[str, object]] = []

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> retrieval.Retrieved:
        self.calls.append({"text": text, "k": k, "kind": kind, "taps": taps, "kw": keywords})
        if self.error is not None:
            raise self.error
        hits = [
            h
            for h in self.hits
            if (kind is None or h.entry.kind == kind) and (taps is None or h.entry.tap in taps)
        ]
        return retrieval.Retrieved(hits[:k])


def bm25_hits() -> List[Hit]:
    return [
        Hit(entry("a"), 9.0, snippet="a from bm25", ranks={"bm25": 1}),
        Hit(entry("b", tap="other"), 7.0, snippet="b from bm25", ranks={"bm25": 2}),
        Hit(entry("c", "rule"), 2.0, snippet="", ranks={"bm25": 3}),
    ]


def dense_hits() -> List[Hit]:
    return [
        Hit(entry("b", tap="other"), 0.9, snippet="b from dense", ranks={"dense": 1}),
        Hit(entry("d"), 0.8, snippet="d from dense", ranks={"dense": 2}),
        Hit(entry("c", "rule"), 0.7, snippet="c from dense", ranks={"dense": 3}),
    ]


def test_hybrid_fuses_both_engines_and_passes_filters_down() -> None:
    bm25, dense = FakeEngine("bm25", bm25_hits()), FakeEngine("dense", dense_hits())
    hybrid = retrieval.HybridRetriever(bm25, dense)
    assert hybrid.name == "hybrid" and hybrid.method == "scores"
    got = hybrid.query("q", k=3)
    # bm25 /9: a 1, b 7/9, c 2/9; dense /.9: b 1, d 8/9, c 7/9; weighted .6 / .4
    assert [h.entry.name for h in got.hits] == ["b", "a", "c"] and got.notes == ()
    assert bm25.calls == [{"text": "q", "k": 80, "kind": None, "taps": None, "kw": ()}]
    rrf = retrieval.HybridRetriever(bm25, dense, method="rrf").query("q", k=3)
    assert [h.entry.name for h in rrf.hits] == ["b", "c", "a"]
    rules = hybrid.query("q", k=5, kind="rule", taps=["tap"], keywords=["w"])
    assert [h.entry.name for h in rules.hits] == ["c"]
    want = {"text": "q", "k": 80, "kind": "rule", "taps": ["tap"], "kw": ["w"]}
    assert dense.calls[-1] == bm25.calls[-1] == want
    weights = {"bm25": 0.3, "dense": 0.7}
    minmax = retrieval.HybridRetriever(bm25, dense, method="minmax", weights=weights)
    assert [h.entry.name for h in minmax.query("q", k=10).hits] == ["b", "d", "a", "c"]


def test_hybrid_degrades_to_bm25_when_dense_cannot_answer() -> None:
    bm25 = FakeEngine("bm25", bm25_hits())
    dense = FakeEngine("dense", [], error=IndexUnavailable("no dense index yet", "run it"))
    got = retrieval.HybridRetriever(bm25, dense).query("q", k=2)
    assert [h.entry.name for h in got.hits] == ["a", "b"]
    assert got.notes == ("dense skipped: no dense index yet — run it",)
    with pytest.raises(UsageError, match="unknown fusion method"):
        retrieval.HybridRetriever(bm25, dense, method="sum")


def test_hybrid_fuses_a_near_duplicate_group_once() -> None:
    # BM25 shows copy "x1" of a skill (group "g"); the dense engine finds copy "x2" (hash
    # "h2", which the index puts in group "g") and a skill with the same name and
    # description as BM25's "y" but no known group: each skill is one fused hit.
    x1 = Entry("x", "skill", "X tool", "a", "x", "x/SKILL.md")
    x2 = Entry("x-edited", "skill", "Another text", "b", "x", "x/SKILL.md")
    y1 = Entry("Y", "skill", "Y tool!", "a", "y", "y/SKILL.md")
    y2 = Entry("y", "skill", "y  tool", "c", "y", "y/SKILL.md")
    bm25 = FakeEngine("bm25", [Hit(x1, 5.0, group="g", content_hash="h1"), Hit(y1, 4.0)])
    dense = FakeEngine("dense", [Hit(x2, 0.9, content_hash="h2"), Hit(y2, 0.8)])
    asked: List[List[str]] = []

    def groups(hashes: Sequence[str]) -> Dict[str, str]:
        asked.append(list(hashes))
        return {"h2": "g"}

    hits = retrieval.HybridRetriever(bm25, dense, groups=groups).query("q", k=10).hits
    assert asked == [["h2"]]
    assert [(h.entry.id, dict(h.ranks)) for h in hits] == [
        ("a:x/SKILL.md", {"bm25": 1, "dense": 1}),
        ("a:y/SKILL.md", {"bm25": 2, "dense": 2}),
    ]
    assert hits[0].also_in == ("b:x-edited",) and hits[1].also_in == ("c:y",)
    # Without the index's groups the edited copy is a skill of its own.
    alone = retrieval.HybridRetriever(bm25, dense).query("q", k=10).hits
    assert [h.entry.id for h in alone] == ["a:y/SKILL.md", "a:x/SKILL.md", "b:x/SKILL.md"]


def test_bm25_engine_weighs_keywords_below_the_task(repo_factory: Callable) -> None:
    a = repo_factory(
        "a",
        {
            "skills/jest/SKILL.md": skill("jest", "unit tests", "Use jest for unit tests."),
            "skills/react/SKILL.md": skill("react", "react apps", "Build react apps."),
        },
    )
    registry.add(str(a), name="a")
    index.build(registry.snapshots())
    choice = retrieval.get_retriever("bm25", current=current())
    reader = index.open_index()
    assert reader is not None
    with reader:
        got = choice.retriever.query("react", keywords=["jest"]).hits
        weighted = reader.query(weights={"react": 1.0, "jest": 0.7})
        assert [(h.entry.name, h.score) for h in got] == [(h.entry.name, h.score) for h in weighted]
        concatenated = reader.query("react jest")
        assert got[1].score < concatenated[1].score
