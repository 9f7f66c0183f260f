"""The catalog scan: walk a tap's folder and turn its files into `Entry` objects.

Recognised kinds:
- skill: every ``SKILL.md``; other files inside a skill's folder are supporting files.
- rule: ``*.mdc``; ``.cursorrules`` / ``.windsurfrules`` / ``.clinerules`` (a file, or a
  folder of Markdown files); anything Markdown under ``.cursor/rules/``; ``*.md`` under a
  ``rules/`` folder.
- workflow: ``*.md`` under a ``commands/`` or ``agents/`` folder (Claude Code slash
  commands and subagents, ``plugins/*/commands|agents`` included).

Safety: ``.git`` and ``node_modules`` are skipped; symlinks are never followed out of the
tap (a symlinked folder is not entered at all; a symlinked file counts only when it resolves
to a regular file inside the tap); files over 1 MB and binary files are skipped; text is
decoded as UTF-8 with replacement. Malformed frontmatter never fails the scan: the entry
is kept and the problem becomes a warning.

The per-tap result is cached under ``cache/catalog/<tap>.json`` keyed by commit.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import AbstractSet, Any, Dict, List, Optional, Tuple

from boost_cli.core import atomic, frontmatter, paths
from boost_cli.core.models import MAX_FILE_BYTES, Entry
from boost_cli.core.text import clip

CACHE_VERSION = 2
SKIP_DIRS = frozenset({".git", "node_modules", ".hg", ".svn", "__pycache__"})
RULE_FILES = frozenset({".cursorrules", ".windsurfrules", ".clinerules"})
NOT_ENTRIES = frozenset({"readme.md", "changelog.md", "license.md", "contributing.md"})
DESCRIPTION_CHARS = 300


@dataclass(frozen=True)
class ScanResult:
    """What one tap's scan found: entries (sorted by path) and human-readable warnings."""

    entries: Tuple[Entry, ...]
    warnings: Tuple[str, ...] = ()
    skipped: Dict[str, int] = field(default_factory=dict, compare=False, hash=False)

    def counts(self) -> Dict[str, int]:
        out = {"skill": 0, "rule": 0, "workflow": 0}
        for e in self.entries:
            out[e.kind] += 1
        return out


def classify(rel: str, skill_dirs: AbstractSet[str] = frozenset()) -> Optional[str]:
    """The kind of the file at POSIX path ``rel`` (relative to the tap), or None.

    ``skill_dirs`` are the folders (relative, "" for the root) that hold a SKILL.md:
    files inside them, other than a SKILL.md, are supporting files, not entries.
    """
    p = PurePosixPath(rel)
    if p.name == "SKILL.md":
        return "skill"
    lower = p.name.lower()
    if skill_dirs:
        folder = str(p.parent) if str(p.parent) != "." else ""
        if "" in skill_dirs or any(a in skill_dirs for a in _ancestors(folder)):
            return None
    parts = [x.lower() for x in p.parts[:-1]]
    if lower in RULE_FILES:
        return "rule"
    if any(x in RULE_FILES for x in parts) and lower.endswith((".md", ".mdc", ".txt")):
        return "rule"
    if lower.endswith(".mdc"):
        return "rule"
    if not lower.endswith(".md") or lower in NOT_ENTRIES:
        return None
    for i, x in enumerate(parts):
        if x == "rules" and (i > 0 and parts[i - 1] == ".cursor"):
            return "rule"
    # The nearest recognised folder decides (a rules/ folder inside commands/ is a rule).
    for x in reversed(parts):
        if x == "rules":
            return "rule"
        if x in ("commands", "agents"):
            return "workflow"
    return None


def _ancestors(folder: str) -> List[str]:
    """``a/b/c`` → ``["a/b/c", "a/b", "a"]``."""
    out = []
    while folder:
        out.append(folder)
        folder = folder.rpartition("/")[0]
    return out


def _first_paragraph(body: str) -> str:
    para: List[str] = []
    in_fence = False
    for line in body.splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            in_fence = not in_fence
            if para:
                break
            continue
        if in_fence:
            continue
        if not s:
            if para:
                break
            continue
        if s.startswith("#") or s.startswith(("---", "===", "<!--", "|", "![")):
            if para:
                break
            continue
        para.append(s)
    text = " ".join(para)
    text = re.sub(r"[*_`]+", "", text)
    return clip(text, DESCRIPTION_CHARS)


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _within(root_real: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


def _walk(root: Path) -> Tuple[List[str], Dict[str, int]]:
    """Every candidate file (POSIX path relative to root), never leaving the tap."""
    root_real = os.path.realpath(root)
    found: List[str] = []
    skipped = {"symlink_outside": 0, "symlink_dir": 0}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS:
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                skipped["symlink_dir"] += 1
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            if os.path.islink(full) and not (_within(root_real, full) and os.path.isfile(full)):
                skipped["symlink_outside"] += 1
                continue
            found.append(Path(full).relative_to(root).as_posix())
    return found, skipped


def scan_tap(tap: str, root: Path) -> ScanResult:
    """Scan the folder ``root`` of tap ``tap``. Never raises for bad content."""
    files, skipped = _walk(root)
    skipped.update({"too_large": 0, "binary": 0, "unreadable": 0})
    skill_dirs = {
        (str(PurePosixPath(f).parent) if "/" in f else "")
        for f in files
        if PurePosixPath(f).name == "SKILL.md"
    }
    entries: List[Entry] = []
    warnings: List[str] = []
    for rel in files:
        kind = classify(rel, skill_dirs)
        if kind is None:
            continue
        full = root / rel
        try:
            size = full.stat().st_size
            if size > MAX_FILE_BYTES:
                skipped["too_large"] += 1
                warnings.append(f"{rel}: skipped, larger than 1 MB")
                continue
            data = full.read_bytes()
        except OSError as exc:
            skipped["unreadable"] += 1
            warnings.append(f"{rel}: skipped, cannot read ({exc.strerror})")
            continue
        if _is_binary(data):
            skipped["binary"] += 1
            warnings.append(f"{rel}: skipped, binary file")
            continue
        text = data.decode("utf-8", errors="replace")
        meta, body, warning = frontmatter.parse_lenient(text)
        if warning:
            warnings.append(f"{rel}: frontmatter: {warning}")
        entries.append(_entry(tap, rel, kind, meta, body))
    return ScanResult(tuple(entries), tuple(warnings), skipped)


def _entry(tap: str, rel: str, kind: str, meta: Dict[str, Any], body: str) -> Entry:
    p = PurePosixPath(rel)
    folder = str(p.parent) if str(p.parent) != "." else ""
    if kind == "skill":
        fallback = p.parent.name or tap
    elif p.name.lower() in RULE_FILES:
        fallback = p.name.lstrip(".")
    else:
        fallback = p.stem
    raw_name = meta.get("name")
    name = (
        clip(raw_name, 120)
        if isinstance(raw_name, (str, int, float)) and str(raw_name).strip()
        else fallback
    )
    desc = meta.get("description")
    description = (
        clip(desc, DESCRIPTION_CHARS)
        if isinstance(desc, (str, int, float)) and str(desc).strip()
        else _first_paragraph(body)
    )
    return Entry(
        name=name, kind=kind, description=description, tap=tap, rel_dir=folder, path=rel, meta=meta
    )


# --------------------------------------------------------------------------- cache


def _cache_path(tap: str) -> Path:
    return paths.catalog_cache_dir() / f"{tap}.json"


def load_tap(tap: str, root: Path, commit: str) -> ScanResult:
    """The scan of ``tap`` at ``commit``: from the cache when it matches, else scanned and cached."""
    cache = _cache_path(tap)
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("version") == CACHE_VERSION and data.get("commit") == commit:
            return ScanResult(
                tuple(Entry.from_dict(e) for e in data["entries"]),
                tuple(data.get("warnings", ())),
                dict(data.get("skipped", {})),
            )
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no cache, or an unreadable one: rescan below and overwrite it
    result = scan_tap(tap, root)
    atomic.write_json(
        cache,
        {
            "version": CACHE_VERSION,
            "commit": commit,
            "entries": [e.to_dict() for e in result.entries],
            "warnings": list(result.warnings),
            "skipped": result.skipped,
        },
    )
    return result


def drop_cache(tap: str) -> None:
    """Forget the cached scan of ``tap``."""
    try:
        _cache_path(tap).unlink()
    except FileNotFoundError:
        return
