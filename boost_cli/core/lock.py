"""Advisory file locks: one writer at a time for `config.json` and for each tap's clone.

On POSIX a lock is ``fcntl.flock`` on a small file under ``locks/``. It belongs to the open
file description, so the kernel drops it when every process holding that description is
gone: a `kill -9` never leaves a stale lock to clean up, and a child that inherits the
descriptor (git, started with ``pass_fds``) keeps the lock held until it has exited too —
so nobody "recovers" a git lock file under a git that is still running.

On Windows ``msvcrt.locking`` on the first byte stands in: exclusive only (a shared
request takes it exclusively), polled, and not inherited by children. Where neither
exists, locking degrades to nothing and boost behaves as it did before locks.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Iterator, Optional

from boost_cli.core.errors import BusyError

try:  # POSIX
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

try:  # Windows
    import msvcrt as _msvcrt  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    _msvcrt = None  # type: ignore[assignment]

_POLL_FIRST = 0.005
_POLL_MAX = 0.1


def _open(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(str(path), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)


def _try(fd: int, shared: bool) -> bool:
    """Take the lock on ``fd`` without waiting; False when another process holds it."""
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, (_fcntl.LOCK_SH if shared else _fcntl.LOCK_EX) | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _msvcrt is not None:  # pragma: no cover - Windows
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    return True  # pragma: no cover - no locking on this platform


def _release(fd: int) -> None:
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    elif _msvcrt is not None:  # pragma: no cover - Windows
        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1)


@contextlib.contextmanager
def hold(
    path: Path, what: str, *, shared: bool = False, timeout: Optional[float] = None
) -> Iterator[int]:
    """Hold the lock at ``path`` for the ``with`` block; yields its descriptor (give it to
    child processes that must keep the lock while they run).

    Waits at most ``timeout`` seconds (None: as long as it takes), then raises `BusyError`
    naming ``what``. OSError (a read-only home, a full disk) propagates.
    """
    with hold_fd(_open(path), what, shared=shared, timeout=timeout) as fd:
        yield fd


@contextlib.contextmanager
def hold_fd(
    fd: int, what: str, *, shared: bool = False, timeout: Optional[float] = None
) -> Iterator[int]:
    """`hold` on a lock file the caller opened (install opens its own without following a
    symlink); ``fd`` is closed at the end."""
    try:
        start = time.monotonic()
        wait = _POLL_FIRST
        while not _try(fd, shared):
            if timeout is not None and time.monotonic() - start >= timeout:
                raise BusyError(
                    f"{what} is busy: another boost process is changing it",
                    "wait for it to finish and retry",
                )
            time.sleep(wait)
            wait = min(wait * 2, _POLL_MAX)
        try:
            yield fd
        finally:
            _release(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def attempt(path: Path, *, shared: bool = False) -> Iterator[bool]:
    """Try the lock at ``path`` once: the block runs either way, told whether it holds it.
    A lock file that cannot be created (read-only home) counts as not held."""
    try:
        fd = _open(path)
    except OSError:
        yield False
        return
    try:
        held = _try(fd, shared)
        try:
            yield held
        finally:
            if held:
                _release(fd)
    finally:
        os.close(fd)


def is_free(path: Path) -> bool:
    """Whether nobody holds the lock at ``path`` (a missing lock file is free). For
    reaping what a dead process left: its lock died with it."""
    if not path.exists():
        return True
    with attempt(path) as held:
        return held


def inheritable() -> bool:
    """Whether a child process started with ``pass_fds`` keeps a lock held (POSIX)."""
    return _fcntl is not None
