"""The one way install touches a user's folders: every read, write, lock and removal of a
file under a base folder (the project, the home, ``BOOST_HOME``) without following a
symlink below it.

A path is ``base`` plus plain parts (the callers validate them: no ``..``, no empty part).
Each part is opened from the one above it (``openat`` with ``O_NOFOLLOW``), so a symlink
anywhere on the way — ``.boost -> /elsewhere``, ``.claude/skills -> /etc``, a link at
``installed.json.lock`` — is refused, not followed, and nothing can swap a folder for a
link between a check and the write. ``trusted`` leading parts may be symlinks: the user's
own agent folders (``~/.claude`` kept in dotfiles). A write goes to a temporary file in
the same folder, fsynced, then renamed over the target (`atomic`'s guarantee).

Where ``open`` takes no folder descriptor (Windows), each part is checked with ``lstat``
before the path is used: the same refusals, without the protection against a swap.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from boost_cli.core import atomic, lock
from boost_cli.core.errors import UsageError

# os.replace is renameat where os.rename is (`supports_dir_fd` lists rename, not replace).
_FD = {os.open, os.rename, os.mkdir, os.unlink, os.rmdir, os.stat} <= os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOT_PLAIN = "!"  # what `digest` says of a symlink, a folder or a device


def _refuse(path: Path) -> UsageError:
    return UsageError(
        f"refusing to write through the symlink {path}",
        "remove the link, or install into another folder",
    )


def _lstat(name: str, dir_fd: int) -> int:
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode


def _parts(rel: str) -> List[str]:
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UsageError(f"refusing path {rel!r}: not a plain relative path", None)
    return parts


def _open_dir(base: Path, parts: Sequence[str], create: bool, trusted: int) -> int:
    """A descriptor of the folder ``base/parts``, no symlink followed past ``trusted``
    parts; missing folders are made when ``create``, else FileNotFoundError."""
    fd = os.open(str(base), os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for i, part in enumerate(parts):
            flags = os.O_RDONLY | _DIRECTORY | _CLOEXEC | (0 if i < trusted else _NOFOLLOW)
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError:
                if stat.S_ISLNK(_lstat(part, fd)):
                    raise _refuse(base.joinpath(*parts[: i + 1])) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_path(base: Path, parts: Sequence[str], trusted: int) -> None:
    """No part of ``base/parts`` past ``trusted`` is a symlink (UsageError naming it)."""
    for depth in range(trusted + 1, len(parts) + 1):
        sub = base.joinpath(*parts[:depth])
        if sub.is_symlink():
            raise _refuse(sub)


def check(base: Path, rel: str, trusted: int = 0) -> None:
    """Refuse ``base/rel`` when a symlink is on its way past ``trusted`` parts or at it:
    what every write checks again, asked before the first write so that nothing of an
    item is written when one of its paths would be refused."""
    _check_path(base, _parts(rel), trusted)


def write(base: Path, rel: str, data: bytes, trusted: int = 0) -> None:
    """Replace ``base/rel`` with ``data`` atomically, making its folders; a symlink on
    the way or at the file itself is refused (UsageError)."""
    parts = _parts(rel)
    if not _FD:  # pragma: no cover - Windows
        _check_path(base, parts, trusted)
        atomic.write_bytes(base.joinpath(*parts), data)
        return
    dfd = _open_dir(base, parts[:-1], True, trusted)
    name = parts[-1]
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(_lstat(name, dfd)):
                raise _refuse(base.joinpath(*parts))
        tmp = f".{name[:64]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dfd
        )
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)


def read(base: Path, rel: str, trusted: int = 0) -> Optional[bytes]:
    """The bytes of the regular file ``base/rel``; None when there is none. A symlink on
    the way or at the file, or something not a regular file there, is `NotPlain`."""
    parts = _parts(rel)
    if not _FD:  # pragma: no cover - Windows
        try:
            _check_path(base, parts, trusted)
        except UsageError:
            raise NotPlain(rel) from None
        path = base.joinpath(*parts)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                raise NotPlain(rel)
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
    try:
        dfd = _open_dir(base, parts[:-1], False, trusted)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UsageError:
        raise NotPlain(rel) from None
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError:  # a symlink (ELOOP), a folder we cannot open
            raise NotPlain(rel) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise NotPlain(rel)
        with os.fdopen(fd, "rb") as fh:
            return fh.read()
    finally:
        os.close(dfd)


class NotPlain(Exception):
    """Something other than a regular file reached without a symlink is at a path."""


def digest(base: Path, rel: str, trusted: int = 0) -> Optional[str]:
    """The sha256 of the regular file at ``base/rel``, None when nothing is there,
    `NOT_PLAIN` for anything else (a symlink there or on the way, a folder, a device)."""
    try:
        data = read(base, rel, trusted)
    except NotPlain:
        return NOT_PLAIN
    return None if data is None else hashlib.sha256(data).hexdigest()


def remove(base: Path, rel: str, trusted: int = 0) -> None:
    """Remove the file ``base/rel`` (nothing there: nothing to do), then each folder above
    it that is left empty, up to the ``trusted`` ones; never through a symlink."""
    parts = _parts(rel)
    if not _FD:  # pragma: no cover - Windows
        _check_path(base, parts, trusted)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(base.joinpath(*parts))
        for depth in range(len(parts) - 1, max(trusted, 0), -1):
            try:
                os.rmdir(base.joinpath(*parts[:depth]))
            except OSError:
                break
        return
    try:
        dfd = _open_dir(base, parts[:-1], False, trusted)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)
    for depth in range(len(parts) - 1, max(trusted, 0), -1):
        above = _open_dir(base, parts[: depth - 1], False, trusted)
        try:
            os.rmdir(parts[depth - 1], dir_fd=above)  # only when empty
        except OSError:
            break
        finally:
            os.close(above)


@contextlib.contextmanager
def locked(base: Path, rel: str, what: str, timeout: float) -> Iterator[None]:
    """Hold the lock file ``base/rel`` (made with its folders, no symlink followed)."""
    parts = _parts(rel)
    if not _FD:  # pragma: no cover - Windows
        _check_path(base, parts, 0)
        with lock.hold(base.joinpath(*parts), what, timeout=timeout):
            yield
        return
    dfd = _open_dir(base, parts[:-1], True, 0)
    try:
        try:
            fd = os.open(
                parts[-1], os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dfd
            )
        except OSError:
            if stat.S_ISLNK(_lstat(parts[-1], dfd)):
                raise _refuse(base.joinpath(*parts)) from None
            raise
    finally:
        os.close(dfd)
    with lock.hold_fd(fd, what, timeout=timeout):
        yield
