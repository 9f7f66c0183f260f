"""The pieces behind issue 10's crash and race guarantees, in process: locks, tidying what
interrupted runs left, repairing an interrupted update, when a scan may be cached."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import pytest

from boost_cli.core import catalog, config, gitutil, indexing, lock, paths, registry
from boost_cli.core.errors import BusyError, GitError, NotFoundError, UsageError
from tests.helpers import commit_all, git, make_repo, skill


@pytest.fixture
def tapped(repo_factory: object, tmp_path: Path) -> Path:
    src = make_repo(
        tmp_path / "src",
        {"skills/a/SKILL.md": skill("a", "first"), "rules/r.md": "---\ndescription: r\n---\nx\n"},
    )
    registry.add(str(src), name="reg")
    return src


# --------------------------------------------------------------------------- lock


def test_a_held_lock_makes_others_wait_then_say_busy(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "x.lock"
    with lock.hold(path, "the thing"):
        with lock.attempt(path) as held:
            assert held is False
        assert lock.is_free(path) is False
        start = time.monotonic()
        with pytest.raises(BusyError) as err, lock.hold(path, "the thing", timeout=0.2):
            pass  # pragma: no cover - never reached
        assert time.monotonic() - start < 2
        assert str(err.value) == (
            "the thing is busy: another boost process is changing it — "
            "wait for it to finish and retry"
        )
        with lock.attempt(path, shared=True) as shared:
            assert shared is False
    assert lock.is_free(path) and lock.is_free(tmp_path / "missing.lock")
    with lock.hold(path, "x", shared=True), lock.hold(path, "x", shared=True, timeout=0.2):
        pass  # shared locks share


def test_a_lock_that_cannot_be_made_is_not_held(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with lock.attempt(tmp_path / "file" / "x.lock") as held:
        assert held is False
    with pytest.raises(OSError), lock.hold(tmp_path / "file" / "x.lock", "x"):
        pass  # pragma: no cover - never reached


def test_tap_names(boost_home: Path) -> None:
    assert paths.is_tap_name("owner__repo-1.x") and paths.is_tap_name("_x")
    for bad in ("", ".", "..", ".hidden", "-rf", "a/b", "a\\b", "a b", "x" * 101, None):
        assert not paths.is_tap_name(bad)
    with pytest.raises(UsageError):
        paths.tap_dir("..")
    assert paths.tap_lock_path("reg") == boost_home / "locks" / "tap-reg.lock"


# --------------------------------------------------------------------------- tidy, leftovers


def test_tidy_removes_only_what_no_live_process_owns(tapped: Path, boost_home: Path) -> None:
    repos = boost_home / "repos"
    dead = repos / ".clone-x-dead"
    dead.mkdir()
    (repos / ".clone-x-dead.lock").write_text("")
    alive = repos / ".clone-y-alive"
    alive.mkdir()
    young_legacy = repos / ".clone-z-legacy"
    young_legacy.mkdir()
    old_legacy = repos / ".clone-w-legacy"
    old_legacy.mkdir()
    old = time.time() - 2 * registry.STALE_STAGING_SECONDS
    os.utime(old_legacy, (old, old))
    orphan = repos / "orphan"
    orphan.mkdir()
    busy_orphan = repos / "busy"
    busy_orphan.mkdir()
    held = contextlib.ExitStack()
    with held:
        held.enter_context(lock.hold(repos / ".clone-y-alive.lock", "y"))
        held.enter_context(lock.hold(paths.tap_lock_path("busy"), "busy"))
        assert sorted(registry.leftovers()) == [
            "repos/.clone-w-legacy is left from an interrupted 'boost tap'" + registry._TIDY,
            "repos/.clone-x-dead is left from an interrupted 'boost tap'" + registry._TIDY,
            "repos/busy is a clone no tap record claims" + registry._TIDY,
            "repos/orphan is a clone no tap record claims" + registry._TIDY,
        ]
        removed = registry.tidy()
    assert sorted(removed) == [".clone-w-legacy", ".clone-x-dead", "orphan"]
    assert alive.is_dir() and young_legacy.is_dir() and busy_orphan.is_dir()
    assert not (repos / ".clone-x-dead.lock").exists()
    assert (repos / "reg" / ".git").is_dir()


def test_invalid_names_are_listed_and_removable(tapped: Path) -> None:
    with config.edit() as cfg:
        cfg["taps"][".."] = dict(cfg["taps"]["reg"])
    assert [t.name for t in registry.list_taps()] == ["reg"]
    assert registry.invalid_names() == [".."]
    with pytest.raises(NotFoundError):
        registry.get_tap("..")
    assert registry.remove("..").name == ".."
    assert registry.invalid_names() == []
    with pytest.raises(NotFoundError):
        registry.remove("..")


# --------------------------------------------------------------------------- update, repair


def _interrupt(src: Path, boost_home: Path) -> str:
    """The state a kill -9 between checkout and record leaves: files at a new commit,
    the record at the old one, the marker and a stale git lock in place."""
    (src / "skills" / "b").mkdir()
    (src / "skills" / "b" / "SKILL.md").write_text(skill("b", "second"))
    new = commit_all(src)
    clone = boost_home / "repos" / "reg"
    assert gitutil.fetch(clone) == new
    (clone / ".git" / registry.MARKER).write_text(new + "\n")
    gitutil.checkout(clone, new)
    (clone / ".git" / "index.lock").write_text("")
    return new


def test_an_interrupted_update_is_repaired_before_an_index_build(
    tapped: Path, boost_home: Path
) -> None:
    old = registry.get_tap("reg").commit
    _interrupt(tapped, boost_home)
    tap = registry.get_tap("reg")
    assert registry.interrupted(tap)
    assert any("an update of tap 'reg' was interrupted" in x for x in registry.leftovers())
    with indexing.steady_snapshots() as snaps:
        assert [s.commit for s in snaps] == [old]
        assert {e.path for e in snaps[0].entries} == {"skills/a/SKILL.md", "rules/r.md"}
        report = indexing.reindex(snaps)
    clone = boost_home / "repos" / "reg"
    assert gitutil.checkout_problem(clone, old) is None
    assert not (clone / ".git" / "index.lock").exists()
    assert report.built == ("reg",)
    assert registry.get_tap("reg").repaired is False  # the build redid it and cleared the flag


def test_the_rebuild_of_a_repaired_tap_marks_it_stale_in_the_vector_store(
    tapped: Path, boost_home: Path
) -> None:
    from boost_cli.core import dense, embed

    hashed = embed.resolve_config({}, {"BOOST_EMBED_PROVIDER": "hash"})
    assert hashed is not None
    with indexing.steady_snapshots() as snaps:
        indexing.reindex(snaps)
        dense.build_dense(snaps, config=hashed)
    old = registry.get_tap("reg").commit
    _interrupt(tapped, boost_home)
    with indexing.steady_snapshots() as snaps:  # puts the clone back at `old`, flags it
        assert registry.get_tap("reg").repaired
        indexing.reindex(snaps)
    assert dense.DenseIndex(hashed).status().info["taps"] == {"reg": ""}
    with indexing.steady_snapshots() as snaps:
        report = dense.build_dense(snaps, config=hashed)
    assert report.taps_embedded == ("reg",) and report.texts_sent == 0  # all from the cache
    assert dense.DenseIndex(hashed).status().info["taps"] == {"reg": old}


def test_update_after_an_interruption_says_so_and_moves_on(tapped: Path, boost_home: Path) -> None:
    new = _interrupt(tapped, boost_home)
    (result,) = registry.update()
    assert result.error is None and result.repaired and result.new_commit == new
    assert registry.get_tap("reg").repaired is True  # until an index build redoes it
    assert registry.leftovers() == []


def test_a_failed_update_rolls_the_clone_back(
    tapped: Path, boost_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = registry.get_tap("reg").commit
    (tapped / "skills" / "a" / "SKILL.md").write_text(skill("a", "changed"))
    commit_all(tapped)

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device", "/h/cache/catalog/reg.json")

    monkeypatch.setattr(catalog, "store", full)
    (result,) = registry.update(["reg"])
    assert result.error == (
        "cannot use /h/cache/catalog/reg.json: No space left on device — free some disk "
        "space and retry"
    )
    clone = boost_home / "repos" / "reg"
    assert registry.get_tap("reg").commit == old
    assert gitutil.checkout_problem(clone, old) is None
    assert not (clone / ".git" / registry.MARKER).exists()


def test_a_missing_clone_is_a_one_line_error(tapped: Path, boost_home: Path) -> None:
    import shutil

    shutil.rmtree(boost_home / "repos" / "reg")
    (result,) = registry.update()
    assert result.error is not None and result.error.startswith(
        "the clone of tap 'reg' is missing — run 'boost untap reg', then 'boost tap "
    )


def test_untap_of_an_unknown_tap(tapped: Path) -> None:
    with pytest.raises(NotFoundError):
        registry.remove("nope")


# --------------------------------------------------------------------------- scans and the cache


def test_a_scan_is_cached_only_for_a_clone_at_its_commit(tapped: Path, boost_home: Path) -> None:
    cache = boost_home / "cache" / "catalog" / "reg.json"
    tap = registry.get_tap("reg")
    cache.unlink()
    (tap.root / "skills" / "a" / "SKILL.md").write_text(skill("a", "edited by hand"))
    assert len(registry.scan(tap).entries) == 2
    assert not cache.exists()  # a dirty clone: scanned, not cached
    git(["checkout", "--", "."], tap.root)
    with lock.hold(paths.tap_lock_path("reg"), "reg"):
        registry.scan(tap)
    assert not cache.exists()  # an update holds the clone: scanned, not cached
    registry.scan(tap)
    assert json.loads(cache.read_text())["commit"] == tap.commit


def test_a_scan_without_git_is_not_cached(
    tapped: Path, boost_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = boost_home / "cache" / "catalog" / "reg.json"
    cache.unlink()

    def no_git(*args: object, **kwargs: object) -> str:
        raise GitError("git is not installed", "install git and try again")

    monkeypatch.setattr(gitutil, "run_git", no_git)
    assert len(registry.scan(registry.get_tap("reg")).entries) == 2
    assert not cache.exists()


@pytest.mark.parametrize(
    "rel, ok",
    [
        ("skills/a/SKILL.md", True),
        ("rules/r.md", True),
        ("", False),
        ("/etc/passwd", False),
        ("skills/../rules/r.md", False),
        ("./rules/r.md", False),
        ("skills//a/SKILL.md", False),
        (".git/config", False),
        (".GIT/config", False),
        ("rules/missing.md", False),
        ("skills/a", False),  # a folder
        ("link/r.md", False),  # under a symlinked folder
        ("skills/out.md", False),  # a symlink leaving the tap
        ("skills/in.md", True),  # a symlink to a file in the tap
        ("skills/git.md", False),  # a symlink into .git
        ("skills/\udcff.md", False),  # not UTF-8
        (None, False),
    ],
)
def test_safe_path(tmp_path: Path, rel: object, ok: bool) -> None:
    root = make_repo(
        tmp_path / "t",
        {"skills/a/SKILL.md": skill("a", "x"), "rules/r.md": "x\n"},
    )
    os.symlink(root / "rules", root / "link")
    os.symlink("/etc/hostname", root / "skills" / "out.md")
    os.symlink("../rules/r.md", root / "skills" / "in.md")
    os.symlink("../.git/HEAD", root / "skills" / "git.md")
    assert catalog.safe_path(root, rel) is ok


def test_clear_stale_locks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.md": "x\n"})
    for rel in (".git/index.lock", ".git/shallow.lock", ".git/refs/heads/main.lock"):
        (repo / rel).write_text("")
    assert sorted(gitutil.clear_stale_locks(repo)) == [
        ".git/index.lock",
        ".git/refs/heads/main.lock",
        ".git/shallow.lock",
    ]
    assert gitutil.clear_stale_locks(repo) == []
