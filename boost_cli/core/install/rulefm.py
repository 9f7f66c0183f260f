"""A rule's "where it applies" in each agent's own frontmatter keys (pure).

Registries write rules for one agent: Cursor's ``globs:`` and ``alwaysApply:``, Claude
Code's ``paths:``, Copilot's ``applyTo:``, Windsurf's ``trigger:`` with ``globs:``. Each
agent reads only its own keys (Claude Code ignores ``globs:``, so a Cursor rule copied as
it is loads for every file or never), so `convert` rewrites those keys, and only those,
for the agent a rule is installed into:

- claude, cline: ``paths:`` as a YAML list of quoted patterns; no key when it always applies;
- cursor: ``globs: a,b`` and ``alwaysApply: true|false``;
- windsurf: ``trigger: glob`` with ``globs: a,b``, or ``trigger: always_on``;
- copilot: ``applyTo: "a,b"`` (``"**"`` when it always applies).

A file without those keys, without frontmatter, not UTF-8 or with CRLF line ends is left
byte for byte as it is. Every other frontmatter line and the body are kept as they are.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

_KEYS = ("globs", "paths", "applyto", "alwaysapply", "trigger")


def _split_patterns(value: str) -> List[str]:
    """``a, b`` or ``["a", "b"]`` as patterns; commas inside ``{…}`` do not split."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    out, depth, cur = [], 0, ""
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip().strip("'\"").strip() for p in out if p.strip().strip("'\"").strip()]


def read(lines: List[str]) -> Tuple[List[str], Optional[List[str]], Optional[bool]]:
    """Frontmatter ``lines`` without the "where" keys, the patterns they give (None: none
    given) and whether the rule always applies (None: not said)."""
    kept: List[str] = []
    patterns: Optional[List[str]] = None
    always: Optional[bool] = None
    i = 0
    while i < len(lines):
        line = lines[i]
        key, colon, value = line.partition(":")
        name = key.strip().lower()
        if colon and line[:1] not in (" ", "\t", "-") and name in _KEYS:
            items = []
            while (
                i + 1 < len(lines)
                and lines[i + 1].lstrip().startswith("- ")
                and lines[i + 1][:1] in (" ", "\t", "-")
            ):
                i += 1
                items.append(lines[i].lstrip()[2:])
            value = value.strip()
            if name in ("globs", "paths", "applyto"):
                found = _split_patterns(value) if value else []
                found += [p for item in items for p in _split_patterns(item)]
                if found == ["**"] or found == ["**/*"]:
                    always = True if always is None else always
                elif found:
                    patterns = (patterns or []) + found
            elif name == "alwaysapply":
                always = value.lower() == "true"
            elif name == "trigger":
                if value.strip("'\"") == "always_on":
                    always = True
                elif value.strip("'\"") in ("manual", "model_decision"):
                    always = False if always is None else always
            i += 1
            continue
        kept.append(line)
        i += 1
    return kept, patterns, always


def write(agent: str, patterns: Optional[List[str]], always: Optional[bool]) -> List[str]:
    """The "where" lines for ``agent`` (see the module docstring)."""
    if agent in ("claude", "cline"):
        if not patterns:
            return []
        return ["paths:", *(f'  - "{p}"' for p in patterns)]
    if agent == "cursor":
        out = [f"globs: {','.join(patterns)}"] if patterns else []
        return out + [f"alwaysApply: {'true' if always and not patterns else 'false'}"]
    if agent == "windsurf":
        if patterns:
            return ["trigger: glob", f"globs: {','.join(patterns)}"]
        return ["trigger: always_on"] if always else ["trigger: model_decision"]
    if agent == "copilot":
        if patterns:
            return [f'applyTo: "{",".join(patterns)}"']
        return ['applyTo: "**"'] if always else []
    return []


def convert(data: bytes, agent: str) -> bytes:
    """``data`` (a rule file) with its "where" keys in ``agent``'s own (module docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    if not text.startswith("---\n") or "\r" in text:
        return data
    end = text.find("\n---", 3)
    if end < 0 or text[end + 4 : end + 5] not in ("", "\n"):
        return data
    lines = text[4:end].split("\n") if end > 3 else []
    if not any(ln.partition(":")[0].strip().lower() in _KEYS for ln in lines if ":" in ln):
        return data
    kept, patterns, always = read(lines)
    head = [ln for ln in kept if ln.strip()] + write(agent, patterns, always)
    if not head:
        return text[end + 5 :].encode("utf-8")
    return ("---\n" + "\n".join(head) + text[end:]).encode("utf-8")
