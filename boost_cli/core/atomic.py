"""Atomic file writes: write a temporary file beside the target, fsync, then `os.replace`.

A crash at any point leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Union

PathLike = Union[str, "os.PathLike[str]"]


def write_bytes(path: PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:  # a full disk says nothing of where: name the file
            if exc.filename is not None:
                raise
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: PathLike, text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: PathLike, value: Any) -> None:
    """Replace ``path`` with deterministic JSON (sorted keys, 2-space indent)."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
