"""The write paths of the search indexes: `boost reindex`, and the incremental refresh that
`tap`, `update` and `untap` run so an existing index follows the taps. A search never
writes; these are the only callers of the index and vector-store builds.

Builds read the clones through `registry.held` (`steady_sources`, `steady_snapshots`):
each tap's lock is held (shared) while the index reads its files, so no `boost update`
changes them meanwhile, and a clone whose update was interrupted is put back first. A tap
whose clone had to be put back is flagged ``repaired``: what the index holds for it may
have been built from a half-updated tree under the very key it has now, so the next build
redoes it (``force_taps``), marks it stale in the vector store (the next ``reindex
--dense`` re-embeds it) and then clears the flag.
"""

from __future__ import annotations

import contextlib
import logging
import os
from functools import partial
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from boost_cli.core import config, paths, registry, skillmap
from boost_cli.core.errors import NotFoundError, ProviderError
from boost_cli.core.models import TapSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.dense import ImportReport, VectorFile
    from boost_cli.core.embed import EmbedConfig
    from boost_cli.core.index import BuildReport, TapSource

log = logging.getLogger(__name__)
Progress = Optional[Callable[..., None]]
DEFAULT_UNIT = "entry"


@contextlib.contextmanager
def steady_sources(names: Sequence[str] = ()) -> Iterator[List[TapSource]]:
    """Every present tap (or the named ones) as the index build first sees it, its clone
    held steady for the ``with`` block (see above): from the config alone, its entries
    loaded only if its segment must be rebuilt (in a worker, when there is one)."""
    from boost_cli.core import index

    scan = registry.scan_version()
    with registry.held(names) as taps:
        yield [
            index.TapSource(
                name=t.name,
                commit=t.commit,
                root=root,
                scan=scan,
                load=partial(registry.load_snapshot, t.name, t.commit, str(root)),
                entries=sum(t.counts.values()),
            )
            for t, root in taps
        ]


@contextlib.contextmanager
def steady_snapshots() -> Iterator[List[TapSnapshot]]:
    """Every tap's snapshot, its clone held steady for the ``with`` block (see above)."""
    with registry.held_snapshots() as snaps:
        yield snaps


def reindex(
    sources: Optional[Sequence[Union[TapSource, TapSnapshot]]] = None,
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    progress: Progress = None,
    workers: Optional[int] = None,
) -> BuildReport:
    """Build the BM25 index for ``sources`` (default: every tap, `steady_sources`): only
    taps whose commit changed are loaded and redone, plus ``force_taps`` and every tap
    flagged ``repaired``; with nothing changed it reads the config and the manifest, and
    stats files. ``workers``: at most this many worker processes (None: as the machine
    allows)."""
    from boost_cli.core import index

    if sources is None:
        with steady_sources() as held:
            return reindex(
                held, force=force, force_taps=force_taps, progress=progress, workers=workers
            )
    repaired = {t.name: t.commit for t in registry.list_taps() if t.repaired}
    redo = {s.name: s.commit for s in sources if repaired.get(s.name) == s.commit}
    forced = sorted(set(force_taps) | set(redo))
    report = index.build(
        sources, force=force, force_taps=tuple(forced), progress=progress, workers=workers
    )
    if redo:
        # The vector store may hold the same half-updated tree under the same commit: mark
        # those taps stale there too, so `reindex --dense` redoes them (from the cache).
        from boost_cli.core import dense

        dense.forget_commits(paths.vectors_path(), sorted(redo))
    registry.clear_repaired(redo)
    _warm_skills(sources)
    return report


def _warm_skills(sources: Sequence[Union[TapSource, TapSnapshot]]) -> None:
    """Compute the MCP skill manifests (digests, sizes) of every tap at a commit they are
    not cached for, while its clone is held steady: once per tap commit, so the server's
    first skills/list reads a cache instead of hashing the taps."""
    for s in sources:
        if skillmap.cached(s.name, s.commit, Path(s.root)) is None:
            snap = (
                s
                if isinstance(s, TapSnapshot)
                else registry.load_snapshot(s.name, s.commit, str(s.root))
            )
            try:
                skillmap.load(snap)
            except OSError as exc:  # a file gone mid-read: the server builds it on first use
                log.debug("cannot compute the skill manifests of %s: %s", s.name, exc)


def indexed_commits() -> Dict[str, str]:
    """Tap → the commit the BM25 index holds it at, from the manifest alone ({} when there
    is no readable index)."""
    from boost_cli.core import index

    return index.indexed_commits()


def refresh(progress: Progress = None) -> Optional[BuildReport]:
    """Bring an existing BM25 index up to date with the taps (incremental: only changed
    taps are redone); None when there is no index yet — `boost reindex` builds the first."""
    if not (paths.index_dir() / "manifest.json").exists():
        return None
    return reindex(progress=progress)


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
    """Import a vectors file for the configured embedder (`dense.import_vectors`): its
    header is checked first, then its tap's clone is held steady while the rows stream.

    The unit is ``unit``, else the vector store's (a store built with ``--unit chunk``
    takes chunk files), else the configured one. A tap that is not tapped is refused
    with how to tap it; the source the file names is shown as the file's claim (anyone
    can write one), and left out when ``boost tap`` would refuse it."""
    from boost_cli.core import dense

    header = dense.read_header(path)
    embedder, chosen = dense_settings(unit or dense.stored_unit(paths.vectors_path()))
    with registry.held_snapshots([header.tap]) as snaps:  # its clone steady while read
        if not snaps:
            raise NotFoundError(
                f"tap {header.tap!r} (the tap {path.name} holds) is not tapped",
                f"tap it first, then import again: {_tap_hint(header.tap, header.source)}",
            )
        return dense.import_vectors(header, path, snaps[0], embedder, chosen, paths.vectors_path())


def _tap_hint(tap: str, source: str) -> str:
    """How to tap ``tap`` when all that is known of its source is what a vectors file
    says: the file's claim, labelled as such, and only if `boost tap` would take it."""
    command = f"'boost tap SOURCE --name {tap}'"
    if not source:
        return f"{command} with the registry's source"
    if registry.refuses_source(source):
        return f"{command} with the registry's source (the file names one boost tap cannot use)"
    return (
        f"{command}; the file says SOURCE is {source!r}, but anyone can write a vectors "
        "file: check that it is the registry you mean"
    )
