"""Looking entries up by name across taps: one path for `boost show` and `boost_get_skill`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence, Tuple

from boost_cli.core import registry
from boost_cli.core.errors import AmbiguousError, NoTapsError, NotFoundError
from boost_cli.core.models import Entry, TapSnapshot


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
    Raises NoTapsError when nothing is tapped, NotFoundError/AmbiguousError otherwise."""
    snaps = registry.snapshots()
    if not snaps:
        raise NoTapsError()
    snap, entry = find(snaps, name)
    taps = {t.name: t for t in registry.list_taps()}
    url = registry.source_url(taps[snap.name], entry.path) if snap.name in taps else ""
    return Found(snap, entry, snap.text(entry), url)


def find(snapshots: Sequence[TapSnapshot], name: str) -> Tuple[TapSnapshot, Entry]:
    """The one entry called ``name`` (``tap:name``, ``tap:path`` or a bare name).

    Tap names never hold ':', so the text before the first ':' is the tap when a tap has
    that name; an entry's own name may hold ':' (``tap:git:commit`` is ``git:commit`` in
    ``tap``), and ``git:commit`` alone is a bare name when no tap is called ``git``.
    A bare name matching entries in several places raises AmbiguousError listing them;
    byte-identical copies of one file do not count as ambiguity (the first tap wins).
    """
    head, colon, rest = name.partition(":")
    if colon and any(s.name == head for s in snapshots):
        matches = _matches([s for s in snapshots if s.name == head], rest)
        if not matches:  # maybe a bare name that starts like a tap: "tap:x" named so
            matches = _matches(snapshots, name)
    elif colon and not _named_anywhere(snapshots, name):
        raise NotFoundError(f"no tap named {head!r}", "see 'boost taps' for the tapped registries")
    else:
        matches = _matches(snapshots, name)
    if not matches:
        raise NotFoundError(
            f"no skill, rule or workflow named {name!r}", "find one with 'boost search QUERY'"
        )
    if len(matches) > 1:
        texts = {s.text(e) for s, e in matches[:50]}
        if len(texts) > 1 or len(matches) > 50:
            cands = sorted(
                {
                    f"{e.tap}:{e.path}" if _dup_name(matches, e) else e.qualified_name
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
