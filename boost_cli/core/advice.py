"""Hints, as git's ``advice.*``: a hint (how to search by meaning, how to get the
sqlite-vec store) is for a person at a terminal, at most once a day per home, and the
setting ``advice.<name>`` turns it off for good. This module keeps the when: the time each
hint was last shown, in ``cache/advice.json``. Whether there is a terminal is the caller's
(the commands' `render.advise`)."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Dict, Optional

from boost_cli.core import atomic, paths, settings

# A hint is shown again after this many seconds.
EVERY = 24 * 3600


def _stamps() -> Dict[str, float]:
    try:
        data = json.loads(paths.advice_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: the hint is due (the worst case is one more)
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))}


def due(name: str, now: Optional[float] = None) -> bool:
    """Whether hint ``name`` may be shown: ``advice.<name>`` is on and it was last shown
    more than `EVERY` seconds ago (or never)."""
    if not settings.get(f"advice.{name}"):
        return False
    now = time.time() if now is None else now
    last = _stamps().get(name)
    return last is None or not 0 <= now - last < EVERY


def shown(name: str, now: Optional[float] = None) -> None:
    """Record that hint ``name`` was shown now. A home that cannot be written (read-only,
    a replica) shows the hint each time instead of failing the command."""
    stamps = _stamps()
    stamps[name] = time.time() if now is None else now
    # The hint was shown: a home that cannot be written costs one more showing, never a
    # failed command.
    with contextlib.suppress(OSError):
        atomic.write_json(paths.advice_path(), stamps)
