"""The write paths of the search indexes: `boost reindex`, and the incremental refresh that
`tap`, `update` and `untap` run so an existing index follows the taps. A search never
writes; these are the only callers of the index and vector-store builds.

Builds read the clones through `registry.held_snapshots`: each tap's lock is held (shared)
while the index reads its files, so no `boost update` changes them meanwhile, and a clone
whose update was interrupted is put back first. A tap whose clone had to be put back is
flagged ``repaired``: what the index holds for it may have been built from a half-updated
tree under the very key it has now, so the next build redoes it (``force_taps``), marks it
stale in the vector store (the next ``reindex --dense`` re-embeds it) and then clears the
flag.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Tuple

from boost_cli.core import config, paths, registry
from boost_cli.core.errors import ProviderError
from boost_cli.core.models import TapSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.dense import ImportReport, VectorFile
    from boost_cli.core.embed import EmbedConfig
    from boost_cli.core.index import BuildReport

Progress = Optional[Callable[..., None]]
DEFAULT_UNIT = "entry"


@contextlib.contextmanager
def steady_snapshots() -> Iterator[List[TapSnapshot]]:
    """Every tap's snapshot, its clone held steady for the ``with`` block (see above)."""
    with registry.held_snapshots() as snaps:
        yield snaps


def reindex(
    snaps: Sequence[TapSnapshot],
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    progress: Progress = None,
) -> BuildReport:
    """Build the BM25 index for ``snaps``: only taps whose commit changed are redone, plus
    ``force_taps`` and every tap flagged ``repaired``."""
    from boost_cli.core import index

    repaired = {t.name: t.commit for t in registry.list_taps() if t.repaired}
    redo = {s.name: s.commit for s in snaps if repaired.get(s.name) == s.commit}
    forced = sorted(set(force_taps) | set(redo))
    report = index.build(snaps, force=force, force_taps=tuple(forced), progress=progress)
    if redo:
        # The vector store may hold the same half-updated tree under the same commit: mark
        # those taps stale there too, so `reindex --dense` redoes them (from the cache).
        from boost_cli.core import dense

        dense.forget_commits(paths.vectors_path(), sorted(redo))
    registry.clear_repaired(redo)
    return report


def refresh(progress: Progress = None) -> Optional[BuildReport]:
    """Bring an existing BM25 index up to date with the taps (incremental: only changed
    taps are redone); None when there is no index yet — `boost reindex` builds the first."""
    if not (paths.index_dir() / "manifest.json").exists():
        return None
    with steady_snapshots() as snaps:
        return reindex(snaps, progress=progress)


def dense_settings(unit: Optional[str] = None) -> Tuple[EmbedConfig, str]:
    """The configured embedder and text unit; raises ProviderError with the fix when no
    embedding provider is configured."""
    from boost_cli.core import embed

    cfg = config.load()
    embedder = embed.resolve_config(cfg, os.environ)
    if embedder is None:
        raise ProviderError(embed.NO_PROVIDER, embed.NO_PROVIDER_FIX)
    chosen = unit or str(cfg.get("settings", {}).get("embed", {}).get("unit") or DEFAULT_UNIT)
    return embedder, chosen


def build_dense(
    snaps: Sequence[TapSnapshot],
    embedder: EmbedConfig,
    unit: str,
    *,
    force: bool = False,
    progress: Progress = None,
) -> Any:
    """Embed ``snaps`` into the vector store (only taps whose commit changed)."""
    from boost_cli.core import dense

    return dense.build_dense(snaps, config=embedder, unit=unit, force=force, progress=progress)


def export_vectors(tap: str, out: Path) -> VectorFile:
    """Write tapped ``tap``'s vectors (the store must hold them at its commit) to ``out``."""
    from boost_cli.core import dense

    info = registry.get_tap(tap)
    return dense.export_tap(paths.vectors_path(), tap, info.commit, info.source, out)


def import_vectors(path: Path, unit: Optional[str] = None) -> ImportReport:
    """Import a vectors file for the configured embedder (`dense.import_vectors`)."""
    from boost_cli.core import dense

    found = dense.load_file(path)
    embedder, chosen = dense_settings(unit)
    with registry.held_snapshots([found.tap]) as snaps:  # its clone steady while read
        snapshot = snaps[0] if snaps else None
        return dense.import_vectors(found, path, snapshot, embedder, chosen, paths.vectors_path())
