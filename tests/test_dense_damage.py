"""A vector store damaged in place: pages SQLite finds malformed after the file opened fine.

Real `boost` subprocesses on an isolated BOOST_HOME, vectors from the offline `hash`
provider. The store is a cache, so a search falls back to BM25 with the reason and the
fix, `boost doctor` reports it as a fix, and `boost reindex --dense --force` makes it anew.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.helpers import EXAMPLES, make_repo, run_boost

HASH = {"BOOST_EMBED_PROVIDER": "hash"}
QUERY = "review a pull request for bugs"
FIX = "run 'boost reindex --dense --force' to re-embed"


def boost(args: List[str], home: Path, env: Optional[Dict[str, str]] = None):  # type: ignore[no-untyped-def]
    return run_boost(args, home, {**HASH, **(env or {})}, timeout=90)


def damage(store: Path, table: str) -> None:
    """Overwrite the header of ``table``'s root page (the rest of the file, the meta table
    among it, stays readable), after folding the write-ahead log into the file."""
    conn = sqlite3.connect(str(store))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        (root,) = root
    finally:
        conn.close()
    with open(store, "r+b") as fh:
        fh.seek((root - 1) * size)
        fh.write(b"\xff" * 16)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    src = make_repo(Path(shutil.copytree(EXAMPLES, tmp_path / "registry")))
    home = tmp_path / "home"
    for args in (["tap", str(src), "--name", "ex"], ["reindex", "--dense"]):
        proc = boost(args, home)
        assert proc.returncode == 0, proc.stderr
    return home


def test_a_damaged_store_leaves_search_to_bm25_with_the_fix_and_force_remakes_it(
    home: Path,
) -> None:
    store = home / "cache" / "vectors.sqlite"
    before = boost(["search", QUERY, "--no-llm", "--json", "--engine", "bm25"], home)
    damage(store, "items")

    auto = boost(["search", QUERY, "--no-llm", "--json"], home)
    assert auto.returncode == 0, auto.stderr
    assert "dense skipped: the vector store" in auto.stderr and "is damaged (" in auto.stderr
    assert FIX in auto.stderr
    assert [h["id"] for h in json.loads(auto.stdout)] == [
        h["id"] for h in json.loads(before.stdout)
    ]
    # Asked for by name, hybrid degrades at query time as for a provider that fails
    # there; dense alone has nothing to degrade to: one error line with the fix.
    hybrid = boost(["search", QUERY, "--no-llm", "--engine", "hybrid"], home)
    assert hybrid.returncode == 0 and "is damaged (" in hybrid.stderr
    dense = boost(["search", QUERY, "--no-llm", "--engine", "dense"], home)
    assert dense.returncode != 0 and "internal error" not in dense.stderr
    (line,) = [x for x in dense.stderr.splitlines() if x.startswith("boost: error:")]
    assert "is damaged (" in line and FIX in line

    doctor = boost(["doctor", "--json"], home)
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    assert report["dense"]["damaged"] is True and report["dense"]["ready"] is False
    assert f"vector store damaged: {FIX}" in report["fixes"]

    rebuilt = boost(["reindex", "--dense", "--force"], home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    conn = sqlite3.connect(str(store))
    try:
        assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    finally:
        conn.close()
    doctor = boost(["doctor", "--json"], home)
    assert json.loads(doctor.stdout)["dense"]["ready"] is True, doctor.stdout
    again = boost(["search", QUERY, "--no-llm", "--explain"], home)
    assert again.returncode == 0 and "engine: hybrid" in again.stdout
    assert "damaged" not in again.stderr
