"""Issue 21, cold start at 10x: what a query no longer reads or builds whole on first use,
and that a damaged table still fails with a clear error where the query follows it.

- the per-content chunk counts: one pass per tier, shared by `max_chunks` and the lse
  slack of the bounds;
- the group and next-member tables: their ids are checked where they are followed
  (`Generation.members`, `group_key`), not all of them on first use;
- the chunk and field lengths: views of the CRC-checked bytes, not array copies;
- the field postings: scored through the field length's tf-part row, no per-content
  rows built for a query (`Generation.field_rows` stays the exhaustive reference's);
- `Container.slice` reads with `os.pread` itself, and a short read is still "truncated".
"""

from __future__ import annotations

import json
import zlib
from array import array
from operator import sub
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from boost_cli.core import index
from boost_cli.core.binio import from_le, to_le, u16_view
from boost_cli.core.errors import IndexUnavailable
from boost_cli.core.index.container import Container, pack
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import MANIFEST, MERGE_MAGIC
from boost_cli.core.index.reader import IndexReader
from boost_cli.core.paths import index_dir
from tests.helpers import make_repo, run_boost, skill
from tests.test_index import dedupe_taps, make_tap


def _open() -> Tuple[IndexReader, Generation]:
    reader = index.open_index()
    assert reader is not None
    gen = reader._current()
    assert gen is not None
    return reader, gen


def _many_taps(tmp_path: Path) -> None:
    """Several taps with files of one to many chunks and shared words (copies of one file
    in each, so there are groups to follow)."""
    taps = []
    for t in range(4):
        files: Dict[str, str] = {
            "shared/SKILL.md": "deploy the kafka cluster with helm charts\n",
            f"own{t}/SKILL.md": f"tap {t} writes unit tests for react apps\n",
        }
        long = "".join(
            f"## part {i}\n\n" + "kafka consumer lag " * 60 + "\n\n" for i in range(t + 2)
        )
        files[f"long{t}/SKILL.md"] = long
        taps.append(
            make_tap(tmp_path, f"t{t}", files, descriptions={"shared/SKILL.md": "kafka helm"})
        )
    index.build(taps)


def test_chunk_counts_are_the_content_first_differences_and_give_max_chunks(
    tmp_path: Path,
) -> None:
    _many_taps(tmp_path)
    reader, gen = _open()
    with reader:
        for t, tier in enumerate(gen.tiers):
            base = gen.tier_content_base[t]
            first = list(gen.content_first[base : base + tier.contents + 1])
            want = list(map(sub, first[1:], first[:-1]))
            assert gen.chunk_counts(t) == want
            assert gen.chunk_counts(t) is gen.chunk_counts(t)  # kept, one pass
            assert gen.max_chunks(t) == max(want) and gen.max_chunks(t) > 1


def test_lengths_are_views_equal_to_the_decoded_sections(tmp_path: Path) -> None:
    _many_taps(tmp_path)
    reader, gen = _open()
    with reader:
        dl = list(from_le("H", gen.merge.read("chunk_dl")))
        fdl = list(from_le("H", gen.merge.read("field_dl")))
        for t, tier in enumerate(gen.tiers):
            cb, ob = gen.tier_chunk_base[t], gen.tier_content_base[t]
            assert list(gen.tier_lengths(t)) == dl[cb : cb + tier.chunks]
            assert list(gen.tier_field_lengths(t)) == fdl[ob : ob + tier.contents]


def test_u16_view_reads_little_endian_bytes() -> None:
    values = array("H", [0, 1, 255, 256, 40000, 65535])
    view = u16_view(to_le(values))
    assert list(view) == list(values) and list(view[2:4]) == [255, 256]


def test_a_query_builds_no_per_content_field_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_taps(tmp_path)
    reader, gen = _open()
    with reader:
        want = [(h.entry.id, h.score) for h in reader.query("kafka helm tests")]
        assert want  # the field ("kafka helm") and the chunks both match

        def refuse(*args: object) -> None:
            raise AssertionError("a query built the per-content field rows")

        monkeypatch.setattr(Generation, "field_rows", refuse)
        fresh, _ = _open()
        with fresh:
            assert [(h.entry.id, h.score) for h in fresh.query("kafka helm tests")] == want


def _rewrite_merge_section(root: Path, name: str, data: bytes) -> None:
    """Put ``data`` in the merge file's section ``name`` with its CRC32 right (the table of
    contents rewritten), and the manifest's size and CRC32 of the file to match: a table
    damaged by a bug, not by the disk."""
    merge = next(root.glob("merge-*.bin"))
    c = Container(merge, MERGE_MAGIC)
    try:
        order = sorted(c.sections, key=lambda s: c.sections[s][0])
        sections: List[Tuple[str, bytes]] = [(s, data if s == name else c.read(s)) for s in order]
        meta = c.meta
    finally:
        c.close()
    blob = pack(MERGE_MAGIC, meta, sections)
    merge.write_bytes(blob)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["merge"]["size"] = len(blob)
    if "crc32" in manifest["merge"]:
        manifest["merge"]["crc32"] = zlib.crc32(blob)
    (root / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize("table", ["group", "next"])
def test_a_group_table_with_an_id_out_of_range_is_damage_where_it_is_followed(
    tmp_path: Path, table: str
) -> None:
    index.build(dedupe_taps(tmp_path))
    reader, gen = _open()
    level = gen.params.collapse
    n = len(gen.content_kinds)
    sha = reader.query("extract tables pdf")[0].content_hash
    reader.close()
    assert sha
    bad = to_le(array("I", [n + 7] * n))
    _rewrite_merge_section(index_dir(), f"{level}_{table}", bad)
    reader, gen = _open()
    with reader:
        with pytest.raises(IndexUnavailable, match="tables disagree") as err:
            reader.query("extract tables pdf")
        assert err.value.fix
        with pytest.raises(IndexUnavailable, match="tables disagree"):
            if table == "group":
                reader.group_keys([sha])
            else:
                gen.members(level, 0)


def test_a_group_table_of_the_wrong_length_is_damage_on_first_use(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    reader, gen = _open()
    level, n = gen.params.collapse, len(gen.content_kinds)
    reader.close()
    _rewrite_merge_section(index_dir(), f"{level}_group", to_le(array("I", range(n + 1))))
    reader, gen = _open()
    with reader, pytest.raises(IndexUnavailable, match="tables disagree"):
        reader.query("extract tables pdf")


def test_a_short_slice_read_is_truncated(tmp_path: Path) -> None:
    index.build(dedupe_taps(tmp_path))
    reader, gen = _open()
    with reader:
        tier = gen.tiers[0]
        span = tier._spans["post_tfs"]
        assert tier.c.slice(span, 0, 1)
        assert tier.c.slice(span, 0, 0) == b""
        with pytest.raises(IndexUnavailable, match="outside its table"):
            tier.c.slice(span, 0, span[1] + 1)
        path = tier.c.path
        size = path.stat().st_size
        with open(path, "r+b") as fh:  # the file cut short under an open reader
            fh.truncate(span[0])
        try:
            with pytest.raises(IndexUnavailable, match="truncated"):
                tier.c.slice(span, 0, 1)
        finally:
            with open(path, "r+b") as fh:
                fh.truncate(size)


# --------------------------------------------------------------------------- the real CLI


NEAR = (
    "---\nname: saga-guide\ndescription: {desc}\n---\n"
    + (
        "Service boundaries for a monolith split into services. Sagas coordinate distributed "
        "transactions; choose sync or async communication per call.\n\n"
    )
    * 3
)


def _copies_home(tmp_path: Path) -> Path:
    """Four taps, each with a near-copy of one skill (one line of its own appended, as the
    10x corpus has) and a skill of its own: a group whose members are in four segments."""
    home = tmp_path / "home"
    for i in range(4):
        repo = make_repo(
            tmp_path / f"r{i}",
            {
                "skills/saga/SKILL.md": NEAR.format(desc="sagas and service boundaries")
                + f"<!-- variant {i} -->\n",
                f"skills/own{i}/SKILL.md": skill(f"own{i}", f"tap {i}'s own skill", "kafka lag"),
            },
        )
        r = run_boost(["tap", str(repo), "--name", f"t{i}"], home)
        assert r.returncode == 0, r.stderr
    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr
    return home


TASK = "break a monolith into services with sagas for distributed transactions"


def test_cli_search_follows_a_group_across_segments_and_a_bad_table_is_named(
    tmp_path: Path,
) -> None:
    home = _copies_home(tmp_path)
    r = run_boost(["search", TASK, "--json", "--no-llm", "--engine", "bm25"], home)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)
    top = hits[0]
    assert top["id"] == "t0:saga-guide"
    assert sorted(top["also_in"]) == ["t1:saga-guide", "t2:saga-guide", "t3:saga-guide"]
    root = home / "cache" / "index"
    manifest = json.loads((root / MANIFEST).read_text())
    level = manifest["params"]["collapse"]
    merge = next(root.glob("merge-*.bin"))
    c = Container(merge, MERGE_MAGIC)
    n = len(c.read("content_kinds"))
    c.close()
    _rewrite_merge_section(root, f"{level}_group", to_le(array("I", [n + 3] * n)))
    r = run_boost(["search", TASK, "--json", "--no-llm", "--engine", "bm25"], home)
    assert r.returncode != 0
    assert "tables disagree" in r.stderr and "reindex" in r.stderr, r.stderr
