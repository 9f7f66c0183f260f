"""Look-alike names: an entry whose name reads as a well-known skill's name without being
it (Cyrillic or Greek letters, ``0`` for ``o``, ``rn`` for ``m``), or whose words mix
Latin letters with another script. Pure functions; one of the `trust` rules.

The well-known names are those of the skills people know by name (Anthropic's, the
default registries' best known); `lookalike` takes others (a team's own) as ``known``.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from boost_cli.core.text import clip
from boost_cli.core.trust import EXCERPT_CHARS, Finding, escape
from boost_cli.core.trust_reading import CONFUSABLES

# Names of skills people know by name (Anthropic's and the default registries' best known):
# an entry elsewhere whose name reads as one of these, but is not it, is a look-alike.
WELL_KNOWN = frozenset(
    [
        "algorithmic-art",
        "brand-guidelines",
        "canvas-design",
        "doc-coauthoring",
        "docx",
        "frontend-design",
        "internal-comms",
        "mcp-builder",
        "pdf",
        "pptx",
        "skill-creator",
        "slack-gif-creator",
        "theme-factory",
        "web-artifacts-builder",
        "webapp-testing",
        "xlsx",
        "brainstorming",
        "dispatching-parallel-agents",
        "executing-plans",
        "finishing-a-development-branch",
        "receiving-code-review",
        "requesting-code-review",
        "subagent-driven-development",
        "systematic-debugging",
        "test-driven-development",
        "using-git-worktrees",
        "using-superpowers",
        "verification-before-completion",
        "writing-plans",
        "writing-skills",
        "code-review",
        "commit",
        "commit-commands",
        "feature-dev",
        "frontend-design",
        "hookify",
        "plugin-dev",
        "pr-review-toolkit",
        "security-guidance",
        "agent-sdk-dev",
        "claude-md-management",
        "code-simplifier",
        "playwright",
        "github",
    ]
)
# Characters that read as a Latin letter: the table the text rules fold with (Cyrillic,
# Greek, Latin extensions), Greek beta and ASCII swaps (fullwidth below).
_CONFUSABLE = {
    **CONFUSABLES,
    "β": "b",
    "0": "o",
    "1": "l",
    "|": "l",
    "ı": "i",
    "ɡ": "g",
    "ⅼ": "l",
}
_FULLWIDTH = {chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}


def skeleton(name: str) -> str:
    """``name`` as it reads: confusable characters as the Latin letter they look like,
    case folded, ``_`` and spaces as ``-``, ``rn`` as ``m``."""
    out = "".join(_CONFUSABLE.get(ch, _FULLWIDTH.get(ch, ch)) for ch in name)
    out = re.sub(r"[\s_]+", "-", out.casefold().strip())
    return out.replace("rn", "m")


def readings(name: str) -> Tuple[str, ...]:
    """Every way ``name`` reads: its `skeleton`, and, when it holds a capital ``I``, the
    skeleton with that ``I`` read as a lowercase ``l`` (``xIsx`` for ``xlsx``: the two are
    one glyph in many sans-serif fonts, and case folding alone would read ``xisx``)."""
    first = skeleton(name)
    if "I" not in name:
        return (first,)
    second = skeleton(name.replace("I", "l"))
    return (first,) if second == first else (first, second)


def _folded(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.casefold().strip())


@functools.lru_cache(maxsize=8)
def _skeletons(known: FrozenSet[str]) -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, List[str]] = {}
    for k in sorted(known):
        out.setdefault(skeleton(k), []).append(k)
    return {sk: tuple(ks) for sk, ks in out.items()}


def _script(ch: str) -> Optional[str]:
    o = ord(ch)
    if ch.isascii():
        return "latin" if ch.isalpha() else None
    if 0x0400 <= o <= 0x052F:
        return "cyrillic"
    if 0x0370 <= o <= 0x03FF:
        return "greek"
    if 0x00C0 <= o <= 0x024F:
        return "latin"
    return "other" if ch.isalpha() else None


def lookalike(name: str, file: str, known: Iterable[str] = WELL_KNOWN) -> List[Finding]:
    """A name that reads as a well-known name without being it (high), or a word that
    mixes Latin letters with Cyrillic or Greek ones (medium)."""
    plain = name.strip()
    if not plain:
        return []
    known_set = {k.casefold() for k in known}
    shown = escape(clip(plain, EXCERPT_CHARS))
    folded = _folded(plain)
    if folded not in known_set:
        table = _skeletons(frozenset(known_set))
        for k in (k for sk in readings(plain) for k in table.get(sk, ())):
            if folded != _folded(k):
                return [
                    Finding(
                        "lookalike",
                        "high",
                        file,
                        0,
                        f"the name reads as {k!r} but is not it",
                        shown,
                    )
                ]
    if plain.isascii():
        return []
    for word in re.split(r"[\s\-_./:]+", plain):
        scripts = {s for s in map(_script, word) if s}
        if "latin" in scripts and scripts & {"cyrillic", "greek"}:
            return [
                Finding(
                    "lookalike", "medium", file, 0, "the name mixes Latin with other letters", shown
                )
            ]
    return []


def across_taps(names: Iterable[Tuple[str, str, str]]) -> Dict[Tuple[str, str], Finding]:
    """Look-alikes between taps: ``names`` are ``(tap, path, name)`` of every tapped entry;
    an entry whose name holds a look-alike character (its `skeleton` differs from the name
    itself) and reads as another tap's entry's name without being it gets a high finding,
    keyed by ``(tap, path)``. The plain original is not flagged."""
    groups: Dict[str, List[Tuple[str, str, str]]] = {}
    for tap, path, name in names:
        if name.strip():
            for sk in readings(name):
                groups.setdefault(sk, []).append((tap, path, name))
    out: Dict[Tuple[str, str], Finding] = {}
    for sk, members in groups.items():
        if len(members) < 2:
            continue
        for tap, path, name in members:
            folded = _folded(name)
            if folded == sk or (tap, path) in out:
                continue  # nothing in it reads as something else, or already flagged
            others = sorted({(t, n) for t, _, n in members if t != tap and _folded(n) != folded})
            if others:
                t, n = others[0]
                out[(tap, path)] = Finding(
                    "lookalike",
                    "high",
                    path,
                    0,
                    f"the name reads as {escape(clip(n, 80))!r} in tap {t!r} but is not it",
                    escape(clip(name, EXCERPT_CHARS)),
                )
    return out
