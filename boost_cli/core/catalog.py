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
to a regular file inside the tap and outside its ``.git``); a file or folder whose name is
not valid UTF-8 is skipped with a warning; files over 1 MB and binary files are skipped;
text is decoded as UTF-8 with replacement. Malformed frontmatter never fails the scan: the
entry is kept and the problem becomes a warning.

The per-tap result is cached under ``cache/catalog/<tap>.json`` keyed by commit. The cache
is not trusted: `cached` checks its shape and every entry's path with the scan's own rules
(`safe_path`), and anything off makes it a miss. Whether a scan may be cached at all (the
clone really is at that commit) is the caller's call (`registry`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import AbstractSet, Any, Dict, List, Optional, Tuple

from boost_cli.core import atomic, frontmatter, paths
from boost_cli.core.models import CATALOG_VERSION, KINDS, MAX_FILE_BYTES, Entry
from boost_cli.core.text import clip

SKIP_DIRS = frozenset({".git", "node_modules", ".hg", ".svn", "__pycache__"})
RULE_FILES = frozenset({".cursorrules", ".windsurfrules", ".clinerules"})
NOT_ENTRIES = frozenset({"readme.md", "changelog.md", "license.md", "contributing.md"})
DESCRIPTION_CHARS = 300
NAME_CHARS = 120


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
    folder, _, name = rel.rpartition("/")  # string work: this runs for every cached entry
    if name == "SKILL.md":
        return "skill"
    lower = name.lower()
    if skill_dirs and ("" in skill_dirs or any(a in skill_dirs for a in _ancestors(folder))):
        return None
    parts = folder.lower().split("/") if folder else []
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


def _utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (os gives undecodable bytes
    back as lone surrogates, which no JSON file, terminal or index can carry)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A file-system name as text: bytes that are not UTF-8 become ``\\xNN``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _in_git_dir(rel_parts: Tuple[str, ...]) -> bool:
    return any(part.casefold() == ".git" for part in rel_parts)


def inside(root_real: str, path: str) -> bool:
    """Whether ``path`` resolves to somewhere in the tap outside its ``.git``."""
    real = os.path.realpath(path)
    if real == root_real:
        return True
    if not real.startswith(root_real + os.sep):
        return False
    return not _in_git_dir(tuple(Path(real[len(root_real) + 1 :]).parts))


def _walk(root: Path) -> Tuple[List[str], Dict[str, int], List[str]]:
    """Every candidate file (POSIX path relative to root), never leaving the tap; the
    skip counts; warnings for names skipped because they are not UTF-8."""
    root_real = os.path.realpath(root)
    found: List[str] = []
    warnings: List[str] = []
    skipped = {"symlink_outside": 0, "symlink_dir": 0, "bad_name": 0}

    def rel(path: str) -> str:
        return Path(path).relative_to(root).as_posix()

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d.casefold() in SKIP_DIRS:
                continue
            if not _utf8(d):
                skipped["bad_name"] += 1
                warnings.append(f"{shown_name(rel(full))}: skipped, the name is not valid UTF-8")
                continue
            if os.path.islink(full):
                skipped["symlink_dir"] += 1
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            if not _utf8(f):
                skipped["bad_name"] += 1
                warnings.append(f"{shown_name(rel(full))}: skipped, the name is not valid UTF-8")
                continue
            if os.path.islink(full) and not (inside(root_real, full) and os.path.isfile(full)):
                skipped["symlink_outside"] += 1
                continue
            found.append(rel(full))
    return found, skipped, warnings


def tap_files(root: Path) -> List[str]:
    """Every file of the tap at ``root`` the scan looks at (sorted POSIX paths relative to
    it, by the scan's rules: no ``.git``, no symlink out of the tap), entries or not: what
    the trust scan reads and a bundle carries as the tap's served files."""
    return sorted(_walk(root)[0])


def scan_tap(tap: str, root: Path) -> ScanResult:
    """Scan the folder ``root`` of tap ``tap``. Never raises for bad content."""
    files, skipped, warnings = _walk(root)
    skipped.update({"too_large": 0, "binary": 0, "unreadable": 0})
    skill_dirs = {
        (str(PurePosixPath(f).parent) if "/" in f else "")
        for f in files
        if PurePosixPath(f).name == "SKILL.md"
    }
    entries: List[Entry] = []
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
    return ScanResult(tuple(mark_repeated(entries)), tuple(warnings), skipped)


def mark_repeated(entries: List[Entry]) -> List[Entry]:
    """``entries`` with ``by_path`` set on each whose ``tap:name`` would also name another
    entry of the tap (`lookup.find` takes a name, a path or a folder), so the id search
    prints for it (``tap:path`` then) resolves to exactly that entry."""
    named: Dict[str, set] = {}
    for i, e in enumerate(entries):
        for key in {e.name, e.path, e.rel_dir}:
            named.setdefault(key, set()).add(i)
    out = []
    for e in entries:
        repeated = len(named.get(e.name, ())) > 1
        out.append(replace(e, by_path=True) if repeated != e.by_path else e)
    return out


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
    # One line, whatever it comes from: a file or folder name may hold a newline, and a
    # name is printed on one line everywhere (a second line would forge a result).
    name = (
        clip(raw_name, NAME_CHARS)
        if isinstance(raw_name, (str, int, float)) and str(raw_name).strip()
        else clip(fallback, NAME_CHARS) or clip(rel, NAME_CHARS)
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


def safe_path(root: Path, rel: Any, checked: Optional[Dict[str, bool]] = None) -> bool:
    """Whether ``rel`` names a file the scan could have found in the tap at ``root``: a
    relative POSIX path without ``.``/``..`` parts, outside ``.git``, valid UTF-8, under
    folders that are real folders (not symlinks), and either a regular file or a symlink
    to one inside the tap. ``checked`` remembers folders already looked at."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or not _utf8(rel):
        return False
    parts = tuple(rel.split("/"))
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or _in_git_dir(parts):
        return False
    if os.name == "nt" and ("\\" in rel or ":" in rel):  # pragma: no cover - Windows
        return False
    memo = {} if checked is None else checked
    base = os.fspath(root) + os.sep  # strings, not Paths: this runs for every cached entry
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if folder not in memo:
            try:
                mode = os.lstat(base + folder).st_mode
            except OSError:
                mode = 0
            memo[folder] = stat.S_ISDIR(mode)
        if not memo[folder]:
            return False
    full = base + rel
    try:
        mode = os.lstat(full).st_mode
    except OSError:
        return False
    if stat.S_ISREG(mode):
        return True
    return stat.S_ISLNK(mode) and inside(os.path.realpath(root), full) and os.path.isfile(full)


def _cache_path(tap: str) -> Path:
    return paths.catalog_cache_dir() / f"{tap}.json"


def cached(tap: str, root: Path, commit: str) -> Optional[ScanResult]:
    """The cached scan of ``tap`` at ``commit``, or None when there is none, it is for
    another commit, or anything in it is not what a scan of ``root`` could have made."""
    try:
        data = json.loads(_cache_path(tap).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no cache, or an unreadable one: the caller scans again
    if not (
        isinstance(data, dict)
        and data.get("version") == CATALOG_VERSION
        and data.get("commit") == commit
        and isinstance(data.get("entries"), list)
        and isinstance(data.get("warnings", []), list)
        and isinstance(data.get("skipped", {}), dict)
    ):
        return None
    checked: Dict[str, bool] = {}
    entries = []
    for raw in data["entries"]:
        entry = _cached_entry(raw, tap, root, checked)
        if entry is None:
            return None
        entries.append(entry)
    warnings = tuple(w for w in data.get("warnings", []) if isinstance(w, str))
    skipped = {k: v for k, v in data.get("skipped", {}).items() if isinstance(v, int)}
    return ScanResult(tuple(entries), warnings, skipped)


def _cached_entry(raw: Any, tap: str, root: Path, checked: Dict[str, bool]) -> Optional[Entry]:
    if not isinstance(raw, dict) or not all(
        isinstance(raw.get(k), str) for k in ("name", "kind", "tap", "path")
    ):
        return None
    if not isinstance(raw.get("meta", {}), dict) or not isinstance(raw.get("rel_dir", ""), str):
        return None
    try:
        entry = Entry.from_dict(raw)
    except (KeyError, TypeError, ValueError):
        return None
    folder = entry.path.rpartition("/")[0]
    if (
        entry.tap != tap
        or entry.kind not in KINDS
        or entry.rel_dir != folder
        or classify(entry.path) != entry.kind
        or not entry.name
        or entry.name != clip(entry.name, NAME_CHARS)  # one line (older caches kept newlines)
        or not safe_path(root, entry.path, checked)
    ):
        return None
    return entry


def cache_record(commit: str, result: ScanResult) -> Dict[str, Any]:
    """What the cache stores for ``result``, the scan at ``commit`` (also a bundle member)."""
    return {
        "version": CATALOG_VERSION,
        "commit": commit,
        "entries": [e.to_dict() for e in result.entries],
        "warnings": list(result.warnings),
        "skipped": result.skipped,
    }


def store(tap: str, commit: str, result: ScanResult) -> None:
    """Cache ``result`` as the scan of ``tap`` at ``commit`` (only for a clone known to be
    exactly that commit)."""
    store_record(tap, cache_record(commit, result))


def store_record(tap: str, record: Dict[str, Any]) -> None:
    """Write a `cache_record` as ``tap``'s cached scan; `cached` checks it when read."""
    atomic.write_json(_cache_path(tap), record)


def load_tap(tap: str, root: Path, commit: str, *, cache: bool = True) -> ScanResult:
    """The scan of ``tap`` at ``commit``: from the cache when it is valid, else scanned and,
    with ``cache``, cached."""
    hit = cached(tap, root, commit)
    if hit is not None:
        return hit
    result = scan_tap(tap, root)
    if cache:
        store(tap, commit, result)
    return result


def drop_cache(tap: str) -> None:
    """Forget the cached scan of ``tap``."""
    try:
        _cache_path(tap).unlink()
    except FileNotFoundError:
        return
