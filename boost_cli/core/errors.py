"""The one error family boost raises; `cli.main` maps each class to an exit code.

Every error carries *what happened* and, where there is one, *how to fix it*;
`str(err)` renders both as ``<what> — <fix>`` so the CLI can print one line.
"""

from __future__ import annotations

import errno
import os
from typing import Optional, Sequence


class BoostError(Exception):
    """Base class: a problem the user can act on. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, fix: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} — {self.fix}" if self.fix else self.message


class UsageError(BoostError):
    """The command line or a tool call's arguments are wrong. Exit code 2."""

    exit_code = 2


class NotFoundError(BoostError):
    """A tap, skill or file that was asked for does not exist. Exit code 3."""

    exit_code = 3


class AmbiguousError(NotFoundError):
    """A name matches several entries; `candidates` lists their `tap:name`s."""

    def __init__(self, message: str, candidates: Sequence[str], fix: Optional[str] = None) -> None:
        super().__init__(message, fix)
        self.candidates = list(candidates)


class GitError(BoostError):
    """git failed, timed out, or a source was refused before git ran. Exit code 4."""

    exit_code = 4


class SourceRefused(GitError):
    """A tap source that boost will not hand to git (unsafe transport, option-like)."""


class IndexUnavailable(BoostError):
    """The search index is missing, corrupt, or of another format version. Exit code 5."""

    exit_code = 5


class ProviderError(BoostError):
    """An LLM or embedding provider failed or is not configured. Exit code 6."""

    exit_code = 6


class ConfigError(BoostError):
    """The config file under BOOST_HOME cannot be read. Exit code 7."""

    exit_code = 7


class BusyError(BoostError):
    """Another boost process holds a lock boost waited for too long. Exit code 1."""


class NoTapsError(BoostError):
    """Nothing is tapped yet, so there is nothing to search. Exit code 10."""

    exit_code = 10

    def __init__(self) -> None:
        super().__init__(
            "no registries are tapped yet",
            "run 'boost tap --defaults' for a starter set, or 'boost tap OWNER/REPO'",
        )


# What to do about an OS error, by errno; anything else gets `_OS_FIX_OTHER`.
_OS_FIXES = {
    errno.ENOSPC: "free some disk space and retry",
    getattr(errno, "EDQUOT", -1): "free some space within your disk quota and retry",
    errno.EFBIG: "free some disk space (or raise the file-size limit) and retry",
    errno.EIO: "check the disk (free space, the file-size limit: ulimit -f, its health) and retry",
    errno.EROFS: "point BOOST_HOME at a writable folder",
    errno.EACCES: "make it writable for you, or point BOOST_HOME at a folder you own",
    errno.EPERM: "make it writable for you, or point BOOST_HOME at a folder you own",
    errno.ENOTDIR: "point BOOST_HOME at a folder (a part of the path is a file)",
    errno.ENAMETOOLONG: "point BOOST_HOME at a shorter path",
    errno.EMFILE: "close other programs or raise the open-file limit (ulimit -n) and retry",
}
_OS_FIX_OTHER = "check the path and its permissions, then retry"


def os_fix(exc: OSError) -> str:
    """What to do about ``exc``, by its errno."""
    return _OS_FIXES.get(exc.errno or 0, _OS_FIX_OTHER)


def from_os_error(exc: OSError) -> BoostError:
    """An OSError (full disk, read-only or misplaced BOOST_HOME, ...) as a one-line
    BoostError: what failed on which path, and what to do about it."""
    what = exc.strerror or str(exc) or type(exc).__name__
    where = exc.filename
    if isinstance(where, (str, bytes)):
        what = f"cannot use {os.fsdecode(where)}: {what}"
    return BoostError(what, os_fix(exc))
