"""The retrieval seam: get_retriever's preference order, forced engines, staleness notes,
the engine adapters (taps filter, copies collapsed) and the hybrid degrade."""

from __future__ import annotations

import os
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import pytest

from boost_cli.core import embed, index, paths, registry, retrieval
from boost_cli.core.dense import build_dense
from boost_cli.core.errors import IndexUnavailable, ProviderError, UsageError
from boost_cli.core.models import Entry, Hit, TapSnapshot
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
    # The note names five of them at most.
    many = {**current(), **{name: "1" for name in "defghi"}}
    choice = retrieval.get_retriever(current=many)
    assert choice.info["stale_taps"] == ["b", "c", "d", "e", "f", "g", "h", "i"]
    assert choice.notes == [
        "the search index is out of date for 8 taps (b, c, d, e, f) — run 'boost reindex'"
    ]


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
    (note,) = choice.notes  # the index's own fix, not the generic one
    assert note.startswith("search index unusable (the search index is damaged")
    assert note.endswith(") — run 'boost reindex --force'")
    # Asked for by name, an engine that needs the index fails with the index's own error.
    for engine in ("bm25", "hybrid"):
        with pytest.raises(IndexUnavailable, match=r"^the search index is damaged \("):
            retrieval.get_retriever(engine)


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
    # The score fusion's options reach it. floor: d gets BM25's lowest (2/9), a dense's
    # lowest (7/9); min-max norms: c is each engine's lowest, 0.
    floor = retrieval.HybridRetriever(bm25, dense, floor=True)
    assert [h.entry.name for h in floor.query("q", k=10).hits] == ["a", "b", "d", "c"]
    norms = {"bm25": "minmax", "dense": "minmax"}
    by_range = retrieval.HybridRetriever(bm25, dense, norms=norms).query("q", k=10)
    assert [(h.entry.name, round(h.score, 4)) for h in by_range.hits] == [
        ("b", round(0.6 * 5 / 7 + 0.4, 4)),
        ("a", 0.6),
        ("d", 0.2),
        ("c", 0.0),
    ]


def test_hybrid_degrades_to_bm25_when_dense_cannot_answer() -> None:
    bm25 = FakeEngine("bm25", bm25_hits())
    dense = FakeEngine("dense", [], error=IndexUnavailable("no dense index yet", "run it"))
    got = retrieval.HybridRetriever(bm25, dense).query("q", k=2)
    assert [h.entry.name for h in got.hits] == ["a", "b"]
    assert got.notes == ("dense skipped: no dense index yet — run it",)


def test_hybrid_defaults_and_explicit_weights() -> None:
    bm25, dense = FakeEngine("bm25", bm25_hits()), FakeEngine("dense", dense_hits())
    got = retrieval.HybridRetriever(bm25, dense).query("q")
    assert bm25.calls[-1]["k"] == dense.calls[-1]["k"] == 80  # k = depth = 80 by default
    many = FakeEngine("bm25", [Hit(entry(f"s{i:02d}"), 100.0 - i) for i in range(70)])
    assert len(retrieval.HybridRetriever(many, dense).query("q").hits) == 60  # as every engine
    b = got.hits[0]
    assert b.entry.name == "b" and dict(b.ranks) == {"bm25": 2, "dense": 1}
    # BM25 alone decides; dense's zero-weight votes only break the c/d tie (d ranked 2nd).
    only_bm25 = retrieval.HybridRetriever(bm25, dense, "minmax", weights={"bm25": 1.0})
    assert [h.entry.name for h in only_bm25.query("q").hits] == ["a", "b", "d", "c"]
    with pytest.raises(UsageError) as caught:
        retrieval.HybridRetriever(bm25, dense, method="sum")
    assert str(caught.value) == "unknown fusion method 'sum' — use one of: scores, rrf, minmax"


# --------------------------------------------------------------------------- adapters


class FakeBackend:
    """Stands in for the index reader and the dense index: records how it was asked."""

    def __init__(self, hits: Sequence[Hit]) -> None:
        self.hits = list(hits)
        self.calls: List[Dict[str, object]] = []

    def query(self, text: str = "", k: int = 10, **filters: object) -> List[Hit]:
        self.calls.append({"text": text, "k": k, **filters})
        return self.hits[:k]


def test_with_keywords_appends_them_to_the_task() -> None:
    assert retrieval.with_keywords("fill pdf", ["acroform", "form fields"]) == (
        "fill pdf acroform form fields"
    )
    assert retrieval.with_keywords("fill pdf", ()) == "fill pdf"


def test_dense_engine_passes_the_query_down() -> None:
    backend = FakeBackend(dense_hits())
    engine = retrieval.DenseRetriever(backend)  # type: ignore[arg-type]
    assert engine.name == "dense"
    got = engine.query("q", keywords=["w1", "w2"])
    assert got == retrieval.Retrieved(dense_hits()) and got.notes == ()
    want = {"text": "q w1 w2", "k": 60, "kind": None, "taps": None, "rank": None}
    assert backend.calls == [want]
    engine = retrieval.DenseRetriever(backend, rank={"t": 0})  # type: ignore[arg-type]
    engine.query("q", k=2, kind="rule", taps=["t"])
    assert backend.calls[-1] == {
        "text": "q",
        "k": 2,
        "kind": "rule",
        "taps": ["t"],
        "rank": {"t": 0},
    }


def test_bm25_engine_passes_k_and_filters_down() -> None:
    backend = FakeBackend(bm25_hits())
    engine = retrieval.BM25Retriever(backend)  # type: ignore[arg-type]
    assert engine.name == "bm25"
    assert engine.query("q").hits == bm25_hits() and backend.calls[-1]["k"] == 60
    engine.query("q", k=2, kind="rule", taps=["t"])
    call = backend.calls[-1]
    assert (call["k"], call["kind"], call["taps"]) == (2, "rule", ["t"])


def _table() -> Any:
    from boost_cli.core import related

    rows = [["flaki", "quarantin", "rerun", "retri", f"u{i}"] for i in range(4)]
    rows += [[f"x{i}"] for i in range(80)]
    return related.build(rows, key="k", min_df=2, max_df_share=0.1, min_cooc=3)


def test_bm25_engine_widens_a_plain_query_with_related_terms() -> None:
    backend = FakeBackend(bm25_hits())
    engine = retrieval.BM25Retriever(backend, lambda: _table())  # type: ignore[arg-type]
    task = {"flaki": 1.0, "retri": 1.0, "quarantin": 1.0}
    engine.query("flaky retried quarantine")
    assert backend.calls[-1]["weights"] == {**task, "rerun": 0.3}
    assert engine.query("flaky retried quarantine").related == ("rerun",)
    # The caller's keywords replace the widening; a short query is left as it is.
    engine.query("flaky retried quarantine", keywords=["ci"])
    assert backend.calls[-1]["weights"] == {**task, "ci": 0.7}
    engine.query("flaky retried")
    assert backend.calls[-1]["weights"] == {"flaki": 1.0, "retri": 1.0}
    # No table (none built, or of another index): the task's own words.
    bare = retrieval.BM25Retriever(backend, lambda: None)  # type: ignore[arg-type]
    bare.query("flaky retried quarantine")
    assert backend.calls[-1]["weights"] == task
    plain = retrieval.without_related(engine)
    assert isinstance(plain, retrieval.BM25Retriever) and plain.related is None
    plain.query("flaky retried quarantine")
    assert backend.calls[-1]["weights"] == task
    dense = retrieval.DenseRetriever(backend)  # type: ignore[arg-type]
    assert retrieval.without_related(dense) is dense


def test_engines_read_the_table_of_the_open_index(boost_home: Path) -> None:
    from boost_cli.core import atomic, related

    class Reader:
        manifest = {"segments": {"t": {"key": "s1"}}}

    engines = retrieval.Engines()
    reader = Reader()
    assert engines.related_terms(reader) is None  # type: ignore[arg-type]  # no file
    rows = [["flaki", "retri", f"u{i}"] for i in range(4)] + [[f"x{i}"] for i in range(80)]
    key = related.corpus_key(Reader.manifest["segments"])
    table = related.build(rows, key=key, min_df=2, max_df_share=0.1, min_cooc=3)
    atomic.write_bytes(paths.related_path(), related.pack(table))
    got = engines.related_terms(reader)  # type: ignore[arg-type]
    assert got is not None and got.neighbours("flaki") == table.neighbours("flaki")
    assert engines.related_terms(reader) is got  # kept while nothing changed
    reader.manifest = {"segments": {"t": {"key": "s2"}}}  # the index was rebuilt
    assert engines.related_terms(reader) is None  # type: ignore[arg-type]


def test_lexical_engine_returns_60_hits_by_default(tmp_path: Path) -> None:
    entries = [entry(f"pdf-{i}", tap="t") for i in range(70)]  # no files: no content hashes
    engine = retrieval.LexicalRetriever([TapSnapshot("t", "c1", tmp_path, entries)])
    assert engine.name == "lexical"
    assert len(engine.query("pdf").hits) == 60
    assert len(engine.query("pdf", k=65).hits) == 65


def test_lexical_engine_widens_only_while_copies_hide_distinct_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # c0-c3 are copies of one file, d4-d6 files of their own; the fake search ranks them so.
    entries = [entry(f"c{i}", tap="t") for i in range(4)] + [
        entry(f"d{i}", tap="t") for i in range(4, 7)
    ]
    for e in entries:
        (tmp_path / e.path).parent.mkdir(parents=True)
        (tmp_path / e.path).write_text("same" if e.name.startswith("c") else e.name)
    asked: List[int] = []

    def search(pool: Sequence[Entry], text: str, k: int, kind: Optional[str]) -> List[Hit]:
        asked.append(k)
        return [Hit(e, 1.0) for e in pool][:k]

    monkeypatch.setattr(retrieval.lexical, "search", search)
    snapshot = TapSnapshot("t", "c1", tmp_path, entries)
    got = retrieval.LexicalRetriever([snapshot]).query("q", k=2)
    # 2 hits, 1 file; 4 hits, 1 file; 8 asked, all 7 come back: 4 files, the top 2 kept.
    assert asked == [2, 4, 8]
    assert [h.entry.name for h in got.hits] == ["c0", "d4"]
    assert got.hits[0].also_in == ("t:c1", "t:c2", "t:c3")
    asked.clear()
    distinct = TapSnapshot("t", "c1", tmp_path, entries[4:])
    assert [h.entry.name for h in retrieval.LexicalRetriever([distinct]).query("q", 2).hits] == [
        "d4",
        "d5",
    ]
    assert asked == [2]  # k distinct files at once: no second search


def test_a_retrieved_answer_is_a_value() -> None:
    got = retrieval.Retrieved(bm25_hits())
    assert got.notes == ()
    with pytest.raises(FrozenInstanceError):
        got.notes = ("changed",)  # type: ignore[misc]


# --------------------------------------------------------------------------- the choice


NO_INDEX_NOTE = (
    "no search index yet, using name/description matching — "
    "run 'boost reindex' for full-content ranking"
)


def test_choice_messages_name_the_fix(two_taps: list) -> None:
    with pytest.raises(UsageError) as unknown:
        retrieval.get_retriever("magic")
    assert str(unknown.value) == "unknown engine 'magic' — use one of: lexical, bm25, dense, hybrid"
    with pytest.raises(IndexUnavailable) as no_index:
        retrieval.get_retriever("bm25")
    assert str(no_index.value) == "no search index yet — run 'boost reindex'"
    auto = retrieval.get_retriever()
    assert auto.notes == [NO_INDEX_NOTE] and auto.info == {"engine": "lexical"}


def test_bm25_choice_reports_its_index(two_taps: list) -> None:
    index.build(registry.snapshots())
    engines = retrieval.Engines()
    choice = retrieval.get_retriever(current=current(), engines=engines)
    reader = engines.index_reader()
    assert reader is not None and choice.retriever.reader is reader  # type: ignore[attr-defined]
    assert choice.info == {
        "engine": "bm25",
        "generated": reader.generated,
        "commits": current(),
        "stale_taps": [],
        "stats": dict(reader.stats),
    }
    # Asked for by name, lexical is what it gets, even with an index ready.
    lexical = retrieval.get_retriever("lexical", snapshots=registry.snapshots)
    assert lexical.retriever.name == "lexical"
    assert (lexical.notes, lexical.info) == ([], {"engine": "lexical"})


@pytest.fixture
def dense_store(two_taps: list, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The taps embedded with the offline hash embedder, configured through the environment."""
    monkeypatch.setenv("BOOST_EMBED_PROVIDER", "hash")
    embedder = embed.resolve_config({}, os.environ)
    assert embedder is not None
    build_dense(registry.snapshots(), config=embedder, path=paths.vectors_path())
    return paths.vectors_path()


def test_auto_fuses_bm25_and_dense_when_both_are_ready(dense_store: Path) -> None:
    index.build(registry.snapshots())
    for engine in (None, "hybrid"):
        choice = retrieval.get_retriever(engine, current=current())
        assert choice.retriever.name == "hybrid" and choice.notes == []
        assert choice.info["engine"] == "bm25" and choice.info["dense"]["entries"] == 2
        top = choice.retriever.query("kafka alpha").hits[0]
        # the ranks for the words, and the second (feedback) search's (docs/dense.md)
        assert top.entry.name == "alpha"
        assert dict(top.ranks) == {"bm25": 1, "dense": 1, "feedback": 1}


def test_a_vector_store_behind_the_taps_is_used_and_named(dense_store: Path) -> None:
    now = current()
    one = retrieval.get_retriever("dense", current={**now, "a": "0" * 40})
    assert one.retriever.name == "dense" and one.notes == [
        "the vector store is out of date for 1 tap (a) — run 'boost reindex --dense'"
    ]
    two = retrieval.get_retriever("dense", current={"a": "0" * 40, "b": "1" * 40})
    assert two.notes == [
        "the vector store is out of date for 2 taps (a, b) — run 'boost reindex --dense'"
    ]
    moved = {name: "0" * 40 for name in "abcdef"}  # five named at most
    many = retrieval.get_retriever("dense", current=moved)
    assert many.notes == [
        "the vector store is out of date for 6 taps (a, b, c, d, e) — run 'boost reindex --dense'"
    ]
    assert retrieval.get_retriever("dense", current=now).notes == []


def test_dense_alone_needs_no_bm25_index(dense_store: Path) -> None:
    choice = retrieval.get_retriever("dense")
    assert choice.retriever.name == "dense" and choice.notes == []
    # Opened for this one search (no Engines kept): an in-process model loads for a fast start.
    assert choice.retriever.index.one_shot is True  # type: ignore[attr-defined]
    assert choice.info.keys() == {"dense"} and choice.info["dense"]["taps"] == current()
    hits = choice.retriever.query("redis beta", keywords=["beta"]).hits
    assert hits[0].entry.name == "beta" and dict(hits[0].ranks) == {"dense": 1}
    with pytest.raises(IndexUnavailable) as caught:
        retrieval.get_retriever("hybrid")
    assert str(caught.value) == "hybrid search needs the BM25 index too — run 'boost reindex'"
    # Auto mode wants BM25 first: without its index it is lexical, whatever the dense store.
    auto = retrieval.get_retriever()
    assert auto.retriever.name == "lexical" and auto.notes == [NO_INDEX_NOTE]


def test_a_dense_store_that_cannot_answer(
    dense_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOOST_EMBED_PROVIDER")  # the store is there, no embedder configured
    reason = retrieval.Engines().dense_index().status().reason
    assert reason
    with pytest.raises(ProviderError) as caught:
        retrieval.get_retriever("dense")
    assert str(caught.value).startswith(f"dense retrieval is not ready: {reason}")
    # Without a BM25 index either, auto mode does not even look at the dense store.
    assert retrieval.get_retriever().notes == [NO_INDEX_NOTE]
    index.build(registry.snapshots())
    auto = retrieval.get_retriever()
    assert auto.retriever.name == "bm25"
    assert auto.notes == [f"dense retrieval skipped: {reason}"]


def test_engines_keep_one_dense_index_per_home_and_embedder(
    dense_store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    engines = retrieval.Engines()
    first = engines.dense_index()
    assert engines.dense_index() is first and first.one_shot is False  # kept for many queries
    assert first.path == dense_store and first.config == embed.resolve_config({}, os.environ)
    monkeypatch.setenv("BOOST_EMBED_PROVIDER", "none")
    off = engines.dense_index()
    assert off is not first and off.config is None
    monkeypatch.setenv("BOOST_EMBED_PROVIDER", "hash")
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "other-home"))
    other = engines.dense_index()
    assert other.path == paths.vectors_path() != dense_store and other.config == first.config


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
