"""A full disk and a read-only home, for real (issue 20, item 9): `boost vectors import`
on a full disk (ENOSPC: a small tmpfs, mounted when the tests run as root; EFBIG: a
file-size limit, `ulimit -f`, for any user) prints one line with the fix and exit code 1,
never a traceback, and leaves the vector store as it was; a read-only home (a read-only
tmpfs as root, where chmod would not stop root; chmod otherwise) keeps dense search on,
says so once on stderr, and `boost doctor` reports it.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

from boost_cli.core.dense import store as dense_store
from tests.helpers import EXAMPLES, ROOT, make_repo, run_boost

HASH = {"BOOST_EMBED_PROVIDER": "hash"}
QUERY = "write unit tests for my react components"
FULL = "free some disk space and retry"
TOO_LARGE = "File too large — free some disk space (or raise the file-size limit) and retry"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """The example registry (a git repo), and its vectors exported by a home that
    embedded it with the offline hash embedder."""
    base = tmp_path_factory.mktemp("disk")
    repo = make_repo(Path(shutil.copytree(EXAMPLES, base / "registry")))
    alice = base / "alice"
    for args in (["tap", str(repo), "--name", "example"], ["reindex", "--dense"]):
        r = run_boost(args, alice, HASH)
        assert r.returncode == 0, r.stderr
    out = base / "example.vectors.jsonl"
    r = run_boost(["vectors", "export", "example", str(out)], alice, HASH)
    assert r.returncode == 0, r.stderr
    return {"repo": repo, "alice": alice, "file": out}


def _tapped(home: Path, repo: Path) -> Path:
    for args in (["tap", str(repo), "--name", "example"], ["reindex"]):
        r = run_boost(args, home, HASH)
        assert r.returncode == 0, r.stderr
    return home


def _boost_limited(args: List[str], home: Path, max_bytes: int) -> subprocess.CompletedProcess:
    """The real CLI with a file-size limit: a write past it fails with EFBIG."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    env = {**os.environ, "BOOST_HOME": str(home), **HASH}
    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
        preexec_fn=limit,
    )


def _store_files(home: Path) -> List[str]:
    return sorted(p.name for p in (home / "cache").glob("vectors.sqlite*"))


def _one_error_line(r: subprocess.CompletedProcess, tail: str) -> None:
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("boost: error: cannot use ") and "vectors.sqlite: " in line, line
    assert line.endswith(tail), line


def test_import_past_a_file_size_limit_is_one_line_and_leaves_no_half_store(
    exported: Dict[str, Path], tmp_path: Path
) -> None:
    bob = _tapped(tmp_path / "bob", exported["repo"])
    r = _boost_limited(["vectors", "import", str(exported["file"])], bob, 40 << 10)
    _one_error_line(r, TOO_LARGE)
    assert _store_files(bob) == []  # the store this import began is gone: no half store
    r = run_boost(["vectors", "import", str(exported["file"])], bob, HASH)  # limit lifted
    assert r.returncode == 0, r.stderr
    r = run_boost(["search", QUERY, "--engine", "dense", "--json"], bob, HASH)
    assert r.returncode == 0 and json.loads(r.stdout), r.stderr


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """Mounts of a small tmpfs (root only: a real full disk and a real read-only file
    system), unmounted afterwards."""
    mounted: List[Path] = []

    def mount(kib: int) -> Path:
        where = tmp_path / f"mnt{len(mounted)}"
        where.mkdir()
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(folder: Path, leave: int = 8 << 10) -> None:
    """Fill the file system of ``folder`` but ``leave`` bytes."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder / "filler", "wb") as fh:
        fh.write(b"\0" * max(free - leave, 0))


@pytest.mark.skipif(not _can_mount(), reason="a real full disk needs a tmpfs mount (root)")
def test_import_on_a_full_disk_is_one_line_and_loses_nothing(
    exported: Dict[str, Path], tmpfs: Callable[[int], Path]
) -> None:
    disk = tmpfs(2048)
    bob = _tapped(disk / "bob", exported["repo"])
    _fill(disk)
    r = run_boost(["vectors", "import", str(exported["file"])], bob, HASH)
    _one_error_line(r, FULL)
    assert _store_files(bob) == []
    # With a store already there, a dense write that fails on the full disk (a forced
    # re-embed) is one line too, and the store answers as before.
    (disk / "filler").unlink()
    r = run_boost(["vectors", "import", str(exported["file"])], bob, HASH)
    assert r.returncode == 0, r.stderr
    assert _searchable(bob)
    _fill(disk, leave=0)
    r = run_boost(["reindex", "--dense", "--force"], bob, HASH)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1].endswith(FULL), r.stderr
    (disk / "filler").unlink()
    assert _searchable(bob)


def _searchable(home: Path) -> bool:
    r = run_boost(["search", QUERY, "--engine", "dense", "--json"], home, HASH)
    return r.returncode == 0 and bool(json.loads(r.stdout))


def test_sqlite_write_failures_map_to_the_os_error_behind_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "vectors.sqlite"
    full = sqlite3.OperationalError("database or disk is full")
    io = sqlite3.OperationalError("disk I/O error")
    free: Dict[str, int] = {"bytes": 1 << 30}
    limited: Dict[str, bool] = {"on": False}
    monkeypatch.setattr(dense_store, "_free_bytes", lambda folder: free["bytes"])
    monkeypatch.setattr(dense_store, "_size_limited", lambda: limited["on"])

    def code(exc: BaseException) -> Optional[int]:
        found = dense_store.disk_failure(exc, path)
        return None if found is None else found.errno

    assert code(full) == errno.ENOSPC and code(io) == errno.EIO
    limited["on"] = True
    assert code(io) == errno.EFBIG
    free["bytes"] = 0
    assert code(io) == errno.ENOSPC  # a full disk wins over a limit
    assert code(sqlite3.OperationalError("database is locked")) is None
    assert code(sqlite3.DatabaseError("file is not a database")) is None
    assert code(OSError("other")) is None
    found = dense_store.disk_failure(full, path)
    assert found is not None and found.filename == str(path)


def _read_only_home(exported: Dict[str, Path], tmpfs: Callable[[int], Path]) -> Path:
    """A copy of the home that embedded the example, made read-only for real: a tmpfs
    remounted read-only when root (chmod does not stop root), else chmod a-w."""
    if os.geteuid() == 0:
        if not _can_mount():
            pytest.skip("root without mount: chmod cannot make a home read-only for root")
        disk = tmpfs(8192)
        home = Path(shutil.copytree(exported["alice"], disk / "home"))
        r = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True)
        if r.returncode != 0:
            pytest.skip("cannot remount the tmpfs read-only")
        return home
    home = Path(shutil.copytree(exported["alice"], exported["alice"].parent / "ro-home"))
    for folder, _, files in os.walk(home):
        for name in files:
            os.chmod(os.path.join(folder, name), stat.S_IRUSR)
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
    return home


def test_a_read_only_home_keeps_dense_search_and_says_so_once(
    exported: Dict[str, Path], tmpfs: Callable[[int], Path]
) -> None:
    home = _read_only_home(exported, tmpfs)
    try:
        r = run_boost(["search", QUERY, "--json"], home, HASH)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)
        assert hits and any("dense" in h["ranks"] for h in hits)  # hybrid, not BM25 alone
        notes = [line for line in r.stderr.splitlines() if "read-only" in line]
        assert len(notes) == 1, r.stderr
        assert notes[0].startswith("note: the vector store ") and notes[0].endswith(
            "point BOOST_HOME at a writable folder (or make this one writable)"
        )
        r = run_boost(["search", QUERY, "--engine", "dense", "--json"], home, HASH)
        assert r.returncode == 0 and json.loads(r.stdout), r.stderr
        r = run_boost(["doctor"], home, HASH)
        assert "dense: ready" in r.stdout and "read-only (see the fixes below)" in r.stdout
        assert "fix: the vector store " in r.stdout
    finally:
        if os.geteuid() != 0:
            for folder, _, _ in os.walk(home):
                os.chmod(folder, stat.S_IRWXU)
