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
