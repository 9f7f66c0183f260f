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


# What `printable` escapes: C0 (but tab and newline, which the caller decides about), DEL
# and C1; and every invisible Unicode format character (category Cf as of Unicode 15: soft
# hyphen, Arabic/Syriac marks, zero-width space/joiners, LRM/RLM/ALM, the bidi embeddings,
# overrides and isolates, word joiner and invisible operators, BOM, interlinear
# annotations, tag characters) plus the line and paragraph separators U+2028/U+2029. Raw,
# "pdf-forms\u200b" reads exactly like the real "pdf-forms", tag characters carry text no
# one sees, and a separator or a bidi control makes one line look like two or reorders it.
# (A zero-width joiner inside an emoji sequence is escaped too: safety over looks.)
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` safe to write to a terminal or to show an agent as boost's own line: every
    control character (C0, DEL, C1) and every invisible format character (zero-width
    spaces and joiners, bidirectional marks, embeddings, overrides and isolates, BOM, tag
    characters, line/paragraph separators) becomes a visible ``\\xNN`` / ``\\uNNNN`` /
    ``\\UNNNNNNNN`` escape, so text from a registry or a model can neither move the
    cursor, clear the screen, set the clipboard, forge an extra line nor pass for another
    name. Tabs stay; newlines stay only with ``keep_newlines``."""
    flat = str(text)
    if not keep_newlines:
        flat = flat.replace("\n", "\\n").replace("\r", "\\r")
    else:
        flat = flat.replace("\r\n", "\n").replace("\r", "\\r")
    return _CONTROL.sub(_escape, flat)


def _escape(match: re.Match) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
