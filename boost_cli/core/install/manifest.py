"""The install manifest: what boost installed in a project (``.boost/installed.json``) or for
the user (``$BOOST_HOME/installed.json``), one record per installed item.

Shape: ``{"version": 1, "items": {KEY: {id, tap, path, commit, agent, kind, files:
{dest: sha256}, installed}}}``; KEY is what the item occupies relative to the base (a
skill's folder, a rule's file). Written atomically under a lock; an unreadable manifest is
a ConfigError naming the file, never a silent reset (it is what protects the user's edits).
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any, Dict, Iterator

from boost_cli.core import atomic, lock, paths
from boost_cli.core.errors import ConfigError

VERSION = 1


def path_for(user: bool, base: Path) -> Path:
    return paths.boost_home() / "installed.json" if user else base / ".boost" / "installed.json"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def load(path: Path) -> Dict[str, Dict[str, Any]]:
    """The manifest's items (empty when there is no manifest)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"cannot read the install manifest {path}: {exc}",
            "fix it, or move it away (boost then forgets what it installed there)",
        ) from exc
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("files", {}), dict) for v in items.values()
    ):
        raise ConfigError(
            f"the install manifest {path} has an unexpected shape",
            "fix it, or move it away (boost then forgets what it installed there)",
        )
    return items


@contextlib.contextmanager
def editing(path: Path) -> Iterator[Dict[str, Dict[str, Any]]]:
    """The items to change in the ``with`` block, written back atomically under a lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock.hold(path.with_name(path.name + ".lock"), "the install manifest", timeout=60.0):
        items = load(path)
        yield items
        atomic.write_json(path, {"version": VERSION, "items": items})
