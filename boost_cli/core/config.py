"""The JSON config under BOOST_HOME: tapped registries and user settings.

Shape: ``{"version": 1, "taps": {name: {...}}, "settings": {...}}``. Written atomically;
every read-modify-write goes through `edit()`, which holds the config lock, so two boost
processes changing taps at once never lose each other's records. A file of the wrong
shape is a `ConfigError` naming what is wrong, never a crash later on.

Every field of a tap record is type-checked on every load (`record_problem`, which a
bundle import also applies before it writes one). A record of the wrong shape makes every
command refuse the config, except the two that repair it: ``boost untap NAME`` (which
loads with ``keep_bad``, then drops the record) and ``boost doctor`` (which names it).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

from boost_cli.core import atomic, lock, paths
from boost_cli.core.errors import ConfigError, os_fix

CONFIG_VERSION = 1
# Nobody holds the config lock for more than a read and an atomic write; waiting longer
# than this means a process is stuck (stopped in a debugger, say).
LOCK_SECONDS = 60.0
_TEXT_FIELDS = ("source", "url", "commit", "added", "updated")
_TEXT_OR_NULL_FIELDS = ("bundle", "content")  # set for a tap imported from a bundle


def load(*, keep_bad: bool = False) -> Dict[str, Any]:
    """The config, or an empty one when none exists yet (a fresh dict: the caller may
    change it, as `edit` does). ``keep_bad``: tap records of the wrong shape are kept as
    they are rather than refused (for the commands that repair them; see `bad_records`)."""
    path = paths.config_path()
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _empty()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text", _fix(path)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", os_fix(exc)) from exc
    return _parse(path, raw, keep_bad=keep_bad)


# The last config `current` parsed: its path, its bytes and what they parse to.
_CURRENT: Optional[Tuple[str, bytes, Dict[str, Any]]] = None


def current() -> Dict[str, Any]:
    """The config as `load` gives it, READ ONLY: the same dict while the file holds the
    same bytes, so a long-lived server (one search a call) parses and checks it once per
    change, not several times a call. The file is read on every call (one small read, no
    stat heuristics): a ``boost tap``/``untap``/``update`` by another process is seen by the
    very next call. Callers must not change what it returns (`load` for that)."""
    global _CURRENT
    path = paths.config_path()
    try:
        data = path.read_bytes()
    except OSError:
        return load()  # none yet (an empty config), or the error `load` raises
    memo = _CURRENT
    if memo is not None and memo[0] == str(path) and memo[1] == data:
        return memo[2]
    try:
        # what read_text does: strict UTF-8, universal newlines
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text", _fix(path)) from exc
    parsed = _parse(path, text)
    _CURRENT = (str(path), data, parsed)
    return parsed


def _empty() -> Dict[str, Any]:
    return {"version": CONFIG_VERSION, "taps": {}, "settings": {}}


def _parse(path: Path, raw: str, *, keep_bad: bool = False) -> Dict[str, Any]:
    """The config in ``raw`` (the text of ``path``), checked; ConfigError when it is not one
    (``keep_bad``: tap records of the wrong shape are let through)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {exc.lineno})",
            f"fix or delete {path}; then re-add taps with 'boost tap'",
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} is nested too deeply to be a config", _fix(path)) from exc
    problem = shape_problem(data, records=False)
    if problem:
        raise ConfigError(f"{path} has an unexpected shape: {problem}", _fix(path))
    bad = {} if keep_bad else bad_records(data)
    if bad:
        name, why = next(iter(sorted(bad.items())))
        raise ConfigError(
            f"{path} has an unexpected shape: tap {name!r}: {why}",
            f"remove that tap with 'boost untap -- {name}' (then tap or import it again), "
            f"or fix {path}",
        )
    data.setdefault("version", CONFIG_VERSION)
    data.setdefault("taps", {})
    data.setdefault("settings", {})
    return data


def _fix(path: Path) -> str:
    return f"fix or delete {path}; then re-add taps with 'boost tap'"


def shape_problem(data: Any, *, records: bool = True) -> Optional[str]:
    """What is wrong with the shape of a parsed config, or None when nothing is (with
    ``records`` False, its tap records are not looked into: see `bad_records`).

    Tap names are not judged here: a record under a name boost would refuse (``..``,
    say) is kept, ignored by every command and removable with ``boost untap``."""
    if not isinstance(data, dict):
        return f"expected a JSON object, found {_kind(data)}"
    if "version" in data and not _is_int(data["version"]):
        return "'version' is not a number"
    if not isinstance(data.get("taps", {}), dict):
        return "'taps' is not an object"
    if not isinstance(data.get("settings", {}), dict):
        return "'settings' is not an object"
    for name, problem in sorted(bad_records(data).items()) if records else ():
        return f"tap {name!r}: {problem}"
    return None


def bad_records(data: Dict[str, Any]) -> Dict[str, str]:
    """Tap name → what is wrong with its record, for every record of the wrong shape."""
    out = {}
    for name, rec in data.get("taps", {}).items():
        problem = record_problem(rec)
        if problem:
            out[str(name)] = problem
    return out


def record_problem(rec: Any) -> Optional[str]:
    """What is wrong with one tap record (every field's type), or None."""
    if not isinstance(rec, dict):
        return f"expected an object, found {_kind(rec)}"
    for key in _TEXT_FIELDS:
        if key in rec and not isinstance(rec[key], str):
            return f"{key!r} is not a string"
    for key in _TEXT_OR_NULL_FIELDS:
        if rec.get(key) is not None and not isinstance(rec[key], str):
            return f"{key!r} is not a string"
    if "repaired" in rec and not isinstance(rec["repaired"], bool):
        return "'repaired' is not true or false"
    counts = rec.get("counts", {})
    if not isinstance(counts, dict) or not all(
        isinstance(k, str) and _is_int(v) for k, v in counts.items()
    ):
        return "'counts' does not map kinds to numbers"
    if "warnings" in rec and not _is_int(rec["warnings"]):
        return "'warnings' is not a number"
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def save(data: Dict[str, Any]) -> None:
    """Write the config atomically (callers that read it first use `edit()`)."""
    atomic.write_json(paths.config_path(), data)


@contextlib.contextmanager
def edit(*, keep_bad: bool = False) -> Iterator[Dict[str, Any]]:
    """The config to change in the ``with`` block, written back when the block ends
    without an error; the config lock is held throughout, so no other boost process
    reads or writes it in between. ``keep_bad``: as for `load`."""
    with lock.hold(paths.config_lock_path(), "the config", timeout=LOCK_SECONDS):
        data = load(keep_bad=keep_bad)
        yield data
        save(data)
