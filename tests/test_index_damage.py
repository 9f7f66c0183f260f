"""Issue 17 item 8: no file name can break `boost reindex`, and a damaged segment names its
tap and is rebuilt by the next build instead of failing every build of the home.

Names are stored as a JSON list (`segment.pack_segment`), so a newline or a tab in a name
cannot split the table; a reused segment that cannot be read is rebuilt (`builder`)."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.segment import Segment, segment_bytes, segment_key
from boost_cli.core.models import Entry, TapSnapshot
from tests.helpers import commit_all, make_repo, run_boost, skill

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="newlines in file names")

EVIL = "rules/evil\nname\twith tab.md"  # no frontmatter name: the name falls back to the stem


def hostile_home(tmp_path: Path) -> Path:
    """A home with two taps: one whose only rule's file name has a newline and a tab."""
    bad = make_repo(
        tmp_path / "bad",
        {
            EVIL: "---\ndescription: renders invoices as pdf\n---\nInvoice pdf renderer.\n",
            "rules/plain.md": skill("plain", "a plain rule", "nothing special here"),
        },
    )
    good = make_repo(
        tmp_path / "good",
        {"skills/kafka/SKILL.md": skill("kafka", "kafka streams", "consumer groups and lag")},
    )
    home = tmp_path / "home"
    for args in (["tap", str(bad), "--name", "bad"], ["tap", str(good), "--name", "good"]):
        r = run_boost(args, home)
        assert r.returncode == 0, r.stderr
    return home


def test_a_file_name_with_a_newline_does_not_break_reindex(tmp_path: Path) -> None:
    home = hostile_home(tmp_path)
    for args in (["reindex"], ["reindex"], ["reindex", "--force"]):
        r = run_boost(args, home)
        assert r.returncode == 0, (args, r.stderr)
    for query, tap in (("invoice pdf renderer", "bad"), ("consumer groups lag", "good")):
        r = run_boost(["search", query, "--engine", "bm25", "--json", "--no-llm"], home)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)
        assert hits and hits[0]["tap"] == tap, hits


def test_names_with_newlines_and_tabs_round_trip_through_a_segment(tmp_path: Path) -> None:
    """Whatever the scan lets through, the segment's name table keeps one name per content."""
    root = tmp_path / "t"
    paths = ["a\nb.md", "c\td\n.md", "plain.md"]
    entries = []
    for i, rel in enumerate(paths):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"file {i} body words\n", encoding="utf-8")
        entries.append(Entry(f"n\n{i}\tx", "rule", "d", "t", "", rel))
    snap = TapSnapshot("t", "c1", root, entries)
    params = IndexParams()
    key = segment_key(snap, params, True)
    data, _, skipped = segment_bytes(snap, params, True, key)
    assert not skipped
    out = tmp_path / "t.seg"
    out.write_bytes(data)
    seg = Segment(out)
    try:
        names, keys, sketches = seg.signatures(3)
    finally:
        seg.c.close()
    assert len(names) == len(keys) == len(sketches) == 3
    assert [n.split("\t")[0] for n in names] == ["n 0 x", "n 1 x", "n 2 x"]


def _flip_byte_in(path: Path, section: str) -> None:
    """Change one byte inside ``section`` of a container file (its size unchanged)."""
    data = bytearray(path.read_bytes())
    _, _, toc_len, _ = struct.unpack("<8sIII", data[:20])
    toc = json.loads(data[20 : 20 + toc_len])
    start = 20 + toc_len
    start += -start % 8
    off, length, _ = toc["sections"][section]
    assert length > 2
    data[start + off + 1] ^= 0x20
    path.write_bytes(bytes(data))


def test_a_damaged_segment_is_rebuilt_by_the_next_build_and_named_by_search(
    tmp_path: Path,
) -> None:
    home = hostile_home(tmp_path)
    assert run_boost(["reindex"], home).returncode == 0
    manifest = json.loads((home / "cache" / "index" / "manifest.json").read_text())
    seg = home / "cache" / "index" / manifest["segments"]["good"]["file"]
    healthy = seg.read_bytes()
    seg.write_bytes(b"X" + healthy[1:])  # a bad header: the segment cannot be opened
    # A search that must read the damaged segment says which tap's it is.
    r = run_boost(["search", "consumer groups lag", "--engine", "bm25", "--no-llm"], home)
    assert r.returncode == 5 and "tap 'good'" in r.stderr, r.stderr
    seg.write_bytes(healthy)
    _flip_byte_in(seg, "content_hash")  # read whole, CRC-checked, by the merge
    # A build that merges again (a third tap) rebuilds the damaged segment, not fails.
    third = make_repo(tmp_path / "third", {"skills/x/SKILL.md": skill("x", "xylophone tuning")})
    r = run_boost(["tap", str(third), "--name", "third"], home)
    assert r.returncode == 0 and "error" not in r.stderr, r.stderr
    r = run_boost(["reindex", "--json"], home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["bm25"]["built"] == []  # healed by the tap's refresh already
    r = run_boost(["search", "consumer groups lag", "--engine", "bm25", "--json", "--no-llm"], home)
    assert r.returncode == 0 and json.loads(r.stdout)[0]["tap"] == "good", r.stderr


def test_an_update_of_one_tap_rebuilds_the_other_taps_damaged_segment(tmp_path: Path) -> None:
    """The merge an update runs reads every segment: the damaged one is rebuilt, never
    merged again, and the build succeeds."""
    home = hostile_home(tmp_path)
    assert run_boost(["reindex"], home).returncode == 0
    manifest = json.loads((home / "cache" / "index" / "manifest.json").read_text())
    _flip_byte_in(home / "cache" / "index" / manifest["segments"]["bad"]["file"], "content_name")
    r = run_boost(["reindex", "--json"], home)  # nothing changed: nothing is merged again
    assert r.returncode == 0 and json.loads(r.stdout)["bm25"]["built"] == [], r.stderr
    good = tmp_path / "good"
    (good / "skills" / "kafka" / "SKILL.md").write_text(
        skill("kafka", "kafka streams", "consumer groups, lag and rebalancing"), encoding="utf-8"
    )
    commit_all(good)
    r = run_boost(["update", "good"], home)
    assert r.returncode == 0 and "error" not in r.stderr, r.stderr
    r = run_boost(["reindex", "--json"], home)
    assert r.returncode == 0 and json.loads(r.stdout)["bm25"]["built"] == [], r.stderr
    r = run_boost(
        ["search", "invoice pdf renderer", "--engine", "bm25", "--json", "--no-llm"], home
    )
    assert r.returncode == 0 and json.loads(r.stdout)[0]["tap"] == "bad", r.stderr
