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
import json
import logging
import os
import time
from dataclasses import dataclass
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

from boost_cli.core import atomic, config, paths, registry, related, skillmap
from boost_cli.core.errors import NotFoundError, ProviderError
from boost_cli.core.models import TapSnapshot
from boost_cli.core.tokenize import tokenize

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.dense import ImportReport, VectorFile
    from boost_cli.core.embed import EmbedConfig
    from boost_cli.core.index import BuildReport, TapSource

log = logging.getLogger(__name__)
Progress = Optional[Callable[..., None]]
DEFAULT_UNIT = "entry"
REINDEX_DENSE = "run 'boost reindex --dense'"


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
    refresh_trust(sources)
    if redo:
        # The vector store may hold the same half-updated tree under the same commit: mark
        # those taps stale there too, so `reindex --dense` redoes them (from the cache).
        from boost_cli.core import dense

        dense.forget_commits(paths.vectors_path(), sorted(redo))
    registry.clear_repaired(redo)
    _warm_skills(sources)
    refresh_related(sources)
    return report


def refresh_related(sources: Sequence[Union[TapSource, TapSnapshot]]) -> bool:
    """Rebuild the related-terms table (`core/related.py`) from every entry's name and
    description when the index it goes with changed (its `related.corpus_key`), or drop it
    when the index holds no tap; True when a table was written. A build with nothing
    changed reads and checks the table alone; otherwise only the taps whose segment changed
    load their catalogs: the others' fields come from `related_fields_path()`."""
    from boost_cli.core import index

    path = paths.related_path()
    manifest = index.previous_manifest(paths.index_dir())
    segments = manifest["segments"] if manifest is not None else {}
    if not segments:
        for old in (path, paths.related_fields_path()):
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
        return False
    key = related.corpus_key(segments)
    try:
        if related.load(path.read_bytes(), key) is not None:
            return False  # intact and of this very index
    except FileNotFoundError:
        pass
    cached = _cached_fields()
    fields: Dict[str, Dict[str, Any]] = {}
    for s in sources:
        seg = str(segments.get(s.name, {}).get("key", ""))
        if not seg:
            continue
        hit = cached.get(s.name)
        if hit is not None and hit.get("key") == seg:
            fields[s.name] = hit
            continue
        terms = {" ".join(sorted(set(tokenize(f"{e.name}. {e.description}")))) for e in _entries(s)}
        fields[s.name] = {"key": seg, "fields": sorted(terms)}
    table = related.build((f.split() for v in fields.values() for f in v["fields"]), key)
    atomic.write_json(paths.related_fields_path(), {"version": FIELDS_VERSION, "taps": fields})
    atomic.write_bytes(path, related.pack(table))
    return True


FIELDS_VERSION = 1  # of the per-tap fields file: tap → {key: segment key, fields: [terms]}


def _cached_fields() -> Dict[str, Dict[str, Any]]:
    """The per-tap fields `refresh_related` kept last time ({} when none or unreadable)."""
    try:
        data = json.loads(paths.related_fields_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != FIELDS_VERSION:
        return {}
    taps = data.get("taps")
    if not isinstance(taps, dict):
        return {}
    return {
        str(t): v
        for t, v in taps.items()
        if isinstance(v, dict)
        and isinstance(v.get("fields"), list)
        and all(isinstance(f, str) for f in v["fields"])
    }


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


def refresh_trust(sources: Sequence[Union[TapSource, TapSnapshot]]) -> List[str]:
    """Scan and cache the trust findings of each tap in ``sources`` that has none for its
    content (`registry.TapInfo.content_key`: a tap from before the scan existed, a cache
    someone deleted, a bundle imported again with other files); the taps scanned. A tap whose findings are cached costs one stat."""
    from boost_cli.core import trust_scan

    infos = {t.name: t for t in registry.list_taps()}
    done = []
    for s in sources:
        info = infos.get(s.name)
        if info is None or info.commit != s.commit:
            continue  # untapped, or moved, meanwhile: the next build scans it
        key = info.content_key  # what the findings are of: never a commit a bundle claims
        if trust_scan.has_cache(s.name, key):
            continue
        if trust_scan.refresh(s.name, key, Path(s.root), info.url, partial(_entries, s)):
            done.append(s.name)
    return done


def _entries(source: Union[TapSource, TapSnapshot]) -> Sequence[Any]:
    return source.entries if isinstance(source, TapSnapshot) else source.load().entries


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


# --------------------------------------------------------------------------- dense in step


@dataclass(frozen=True)
class DenseSync:
    """What `sync_dense` did to an existing vector store: the taps (re-)embedded and
    removed, how many texts went to the embedder (the rest came from its cache), and, when
    some taps could not be embedded now, which (``pending``) and why (``reason``, with the
    fix). A search leaves a pending tap to BM25 until a build embeds it."""

    embedded: Tuple[str, ...] = ()
    removed: Tuple[str, ...] = ()
    pending: Tuple[str, ...] = ()
    reason: Optional[str] = None
    texts_sent: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.embedded or self.removed)

    def summary(self) -> str:
        """One line for a person, e.g. ``Vector store refreshed (1 tap embedded, 1
        removed; 3 new texts embedded in 0.4 s)``."""
        parts = []
        if self.embedded:
            n = len(self.embedded)
            parts.append(f"{n} tap{'' if n == 1 else 's'} embedded")
        if self.removed:
            n = len(self.removed)
            parts.append(f"{n} tap{'' if n == 1 else 's'} removed")
        texts = "text" if self.texts_sent == 1 else "texts"
        return (
            f"Vector store refreshed ({', '.join(parts)}; {self.texts_sent} new {texts}"
            f" embedded in {self.seconds:.1f} s)"
        )

    def pending_note(self) -> Optional[str]:
        """The note naming the taps left to BM25, or None when there are none."""
        if not self.pending:
            return None
        return (
            f"the vector store was not updated for {', '.join(self.pending[:5])}"
            f"{' and more' if len(self.pending) > 5 else ''}, so searches rank with BM25"
            f" until it is: {self.reason}"
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "embedded": list(self.embedded),
            "removed": list(self.removed),
            "pending": list(self.pending),
            "reason": self.reason,
            "sent": self.texts_sent,
            "seconds": round(self.seconds, 3),
        }


def sync_dense(progress: Progress = None) -> Optional[DenseSync]:
    """Bring an existing vector store in step with the taps, as `refresh` does the BM25
    index: drop every tap no longer tapped at once, and embed every tap whose commit the
    store does not hold (new, updated, repaired) with the store's own embedder and unit
    (only texts its cache lacks are embedded). None when there is no store to keep.

    Embedding happens only when the configured embedder is the store's and keeps text on
    this machine (in process or a loopback server): a remote provider is sent text by
    `boost reindex --dense` alone, which says first what goes where. Otherwise, or when the
    provider fails, the taps stay ``pending`` with the reason and the fix."""
    from boost_cli.core import dense, embed

    t0 = time.perf_counter()
    path = paths.vectors_path()
    found = dense.stored_taps(path)
    if found is None:
        return None
    meta, stored = found
    tapped = {t.name for t in registry.list_taps()}  # a tap whose clone is missing stays
    current = {t.name: t.commit for t, _ in registry.present()}
    removed = tuple(dense.drop_taps(path, sorted(n for n in stored if n not in tapped)))
    unit = meta.get("unit") or DEFAULT_UNIT
    # A changed enrichment store changes the "entry" texts of every tap (the cache sends
    # only those that changed): docs/enrich.md "In the vector store".
    restale = meta.get("enrich_key", "") != dense.enrichment_key(dense.enrichments(unit))
    todo = sorted(n for n, c in current.items() if restale or stored.get(n) != c)
    if not todo:
        return DenseSync(removed=removed, seconds=time.perf_counter() - t0)

    def pending(reason: str) -> DenseSync:
        return DenseSync(
            removed=removed, pending=tuple(todo), reason=reason, seconds=time.perf_counter() - t0
        )

    embedder = embed.resolve_config(config.load(), os.environ)
    if embedder is None:
        return pending(f"{embed.NO_PROVIDER} — {embed.NO_PROVIDER_FIX}")
    problem = dense.mismatch(meta, embedder, None) or embed.unusable_reason(embedder)
    if problem:
        return pending(f"{problem} — run 'boost reindex --dense'")
    if embedder.is_remote:
        return pending(
            f"new texts would go to {embedder.provider} ({embedder.host}) — run "
            "'boost reindex --dense' to send them"
        )
    with registry.held_snapshots(todo) as snaps:
        try:
            report = dense.build_dense(
                snaps, config=embedder, unit=unit, progress=progress, only=[s.name for s in snaps]
            )
        except ProviderError as exc:
            return pending(f"{exc.message} — {exc.fix or REINDEX_DENSE}")
    left = tuple(n for n in todo if n not in report.taps_embedded)
    return DenseSync(
        embedded=report.taps_embedded,
        removed=removed,
        pending=left,
        reason=None if not left else "their clones are missing — run 'boost doctor'",
        texts_sent=report.texts_sent,
        seconds=time.perf_counter() - t0,
    )
