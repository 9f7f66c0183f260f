"""Installing a found item where an agent loads it: the file I/O around `plan`.

``install`` reads the item's files from its tap (a skill: its folder's files, by the scan's
rules; anything else: its one file), asks `plan.plan` what to do given the manifest and the
disk, and, unless it is a dry run or something conflicts, writes each file atomically and
records it in the manifest (`manifest`). Safety:

- every destination is built from validated names (`plan.safe_name`, `plan.check_rel`), so
  it is inside the target folder; the final parent's real path is checked again;
- no symlink is followed: in the project scope none may be on the way from the project
  folder to a file (a cloned repository could carry ``.claude/skills -> /etc``); in the user
  scope the agent's own folders may be the user's symlinks (dotfiles), the item's may not;
- a file boost did not write, or the user edited, is never replaced without ``force``;
- a trust check (`trust.findings`, the trust scan's) may refuse an item: high-severity findings block it
  unless ``force``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from boost_cli.core import atomic, lookup
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.install import manifest, plan, trust
from boost_cli.core.models import MAX_FILE_BYTES, unescape_id

MAX_FILES = lookup.MAX_LISTED  # a skill folder with more is likely a whole repository


class ConflictError(BoostError):
    """Files in the way that boost must not overwrite. Exit code 1."""


@dataclass(frozen=True)
class Scope:
    """Where items go: ``base`` (the project folder or the home folder) and its manifest."""

    user: bool
    base: Path

    @property
    def manifest_path(self) -> Path:
        return manifest.path_for(self.user, self.base)


def scope(user: bool, project: Optional[str] = None) -> Scope:
    base = Path.home() if user else Path(project or os.getcwd())
    try:
        base = base.resolve()
    except OSError as exc:
        raise UsageError(f"cannot resolve {base}: {exc.strerror}", None) from exc
    if not base.is_dir():
        raise UsageError(f"{base} is not a folder", "give an existing project folder")
    return Scope(user, base)


@dataclass(frozen=True)
class Result:
    id: str
    plan: plan.Plan
    scope: Scope
    applied: bool
    commit: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """The JSON shape of `boost install --json` and the MCP tool's structured result."""
        p = self.plan
        return {
            "id": self.id,
            "commit": self.commit,
            "agent": p.target.agent,
            "kind": p.target.kind,
            "scope": "user" if self.scope.user else "project",
            "base": str(self.scope.base),
            "target": p.target.key,
            "applied": self.applied,
            "actions": [
                {"action": a.action, "path": a.dest, **({"why": a.why} if a.why else {})}
                for a in p.actions
            ],
            "findings": list(p.findings),
            "notes": list(p.notes),
        }


def item_files(found: lookup.Found) -> Tuple[Dict[str, bytes], List[str]]:
    """The item's files (rel path → bytes) and notes on files left out."""
    notes: List[str] = []
    folder = lookup.folder_of(found)
    if folder is None:
        name = found.entry.path.rsplit("/", 1)[-1]
        return {name: found.file.read_bytes()}, notes
    rels, total = lookup.folder_files(found)
    if total > MAX_FILES:
        raise UsageError(
            f"{found.entry.qualified_name}'s folder holds {total} files (more than {MAX_FILES})",
            "it looks like a whole repository; copy what you need by hand",
        )
    out: Dict[str, bytes] = {}
    for rel in rels:
        path = folder / rel
        if path.stat().st_size > MAX_FILE_BYTES:
            notes.append(f"left out {rel}: larger than 1 MB")
            continue
        out[plan.check_rel(rel)] = path.read_bytes()
    return out, notes


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def on_disk(base: Path, dest: str) -> Optional[str]:
    """The sha256 of the regular file at ``base/dest``, None when nothing is there, ``"!"``
    for anything else (a symlink, a folder, a device)."""
    path = base / dest
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return "!"
    if not stat.S_ISREG(st.st_mode):
        return "!"
    with open(path, "rb") as fh:
        return digest(fh.read())


def check_path(sc: Scope, tgt: plan.Target, dest: str) -> None:
    """Refuse a destination that goes through a symlink (see the module docstring)."""
    parts = dest.split("/")
    # The item's own part of the path: a skill's folder and below, or the one file.
    own = len(tgt.folder.split("/")) if tgt.single is None else len(parts)
    first = own if sc.user else 1
    for depth in range(first, len(parts) + 1):
        sub = sc.base.joinpath(*parts[:depth])
        if sub.is_symlink():
            raise UsageError(
                f"refusing to write through the symlink {sub}",
                "remove the link, or install into another folder",
            )
    root = os.path.realpath(sc.base / tgt.folder) if sc.user else str(sc.base)
    real = os.path.realpath(sc.base / dest)
    if not real.startswith(root + os.sep):
        raise UsageError(f"refusing to write {dest}: it resolves outside {root}", None)


def install(
    name: str,
    *,
    user: bool = False,
    project: Optional[str] = None,
    agent: Optional[str] = None,
    as_name: Optional[str] = None,
    dry_run: bool = False,
    force: bool = False,
    upgrade: bool = False,
) -> Result:
    """Install the item ``name`` (an id as search prints it); see the module docstring."""
    sc = scope(user, project)
    found = lookup.read(name)
    tgt = plan.target(found.entry, agent, user, as_name)
    files, notes = item_files(found)
    digests = {rel: digest(data) for rel, data in files.items()}
    book = manifest.load(sc.manifest_path)
    record = book.get(tgt.key)
    if (
        record
        and not upgrade
        and not force
        and record.get("files") != {tgt.dest(r): d for r, d in digests.items()}
    ):
        raise UsageError(
            f"{tgt.key} is installed from {record.get('id')} @ {str(record.get('commit'))[:10]}",
            "update it with 'boost install --upgrade ID', or give --force",
        )
    recorded = record.get("files") if record else None
    interest = {tgt.dest(r) for r in digests} | set(recorded or {})
    disk = {d: on_disk(sc.base, d) for d in interest}
    p = plan.plan(tgt, digests, disk, recorded, force)
    scanned = trust.findings(found)
    p = plan.Plan(p.target, p.actions, trust.shown(scanned), tuple(notes))
    entry = found.entry
    if dry_run:
        return Result(entry.qualified_name, p, sc, False, found.snapshot.commit)
    high = trust.high_findings(scanned)
    if high and not force:
        raise ConflictError(
            f"{entry.qualified_name} has high-severity trust findings: {'; '.join(high[:3])}"
            + (f" (+{len(high) - 3} more)" if len(high) > 3 else ""),
            "read them with 'boost show ID' (or 'boost audit TAP'); install anyway with --force",
        )
    if p.conflicts:
        shown = "; ".join(f"{a.dest} ({a.why})" for a in p.conflicts[:5])
        raise ConflictError(
            f"not installing {entry.qualified_name}: {shown}",
            "move your file away, or overwrite it with --force (see --dry-run)",
        )
    for a in p.actions:
        check_path(sc, tgt, a.dest)
    for a in p.actions:
        if a.action in (plan.WRITE, plan.UPDATE):
            atomic.write_bytes(sc.base / a.dest, files[a.rel])
        elif a.action == plan.REMOVE:
            _remove(sc, a.dest)
    with manifest.editing(sc.manifest_path) as items:
        items[tgt.key] = {
            "id": entry.qualified_name,
            "tap": entry.tap,
            "path": entry.path,
            "commit": found.snapshot.commit,
            "agent": tgt.agent,
            "kind": tgt.kind,
            "files": {tgt.dest(r): d for r, d in sorted(digests.items())},
            "installed": manifest.now(),
        }
    return Result(entry.qualified_name, p, sc, True, found.snapshot.commit)


def _remove(sc: Scope, dest: str) -> None:
    path = sc.base / dest
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    parent = path.parent
    while parent != sc.base and parent.is_dir() and not parent.is_symlink():
        try:
            os.rmdir(parent)  # only when empty
        except OSError:
            break
        parent = parent.parent


def uninstall(
    key_or_id: str,
    *,
    user: bool = False,
    project: Optional[str] = None,
    dry_run: bool = False,
    force: bool = False,
) -> Tuple[str, plan.Plan, Scope]:
    """Remove an installed item (by its id or its installed path) and its manifest record."""
    sc = scope(user, project)
    items = manifest.load(sc.manifest_path)
    key = _find_key(items, key_or_id)
    recorded = items[key].get("files") or {}
    disk = {d: on_disk(sc.base, d) for d in recorded}
    p = plan.removal(recorded, disk, force)
    if dry_run:
        return key, p, sc
    if p.conflicts:
        shown = "; ".join(f"{a.dest} ({a.why})" for a in p.conflicts[:5])
        raise ConflictError(
            f"not uninstalling {key}: {shown}", "keep your edits elsewhere, or give --force"
        )
    tgt = plan.Target(items[key].get("agent", ""), items[key].get("kind", ""), key, None)
    for a in p.actions:
        if not sc.user:
            check_path(sc, tgt, a.dest)
        _remove(sc, a.dest)
    with manifest.editing(sc.manifest_path) as book:
        book.pop(key, None)
    return key, p, sc


def _find_key(items: Dict[str, Dict], key_or_id: str) -> str:
    if key_or_id in items:
        return key_or_id
    keys = [k for k, v in items.items() if key_or_id in _names(k, v)]
    if len(keys) == 1:
        return keys[0]
    if not keys:
        raise NotFoundError(
            f"nothing installed as {key_or_id!r} here", "see 'boost installed' (--user: user-wide)"
        )
    raise UsageError(f"{key_or_id!r} is installed in several places: {', '.join(keys)}", "name one")


def _names(key: str, record: Dict) -> Set[str]:
    """What an installed item answers to: its id, its name in the tap (the id without
    ``tap:``), its installed path's last part and, for a file, that part without its
    suffixes (a command installed as ``code-explain.md`` is ``code-explain``, as a skill
    installed as a folder is the folder's name)."""
    ident = str(record.get("id") or "")
    last = key.rstrip("/").rsplit("/", 1)[-1]
    stem = last.split(".", 1)[0] if key in (record.get("files") or {}) else last
    names = {ident, ident.partition(":")[2], last, stem} - {""}
    plain = unescape_id(ident)
    if plain:  # an id printed escaped answers to the name as typed too
        names |= {plain, plain.partition(":")[2]}
    return names


@dataclass(frozen=True)
class Status:
    key: str
    record: Dict
    state: str  # current | outdated | edited | missing | gone
    new_commit: str = ""


def statuses(user: bool = False, project: Optional[str] = None) -> Tuple[Scope, List[Status]]:
    """Every installed item of the scope, compared with its tap now and with the disk."""
    sc = scope(user, project)
    out: List[Status] = []
    for key, rec in sorted(manifest.load(sc.manifest_path).items()):
        recorded = rec.get("files") or {}
        disk = {d: on_disk(sc.base, d) for d in recorded}
        if all(v is None for v in disk.values()):
            out.append(Status(key, rec, "missing"))
            continue
        edited = any(disk[d] is not None and disk[d] != recorded[d] for d in recorded)
        try:
            found = lookup.read(f"{rec['tap']}:{rec['path']}")
        except BoostError:
            out.append(Status(key, rec, "gone"))
            continue
        files, _ = item_files(found)
        tgt = plan.Target(rec.get("agent", ""), rec.get("kind", ""), *_split(key, rec))
        now = {tgt.dest(r): digest(b) for r, b in files.items()}
        commit = found.snapshot.commit
        if now != recorded:
            out.append(Status(key, rec, "outdated", commit))
        else:
            out.append(Status(key, rec, "edited" if edited else "current", commit))
    return sc, out


def _split(key: str, rec: Dict) -> Tuple[str, Optional[str]]:
    if rec.get("kind") == "skill":
        return key, None
    folder, _, single = key.rpartition("/")
    return folder, single
