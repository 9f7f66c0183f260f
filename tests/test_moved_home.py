"""Issue 17, "also fix": a BOOST_HOME copied or moved to another path needs no rebuild.

Nothing boost persists may depend on the home's absolute path: the index records a tap's
folder relative to the home (`segment.portable_root`), so every segment key, source key
and manifest stays the same after a move, and the first `reindex` there is a no-op."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

from tests.helpers import EXAMPLES, make_repo, run_boost

HASH = {"BOOST_EMBED_PROVIDER": "hash"}
QUERIES = ("fill pdf forms", "write unit tests for react components", "kubernetes pod crash")


def results(home: Path) -> List[List[Dict[str, Any]]]:
    """The hybrid search results for QUERIES, with the home's path taken out of them."""
    out = []
    for q in QUERIES:
        r = run_boost(["search", q, "--engine", "hybrid", "--json", "--no-llm"], home, env=HASH)
        assert r.returncode == 0, r.stderr
        out.append(json.loads(r.stdout.replace(str(home), "HOME")))
    return out


def test_a_moved_and_a_copied_home_need_no_rebuild_and_answer_the_same(tmp_path: Path) -> None:
    repo = make_repo(Path(shutil.copytree(EXAMPLES, tmp_path / "registry")))
    home = tmp_path / "first"
    for args in (["tap", str(repo), "--name", "example"], ["reindex", "--dense"]):
        r = run_boost(args, home, env=HASH)
        assert r.returncode == 0, r.stderr
    before = results(home)
    assert before[0] and before[0][0]["name"] == "pdf-forms"

    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(home), str(moved))
    copied = tmp_path / "copy"
    shutil.copytree(moved, copied, symlinks=True)
    for where in (moved, copied):
        # Nothing boost wrote (outside the clones) names the first home's path.
        for f in where.rglob("*"):
            if f.is_file() and "repos" not in f.relative_to(where).parts:
                assert str(home).encode() not in f.read_bytes(), f
        r = run_boost(["reindex", "--dense", "--json"], where, env=HASH)
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert report["bm25"]["built"] == [] and report["bm25"]["reused"] == ["example"]
        assert report["dense"]["texts"] == 0 and report["dense"]["sent"] == 0, report["dense"]
        assert results(where) == before
    # Each home reads its own clone: the copy's snippets come from the copy.
    r = run_boost(["search", "fill pdf forms", "--json", "--no-llm"], copied)
    assert json.loads(r.stdout)[0]["file"].startswith(str(copied))
