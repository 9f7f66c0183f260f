"""One-line text for humans and prompts: white space folded, long text clipped with '…'.

Every place that shows a description, a reason or an error detail on one line uses these,
so a clipped text looks the same in the CLI, in MCP results and in LLM prompts.
"""

from __future__ import annotations

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
