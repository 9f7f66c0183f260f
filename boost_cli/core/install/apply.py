"""Installing a found item where an agent loads it: the file I/O around `plan`.

``install`` reads the item's files from its tap (a skill: its defining file and exactly the
files beside it the trust scan reads, `trust_scan.coverage`; anything else: its one file),
asks `plan.plan` what to do given the manifest and the disk, and, unless it is a dry run
or something conflicts, writes each file atomically and records it in the manifest
(`manifest`). Safety:

- every destination is built from validated names (`plan.safe_name`, `plan.check_rel`), so
  it is inside the target folder, and every path a manifest lists is checked on every read
  (`manifest.check_record`);
- no symlink is followed: every read, write and removal, and the manifest and its lock, go
  through `nofollow`. In the project scope no symlink may be on the way from the project
  folder to a file (a cloned repository could carry ``.claude/skills -> /etc`` or
  ``.boost -> /elsewhere``); in the user scope the agent's own folders may be the user's
  symlinks (dotfiles), the item's may not;
- a file boost did not write, or the user edited, is never replaced without ``force``, and
  an item installed from one tap and path is not replaced by another's (`ConflictError`);
- a trust check (`trust.findings`, the trust scan's) may refuse an item: high-severity
  findings block it unless ``force``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from boost_cli.core import lookup, trust_scan
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.install import manifest, nofollow, plan, trust
from boost_cli.core.models import unescape_id

MAX_FILES = trust_scan.MAX_SIBLINGS  # a skill folder with more is likely a whole repository
MAX_NOTES = 10  # files left out, named one by one; the rest counted


class ConflictError(BoostError):
    """Files in the way that boost must not overwrite. Exit code 1."""


@dataclass(frozen=True)
class Scope:
    """Where items go: ``base`` (the project folder or the home folder) and its manifest."""

    user: bool
    base: Path

    @property
    def book(self) -> manifest.Book:
        return manifest.for_scope(self.user, self.base)

    def trusted(self, folder: str) -> int:
        """How many leading parts of a path under the agent's ``folder`` may be symlinks:
        the agent's folders in the user scope (dotfiles), none in a project."""
        return len(folder.split("/")) if self.user else 0


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
    """The item's files (rel path → bytes) and notes on files left out: a skill's are its
    defining file and those the trust scan reads (`trust_scan.coverage`), nothing else."""
    folder = lookup.folder_of(found)
    entry = found.entry
    if folder is None:
        name = entry.path.rsplit("/", 1)[-1]
        return {name: found.file.read_bytes()}, []
    cov = trust_scan.coverage(found.snapshot.root, entry)
    lead = len(entry.rel_dir) + 1 if entry.rel_dir else 0
    if any(why == trust_scan.PAST_COUNT for _, why in cov.left_out):
        raise UsageError(
            f"{entry.qualified_name}'s folder holds more than {MAX_FILES} files",
            "it looks like a whole repository; copy what you need by hand",
        )
    out: Dict[str, bytes] = {}
    for rel in (entry.path, *cov.read):
        out[plan.check_rel(rel[lead:])] = (found.snapshot.root / rel).read_bytes()
    notes = [f"left out {rel[lead:]}: {why}" for rel, why in cov.left_out[:MAX_NOTES]]
    if len(cov.left_out) > MAX_NOTES:
        notes.append(f"left out {len(cov.left_out) - MAX_NOTES} more files")
    return out, notes


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _layout_folder(tgt: plan.Target) -> str:
    """The agent's folder ``tgt`` lives in (a skill's own folder is one of its children)."""
    return tgt.folder.rpartition("/")[0] if tgt.single is None else tgt.folder


def _origin(record: Dict[str, Any]) -> str:
    return f"{record.get('tap')}:{record.get('path')}"


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
    files = plan.adapt(tgt, files)
    digests = {rel: digest(data) for rel, data in files.items()}
    book = manifest.load(sc.book)
    record = book.get(tgt.key)
    entry = found.entry
    if record and _origin(record) != f"{entry.tap}:{entry.path}" and not force:
        raise ConflictError(
            f"{tgt.key} holds {_origin(record)}, not {entry.tap}:{entry.path}",
            "uninstall it first, or install this one under another name"
            + ("" if user else " (--name NAME)"),
        )
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
    trusted = sc.trusted(_layout_folder(tgt))
    for d in sorted(interest):
        nofollow.check(sc.base, d, trusted)
    manifest.check(sc.book)
    disk = {d: nofollow.digest(sc.base, d, trusted) for d in interest}
    p = plan.plan(tgt, digests, disk, recorded, force)
    scanned = trust.findings(found)
    p = plan.Plan(p.target, p.actions, trust.shown(scanned), tuple(notes))
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
        if a.action in (plan.WRITE, plan.UPDATE):
            nofollow.write(sc.base, a.dest, files[a.rel], trusted)
        elif a.action == plan.REMOVE:
            nofollow.remove(sc.base, a.dest, trusted)
    with manifest.editing(sc.book) as items:
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
    items = manifest.load(sc.book)
    key = _find_key(items, key_or_id)
    recorded = items[key].get("files") or {}
    trusted = sc.trusted(manifest.layout(items[key], sc.user) or "")
    disk = {d: nofollow.digest(sc.base, d, trusted) for d in recorded}
    p = plan.removal(recorded, disk, force)
    if dry_run:
        return key, p, sc
    if p.conflicts:
        shown = "; ".join(f"{a.dest} ({a.why})" for a in p.conflicts[:5])
        raise ConflictError(
            f"not uninstalling {key}: {shown}", "keep your edits elsewhere, or give --force"
        )
    for a in p.actions:
        nofollow.check(sc.base, a.dest, trusted)
    manifest.check(sc.book)
    for a in p.actions:
        nofollow.remove(sc.base, a.dest, trusted)
    with manifest.editing(sc.book) as book:
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
    for key, rec in sorted(manifest.load(sc.book).items()):
        recorded = rec.get("files") or {}
        trusted = sc.trusted(manifest.layout(rec, sc.user) or "")
        disk = {d: nofollow.digest(sc.base, d, trusted) for d in recorded}
        if all(v is None for v in disk.values()):
            out.append(Status(key, rec, "missing"))
            continue
        edited = any(disk[d] is not None and disk[d] != recorded[d] for d in recorded)
        try:
            found = lookup.read(f"{rec['tap']}:{rec['path']}")
        except BoostError:
            out.append(Status(key, rec, "gone"))
            continue
        tgt = plan.Target(rec.get("agent", ""), rec.get("kind", ""), *_split(key, rec))
        files = plan.adapt(tgt, item_files(found)[0])
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
