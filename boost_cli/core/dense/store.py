"""The vector store: one SQLite file (`paths.vectors_path()`), its schema, the backends,
and the identity of the embedder that filled it.

- ``meta`` — format version and the parity identity: provider, model, requested and actual
  dimensions, the model the provider said it served, normalisation (``l2``), text unit,
  and the provider's own fields (the local model's file sha256 and tokenizer version).
  A query is embedded with the same provider/model or refused (`DenseUnavailable`); a
  build with another embedder or unit resets the store and re-embeds.
- ``taps`` — each tap's commit; a build re-embeds only taps whose commit changed, each
  tap's rows and commit written in one transaction (never half-written).
- ``entries`` — the `Entry` JSON and file sha256, so a hit needs no catalog.
- ``items`` — one row per vector (entry or chunk): float32 blob, kind, snippet. The truth.
- ``cache`` — `EmbeddingCache`: vectors by text hash, committed per provider batch, so an
  interrupted build resumes without re-sending anything and identical texts are sent once.
- ``vec_items`` — where sqlite-vec loads, a ``vec0`` (cosine) index derived from ``items``.
  A generation stamp in ``meta`` says whether it is in sync; a Python that cannot load the
  extension still writes ``items``, and the next build that can resyncs the index. Until
  then queries use the exact flat search, which ranks the same.
- ``flat`` — the vectors laid out for `FlatIndex`, derived from ``items`` like
  ``vec_items`` and stamped with the generation it was built from; a store without it (or
  with a stale one) is scanned row by row.

Backends: ``sqlite-vec`` when ``sqlite3`` can load extensions and ``sqlite_vec`` imports;
otherwise ``flat``. `backend_status()` says which and why. Nothing here imports sqlite_vec
at import.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.dense.errors import REINDEX_FIX, DenseUnavailable
from boost_cli.core.dense.flat import FlatCache, FlatIndex, ranked, scan_knn
from boost_cli.core.dense.units import Unit
from boost_cli.core.embed import (
    EmbedConfig,
    EmbeddingCache,
    model_id,
    pack,
    parity_of,
    text_hash,
)
from boost_cli.core.errors import UsageError

FORMAT_VERSION = 1
BACKENDS = ("auto", "flat", "sqlite-vec")

_NO_LOAD_FIX = (
    "this Python's sqlite3 cannot load extensions (built without it: pyenv/macOS system "
    "Python) — use a Python whose sqlite3 supports enable_load_extension, e.g. Debian's "
    "/usr/bin/python3, and `pip install '.[rag]' (in boost's clone)`"
)

# --------------------------------------------------------------------------- backends


def _load_vec(conn: sqlite3.Connection) -> Tuple[bool, str]:
    """Load sqlite-vec into ``conn``: (loaded, what happened / how to get it)."""
    if not hasattr(conn, "enable_load_extension"):
        return False, _NO_LOAD_FIX
    try:
        import sqlite_vec
    except ImportError:
        return False, "sqlite-vec is not installed — `pip install '.[rag]' (in boost's clone)`"
    try:
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        (version,) = conn.execute("SELECT vec_version()").fetchone()
    except (sqlite3.Error, OSError, AttributeError) as exc:
        return False, f"sqlite-vec did not load ({exc}) — reinstall it: `pip install -U sqlite-vec`"
    return True, f"sqlite-vec {version}"


def backend_status() -> Tuple[str, str]:
    """("sqlite-vec", "sqlite-vec v0.1.9 loaded") or ("flat", why, and how to get sqlite-vec)."""
    conn = sqlite3.connect(":memory:")
    try:
        ok, note = _load_vec(conn)
    finally:
        conn.close()
    if ok:
        return "sqlite-vec", f"{note} loaded"
    return "flat", f"exact flat scan (quantised index; numpy with the [local] extra): {note}"


class Store:
    """The SQLite file, its schema, and the vec0 index when sqlite-vec loads."""

    def __init__(
        self,
        path: Path,
        backend: str = "auto",
        flat_cache: Optional[FlatCache] = None,
        read_only: str = "",
    ) -> None:
        if backend not in BACKENDS:
            raise UsageError(f"unknown dense backend {backend!r}", f"use one of: {BACKENDS}")
        self.path = path
        self.flat_cache = flat_cache if flat_cache is not None else FlatCache()
        # ``read_only``: "" (read-write), "ro" (SQLite's read-only mode) or "immutable"
        # (no locks and no write-ahead log either: for a store on a read-only file system,
        # which nobody can change meanwhile).
        self.read_only = read_only
        if read_only:
            flag = "immutable=1" if read_only == "immutable" else "mode=ro"
            uri = f"{path.resolve().as_uri()}?{flag}"
            self.conn = sqlite3.connect(uri, timeout=30, isolation_level=None, uri=True)
        else:
            self.conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        # WAL (set once, in create_schema): queries read while a build writes, and with
        # synchronous=NORMAL a crash may lose the last commits but never corrupts the file.
        try:
            self.conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError:
            self.conn.close()
            raise
        if backend == "flat":
            self.vec, self.vec_note = False, "flat backend requested"
        else:
            self.vec, self.vec_note = _load_vec(self.conn)
            if backend == "sqlite-vec" and not self.vec:
                self.conn.close()
                raise DenseUnavailable("sqlite-vec is not available", self.vec_note)

    @property
    def backend(self) -> str:
        return "sqlite-vec" if self.vec and self.vec_in_sync() else "flat"

    def close(self) -> None:
        self.conn.close()

    # -- schema and meta

    def create_schema(self) -> None:
        c = self.conn
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        c.execute(
            "CREATE TABLE IF NOT EXISTS taps (name TEXT PRIMARY KEY, commit_id TEXT NOT NULL,"
            " entries INTEGER NOT NULL, items INTEGER NOT NULL)"
        )
        c.execute(
            "CREATE TABLE IF NOT EXISTS entries (entry_id TEXT PRIMARY KEY, tap TEXT NOT NULL,"
            " kind TEXT NOT NULL, file_sha256 TEXT, entry_json TEXT NOT NULL)"
        )
        c.execute(
            "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, tap TEXT NOT NULL,"
            " entry_id TEXT NOT NULL, kind TEXT NOT NULL, chunk INTEGER NOT NULL,"
            " text_hash TEXT NOT NULL, snippet TEXT NOT NULL, vector BLOB NOT NULL)"
        )
        c.execute("CREATE INDEX IF NOT EXISTS items_tap ON items (tap)")
        # The hybrid's feedback step reads one entry's vector per search (`entry_vector`):
        # without this index that is a scan of every row (~10 ms for the shared corpus).
        c.execute("CREATE INDEX IF NOT EXISTS items_entry ON items (entry_id)")
        EmbeddingCache(c)
        if self.meta().get("format_version") is None:
            self.set_meta(format_version=str(FORMAT_VERSION), generation="0")

    def has_schema(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        return row is not None

    def meta(self) -> Dict[str, str]:
        if not self.has_schema():
            return {}
        return dict(self.conn.execute("SELECT key, value FROM meta"))

    def set_meta(self, **values: Optional[str]) -> None:
        for k, v in values.items():
            if v is None:
                self.conn.execute("DELETE FROM meta WHERE key=?", (k,))
            else:
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))

    def set_identity(self, ident: Mapping[str, str]) -> None:
        """Record the embedder ``ident`` (see `identity`), dropping the parity fields of the
        one before it."""
        stale = set(parity_fields(self.meta())) - set(ident)
        self.set_meta(**{k: None for k in stale}, **ident)

    def taps(self) -> Dict[str, str]:
        return dict(self.conn.execute("SELECT name, commit_id FROM taps"))

    def damage(self) -> Optional[str]:
        """SQLite's first complaint about the file (``PRAGMA quick_check``: every page read
        and checked, 35 ms for the shared corpus's store, 0.28 s uncached), or None when
        it finds none."""
        rows = self.conn.execute("PRAGMA quick_check(1)").fetchall()
        first = str(rows[0][0]) if rows else "ok"
        return None if first == "ok" else first

    def counts(self) -> Tuple[int, int]:
        """(entries, vectors): the sums of the per-tap counts `replace_tap` records with
        the rows, in the same transaction. Every search's status asks; counting the rows
        took 0.6 ms for the shared corpus and 5.7 ms at 10x."""
        entries, items = self.conn.execute(
            "SELECT COALESCE(SUM(entries), 0), COALESCE(SUM(items), 0) FROM taps"
        ).fetchone()
        return int(entries), int(items)

    # -- the vec0 index

    def _vec_table_exists(self) -> bool:
        row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='vec_items'").fetchone()
        return row is not None

    def vec_in_sync(self) -> bool:
        meta = self.meta()
        return (
            self.vec
            and self._vec_table_exists()
            and meta.get("vec_generation") == meta.get("generation")
        )

    def sync_vec(self) -> None:
        """Rebuild ``vec_items`` from ``items`` when it is missing or stale."""
        if not self.vec or self.vec_in_sync():
            return
        meta = self.meta()
        dims = int(meta.get("dimensions") or 0)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute("DROP TABLE IF EXISTS vec_items")
            if dims:
                self.conn.execute(
                    "CREATE VIRTUAL TABLE vec_items USING vec0(item_id INTEGER PRIMARY KEY,"
                    f" embedding float[{dims}] distance_metric=cosine, kind TEXT)"
                )
                self.conn.execute(
                    "INSERT INTO vec_items (item_id, embedding, kind)"
                    " SELECT id, vector, kind FROM items"
                )
                self.set_meta(vec_generation=meta.get("generation", "0"))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    # -- writes

    def reset(self) -> None:
        """Forget every tap and vector (the cache stays: it is keyed by model)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for table in ("items", "entries", "taps"):
                self.conn.execute(f"DELETE FROM {table}")
            if self.vec:
                self.conn.execute("DROP TABLE IF EXISTS vec_items")
            self._bump()
            self.set_meta(dimensions=None, served_model=None, vec_generation=None)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _bump(self) -> None:
        generation = str(int(self.meta().get("generation", "0")) + 1)
        in_sync = self.vec_in_sync()
        self.set_meta(generation=generation)
        if in_sync:
            self.set_meta(vec_generation=generation)

    def replace_tap(
        self,
        name: str,
        commit: Optional[str],
        units: Sequence[Unit],
        vectors: Sequence[Sequence[float]],
        hashes: Mapping[str, Optional[str]],
    ) -> None:
        """Swap tap ``name``'s rows for ``units`` (None commit: remove it), atomically."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            in_sync = self.vec_in_sync()
            if in_sync:
                c.execute(
                    "DELETE FROM vec_items WHERE item_id IN (SELECT id FROM items WHERE tap=?)",
                    (name,),
                )
            c.execute("DELETE FROM items WHERE tap=?", (name,))
            c.execute("DELETE FROM entries WHERE tap=?", (name,))
            c.execute("DELETE FROM taps WHERE name=?", (name,))
            if commit is not None:
                seen: Dict[str, None] = {}
                for u, vector in zip(units, vectors):
                    if u.entry.id not in seen:
                        seen[u.entry.id] = None
                        c.execute(
                            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                            (
                                u.entry.id,
                                name,
                                u.entry.kind,
                                hashes.get(u.entry.id),
                                json.dumps(u.entry.to_dict(), ensure_ascii=False, default=str),
                            ),
                        )
                    blob = pack(vector)
                    cur = c.execute(
                        "INSERT INTO items (tap, entry_id, kind, chunk, text_hash, snippet, vector)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (
                            name,
                            u.entry.id,
                            u.entry.kind,
                            u.chunk,
                            text_hash(u.text),
                            u.snippet,
                            blob,
                        ),
                    )
                    if in_sync:
                        c.execute(
                            "INSERT INTO vec_items (item_id, embedding, kind) VALUES (?, ?, ?)",
                            (cur.lastrowid, blob, u.entry.kind),
                        )
                c.execute(
                    "INSERT INTO taps VALUES (?, ?, ?, ?)", (name, commit, len(seen), len(units))
                )
            self._bump()
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def forget_commits(self, names: Sequence[str]) -> List[str]:
        """Make the taps ``names`` look stale (their vectors stay, their commit is cleared),
        so the next build re-embeds them; the names that were in the store."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            known = [
                n for n in names if c.execute("SELECT 1 FROM taps WHERE name=?", (n,)).fetchone()
            ]
            c.executemany("UPDATE taps SET commit_id='' WHERE name=?", [(n,) for n in known])
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return known

    # -- reads

    def knn(
        self, query: Sequence[float], k: int, kind: Optional[str], taps: Sequence[str] = ()
    ) -> List[Tuple[int, float]]:
        """(item id, cosine similarity) of the ``k`` nearest items of ``kind`` in ``taps``
        (empty: every tap), best first."""
        if k <= 0:
            return []
        if taps:
            # The vec0 index has no tap column: filter exactly, with the flat index or a scan.
            flat = self.flat_index()
            if flat is None:
                return scan_knn(self.conn, query, k, kind, taps)
            marks = ",".join("?" * len(taps))
            sql = f"SELECT id FROM items WHERE tap IN ({marks})"
            among = {int(i) for (i,) in self.conn.execute(sql, tuple(taps))}
            return flat.knn(self.conn, query, k, kind, among) if among else []
        if self.vec_in_sync():
            sql = "SELECT item_id, distance FROM vec_items WHERE embedding MATCH ? AND k = ?"
            params: List[Any] = [pack(query), k]
            if kind is not None:
                sql += " AND kind = ?"
                params.append(kind)
            rows = self.conn.execute(sql + " ORDER BY distance", params).fetchall()
            return ranked((int(i), 1.0 - float(d)) for i, d in rows)[:k]
        flat = self.flat_index()
        if flat is not None:
            return flat.knn(self.conn, query, k, kind)
        return scan_knn(self.conn, query, k, kind)

    # -- the quantised flat index

    def flat_in_sync(self) -> bool:
        meta = self.meta()
        return meta.get("flat_generation") == meta.get("generation") and bool(
            meta.get("flat_generation")
        )

    def sync_flat(self) -> None:
        """Rewrite the ``flat`` table (see `FlatIndex`) from ``items`` when it is stale."""
        if self.flat_in_sync():
            return
        rows = self.conn.execute("SELECT id, kind, vector FROM items ORDER BY id").fetchall()
        blobs = FlatIndex.encode(rows)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS flat (name TEXT PRIMARY KEY, data BLOB NOT NULL)"
            )
            self.conn.execute("DELETE FROM flat")
            self.conn.executemany("INSERT INTO flat VALUES (?, ?)", sorted(blobs.items()))
            # flat_id names this very index: a store deleted and rebuilt to the same
            # generation must not be served from a process's cache of the old one.
            self.set_meta(
                flat_generation=self.meta().get("generation", "0"), flat_id=os.urandom(8).hex()
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def flat_index(self) -> Optional[FlatIndex]:
        """The quantised index of this store's vectors (loaded once per ``flat_cache`` and
        build), or None when the store predates it or it is stale."""
        meta = self.meta()
        generation = meta.get("flat_generation")
        if not generation or generation != meta.get("generation"):
            return None
        key = (str(self.path.resolve()), generation, meta.get("flat_id", ""))
        cached = self.flat_cache.get(key)
        if cached is not None:
            return cached
        blobs = dict(self.conn.execute("SELECT name, data FROM flat"))
        index = FlatIndex.decode(blobs)
        if index is None:
            return None
        self.flat_cache.put(key, index)
        return index


# --------------------------------------------------------------------------- parity


IDENTITY = ("provider", "model", "requested_dimensions", "unit", "normalisation")


def identity(config: EmbedConfig, unit: str) -> Dict[str, str]:
    """What the store records about the embedder that filled it: the fields every store
    has (`IDENTITY`), the provider's own parity fields (a model file's sha256, a
    tokenizer version: `Provider.parity`), and ``parity`` naming those fields."""
    extra = parity_of(config)
    return {
        "provider": config.provider,
        "model": model_id(config),
        "requested_dimensions": str(config.dimensions or 0),
        "unit": unit,
        "normalisation": "l2",
        **extra,
        "parity": ",".join(sorted(extra)),
    }


def parity_fields(meta: Mapping[str, str]) -> Dict[str, str]:
    """The provider's parity fields a store's ``meta`` records (see `identity`)."""
    return {k: meta.get(k, "") for k in meta.get("parity", "").split(",") if k}


def _describe(meta: Mapping[str, str]) -> str:
    dims = meta.get("requested_dimensions", "0")
    extra = f", {dims} dimensions" if dims not in ("0", "") else ""
    return f"{meta.get('provider')} {meta.get('model')}{extra}"


def mismatch(
    meta: Mapping[str, str],
    config: EmbedConfig,
    unit: Optional[str],
    holder: str = "the vector store",
) -> Optional[str]:
    """Why vectors in a store with ``meta`` (``holder`` in the message) cannot be compared
    with ``config``'s, or None."""
    want = identity(config, unit or meta.get("unit", "entry"))
    have = {k: meta.get(k, "") for k in want}
    have.update(parity_fields(meta))
    have["parity"] = meta.get("parity", "")
    if have == want:
        return None
    if any(have.get(k) != want[k] for k in IDENTITY if k != "unit"):
        return (
            f"{holder} was embedded with {_describe(have)}, "
            f"but the configured embedder is {_describe(want)}"
        )
    fields = sorted(k for k in {**have, **want} if k not in IDENTITY and k != "parity")
    changed = [k for k in fields if have.get(k, "") != want.get(k, "")]
    if changed:
        was, now = ([f"{k} {v.get(k) or 'none'}" for k in changed] for v in (have, want))
        return (
            f"{holder} was embedded with {_describe(have)} ({', '.join(was)}), "
            f"but the configured embedder has {', '.join(now)}"
        )
    return f"{holder} holds {have['unit']} vectors, {want['unit']} vectors were asked for"


def open_existing(
    path: Path, backend: str = "auto", flat_cache: Optional[FlatCache] = None
) -> Store:
    """The store at ``path`` for reading, or DenseUnavailable saying how to make one.

    A store SQLite cannot open for writing (a read-only BOOST_HOME or cache folder: its
    write-ahead log cannot be made) is opened read-only instead, and says so in
    `Store.read_only`; one that cannot be opened even so is unavailable, with the fix
    (a writable folder, not a rebuild that could not write either)."""
    if not path.exists():
        raise DenseUnavailable("no dense index yet", REINDEX_FIX)
    try:
        return _open_checked(path, backend, flat_cache, "")
    except sqlite3.DatabaseError as exc:
        failure = disk_failure(exc, path)
        if failure is None or failure.errno not in (errno.EROFS, errno.EACCES):
            raise DenseUnavailable(
                f"the vector store {path} is unreadable ({exc})", REINDEX_FIX
            ) from exc
        for mode in ("ro", "immutable"):
            try:
                return _open_checked(path, backend, flat_cache, mode)
            except sqlite3.DatabaseError:
                continue
        raise DenseUnavailable(
            f"the vector store {path} cannot be opened: {failure.strerror}", READ_ONLY_FIX
        ) from exc


READ_ONLY_FIX = "point BOOST_HOME at a writable folder (or make this one writable for you)"


def _open_checked(
    path: Path, backend: str, flat_cache: Optional[FlatCache], read_only: str
) -> Store:
    """`open_existing`'s open, in ``read_only`` mode: SQLite's errors pass through; a
    store of another format is DenseUnavailable."""
    store = Store(path, backend, flat_cache, read_only)
    try:
        meta = store.meta()
    except sqlite3.DatabaseError:
        store.close()
        raise
    if meta.get("format_version") != str(FORMAT_VERSION):
        store.close()
        raise DenseUnavailable(
            f"the vector store has format {meta.get('format_version')!r}, this boost reads "
            f"{FORMAT_VERSION}",
            REINDEX_FIX,
        )
    return store


def open_for_build(path: Path, backend: str) -> Store:
    """The store at ``path``, created when missing and recreated when unreadable or of
    another format (it is a cache: everything in it can be rebuilt). A store SQLite
    cannot *write* (a full disk, a locked or read-only file: `sqlite3.OperationalError`)
    is not unreadable: it is kept and the error raised (`disk_errors` names the cause)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        store = Store(path, backend)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError:
        drop_store(path)
        store = Store(path, backend)
    try:
        version = store.meta().get("format_version")
        if version is not None and version != str(FORMAT_VERSION):
            raise sqlite3.DatabaseError(f"format {version}")
        store.create_schema()
    except sqlite3.OperationalError:
        store.close()
        raise
    except sqlite3.DatabaseError:
        store.close()
        drop_store(path)
        store = Store(path, backend)
        store.create_schema()
    return store


# What SQLite says when a write failed below it (SQLITE_FULL, SQLITE_IOERR_*): it keeps
# no errno, so `disk_failure` looks at the disk and the file-size limit for the cause.
_DISK_MESSAGES = ("database or disk is full", "disk i/o error")
_READ_ONLY_MESSAGES = ("readonly database", "unable to open database file")
LOW_FREE_BYTES = 4 << 20  # free space under this after a failed write: the disk is full


def disk_failure(exc: BaseException, path: Path) -> Optional[OSError]:
    """The OSError behind SQLite's report ``exc`` of a failed write to the store at
    ``path``, or None when ``exc`` is not one: EROFS or EACCES for a store that cannot be
    opened or written (a read-only file system, a folder not writable); ENOSPC when the
    disk it lies on is (nearly) full, EFBIG when a file-size limit (``ulimit -f``) is set,
    else ENOSPC for "disk is full" and EIO for an I/O error."""
    text = str(exc).lower()
    if not isinstance(exc, sqlite3.OperationalError):
        return None
    if any(m in text for m in _READ_ONLY_MESSAGES):
        code = errno.EROFS if _read_only_fs(path.parent) else errno.EACCES
        return OSError(code, os.strerror(code), str(path))
    if not any(m in text for m in _DISK_MESSAGES):
        return None
    code = errno.EIO
    if _free_bytes(path.parent) < LOW_FREE_BYTES:
        code = errno.ENOSPC
    elif _size_limited():
        code = errno.EFBIG
    elif "full" in text:
        code = errno.ENOSPC
    return OSError(code, os.strerror(code), str(path))


def _free_bytes(folder: Path) -> int:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows): say nothing about space
        return LOW_FREE_BYTES
    return st.f_bavail * st.f_frsize


def _read_only_fs(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _size_limited() -> bool:
    try:
        import resource  # Unix only
    except ImportError:  # pragma: no cover - Windows
        return False
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return soft != resource.RLIM_INFINITY


@contextmanager
def disk_errors(path: Path) -> Iterator[None]:
    """Writes to the store at ``path`` whose failure below SQLite (a full disk, a file-size
    limit) comes out as the OSError behind it (`disk_failure`), which the CLI shows as one
    line with the fix. A store missing before the block and left by a failed one is
    removed, so a half-made store is never mistaken for one; an existing store keeps its
    last committed state (SQLite rolls the failed transaction back)."""
    existed = path.exists()
    try:
        yield
    except sqlite3.Error as exc:
        failure = disk_failure(exc, path)
        if failure is None:
            raise
        if not existed:
            drop_store(path)
        raise failure from exc
    except OSError as exc:
        if not existed and exc.errno in _WRITE_ERRNOS:
            drop_store(path)
        raise


# The OS errors of a write that could not happen (not of a provider or a network).
_WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EFBIG,
    errno.EIO,
    errno.EROFS,
    errno.EACCES,
    getattr(errno, "EDQUOT", errno.ENOSPC),
}


def forget_commits(path: Path, names: Sequence[str]) -> List[str]:
    """`Store.forget_commits` on the store at ``path``; nothing (an empty list) when there
    is no usable store — a store made later embeds every tap anyway."""
    if not names or not path.exists():
        return []
    try:
        store = open_existing(path, "flat")
    except DenseUnavailable:
        return []
    try:
        return store.forget_commits(names)
    finally:
        store.close()


def store_bytes(path: Path) -> int:
    """The store's size on disk, its write-ahead log included (0 when there is none)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except FileNotFoundError:
            continue
    return total


def drop_store(path: Path) -> None:
    """Delete the store at ``path`` with its journal and write-ahead files (a process that
    has it open keeps reading the old file until it closes it)."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            continue
