"""A circuit breaker for LLM backends: a backend that failed is not asked again for a while.

`claude` installed but not logged in costs seconds per call and fails every time; so does a
revoked API key. The first failure of a backend's call is remembered in
``cache/llm-breaker.json`` (backend → when, why, until when) for `COOL_DOWN` seconds:
meanwhile `llm.auto_backend` passes over it and `llm.choose` answers with the remembered
reason at once. A success clears it. `boost doctor` and ``--explain`` show it. A home that
cannot be written just forgets (each call then tries again, as before).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Dict, Optional, Union

from boost_cli.core import atomic, paths
from boost_cli.core.llm.providers import label as _label

log = logging.getLogger("boost.llm")

COOL_DOWN = 15 * 60.0  # seconds a failed backend is passed over


def _path() -> Path:
    return paths.cache_dir() / "llm-breaker.json"


def _load() -> Dict[str, Dict[str, Any]]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def tripped(backend: str, now: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """The record of ``backend``'s failure while it is cooling down, else None."""
    rec = _load().get(backend)
    now = time.time() if now is None else now
    until = rec.get("until") if rec else None
    if isinstance(until, (int, float)) and now < until:
        return rec
    return None


def describe(backend: str, rec: Dict[str, Any], now: Optional[float] = None) -> str:
    now = time.time() if now is None else now
    left = max(1, int(round((float(rec.get("until", now)) - now) / 60)))
    return (
        f"the {_label(backend)} failed {_ago(now - float(rec.get('at', now)))} "
        f"({rec.get('reason', 'unknown')}); not asked again for {left} min "
        "(boost doctor; 'boost config set llm off' turns the LLM off)"
    )


def _ago(seconds: float) -> str:
    return "just now" if seconds < 60 else f"{int(seconds // 60)} min ago"


def record(backend: str, failure: Union[str, None]) -> None:
    """Remember a failure of ``backend`` (a reason), or forget it after a success (None)."""
    data = _load()
    if failure is None:
        if backend not in data:
            return
        data.pop(backend)
    else:
        now = time.time()
        data[backend] = {"at": now, "until": now + COOL_DOWN, "reason": failure[:200]}
    try:
        atomic.write_json(_path(), data)
    except OSError as exc:  # a read-only home: forget, and try the backend next time
        log.debug("cannot record the LLM breaker: %s", exc)


def state() -> Dict[str, Dict[str, Any]]:
    """Every backend's record that is still cooling down (for doctor)."""
    now = time.time()
    return {b: r for b, r in _load().items() if tripped(b, now) is not None}
