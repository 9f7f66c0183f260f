"""Every path boost reads or writes, derived from BOOST_HOME at call time.

Nothing here is computed at import: tests point BOOST_HOME at a temporary folder
and every caller sees it immediately.
"""

from __future__ import annotations

import os
from pathlib import Path


def boost_home() -> Path:
    """The root of everything boost writes (``$BOOST_HOME``, default ``~/.boost``)."""
    env = os.environ.get("BOOST_HOME")
    return Path(env).expanduser() if env else Path.home() / ".boost"


def repos_dir() -> Path:
    """Where tapped registries are cloned, one folder per tap."""
    return boost_home() / "repos"


def cache_dir() -> Path:
    """Catalog scans, the BM25 index and the vector store."""
    return boost_home() / "cache"


def config_path() -> Path:
    """The small JSON config: taps and their state, settings."""
    return boost_home() / "config.json"


def catalog_cache_dir() -> Path:
    """Per-tap catalog scans, keyed by the tap's commit."""
    return cache_dir() / "catalog"


def index_dir() -> Path:
    """The persisted BM25 index (manifest, segments, postings)."""
    return cache_dir() / "index"


def vectors_path() -> Path:
    """The dense vector store (sqlite, with sqlite-vec when it loads)."""
    return cache_dir() / "vectors.sqlite"


def tap_dir(name: str) -> Path:
    """The clone of tap ``name``; refuses any name that would leave ``repos/``."""
    from boost_cli.core.errors import UsageError

    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise UsageError(f"invalid tap name {name!r}", "use letters, digits, '.', '_' and '-' only")
    root = repos_dir().resolve()
    path = (root / name).resolve()
    if path.parent != root:
        raise UsageError(f"invalid tap name {name!r}", "use letters, digits, '.', '_' and '-' only")
    return repos_dir() / name
