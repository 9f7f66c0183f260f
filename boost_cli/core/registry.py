"""Taps: registries cloned under ``repos/`` and recorded in the config.

`add`, `remove` and `update` change the clones and the config; `snapshots()` gives the
engines every tap at its current commit with its scanned entries.

Crash and race safety (issue 10), the rules every function here keeps:

- Every change of ``config.json`` is a read-modify-write under the config lock
  (`config.edit`). A clone changes only under its tap lock (exclusive); an index build
  reads the clones under the same locks, shared (`held_snapshots`). Tap locks are taken
  before the config lock, never the other way round.
- `add` clones into a staging folder ``repos/.clone-<name>-<hex>`` guarded by a lock file
  beside it, scans it there, then moves it into place and writes its record together
  under the tap lock: a clone and its record appear together or not at all. A crash
  leaves a staging folder whose lock is free, or a clone no record claims; `tidy` (run
  by `add`, `update` and `remove`) removes both, and `leftovers` reports them.
- `update` fetches (the files do not change), writes a marker ``.git/boost-update``, moves
  the files, checks them, scans, records the new commit, then deletes the marker. A
  failure rolls the clone back to its recorded commit at once; a crash leaves the marker,
  and the next `update` (or index build) puts the clone back (`_repair`), clears git's
  stale locks, drops the tap's catalog cache and flags it ``repaired`` so the next index
  build redoes it from scratch.
- A catalog scan is cached only when the clone is verified to be exactly the recorded
  commit (HEAD and a clean tree) while its lock is held: the cache is keyed by what is
  really checked out.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
)

from boost_cli.core import atomic, config, lock, paths
from boost_cli.core.errors import (
    BoostError,
    GitError,
    NoTapsError,
    NotFoundError,
    UsageError,
    from_os_error,
)
from boost_cli.core.models import CATALOG_VERSION, TapSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core import catalog, trust_scan

log = logging.getLogger("boost.registry")

MARKER = "boost-update"  # in a clone's .git: the commit an update is moving it to
STAGING = ".clone-"  # prefix of the folders `add` clones into
# How long to wait for another boost process working on the same tap: its git may be
# fetching (bounded by gitutil.GIT_TIMEOUT) or an index build may be reading the clone.
TAP_LOCK_SECONDS = 900.0
# A staging folder with no lock file beside it (made by an older boost) is left alone
# this long, in case its process is still cloning.
STALE_STAGING_SECONDS = 3600.0


@dataclass(frozen=True)
class TapInfo:
    """One tap as recorded in the config. ``repaired``: its clone was put back after an
    interrupted update, so the next index build must redo it rather than trust a segment."""

    name: str
    source: str
    url: str
    commit: str
    counts: Dict[str, int] = field(default_factory=dict, compare=False, hash=False)
    added: str = ""
    updated: str = ""
    warnings: int = 0
    repaired: bool = False
    bundle: str = ""  # the digest of the bundle it was imported from; "" for a clone
    content: str = ""  # an import's digest of its members (`bundle.content_digest`)

    @property
    def root(self) -> Path:
        return paths.tap_dir(self.name)

    @property
    def content_key(self) -> str:
        """What the tap's files are, by content: what caches of what was read from them
        (the trust findings) are keyed by. A clone's commit (git names a tree by its
        content, and a clone is checked to be exactly its commit); an import's digest of
        the members it came from, computed on import: never the commit a bundle claims,
        which any bundle may reuse for other files."""
        if not self.bundle:
            return self.commit
        return f"bundle-{self.content or self.bundle}"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "url": self.url,
            "commit": self.commit,
            "counts": dict(self.counts),
            "added": self.added,
            "updated": self.updated,
            "warnings": self.warnings,
            "bundle": self.bundle or None,
            "content": self.content or None,
        }


@dataclass(frozen=True)
class UpdateResult:
    name: str
    old_commit: str
    new_commit: str
    old_counts: Dict[str, int]
    new_counts: Dict[str, int]
    error: Optional[str] = None
    repaired: bool = False  # the clone was put back after an interrupted update first


def _now() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )


def _info(name: str, d: Dict[str, Any]) -> TapInfo:
    return TapInfo(
        name=name,
        source=str(d.get("source", "")),
        url=str(d.get("url", "")),
        commit=str(d.get("commit", "")),
        counts={k: int(v) for k, v in dict(d.get("counts", {})).items()},
        added=str(d.get("added", "")),
        updated=str(d.get("updated", "")),
        warnings=int(d.get("warnings", 0)),
        repaired=bool(d.get("repaired", False)),
        bundle=str(d.get("bundle") or ""),
        content=str(d.get("content") or ""),
    )


def _lenient_info(name: str, d: Any) -> TapInfo:
    """`_info` of a record that may be of the wrong shape (`config.record_problem`): a
    bare record of the name then."""
    return _info(name, d) if config.record_problem(d) is None else TapInfo(name, "", "", "")


# The taps of the last config `list_taps` read (`config.current`: the same dict while the
# file is unchanged), so a server's calls build them once per config change.
_LISTED: Tuple[Optional[Dict[str, Any]], Tuple[TapInfo, ...]] = (None, ())


def list_taps() -> List[TapInfo]:
    """Every tap, sorted by name. Records under a name boost refuses (hand-written into
    the config) are left out: see `invalid_names`."""
    global _LISTED
    cfg = config.current()
    listed = _LISTED  # read once: another thread (the HTTP transport's pool) may replace it
    if listed[0] is not cfg:
        taps = tuple(_info(n, d) for n, d in sorted(cfg["taps"].items()) if paths.is_tap_name(n))
        listed = _LISTED = (cfg, taps)
    return list(listed[1])


def invalid_names() -> List[str]:
    """Names of config records boost ignores because it would refuse them as tap names."""
    return sorted(n for n in config.load()["taps"] if not paths.is_tap_name(n))


def no_such_tap(name: str, known: Iterable[str]) -> NotFoundError:
    """The error for an unknown tap name, with the nearest tapped name when one is close
    (`difflib`, case folded: ``obra__superpower`` → ``obra__superpowers``)."""
    import difflib  # only on this error path: a search never pays for it

    names = sorted(known)
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.75)
    fix = (
        f"did you mean {lowered[close[0]]!r}? ('boost taps' lists them)"
        if close
        else "see 'boost taps' for the tapped registries"
    )
    return NotFoundError(f"no tap named {name!r}", fix)


def require_taps(names: Sequence[str] = ()) -> List[TapInfo]:
    """Every tap; raises NoTapsError when there is none and NotFoundError for an unknown name."""
    taps = list_taps()
    if not taps:
        raise NoTapsError()
    known = {t.name for t in taps}
    for name in names:
        if name not in known:
            raise no_such_tap(name, known)
    return taps


def trust_view() -> trust_scan.View:
    """The trust findings of every tap, each tap's cache read once (`trust_scan.View`)."""
    from boost_cli.core import trust_scan

    return trust_scan.View({t.name: t for t in list_taps()})


def get_tap(name: str) -> TapInfo:
    cfg = config.load()
    if name not in cfg["taps"] or not paths.is_tap_name(name):
        raise no_such_tap(name, cfg["taps"])
    return _info(name, cfg["taps"][name])


def _record(name: str) -> Optional[TapInfo]:
    rec = config.load()["taps"].get(name)
    return None if rec is None else _info(name, rec)


@contextlib.contextmanager
def _tap_lock(name: str, *, shared: bool = False) -> Iterator[int]:
    with lock.hold(
        paths.tap_lock_path(name), f"tap {name!r}", shared=shared, timeout=TAP_LOCK_SECONDS
    ) as fd:
        yield fd


def _exists_error(name: str) -> UsageError:
    return UsageError(
        f"a tap named {name!r} already exists",
        f"run 'boost update {name}', or pass --name to tap it under another name",
    )


def add(
    source: str, name: Optional[str] = None, cwd: Optional[Path] = None
) -> Tuple[TapInfo, catalog.ScanResult]:
    """Clone ``source`` as a new tap, scan it and record it. Raises on any failure, leaving
    nothing behind; the clone and its record appear together (see the module docstring)."""
    from boost_cli.core import catalog, gitutil, trust_scan

    src = gitutil.parse_source(source, cwd)
    tap_name = gitutil.safe_name(name) if name else src.default_name
    if name and tap_name != name:
        raise UsageError(f"invalid tap name {name!r}", "use letters, digits, '.', '_' and '-' only")
    dest = paths.tap_dir(tap_name)
    tidy()
    if tap_name in config.load()["taps"]:
        raise _exists_error(tap_name)
    with _staging(tap_name) as (staging, staging_fd):
        repo = staging / "repo"
        gitutil.clone(src.url, repo, hold=(staging_fd,))
        commit = gitutil.head_commit(repo)
        scan = catalog.scan_tap(tap_name, repo)
        findings = trust_scan.scan_tap(repo, scan.entries, src.url)
        now = _now()
        record = {
            # a local path as typed (./x) means nothing from another folder: store it absolute
            "source": src.url if src.kind == "local" else source,
            "url": src.url,
            "commit": commit,
            "counts": scan.counts(),
            "added": now,
            "updated": now,
            "warnings": len(scan.warnings),
        }
        with _tap_lock(tap_name), config.edit() as cfg:
            if tap_name in cfg["taps"]:
                raise _exists_error(tap_name)
            if dest.exists() or dest.is_symlink():
                _remove_tree(dest)  # a clone no record claims: a crash's leftover
            catalog.store(tap_name, commit, scan)
            trust_scan.store(tap_name, commit, src.url, findings)
            repo.rename(dest)
            cfg["taps"][tap_name] = record
    return _info(tap_name, record), scan


@contextlib.contextmanager
def _staging(name: str) -> Iterator[Tuple[Path, int]]:
    """A fresh staging folder under ``repos/`` and its held lock (the lock file is made
    and locked before the folder exists, so `tidy` never sees the folder unguarded)."""
    repos = paths.repos_dir()
    repos.mkdir(parents=True, exist_ok=True)
    # os.urandom is what secrets.token_hex reads (secrets costs a search base64, hmac, random)
    folder = repos / f"{STAGING}{name}-{os.urandom(4).hex()}"
    lock_file = folder.with_name(folder.name + ".lock")
    try:
        with lock.hold(lock_file, f"the staging folder of {name!r}") as fd:
            folder.mkdir()
            try:
                yield folder, fd
            finally:
                _remove_tree(folder)
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock_file.unlink()


BUNDLE_MARK = ".boost-bundle"  # in an imported tap's folder: the commit and bundle it holds


@contextlib.contextmanager
def staging(name: str) -> Iterator[Path]:
    """An empty folder under ``repos/`` to assemble a tap's files in for
    `install_imported` (removed on leaving the block if it was not installed)."""
    with _staging(name) as (folder, _fd):
        files = folder / "repo"
        files.mkdir()
        yield files


@dataclass(frozen=True)
class Imported:
    """One tap to install from a bundle: its assembled ``files`` (a `staging` folder), its
    config ``record`` (which names the bundle and the ``content`` digest) and its cached
    scan ``scan_record``."""

    name: str
    files: Path
    record: Dict[str, Any]
    scan_record: Dict[str, Any]


def install_imported(items: Sequence[Imported]) -> List[bool]:
    """Make each item's ``files`` the tap it names, imported from a bundle, all or nothing;
    for each, True when it replaced an earlier import. Refused (nothing changed) when any
    of them is a clone. Under every tap's lock and the config lock: each old folder is
    moved aside into its staging folder (removed with it) and the new one moved in; a
    failure moves them all back, and the config (written last) is left as it was. A crash
    in between leaves a folder whose `BUNDLE_MARK` does not match the record, which
    `present` leaves out until it is imported again. An import at the commit the tap had
    but of other content flags it ``repaired``, so the next index build redoes it (its
    segment key, made of the commit and the entries, would not change).
    """
    from boost_cli.core import catalog

    names = [it.name for it in items]
    for name in names:
        paths.check_tap_name(name)
    if len(set(names)) != len(names):
        raise UsageError("the same tap is imported twice", "import one bundle per tap")
    for it in items:
        mark = {k: it.record.get(k) for k in ("commit", "bundle", "content")}
        atomic.write_json(it.files / BUNDLE_MARK, mark)
    now = _now()
    moved: List[Tuple[Path, Path, Optional[Path]]] = []  # (place, files, old folder aside)
    with contextlib.ExitStack() as stack:
        for name in sorted(names):
            stack.enter_context(_tap_lock(name))
        try:
            with config.edit() as cfg:
                olds = [cfg["taps"].get(it.name) for it in items]
                for it, old in zip(items, olds):
                    if old is not None and not old.get("bundle"):
                        raise UsageError(
                            f"a tap named {it.name!r} already exists, cloned from "
                            f"{old.get('source')}",
                            f"run 'boost untap {it.name}' first to serve it from bundles instead",
                        )
                for it in items:
                    dest = paths.tap_dir(it.name)
                    aside = None
                    if dest.exists() or dest.is_symlink():
                        aside = it.files.parent / "old"
                        dest.rename(aside)  # removed with the staging folder
                    moved.append((dest, it.files, aside))
                    it.files.rename(dest)
                for it, old in zip(items, olds):
                    catalog.drop_cache(it.name)
                    catalog.store_record(it.name, it.scan_record)
                    rec = {**it.record, "added": str(old.get("added", now)) if old else now}
                    rec["updated"] = now
                    if (
                        old is not None
                        and old.get("commit") == rec["commit"]
                        and old.get("content") != rec.get("content")
                    ):
                        rec["repaired"] = True
                    cfg["taps"][it.name] = rec
        except BaseException:  # a refusal, a failed move, a config that could not be saved
            _put_back(moved)
            for it in items:
                catalog.drop_cache(it.name)
            raise
    return [old is not None for old in olds]


def _put_back(moved: Sequence[Tuple[Path, Path, Optional[Path]]]) -> None:
    """Undo `install_imported`'s moves, last first: each new folder back to its staging
    folder, each old one back in place."""
    for dest, files, aside in reversed(moved):
        if not files.exists() and (dest.exists() or dest.is_symlink()):
            dest.rename(files)
        if aside is not None:
            aside.rename(dest)


def _bundle_mark(root: Path) -> Dict[str, Any]:
    """What an imported tap's folder says it holds (commit, bundle, content); {} when no
    mark can be read."""
    try:
        data = json.loads((root / BUNDLE_MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _bundle_commit(root: Path) -> Optional[str]:
    commit = _bundle_mark(root).get("commit")
    return str(commit) if commit is not None else None


def _holds(tap: TapInfo, root: Path) -> bool:
    """Whether an imported tap's folder holds what its record says (commit and content)."""
    mark = _bundle_mark(root)
    return mark.get("commit") == tap.commit and (mark.get("content") or "") == tap.content


def _remove_tree(path: Path) -> None:
    """Delete ``path`` (a folder, or a file or symlink standing where one should be)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
        return

    def retry_writable(func: Any, failed: str, _exc: Any) -> None:
        Path(failed).chmod(0o700)  # git's read-only object files, on Windows
        func(failed)

    if path.exists():
        if sys.version_info >= (3, 12):  # pragma: no cover - version-dependent keyword
            shutil.rmtree(path, onexc=retry_writable)
        else:  # pragma: no cover - version-dependent keyword
            shutil.rmtree(path, onerror=retry_writable)


def remove(name: str) -> TapInfo:
    """Forget a tap: its config record, its cached scan and its clone (in that order, so a
    crash leaves at most a clone no record claims, which `tidy` removes). A record under a
    name boost refuses is only dropped from the config: no folder belongs to it."""
    from boost_cli.core import catalog, trust_scan

    if not paths.is_tap_name(name):
        with config.edit(keep_bad=True) as cfg:
            if name not in cfg["taps"]:
                raise no_such_tap(name, cfg["taps"])
            return _lenient_info(name, cfg["taps"].pop(name))
    tidy()
    with _tap_lock(name):
        # A record of the wrong shape (hand-edited, or from an older boost) makes every
        # other command refuse the config: this is how it is repaired.
        with config.edit(keep_bad=True) as cfg:
            if name not in cfg["taps"]:
                raise no_such_tap(name, cfg["taps"])
            info = _lenient_info(name, cfg["taps"].pop(name))
        catalog.drop_cache(name)
        trust_scan.drop(name)
        _remove_tree(paths.tap_dir(name))
    return info


def update(names: Sequence[str] = ()) -> List[UpdateResult]:
    """Move each named tap (default: all) to its remote head, one at a time under its
    lock. Per tap all or nothing: a tap that fails keeps its clone at its recorded
    commit, and the others are still updated."""
    taps = [get_tap(n) for n in names] if names else list_taps()
    tidy()
    results: List[UpdateResult] = []
    for tap in taps:
        try:
            results.append(_update_one(tap))
        except (BoostError, OSError) as exc:
            problem = exc if isinstance(exc, BoostError) else from_os_error(exc)
            results.append(
                UpdateResult(tap.name, tap.commit, tap.commit, tap.counts, tap.counts, str(problem))
            )
    return results


def _update_one(tap: TapInfo) -> UpdateResult:
    from boost_cli.core import catalog, gitutil, trust_scan

    with _tap_lock(tap.name) as fd:
        current = _record(tap.name)  # it may have changed, or gone, while we waited
        if current is None:
            raise NotFoundError(f"tap {tap.name!r} was untapped meanwhile")
        if current.bundle:
            raise UsageError(
                f"tap {tap.name!r} was imported from a bundle, it has no clone to fetch",
                "import a newer bundle: 'boost bundle import FILE'",
            )
        repaired = _repair(current, fd)
        root = current.root
        new = gitutil.fetch(root, hold=(fd,))
        if new == current.commit:
            return UpdateResult(
                tap.name, current.commit, new, current.counts, current.counts, None, repaired
            )
        _write_marker(root, new)
        try:
            gitutil.checkout(root, new, hold=(fd,))
            problem = gitutil.checkout_problem(root, new, hold=(fd,))
            if problem:
                raise GitError(f"the clone is not at {new[:10]} after the update: {problem}")
            scan = catalog.scan_tap(tap.name, root)
            catalog.store(tap.name, new, scan)
            trust_scan.store(
                tap.name, new, current.url, trust_scan.scan_tap(root, scan.entries, current.url)
            )
            with config.edit() as cfg:
                rec = cfg["taps"].get(tap.name)
                if rec is None:  # pragma: no cover - `remove` waits for this tap's lock
                    raise NotFoundError(f"tap {tap.name!r} was untapped meanwhile")
                rec.update(
                    {
                        "commit": new,
                        "counts": scan.counts(),
                        "updated": _now(),
                        "warnings": len(scan.warnings),
                    }
                )
        except (BoostError, OSError):
            _roll_back(current, fd)
            raise
        _clear_marker(root)
        return UpdateResult(
            tap.name, current.commit, new, current.counts, scan.counts(), None, repaired
        )


def _roll_back(tap: TapInfo, fd: int) -> None:
    """After a failed update: the clone back at its recorded commit, marker gone. If even
    that fails the marker stays, and the next update or index build repairs the clone."""
    from boost_cli.core import gitutil

    try:
        gitutil.checkout(tap.root, tap.commit, hold=(fd,))
        if gitutil.checkout_problem(tap.root, tap.commit, hold=(fd,)) is None:
            _clear_marker(tap.root)
    except (BoostError, OSError) as exc:
        log.debug("rolling %s back failed (%s); the next run repairs it", tap.name, exc)


def _marker(root: Path) -> Path:
    return root / ".git" / MARKER


def _write_marker(root: Path, commit: str) -> None:
    atomic.write_text(_marker(root), commit + "\n")


def _clear_marker(root: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        _marker(root).unlink()


def interrupted(tap: TapInfo) -> bool:
    """Whether an update of ``tap`` was interrupted (or is running now)."""
    return _marker(tap.root).exists()


def _repair(tap: TapInfo, fd: int) -> bool:
    """Put ``tap``'s clone back to exactly its recorded commit if it is not (an interrupted
    update, a stale git lock, changed files); True when something had to be done. The
    caller holds the tap lock (``fd``), so no git of boost's runs in the clone."""
    from boost_cli.core import catalog, gitutil

    root = tap.root
    if not (root / ".git").is_dir():
        raise clone_missing(tap)
    cleared = gitutil.clear_stale_locks(root)
    if cleared:
        log.debug("%s: removed stale git locks %s", tap.name, ", ".join(cleared))
    problem = "an update was interrupted" if _marker(root).exists() else None
    problem = problem or gitutil.checkout_problem(root, tap.commit, hold=(fd,))
    if problem is None:
        return False
    log.debug("%s: repairing the clone (%s)", tap.name, problem)
    gitutil.checkout(root, tap.commit, hold=(fd,))
    left = gitutil.checkout_problem(root, tap.commit, hold=(fd,))
    if left:
        raise GitError(
            f"cannot put the clone of tap {tap.name!r} back at {tap.commit[:10]}: {left}",
            f"run 'boost untap {tap.name}', then 'boost tap {tap.source}'",
        )
    catalog.drop_cache(tap.name)
    with config.edit() as cfg:
        rec = cfg["taps"].get(tap.name)
        if rec is not None:
            rec["repaired"] = True
    _clear_marker(root)
    return True


def repair_interrupted(names: Iterable[str] = ()) -> List[str]:
    """Repair every tap (or the named ones) whose update was interrupted; their names."""
    wanted = set(names)
    done = []
    for tap in list_taps():
        if (wanted and tap.name not in wanted) or not tap.root.is_dir() or not interrupted(tap):
            continue
        with _tap_lock(tap.name) as fd:
            current = _record(tap.name)
            if current is not None and _repair(current, fd):
                done.append(tap.name)
    return done


def clear_repaired(commits: Dict[str, str]) -> None:
    """Forget the ``repaired`` flag of each tap whose index was just rebuilt at the given
    commit (``{tap: commit}``)."""
    if not commits:
        return
    with config.edit() as cfg:
        for name, commit in commits.items():
            rec = cfg["taps"].get(name)
            if rec is not None and rec.get("commit") == commit:
                rec.pop("repaired", None)


def tidy() -> List[str]:
    """Remove what interrupted runs left under ``repos/``: staging folders whose process is
    gone and clones that no record claims. Returns what it removed (relative to repos/)."""
    repos = paths.repos_dir()
    if not repos.is_dir():
        return []
    removed = []
    known = set(config.load(keep_bad=True)["taps"])
    for path in sorted(repos.iterdir()):
        name = path.name
        if name.startswith(STAGING) and not name.endswith(".lock"):
            if _reap_staging(path):
                removed.append(name)
        elif paths.is_tap_name(name) and name not in known:
            with lock.attempt(paths.tap_lock_path(name)) as held:
                # Holding the tap lock, no `add` is between moving a clone in and recording it.
                if held and name not in config.load(keep_bad=True)["taps"]:
                    _remove_tree(path)
                    removed.append(name)
    return removed


def _old_unguarded(folder: Path) -> bool:
    """A staging folder with no lock file beside it (an older boost's), old enough that no
    process can still be cloning into it."""
    try:
        return time.time() - folder.lstat().st_mtime >= STALE_STAGING_SECONDS
    except FileNotFoundError:
        return False


def _reap_staging(folder: Path) -> bool:
    lock_file = folder.with_name(folder.name + ".lock")
    if not lock_file.exists():
        if not _old_unguarded(folder):
            return False
        _remove_tree(folder)
        return True
    with lock.attempt(lock_file) as held:
        if not held:
            return False  # its process is still cloning
        _remove_tree(folder)
        with contextlib.suppress(FileNotFoundError):
            lock_file.unlink()
    return True


_TIDY = ": the next 'boost tap', 'boost update' or 'boost untap' removes it"


def leftovers() -> List[str]:
    """What interrupted runs left behind, one line each, for `boost doctor` (nothing is
    changed here: `tidy` and `update` clean up)."""
    out = [
        f"config.json has a tap record under an invalid name {n!r}: remove it with "
        f"'boost untap -- {n}'"
        for n in invalid_names()
    ]
    repos = paths.repos_dir()
    known = set(config.load()["taps"])
    if repos.is_dir():
        for path in sorted(repos.iterdir()):
            name = path.name
            if name.startswith(STAGING) and not name.endswith(".lock"):
                lock_file = path.with_name(name + ".lock")
                abandoned = lock.is_free(lock_file) if lock_file.exists() else _old_unguarded(path)
                if abandoned:
                    out.append(f"repos/{name} is left from an interrupted 'boost tap'{_TIDY}")
            elif paths.is_tap_name(name) and name not in known:
                out.append(f"repos/{name} is a clone no tap record claims{_TIDY}")
    for tap in list_taps():
        if tap.root.is_dir() and interrupted(tap):
            with lock.attempt(paths.tap_lock_path(tap.name), shared=True) as held:
                if held:
                    out.append(
                        f"an update of tap {tap.name!r} was interrupted: "
                        f"run 'boost update {tap.name}'"
                    )
    return out


def scan(tap: TapInfo) -> catalog.ScanResult:
    """The catalog scan of ``tap`` at its recorded commit: from the cache, else scanned and
    cached when the clone is verified to be exactly that commit (with its lock held, so
    no update moves it meanwhile)."""
    return _scan(tap.name, tap.root, tap.commit)


def _scan(name: str, root: Path, commit: str) -> catalog.ScanResult:
    from boost_cli.core import catalog, gitutil

    hit = catalog.cached(name, root, commit)
    if hit is not None:
        return hit
    with lock.attempt(paths.tap_lock_path(name), shared=True) as held:
        try:
            trusted = held and (
                _bundle_commit(root) == commit
                if not (root / ".git").exists()
                else not _marker(root).exists() and gitutil.checkout_problem(root, commit) is None
            )
        except GitError as exc:  # no git, or a broken clone: scan, but cache nothing
            log.debug("cannot check the clone of %s: %s", name, exc)
            trusted = False
        result = catalog.scan_tap(name, root)
        if trusted:
            try:
                catalog.store(name, commit, result)
            except OSError as exc:  # a read-only or full home: the scan is still right
                log.debug("cannot cache the scan of %s: %s", name, exc)
    return result


def snapshots(names: Iterable[str] = ()) -> List[TapSnapshot]:
    """Every tap (or the named ones) at its commit with its entries, for the engines."""
    return [TapSnapshot(t.name, t.commit, root, scan(t).entries) for t, root in present(names)]


def clone_missing(tap: TapInfo) -> GitError:
    """The error for a tap whose clone is gone (deleted by hand, a disk cleaned up): the
    config still lists it, so only tapping it again brings its entries back."""
    return GitError(
        f"the clone of tap {tap.name!r} is missing",
        f"run 'boost untap {tap.name}', then 'boost tap {tap.source}'",
    )


def absent() -> List[TapInfo]:
    """Every tap whose clone is not there (what `present` leaves out)."""
    return [t for t in list_taps() if not t.root.is_dir()]


def present(names: Iterable[str] = ()) -> List[Tuple[TapInfo, Path]]:
    """Every tap (or the named ones) whose clone is there, with its folder: the config
    alone, no catalog. A vanished clone is left out ('boost doctor' reports it)."""
    wanted = set(names)
    out = []
    for tap in list_taps():
        if wanted and tap.name not in wanted:
            continue
        root = tap.root  # resolved once: it checks the name against repos/
        if root.is_dir() and (not tap.bundle or _holds(tap, root)):
            out.append((tap, root))
    return out


def scan_version() -> str:
    """What makes a tap's entries from its files at a commit: the catalog scan's version
    (its cache is keyed by commit and this version, on the same assumption)."""
    return f"catalog/{CATALOG_VERSION}"


def load_snapshot(name: str, commit: str, root: str) -> TapSnapshot:
    """One tap at ``commit`` with its entries (`scan`). Module-level, so an index build can
    hand it to a worker process to call there (`index.TapSource.load`)."""
    folder = Path(root)
    return TapSnapshot(name, commit, folder, _scan(name, folder, commit).entries)


@contextlib.contextmanager
def held(names: Iterable[str] = ()) -> Iterator[List[Tuple[TapInfo, Path]]]:
    """`present`, with every tap's lock held (shared) for the ``with`` block so no update
    changes a clone an index build is reading; interrupted updates are repaired first.
    Cheap: a lock and a marker look-up a tap, no catalog."""
    wanted = list(names)
    for _ in range(3):
        taps = [t for t in list_taps() if not wanted or t.name in wanted]
        with contextlib.ExitStack() as stack:
            for tap in taps:
                stack.enter_context(_tap_lock(tap.name, shared=True))
            broken = [t.name for t in taps if t.root.is_dir() and interrupted(t)]
            if not broken:
                yield present(wanted)
                return
        repair_interrupted(broken)
    raise GitError(  # pragma: no cover - needs updates crashing in a loop meanwhile
        "taps keep changing while the index is built", "retry when no 'boost update' runs"
    )


@contextlib.contextmanager
def held_snapshots(names: Iterable[str] = ()) -> Iterator[List[TapSnapshot]]:
    """`snapshots` of the taps `held` steady for the ``with`` block."""
    with held(names) as taps:
        yield [TapSnapshot(t.name, t.commit, root, scan(t).entries) for t, root in taps]


# --------------------------------------------------------------------------- bundled catalog


def refuses_source(source: str) -> bool:
    """Whether `boost tap` would refuse ``source`` before git runs (`gitutil.parse_source`:
    a bad form, a refused transport, no such local folder)."""
    from boost_cli.core import gitutil

    try:
        gitutil.parse_source(source)
    except BoostError:
        return True
    return False


def bundled_registries() -> List[Dict[str, Any]]:
    """The curated list of public registries shipped in ``boost_cli/data/registries.json``."""
    from importlib import resources

    text = resources.files("boost_cli").joinpath("data/registries.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return list(data.get("registries", []))


def select_registries(
    *,
    kind: Optional[str] = None,
    category: Optional[str] = None,
    limit: Optional[int] = None,
    defaults: bool = False,
) -> List[Dict[str, Any]]:
    """Bundled registries worth tapping: never index-only ones; filtered; largest first."""
    regs = [r for r in bundled_registries() if not r.get("index_only")]
    if defaults:
        regs = [r for r in regs if r.get("default")]
    if kind:
        regs = [r for r in regs if r.get("type") == kind]
    if category:
        regs = [r for r in regs if str(r.get("category", "")).lower() == category.lower()]
    regs.sort(key=lambda r: (-int(r.get("est_items", 0)), r["name"]))
    return regs[:limit] if limit else regs


def source_url(tap: TapInfo, path: str) -> str:
    """A browsable URL for ``path`` in ``tap`` (GitHub blob at the commit), else the file:// path."""
    url = tap.url
    gh = None
    if url.startswith("https://github.com/"):
        gh = url[len("https://github.com/") :]
    elif url.startswith("git@github.com:"):
        gh = url[len("git@github.com:") :]
    if gh:
        gh = gh.rstrip("/")
        gh = gh[:-4] if gh.endswith(".git") else gh
        return f"https://github.com/{gh}/blob/{tap.commit or 'HEAD'}/{path}"
    return (tap.root / path).resolve().as_uri()
