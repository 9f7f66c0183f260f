"""How boost talks to a terminal: the only place that prints.

Conventions (gh, ripgrep, https://no-color.org):

- **Width.** ``COLUMNS`` when set, else the terminal's width; output that goes to a pipe or a
  file (no ``COLUMNS``) is never wrapped or truncated, so ``grep`` and scripts see whole lines.
- **Colour.** ``--color auto`` (the default) styles only a terminal, and not when ``NO_COLOR``
  is set or ``TERM=dumb``; ``--color always`` / ``never`` override both.
- **Verbosity.** ``-q`` drops progress and notes (results and errors stay); ``-v`` adds
  detail lines on stderr. Progress is one redrawn line on stderr, only on a terminal.

Text from a registry or a model goes through `printable` before it is shown (`table` and
`mark_terms` do it themselves), and styling is added after wrapping, so escape codes never
count towards a line's width.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, List, Mapping, Optional, Sequence

from boost_cli.core import advice
from boost_cli.core.models import KINDS
from boost_cli.core.text import ELLIPSIS, printable
from boost_cli.core.tokenize import tokenize

BOLD, NORMAL = "\x1b[1m", "\x1b[22m"
DIM = "\x1b[2m"
RED, YELLOW, GREEN, CYAN, DEFAULT = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[36m", "\x1b[39m"
COLOR_MODES = ("auto", "always", "never")
MIN_WIDTH = 20  # narrower than this, wrapping does more harm than good
_WORD = re.compile(r"[^\W_]+")


@dataclass
class Settings:
    """What the command line chose for this run (`configure`)."""

    color: str = "auto"
    verbosity: int = 0  # -1 quiet, 0 normal, 1+ verbose


settings = Settings()


def configure(color: str = "auto", verbosity: int = 0) -> None:
    """Set this run's colour mode (one of `COLOR_MODES`) and verbosity; `cli.main` calls it."""
    settings.color = color if color in COLOR_MODES else "auto"
    settings.verbosity = verbosity


def quiet() -> bool:
    return settings.verbosity < 0


def verbose() -> bool:
    return settings.verbosity > 0


def out(text: str = "") -> None:
    print(text)


def err(text: str) -> None:
    print(text, file=sys.stderr)


def note(text: str) -> None:
    """A remark on stderr (a degradation, a hint); dropped with ``-q``. On a terminal it is
    wrapped at words (the terminal would cut it mid-word); to a pipe or a file, one line."""
    if quiet():
        return
    columns = width(sys.stderr) if _isatty(sys.stderr) else None
    if columns is None or len(text) <= columns:
        err(text)
        return
    for line in wrap(text, "  ", columns, first=""):
        err(line)


def advise(name: str, text: Callable[[], str]) -> bool:
    """A hint (`core.advice`): a `note` only for a person at a terminal (stdout and stderr
    both ttys: nothing extra when the output is piped), without ``-q``, when the setting
    ``advice.<name>`` is on and the hint was not shown in the last day. ``text`` is called
    only then (composing a hint may cost imports). Whether it was shown."""
    if quiet() or not (_isatty(sys.stdout) and _isatty(sys.stderr)) or not advice.due(name):
        return False
    note(text())
    advice.shown(name)
    return True


def detail(text: str) -> None:
    """Extra information on stderr, shown only with ``-v``."""
    if verbose():
        err(text)


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


# --------------------------------------------------------------------------- terminal


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def width(stream: Optional[IO[str]] = None) -> Optional[int]:
    """The columns to fit output to: ``COLUMNS`` when it is a positive number, else the
    terminal's width when ``stream`` (default stdout) is a terminal, else None (no limit)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    if not _isatty(sys.stdout if stream is None else stream):
        return None
    return max(shutil.get_terminal_size().columns, MIN_WIDTH)


def color_enabled(stream: IO[str]) -> bool:
    """Whether to style output on ``stream``: ``--color always``/``never`` decide; with
    ``auto``, a terminal, ``NO_COLOR`` unset or empty (https://no-color.org), TERM not dumb."""
    if settings.color != "auto":
        return settings.color == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def paint(text: str, start: str, on: bool, end: str = "\x1b[0m") -> str:
    """``text`` between ``start`` and ``end`` when ``on``; empty text stays empty."""
    return f"{start}{text}{end}" if on and text else text


def wrap(
    text: str, indent: str = "", columns: Optional[int] = None, first: Optional[str] = None
) -> List[str]:
    """``text`` (one paragraph) as lines of at most ``columns`` characters, each starting
    with ``indent`` (the first with ``first`` when given); words are never broken: a longer
    word gets a line of its own. With ``columns`` None, one line."""
    lead = indent if first is None else first
    if columns is None:
        return [lead + text]
    lines = textwrap.wrap(
        text,
        width=max(columns, len(indent) + 10),
        initial_indent=lead,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [part for line in lines for part in fold(line, columns, indent)] or [lead.rstrip()]


_BREAKS = "/:"


def fold(line: str, columns: Optional[int], indent: str = "") -> List[str]:
    """``line`` (one word longer than the width, such as an id ``tap:dir/dir/SKILL.md``)
    cut after a ``/`` or ``:`` so no part is wider than ``columns``, the rest under
    ``indent``; never inside a name between separators (a line the terminal wraps by
    itself breaks mid-word)."""
    if columns is None or len(line) <= columns:
        return [line]
    out: List[str] = []
    while len(line) > columns:
        cut = max(line.rfind(c, len(indent) + 1, columns) for c in _BREAKS)
        if cut <= len(indent):
            break  # no separator to cut at: leave it whole
        out.append(line[: cut + 1])
        line = indent + line[cut + 1 :]
    out.append(line)
    return out


def id_lines(ident: str, columns: Optional[int], indent: str = "    ") -> List[str]:
    """An id on a line of its own, whole so it copies as one: under ``indent`` when it fits
    there, else from the first column when it fits the width, else `fold`ed (cut only
    after a ``/`` or ``:``: a line the terminal wraps breaks mid-word)."""
    if columns is None or len(indent) + len(ident) <= columns:
        return [indent + ident]
    if len(ident) <= columns:
        return [ident]
    return fold(indent + ident, columns, indent)


def say(text: str, indent: str = "  ", first: str = "") -> None:
    """Print ``text`` wrapped to the terminal, later lines under ``indent`` (see `wrap`)."""
    for line in wrap(text, indent, width(), first=first):
        out(line)


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


# --------------------------------------------------------------------------- tables

MIN_COLUMN = 10  # a wrapped column never gets narrower than this (or its header)


def table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str],
    *,
    columns: Optional[int] = None,
    optional: Sequence[int] = (),
    wrap_cols: Sequence[int] = (),
    numeric: Sequence[int] = (),
    style: bool = False,
) -> str:
    """Rows under ``headers``, columns two spaces apart, every cell made `printable`.

    To fit ``columns`` (None: no limit), the ``optional`` columns are dropped in the order
    given until the table fits, then the ``wrap_cols`` are narrowed, widest first, and their
    cells wrapped onto extra lines. ``numeric`` columns are right-aligned; ``style`` makes
    the header bold.
    """
    cells = [[printable(c) for c in r] for r in rows]
    head = [str(h) for h in headers]
    natural = [max(len(r[i]) for r in [head, *cells]) for i in range(len(head))]
    shown = list(range(len(head)))

    def total() -> int:
        return sum(widths[i] for i in shown) + 2 * (len(shown) - 1)

    widths = list(natural)
    if columns is not None:
        for i in optional:
            if total() <= columns:
                break
            shown.remove(i)
        for i in sorted(wrap_cols, key=lambda c: -widths[c]):
            excess = total() - columns
            if excess <= 0 or i not in shown:
                continue
            floor = min(natural[i], max(len(head[i]), MIN_COLUMN))
            widths[i] -= min(excess, widths[i] - floor)
    lines: List[str] = []
    for n, row in enumerate([head, *cells]):
        parts = [_cell_lines(row[i], widths[i]) for i in shown]
        for k in range(max(len(p) for p in parts)):
            line = "  ".join(
                _pad(p[k] if k < len(p) else "", widths[i], i in numeric)
                for p, i in zip(parts, shown)
            ).rstrip()
            lines.append(paint(line, BOLD, style and n == 0, NORMAL))
    return "\n".join(lines)


def _cell_lines(text: str, limit: int) -> List[str]:
    if len(text) <= limit:
        return [text]
    return textwrap.wrap(text, width=limit, break_long_words=True) or [""]


def _pad(text: str, size: int, right: bool) -> str:
    return text.rjust(size) if right else text.ljust(size)


# --------------------------------------------------------------------------- progress


class Status:
    """One status line on stderr, redrawn in place and cleared by `clear` (or on leaving a
    ``with`` block). Silent when stderr is not a terminal or with ``-q``: logs and pipes get
    no progress noise."""

    def __init__(self, stream: Optional[IO[str]] = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.active = _isatty(self.stream) and not quiet()
        self.shown = False

    def show(self, text: str) -> None:
        if not self.active:
            return
        limit = (width(self.stream) or 80) - 1  # a wrapped status line cannot be redrawn
        text = printable(text)
        if len(text) > limit:
            text = text[: limit - 1] + ELLIPSIS
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def __enter__(self) -> Status:
        return self

    def __exit__(self, *exc: object) -> None:
        self.clear()


def duration(seconds: float) -> str:
    """``seconds`` as a person reads a wait: "8 s", "3 min 05 s", "1 h 02 min"."""
    whole = max(0, int(round(seconds)))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


ETA_AFTER = 2.0  # seconds of progress before an estimate of the time left is worth showing


def progress(
    verb: str,
    status: Optional[Status] = None,
    label: Optional[Callable[..., str]] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Optional[Callable[..., None]]:
    """A ``(done, total, name="")`` callback drawing ``  <verb> <done>/<total> · <label>`` on
    ``status`` (default: a new one), or None when the status line is silent. ``label`` turns
    the callback's arguments into the text after the count (default: ``name``).

    Once the work has gone on for `ETA_AFTER` seconds the line ends with the time left
    (`` · 3 min 05 s left`` after the count, before the label, so a narrow terminal cuts the label rather than the estimate), from the rate since the first report of this ``total`` (a
    new total starts a new count)."""
    status = status or Status()
    if not status.active:
        return None
    first: List[float] = []  # when, done, total: the first report of this total

    def report(done: int, total: int, name: str = "", *rest: Any) -> None:
        now = clock()
        if not first or first[2] != total or done < first[1]:
            first[:] = [now, done, total]
        spent, since = now - first[0], done - first[1]
        parts = []
        # The estimate before the label: a long label is what the line's width cuts.
        if done < total and since > 0 and spent >= ETA_AFTER:
            parts.append(f"{duration(spent * (total - done) / since)} left")
        parts.append(label(done, total, name) if label else name)
        text = " · ".join(p for p in parts if p)
        status.show(f"  {verb} {done}/{total}{' · ' + text if text else ''}")

    return report
