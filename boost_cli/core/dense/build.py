"""`build_dense`: embed tap snapshots into the vector store, incrementally per commit, and
`egress_summary`: what such a build would send, before it runs."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import paths
from boost_cli.core.dense.errors import DenseUnavailable
from boost_cli.core.dense.store import (
    Store,
    disk_errors,
    drop_store,
    identity,
    mismatch,
    open_existing,
    open_for_build,
)
from boost_cli.core.dense.units import UNITS, Unit, enrichment_key, enrichments, tap_units
from boost_cli.core.embed import (
    EmbedConfig,
    EmbeddingCache,
    EmbedFailure,
    EmbedResult,
    model_id,
    text_hash,
)
from boost_cli.core.errors import ProviderError, UsageError
from boost_cli.core.models import TapSnapshot

BUILD_TIMEOUT = 30.0

BuildProgress = Callable[[int, int, str], None]


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class DenseBuildReport:
    """What `build_dense` did. ``texts`` counts vectors in the (re-)embedded taps,
    ``texts_sent``/``chars_sent`` what actually went to the provider (the rest was cached)."""

    provider: str
    model: str
    unit: str
    backend: str
    taps_embedded: Tuple[str, ...]
    taps_reused: Tuple[str, ...]
    taps_removed: Tuple[str, ...]
    entries: int
    texts: int
    texts_sent: int
    chars_sent: int
    seconds: float
    reset: Optional[str] = None
    skipped: int = 0
    enriched: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "unit": self.unit,
            "backend": self.backend,
            "taps_embedded": list(self.taps_embedded),
            "taps_reused": list(self.taps_reused),
            "taps_removed": list(self.taps_removed),
            "entries": self.entries,
            "texts": self.texts,
            "sent": self.texts_sent,
            "chars_sent": self.chars_sent,
            "seconds": round(self.seconds, 3),
            "reset": self.reset,
            "skipped": self.skipped,
            "enriched": self.enriched,
        }


# --------------------------------------------------------------------------- build


def build_dense(
    snapshots: Sequence[TapSnapshot],
    *,
    config: EmbedConfig,
    unit: str = "entry",
    force: bool = False,
    progress: Optional[BuildProgress] = None,
    path: Optional[Path] = None,
    backend: str = "auto",
    timeout: Optional[float] = None,
    max_retries: int = 4,
    only: Optional[Sequence[str]] = None,
) -> DenseBuildReport:
    """Embed the taps of ``snapshots`` into the vector store, incrementally.

    Only taps whose commit changed are (re-)embedded — every tap when the enrichment store
    changed since the store's last whole build (`units.enrichment_key`), of which the
    cache sends only the texts that changed; taps not in ``snapshots`` are
    removed, unless ``only`` names the taps to build, when every other tap in the store
    is left as it is (a reset still empties the store). A different embedder or unit than
    the store's (or ``force``) resets it first.
    Each tap is written in one transaction with its commit. Raises `ProviderError` when
    the provider fails: taps finished so far stay, and every vector already received is
    cached, so the next run sends only the rest. When the store must be reset (``force``,
    another embedder or unit), every text is embedded (into the cache) before the store
    is touched, so a provider failure leaves the previous store as it was.
    ``progress(done, total, tap)`` counts the distinct texts sent so far of all the build
    will send (``tap`` is the one being embedded), so a caller can show one ETA.
    ``timeout`` (seconds a request may take) defaults to ``config.timeout``, else 30.
    """
    if unit not in UNITS:
        raise UsageError(f"unknown dense unit {unit!r}", f"use one of: {', '.join(UNITS)}")
    store_path = path or paths.vectors_path()
    args = (
        snapshots,
        config,
        unit,
        force,
        progress,
        store_path,
        backend,
        timeout,
        max_retries,
        only,
    )
    with disk_errors(store_path):  # a full disk: one line and the fix, the store as it was
        try:
            return _build(*args)
        except sqlite3.OperationalError:
            raise  # the disk or a lock, not the file: `disk_errors` says which
        except sqlite3.DatabaseError:
            # A store damaged in place (a page SQLite finds malformed): it is a cache of
            # what the taps and the provider give, so it is made anew and built once more.
            drop_store(store_path)
            return _build(*args)


def _build(
    snapshots: Sequence[TapSnapshot],
    config: EmbedConfig,
    unit: str,
    force: bool,
    progress: Optional[BuildProgress],
    store_path: Path,
    backend: str,
    timeout: Optional[float],
    max_retries: int,
    only: Optional[Sequence[str]],
) -> DenseBuildReport:
    """`build_dense`'s work, on the store at ``store_path``."""
    t0 = time.perf_counter()
    store = open_for_build(store_path, backend)
    try:
        meta = store.meta()
        reset: Optional[str] = "forced" if force else None
        if reset is None and meta.get("provider"):
            reset = mismatch(meta, config, unit)
        cache = EmbeddingCache(store.conn)
        seconds = timeout or config.timeout or BUILD_TIMEOUT
        ordered = sorted(snapshots, key=lambda s: s.name)
        stored = {} if reset else store.taps()
        enriched = enrichments(unit)
        enrich_key = enrichment_key(enriched)
        restale = meta.get("enrich_key", "") != enrich_key
        # The taps to (re-)embed, their texts read once, and how many distinct texts the
        # whole build will send: one total for the progress line.
        todo = {
            s.name: tap_units(s, unit, enriched)
            for s in ordered
            if (restale or stored.get(s.name) != s.commit) and (only is None or s.name in only)
        }
        distinct = {text_hash(u.text) for units, _, _ in todo.values() for u in units}
        total = len(distinct) - len(cache.lookup(sorted(distinct), config))
        sent_so_far = [0]

        def embed_tap(units: Sequence[Unit], tap: str) -> EmbedResult:
            def tick(done: int, _of: int) -> None:
                if progress is not None:
                    progress(min(sent_so_far[0] + done, total), total, tap)

            outcome = cache.embed(
                [u.text for u in units],
                config=config,
                progress=tick,
                timeout=seconds,
                max_retries=max_retries,
            )
            if isinstance(outcome, EmbedFailure):
                store.sync_vec()
                store.sync_flat()  # the taps finished so far stay fast to query
                raise ProviderError(
                    f"dense index not finished: {outcome.reason}",
                    "fix the provider and run 'boost reindex --dense' again — what was "
                    "embedded so far is cached and will not be sent again",
                )
            sent_so_far[0] += outcome.sent
            return outcome

        texts = sent = chars = skipped = with_enrichment = 0
        if reset is not None:
            # Pay for every vector before dropping the old ones: a failure here leaves the
            # store as it was, and the loop below finds everything in the cache.
            for name, (units, _, _) in todo.items():
                outcome = embed_tap(units, name)
                sent += outcome.sent
                chars += outcome.sent_chars
            store.reset()
        store.set_identity(identity(config, unit))
        wanted = {s.name for s in snapshots}
        removed = tuple(sorted(n for n in store.taps() if n not in wanted and only is None))
        for name in removed:
            store.replace_tap(name, None, (), (), {})
        embedded: List[str] = []
        reused = [s.name for s in ordered if s.name not in todo]
        for snap in ordered:
            if snap.name not in todo:
                continue
            units, hashes, missing = todo.pop(snap.name)
            skipped += missing
            with_enrichment += sum(u.enriched for u in units)
            outcome = embed_tap(units, snap.name)
            _check_vectors(store, config, outcome.dimensions, outcome.model, bool(units))
            store.replace_tap(snap.name, snap.commit, units, outcome.vectors, hashes)
            embedded.append(snap.name)
            texts += len(units)
            sent += outcome.sent
            chars += outcome.sent_chars
        if restale and set(store.taps()) <= set(embedded):
            store.set_meta(enrich_key=enrich_key or None)  # every tap embeds it now
        store.sync_vec()
        store.sync_flat()
        entries, _ = store.counts()
        return DenseBuildReport(
            provider=config.provider,
            model=model_id(config),
            unit=unit,
            backend=store.backend,
            taps_embedded=tuple(embedded),
            taps_reused=tuple(reused),
            taps_removed=removed,
            entries=entries,
            texts=texts,
            texts_sent=sent,
            chars_sent=chars,
            seconds=time.perf_counter() - t0,
            reset=reset,
            skipped=skipped,
            enriched=with_enrichment,
        )
    finally:
        store.close()


def _check_vectors(store: Store, config: EmbedConfig, dims: int, served: str, any_: bool) -> None:
    """Record the store's dimensions and served model on first sight; refuse a change."""
    if not any_:
        return
    meta = store.meta()
    if meta.get("dimensions") and meta["dimensions"] != str(dims):
        raise ProviderError(
            f"{config.label} now returns {dims}-dimensional vectors, the store holds "
            f"{meta['dimensions']}-dimensional ones",
            "run 'boost reindex --dense --force' to re-embed everything",
        )
    if meta.get("served_model") and meta["served_model"] != served:
        raise ProviderError(
            f"{config.label} now serves {served!r}, the store was embedded with "
            f"{meta['served_model']!r}",
            "run 'boost reindex --dense --force' to re-embed everything",
        )
    store.set_meta(dimensions=str(dims), served_model=served)


def egress_summary(
    snapshots: Sequence[TapSnapshot],
    config: EmbedConfig,
    unit: str = "entry",
    *,
    path: Optional[Path] = None,
) -> Tuple[str, int, int]:
    """(where texts go, how many distinct texts, how many characters) a `build_dense` with
    these arguments would send — cached texts and unchanged taps excluded. For the CLI to
    show before the first remote run; reads files, sends nothing, writes nothing."""
    where = f"{config.provider} ({config.host})"
    store_path = path or paths.vectors_path()
    stored: Dict[str, str] = {}
    store: Optional[Store] = None
    enriched = enrichments(unit)
    if store_path.exists():
        try:
            store = open_existing(store_path, "flat")
            meta = store.meta()
            fresh = meta.get("enrich_key", "") == enrichment_key(enriched)
            if store.has_schema() and mismatch(meta, config, unit) is None and fresh:
                stored = store.taps()
        except (DenseUnavailable, sqlite3.DatabaseError):
            store = None  # unreadable: a build recreates it and sends everything
    try:
        todo: Dict[str, int] = {}
        for snap in snapshots:
            if stored.get(snap.name) == snap.commit:
                continue
            for u in tap_units(snap, unit, enriched)[0]:
                todo.setdefault(text_hash(u.text), len(u.text))
        if store is not None and todo and store.has_schema():
            cached = EmbeddingCache(store.conn).lookup(list(todo), config)
            for h in cached:
                todo.pop(h, None)
        return where, len(todo), sum(todo.values())
    finally:
        if store is not None:
            store.close()
