"""The enrichment store: one SQLite file (`paths.enrich_path()`) of what an LLM wrote of
each distinct entry text, keyed by (content digest, prompt version, model).

- ``meta`` — the store's format version.
- ``enrichments`` — per key the sentence (``about``), the task phrasings (JSON list), and
  ``origin``: "local" (asked from this home) or "imported" (a bundle carried it).
- ``files`` — the sha256 of each tapped file (a hit's ``content_hash``) → its item digest,
  so a search finds a hit's enrichment without parsing its file.

A batch's rows are written in one transaction, so a killed run leaves whole batches
only, and a rerun asks only for what is not there (`done`). A read picks, per digest, the
row written last (`chosen`), whatever its model or prompt version (an imported one is
used and labelled as such). A file that is not a store of this format is *damaged*
(`EnrichDamaged`): search then runs un-enriched with one note and the fix, `boost doctor`
says so, and `boost reindex --enrich` refuses until it is removed.

Engine layer (stdlib and base only), so the index build can read it in a worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from boost_cli.core import paths
from boost_cli.core.errors import IndexUnavailable

FORMAT_VERSION = 1
LOCAL = "local"
IMPORTED = "imported"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS enrichments ("
    " digest TEXT NOT NULL, prompt_version INTEGER NOT NULL, model TEXT NOT NULL,"
    " about TEXT NOT NULL, tasks TEXT NOT NULL, origin TEXT NOT NULL DEFAULT 'local',"
    " PRIMARY KEY (digest, prompt_version, model))",
    "CREATE TABLE IF NOT EXISTS files (sha256 TEXT PRIMARY KEY, digest TEXT NOT NULL)",
)


class EnrichDamaged(IndexUnavailable):
    """The enrichment store cannot be read."""


def damaged_error(path: Path, why: str) -> EnrichDamaged:
    return EnrichDamaged(
        f"the enrichment store {path} is damaged ({why})",
        "remove it and run 'boost reindex --enrich' again (search runs without it meanwhile)",
    )


@dataclass(frozen=True)
class Stored:
    """One item's enrichment as stored, with who made it."""

    digest: str
    about: str
    tasks: Tuple[str, ...]
    model: str
    prompt_version: int
    origin: str

    def text(self) -> str:
        """The words the index reads: the sentence, then one phrase a line."""
        return "\n".join((self.about, *self.tasks))


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")
    return conn


def _check(conn: sqlite3.Connection, path: Path) -> None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise damaged_error(path, str(exc)) from exc
    if row is None or row[0] != str(FORMAT_VERSION):
        raise damaged_error(path, f"format {row[0] if row else 'missing'}, not {FORMAT_VERSION}")


class Store:
    """An open store; `open_store` makes one. Close it (or use ``with``)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def done(self, prompt_version: int, model: str) -> Set[str]:
        """The digests already enriched with this prompt version and model."""
        rows = self.conn.execute(
            "SELECT digest FROM enrichments WHERE prompt_version = ? AND model = ?",
            (prompt_version, model),
        )
        return {r[0] for r in rows}

    def put(self, rows: Sequence[Stored]) -> None:
        """Write ``rows`` in one transaction (one batch: all or nothing)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany(
                "INSERT OR REPLACE INTO enrichments"
                " (digest, prompt_version, model, about, tasks, origin)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.digest,
                        r.prompt_version,
                        r.model,
                        r.about,
                        json.dumps(list(r.tasks)),
                        r.origin,
                    )
                    for r in rows
                ],
            )
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def put_files(self, pairs: Iterable[Tuple[str, str]]) -> None:
        """Record (file sha256, item digest) pairs, in one transaction."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?)", list(pairs))
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def digests_of(self, shas: Sequence[str]) -> Dict[str, str]:
        """The item digest of each file sha256 the store knows."""
        if not shas:
            return {}
        marks = ",".join("?" * len(shas))
        try:
            cur = self.conn.execute(
                f"SELECT sha256, digest FROM files WHERE sha256 IN ({marks})", tuple(shas)
            )
            return {str(a): str(b) for a, b in cur}
        except sqlite3.DatabaseError as exc:
            raise damaged_error(self.path, str(exc)) from exc

    def rows(self, digests: Optional[Sequence[str]] = None) -> List[Stored]:
        """Every row (or those of ``digests``), oldest first."""
        where = f" WHERE digest IN ({','.join('?' * len(digests))})" if digests is not None else ""
        try:
            cur = self.conn.execute(
                "SELECT digest, about, tasks, model, prompt_version, origin"
                f" FROM enrichments{where} ORDER BY rowid",
                tuple(digests or ()),
            )
            out = []
            for digest, about, tasks, model, version, origin in cur:
                phrases = json.loads(tasks)
                if not isinstance(phrases, list):
                    raise ValueError("tasks is not a list")
                out.append(
                    Stored(
                        str(digest),
                        str(about),
                        tuple(map(str, phrases)),
                        str(model),
                        int(version),
                        str(origin),
                    )
                )
            return out
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise damaged_error(self.path, str(exc)) from exc

    def chosen(self, digests: Optional[Sequence[str]] = None) -> Dict[str, Stored]:
        """Per digest (of all, or of ``digests``) the row written last: what the index
        reads."""
        return {r.digest: r for r in self.rows(digests)}

    def counts(self) -> Dict[Tuple[str, int, str], int]:
        """How many items each (model, prompt version, origin) enriched."""
        out: Dict[Tuple[str, int, str], int] = {}
        for r in self.chosen().values():
            key = (r.model, r.prompt_version, r.origin)
            out[key] = out.get(key, 0) + 1
        return out


def open_store(path: Optional[Path] = None, *, create: bool = False) -> Optional[Store]:
    """The store at ``path`` (default `paths.enrich_path()`); None when there is none and
    ``create`` is false. Raises `EnrichDamaged` when the file is not a readable store."""
    path = path or paths.enrich_path()
    if not path.exists():
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError as exc:
        raise damaged_error(path, str(exc)) from exc
    try:
        if create:
            try:
                for stmt in _SCHEMA:
                    conn.execute(stmt)
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?)",
                    (str(FORMAT_VERSION),),
                )
            except sqlite3.DatabaseError as exc:
                raise damaged_error(path, str(exc)) from exc
        _check(conn, path)
    except BaseException:
        conn.close()
        raise
    return Store(conn, path)


def texts(path: Optional[Path] = None) -> Dict[str, str]:
    """Per digest the text the index reads (empty when there is no store)."""
    store = open_store(path)
    if store is None:
        return {}
    with store:
        return {d: r.text() for d, r in store.chosen().items()}


def fingerprint(by_digest: Mapping[str, str]) -> str:
    """16 hex digits over every (digest, text): what a segment key records of the store,
    so a changed enrichment rebuilds the segments and an unchanged one reuses them."""
    h = hashlib.sha256()
    for digest in sorted(by_digest):
        h.update(digest.encode("ascii", "replace"))
        h.update(b"\0")
        h.update(by_digest[digest].encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16] if by_digest else ""


def remove(path: Optional[Path] = None) -> bool:
    """Delete the store (and a journal beside it); whether there was one."""
    path = path or paths.enrich_path()
    there = path.exists()
    for p in (path, Path(str(path) + "-journal")):
        with suppress(FileNotFoundError):
            os.unlink(p)
    return there


def import_rows(
    rows: Iterable[Stored], path: Optional[Path] = None, files: Sequence[Tuple[str, str]] = ()
) -> int:
    """Add ``rows`` (from a bundle) as imported, and the (file sha256, digest) pairs of
    ``files``; how many rows."""
    batch = [Stored(r.digest, r.about, r.tasks, r.model, r.prompt_version, IMPORTED) for r in rows]
    if not batch:
        return 0
    store = open_store(path, create=True)
    assert store is not None
    with store:
        store.put(batch)
        store.put_files(files)
    return len(batch)
