"""Vectors already paid for, and the byte layout vectors are stored in.

`EmbeddingCache` keeps vectors in the vector store's ``cache`` table, keyed by
sha256(text) + provider + model (id and parity fields) + requested dimensions + input type,
committed per provider batch: unchanged text is never sent twice, and an interrupted build resumes
where it stopped.
"""

from __future__ import annotations

import hashlib
import sqlite3
from array import array
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.binio import from_le, to_le
from boost_cli.core.embed.base import (
    EmbedConfig,
    EmbedFailure,
    EmbedInterrupted,
    EmbedOutcome,
    EmbedResult,
    ProgressFn,
    plan_batches,
)
from boost_cli.core.embed.config import cache_model, dimensions_of, model_id
from boost_cli.core.embed.dispatch import embed


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text, hex: the identity of a text in the cache and the store."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pack(vector: Sequence[float]) -> bytes:
    """Little-endian float32 bytes (the layout sqlite-vec reads)."""
    return to_le(array("f", vector))


def unpack(blob: bytes) -> array[float]:
    """The float32 array packed by `pack`."""
    return from_le("f", blob)


class EmbeddingCache:
    """Vectors already paid for, in a ``cache`` table of the vector store.

    Keyed by (sha256(text), provider, `cache_model`, requested dimensions, input type). Rows are
    committed after every provider batch, so an interrupted run keeps what it embedded.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS cache ("
            " text_hash TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,"
            " dims INTEGER NOT NULL, input_type TEXT NOT NULL, vector BLOB NOT NULL,"
            " served TEXT NOT NULL, PRIMARY KEY (text_hash, provider, model, dims, input_type))"
        )

    @staticmethod
    def _key(config: EmbedConfig, input_type: str) -> Tuple[str, str, int, str]:
        return (config.provider, cache_model(config), config.dimensions or 0, input_type)

    def lookup(
        self, hashes: Sequence[str], config: EmbedConfig, input_type: str = "document"
    ) -> Dict[str, Tuple[List[float], str]]:
        """The cached (vector, served model) of each of ``hashes`` that is cached."""
        provider, model, dims, kind = self._key(config, input_type)
        found: Dict[str, Tuple[List[float], str]] = {}
        unique = sorted(set(hashes))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                "SELECT text_hash, vector, served FROM cache WHERE provider=? AND model=? AND dims=?"
                f" AND input_type=? AND text_hash IN ({marks})",
                (provider, model, dims, kind, *chunk),
            )
            for h, blob, served in rows:
                found[h] = (list(unpack(blob)), served)
        return found

    def store(
        self,
        items: Sequence[Tuple[str, Sequence[float]]],
        config: EmbedConfig,
        served: str,
        input_type: str = "document",
    ) -> None:
        """Save (hash, vector) pairs embedded by model ``served``, and commit."""
        provider, model, dims, kind = self._key(config, input_type)
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(h, provider, model, dims, kind, pack(v), served) for h, v in items],
            )

    def store_new(
        self,
        items: Sequence[Tuple[str, Sequence[float]]],
        config: EmbedConfig,
        served: str,
        input_type: str = "document",
    ) -> int:
        """Save the (hash, vector) pairs the cache has no vector for yet, and commit; how
        many were saved. For vectors from elsewhere (an imported file): a vector already
        cached, one embedded here, is never replaced."""
        provider, model, dims, kind = self._key(config, input_type)
        before = self.conn.total_changes
        with self.conn:
            self.conn.executemany(
                "INSERT OR IGNORE INTO cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(h, provider, model, dims, kind, pack(v), served) for h, v in items],
            )
        return self.conn.total_changes - before

    def embed(
        self,
        texts: Sequence[str],
        *,
        config: EmbedConfig,
        input_type: str = "document",
        progress: Optional[ProgressFn] = None,
        timeout: float = 30,
        max_retries: int = 4,
        env: Optional[Mapping[str, str]] = None,
    ) -> EmbedOutcome:
        """Like `embed`, but each distinct text is sent at most once, ever: cached vectors
        are reused and new ones are stored batch by batch (kept even if a later batch fails).
        ``sent``/``sent_chars`` in the result count what actually went to the provider;
        ``progress(done, total)`` counts distinct texts sent, of all this call will send."""
        hashes = [text_hash(t) for t in texts]
        known = self.lookup(hashes, config, input_type)
        todo: Dict[str, str] = {}
        for h, t in zip(hashes, texts):
            if h not in known and h not in todo:
                todo[h] = t
        missing = list(todo.items())
        served = next((s for _, s in known.values()), model_id(config))
        sent = sent_chars = 0
        batches = plan_batches([t for _, t in missing], config)
        total = len(missing)
        for batch in batches:
            pairs = [missing[i] for i in batch]

            def within(done: int, _of: int, before: int = sent) -> None:
                if progress is not None:  # the provider's own batches, counted in the whole
                    progress(before + done, total)

            try:
                outcome = embed(
                    [t for _, t in pairs],
                    config=config,
                    input_type=input_type,
                    timeout=timeout,
                    max_retries=max_retries,
                    env=env,
                    progress=within,
                )
            except EmbedInterrupted as stop:  # Ctrl-C: keep the vectors made before it
                self.store([(pairs[i][0], v) for i, v in stop.done], config, served, input_type)
                raise
            if isinstance(outcome, EmbedFailure):
                return outcome
            served = outcome.model
            fresh = [(h, v) for (h, _), v in zip(pairs, outcome.vectors)]
            self.store(fresh, config, served, input_type)
            for h, v in fresh:
                known[h] = (v, served)
            sent += outcome.sent
            sent_chars += outcome.sent_chars
            if progress is not None:
                progress(sent, total)
        vectors = [known[h][0] for h in hashes]
        dims = len(vectors[0]) if vectors else dimensions_of(config) or 0
        return EmbedResult(vectors, served, dims, sent=sent, sent_chars=sent_chars)
