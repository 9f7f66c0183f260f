"""Build worker processes: how many, the pool's results and errors, and their lifecycle with
real processes: Ctrl-C during `boost reindex --force`, and the parent killed with SIGKILL.

The lifecycle tests make a build that cannot finish by itself: after the taps are indexed,
one entry file of each tap is replaced by a named pipe nobody writes to, so the worker that
reads it blocks until it is killed. Whenever the signal comes, the build is under way.
"""

from __future__ import annotations

import json
import operator
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

from boost_cli.core.errors import UsageError
from boost_cli.core.index import workers
from boost_cli.core.index.params import check_aggregation
from tests.helpers import ROOT, run_boost, skill

LINUX = sys.platform.startswith("linux") and hasattr(os, "mkfifo")
linux_only = pytest.mark.skipif(not LINUX, reason="reads /proc and uses named pipes")

# --------------------------------------------------------------------------- worker_count


def test_worker_count_follows_cpus_memory_and_jobs() -> None:
    gb = 1024**3
    assert workers.worker_count(10, cpus=2, memory=8 * gb) == 2
    assert workers.worker_count(1, cpus=8, memory=8 * gb) == 1  # one job: no pool
    assert workers.worker_count(10, cpus=8, memory=gb, budget=gb // 2) == 2  # memory-bound
    assert workers.worker_count(10, cpus=8, memory=gb // 10) == 1  # never below one
    assert workers.worker_count(100, cpus=64, memory=None) == workers.MAX_WORKERS
    assert 1 <= workers.worker_count(3) <= 3  # this machine's figures


def test_machine_figures_are_sane() -> None:
    assert workers.usable_cpus() >= 1
    mem = workers.available_memory()
    assert mem is None or mem > 0


# --------------------------------------------------------------------------- the pool


def test_pool_runs_every_job_in_fresh_processes() -> None:
    with workers.Pool(2) as pool:
        pids = {p.pid for p in pool.procs}
        got = sorted(pool.map_unordered(operator.neg, [1, 2, 3, 4, 5]))
    assert got == [-5, -4, -3, -2, -1]
    assert len(pids) == 2 and os.getpid() not in pids
    assert all(p.returncode == 0 for p in pool.procs)  # they exited at end of input


@linux_only
def test_workers_do_not_inherit_the_parents_open_files(tmp_path: Path) -> None:
    with open(tmp_path / "held", "wb") as held, workers.Pool(1) as pool:
        (pid,) = [p.pid for p in pool.procs]
        targets = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert str(tmp_path / "held") not in targets
        assert os.readlink(f"/proc/{os.getpid()}/fd/{held.fileno()}") == str(tmp_path / "held")
        assert list(pool.map_unordered(abs, [-3])) == [3]


def test_a_boost_error_in_a_job_comes_back_as_itself() -> None:
    with pytest.raises(UsageError) as exc, workers.Pool(1) as pool:
        list(pool.map_unordered(check_aggregation, ["median"]))
    assert str(exc.value) == "unknown aggregation 'median' — use one of: max, max2, lse"


def test_another_error_in_a_job_names_itself_and_keeps_the_traceback() -> None:
    with pytest.raises(workers.WorkerFailed) as exc, workers.Pool(1) as pool:
        list(pool.map_unordered(int, ["twelve"]))
    assert exc.value.message.startswith("an index build worker failed: ValueError: invalid")
    assert "Traceback" in exc.value.remote_traceback


def test_a_worker_that_dies_fails_the_build_and_the_pool_kills_the_rest() -> None:
    with pytest.raises(workers.WorkerFailed) as exc, workers.Pool(2) as pool:
        procs = list(pool.procs)
        list(pool.map_unordered(os._exit, [7, 7]))
    assert exc.value.message == "an index build worker exited unexpectedly (exit code 7)"
    assert all(p.poll() is not None for p in procs)


# --------------------------------------------------------------------------- real builds


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> List[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _wait_for(check: Callable[[], bool], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


@pytest.fixture
def stuck_build(
    repo_factory: Callable[..., Path], boost_home: Path
) -> Iterator[Tuple[Path, List[Path], bytes]]:
    """Two indexed taps whose next forced build blocks in both workers: (home, the pipes,
    the manifest's bytes before)."""
    for name in ("alpha", "beta"):
        files = {f"skills/{name}-{i}/SKILL.md": skill(f"{name}-{i}", "kafka") for i in range(3)}
        repo = repo_factory(name, files)
        assert run_boost(["tap", str(repo), "--name", name], boost_home).returncode == 0
    assert run_boost(["reindex"], boost_home).returncode == 0
    manifest = (boost_home / "cache" / "index" / "manifest.json").read_bytes()
    pipes = []
    for name in ("alpha", "beta"):
        pipe = boost_home / "repos" / name / "skills" / f"{name}-1" / "SKILL.md"
        pipe.unlink()
        os.mkfifo(pipe)
        pipes.append(pipe)
    yield boost_home, pipes, manifest
    for pipe in pipes:  # never leave a pipe a later reader could block on
        if pipe.exists():
            pipe.unlink()


def _default_sigint() -> None:
    """SIGINT as a terminal's foreground job has it. A shell starts background jobs with
    SIGINT ignored, the ignore survives exec, and Python then installs no KeyboardInterrupt
    handler: under a backgrounded `make check` the build would never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_forced_build(home: Path) -> Tuple[subprocess.Popen[str], List[int]]:
    """`boost reindex --force --workers 2` in its own process group, once both workers run."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "boost_cli", "reindex", "--force", "--workers", "2"],
        env={**os.environ, "BOOST_HOME": str(home)},
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    if not _wait_for(lambda: len(_children(proc.pid)) == 2, 60):
        proc.kill()
        raise AssertionError(f"no workers started: {proc.communicate()}")
    return proc, _children(proc.pid)


def _restore(pipes: List[Path]) -> None:
    for pipe in pipes:
        pipe.unlink()
        pipe.write_text(skill(pipe.parent.name, "kafka"), encoding="utf-8")


@linux_only
def test_ctrl_c_stops_a_multi_worker_build_at_once_and_keeps_the_old_index(
    stuck_build: Tuple[Path, List[Path], bytes],
) -> None:
    home, pipes, manifest = stuck_build
    proc, pids = _start_forced_build(home)
    time.sleep(0.3)  # well inside the build: both workers are reading their taps
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - t0
    assert proc.returncode == 130 and "boost: interrupted" in stderr, stderr
    assert took <= 2.0, f"Ctrl-C took {took:.2f} s"
    assert not any(_alive(pid) for pid in pids)
    index = home / "cache" / "index"
    assert (index / "manifest.json").read_bytes() == manifest
    _restore(pipes)  # (a search reads snippets from the files)
    hits = run_boost(["search", "kafka", "--engine", "bm25", "--json"], home)
    assert hits.returncode == 0 and len(json.loads(hits.stdout)) == 6
    again = run_boost(["reindex", "--force", "--workers", "2", "--json"], home, timeout=60)
    assert again.returncode == 0 and json.loads(again.stdout)["bm25"]["built"] == ["alpha", "beta"]


@linux_only
def test_workers_die_with_a_killed_parent_and_the_lock_is_free(
    stuck_build: Tuple[Path, List[Path], bytes],
) -> None:
    home, pipes, manifest = stuck_build
    proc, pids = _start_forced_build(home)
    time.sleep(0.3)
    proc.kill()  # SIGKILL: no handler runs, the parent cannot clean up
    proc.wait(timeout=30)
    assert _wait_for(lambda: not any(_alive(pid) for pid in pids), 2.0), "orphaned workers"
    proc.communicate(timeout=30)  # (orphans would hold its stderr open)
    index = home / "cache" / "index"
    assert (index / "manifest.json").read_bytes() == manifest
    _restore(pipes)
    # The dead build held the lock; the next one must not wait for it.
    again = run_boost(["reindex", "--workers", "2", "--json"], home, timeout=60)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)["bm25"]
    assert report["built"] == [] and report["reused"] == ["alpha", "beta"]
    forced = run_boost(["reindex", "--force", "--json"], home, timeout=60)
    assert forced.returncode == 0 and json.loads(forced.stdout)["bm25"]["built"] == [
        "alpha",
        "beta",
    ]
