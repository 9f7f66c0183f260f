"""One-line text for humans and prompts: white space folded, long text clipped with '…'.

Every place that shows a description, a reason or an error detail on one line uses these,
so a clipped text looks the same in the CLI, in MCP results and in LLM prompts.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"


def one_line(text: object) -> str:
    """``text`` as one line: every run of white space (newlines included) becomes one space."""
    return " ".join(str(text).split())


def clip(text: object, limit: int) -> str:
    """`one_line` of ``text``, cut to at most ``limit`` characters ending in '…' when longer."""
    flat = one_line(text)
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def clip_words(text: object, limit: int) -> str:
    """`one_line` of ``text`` cut at the last word boundary within ``limit`` characters
    (mid-word only when no boundary lies in the second half); no ellipsis: for text that is
    embedded or indexed, not shown."""
    flat = one_line(text)
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit + 1)
    return flat[: cut if cut > limit // 2 else limit]


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` safe to write to a terminal: every control character (C0, DEL, C1, and the
    bidirectional overrides that reorder what is shown) becomes a visible ``\\xNN`` /
    ``\\uNNNN`` escape, so text from a registry or a model can neither move the cursor,
    clear the screen, set the clipboard nor forge an extra line. Tabs stay; newlines
    stay only with ``keep_newlines``."""
    flat = str(text)
    if not keep_newlines:
        flat = flat.replace("\n", "\\n").replace("\r", "\\r")
    else:
        flat = flat.replace("\r\n", "\n").replace("\r", "\\r")
    return _CONTROL.sub(_escape, flat)


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
