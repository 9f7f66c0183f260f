"""get_retriever(): preference order, forced engines, freshness handling."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from boost_cli.core import index, rag, registry
from boost_cli.core.errors import IndexError_, ProviderError, UsageError
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


def test_auto_without_index_is_lexical(two_taps: list) -> None:
    choice = rag.get_retriever()
    assert choice.retriever.name == "lexical"
    assert any("no search index yet" in n for n in choice.notes)


def test_forced_engines(two_taps: list) -> None:
    with pytest.raises(UsageError):
        rag.get_retriever("magic")
    with pytest.raises(IndexError_, match="no search index yet"):
        rag.get_retriever("bm25")
    assert rag.get_retriever("lexical").retriever.name == "lexical"
    with pytest.raises(ProviderError):
        rag.get_retriever("dense")
    index.build(registry.snapshots())
    choice = rag.get_retriever()
    assert choice.retriever.name == "bm25" and choice.notes == []
    assert choice.info["commits"].keys() == {"a", "b"}
    hits = choice.retriever.query("kafka")
    assert [h.entry.name for h in hits] == ["alpha"]


def test_one_changed_tap_is_refreshed_more_are_hinted(two_taps: list) -> None:
    a, b = two_taps
    index.build(registry.snapshots())
    (a / "skills" / "alpha" / "SKILL.md").write_text(
        skill("alpha", "alpha things", "Now about zookeeper.")
    )
    commit_all(a)
    registry.update(["a"])
    choice = rag.get_retriever()
    assert choice.info["refreshed_taps"] == ["a"] and "refreshed for tap a" in choice.notes[0]
    assert [h.entry.name for h in choice.retriever.query("zookeeper")] == ["alpha"]
    for repo, word in ((a, "cassandra"), (b, "mongodb")):
        (repo / "skills" / ("alpha" if repo is a else "beta") / "SKILL.md").write_text(
            skill("x", "y", word)
        )
        commit_all(repo)
    registry.update()
    choice = rag.get_retriever()
    assert choice.info["stale_taps"] == ["a", "b"]
    assert "out of date for 2 taps" in choice.notes[0] and "boost reindex" in choice.notes[0]


def test_removed_tap_counts_as_a_change(two_taps: list, boost_home: Path) -> None:
    index.build(registry.snapshots())
    registry.remove("b")
    choice = rag.get_retriever()
    assert choice.info["refreshed_taps"] == ["b"]
    assert set(choice.info["commits"]) == {"a"}


def test_bm25_retriever_protocol(two_taps: list) -> None:
    retriever = rag.BM25Retriever(snapshots=registry.snapshots)
    assert isinstance(retriever, rag.Retriever) and retriever.name == "bm25"
    assert not retriever.ready()
    with pytest.raises(IndexError_) as err:
        retriever.query("kafka")
    assert err.value.fix == "run 'boost reindex'"
    report = retriever.build([])
    assert isinstance(report, index.BuildReport) and report.built == ("a", "b")
    assert retriever.ready()
    assert [h.entry.name for h in retriever.query("redis", k=1, kind="skill")] == ["beta"]
    assert retriever.build([]).reused == ("a", "b")  # its old reader closed, a new one open
    assert [h.entry.name for h in retriever.query("kafka")] == ["alpha"]
    entries = [e for s in registry.snapshots() for e in s.entries]
    assert rag.BM25Retriever().build(entries).reused == ("a", "b")  # taps from the registry


def test_bm25_retriever_is_not_ready_on_a_damaged_index(two_taps: list) -> None:
    index.build(registry.snapshots())
    reader = index.open_index()
    assert reader is not None
    (reader.root / index.MANIFEST).write_text("{")
    reader.close()
    assert not rag.BM25Retriever().ready()
