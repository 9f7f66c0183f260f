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

    A bare name matching entries in several places raises AmbiguousError listing them;
    byte-identical copies of one file do not count as ambiguity (the first tap wins).
    """
    tap, _, bare = name.rpartition(":") if ":" in name else ("", "", name)
    pool = [s for s in snapshots if not tap or s.name == tap]
    if tap and not pool:
        raise NotFoundError(f"no tap named {tap!r}", "see 'boost taps' for the tapped registries")
    matches: List[Tuple[TapSnapshot, Entry]] = []
    for snap in pool:
        for e in snap.entries:
            if e.name == bare or e.path == bare or e.rel_dir == bare:
                matches.append((snap, e))
    if not matches:
        lowered = bare.lower()
        for snap in pool:
            for e in snap.entries:
                if e.name.lower() == lowered:
                    matches.append((snap, e))
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


def _dup_name(matches: Sequence[Tuple[TapSnapshot, Entry]], entry: Entry) -> bool:
    return sum(1 for _, e in matches if e.qualified_name == entry.qualified_name) > 1
