"""Issue 17 (items 12 and 13): what boost says about a home it cannot write and about a tap
whose clone is gone — through the real CLI and the real `boost mcp` server.

Item 12: on a read-only BOOST_HOME every write command fails; `boost doctor` must say so,
with the fix, and exit 1. Item 13: with a tap's clone deleted, `show` and `boost_get_skill`
name the missing clone and how to restore it (not "no registries are tapped yet").
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from tests.helpers import ROOT, indexed_example, make_repo, run_boost, skill
from tests.test_mcp_server import McpProcess

# --------------------------------------------------------------------------- item 12


def _read_only_run(home: Path, args: List[str]) -> subprocess.CompletedProcess:
    """The real CLI on ``home`` made read-only: by its mode bits for a normal user; for
    root (whom mode bits do not stop) a read-only bind mount in a private mount namespace."""
    env = {**os.environ, "BOOST_HOME": str(home)}
    cmd = [sys.executable, "-m", "boost_cli", *args]
    if os.geteuid() != 0:
        folders = [home, *(p for p in home.rglob("*") if p.is_dir() and not p.is_symlink())]
        for folder in folders:
            folder.chmod(folder.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            return subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(ROOT))
        finally:
            for folder in folders:
                folder.chmod(folder.stat().st_mode | stat.S_IWUSR)
    if not shutil.which("unshare"):
        pytest.skip("running as root without unshare: no way to make a read-only home")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99; shift; exec "$@"'
    r = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(home), *cmd],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(ROOT),
    )
    if r.returncode == 99 or "unshare failed" in r.stderr:
        pytest.skip(f"running as root without mount rights: {r.stderr.strip()}")
    return r


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("state"), "ex")


def test_doctor_reports_a_read_only_home_with_the_fix(home: Path) -> None:
    """Item 12: doctor says the home is not writable, says what it breaks, and exits 1."""
    assert run_boost(["doctor", "--json"], home).returncode in (0, 1)
    writable = json.loads(run_boost(["doctor", "--json"], home).stdout)
    assert writable["writable"] is True
    assert not any("not writable" in f for f in writable["fixes"])
    reindex = _read_only_run(home, ["reindex", "--force"])
    assert reindex.returncode != 0  # the premise: writes fail there
    doctor = _read_only_run(home, ["doctor"])
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    fixes = [ln.strip() for ln in doctor.stdout.splitlines() if ln.strip().startswith("fix:")]
    assert any(
        f.startswith("fix: home not writable, so tap, update, reindex and untap fail: ")
        and f"cannot write in {home}" in f
        for f in fixes
    ), doctor.stdout
    assert any("point BOOST_HOME at" in f for f in fixes)
    report = json.loads(_read_only_run(home, ["doctor", "--json"]).stdout)
    assert report["writable"] is False and str(home) in report["write_problem"]


def test_doctor_reports_a_read_only_vector_store(tmp_path: Path) -> None:
    """Item 12: a file boost writes in place (the vector store) counts too."""
    from boost_cli.core import paths, status

    store = paths.vectors_path()
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    assert status.unwritable(paths.boost_home()) is None
    if os.geteuid() == 0:
        pytest.skip("root may write any file: mode bits cannot make it read-only")
    store.chmod(0o444)
    problem = status.unwritable(paths.boost_home())
    assert problem is not None and str(store) in str(problem)


def test_doctor_probes_the_parent_of_a_home_not_created_yet(tmp_path: Path) -> None:
    from boost_cli.core import status

    assert status.unwritable(tmp_path / "not" / "yet") is None
    assert not (tmp_path / "not").exists()  # probing created nothing


# --------------------------------------------------------------------------- item 13


@pytest.fixture
def gone_home(tmp_path: Path) -> Path:
    """Two taps, ``ex`` and ``other``; ``ex``'s clone deleted by hand."""
    home = indexed_example(tmp_path, "ex")
    other = make_repo(tmp_path / "other", {"skills/tidy/SKILL.md": skill("tidy", "Tidy up")})
    assert run_boost(["tap", str(other), "--name", "other"], home).returncode == 0
    shutil.rmtree(home / "repos" / "ex")
    return home


def test_show_names_the_missing_clone_and_the_fix(gone_home: Path, tmp_path: Path) -> None:
    """Item 13, the CLI: by TAP:NAME, and by a bare name."""
    src = tmp_path / "example-registry"
    fix = f"run 'boost untap ex', then 'boost tap {src}'"
    r = run_boost(["show", "ex:pdf-forms"], gone_home)
    assert r.returncode == 4
    assert r.stderr.strip() == f"boost: error: the clone of tap 'ex' is missing — {fix}"
    bare = run_boost(["show", "pdf-forms"], gone_home)
    assert bare.returncode == 3
    assert "no registries are tapped yet" not in bare.stderr
    assert "the clone of ex is missing" in bare.stderr
    assert run_boost(["show", "other:tidy"], gone_home).returncode == 0  # the rest still works
    shutil.rmtree(gone_home / "repos" / "other")
    none = run_boost(["show", "pdf-forms"], gone_home)  # no clone left at all
    assert none.returncode == 3
    assert "the clones of ex, other are missing — run 'boost untap NAME'" in none.stderr
    assert "no registries are tapped yet" not in none.stderr
    assert run_boost(["show", "other:tidy"], gone_home).returncode == 4


def test_mcp_names_the_missing_clone_and_the_fix(gone_home: Path) -> None:
    """Item 13, MCP: boost_get_skill says what is wrong and what the user can do;
    boost_list_taps marks the tap."""
    proc = McpProcess(gone_home)
    try:
        proc.initialize()
        got = proc.call_result("boost_get_skill", {"name": "ex:pdf-forms"})
        assert got["isError"] is True
        text = got["content"][0]["text"]
        assert text.startswith("the clone of tap 'ex' is missing — ask the user to run ")
        assert "'boost untap ex', then 'boost tap " in text and text.endswith("in a terminal")
        taps = proc.call_result("boost_list_taps", {})
        lines = taps["content"][0]["text"].split("\n")
        ex = next(ln for ln in lines if ln.startswith("ex @"))
        assert "the clone of tap 'ex' is missing: ask the user to run 'boost untap ex'" in ex
        other = next(ln for ln in lines if ln.startswith("other @"))
        assert "missing" not in other
        rows = {r["name"]: r for r in taps["structuredContent"]["taps"]}
        assert rows["ex"]["clone"] is False and rows["other"]["clone"] is True
    finally:
        proc.kill()
