"""`core/install/nofollow.py` in process: every operation refuses a symlink past the trusted
parts, on the way or at the file, and never touches what the link points to."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from boost_cli.core.errors import UsageError
from boost_cli.core.install import nofollow


@pytest.fixture
def world(tmp_path: Path):
    base = tmp_path / "base"
    outside = tmp_path / "outside"
    base.mkdir()
    outside.mkdir()
    return base, outside


def test_write_read_digest_remove_without_links(world) -> None:
    base, _ = world
    nofollow.write(base, "a/b/c.md", b"hello")
    assert (base / "a/b/c.md").read_bytes() == b"hello"
    assert nofollow.read(base, "a/b/c.md") == b"hello"
    assert nofollow.digest(base, "a/b/c.md") == hashlib.sha256(b"hello").hexdigest()
    assert nofollow.digest(base, "a/b/none.md") is None
    assert nofollow.digest(base, "a/b") == nofollow.NOT_PLAIN  # a folder
    assert nofollow.read(base, "a/b/c.md/x") is None  # a file on the way: nothing there
    nofollow.write(base, "a/b/c.md", b"again")  # replaced atomically, no temp file left
    assert sorted(os.listdir(base / "a/b")) == ["c.md"]
    nofollow.remove(base, "a/b/c.md")
    assert list(base.iterdir()) == []  # the emptied folders went too
    nofollow.remove(base, "a/b/c.md")  # nothing there: nothing to do
    with pytest.raises(UsageError):
        nofollow.write(base, "a/../x", b"")


def test_a_symlinked_folder_or_file_is_refused(world) -> None:
    base, outside = world
    os.symlink(outside, base / "link")
    (outside / "f.md").write_bytes(b"theirs")
    with pytest.raises(UsageError, match="symlink"):
        nofollow.write(base, "link/new.md", b"x")
    with pytest.raises(UsageError, match="symlink"):
        nofollow.check(base, "link/new.md")
    assert nofollow.digest(base, "link/f.md") == nofollow.NOT_PLAIN
    with pytest.raises(UsageError, match="symlink"):
        nofollow.remove(base, "link/f.md")
    os.symlink(outside / "f.md", base / "file.md")
    assert nofollow.digest(base, "file.md") == nofollow.NOT_PLAIN
    with pytest.raises(UsageError, match="symlink"):
        nofollow.write(base, "file.md", b"x")
    assert sorted(os.listdir(outside)) == ["f.md"] and (outside / "f.md").read_bytes() == b"theirs"
    # The first `trusted` parts may be the user's links (dotfiles), the rest may not.
    nofollow.write(base, "link/skill/SKILL.md", b"ok", trusted=1)
    assert (outside / "skill/SKILL.md").read_bytes() == b"ok"
    nofollow.remove(base, "link/skill/SKILL.md", trusted=1)
    assert not (outside / "skill").exists() and (base / "link").is_symlink()


def test_a_symlinked_lock_is_refused_and_creates_nothing(world) -> None:
    base, outside = world
    (base / ".boost").mkdir()
    os.symlink(outside / "made", base / ".boost/installed.json.lock")
    held = nofollow.locked(base, ".boost/installed.json.lock", "the manifest", 1.0)
    with pytest.raises(UsageError, match="symlink"), held:
        pass
    assert not (outside / "made").exists()
    with nofollow.locked(base, ".boost/other.lock", "the manifest", 1.0):
        assert (base / ".boost/other.lock").is_file()
