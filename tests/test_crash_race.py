"""Issue 10: crashes and races — real `kill -9`s and real concurrent `boost` processes.

Items: 1 (update is per-tap transactional), 3 (parallel taps keep every record),
4 (kill -9 during update: no git left running, no stale git lock, the clone matches its
record, the index matches a fresh build), 6 (kill -9 during tap leaves nothing stuck),
12 (untap during update). Precise crash points come from tests/fakebin_git/git, which
stops at a chosen git step; a few loops also kill at random moments.

Each test is bounded: a handful of boost processes, every wait with a timeout.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from tests.helpers import ROOT, commit_all, git, make_repo, run_boost, skill

FAKE_GIT = ROOT / "tests" / "fakebin_git"
REAL_GIT = shutil.which("git") or "git"
QUERIES = ("alpha skill", "omega steps", "gamma testing", "delta review")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="kill -9 and fork are POSIX")


def fake_git(flags: Path, stop: str, mode: str, **extra: str) -> Dict[str, str]:
    flags.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": f"{FAKE_GIT}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": REAL_GIT,
        "FAKE_GIT_STOP": stop,
        "FAKE_GIT_MODE": mode,
        "FAKE_GIT_FLAGS": str(flags),
        **extra,
    }


def start_boost(
    args: List[str], home: Path, env: Optional[Dict[str, str]] = None
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "boost_cli", *args],
        env={**os.environ, "BOOST_HOME": str(home), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )


def wait_flag(flags: Path, verb: str, proc: subprocess.Popen, timeout: float = 30) -> int:
    """The pid fakebin_git wrote on reaching ``verb``; fails if boost exits first."""
    flag = flags / f"{verb}.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if flag.exists():
            return int(flag.read_text().strip())
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"boost exited ({proc.returncode}) before git reached {verb}: {err}")
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"git never reached {verb}")


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for init to reap it counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_dead(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def assert_consistent(home: Path) -> None:
    """Every folder under repos/ is a recorded tap and every record has its clone, exactly
    at the recorded commit, clean, with no git lock and no interrupted-update marker."""
    cfg_file = home / "config.json"
    taps = json.loads(cfg_file.read_text())["taps"] if cfg_file.exists() else {}
    repos = home / "repos"
    names = sorted(p.name for p in repos.iterdir()) if repos.is_dir() else []
    assert names == sorted(taps), f"repos/ holds {names}, config.json records {sorted(taps)}"
    for name, rec in taps.items():
        clone = repos / name
        assert git(["rev-parse", "HEAD"], clone).strip() == rec["commit"], name
        status = git(["status", "--porcelain", "--untracked-files=all", "--ignored"], clone)
        assert status == "", f"{name} is not clean: {status}"
        assert not (clone / ".git" / "index.lock").exists()
        assert not (clone / ".git" / "boost-update").exists()


def hits(home: Path, query: str) -> List[Tuple[str, float, str]]:
    r = run_boost(["search", query, "--json", "--no-rerank", "-n", "20"], home)
    assert r.returncode == 0, r.stderr
    return [(h["id"], round(h["score"], 5), h["snippet"]) for h in json.loads(r.stdout)]


def assert_matches_fresh_build(home: Path, tmp_path: Path, sources: Dict[str, Path]) -> None:
    """Search in ``home`` gives exactly what a fresh home tapping the same sources gives."""
    fresh = tmp_path / f"fresh-{random.getrandbits(32):08x}"
    for name, src in sources.items():
        assert run_boost(["tap", str(src), "--name", name], fresh).returncode == 0
    assert run_boost(["reindex"], fresh).returncode == 0
    for q in QUERIES:
        assert hits(home, q) == hits(fresh, q), q


def registry_v1(path: Path) -> Path:
    return make_repo(
        path,
        {
            "skills/alpha/SKILL.md": skill("alpha", "alpha skill", "Alpha steps, gamma testing."),
            "skills/beta/SKILL.md": skill("beta", "beta skill", "Beta steps for delta review."),
            "skills/gamma/SKILL.md": skill("gamma", "gamma testing", "Gamma gamma testing."),
            "rules/delta.md": "---\ndescription: delta review rule\n---\nReview every delta.\n",
            "commands/epsilon.md": "---\ndescription: epsilon command\n---\nRun alpha.\n",
        },
    )


def to_v2(src: Path) -> str:
    """A second commit that changes, removes and adds files in every folder."""
    (src / "skills" / "alpha" / "SKILL.md").write_text(
        skill("alpha", "alpha skill", "Omega steps now, no more testing.")
    )
    (src / "skills" / "beta" / "SKILL.md").unlink()
    (src / "skills" / "omega").mkdir()
    (src / "skills" / "omega" / "SKILL.md").write_text(skill("omega", "omega steps", "Omega."))
    (src / "rules" / "delta.md").write_text("---\ndescription: delta rule v2\n---\nOmega delta.\n")
    return commit_all(src, "v2")


# --------------------------------------------------------------------------- item 4


def test_kill_during_update_mid_checkout_is_repaired(tmp_path: Path) -> None:
    """Item 4: killed while git moves the files — half the tree new, git's index.lock
    left behind. No git keeps running; the next update works; search matches a fresh
    build (also after a reindex run on the broken clone)."""
    src = registry_v1(tmp_path / "src")
    home = tmp_path / "home"
    assert run_boost(["tap", str(src), "--name", "reg"], home).returncode == 0
    assert run_boost(["reindex"], home).returncode == 0
    to_v2(src)
    flags = tmp_path / "flags"
    env = fake_git(flags, "reset", "half", FAKE_GIT_HALF="skills")
    proc = start_boost(["update"], home, env)
    git_pid = wait_flag(flags, "reset", proc)
    kill9(proc)
    assert (home / "repos" / "reg" / ".git" / "index.lock").exists()
    assert wait_dead(git_pid), "the git boost started outlived it"

    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr
    r = run_boost(["update"], home)
    assert r.returncode == 0, r.stderr
    assert_consistent(home)
    assert run_boost(["reindex"], home).returncode == 0
    assert_matches_fresh_build(home, tmp_path, {"reg": src})


def test_kill_between_checkout_and_record_rolls_back(tmp_path: Path) -> None:
    """Item 4: killed after the files moved but before the new commit was recorded."""
    src = registry_v1(tmp_path / "src")
    home = tmp_path / "home"
    assert run_boost(["tap", str(src), "--name", "reg"], home).returncode == 0
    assert run_boost(["reindex"], home).returncode == 0
    v1 = json.loads((home / "config.json").read_text())["taps"]["reg"]["commit"]
    to_v2(src)
    flags = tmp_path / "flags"
    proc = start_boost(["update"], home, fake_git(flags, "clean", "after"))
    wait_flag(flags, "clean", proc)
    kill9(proc)
    doctor = run_boost(["doctor"], home)
    assert "fix: an update of tap 'reg' was interrupted: run 'boost update reg'" in doctor.stdout
    # An index build puts the clone back at its recorded commit before reading it.
    assert run_boost(["reindex"], home).returncode == 0
    assert_consistent(home)
    assert json.loads((home / "config.json").read_text())["taps"]["reg"]["commit"] == v1
    r = run_boost(["update"], home)
    assert r.returncode == 0, r.stderr
    assert_consistent(home)
    assert_matches_fresh_build(home, tmp_path, {"reg": src})


def test_reindex_after_update_repaired_a_clone_matches_a_fresh_build(tmp_path: Path) -> None:
    """Item 4, the worst case: the index was built from a clone whose files were not its
    recorded commit (an older boost killed mid-update); `update` finds the remote
    unchanged ("up to date") and repairs the files; a plain `reindex` must then redo the
    tap rather than keep the segment keyed by the same commit."""
    src = registry_v1(tmp_path / "src")
    home = tmp_path / "home"
    assert run_boost(["tap", str(src), "--name", "reg"], home).returncode == 0
    clone = home / "repos" / "reg"
    (clone / "skills" / "alpha" / "SKILL.md").write_text(skill("alpha", "alpha", "Zeta zeta."))
    (clone / "skills" / "beta" / "SKILL.md").unlink()
    assert run_boost(["reindex"], home).returncode == 0
    assert hits(home, "zeta")  # the damage the index now holds
    r = run_boost(["update"], home)
    assert r.returncode == 0, r.stderr
    assert "reg: up to date at" in r.stdout
    assert_consistent(home)
    assert run_boost(["reindex"], home).returncode == 0
    assert hits(home, "zeta") == []
    assert_matches_fresh_build(home, tmp_path, {"reg": src})


@pytest.mark.slow
def test_kill_update_at_random_moments(tmp_path: Path) -> None:
    """Item 4: real kills at random points of real updates, each followed by recovery."""
    rng = random.Random(10)
    src = registry_v1(tmp_path / "src")
    home = tmp_path / "home"
    assert run_boost(["tap", str(src), "--name", "reg"], home).returncode == 0
    assert run_boost(["reindex"], home).returncode == 0
    for i in range(6):
        (src / "skills" / "alpha" / "SKILL.md").write_text(
            skill("alpha", "alpha skill", f"Alpha steps, round {i}, gamma testing.")
        )
        (src / "commands" / f"c{i}.md").write_text(f"---\ndescription: delta {i}\n---\nx\n")
        commit_all(src, f"round {i}")
        proc = start_boost(["update"], home)
        time.sleep(rng.uniform(0.05, 0.8))
        kill9(proc)
        r = run_boost(["update"], home)
        assert r.returncode == 0, (i, r.stderr)
        assert_consistent(home)
    assert run_boost(["reindex"], home).returncode == 0
    assert_matches_fresh_build(home, tmp_path, {"reg": src})


# --------------------------------------------------------------------------- item 1


def test_a_failing_tap_does_not_stop_update_and_stays_consistent(tmp_path: Path) -> None:
    """Item 1: one tap failing after its files moved is rolled back; the rest update."""
    home = tmp_path / "home"
    first = registry_v1(tmp_path / "first")
    second = registry_v1(tmp_path / "second")
    assert run_boost(["tap", str(first), "--name", "a-first"], home).returncode == 0
    assert run_boost(["tap", str(second), "--name", "b-second"], home).returncode == 0
    old_first = json.loads((home / "config.json").read_text())["taps"]["a-first"]["commit"]
    to_v2(first)
    new_second = to_v2(second)
    cache = home / "cache" / "catalog" / "a-first.json"
    cache.unlink()
    cache.mkdir()  # the scan of the new commit cannot be cached: an OSError mid-update
    r = run_boost(["update"], home)
    assert r.returncode == 1
    assert r.stderr.startswith("fail  a-first: cannot use "), r.stderr
    assert "internal error" not in r.stderr
    taps = json.loads((home / "config.json").read_text())["taps"]
    assert taps["a-first"]["commit"] == old_first
    assert taps["b-second"]["commit"] == new_second
    cache.rmdir()
    assert_consistent(home)


# --------------------------------------------------------------------------- item 3


def test_parallel_taps_keep_every_record(example_repo: Path, tmp_path: Path) -> None:
    """Item 3: six taps at once under six names: six records, six clones."""
    home = tmp_path / "home"
    procs = [start_boost(["tap", str(example_repo), "--name", f"t{i}"], home) for i in range(6)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), results
    assert sorted(json.loads((home / "config.json").read_text())["taps"]) == [
        f"t{i}" for i in range(6)
    ]
    assert_consistent(home)


def test_parallel_taps_of_one_name_let_exactly_one_win(example_repo: Path, tmp_path: Path) -> None:
    """Item 3: the same --name four times at once: one tap, three one-line refusals."""
    home = tmp_path / "home"
    procs = [start_boost(["tap", str(example_repo), "--name", "dup"], home) for _ in range(4)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2, 2, 2], results
    for code, _, err in results:
        if code:
            assert err == (
                "boost: error: a tap named 'dup' already exists — run 'boost update dup', "
                "or pass --name to tap it under another name\n"
            )
    assert_consistent(home)


# --------------------------------------------------------------------------- item 6


def test_kill_during_clone_leaves_nothing_stuck(example_repo: Path, tmp_path: Path) -> None:
    """Item 6: a staging folder left by a killed `tap` is reported, then removed."""
    home = tmp_path / "home"
    flags = tmp_path / "flags"
    proc = start_boost(
        ["tap", str(example_repo), "--name", "ex"], home, fake_git(flags, "clone", "after")
    )
    git_pid = wait_flag(flags, "clone", proc)
    kill9(proc)
    assert wait_dead(git_pid), "the git boost started outlived it"
    staging = [p.name for p in (home / "repos").iterdir() if p.name.startswith(".clone-ex-")]
    assert staging, "expected the killed tap's staging folder"
    doctor = run_boost(["doctor"], home)
    assert "is left from an interrupted 'boost tap'" in doctor.stdout
    r = run_boost(["tap", str(example_repo), "--name", "ex"], home)
    assert r.returncode == 0, r.stderr
    assert_consistent(home)


def test_a_clone_without_its_record_does_not_block_the_name(
    example_repo: Path, tmp_path: Path
) -> None:
    """Item 6: killed after the clone moved into repos/ but before its record was written."""
    home = tmp_path / "home"
    assert run_boost(["tap", str(example_repo), "--name", "ex"], home).returncode == 0
    shutil.copytree(home / "repos" / "ex", home / "repos" / "orphan", symlinks=True)
    doctor = run_boost(["doctor"], home)
    assert "repos/orphan is a clone no tap record claims" in doctor.stdout
    r = run_boost(["tap", str(example_repo), "--name", "orphan"], home)
    assert r.returncode == 0, r.stderr
    assert_consistent(home)


@pytest.mark.slow
def test_kill_tap_at_random_moments(example_repo: Path, tmp_path: Path) -> None:
    """Item 6: real kills at random points of real taps; the next tap always works."""
    rng = random.Random(6)
    home = tmp_path / "home"
    for i in range(6):
        proc = start_boost(["tap", str(example_repo), "--name", f"k{i}"], home)
        time.sleep(rng.uniform(0.05, 0.7))
        kill9(proc)
        r = run_boost(["tap", str(example_repo), "--name", f"k{i}"], home)
        assert r.returncode in (0, 2), r.stderr
        if r.returncode == 2:
            assert "already exists" in r.stderr  # the killed run had finished
        assert_consistent(home)


# --------------------------------------------------------------------------- item 12


def test_untap_during_update_leaves_no_orphan(tmp_path: Path) -> None:
    """Item 12: `untap` while `update` is moving the files. Git keeps writing files of the
    new tree after the untap started (modelled by fakebin_git's late-write); in the end
    the tap is gone entirely and its name can be tapped again."""
    src = registry_v1(tmp_path / "src")
    home = tmp_path / "home"
    assert run_boost(["tap", str(src), "--name", "reg"], home).returncode == 0
    to_v2(src)
    flags = tmp_path / "flags"
    env = fake_git(flags, "reset", "late-write", FAKE_GIT_DELAY="1.5")
    proc = start_boost(["update"], home, env)
    wait_flag(flags, "reset", proc)
    untap = run_boost(["untap", "reg"], home)
    assert untap.returncode == 0, untap.stderr
    proc.communicate(timeout=60)
    assert_consistent(home)
    assert not (home / "repos" / "reg").exists()
    assert not (home / "cache" / "catalog" / "reg.json").exists()
    r = run_boost(["tap", str(src), "--name", "reg"], home)
    assert r.returncode == 0, r.stderr
    assert_consistent(home)
