"""The persisted BM25 index: scores, dedupe, filters, incremental builds, damage, reloads.

Every test builds small hand-made taps (a few Markdown files in tmp_path) into the
BOOST_HOME the autouse fixture points at tmp_path.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from boost_cli.core import bm25, index
from boost_cli.core.errors import IndexUnavailable, UsageError
from boost_cli.core.index import reader as index_reader
from boost_cli.core.index import segment
from boost_cli.core.index.container import HEAD, Container
from boost_cli.core.index.layout import MERGE_MAGIC, SEGMENT_MAGIC, TIER_MAGIC
from boost_cli.core.models import Entry, Hit, TapSnapshot
from boost_cli.core.paths import index_dir

FORCE_FIX = "run 'boost reindex --force'"


def make_tap(
    root: Path,
    name: str,
    files: Dict[str, str],
    commit: str = "c1",
    descriptions: Optional[Dict[str, str]] = None,
) -> TapSnapshot:
    """Write ``files`` under ``root/name`` and scan them like the catalog would (simply)."""
    tap_root = root / "taps" / name
    for rel, text in files.items():
        p = tap_root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    entries = []
    for rel in sorted(files):
        parts = rel.split("/")
        if parts[-1] == "SKILL.md":
            kind, ename = "skill", parts[-2]
        elif rel.endswith(".mdc"):
            kind, ename = "rule", parts[-1][:-4]
        else:
            kind, ename = "workflow", parts[-1].rsplit(".", 1)[0]
        entries.append(
            Entry(
                name=ename,
                kind=kind,
                description=(descriptions or {}).get(rel, ""),
                tap=name,
                rel_dir="/".join(parts[:-1]),
                path=rel,
            )
        )
    return TapSnapshot(name=name, commit=commit, root=tap_root, entries=tuple(entries))


def data_files(home_index: Path) -> Dict[str, bytes]:
    """Every data file of the index (not the manifest), by name relative to the index dir."""
    out = {}
    for p in sorted(home_index.rglob("*")):
        if p.is_file() and p.name != index.MANIFEST:
            out[p.relative_to(home_index).as_posix()] = p.read_bytes()
    return out


def manifest_without_time(home_index: Path) -> dict:
    m = json.loads((home_index / index.MANIFEST).read_text())
    del m["generated"]
    return m


def query(text: str, **kw: object) -> List[Hit]:
    reader = index.open_index()
    assert reader is not None
    with reader:
        return reader.query(text, **kw)  # type: ignore[arg-type]


NO_PREFIX = dict(use_prefix=False)


# --------------------------------------------------------------------------- scoring


def test_scores_equal_hand_computed_bm25(tmp_path: Path) -> None:
    # One short chunk per file, no context prefix: the chunks are exactly the three
    # documents of tests/test_bm25.py, so the index must give the same numbers.
    tap = make_tap(
        tmp_path,
        "t",
        {
            "d1/SKILL.md": "cat cat dog\n",
            "d2/SKILL.md": "dog bird\n",
            "d3/SKILL.md": "cat fish fish bird\n",
        },
    )
    index.build([tap], **NO_PREFIX)
    hits = query("cat bird")
    assert [h.entry.name for h in hits] == ["d3", "d1", "d2"]
    assert [h.score for h in hits] == pytest.approx([0.8272064, 0.6462550, 0.5442147], abs=1e-6)
    assert [h.ranks for h in hits] == [{"bm25": 1}, {"bm25": 2}, {"bm25": 3}]
    reader = index.open_index()
    assert reader is not None
    assert reader.stats["chunks"] == 3
    assert reader.stats["avgdl"] == pytest.approx(3.0)
    assert reader.params["quantisation"] == "none"


def test_k1_b_and_aggregation_can_be_overridden_per_query(tmp_path: Path) -> None:
    tap = make_tap(tmp_path, "t", {"d1/SKILL.md": "cat cat dog\n", "d2/SKILL.md": "dog bird\n"})
    index.build([tap], **NO_PREFIX)
    # N = 2, df(cat) = 1: idf = ln(1 + 1.5 / 1.5) = ln 2; b = 0: tf-part = 2 * 2.2 / 3.2
    hits = query("cat", b=0.0)
    assert hits[0].score == pytest.approx(bm25.idf(1, 2) * 1.375)
    hits = query("cat", k1=0.0)  # k1 = 0: tf-part is 1 whatever tf is
    assert hits[0].score == pytest.approx(bm25.idf(1, 2))
    with pytest.raises(UsageError):
        query("cat", aggregation="median")
    with pytest.raises(UsageError):
        index.build([tap], params=index.IndexParams(aggregation="median"))


def test_query_without_known_terms_returns_nothing(tmp_path: Path) -> None:
    index.build([make_tap(tmp_path, "t", {"a/SKILL.md": "deploy to kubernetes\n"})])
    assert query("zebra quagga") == []
    assert query("") == []
    assert query("the and of") == []  # only stopwords
    assert query("kubernetes", k=0) == []


def test_snippet_is_the_best_chunk_read_back_from_the_file(tmp_path: Path) -> None:
    sections = [f"## Part {i}\n\n" + f"generic filler words number {i}. " * 40 for i in range(6)]
    sections[4] = "## Flaky tests\n\n" + "retry quarantine flaky jest tests. " * 20
    body = "---\nname: big\ndescription: A big skill\n---\n# Big\n\n" + "\n\n".join(sections)
    tap = make_tap(tmp_path, "t", {"big/SKILL.md": body}, descriptions={"big/SKILL.md": "x"})
    index.build([tap])
    (hit,) = query("flaky quarantine")
    assert hit.snippet.startswith("## Flaky tests")
    assert "quarantine" in hit.snippet
    assert hit.snippet in body
    assert len(hit.snippet) < len(body) / 2
    assert hit.content_hash is not None and len(hit.content_hash) == 64
    assert query("flaky quarantine", snippets=False)[0].snippet == ""


def test_snippet_of_non_ascii_and_non_utf8_files(tmp_path: Path) -> None:
    tap_root = tmp_path / "taps" / "t"
    tap = make_tap(
        tmp_path,
        "t",
        {"u/SKILL.md": "Café résumé naïve — ünïcödé façade\n\nsecond paragraph about zebras\n"},
    )
    latin = tap_root / "l" / "SKILL.md"
    latin.parent.mkdir(parents=True)
    latin.write_bytes("caf\xe9 latin1 encoded zebras here\n".encode("latin-1"))
    entry = Entry(name="l", kind="skill", description="", tap="t", rel_dir="l", path="l/SKILL.md")
    tap = dataclasses.replace(tap, entries=(*tap.entries, entry))
    index.build([tap], **NO_PREFIX)
    hits = {h.entry.name: h for h in query("zebras")}
    assert (
        hits["u"].snippet == "Café résumé naïve — ünïcödé façade\n\nsecond paragraph about zebras"
    )
    assert hits["l"].snippet == "caf\ufffd latin1 encoded zebras here"


def test_snippet_falls_back_to_the_description_when_the_file_changed(tmp_path: Path) -> None:
    tap = make_tap(
        tmp_path,
        "t",
        {"a/SKILL.md": "terraform modules and state\n"},
        descriptions={"a/SKILL.md": "Terraform help"},
    )
    index.build([tap])
    (tap.root / "a" / "SKILL.md").write_text("terraform modules and state, edited\n")
    assert query("terraform")[0].snippet == "Terraform help"
    (tap.root / "a" / "SKILL.md").write_text("terraform modules and stat\n")  # same size
    assert query("terraform")[0].snippet == "Terraform help"
    (tap.root / "a" / "SKILL.md").unlink()
    assert query("terraform")[0].snippet == "Terraform help"


def test_context_prefix_makes_name_and_description_findable(tmp_path: Path) -> None:
    files = {"pdf-tools/SKILL.md": "Fill forms and merge pages.\n", "empty/SKILL.md": ""}
    desc = {"pdf-tools/SKILL.md": "Work with PDF documents", "empty/SKILL.md": "Ghost skill"}
    tap = make_tap(tmp_path, "t", files, descriptions=desc)
    index.build([tap], use_prefix=False)
    assert query("pdf documents", field_weight=0.0) == []
    assert query("ghost", field_weight=0.0) == []
    # The entry field score finds name and description without the prefix; "empty" has no
    # chunk at all then, and shows its description.
    assert [h.entry.name for h in query("pdf documents")] == ["pdf-tools"]
    (ghost,) = query("ghost")
    assert ghost.entry.name == "empty" and ghost.snippet == "Ghost skill"
    index.build([tap], use_prefix=True)
    assert [h.entry.name for h in query("pdf documents")] == ["pdf-tools"]
    assert [h.entry.name for h in query("ghost")] == ["empty"]  # an empty body still counts
    reader = index.open_index()
    assert reader is not None and reader.params["prefix"] is True


@pytest.mark.parametrize("how", index.AGGREGATIONS)
def test_aggregations_rank_contents_by_their_chunks(tmp_path: Path, how: str) -> None:
    one = "## A\n\n" + "redis caching layer. " * 30 + "\n\n## B\n\n" + "unrelated words here. " * 40
    two = "## A\n\n" + "redis caching layer. " * 30 + "\n\n## B\n\n" + "redis caching again. " * 40
    tap = make_tap(tmp_path, "t", {"one/SKILL.md": one, "two/SKILL.md": two})
    index.build([tap], **NO_PREFIX)
    hits = query("redis caching", aggregation=how)
    assert {h.entry.name for h in hits} == {"one", "two"}
    if how != "max":  # a second matching chunk adds to the score
        assert hits[0].entry.name == "two"
        assert hits[0].score > hits[1].score


def test_many_contents_top_k_is_exact(tmp_path: Path) -> None:
    # 300 files with graded term counts: the top 20 must be exactly the 20 best,
    # whatever the cut-off sampling in the aggregation guessed.
    files = {
        f"s{i:03d}/SKILL.md": ("alpha " * (1 + i % 17)) + "beta gamma " * (i % 5) + f"\nfile {i}\n"
        for i in range(300)
    }
    tap = make_tap(tmp_path, "t", files)
    index.build([tap], **NO_PREFIX)
    reader = index.open_index()
    assert reader is not None
    for how in index.AGGREGATIONS:
        full = reader.query("alpha beta", k=300, aggregation=how, snippets=False)
        top = reader.query("alpha beta", k=20, aggregation=how, snippets=False)
        assert [(h.entry.path, h.score) for h in top] == [
            (h.entry.path, h.score) for h in full[:20]
        ]
        assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)


# --------------------------------------------------------------------------- dedupe and filters


SAME = "---\nname: pdf\ndescription: PDF tools\n---\nExtract tables from pdf files.\n"


def dedupe_taps(tmp_path: Path) -> List[TapSnapshot]:
    a = make_tap(
        tmp_path,
        "a",
        {
            "skills_all/pdf/SKILL.md": SAME,
            "skills_cat/docs/pdf/SKILL.md": SAME,
            "other/SKILL.md": "Render charts from csv.\n",
        },
    )
    b = make_tap(tmp_path, "b", {"agents/pdf-helper.md": SAME, "zz/SKILL.md": "pdf viewer\n"})
    return [b, a]  # order given does not matter: taps are sorted by name


def test_identical_files_become_one_hit_with_also_in(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    hits = query("extract tables pdf")
    assert len([h for h in hits if "Extract tables" in h.snippet]) == 1
    hit = hits[0]
    # The copy shown is the smaller tap's (the origin rule, `origin`): b holds 2 entries,
    # a (which holds the file twice, as aggregators do) 3.
    assert hit.entry.id == "b:agents/pdf-helper.md"
    assert hit.also_in == ("a:pdf",)  # a's two copies have the same tap:name
    assert hit.similar == ()
    assert hit.snippet == "Extract tables from pdf files."
    reader = index.open_index()
    assert reader is not None
    assert reader.stats["entries"] == 5
    # Distinct contents: the shared file (3 copies), a's other, b's zz; one chunk each.
    assert reader.stats["contents"] == 3
    assert reader.stats["chunks"] == 3


def test_duplicates_do_not_count_in_df_or_n(tmp_path: Path) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps, **NO_PREFIX)
    with_copies = query("tables")[0].score
    reader = index.open_index()
    assert reader is not None
    n_with = reader.stats["chunks"]
    # The same index without any copy of the duplicated file but one.
    alone = make_tap(
        tmp_path / "x",
        "a",
        {"skills_all/pdf/SKILL.md": SAME, "other/SKILL.md": "Render charts from csv.\n"},
    )
    b_rest = make_tap(tmp_path / "x", "b", {"zz/SKILL.md": "pdf viewer\n"})
    index.build([alone, b_rest], **NO_PREFIX)
    assert query("tables")[0].score == pytest.approx(with_copies)
    reader = index.open_index()
    assert reader is not None
    assert reader.stats["chunks"] == n_with


def test_kind_filter_applies_before_truncation(tmp_path: Path) -> None:
    files = {f"s{i}/SKILL.md": "docker compose " * (10 - i) for i in range(5)}
    files["rules/docker.mdc"] = "docker\n"
    files["commands/compose.md"] = "docker compose\n"
    index.build([make_tap(tmp_path, "t", files)])
    assert [h.entry.kind for h in query("docker compose", k=1, kind="rule")] == ["rule"]
    assert [h.entry.kind for h in query("docker compose", k=1, kind="workflow")] == ["workflow"]
    assert len(query("docker compose", k=3, kind="skill")) == 3
    with pytest.raises(UsageError):
        query("docker", kind="plugin")


def test_kind_filter_picks_the_copy_of_that_kind(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    (hit,) = [h for h in query("extract tables pdf", kind="workflow")]
    assert hit.entry.id == "b:agents/pdf-helper.md"
    assert hit.also_in == ("a:pdf",)


def test_kind_and_tap_filters_must_hold_for_one_copy(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    # The shared file is a skill in tap a and a workflow (agents/) in tap b.
    assert [h.entry.id for h in query("extract tables", kind="skill", taps=["a"])] == [
        "a:skills_all/pdf/SKILL.md"
    ]
    assert [h.entry.id for h in query("extract tables", kind="workflow", taps=["b"])] == [
        "b:agents/pdf-helper.md"
    ]
    assert query("extract tables", kind="skill", taps=["b"]) == []
    assert query("extract tables", kind="workflow", taps=["a"]) == []


def test_tap_filter_uses_a_copy_in_that_tap(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    hits = query("extract tables pdf", taps=["b"])
    assert hits[0].entry.id == "b:agents/pdf-helper.md"
    assert hits[0].also_in == ("a:pdf",)
    assert {h.entry.tap for h in hits} == {"b"}
    assert query("csv charts", taps=["b"]) == []
    assert query("csv charts", taps=["nope"]) == []
    assert [h.entry.tap for h in query("csv charts", taps=["a", "nope"])] == ["a"]


# --------------------------------------------------------------------------- incremental builds


def test_noop_build_does_nothing_and_force_rebuilds(tmp_path: Path) -> None:
    taps = dedupe_taps(tmp_path)
    first = index.build(taps)
    assert first.built == ("a", "b") and first.reused == () and first.removed == ()
    before = data_files(index_dir())
    manifest = (index_dir() / index.MANIFEST).read_bytes()
    again = index.build(taps)
    assert again.built == () and again.reused == ("a", "b")
    assert (again.entries, again.chunks, again.terms) == (first.entries, first.chunks, first.terms)
    assert (index_dir() / index.MANIFEST).read_bytes() == manifest  # not even rewritten
    forced = index.build(taps, force=True)
    assert forced.built == ("a", "b")
    assert data_files(index_dir()) == before
    one = index.build(taps, force_taps=["b"])
    assert one.built == ("b",) and one.reused == ("a",) and one.taps_total == 2
    assert data_files(index_dir()) == before


def test_incremental_equals_from_scratch_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = make_tap(tmp_path, "a", {"x/SKILL.md": "kafka streams\n", "y/SKILL.md": SAME})
    b = make_tap(tmp_path, "b", {"p/SKILL.md": SAME, "q/SKILL.md": "kafka connect sinks\n"})
    c = make_tap(tmp_path, "c", {"r/SKILL.md": "flink jobs and kafka\n", "s/SKILL.md": SAME})
    steps = [
        [a, b],
        [a, b, c],  # add
        [a, make_tap(tmp_path, "b", {"q/SKILL.md": "kafka connect sinks v2\n"}, commit="c2"), c],
        [make_tap(tmp_path, "b", {"q/SKILL.md": "kafka connect sinks v2\n"}, commit="c2"), c],
    ]
    reports = [index.build(step) for step in steps]
    assert reports[1].built == ("c",) and reports[1].reused == ("a", "b")
    assert reports[2].built == ("b",) and reports[2].reused == ("a", "c")
    assert reports[3].removed == ("a",) and reports[3].built == ()
    incremental = data_files(index_dir())
    inc_manifest = manifest_without_time(index_dir())
    inc_hits = [(h.entry.id, h.score, h.also_in) for h in query("kafka pdf tables")]

    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "scratch-home"))
    index.build(steps[-1])
    assert data_files(index_dir()) == incremental
    assert manifest_without_time(index_dir()) == inc_manifest
    assert [(h.entry.id, h.score, h.also_in) for h in query("kafka pdf tables")] == inc_hits
    # After removing a, the shared file's representative moved to tap c.
    assert inc_hits[0][0] == "c:s/SKILL.md"


def test_global_statistics_are_exact_after_updates(tmp_path: Path) -> None:
    a = make_tap(tmp_path, "a", {"x/SKILL.md": "one two three\n", "y/SKILL.md": "two three\n"})
    b = make_tap(tmp_path, "b", {"z/SKILL.md": "three\n"})
    index.build([a, b], **NO_PREFIX)
    b2 = make_tap(tmp_path, "b", {"z/SKILL.md": "three four five six seven\n"}, commit="c2")
    index.build([a, b2], **NO_PREFIX)
    reader = index.open_index()
    assert reader is not None
    # chunks: "one two three" (3), "two three" (2), "three four five six seven" (5)
    assert reader.stats["chunks"] == 3
    assert reader.stats["avgdl"] == pytest.approx(10 / 3)
    assert reader.commits == {"a": "c1", "b": "c2"}
    # df(three) = 3 of N = 3; tf 1 in the 5-term chunk.
    (hit,) = [h for h in query("seven")]
    assert hit.score == pytest.approx(bm25.idf(1, 3) * bm25.term_weight(1, 5, 10 / 3))
    scores = {h.entry.name: h.score for h in query("three")}
    assert scores["x"] == pytest.approx(bm25.idf(3, 3) * bm25.term_weight(1, 3, 10 / 3))


def test_changing_query_params_only_rewrites_the_manifest(tmp_path: Path) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    before = data_files(index_dir())
    report = index.build(taps, params=index.IndexParams(k1=2.0, aggregation="max2"))
    assert report.built == ()
    assert data_files(index_dir()) == before
    reader = index.open_index()
    assert reader is not None and reader.params["k1"] == 2.0
    assert reader.params["aggregation"] == "max2"
    report = index.build(taps, params=index.IndexParams(chunk_target=800))
    assert report.built == ("a", "b")
    with pytest.raises(UsageError, match="bad chunk sizes"):
        index.build(taps, params=index.IndexParams(chunk_target=400))
    with pytest.raises(UsageError, match="bad BM25 params"):
        index.build(taps, params=index.IndexParams(b=1.5))


def test_builds_are_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    first = data_files(index_dir())
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "other-home"))
    time.sleep(0.01)
    index.build(list(reversed(taps)), workers=1)
    assert data_files(index_dir()) == first


def test_parallel_build_equals_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taps = [
        make_tap(tmp_path, f"t{i}", {f"s{j}/SKILL.md": f"topic{i} item{j}\n" for j in range(3)})
        for i in range(3)
    ]
    calls: List[tuple] = []
    index.build(taps, workers=1, progress=lambda *a: calls.append(a))
    assert calls == [(1, 3, "t0"), (2, 3, "t1"), (3, 3, "t2")]
    serial = data_files(index_dir())
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "parallel-home"))
    calls = []
    report = index.build(taps, workers=2, progress=lambda *a: calls.append(a))
    assert report.built == ("t0", "t1", "t2")
    assert data_files(index_dir()) == serial
    assert sorted(c[0] for c in calls) == [1, 2, 3]
    assert {c[2] for c in calls} == {"t0", "t1", "t2"}


def test_unreadable_entries_are_skipped_and_reported(tmp_path: Path) -> None:
    tap = make_tap(tmp_path, "t", {"a/SKILL.md": "alpha\n", "b/SKILL.md": "beta\n"})
    (tap.root / "b" / "SKILL.md").unlink()
    report = index.build([tap])
    assert report.skipped == ("t:b/SKILL.md",)
    assert report.entries == 1
    assert [h.entry.name for h in query("alpha")] == ["a"]


def test_empty_index(tmp_path: Path) -> None:
    assert index.open_index() is None
    report = index.build([])
    assert report.entries == report.chunks == 0
    reader = index.open_index()
    assert reader is not None
    assert reader.query("anything") == []
    assert reader.stats["taps"] == 0
    assert reader.commits == {}


def test_duplicate_tap_names_are_refused(tmp_path: Path) -> None:
    tap = make_tap(tmp_path, "t", {"a/SKILL.md": "alpha\n"})
    with pytest.raises(UsageError):
        index.build([tap, tap])


def test_odd_tap_names_get_safe_file_names(tmp_path: Path) -> None:
    tap = make_tap(tmp_path, "t", {"a/SKILL.md": "alpha\n"})
    odd = dataclasses.replace(tap, name="we ird/..")
    index.build([odd])
    files = [p.name for p in (index_dir() / index.SEGMENTS).iterdir()]
    assert len(files) == 1 and "/" not in files[0] and files[0].startswith("tap")
    assert [h.entry.name for h in query("alpha")] == ["a"]


# --------------------------------------------------------------------------- crash safety


def test_crash_while_building_segments_leaves_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    before = [(h.entry.id, h.score) for h in query("pdf")]
    real = segment.segment_bytes

    def crash(snap: TapSnapshot, *args: object) -> object:
        if snap.name == "b":
            raise RuntimeError("power cut")
        return real(snap, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(segment, "segment_bytes", crash)
    changed = [dataclasses.replace(t, commit="c9") for t in taps]
    with pytest.raises(RuntimeError):
        index.build(changed, workers=1)
    assert [(h.entry.id, h.score) for h in query("pdf")] == before
    monkeypatch.setattr(segment, "segment_bytes", real)
    report = index.build(changed)
    assert report.built == ("b",) and report.reused == ("a",)  # a's new segment survived


def test_crash_before_the_manifest_switch_leaves_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    before = [(h.entry.id, h.score, h.snippet) for h in query("pdf charts")]
    from boost_cli.core.index import builder

    def crash(path: object, value: object) -> None:
        raise OSError("disk full")

    real = builder.write_json
    monkeypatch.setattr(builder, "write_json", crash)
    new = make_tap(tmp_path, "c", {"n/SKILL.md": "pdf charts galore\n"})
    with pytest.raises(OSError):
        index.build([*taps, new])
    assert [(h.entry.id, h.score, h.snippet) for h in query("pdf charts")] == before
    # (not monkeypatch.undo(): that would also undo BOOST_HOME, and build in ~/.boost)
    monkeypatch.setattr(builder, "write_json", real)
    index.build([*taps, new])
    assert query("pdf charts galore")[0].entry.tap == "c"
    # Old generations are cleaned up once nothing points at them.
    assert len(list(index_dir().glob("merge-*.bin"))) == 1
    assert len(list((index_dir() / index.SEGMENTS).iterdir())) == 3


def test_a_damaged_segment_is_rebuilt_by_the_next_build(tmp_path: Path) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    seg = next((index_dir() / index.SEGMENTS).glob("a-*.seg"))
    data = bytearray(seg.read_bytes())
    data[-20] ^= 0xFF
    seg.write_bytes(bytes(data))
    report = index.build(taps)
    assert report.built == ("a",)
    assert query("charts")[0].entry.name == "other"


def test_concurrent_builds_leave_a_consistent_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    first = dedupe_taps(tmp_path)
    second = [make_tap(tmp_path, "c", {"n/SKILL.md": "gradle builds\n"})]
    real = segment.segment_bytes
    started = threading.Event()

    def slow(snap: TapSnapshot, *args: object) -> object:
        started.set()
        time.sleep(0.05)
        return real(snap, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(segment, "segment_bytes", slow)
    errors: List[BaseException] = []

    def run(taps: List[TapSnapshot]) -> None:
        try:
            index.build(taps, workers=1)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    t1 = threading.Thread(target=run, args=(first,))
    t1.start()
    started.wait(5)
    t2 = threading.Thread(target=run, args=(second,))
    t2.start()
    t1.join(10)
    t2.join(10)
    assert errors == []
    reader = index.open_index()
    assert reader is not None
    reader.verify()
    assert reader.commits == {"c": "c1"}  # the second build ran after the first
    assert [h.entry.name for h in reader.query("gradle")] == ["n"]


# --------------------------------------------------------------------------- damage


@pytest.fixture
def built(tmp_path: Path) -> Path:
    index.build(dedupe_taps(tmp_path))
    return index_dir()


def _damage(path: Path, at: int, value: bytes) -> None:
    data = bytearray(path.read_bytes())
    data[at : at + len(value)] = value
    path.write_bytes(bytes(data))


def _tier(built: Path) -> Path:
    return next((built / "tiers").glob("*.tir"))


def test_bad_magic_is_reported_with_the_fix(built: Path) -> None:
    _damage(_tier(built), 0, b"XXXX")
    with pytest.raises(IndexUnavailable) as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX
    assert "damaged" in err.value.message and "bad header" in err.value.message


def test_a_segment_is_checked_when_a_hit_first_needs_it(built: Path) -> None:
    # Segments hold records and spans, read for hits: opened on first use, then checked.
    seg = next((built / index.SEGMENTS).glob("b-*.seg"))
    good = seg.read_bytes()
    _damage(seg, 0, b"XXXX")
    reader = index.open_index()
    assert reader is not None
    assert [h.entry.name for h in reader.query("charts")] == ["other"]  # all in a
    with pytest.raises(IndexUnavailable, match="bad header") as err:
        reader.query("viewer")
    assert err.value.fix == FORCE_FIX
    seg.write_bytes(good[:100])
    with pytest.raises(IndexUnavailable, match="truncated|table of contents"):
        index.open_index().query("viewer")  # type: ignore[union-attr]
    seg.unlink()
    with pytest.raises(IndexUnavailable, match="missing") as err:
        index.open_index().query("viewer")  # type: ignore[union-attr]
    assert err.value.fix == FORCE_FIX


def test_truncated_files_are_reported(built: Path) -> None:
    merge = next(built.glob("merge-*.bin"))
    merge.write_bytes(merge.read_bytes()[:-9])
    with pytest.raises(IndexUnavailable) as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX
    merge.write_bytes(b"BOOST")
    with pytest.raises(IndexUnavailable, match="truncated"):
        index.open_index()


def test_truncated_tier_is_reported(built: Path) -> None:
    tier = _tier(built)
    tier.write_bytes(tier.read_bytes()[:100])
    with pytest.raises(IndexUnavailable) as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX


def test_checksum_mismatch_in_a_table_read_at_open(built: Path) -> None:
    merge = next(built.glob("merge-*.bin"))
    c = Container(merge, MERGE_MAGIC)
    off, _ = c.span("content_first")
    late, _ = c.span("chunk_content")  # read by the exhaustive reference only: when read
    c.close()
    data = bytearray(merge.read_bytes())
    data[off] ^= 0x01
    merge.write_bytes(bytes(data))
    with pytest.raises(IndexUnavailable, match="checksum mismatch") as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX
    data[off] ^= 0x01
    data[late] ^= 0x01
    merge.write_bytes(bytes(data))
    reader = index.open_index()
    assert reader is not None
    gen = reader._current()
    assert gen is not None
    with pytest.raises(IndexUnavailable, match="checksum mismatch"):
        assert gen.chunk_content is None  # raises first


def test_damaged_postings_are_caught_by_verify_and_bounds(built: Path) -> None:
    tier = _tier(built)
    c = Container(tier, TIER_MAGIC)
    off, length = c.span("dict_rows")
    c.close()
    _damage(tier, off + 1 + 10, b"\xff\xff\xff\x7f")  # a huge postings offset somewhere
    reader = index.open_index()
    assert reader is not None
    with pytest.raises(IndexUnavailable, match="checksum mismatch"):
        reader.verify()


def test_a_dictionary_row_past_its_bucket_is_damage(tmp_path: Path) -> None:
    index.build([make_tap(tmp_path, "t", {"a/SKILL.md": "zebra\n"})], **NO_PREFIX)
    (tier,) = (index_dir() / "tiers").iterdir()
    c = Container(tier, TIER_MAGIC)
    off, _ = c.span("dict_rows")
    c.close()
    _damage(tier, off, b"\xff")  # the one row's term length: past the end of its bucket
    with pytest.raises(IndexUnavailable, match="bad dictionary row") as err:
        query("zebra")
    assert err.value.fix == FORCE_FIX


def test_any_changed_byte_is_caught_by_verify(built: Path) -> None:
    for path, magic in (
        (_tier(built), TIER_MAGIC),
        (next((built / index.SEGMENTS).glob("a-*.seg")), SEGMENT_MAGIC),
    ):
        good = path.read_bytes()
        c = Container(path, magic)
        c.verify()
        c.close()
        for at in range(HEAD.size, len(good), max(1, len(good) // 97)):
            path.write_bytes(good[:at] + bytes([good[at] ^ 0x20]) + good[at + 1 :])
            with pytest.raises(IndexUnavailable):
                c = Container(path, magic)
                try:
                    c.verify()
                finally:
                    c.close()
        path.write_bytes(good + b"\0" * 8)
        c = Container(path, magic)
        with pytest.raises(IndexUnavailable, match="at the end"):
            c.verify()
        c.close()
        path.write_bytes(good)


def test_a_changed_digit_in_the_table_of_contents_is_caught_at_open(built: Path) -> None:
    tier = _tier(built)
    data = tier.read_bytes()
    at = data.index(b'"buckets":') + len(b'"buckets":')
    digit = data[at : at + 1]
    tier.write_bytes(data[:at] + (b"9" if digit != b"9" else b"8") + data[at + 1 :])
    with pytest.raises(IndexUnavailable, match="table of contents"):
        index.open_index()


def test_garbage_in_the_table_of_contents(built: Path) -> None:
    _damage(_tier(built), 16, b"}}}}")
    with pytest.raises(IndexUnavailable, match="table of contents"):
        index.open_index()


def test_manifest_problems(built: Path) -> None:
    manifest = built / index.MANIFEST
    good = manifest.read_text()
    m = json.loads(good)
    m["version"] = index.FORMAT_VERSION + 1
    manifest.write_text(json.dumps(m))
    with pytest.raises(IndexUnavailable) as err:
        index.open_index()
    assert err.value.fix == "run 'boost reindex'"
    assert str(index.FORMAT_VERSION + 1) in err.value.message
    manifest.write_text("{not json")
    with pytest.raises(IndexUnavailable, match="not valid JSON") as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX
    manifest.write_text("[]")
    with pytest.raises(IndexUnavailable, match="not a JSON object"):
        index.open_index()
    del m["merge"]
    m["version"] = index.FORMAT_VERSION
    manifest.write_text(json.dumps(m))
    with pytest.raises(IndexUnavailable, match="lacks 'merge'"):
        index.open_index()
    manifest.write_text(good)
    assert index.open_index() is not None


def test_tier_of_another_format_version(built: Path) -> None:
    _damage(_tier(built), 8, (index.FORMAT_VERSION + 7).to_bytes(4, "little"))
    with pytest.raises(IndexUnavailable) as err:
        index.open_index()
    assert err.value.fix == "run 'boost reindex'"
    assert "format version" in err.value.message


def test_missing_data_file_is_damage_not_a_crash(built: Path) -> None:
    _tier(built).unlink()
    with pytest.raises(IndexUnavailable, match="missing") as err:
        index.open_index()
    assert err.value.fix == FORCE_FIX


def test_a_damaged_index_is_rebuilt_by_force(built: Path, tmp_path: Path) -> None:
    seg = next((built / index.SEGMENTS).glob("a-*.seg"))
    _damage(seg, 0, b"XXXX")
    (built / index.MANIFEST).write_text("{broken")
    report = index.build(dedupe_taps(tmp_path), force=True)
    assert report.built == ("a", "b")
    reader = index.open_index()
    assert reader is not None
    reader.verify()


# --------------------------------------------------------------------------- readers


def test_reader_notices_a_replaced_index(tmp_path: Path) -> None:
    index.build([make_tap(tmp_path, "t", {"a/SKILL.md": "postgres tuning\n"})])
    reader = index.open_index()
    assert reader is not None
    assert [h.entry.name for h in reader.query("postgres")] == ["a"]
    generated = reader.generated
    tap2 = make_tap(tmp_path, "u", {"b/SKILL.md": "postgres vacuum\n"})
    time.sleep(0.01)
    index.build([tap2])
    # The files the reader had open were deleted; it re-opens from the new manifest.
    assert [h.entry.name for h in reader.query("postgres")] == ["b"]
    assert reader.commits == {"u": "c1"}
    assert reader.generated >= generated
    shutil.rmtree(index_dir())
    assert reader.query("postgres") == []
    assert reader.stats == {}


def test_reader_open_retries_when_a_build_swaps_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps = dedupe_taps(tmp_path)
    index.build(taps)
    real_state = index_reader.Generation
    calls = {"n": 0}

    def racing(root: Path, manifest: dict) -> object:
        calls["n"] += 1
        if calls["n"] == 1:
            # Another process rebuilds between our manifest read and the data files.
            monkeypatch.setattr(index_reader, "Generation", real_state)
            index.build([*taps, make_tap(tmp_path, "c", {"z/SKILL.md": "zebra\n"})])
            monkeypatch.setattr(index_reader, "Generation", racing)
        return real_state(root, manifest)

    monkeypatch.setattr(index_reader, "Generation", racing)
    reader = index.open_index()
    assert reader is not None
    assert calls["n"] == 2
    assert [h.entry.tap for h in reader.query("zebra")] == ["c"]


def test_reader_close(built: Path) -> None:
    reader = index.open_index()
    assert reader is not None
    reader.close()
    assert reader.query("pdf")  # re-opens on demand


def test_open_index_opens_a_reader_the_caller_owns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(dedupe_taps(tmp_path))
    first, second = index.open_index(), index.open_index()
    assert first is not None and second is not None and first is not second
    first.close()  # closing one reader leaves the others alone
    hits = second.query("pdf tables", k=1, kind="skill")
    assert [h.entry.id for h in hits] == ["a:skills_all/pdf/SKILL.md"]
    root = second.root
    second.close()
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "another-home"))
    assert index.open_index() is None  # the home is read at call time
    reader = index.open_index(root)
    assert reader is not None and reader.commits == {"a": "c1", "b": "c1"}
    reader.close()


def test_a_segment_of_another_layout_is_rebuilt_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taps = dedupe_taps(tmp_path)
    layout = segment.SEGMENT_LAYOUT
    monkeypatch.setattr(segment, "SEGMENT_LAYOUT", layout - 1)
    index.build(taps)
    monkeypatch.setattr(segment, "SEGMENT_LAYOUT", layout)
    report = index.build(taps)
    assert report.built == ("a", "b") and report.reused == ()
    assert len(list((index_dir() / index.SEGMENTS).iterdir())) == 2  # the old ones are gone


def test_build_report_to_dict(tmp_path: Path) -> None:
    report = index.build(dedupe_taps(tmp_path))
    d = report.to_dict()
    assert d["built"] == ["a", "b"] and d["bytes"] > 0 and d["entries"] == 5
    json.dumps(d)
    assert os.path.getsize(index_dir() / index.MANIFEST) > 0


def test_multi_chunk_top_k_is_exact_for_every_aggregation(tmp_path: Path) -> None:
    # Files of 1-4 chunks with graded matches in each: the early stop in the aggregation
    # (no later content can beat the k-th exact score) must not change the top k.
    files = {}
    for i in range(120):
        sections = [
            f"## Part {p}\n\n" + ("alpha " * ((i * (p + 3)) % 11)) + "filler words " * 60
            for p in range(1 + i % 4)
        ]
        files[f"s{i:03d}/SKILL.md"] = "\n\n".join(sections) + "\n"
    tap = make_tap(tmp_path, "t", files)
    index.build([tap], **NO_PREFIX)
    reader = index.open_index()
    assert reader is not None
    for how in index.AGGREGATIONS:
        full = reader.query("alpha filler", k=120, aggregation=how, snippets=False)
        for k in (1, 5, 17):
            top = reader.query("alpha filler", k=k, aggregation=how, snippets=False)
            assert [(h.entry.path, h.score) for h in top] == [
                (h.entry.path, h.score) for h in full[:k]
            ]
