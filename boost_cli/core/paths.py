"""Every path boost reads or writes, derived from BOOST_HOME at call time.

Nothing here is computed at import: tests point BOOST_HOME at a temporary folder
and every caller sees it immediately.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, Optional, Tuple

# A tap name: what `gitutil.safe_name` makes, so it is a folder name on every platform.
_TAP_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


# The last home `boost_home` made, by what it was made from (BOOST_HOME and HOME, read at
# every call), and the paths made under it (`_under`): a server's call asks for them
# dozens of times, and each `Path` join costs more than the look-up.
_HOME: Optional[Tuple[Tuple[Optional[str], Optional[str]], Path, Dict[str, Path]]] = None
_MAX_UNDER = 4096


def boost_home() -> Path:
    """The root of everything boost writes (``$BOOST_HOME``, default ``~/.boost``)."""
    global _HOME
    env = os.environ.get("BOOST_HOME")
    key = (env, os.environ.get("HOME"))
    memo = _HOME
    if memo is not None and memo[0] == key:
        return memo[1]
    try:
        home = Path(env).expanduser() if env else Path.home() / ".boost"
        _HOME = (key, home, {})
        return home
    except RuntimeError as exc:  # "~nosuchuser/...", or no home directory at all
        from boost_cli.core.errors import ConfigError

        shown = repr(env) if env else "your home directory"
        raise ConfigError(
            f"cannot find the home folder in BOOST_HOME={shown}" if env else f"cannot find {shown}",
            "set BOOST_HOME to an absolute path, e.g. BOOST_HOME=/path/to/boost-home",
        ) from exc


def _under(rel: str) -> Path:
    """``boost_home() / rel`` (``rel`` a fixed relative path, "/"-separated), made once
    per home."""
    home = boost_home()
    memo = _HOME
    if memo is None or memo[1] is not home:  # pragma: no cover - boost_home keeps it
        return home / rel
    made = memo[2].get(rel)
    if made is None:
        made = home / rel
        if len(memo[2]) < _MAX_UNDER:
            memo[2][rel] = made
    return made


def repos_dir() -> Path:
    """Where tapped registries are cloned, one folder per tap."""
    return _under("repos")


def cache_dir() -> Path:
    """Catalog scans, the BM25 index and the vector store."""
    return _under("cache")


def config_path() -> Path:
    """The small JSON config: taps and their state, settings."""
    return _under("config.json")


def catalog_cache_dir() -> Path:
    """Per-tap catalog scans, keyed by the tap's commit."""
    return _under("cache/catalog")


def trust_cache_dir() -> Path:
    """Per-tap trust findings (`trust_scan`), keyed by the tap's commit."""
    return _under("cache/trust")


def index_dir() -> Path:
    """The persisted BM25 index (manifest, segments, postings)."""
    return _under("cache/index")


def related_path() -> Path:
    """The related-terms table a plain query is widened with (`core/related.py`)."""
    return cache_dir() / "related.bin"


def related_fields_path() -> Path:
    """Each tap's name-and-description terms, kept so a rebuild of the related-terms table
    loads only the catalogs of the taps that changed."""
    return cache_dir() / "related-fields.json"


def vectors_path() -> Path:
    """The dense vector store (sqlite, with sqlite-vec when it loads)."""
    return _under("cache/vectors.sqlite")


def enrich_path() -> Path:
    """The enrichment store (sqlite): what an LLM wrote of each distinct entry text."""
    return _under("cache/enrich.sqlite")


def advice_path() -> Path:
    """When each hint (`advice`) was last shown on a terminal."""
    return _under("cache/advice.json")


def locks_dir() -> Path:
    """Lock files (see `lock`): one for the config, one per tap."""
    return boost_home() / "locks"


def config_lock_path() -> Path:
    """Held while `config.json` is read, changed and written back."""
    return locks_dir() / "config.lock"


def tap_lock_path(name: str) -> Path:
    """Held while tap ``name``'s clone changes (exclusive) or is indexed (shared)."""
    check_tap_name(name)
    return locks_dir() / f"tap-{name}.lock"


def is_tap_name(name: object) -> bool:
    """Whether ``name`` is a valid tap name: 1-100 of ``[A-Za-z0-9._-]``, not starting
    with '.' or '-' (so never '.', '..' or a temporary folder's name)."""
    return isinstance(name, str) and _TAP_NAME.fullmatch(name) is not None


def check_tap_name(name: str) -> str:
    """``name``, or UsageError when it is not a valid tap name."""
    if not is_tap_name(name):
        from boost_cli.core.errors import UsageError

        raise UsageError(
            f"invalid tap name {name!r}",
            "use letters, digits, '.', '_' and '-' only, starting with a letter or digit",
        )
    return name


def tap_dir(name: str) -> Path:
    """The clone of tap ``name``; refuses any name that would leave ``repos/``."""
    return _under("repos/" + check_tap_name(name))  # a name holds no "/"
