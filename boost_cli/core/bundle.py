"""`boost bundle export|import`: everything a replica needs to search and serve some taps,
in one deterministic file (`bundlefile`), so a team server runs with nothing cloned.

A bundle holds, per tap: its record (name, source, commit, counts), the catalog scan, the
served files themselves (every file the scan walks, no git history), its BM25 segment and
postings files as a build writes them, and its vectors (the `boost vectors export` file)
when the vector store has them at the tap's commit. Members, in this order::

    <tap>/catalog.json     the catalog cache record (entries, warnings) at the commit
    <tap>/index/<file>     segments/<tap>-<key>.seg and tiers/<tap>-<key>.tap
    <tap>/vectors.jsonl    only when the store holds the tap at its commit
    <tap>/enrich.jsonl     its items' enrichments (`enrich.share`), when there are any
    <tap>/files/<path>     each served file

Import verifies the whole file first (`BundleReader`), extracts each tap into a staging
folder, swaps it in under the tap lock (`registry.install_imported`), then brings the index
up to date: the bundled segment files carry the key a build would compute for the same
entries, so the build takes them as they are and only merges (no file is chunked again).
An imported tap is marked with the bundle's digest; `boost update` refuses it and says to
import a newer bundle.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from boost_cli import __version__
from boost_cli.core import catalog, indexing, paths, registry
from boost_cli.core.bundlefile import BundleReader, BundleWriter, canonical
from boost_cli.core.enrich import share
from boost_cli.core.errors import BoostError, ProviderError, UsageError
from boost_cli.core.index.builder import seed_files, segment_files
from boost_cli.core.models import MAX_FILE_BYTES, TapSnapshot

INDEX_FILE = re.compile(
    r"(segments/[A-Za-z0-9._-]+-[0-9a-f]{16}\.seg|tiers/[A-Za-z0-9._-]+-[0-9a-f]{16}\.tap)"
)
COMMIT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
RECORD_KEYS = ("source", "url", "commit", "counts", "warnings")
VECTORS = "vectors.jsonl"


@dataclass(frozen=True)
class ExportReport:
    file: str
    bytes: int
    digest: str
    taps: Tuple[Dict[str, Any], ...]
    skipped: Tuple[str, ...] = ()  # files left out (over the size limit)


@dataclass
class ImportedTap:
    name: str
    commit: str
    files: int
    entries: int
    vectors: Optional[int] = None  # vectors imported; None: the bundle had none
    replaced: bool = False  # an earlier import of this tap was replaced
    enrichments: Optional[int] = None  # enrichments imported; None: the bundle had none
    notes: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportReport:
    file: str
    digest: str
    taps: Tuple[ImportedTap, ...]
    index: Optional[Dict[str, Any]] = None


# --------------------------------------------------------------------------- export


def export(out: Path, taps: Sequence[str] = ()) -> ExportReport:
    """Write the named taps (default: every tap) to the bundle ``out``, atomically."""
    known = registry.require_taps(taps)
    names = sorted(set(taps)) if taps else [t.name for t in known]
    infos = {t.name: t for t in known}
    rows: List[Dict[str, Any]] = []
    skipped: List[str] = []
    with registry.held_snapshots(names) as snaps, BundleWriter(out) as writer:
        found = {s.name for s in snaps}
        missing = [n for n in names if n not in found]
        if missing:
            raise UsageError(
                f"the clone of tap {missing[0]!r} is missing",
                f"run 'boost update {missing[0]}' or tap it again, then export",
            )
        for snap in sorted(snaps, key=lambda s: s.name):
            info = infos[snap.name]
            rows.append(_export_tap(writer, snap, info, skipped))
        meta = {"boost": __version__, "taps": rows}
        size, digest = writer.finish(meta)
    return ExportReport(str(out), size, digest, tuple(rows), tuple(skipped))


def _export_tap(
    writer: BundleWriter, snap: TapSnapshot, info: registry.TapInfo, skipped: List[str]
) -> Dict[str, Any]:
    name = snap.name
    scan = registry.scan(info)
    writer.add(f"{name}/catalog.json", canonical(catalog.cache_record(info.commit, scan)))
    for rel, data in segment_files(snap):
        writer.add(f"{name}/index/{rel}", data)
    vectors = _vectors_bytes(info)
    if vectors is not None:
        writer.add(f"{name}/{VECTORS}", vectors)
    enriched = share.export_rows(snap)
    if enriched is not None:
        writer.add(f"{name}/{share.MEMBER}", enriched)
    files = 0
    for rel in catalog.tap_files(snap.root):
        if rel == registry.BUNDLE_MARK:
            continue  # a replica's own mark: its import writes a new one
        path = snap.root / rel
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                skipped.append(f"{name}:{rel}")
                continue
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(
                f"cannot read {name}:{rel} ({exc.strerror or exc})",
                f"run 'boost update {name}' to repair the clone, then export again",
            ) from exc
        writer.add(f"{name}/files/{rel}", data)
        files += 1
    record = {k: info.to_dict()[k] for k in RECORD_KEYS}
    return {"name": name, **record, "files": files, "vectors": vectors is not None}


def _vectors_bytes(info: registry.TapInfo) -> Optional[bytes]:
    """The tap's `boost vectors export` file when the store holds it at its commit."""
    store = paths.vectors_path()
    if not store.exists():
        return None
    from boost_cli.core import dense

    with tempfile.TemporaryDirectory(dir=str(paths.cache_dir())) as tmp:
        out = Path(tmp) / VECTORS
        try:
            dense.export_tap(store, info.name, info.commit, info.source, out)
        except BoostError:
            return None  # not embedded, or at another commit: the bundle has no vectors
        return out.read_bytes()


# --------------------------------------------------------------------------- import


def import_bundles(files: Sequence[Path]) -> List[ImportReport]:
    """Import each bundle (all its taps), then bring the index (and vectors) up to date."""
    reports: List[ImportReport] = []
    for path in files:
        with BundleReader(path) as reader:
            rows = _check_meta(reader)
            taps = tuple(_import_tap(reader, row) for row in rows)
            vectors = [(t, reader.read(f"{t.name}/{VECTORS}")) for t in taps if t.vectors == 0]
            for t in taps:
                if f"{t.name}/{share.MEMBER}" in reader.members:
                    kept, dropped = share.import_rows(reader.read(f"{t.name}/{share.MEMBER}"))
                    t.enrichments = kept
                    if dropped:
                        t.notes.append(f"{dropped} enrichment rows left out (malformed)")
        reports.append(ImportReport(str(path), reader.digest, taps))
        _import_vectors(vectors)
    if reports:
        built = indexing.reindex()
        last = reports[-1]
        reports[-1] = ImportReport(last.file, last.digest, last.taps, built.to_dict())
    return reports


def _check_meta(reader: BundleReader) -> List[Dict[str, Any]]:
    rows = reader.meta.get("taps")
    bad = UsageError(f"{reader.path} is not a usable boost bundle (its tap list is malformed)")
    if not isinstance(rows, list) or not rows:
        raise bad
    seen = set()
    for row in rows:
        if not isinstance(row, dict) or not all(k in row for k in ("name", *RECORD_KEYS)):
            raise bad
        name = row["name"]
        if not paths.is_tap_name(name) or name in seen:
            raise UsageError(
                f"{reader.path} names a tap {str(name)[:60]!r} boost refuses or repeats",
                "export it again with 'boost bundle export'",
            )
        seen.add(name)
        if not isinstance(row["commit"], str) or not COMMIT.fullmatch(row["commit"]):
            raise bad
        if not isinstance(row["counts"], dict) or not all(
            isinstance(v, int) for v in row["counts"].values()
        ):
            raise bad
        if f"{name}/catalog.json" not in reader.members:
            raise UsageError(f"{reader.path} has no catalog for tap {name!r}", "export it again")
    extra = [n for n in reader.order if n.split("/", 1)[0] not in seen]
    if extra:
        raise UsageError(f"{reader.path} holds {extra[0]!r}, of no tap it lists", "export it again")
    return rows


def _import_tap(reader: BundleReader, row: Dict[str, Any]) -> ImportedTap:
    name, commit = row["name"], row["commit"]
    try:
        scan_record = json.loads(reader.read(f"{name}/catalog.json").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{reader.path}: the catalog of tap {name!r} is not JSON") from exc
    if not isinstance(scan_record, dict) or scan_record.get("commit") != commit:
        raise UsageError(f"{reader.path}: the catalog of tap {name!r} is of another commit")
    prefix = f"{name}/files/"
    index_files: List[Tuple[str, bytes]] = []
    for member in reader.names(f"{name}/index/"):
        rel = member[len(f"{name}/index/") :]
        if not INDEX_FILE.fullmatch(rel):
            raise UsageError(f"{reader.path}: {member!r} is not an index file", "export it again")
        index_files.append((rel, reader.read(member)))
    record = {k: row[k] for k in RECORD_KEYS}
    record["bundle"] = reader.digest
    files = 0
    with registry.staging(name) as staged:
        for member in reader.names(prefix):
            dest = staged.joinpath(*member[len(prefix) :].split("/"))
            if dest.name == registry.BUNDLE_MARK:
                raise UsageError(f"{reader.path}: {member!r} has a name boost keeps for itself")
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                reader.extract(member, dest)
            except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
                raise UsageError(f"{reader.path}: {member!r} clashes with another member") from exc
            files += 1
        replaced = registry.install_imported(name, staged, record, scan_record)
    entries = len(scan_record.get("entries", []))
    tap = ImportedTap(name, commit, files, entries, replaced=replaced)
    if catalog.cached(name, paths.tap_dir(name), commit) is None:
        catalog.drop_cache(name)
        tap.notes.append("its catalog is of another boost version: scanned again")
    seed_files(index_files)
    if f"{name}/{VECTORS}" in reader.members:
        tap.vectors = 0  # imported after the tap is in place (`_import_vectors`)
    return tap


def _import_vectors(items: Sequence[Tuple[ImportedTap, bytes]]) -> None:
    if not items:
        return
    for tap, data in items:
        with tempfile.TemporaryDirectory(dir=str(paths.cache_dir())) as tmp:
            path = Path(tmp) / VECTORS
            path.write_bytes(data)
            try:
                r = indexing.import_vectors(path)
            except ProviderError:
                tap.vectors = None
                tap.notes.append("vectors left out: no embedding provider is configured")
                continue
            except BoostError as exc:
                tap.vectors = None
                tap.notes.append(f"vectors left out: {exc}")
                continue
            tap.vectors = r.cached
