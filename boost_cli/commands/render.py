"""Small rendering helpers shared by the commands (the only place that prints)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Mapping, Optional

from boost_cli.core.models import KINDS


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


def progress(verb: str) -> Optional[Callable[..., None]]:
    """A ``(done, total, label="")`` callback that redraws one status line on stderr,
    or None when stderr is not a terminal (logs and pipes get no progress noise)."""
    if not sys.stderr.isatty():
        return None

    def report(done: int, total: int, label: str = "", *rest: Any) -> None:
        sys.stderr.write(f"\r  {verb} {label + ' ' if label else ''}{done}/{total}\x1b[K")
        if done >= total:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()

    return report
