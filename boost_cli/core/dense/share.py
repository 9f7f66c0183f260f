"""Shareable vectors: one tap's vectors written to a file, and read back, so a team embeds a
registry once and everyone imports it (``boost vectors export|import``).

The file is JSON lines, UTF-8, deterministic (identical store content → identical bytes: no
timestamps, keys sorted, vectors sorted by text hash):

    {"commit": "…", "count": N, "format": "boost-vectors", "parity": {…}, "source": "…",
     "tap": "…", "version": 1}
    ["<sha256 of the embedded text>", "<base64 of the float32 little-endian vector>"]
    …

The parity block is the store's embedder identity (`store.identity`: provider, model, the
provider's own fields such as the local model's file hash and tokenizer version, requested
and actual dimensions, normalisation, unit) plus the model the provider said it served.
Vectors are keyed by the hash of the text embedded, not by entry: an importer derives the
same texts from the same files, finds them all in its cache, and builds the tap's vectors
from there without embedding anything. Nothing here knows the taps layer: callers pass the
tap's commit and source.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from boost_cli.core import atomic
from boost_cli.core.dense.build import DenseBuildReport, build_dense
from boost_cli.core.dense.errors import DenseUnavailable
from boost_cli.core.dense.store import (
    IDENTITY,
    Store,
    disk_errors,
    mismatch,
    open_existing,
    open_for_build,
    parity_fields,
)
from boost_cli.core.dense.units import UNITS, enrichments, tap_units
from boost_cli.core.dense.vecfile import FORMAT, REEXPORT, VERSION, Header, read_header, rows
from boost_cli.core.embed import EmbedConfig, EmbeddingCache, dimensions_of, text_hash, unpack
from boost_cli.core.errors import ConfigError, UsageError
from boost_cli.core.models import TapSnapshot


@dataclass(frozen=True)
class VectorFile:
    """One tap's vectors: ``vectors`` maps each text's sha256 to its packed float32 bytes."""

    tap: str
    commit: str
    source: str
    parity: Dict[str, str]
    vectors: Dict[str, bytes]

    @property
    def unit(self) -> str:
        return self.parity.get("unit", "entry")

    def dumps(self) -> bytes:
        """The file's bytes: the same for the same content, whatever the order it came in."""
        header = {
            "format": FORMAT,
            "version": VERSION,
            "tap": self.tap,
            "commit": self.commit,
            "source": self.source,
            "parity": dict(sorted(self.parity.items())),
            "count": len(self.vectors),
        }
        lines = [json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":"))]
        for digest, blob in sorted(self.vectors.items()):
            lines.append(json.dumps([digest, base64.b64encode(blob).decode("ascii")]))
        return ("\n".join(lines) + "\n").encode("utf-8")


def parity_block(meta: Mapping[str, str]) -> Dict[str, str]:
    """A store's embedder identity, as the file carries it (see the module docstring)."""
    keys = (*IDENTITY, "parity", "dimensions", "served_model")
    block = {k: meta.get(k, "") for k in keys}
    block.update(parity_fields(meta))
    return block


def read_tap(store: Store, tap: str) -> Tuple[str, Dict[str, bytes]]:
    """(the commit ``tap`` was embedded at, text hash → vector bytes) from ``store``;
    `UsageError` with the fix when the store does not hold the tap."""
    commit = store.taps().get(tap)
    if commit is None:
        raise UsageError(
            f"the vector store holds no vectors for tap {tap!r}",
            "run 'boost reindex --dense' first (see 'boost doctor' for the store)",
        )
    rows = store.conn.execute(
        "SELECT text_hash, vector FROM items WHERE tap=? ORDER BY text_hash", (tap,)
    )
    return commit, {h: bytes(v) for h, v in rows}


def export_tap(store_path: Path, tap: str, commit: str, source: str, out: Path) -> VectorFile:
    """Write ``tap``'s vectors from the store at ``store_path`` to ``out`` (atomically),
    once the store is known to hold them at ``commit`` (the tap's commit now)."""
    store = open_existing(store_path, "flat")
    try:
        stored, vectors = read_tap(store, tap)
        found = VectorFile(tap, stored, source, parity_block(store.meta()), vectors)
    finally:
        store.close()
    if stored != commit:
        raise UsageError(
            f"the vector store holds tap {tap!r} at commit {stored[:10]}, the tap is at "
            f"{commit[:10]}",
            "run 'boost reindex --dense' first, then export",
        )
    atomic.write_bytes(out, found.dumps())
    return found


def load_file(path: Path) -> VectorFile:
    """Read a whole file written by `export_tap`, every row checked (`vecfile`);
    `UsageError` naming what is wrong with it. An import streams the file instead."""
    header = read_header(path)
    return VectorFile(
        header.tap, header.commit, header.source, header.parity, dict(rows(path, header))
    )


def _stored_meta(store_path: Path) -> Dict[str, str]:
    """The meta of the vector store at ``store_path``, read only; {} when there is no
    store or it cannot be read (a build recreates it)."""
    if not store_path.exists():
        return {}
    try:
        store = open_existing(store_path, "flat")
    except DenseUnavailable:
        return {}
    try:
        return dict(store.meta()) if store.has_schema() else {}
    finally:
        store.close()


def stored_unit(store_path: Path) -> Optional[str]:
    """The unit the vector store at ``store_path`` holds vectors of, None when there is
    no store (or it holds none yet, or cannot be read: a build recreates it)."""
    meta = _stored_meta(store_path)
    unit = meta.get("unit") if meta.get("provider") else None
    return unit if unit in UNITS else None


def row_cap(texts: int) -> int:
    """The most rows a vectors file of a tap with ``texts`` distinct texts here may hold:
    room for a file of another commit, at which the tap had more texts, and no more."""
    return 2 * texts + 1000


@dataclass(frozen=True)
class ImportReport:
    """What `import_vectors` did. Of the file's ``rows``, ``matched`` are vectors of the
    tap's ``texts`` at its commit here: ``cached`` of them went into the cache and
    ``kept`` were there already (a vector embedded here is never replaced); the other
    ``ignored`` rows (texts the tap does not have) went nowhere. ``covered`` of the texts
    were in the cache after that; ``build`` is the store build that followed when all of
    them were (None otherwise)."""

    tap: str
    commit: str  # the tap's commit here
    file_commit: str
    rows: int
    matched: int
    cached: int
    kept: int
    ignored: int
    texts: int
    covered: int
    build: Optional[DenseBuildReport]


def check_parity(header: Header, path: Path, config: EmbedConfig, unit: str) -> None:
    """`ConfigError` (or, when only the unit differs, `UsageError` naming ``--unit``) when
    the file's vectors cannot be compared with ``config``'s ``unit`` vectors."""
    if header.unit != unit and header.unit in UNITS:
        raise UsageError(
            f"{path.name} holds {header.unit} vectors, {unit} vectors are used here",
            f"import it with 'boost vectors import {path.name} --unit {header.unit}' (the "
            f"vector store then holds {header.unit} vectors; or set settings.embed.unit), "
            "or embed with yours: 'boost reindex --dense'",
        )
    problem = mismatch(header.parity, config, unit, holder=f"{path.name}")
    known = dimensions_of(config)
    if problem is None and known and known != header.dimensions:
        problem = (
            f"{path.name} holds {header.dimensions}-dimensional vectors, "
            f"the configured embedder makes {known}-dimensional ones"
        )
    if problem is not None:
        raise ConfigError(
            problem,
            "configure the embedder the file names (docs/dense.md), or embed with yours: "
            "'boost reindex --dense'",
        )


def import_vectors(
    header: Header,
    path: Path,
    snapshot: TapSnapshot,
    config: EmbedConfig,
    unit: str,
    store_path: Path,
) -> ImportReport:
    """Put the vectors of the file at ``path`` (whose checked header is ``header``) for
    the texts of tapped ``snapshot`` into the cache of the store at ``store_path``, then
    build its tap from the cache when that covers every text of the tap at its commit
    (nothing is embedded: a tap at another commit whose texts changed is left for
    ``boost reindex --dense``).

    The file is untrusted: its rows are streamed and checked (`vecfile.rows`) and all
    of them are read before anything is written, so a bad row anywhere changes nothing.
    Only rows for the tap's own texts are kept (memory: the tap's vectors at most); a
    row for any other text is counted and dropped; a vector already in the cache (one
    embedded here) is never replaced; a file with more rows than `row_cap` allows for
    the tap is refused before it is read. Refuses, with the fix, a file whose parity
    block is not ``config``'s (and ``unit``'s)."""
    check_parity(header, path, config, unit)
    units = tap_units(snapshot, unit, enrichments(unit))[0]
    wanted = {text_hash(u.text) for u in units}
    if header.count > row_cap(len(wanted)):
        raise UsageError(
            f"{path.name} says it holds {header.count} vectors, but tap {header.tap!r} has "
            f"{len(wanted)} {unit} texts here: it is not a vectors file of this tap",
            REEXPORT,
        )
    served = header.parity.get("served_model", "")
    if not served:
        raise UsageError(f"{path.name}'s parity block names no served model", REEXPORT)
    meta = _stored_meta(store_path)
    if (
        meta.get("served_model")
        and meta["served_model"] != served
        and mismatch(meta, config, unit) is None
    ):
        raise ConfigError(
            f"{path.name} holds vectors of a model served as {served!r}, the vector "
            f"store's come from {meta['served_model']!r}",
            "ask for a file embedded with the same model, or embed with yours: "
            "'boost reindex --dense'",
        )
    found: Dict[str, bytes] = {}
    total = 0
    for digest, blob in rows(path, header):
        total += 1
        if digest in wanted:
            found[digest] = blob
    # A full disk or a read-only store: the OSError behind it (one line and the fix), the
    # store as it was (a store this import made is removed).
    with disk_errors(store_path):
        store = open_for_build(store_path, "auto")
        try:
            cache = EmbeddingCache(store.conn)
            items = [(h, unpack(found[h])) for h in sorted(found)]
            cached = cache.store_new(items, config, served)
            covered = len(cache.lookup(sorted(wanted), config))
        finally:
            store.close()
        build = None
        if covered == len(wanted):
            build = build_dense(
                [snapshot], config=config, unit=unit, path=store_path, only=[snapshot.name]
            )
    return ImportReport(
        tap=snapshot.name,
        commit=snapshot.commit,
        file_commit=header.commit,
        rows=total,
        matched=len(found),
        cached=cached,
        kept=len(found) - cached,
        ignored=total - len(found),
        texts=len(wanted),
        covered=covered,
        build=build,
    )
