"""Small rendering helpers shared by the commands (the only place that prints)."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import IO, Any, Callable, List, Mapping, Optional

from boost_cli.core.models import KINDS
from boost_cli.core.text import printable
from boost_cli.core.tokenize import tokenize

BOLD, NORMAL = "\x1b[1m", "\x1b[22m"
_WORD = re.compile(r"[^\W_]+")


def out(text: str = "") -> None:
    print(text)


def err(text: str) -> None:
    print(text, file=sys.stderr)


def emit_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def short(commit: str) -> str:
    return commit[:10] if commit else "-"


def counts_text(counts: Mapping[str, int]) -> str:
    parts = []
    for kind in KINDS:
        n = int(counts.get(kind, 0))
        parts.append(f"{n} {kind}{'' if n == 1 else 's'}")
    return ", ".join(parts)


def counts_delta(old: Mapping[str, int], new: Mapping[str, int]) -> str:
    parts = []
    for kind in KINDS:
        d = int(new.get(kind, 0)) - int(old.get(kind, 0))
        if d:
            parts.append(f"{d:+d} {kind}{'' if abs(d) == 1 else 's'}")
    return ", ".join(parts) or "no count changes"


def table(rows: list, headers: list) -> str:
    cells = [[str(c) for c in r] for r in [headers, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def duration(seconds: float) -> str:
    """``seconds`` as a person reads a wait: "8 s", "3 min 05 s", "1 h 02 min"."""
    whole = max(0, int(round(seconds)))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


ETA_AFTER = 2.0  # seconds of progress before an estimate is worth showing


def progress(
    verb: str, clock: Callable[[], float] = time.monotonic
) -> Optional[Callable[..., None]]:
    """A ``(done, total, label="")`` callback that redraws one status line on stderr,
    or None when stderr is not a terminal (logs and pipes get no progress noise).

    Once work has gone on for `ETA_AFTER` seconds the line ends with the time left, from
    the rate since the first report of this ``total`` (a new total starts a new count)."""
    if not sys.stderr.isatty():
        return None
    first: List[float] = []  # when, done, total: the first report of this total

    def report(done: int, total: int, label: str = "", *rest: Any) -> None:
        now = clock()
        if not first or first[2] != total or done < first[1]:
            first[:] = [now, done, total]
        spent, since = now - first[0], done - first[1]
        eta = ""
        if done < total and since > 0 and spent >= ETA_AFTER:
            eta = f", {duration(spent * (total - done) / since)} left"
        sys.stderr.write(f"\r  {verb} {label + ' ' if label else ''}{done}/{total}{eta}\x1b[K")
        if done >= total:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()

    return report


def color_enabled(stream: IO[str]) -> bool:
    """Whether to style output on ``stream``: a terminal, and NO_COLOR unset or empty
    (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def mark_terms(text: str, query: str, style: bool) -> str:
    """``text`` made safe for a terminal (`printable`), with the words that match a query
    term (same tokenizer and stemmer as the index) in bold when ``style``."""
    safe = printable(text)
    if not style:
        return safe
    terms = set(tokenize(query))
    if not terms:
        return safe

    def bold(m: re.Match[str]) -> str:
        word = m.group(0)
        return f"{BOLD}{word}{NORMAL}" if set(tokenize(word)) & terms else word

    return _WORD.sub(bold, safe)
