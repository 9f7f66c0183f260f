"""Restoring what a manifest lists (`boost restore`, as ``npm ci`` does for a lockfile): a
teammate commits ``.boost/installed.json``; after a clone, one command puts every item it
lists back where it was installed, with the very bytes it recorded.

For each record, each file is compared with the disk (`nofollow.digest`): a file already
holding the recorded bytes is left alone; a missing one is written; one holding anything
else is the user's edit (or a file boost did not write) and the item is skipped, named,
unless ``force``. The bytes come from the item's tap: the clone's files when they still
are the recorded ones, else the recorded commit's (from the clone's git objects, fetched
from the tap's origin when the shallow clone lacks them). Every file is checked against
the manifest's sha256 before it is written: a tap whose history changed under the
recorded commit cannot slip other bytes in. The manifest itself is not changed.

A project's manifest is data from a clone: its records are checked on read
(`manifest.check_record`), the tap paths read from here are plain relative paths inside
the tap (`plan.check_rel`), and every write goes through `nofollow`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Dict, List, Optional, Tuple

from boost_cli.core import gitutil, registry
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.install import apply, manifest, nofollow, plan

# What became of one item.
IN_PLACE, RESTORED, WOULD, EDITED, FAILED = (
    "in place",
    "restored",
    "would restore",
    "edited",
    "failed",
)


@dataclass(frozen=True)
class Outcome:
    key: str
    id: str
    commit: str
    state: str  # IN_PLACE | RESTORED | WOULD | EDITED | FAILED
    files: Tuple[str, ...] = ()  # the files written (or that would be)
    why: str = ""  # for EDITED and FAILED: what is wrong, and the fix

    def to_dict(self) -> Dict[str, Any]:
        return {
            "target": self.key,
            "id": self.id,
            "commit": self.commit,
            "state": self.state,
            "files": list(self.files),
            **({"why": self.why} if self.why else {}),
        }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_path(key: str, rec: Dict[str, Any], dest: str) -> str:
    """The path in the tap of the installed file ``dest``: a skill's files lie beside its
    defining file as they lie in its installed folder; a one-file item is its file."""
    path = str(rec.get("path", ""))
    if rec.get("kind") != "skill":
        return plan.check_rel(path)
    folder = str(PurePosixPath(path).parent)
    rel = dest[len(key) + 1 :]
    return plan.check_rel(rel if folder == "." else f"{folder}/{rel}")


def _fetch_bytes(
    root: Path, commit: str, wanted: Dict[str, str], tgt: plan.Target
) -> Dict[str, bytes]:
    """``wanted`` (tap path → sha256 of the file as installed, `plan.adapt`) read from the
    clone's files when they match, else from ``commit`` in its git objects (fetched once
    when missing). BoostError when a file cannot be had with its recorded digest."""

    def adapt(src: str, raw: bytes) -> bytes:
        return plan.adapt(tgt, {src: raw})[src]

    got: Dict[str, bytes] = {}
    for src, sha in wanted.items():
        try:
            data = nofollow.read(root, src)
        except (nofollow.NotPlain, OSError):
            data = None
        if data is not None and _sha(adapt(src, data)) == sha:
            got[src] = adapt(src, data)
    missing = [s for s in wanted if s not in got]
    if not missing:
        return got
    fetched = False
    for src in missing:
        data = gitutil.blob(root, commit, src)
        if data is None and not fetched:
            gitutil.fetch_commit(root, commit)
            fetched = True
            data = gitutil.blob(root, commit, src)
        if data is None:
            raise NotFoundError(
                f"{src} is not in the tap at {commit[:10]}",
                "the tap's history lost that commit; install the current version with "
                "'boost install --force ID'",
            )
        data = adapt(src, data)
        if _sha(data) != wanted[src]:
            raise UsageError(
                f"{src} at {commit[:10]} does not match the manifest's digest",
                "the manifest or the tap changed; install the current version with "
                "'boost install --force ID'",
            )
        got[src] = data
    return got


def _one(sc: apply.Scope, key: str, rec: Dict[str, Any], dry_run: bool, force: bool) -> Outcome:
    ident, commit = str(rec.get("id", key)), str(rec.get("commit", ""))
    files: Dict[str, str] = rec.get("files") or {}
    trusted = sc.trusted(manifest.layout(rec, sc.user) or "")
    for dest in files:
        nofollow.check(sc.base, dest, trusted)
    disk = {d: nofollow.digest(sc.base, d, trusted) for d in files}
    todo = sorted(d for d in files if disk[d] != files[d])
    if not todo:
        return Outcome(key, ident, commit, IN_PLACE)
    edited = [d for d in todo if disk[d] is not None]
    if edited and not force:
        return Outcome(
            key,
            ident,
            commit,
            EDITED,
            why=f"{', '.join(edited[:3])}: changed since it was installed "
            "(keep your edits, or overwrite them with --force)",
        )
    if dry_run:
        return Outcome(key, ident, commit, WOULD, tuple(todo))
    tap = str(rec.get("tap", ""))
    wanted = {source_path(key, rec, d): files[d] for d in todo}
    with registry.held([tap]) as present:
        if not present:
            raise NotFoundError(
                f"the tap {tap!r} is not tapped here",
                f"tap it first: boost tap SOURCE --name {tap}",
            )
        kind = str(rec.get("kind", ""))
        tgt = plan.Target(str(rec.get("agent", "")), kind, key, None)
        data = _fetch_bytes(present[0][1], commit, wanted, tgt)
    manifest.check(sc.book)
    for d in todo:
        nofollow.write(sc.base, d, data[source_path(key, rec, d)], trusted)
    return Outcome(key, ident, commit, RESTORED, tuple(todo))


def restore(
    *, user: bool = False, project: Optional[str] = None, dry_run: bool = False, force: bool = False
) -> Tuple[apply.Scope, List[Outcome]]:
    """Put every item the scope's manifest lists back at its recorded bytes (see the module
    docstring); one Outcome per item, in key order. NotFoundError when there is no
    manifest. An item that cannot be restored is an Outcome (FAILED), not an exception:
    the others are still restored."""
    sc = apply.scope(user, project)
    book = sc.book
    if nofollow.digest(book.root, book.rel) is None:
        raise NotFoundError(
            f"no install manifest at {book.path}",
            "install items with 'boost install ID' (it writes the manifest), "
            "or run this where one was committed",
        )
    outcomes: List[Outcome] = []
    for key, rec in sorted(manifest.load(book).items()):
        try:
            outcomes.append(_one(sc, key, rec, dry_run, force))
        except BoostError as exc:
            why = exc.message + (f" — {exc.fix}" if exc.fix else "")
            outcomes.append(
                Outcome(key, str(rec.get("id", key)), str(rec.get("commit", "")), FAILED, why=why)
            )
    return sc, outcomes
