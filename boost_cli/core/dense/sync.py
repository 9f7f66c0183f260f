"""Keeping an existing vector store in step with the taps between `boost reindex --dense`
runs: what the store holds (`stored_taps`) and dropping the taps that are gone
(`drop_taps`). The write paths (`indexing.sync_dense`) decide what is to be embedded and
hand it to `build_dense`, which embeds only texts the cache does not hold yet.

Nothing here embeds, and nothing here makes a store: a home without one stays without one
until `boost reindex --dense`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from boost_cli.core.dense.errors import DenseUnavailable
from boost_cli.core.dense.store import open_existing


def stored_taps(path: Path) -> Optional[Tuple[Dict[str, str], Dict[str, str]]]:
    """(meta, {tap: commit}) of the store at ``path``, or None when there is no store to
    keep in step: none at all, unreadable or of another format (the next `reindex --dense`
    recreates it), or never filled (no embedder recorded: a first build that failed)."""
    if not path.exists():
        return None
    try:
        store = open_existing(path, "flat")
    except DenseUnavailable:
        return None
    try:
        meta = store.meta()
        if not meta.get("provider") or not store.has_schema():
            return None
        return meta, store.taps()
    except sqlite3.DatabaseError:
        return None
    finally:
        store.close()


def drop_taps(path: Path, names: Sequence[str]) -> List[str]:
    """Remove the taps ``names`` (their entries and vectors; the embedding cache keeps its
    vectors) from the store at ``path``, each in one transaction, and resync the derived
    indexes; the names that were in the store. Needs no embedder."""
    if not names or not path.exists():
        return []
    try:
        store = open_existing(path, "auto")
    except DenseUnavailable:
        return []
    try:
        held = store.taps()
        gone = [n for n in names if n in held]
        for name in gone:
            store.replace_tap(name, None, (), (), {})
        if gone:
            store.sync_vec()
            store.sync_flat()
        return gone
    finally:
        store.close()
