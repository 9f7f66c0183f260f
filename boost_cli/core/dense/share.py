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
import binascii
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from boost_cli.core import atomic
from boost_cli.core.dense.build import DenseBuildReport, build_dense
from boost_cli.core.dense.store import (
    IDENTITY,
    Store,
    mismatch,
    open_existing,
    open_for_build,
    parity_fields,
)
from boost_cli.core.dense.units import tap_units
from boost_cli.core.embed import EmbedConfig, EmbeddingCache, dimensions_of, text_hash, unpack
from boost_cli.core.errors import ConfigError, NotFoundError, UsageError
from boost_cli.core.models import TapSnapshot

FORMAT = "boost-vectors"
VERSION = 1
_HASH = re.compile(r"[0-9a-f]{64}\Z")


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
    """Read a file written by `export_tap`; `UsageError` naming what is wrong with it."""
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror})", "check the path") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not a boost vectors file", _REEXPORT) from exc
    try:
        header = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise UsageError(f"{path} is not a boost vectors file", _REEXPORT)
    if header.get("version") != VERSION:
        raise UsageError(
            f"{path} is a version {header.get('version')!r} vectors file, this boost reads "
            f"version {VERSION}",
            "export it again with this version of boost",
        )
    if not isinstance(header.get("tap"), str) or not header["tap"]:
        raise UsageError(f"{path} names no tap", _REEXPORT)
    parity = header.get("parity")
    if not isinstance(parity, dict) or not all(isinstance(v, str) for v in parity.values()):
        raise UsageError(f"{path} has no valid parity block", _REEXPORT)
    width = 4 * int(parity.get("dimensions") or 0)
    vectors: Dict[str, bytes] = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            digest, encoded = json.loads(line)
            blob = base64.b64decode(encoded, validate=True)
        except (ValueError, TypeError, binascii.Error):
            raise UsageError(f"{path}: line {number} is not a vector", _REEXPORT) from None
        if not isinstance(digest, str) or not _HASH.match(digest) or len(blob) != width:
            raise UsageError(f"{path}: line {number} is not a vector", _REEXPORT)
        vectors[digest] = blob
    if len(vectors) != header.get("count") or not width:
        raise UsageError(f"{path} is truncated or damaged", _REEXPORT)
    return VectorFile(
        str(header.get("tap", "")),
        str(header.get("commit", "")),
        str(header.get("source", "")),
        {str(k): v for k, v in parity.items()},
        vectors,
    )


_REEXPORT = "ask for a file written by 'boost vectors export'"


@dataclass(frozen=True)
class ImportReport:
    """What `import_vectors` did: ``cached`` vectors went into the cache; the tap's
    ``texts`` at its commit, of which ``covered`` were in the cache after that; ``build``
    is the store build that followed when every text was covered (None otherwise)."""

    tap: str
    commit: str  # the tap's commit here
    file_commit: str
    cached: int
    texts: int
    covered: int
    build: Optional[DenseBuildReport]


def import_vectors(
    found: VectorFile,
    path: Path,
    snapshot: Optional[TapSnapshot],
    config: EmbedConfig,
    unit: str,
    store_path: Path,
) -> ImportReport:
    """Put the vectors of ``found`` (read from ``path``) into the cache of the store at
    ``store_path``, then build its tap from the cache when that covers every text of the
    tap at ``snapshot``'s commit (nothing is embedded: a tap at another commit whose texts
    changed is left for ``boost reindex --dense``). Refuses, with the fix, a file whose
    parity block is not ``config``'s (and ``unit``'s), and a tap that is not tapped."""
    problem = mismatch(found.parity, config, unit, holder=f"{path.name}")
    known = dimensions_of(config)
    if problem is None and known and str(known) != found.parity.get("dimensions"):
        problem = (
            f"{path.name} holds {found.parity.get('dimensions')}-dimensional vectors, "
            f"the configured embedder makes {known}-dimensional ones"
        )
    if problem is not None:
        raise ConfigError(
            problem,
            "configure the embedder the file names (docs/dense.md), or embed with yours: "
            "'boost reindex --dense'",
        )
    if snapshot is None:
        raise NotFoundError(
            f"tap {found.tap!r} (the tap {path.name} holds) is not tapped",
            f"run 'boost tap {found.source or 'SOURCE'} --name {found.tap}', then import again",
        )
    store = open_for_build(store_path, "auto")
    try:
        cache = EmbeddingCache(store.conn)
        items = [(h, list(unpack(blob))) for h, blob in sorted(found.vectors.items())]
        cache.store(items, config, found.parity.get("served_model") or config.model)
        units = tap_units(snapshot, unit)[0]
        hashes = sorted({text_hash(u.text) for u in units})
        covered = len(cache.lookup(hashes, config))
    finally:
        store.close()
    build = None
    if covered == len(hashes):
        build = build_dense(
            [snapshot], config=config, unit=unit, path=store_path, only=[snapshot.name]
        )
    return ImportReport(
        snapshot.name, snapshot.commit, found.commit, len(items), len(hashes), covered, build
    )
