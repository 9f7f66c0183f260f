"""Builds from `TapSource` values: a tap is loaded only when its segment must be rebuilt,
so a build with nothing changed reads the manifest and stats files, nothing else."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from boost_cli.cli import main
from boost_cli.core import catalog, index
from boost_cli.core.errors import UsageError
from boost_cli.core.index import builder
from boost_cli.core.index.builder import TapSource
from boost_cli.core.models import TapSnapshot
from boost_cli.core.paths import index_dir
from tests.helpers import run_boost, skill
from tests.test_index import SAME, data_files, make_tap, manifest_without_time


def sources(snaps: List[TapSnapshot], loads: List[str], scan: str = "scan/1") -> List[TapSource]:
    """The snapshots as sources whose loads are recorded in ``loads``."""

    def loader(snap: TapSnapshot) -> Callable[[], TapSnapshot]:
        def load() -> TapSnapshot:
            loads.append(snap.name)
            return snap

        return load

    return [TapSource(s.name, s.commit, s.root, scan, loader(s), len(s.entries)) for s in snaps]


def taps(tmp_path: Path) -> List[TapSnapshot]:
    a = make_tap(tmp_path, "a", {"x/SKILL.md": "kafka streams\n", "y/SKILL.md": SAME})
    b = make_tap(tmp_path, "b", {"p/SKILL.md": SAME, "q/SKILL.md": "kafka connect\n"})
    return [a, b]


def no_segment_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("a segment was opened")

    monkeypatch.setattr(builder, "Segment", refuse)


def test_nothing_changed_loads_no_tap_and_opens_no_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: List[str] = []
    first = index.build(sources(taps(tmp_path), loads))
    assert first.built == ("a", "b") and loads == ["a", "b"]
    manifest = (index_dir() / index.MANIFEST).read_bytes()
    assert set(json.loads(manifest)["sources"]) == {"a", "b"}
    loads.clear()
    no_segment_reads(monkeypatch)
    again = index.build(sources(taps(tmp_path), loads))
    assert loads == [] and again.built == () and again.reused == ("a", "b")
    assert (again.entries, again.chunks) == (first.entries, first.chunks)
    assert (index_dir() / index.MANIFEST).read_bytes() == manifest  # not even rewritten


def test_a_changed_tap_is_the_only_one_loaded(tmp_path: Path) -> None:
    loads: List[str] = []
    a, b = taps(tmp_path)
    index.build(sources([a, b], loads))
    loads.clear()
    b2 = make_tap(tmp_path, "b", {"q/SKILL.md": "kafka connect v2\n"}, commit="c2")
    report = index.build(sources([a, b2], loads))
    assert loads == ["b"] and report.built == ("b",) and report.reused == ("a",)
    incremental = data_files(index_dir())
    # The same index as a build from scratch from loaded snapshots.
    for p in index_dir().rglob("*"):
        if p.is_file():
            p.unlink()
    index.build([a, b2])
    assert data_files(index_dir()) == incremental


def test_a_segment_file_gone_or_resized_is_rebuilt(tmp_path: Path) -> None:
    loads: List[str] = []
    index.build(sources(taps(tmp_path), loads))
    before = data_files(index_dir())
    seg = next((index_dir() / index.SEGMENTS).glob("a-*.seg"))
    seg.unlink()
    loads.clear()
    report = index.build(sources(taps(tmp_path), loads))
    assert loads == ["a"] and report.built == ("a",)
    assert data_files(index_dir()) == before
    with open(seg, "ab") as fh:
        fh.write(b"\0" * 8)
    loads.clear()
    assert index.build(sources(taps(tmp_path), loads)).built == ("a",) and loads == ["a"]
    assert data_files(index_dir()) == before


def test_a_new_scan_version_reloads_and_keeps_intact_segments(tmp_path: Path) -> None:
    loads: List[str] = []
    index.build(sources(taps(tmp_path), loads))
    before = data_files(index_dir())
    loads.clear()
    report = index.build(sources(taps(tmp_path), loads, scan="scan/2"))
    assert loads == ["a", "b"] and report.built == ()  # same entries: same segment keys
    assert data_files(index_dir()) == before  # the merge was not even redone
    loads.clear()
    index.build(sources(taps(tmp_path), loads, scan="scan/2"))
    assert loads == []  # the manifest learnt the new source keys


def test_sources_and_snapshots_build_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.build(sources(taps(tmp_path), []))
    from_sources = data_files(index_dir())
    m1 = manifest_without_time(index_dir())
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "other-home"))
    index.build(taps(tmp_path))
    assert data_files(index_dir()) == from_sources
    m2 = manifest_without_time(index_dir())
    assert m2.pop("sources") == {} and m1.pop("sources") != {}
    assert m1 == m2


def test_query_params_change_only_rewrites_the_manifest(tmp_path: Path) -> None:
    loads: List[str] = []
    index.build(sources(taps(tmp_path), loads))
    before = data_files(index_dir())
    loads.clear()
    report = index.build(sources(taps(tmp_path), loads), params=index.IndexParams(k1=1.5))
    assert loads == [] and report.built == ()
    assert data_files(index_dir()) == before
    assert json.loads((index_dir() / index.MANIFEST).read_text())["params"]["k1"] == 1.5


def test_a_source_that_loads_another_tap_is_refused(tmp_path: Path) -> None:
    a, b = taps(tmp_path)
    wrong = TapSource("a", "c1", a.root, "scan/1", lambda: b)
    with pytest.raises(UsageError, match="tap 'a' loaded as 'b'"):
        index.build([wrong])


def test_source_key_follows_what_shapes_a_segment(tmp_path: Path) -> None:
    (a, _) = taps(tmp_path)
    src = sources([a], [])[0]
    params = index.IndexParams()
    key = builder.source_key(src, params, True)
    assert builder.source_key(src, index.IndexParams(k1=2.0), True) == key  # query time
    for other in (
        builder.source_key(dataclasses.replace(src, commit="c2"), params, True),
        builder.source_key(dataclasses.replace(src, scan="scan/2"), params, True),
        builder.source_key(dataclasses.replace(src, root=tmp_path), params, True),
        builder.source_key(src, params, False),
        builder.source_key(src, index.IndexParams(chunk_target=800), True),
    ):
        assert other != key


# --------------------------------------------------------------------------- the CLI


def test_reindex_with_nothing_changed_loads_no_catalog(
    repo_factory: Callable[..., Path], boost_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("one", "two"):
        repo = repo_factory(name, {f"{name}/SKILL.md": skill(name, "kafka streams")})
        assert main(["tap", str(repo), "--name", name]) == 0
    assert main(["reindex"]) == 0

    def refuse(*args: object) -> None:
        raise AssertionError("a catalog was loaded")

    monkeypatch.setattr(catalog, "load_tap", refuse)
    no_segment_reads(monkeypatch)
    assert main(["reindex", "--json"]) == 0


def test_worker_processes_build_the_same_index_as_one_process(
    repo_factory: Callable[..., Path], boost_home: Path
) -> None:
    for name in ("one", "two", "three"):
        files: Dict[str, str] = {
            f"s{i}/SKILL.md": skill(f"{name}{i}", f"kafka topic {i}") for i in range(4)
        }
        repo = repo_factory(name, files)
        assert run_boost(["tap", str(repo), "--name", name], boost_home).returncode == 0
    one = run_boost(["reindex", "--workers", "1", "--json"], boost_home)
    assert one.returncode == 0, one.stderr
    before = data_files(boost_home / "cache" / "index")
    pooled = run_boost(["reindex", "--force", "--workers", "2", "--json"], boost_home)
    assert pooled.returncode == 0, pooled.stderr
    assert json.loads(pooled.stdout)["bm25"]["built"] == ["one", "three", "two"]
    assert data_files(boost_home / "cache" / "index") == before
