"""Issue 10 item 11: OS errors are one line with the fix, and the data stays intact.

A home of an unknown user, a home under a file, a read-only home (``chattr +i``, which
binds root too) and a full disk (a file-size limit: writes fail as they do on a full
disk) through the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest

from tests.helpers import ROOT, run_boost

ONE_LINE = "boost: error: "


def _one_line(stderr: str) -> str:
    assert stderr.startswith(ONE_LINE) and stderr.count("\n") == 1, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    return stderr[len(ONE_LINE) : -1]


@pytest.mark.parametrize("args", [["taps"], ["search", "x"], ["tap", "a/b"], ["doctor"]])
def test_a_home_of_an_unknown_user(args: List[str], tmp_path: Path) -> None:
    r = run_boost(args, tmp_path, env={"BOOST_HOME": "~nosuchuser-boost/x"})
    assert r.returncode == 7
    assert _one_line(r.stderr) == (
        "cannot find the home folder in BOOST_HOME='~nosuchuser-boost/x' — set BOOST_HOME "
        "to an absolute path, e.g. BOOST_HOME=/path/to/boost-home"
    )


def test_a_home_under_a_file(example_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder\n")
    home = tmp_path / "file" / "home"
    for args in (["tap", str(example_repo), "--name", "ex"], ["taps"], ["search", "x"]):
        r = run_boost(args, home)
        assert r.returncode == 7
        assert _one_line(r.stderr) == (
            f"cannot read {home}/config.json: Not a directory — point BOOST_HOME at a folder "
            "(a part of the path is a file)"
        )


def _snapshot(home: Path) -> dict:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.is_symlink() and "locks" not in p.parts
    }


@pytest.fixture
def indexed_home(example_repo: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert run_boost(["tap", str(example_repo), "--name", "ex"], home).returncode == 0
    assert run_boost(["reindex"], home).returncode == 0
    return home


@pytest.fixture
def read_only(indexed_home: Path) -> Iterator[Path]:
    """The home made immutable (``chattr -R +i``), which even root cannot write."""
    if not shutil.which("chattr"):
        pytest.skip("needs chattr")
    made = subprocess.run(["chattr", "-R", "+i", str(indexed_home)], capture_output=True)
    try:
        probe = indexed_home / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip("this file system ignores chattr +i")
        if made.returncode:
            pytest.skip(f"chattr failed: {made.stderr!r}")
        yield indexed_home
    finally:
        subprocess.run(["chattr", "-R", "-i", str(indexed_home)], capture_output=True)


def test_a_read_only_home(read_only: Path, example_repo: Path) -> None:
    home = read_only
    before = _snapshot(home)
    found = run_boost(["search", "jest", "--json", "--no-rerank"], home)
    assert found.returncode == 0 and json.loads(found.stdout)  # reading still works
    assert run_boost(["show", "ex:jest-runner"], home).returncode == 0
    for args in (
        ["tap", str(example_repo), "--name", "other"],
        ["untap", "ex"],
        ["reindex", "--force"],
    ):
        r = run_boost(args, home)
        assert r.returncode == 1, (args, r.stderr)
        line = _one_line(r.stderr)
        assert line.startswith(f"cannot use {home}"), line
        assert line.endswith(
            ": Operation not permitted — make it writable for you, or point BOOST_HOME at a "
            "folder you own"
        ), line
    up = run_boost(["update"], home)
    assert up.returncode == 1 and up.stderr.startswith("fail  ex: cannot use "), up.stderr
    assert _snapshot(home) == before


def _limited(args: List[str], home: Path, limit: int) -> subprocess.CompletedProcess:
    """The real CLI with every file it writes limited to ``limit`` bytes."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env={**os.environ, "BOOST_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
        preexec_fn=cap,
    )


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")
def test_a_full_disk(indexed_home: Path) -> None:
    home = indexed_home
    before = _snapshot(home)
    expected = hits = run_boost(["search", "jest", "--json", "--no-rerank"], home).stdout
    r = _limited(["reindex", "--force"], home, 4096)
    assert r.returncode == 1
    line = _one_line(r.stderr)
    assert line.startswith(f"cannot use {home}") and line.endswith(
        ": File too large — free some disk space (or raise the file-size limit) and retry"
    ), line
    hits = run_boost(["search", "jest", "--json", "--no-rerank"], home).stdout
    assert hits == expected
    after = _snapshot(home)
    assert {k: v for k, v in after.items() if not k.endswith(".tmp")} == before


def test_the_mapping_names_the_path_and_the_fix() -> None:
    import errno

    from boost_cli.core.errors import from_os_error

    err = from_os_error(OSError(errno.ENOSPC, "No space left on device", "/h/config.json"))
    assert (
        str(err)
        == "cannot use /h/config.json: No space left on device — free some disk space and retry"
    )
    odd = from_os_error(OSError(errno.ELOOP, "Too many levels of symbolic links"))
    assert str(odd) == (
        "Too many levels of symbolic links — check the path and its permissions, then retry"
    )
    io = from_os_error(OSError(errno.EIO, "Input/output error"))
    assert str(io) == (
        "Input/output error — check the disk (free space, the file-size limit: ulimit -f, "
        "its health) and retry"
    )


def test_an_os_error_in_an_mcp_tool_is_one_line_with_its_fix() -> None:
    import errno

    from boost_cli.core.mcp import Registry, Server

    reg = Registry()

    @reg.tool("full", "fails like a full disk", {"type": "object", "properties": {}})
    def full(args: dict) -> str:
        raise OSError(errno.ENOSPC, "No space left on device", "/h/cache/x")

    reply = Server(reg).handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "full"}}
    )
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [
                {
                    "type": "text",
                    "text": "cannot use /h/cache/x: No space left on device — free some disk "
                    "space and retry",
                }
            ],
            "isError": True,
        },
    }
