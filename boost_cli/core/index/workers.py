"""Worker processes for a build: how many the machine affords, and a small pool whose
workers are fresh interpreters that die with their parent.

Why not `concurrent.futures.ProcessPoolExecutor`: on Linux it forks, so each worker starts
with a copy of everything the parent holds (at 10x the corpus, 361 MB of loaded
snapshots per worker) and with the parent's open files, the build lock among them. Its
workers also outlive a parent killed with SIGKILL, still holding that lock. Here:

- a worker is ``python -c`` started with `subprocess` (close_fds): it shares no memory
  and no open file with the parent, so it never holds the build lock;
- jobs and results are pickles framed on the worker's stdin and stdout (fd 1 is pointed
  at stderr inside the worker, so a stray print cannot corrupt the stream);
- a worker exits when its parent does: at once on Linux (``PR_SET_PDEATHSIG``), within
  ``_WATCH_SECONDS`` elsewhere on POSIX (it watches ``os.getppid()``), and at the next
  job everywhere (end of file on stdin);
- workers ignore SIGINT: Ctrl-C reaches the whole process group, and the parent, which
  gets a KeyboardInterrupt, kills them and waits for them before it re-raises.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from boost_cli.core.errors import BoostError

_FRAME = struct.Struct("<Q")
_WATCH_SECONDS = 0.25
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# Peak RSS a worker may reach: the largest tap of the shared corpus (1,733 entries, a
# 5.9 MB segment) peaks at ~110 MB in a worker; the budget leaves room for larger taps.
WORKER_BUDGET = 200 * 1024 * 1024
MAX_WORKERS = 8


class WorkerFailed(BoostError):
    """A worker process died, or a job raised an error that is not a `BoostError`
    (``remote_traceback`` holds the worker's traceback then)."""

    remote_traceback = ""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_memory() -> Optional[int]:
    """Bytes of memory available without swapping (Linux ``MemAvailable``), else None."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass  # not Linux, or an odd /proc: fall back to sysconf below
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def worker_count(
    jobs: int,
    cpus: Optional[int] = None,
    memory: Optional[int] = None,
    budget: int = WORKER_BUDGET,
) -> int:
    """How many worker processes ``jobs`` jobs should get: one per usable CPU, no more than
    the available memory holds at ``budget`` bytes each, no more than the jobs, at most
    `MAX_WORKERS`. 1 means: build in this process."""
    cpus = usable_cpus() if cpus is None else cpus
    memory = available_memory() if memory is None else memory
    n = min(jobs, cpus, MAX_WORKERS)
    if memory is not None:
        n = min(n, memory // budget)
    return max(1, n)


# --------------------------------------------------------------------------- the parent side


def _package_dir() -> str:
    import boost_cli

    return str(Path(boost_cli.__file__).resolve().parent.parent)


# The worker's first line: sys.path[0] of ``-c`` is the current folder; replace it with the
# folder boost_cli was imported from here, so the worker runs this very code.
_BOOTSTRAP = (
    "import sys; d = sys.argv[1]; "
    "sys.path[0:1] = [] if d in sys.path[1:] else [d]; "
    "from boost_cli.core.index.workers import main; sys.exit(main(sys.argv[2:]))"
)


def _write_frame(fh: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_FRAME.pack(len(data)) + data)
    fh.flush()


def _read_exact(fh: IO[bytes], n: int) -> Optional[bytes]:
    parts = []
    while n:
        data = fh.read(n)
        if not data:
            return None
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


def _read_frame(fh: IO[bytes]) -> Tuple[bool, Any]:
    """(True, object) for a frame, (False, None) at end of file."""
    head = _read_exact(fh, _FRAME.size)
    if head is None:
        return False, None
    body = _read_exact(fh, _FRAME.unpack(head)[0])
    if body is None:
        return False, None
    return True, pickle.loads(body)


_EOF = object()


class Pool:
    """``n`` worker processes running ``fn(job)`` for each job; see the module docstring.

    Use as a context manager: leaving it normally lets the workers exit (end of file);
    leaving it by an exception, KeyboardInterrupt included, kills them and waits for them.
    """

    def __init__(self, n: int) -> None:
        self.procs: List[subprocess.Popen[bytes]] = []
        self._results: queue.Queue[Tuple[int, Any]] = queue.Queue()
        cmd = [sys.executable, "-c", _BOOTSTRAP, _package_dir(), str(os.getpid())]
        try:
            for _ in range(n):
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                self.procs.append(proc)
                i = len(self.procs) - 1
                threading.Thread(target=self._pump, args=(i, proc), daemon=True).start()
        except BaseException:
            self.kill()
            raise

    def _pump(self, i: int, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        while True:
            try:
                ok, obj = _read_frame(proc.stdout)
            except (OSError, ValueError, pickle.UnpicklingError, EOFError):
                ok, obj = False, None
            self._results.put((i, obj if ok else _EOF))
            if not ok:
                return

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.kill()

    def close(self) -> None:
        """End of input for every worker; wait for them to exit (killed after 5 s)."""
        for proc in self.procs:
            if proc.stdin and not proc.stdin.closed:
                with contextlib.suppress(OSError):  # the worker is gone already
                    proc.stdin.close()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._close_pipes()

    def kill(self) -> None:
        """Kill every worker and wait for it (no zombie, no orphan)."""
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):  # exited meanwhile
                    proc.kill()
        for proc in self.procs:
            proc.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for proc in self.procs:
            for fh in (proc.stdin, proc.stdout):
                if fh is not None and not fh.closed:
                    with contextlib.suppress(OSError):  # a broken pipe to a dead worker
                        fh.close()

    def map_unordered(self, fn: Callable[..., Any], jobs: Sequence[Any]) -> Iterator[Any]:
        """``fn(job)`` for every job, results as they come; a job's exception is raised here."""
        todo = list(reversed(jobs))
        busy: Dict[int, bool] = {}

        def feed(i: int) -> None:
            if todo:
                proc = self.procs[i]
                assert proc.stdin is not None
                try:
                    _write_frame(proc.stdin, (fn, todo.pop()))
                except OSError as exc:
                    raise self._died(i) from exc
                busy[i] = True
            else:
                busy[i] = False

        for i in range(len(self.procs)):
            feed(i)
        while any(busy.values()):
            i, obj = self._next()
            if obj is _EOF:
                raise self._died(i)
            busy[i] = False
            ok, value = obj
            if not ok:
                raise _rebuild(value)
            feed(i)
            yield value

    def _next(self) -> Tuple[int, Any]:
        # A timeout, so a KeyboardInterrupt is seen at once on every platform.
        while True:
            try:
                return self._results.get(timeout=0.1)
            except queue.Empty:
                continue

    def _died(self, i: int) -> WorkerFailed:
        proc = self.procs[i]
        try:
            code = proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        return WorkerFailed(
            f"an index build worker exited unexpectedly (exit code {code})",
            "run 'boost reindex' again; if it keeps failing, check free memory",
        )


def _rebuild(failure: Tuple[str, str, Optional[str], str]) -> BaseException:
    """The exception a job raised in a worker, rebuilt here (with the worker's traceback)."""
    name, message, fix, tb = failure
    cls = _boost_errors().get(name)
    if cls is not None:
        try:
            return cls(message, fix)
        except TypeError:
            pass  # a subclass with another signature: reported generically below
    err = WorkerFailed(
        f"an index build worker failed: {name}: {message}",
        fix or "run 'boost reindex' again; report the error if it repeats",
    )
    err.remote_traceback = tb
    return err


def _boost_errors() -> Dict[str, type]:
    out: Dict[str, type] = {}
    todo: List[type] = [BoostError]
    while todo:
        cls = todo.pop()
        out[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    return out


# --------------------------------------------------------------------------- the worker side


def _die_with_parent(parent: int) -> None:
    """Exit as soon as ``parent`` is gone (see the module docstring)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass  # no prctl: watch instead
    if os.name != "posix":  # pragma: no cover - Windows: end of file on stdin only
        return

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(_WATCH_SECONDS)

    threading.Thread(target=watch, daemon=True).start()


def main(argv: Sequence[str]) -> int:
    """The worker loop: read (fn, job) frames from stdin, write (ok, value) frames back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(int(argv[0]))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # library code never prints, but nothing may corrupt the result stream
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    while True:
        ok, frame = _read_frame(inp)
        if not ok:
            return 0
        fn, job = frame
        try:
            result: Tuple[bool, Any] = (True, fn(job))
        except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
            fix = exc.fix if isinstance(exc, BoostError) else None
            message = exc.message if isinstance(exc, BoostError) else str(exc)
            result = (False, (type(exc).__name__, message, fix, traceback.format_exc()))
        _write_frame(out, result)
