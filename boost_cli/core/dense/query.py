"""Queries over the vector store: `DenseIndex` (status, query, search by vector) and the
hits it returns, one per distinct file like BM25's."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import config as config_file
from boost_cli.core import origin, paths
from boost_cli.core.dense.errors import (
    REEMBED_FIX,
    REINDEX_FIX,
    DenseDamaged,
    DenseProviderFailed,
    DenseUnavailable,
    check_dimensions,
)
from boost_cli.core.dense.flat import FlatCache
from boost_cli.core.dense.store import Store, mismatch, open_existing, parity_fields
from boost_cli.core.embed import (
    NO_PROVIDER,
    NO_PROVIDER_FIX,
    EmbedConfig,
    EmbedFailure,
    embed,
    resolve_config,
    unpack,
    unusable_reason,
)
from boost_cli.core.models import Entry, Hit

CHUNKS_PER_HIT = 4  # with the chunk unit, ask the index for k * this many vectors first
# With the entry unit, copies of one file crowd the nearest vectors (docs/dense.md): asking
# for 2k vectors avoids most second, wider searches.
COPIES_PER_HIT = 2
MAX_KNN = 4096  # sqlite-vec's largest k
QUERY_TIMEOUT = 15.0
QUERY_TRIES = 2
_REEMBED_WITH_CONFIGURED = "run 'boost reindex --dense' to re-embed with the configured embedder"


@dataclass(frozen=True)
class DenseStatus:
    """The store as a status line sees it, without any network call.

    ``ready`` — queries can run now; otherwise ``reason`` (one line) and ``fix`` say why not.
    ``info`` — provider, model, dimensions, unit, backend, counts and commits, for --explain.
    ``damaged`` — the file itself is damaged (a fix, not a choice: `boost doctor`).
    """

    exists: bool
    ready: bool
    reason: Optional[str] = None
    fix: Optional[str] = None
    info: Dict[str, Any] = field(default_factory=dict)
    damaged: bool = False  # the file is damaged in place (`DenseDamaged`)


# --------------------------------------------------------------------------- query


class DenseIndex:
    """Queries over the vector store with the configured embedder (parity enforced).

    ``config`` None reads the config file and environment now. ``backend``: ``auto``
    (sqlite-vec when it loads and its index is in sync, else flat), ``flat`` or
    ``sqlite-vec``. The store file is opened per call; the flat index loaded from it is
    kept on this object (`FlatCache`), so a long-lived process that keeps one
    `DenseIndex` pays for loading it once per store build, and a new `DenseIndex`
    starts cold. ``one_shot``: this process embeds one query and exits (a CLI search),
    which an in-process model loads faster for (`EmbedOptions.one_shot`).
    """

    name = "dense"  # the engine's name in notes and --explain

    def __init__(
        self,
        config: Optional[EmbedConfig] = None,
        *,
        path: Optional[Path] = None,
        backend: str = "auto",
        one_shot: bool = False,
    ) -> None:
        if config is None:
            config = resolve_config(config_file.load(), os.environ)
        self.config = config
        self.path = path or paths.vectors_path()
        self.backend = backend
        self.one_shot = one_shot
        self.flat_cache = FlatCache()

    def _open(self) -> Store:
        return open_existing(self.path, self.backend, self.flat_cache)

    @contextmanager
    def _reading(self) -> Iterator[Store]:
        """The store, open for the block and closed after. SQLite failing part-way through
        a read is `DenseDamaged` for a damaged page ("database disk image is malformed")
        and `DenseUnavailable` for a disk error, each with its fix, as a store it cannot
        open is: a search then falls back to BM25 with the reason instead of stopping."""
        store = self._open()
        try:
            yield store
        except sqlite3.OperationalError as exc:
            raise DenseUnavailable(
                f"the vector store {self.path} cannot be read ({exc})",
                "check the disk it is on, or search with --engine bm25",
            ) from exc
        except sqlite3.DatabaseError as exc:
            detail = " ".join(str(exc).split())  # SQLite's report may span lines
            raise DenseDamaged(
                f"the vector store {self.path} is damaged ({detail})", REEMBED_FIX
            ) from exc
        finally:
            store.close()

    def status(self, verify: bool = False) -> DenseStatus:
        """Whether queries can run now, and why not — no network call. ``verify``: every
        page of the store checked too (`Store.damage`; `boost doctor`)."""
        exists = self.path.exists()
        try:
            with self._reading() as store:
                damage = store.damage() if verify else None
                if damage is not None:
                    raise sqlite3.DatabaseError(damage)
                return self._status(store)
        except DenseUnavailable as exc:
            damaged = isinstance(exc, DenseDamaged)
            return DenseStatus(exists, False, exc.message, exc.fix, damaged=damaged)

    def _status(self, store: Store) -> DenseStatus:
        """`status` of the open ``store``."""
        meta = store.meta()
        entries, items = store.counts()
        taps = store.taps()
        info: Dict[str, Any] = {
            "provider": meta.get("provider"),
            "model": meta.get("model"),
            "served_model": meta.get("served_model"),
            **parity_fields(meta),
            "dimensions": int(meta.get("dimensions") or 0),
            "unit": meta.get("unit"),
            "backend": store.backend,
            "backend_note": store.vec_note,
            "entries": entries,
            "vectors": items,
            "taps": taps,
            # How a store that could not be opened for writing was opened instead
            # ("ro", "immutable"; "" read-write): `store.open_existing`.
            "read_only": store.read_only,
        }
        if not items:
            return DenseStatus(True, False, "the vector store is empty", REINDEX_FIX, info)
        if self.config is None:
            return DenseStatus(True, False, NO_PROVIDER, NO_PROVIDER_FIX, info)
        problem = mismatch(meta, self.config, None)
        if problem:
            return DenseStatus(True, False, problem, _REEMBED_WITH_CONFIGURED, info)
        cannot = unusable_reason(self.config)
        if cannot:
            return DenseStatus(True, False, cannot, None, info)
        return DenseStatus(True, True, None, None, info)

    def ready(self) -> bool:
        return self.status().ready

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        *,
        rank: Optional[Mapping[str, int]] = None,
    ) -> List[Hit]:
        """The ``k`` entries nearest to ``text``, of ``kind`` and in ``taps`` (None or
        empty: every tap) when given; raises `DenseUnavailable` (with the reason) when
        the store is missing, was embedded with another model, or the provider fails.

        The tap filter applies before ranking: copies of a file in other taps are not
        seen, so ``also_in`` names copies within ``taps`` only. ``rank`` (tap → origin rank,
        `origin`) picks which of a file's copies is shown; None: the nearest."""
        if not text.strip() or k <= 0:
            return []
        with self._reading() as store:
            meta = store.meta()
            vector = self._embed_query(meta, text)
            return _nearest(store, meta, vector, k, kind, tuple(taps or ()), rank)

    def embed_query(self, text: str) -> List[float]:
        """``text`` embedded as a query by the configured embedder (checked against the
        store first, as `query` does), for `search_vector`; raises `DenseUnavailable`."""
        with self._reading() as store:
            meta = store.meta()
        return self._embed_query(meta, text)

    def entry_vector(
        self, entry_id: str, content_hash: Optional[str], near: Sequence[float]
    ) -> Optional[List[float]]:
        """The stored vector of entry ``entry_id`` — or, when the store lacks that entry, of
        another entry of the same file (``content_hash``) — that is nearest to ``near``
        (an entry has several with the chunk unit); None when the store has neither."""
        with self._reading() as store:
            rows = store.conn.execute(
                "SELECT vector FROM items WHERE entry_id = ?", (entry_id,)
            ).fetchall()
            if not rows and content_hash:
                rows = store.conn.execute(
                    "SELECT vector FROM items WHERE entry_id = (SELECT entry_id FROM entries"
                    " WHERE file_sha256 = ? ORDER BY entry_id LIMIT 1)",
                    (content_hash,),
                ).fetchall()
        vectors = [list(unpack(blob)) for (blob,) in rows]
        check_dimensions(len(near), str(len(vectors[0])) if vectors else None)
        if not vectors:
            return None
        return max(vectors, key=lambda v: sum(a * b for a, b in zip(v, near)))

    def _embed_query(self, meta: Mapping[str, str], text: str) -> List[float]:
        """``text`` embedded by the configured embedder, once it is known to match the
        store's; raises `DenseUnavailable` otherwise."""
        if self.config is None:
            raise DenseUnavailable(NO_PROVIDER, NO_PROVIDER_FIX)
        problem = mismatch(meta, self.config, None)
        if problem:
            raise DenseUnavailable(problem, "run 'boost reindex --dense' to re-embed")
        outcome = embed(
            [text],
            config=self.config,
            input_type="query",
            timeout=self.config.timeout or QUERY_TIMEOUT,
            max_retries=QUERY_TRIES,
            one_shot=self.one_shot,
        )
        if isinstance(outcome, EmbedFailure):
            raise DenseProviderFailed(
                outcome.reason, "check the embedding provider, or use --engine bm25"
            )
        check_dimensions(outcome.dimensions, meta.get("dimensions"))
        served = meta.get("served_model")
        if served and outcome.model and outcome.model != served:
            raise DenseUnavailable(
                f"{self.config.label} now serves {outcome.model!r}, the store was embedded "
                f"with {served!r}",
                REEMBED_FIX,
            )
        return outcome.vectors[0]

    def search_vector(
        self,
        vector: Sequence[float],
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        *,
        rank: Optional[Mapping[str, int]] = None,
    ) -> List[Hit]:
        """Like `query` for a query vector embedded already (by the store's embedder;
        evaluation scripts cache them): the ``k`` nearest distinct files."""
        if k <= 0:
            return []
        with self._reading() as store:
            meta = store.meta()
            check_dimensions(len(vector), meta.get("dimensions"))
            return _nearest(store, meta, vector, k, kind, tuple(taps or ()), rank)


def _nearest(
    store: Store,
    meta: Mapping[str, str],
    vector: Sequence[float],
    k: int,
    kind: Optional[str],
    taps: Sequence[str],
    rank: Optional[Mapping[str, int]] = None,
) -> List[Hit]:
    # Copies of one file and, with the chunk unit, an entry's many chunks can crowd the
    # first k vectors: widen until k distinct files are found or every vector was seen.
    wanted = k * (CHUNKS_PER_HIT if meta.get("unit") == "chunk" else COPIES_PER_HIT)
    while True:
        nearest = store.knn(vector, wanted, kind, taps)
        hits = _hits(store.conn, nearest, k, rank)
        if len(hits) >= k or len(nearest) < wanted or wanted >= MAX_KNN:
            return hits
        wanted = min(wanted * 4, MAX_KNN)


def _hits(
    conn: sqlite3.Connection,
    nearest: Sequence[Tuple[int, float]],
    k: int,
    rank: Optional[Mapping[str, int]] = None,
) -> List[Hit]:
    """Item matches → one hit per distinct file, as BM25 gives: a file scores its best
    item; copies of it (same bytes, another entry) seen among ``nearest`` go to
    ``also_in``; ranks are 1-based."""
    if not nearest:
        return []
    items: Dict[int, Tuple[str, str]] = {}
    for start in range(0, len(nearest), 500):
        part = [i for i, _ in nearest[start : start + 500]]
        marks = ",".join("?" * len(part))
        for i, eid, snippet in conn.execute(
            f"SELECT id, entry_id, snippet FROM items WHERE id IN ({marks})", part
        ):
            items[int(i)] = (eid, snippet)
    eids = list(dict.fromkeys(row[0] for row in items.values()))
    entries: Dict[str, Tuple[Entry, Optional[str]]] = {}
    for start in range(0, len(eids), 500):
        names = eids[start : start + 500]
        marks = ",".join("?" * len(names))
        for eid, js, sha in conn.execute(
            f"SELECT entry_id, entry_json, file_sha256 FROM entries WHERE entry_id IN ({marks})",
            names,
        ):
            entries[eid] = (Entry.from_dict(json.loads(js)), sha)
    best: Dict[str, Tuple[Entry, float, str, Optional[str]]] = {}
    copies: Dict[str, List[Entry]] = {}
    seen: set = set()
    for item_id, score in nearest:
        row = items.get(item_id)
        if row is None or row[0] in seen or row[0] not in entries:
            continue
        seen.add(row[0])
        entry, sha = entries[row[0]]
        key = sha or entry.id
        if key in best:
            copies[key].append(entry)
        elif len(best) < k:
            best[key] = (entry, score, row[1], sha)
            copies[key] = [entry]
    hits: List[Hit] = []
    for key, (entry, score, snippet, sha) in best.items():
        # Byte-identical copies: the one shown is from the tap first in the origin order.
        entry = copies[key][origin.best(copies[key], lambda e: e.tap, rank)]
        also = tuple(
            n
            for n in dict.fromkeys(e.qualified_name for e in copies[key])
            if n != entry.qualified_name
        )
        hits.append(
            Hit(
                entry=entry,
                score=score,
                snippet=snippet,
                also_in=also,
                ranks={"dense": len(hits) + 1},
                content_hash=sha,
            )
        )
    return hits


def open_status(config: Optional[EmbedConfig] = None, path: Optional[Path] = None) -> DenseStatus:
    """`DenseIndex.status()` with the configured embedder: cheap, no network."""
    return DenseIndex(config, path=path).status()
