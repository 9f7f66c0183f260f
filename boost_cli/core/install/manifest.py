"""The install manifest: what boost installed in a project (``.boost/installed.json``) or for
the user (``$BOOST_HOME/installed.json``), one record per installed item.

Shape: ``{"version": 1, "items": {KEY: {id, tap, path, commit, agent, kind, files:
{dest: sha256}, installed}}}``; KEY is what the item occupies relative to the base (a
skill's folder, a rule's file). Written atomically under a lock, both opened without
following a symlink (`nofollow`: a cloned project's ``.boost`` may be a link). An
unreadable manifest is a ConfigError naming the file, never a silent reset (it is what
protects the user's edits).

A project's manifest may come with a clone, so it is data like a registry's: every read
checks every record (`check_record`): its key is an agent's folder for its kind plus one
plain name, and each of its files lies inside that key. A manifest listing ``.git/HEAD``
or ``../x`` is refused whole, before any command acts on it.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

from boost_cli.core import paths
from boost_cli.core.errors import ConfigError
from boost_cli.core.install import agents, nofollow
from boost_cli.core.text import printable

VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FIX = "fix it, or move it away (boost then forgets what it installed there)"


@dataclass(frozen=True)
class Book:
    """Where a manifest is: ``rel`` under the folder ``root`` (the project, or BOOST_HOME)."""

    root: Path
    rel: str

    @property
    def path(self) -> Path:
        return self.root / self.rel


def for_scope(user: bool, base: Path) -> Book:
    return (
        Book(paths.boost_home(), "installed.json") if user else Book(base, ".boost/installed.json")
    )


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def layout(rec: Dict[str, Any], user: bool = False) -> Optional[str]:
    """The agent's folder a record's item lives in for the scope (`agents.folder`), None
    when its agent or kind is not one boost installs there."""
    agent, kind = rec.get("agent"), rec.get("kind")
    if not isinstance(agent, str) or not isinstance(kind, str):
        return None
    return agents.folder(agent, kind, user)


def check_record(key: Any, rec: Any) -> Optional[str]:
    """What is wrong with one record (None: nothing): its key must be its agent's folder
    for its kind plus one plain name, and every file path inside that key (a skill's
    folder) or the key itself (a one-file item)."""
    if not isinstance(key, str) or not isinstance(rec, dict):
        return "not a record"
    folders = {layout(rec, False), layout(rec, True)} - {None}
    if not folders:
        return "an unknown agent or kind"
    head, _, name = key.rpartition("/")
    if head not in folders or not _NAME.fullmatch(name) or name.strip(".") == "":
        return f"{key!r} is not a place boost installs into"
    files = rec.get("files", {})
    if not isinstance(files, dict):
        return "its files are not a table"
    for dest, digest in files.items():
        inside = dest.startswith(key + "/") if rec.get("kind") == "skill" else dest == key
        parts = dest.split("/") if isinstance(dest, str) else [""]
        if (
            not isinstance(dest, str)
            or not inside
            or any(p in ("", ".", "..") for p in parts)
            or "\\" in dest
            or "\x00" in dest
        ):
            return f"it lists {dest!r}, outside {key!r}"
        if not isinstance(digest, str):
            return f"the digest of {dest!r} is not a string"
    if not all(isinstance(rec.get(k, ""), str) for k in ("id", "tap", "path", "commit")):
        return "its id, tap, path or commit is not a string"
    return None


def load(book: Book) -> Dict[str, Dict[str, Any]]:
    """The manifest's items (empty when there is no manifest), every record checked."""
    try:
        raw = nofollow.read(book.root, book.rel)
    except nofollow.NotPlain:
        raise ConfigError(
            f"the install manifest {book.path} is not a plain file (a symlink?)", _FIX
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the install manifest {book.path}: {exc}", _FIX) from exc
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the install manifest {book.path}: {exc}", _FIX) from exc
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, dict):
        raise ConfigError(f"the install manifest {book.path} has an unexpected shape", _FIX)
    for key, rec in items.items():
        problem = check_record(key, rec)
        if problem:
            raise ConfigError(
                f"the install manifest {book.path} has a bad record "
                f"{printable(repr(key))[:120]}: {printable(problem)[:200]}",
                _FIX,
            )
    return items


def check(book: Book) -> None:
    """Refuse now (UsageError) a manifest or a lock that `editing` would refuse later: a
    symlink on the way to either. Install asks before it writes the first file."""
    nofollow.check(book.root, book.rel)
    nofollow.check(book.root, book.rel + ".lock")


@contextlib.contextmanager
def editing(book: Book) -> Iterator[Dict[str, Dict[str, Any]]]:
    """The items to change in the ``with`` block, written back atomically under a lock."""
    book.root.mkdir(parents=True, exist_ok=True)
    with nofollow.locked(book.root, book.rel + ".lock", "the install manifest", timeout=60.0):
        items = load(book)
        yield items
        text = json.dumps({"version": VERSION, "items": items}, indent=2, sort_keys=True)
        nofollow.write(book.root, book.rel, (text + "\n").encode("utf-8"))
