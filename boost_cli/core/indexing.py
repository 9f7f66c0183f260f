"""The write paths of the search indexes: `boost reindex`, and the incremental refresh that
`tap`, `update` and `untap` run so an existing index follows the taps. A search never
writes; these are the only callers of the index and vector-store builds."""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import config, paths, registry
from boost_cli.core.errors import ProviderError
from boost_cli.core.models import TapSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.embed import EmbedConfig
    from boost_cli.core.index import BuildReport, TapSource

Progress = Optional[Callable[..., None]]
DEFAULT_UNIT = "entry"


def tap_sources(names: Sequence[str] = ()) -> List[TapSource]:
    """Every present tap as the index build first sees it: from the config alone, its
    entries loaded only if its segment must be rebuilt (in a worker, when there is one)."""
    from boost_cli.core import index

    scan = registry.scan_version()
    return [
        index.TapSource(
            name=t.name,
            commit=t.commit,
            root=root,
            scan=scan,
            load=partial(registry.load_snapshot, t.name, t.commit, str(root)),
            entries=sum(t.counts.values()),
        )
        for t, root in registry.present(names)
    ]


def reindex(
    sources: Optional[Sequence[TapSource]] = None,
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    progress: Progress = None,
    workers: Optional[int] = None,
) -> BuildReport:
    """Build the BM25 index for ``sources`` (default: `tap_sources()`): only taps whose
    commit changed are loaded and redone; with nothing changed it reads the config and the
    manifest, and stats files. ``workers``: at most this many worker processes (None: as
    the machine allows)."""
    from boost_cli.core import index

    return index.build(
        tap_sources() if sources is None else sources,
        force=force,
        force_taps=tuple(force_taps),
        progress=progress,
        workers=workers,
    )


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
