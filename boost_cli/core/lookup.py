"""Looking entries up by name across taps: one path for `boost show` and `boost_get_skill`,
and the files of a skill's folder that ``boost_get_skill`` lists and reads."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Dict, List, Optional, Sequence, Tuple

from boost_cli.core import registry, trust_scan
from boost_cli.core.errors import (
    AmbiguousError,
    BoostError,
    NoTapsError,
    NotFoundError,
    UsageError,
)
from boost_cli.core.models import MAX_FILE_BYTES, Entry, TapSnapshot, id_part, unescape_id


@dataclass(frozen=True)
class Found:
    """An entry found by name, with its file's text and where to browse it."""

    snapshot: TapSnapshot
    entry: Entry
    text: str
    url: str

    @property
    def file(self) -> Path:
        return self.snapshot.root / self.entry.path


def read(name: str) -> Found:
    """The entry called ``name`` (see `find`) in the tapped registries, with its text.
    Raises NoTapsError when nothing is tapped, NotFoundError/AmbiguousError otherwise,
    and `registry.clone_missing` when the name may be in a tap whose clone is gone."""
    snaps = registry.snapshots()
    gone = registry.absent()
    if not snaps and not gone:
        raise NoTapsError()
    try:
        snap, entry = find(snaps, name)
    except AmbiguousError:
        raise
    except NotFoundError as exc:
        raise _in_missing_clone(name, gone, bool(snaps)) or exc from None
    taps = {t.name: t for t in registry.list_taps()}
    url = registry.source_url(taps[snap.name], entry.path) if snap.name in taps else ""
    return Found(snap, entry, snap.text(entry), url)


def _in_missing_clone(
    name: str, gone: Sequence[registry.TapInfo], present: bool
) -> Optional[BoostError]:
    """Why ``name`` was not found when taps without a clone may hold it: the clone of the
    tap it names is missing, or (a bare name) of the one or the several taps it may be in."""
    if not gone:
        return None
    head, colon, _ = name.partition(":")
    named = [t for t in gone if colon and t.name == head]
    if named or (len(gone) == 1 and not present):
        return registry.clone_missing((named or gone)[0])
    if len(gone) == 1:
        which, fix = f"the clone of {gone[0].name} is", registry.clone_missing(gone[0]).fix
    else:
        which = f"the clones of {', '.join(t.name for t in gone)} are"
        fix = "run 'boost untap NAME', then 'boost tap SOURCE' for each ('boost taps' lists them)"
    return NotFoundError(
        f"no skill, rule or workflow named {name!r} in the taps at hand; {which} missing", fix
    )


def find(snapshots: Sequence[TapSnapshot], name: str) -> Tuple[TapSnapshot, Entry]:
    """The one entry called ``name`` (``tap:name``, ``tap:path`` or a bare name).

    Tap names never hold ':', so the text before the first ':' is the tap when a tap has
    that name; an entry's own name may hold ':' (``tap:git:commit`` is ``git:commit`` in
    ``tap``), and ``git:commit`` alone is a bare name when no tap is called ``git``.
    A bare name matching entries in several places raises AmbiguousError listing them;
    byte-identical copies of one file do not count as ambiguity (the first tap wins).
    """
    plain = unescape_id(name)
    if plain is not None:  # an id as boost prints it (`id_part`): what it stands for first
        try:
            return _find(snapshots, plain)
        except NotFoundError:
            pass  # else a name that merely looks escaped: as it is, below
    return _find(snapshots, name)


def _find(snapshots: Sequence[TapSnapshot], name: str) -> Tuple[TapSnapshot, Entry]:
    head, colon, rest = name.partition(":")
    if colon and any(s.name == head for s in snapshots):
        matches = _matches([s for s in snapshots if s.name == head], rest)
        if not matches:  # maybe a bare name that starts like a tap: "tap:x" named so
            matches = _matches(snapshots, name)
    elif colon and not _named_anywhere(snapshots, name):
        raise registry.no_such_tap(head, (s.name for s in snapshots))
    else:
        matches = _matches(snapshots, name)
    if not matches:
        close = _closest(snapshots, name)
        raise NotFoundError(
            f"no skill, rule or workflow named {name!r}",
            f"did you mean {close!r}? (or find one with 'boost search QUERY')"
            if close
            else "find one with 'boost search QUERY'",
        )
    if len(matches) > 1:
        texts = {s.text(e) for s, e in matches[:50]}
        if len(texts) > 1 or len(matches) > 50:
            cands = sorted(
                {
                    f"{e.tap}:{id_part(e.path)}" if _dup_name(matches, e) else e.qualified_name
                    for _, e in matches
                }
            )
            raise AmbiguousError(
                f"{name!r} matches {len(matches)} entries: {', '.join(cands[:10])}{' …' if len(cands) > 10 else ''}",
                cands,
                "ask for one of them as TAP:NAME (or TAP:PATH)",
            )
    return matches[0]


def _matches(pool: Sequence[TapSnapshot], bare: str) -> List[Tuple[TapSnapshot, Entry]]:
    """Entries in ``pool`` whose name, path or folder is ``bare``; else, whose name is
    ``bare`` in another case."""
    matches = [
        (snap, e)
        for snap in pool
        for e in snap.entries
        if e.name == bare or e.path == bare or e.rel_dir == bare
    ]
    if not matches:
        lowered = bare.lower()
        matches = [(snap, e) for snap in pool for e in snap.entries if e.name.lower() == lowered]
    return matches


def _closest(snapshots: Sequence[TapSnapshot], name: str) -> Optional[str]:
    """The id of the entry whose name is nearest to the mistyped ``name`` (`difflib`, case
    folded; within the tap ``name`` names, if it names one), or None when none is close."""
    import difflib  # only on this error path

    head, colon, rest = name.partition(":")
    named = [s for s in snapshots if colon and s.name == head]
    pool, want = (named, rest) if named else (list(snapshots), name)
    ids: Dict[str, List[Entry]] = {}
    for s in pool:
        for e in s.entries:
            ids.setdefault(e.name.lower(), []).append(e)
    close = difflib.get_close_matches(want.lower(), list(ids), n=1, cutoff=0.75)
    if not close:
        return None
    found = ids[close[0]]
    # one entry by that name: its id; several: the bare name (show lists them)
    return found[0].qualified_name if len(found) == 1 else id_part(found[0].name)


def _dup_name(matches: Sequence[Tuple[TapSnapshot, Entry]], entry: Entry) -> bool:
    return sum(1 for _, e in matches if e.qualified_name == entry.qualified_name) > 1


def _named_anywhere(snapshots: Sequence[TapSnapshot], name: str) -> bool:
    """Whether some entry's name (any case), path or folder is ``name`` itself."""
    lowered = name.lower()
    return any(
        e.name.lower() == lowered or e.path == name or e.rel_dir == name
        for s in snapshots
        for e in s.entries
    )


# --------------------------------------------------------------------------- a skill's folder

MAX_LISTED = 200  # files listed for one entry's folder


def folder_of(found: Found) -> Optional[Path]:
    """The folder whose files belong to the entry: a skill's folder (its SKILL.md links to
    siblings such as ``editing.md`` or ``scripts/x.py``); None for a rule or a workflow,
    whose folder holds other entries."""
    if found.entry.kind != "skill":
        return None
    return found.snapshot.root / found.entry.rel_dir if found.entry.rel_dir else found.snapshot.root


def folder_files(found: Found) -> Tuple[List[str], int]:
    """The files of the entry's folder (POSIX paths relative to it, sorted, at most
    `MAX_LISTED`) and how many there are in all: its defining file and those the trust
    scan reads beside it (`trust_scan.coverage`), the only ones boost serves or installs."""
    folder = folder_of(found)
    if folder is None:
        return [PurePosixPath(found.entry.path).name], 1
    files = sorted(skill_files(found))
    return files[:MAX_LISTED], len(files)


def skill_files(found: Found) -> List[str]:
    """A skill's own file and the files beside it the trust scan reads, relative to its
    folder (`trust_scan.coverage`)."""
    entry = found.entry
    lead = len(entry.rel_dir) + 1 if entry.rel_dir else 0
    cov = trust_scan.coverage(found.snapshot.root, entry)
    return [entry.path[lead:], *(r[lead:] for r in cov.read)]


def read_in_folder(found: Found, rel: str) -> str:
    """The text of the file ``rel`` (relative to the entry's folder; see `folder_files`).

    Refused with UsageError: absolute paths, ``.``/``..`` parts, ``.git`` and
    ``node_modules`` (in any case), a path through a symlinked folder, a symlink that leads
    out of the folder, binary files, files over 1 MB and any other file the trust scan does
    not read (a nested skill's, one past its limits: `trust_scan.coverage`). NotFoundError when there is no such file."""
    from boost_cli.core.catalog import SKIP_DIRS

    folder = folder_of(found)
    own = PurePosixPath(found.entry.path).name
    if folder is None:
        if rel == own:
            return found.text
        raise UsageError(
            f"a {found.entry.kind} has no other files to read",
            f"leave out the file to get {own}",
        )
    parts = rel.split("/")
    fix = "give a path inside the skill's folder, as its file list shows it"
    if (
        not rel
        or "\x00" in rel
        or "\\" in rel
        or rel.startswith("/")
        or any(p in ("", ".", "..") or p.casefold() in SKIP_DIRS for p in parts)
    ):
        raise UsageError(f"refusing file {rel!r}: it is not a plain path inside the folder", fix)
    for depth in range(1, len(parts)):
        sub = folder.joinpath(*parts[:depth])
        if sub.is_symlink():
            raise UsageError(f"refusing file {rel!r}: it goes through a symlinked folder", fix)
    path = folder.joinpath(*parts)
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(f"no file {rel!r} in the folder of {found.entry.qualified_name}", fix)
    if path.is_symlink() and not _inside(os.path.realpath(folder), str(path)):
        raise UsageError(f"refusing file {rel!r}: it is a symlink out of the folder", fix)
    if not path.is_file():
        raise UsageError(f"{rel!r} is not a file", fix)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UsageError(f"refusing file {rel!r}: larger than 1 MB", fix)
    if rel not in skill_files(found):
        raise UsageError(f"refusing file {rel!r}: the trust scan does not read it", fix)
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise UsageError(f"refusing file {rel!r}: a binary file", fix)
    return data.decode("utf-8", errors="replace")


def _inside(root_real: str, path: str) -> bool:
    """Whether ``path`` resolves inside ``root_real`` and outside any ``.git`` there: the
    scan's rule (a skill at the tap's root must not hand out the clone's .git/config)."""
    from boost_cli.core.catalog import inside

    return inside(root_real, path)
