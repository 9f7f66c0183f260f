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
    <tap>/files/<path>     each served file (a name a bundle cannot carry is left out
                           and reported, not the export)

`MEMBER_KINDS` is the one list of what a tap may carry: each kind's names, its size cap and
the check that a member's content belongs to the tap it is listed under. A new kind of
member is a new row there.

Import is all or nothing: it verifies every file first (`BundleReader`: digests, caps),
checks every tap record with the config's own check and every member's kind and size,
makes sure the disk has room, extracts each tap into a staging folder (streamed, never held
in memory) and checks each member there; only then are all taps swapped in together
(`registry.install_imported`). Then the index is brought up to date: the bundled segment
files carry the key a build would compute for the same entries, so the build takes them as
they are and only merges (no file is chunked again). An imported tap is marked with the
bundle's digest and its own content digest (`content_digest`, what its trust findings are
keyed by); `boost update` refuses it and says to import a newer bundle.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Pattern, Sequence, Tuple

from boost_cli import __version__
from boost_cli.core import catalog, config, indexing, paths, registry, skillmap
from boost_cli.core.bundlefile import (
    MAX_MEMBER_BYTES,
    REEXPORT,
    BundleReader,
    BundleWriter,
    canonical,
    check_member_name,
)
from boost_cli.core.enrich import share
from boost_cli.core.errors import BoostError, ProviderError, UsageError
from boost_cli.core.index.builder import seed_files, seed_identity, segment_files
from boost_cli.core.models import MAX_FILE_BYTES, TapSnapshot

ROOM_TO_SPARE = 64 << 20  # free disk an import leaves at least
COMMIT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
RECORD_KEYS = ("source", "url", "commit", "counts", "warnings")
VECTORS = "vectors.jsonl"


@dataclass(frozen=True)
class ExportReport:
    file: str
    bytes: int
    digest: str
    taps: Tuple[Dict[str, Any], ...]
    skipped: Tuple[Dict[str, str], ...] = ()  # files left out: {"file": "tap:path", "reason"}


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
    skipped: List[Dict[str, str]] = []
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
    writer: BundleWriter,
    snap: TapSnapshot,
    info: registry.TapInfo,
    skipped: List[Dict[str, str]],
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
        problem = _unbundlable(f"{name}/files/{rel}")
        if problem:  # a name a bundle cannot carry: that file is left out, not the export
            skipped.append({"file": f"{name}:{rel}", "reason": problem})
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                skipped.append({"file": f"{name}:{rel}", "reason": "over the size limit"})
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


def _unbundlable(member: str) -> Optional[str]:
    """Why a file cannot be a member under the name ``member`` (None when it can)."""
    try:
        member.encode("utf-8")
    except UnicodeEncodeError:
        return "a name that is not UTF-8"
    return check_member_name(member)


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


# --------------------------------------------------------------------------- members


@dataclass
class StagedTap:
    """One tap of a bundle being imported: its checked meta row, where its members are
    extracted (``files``: the tap's folder to be; ``side``: the other members), and what
    the member checks found (its scan record, index files, vectors file)."""

    reader: BundleReader
    row: Dict[str, Any]
    files: Path
    side: Path
    scan_record: Dict[str, Any] = field(default_factory=dict)
    index_files: List[Tuple[str, Path]] = field(default_factory=list)
    vectors: Optional[Path] = None
    enrich: Optional[Path] = None
    count: int = 0  # files

    @property
    def name(self) -> str:
        return str(self.row["name"])

    @property
    def commit(self) -> str:
        return str(self.row["commit"])

    def refuse(self, member: str, why: str) -> UsageError:
        return UsageError(f"{self.reader.path}: {member!r} {why}", REEXPORT)


@dataclass(frozen=True)
class MemberKind:
    """One kind of member a tap may carry (under ``<tap>/``): the names it goes by, the
    most it may hold decompressed, where it is extracted, and the check, run on the
    extracted file before anything is installed, that its content belongs to the tap it
    is listed under (not just its name)."""

    what: str
    pattern: Pattern[str]
    limit: int
    into_files: bool  # extracted into the tap's folder (else beside it)
    check: Callable[[StagedTap, str, Path], None]


def _check_catalog(tap: StagedTap, member: str, path: Path) -> None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise tap.refuse(member, "is not JSON (or nested too deeply)") from exc
    if not isinstance(record, dict) or record.get("commit") != tap.commit:
        raise tap.refuse(member, "is of another commit")
    entries = record.get("entries", [])
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and e.get("tap") == tap.name for e in entries
    ):
        raise tap.refuse(member, f"lists entries of another tap than {tap.name!r}")
    tap.scan_record = record


def _check_index(tap: StagedTap, member: str, path: Path) -> None:
    rel = member[len(f"{tap.name}/index/") :]
    try:
        owner, commit = seed_identity(path, rel)
    except UsageError as exc:
        raise tap.refuse(member, "is not an index file") from exc
    if owner != tap.name or commit not in ("", tap.commit):
        raise tap.refuse(member, f"is an index file of another tap than {tap.name!r}")
    tap.index_files.append((rel, path))


def _check_vectors(tap: StagedTap, member: str, path: Path) -> None:
    from boost_cli.core import dense

    header = dense.read_header(path)
    if header.tap != tap.name or header.commit != tap.commit:
        raise tap.refuse(
            member, f"holds the vectors of tap {header.tap[:60]!r} at {header.commit[:10]!r}"
        )
    tap.vectors = path


def _check_enrich(tap: StagedTap, member: str, path: Path) -> None:
    # Rows are data, checked one by one on import (`share.import_rows`), and only the rows
    # of this tap's own items are kept: a row for another tap's skill is dropped.
    tap.enrich = path


def _check_file(tap: StagedTap, member: str, path: Path) -> None:
    if path.name == registry.BUNDLE_MARK:
        raise tap.refuse(member, "has a name boost keeps for itself")
    tap.count += 1


# What a tap may carry, the one list: a member of no kind here is refused.
MEMBER_KINDS: Tuple[MemberKind, ...] = (
    MemberKind("catalog", re.compile(r"catalog\.json"), 64 << 20, False, _check_catalog),
    MemberKind(
        "index",
        re.compile(r"index/(segments/[^/]+\.seg|tiers/[^/]+\.tap)"),
        MAX_MEMBER_BYTES,
        False,
        _check_index,
    ),
    MemberKind("vectors", re.compile(re.escape(VECTORS)), MAX_MEMBER_BYTES, False, _check_vectors),
    MemberKind("enrichment", re.compile(re.escape(share.MEMBER)), 64 << 20, False, _check_enrich),
    MemberKind("file", re.compile(r"files/.+"), MAX_FILE_BYTES, True, _check_file),
)


def member_kind(rel: str) -> Optional[MemberKind]:
    """The kind of the member ``<tap>/<rel>``, None when a tap carries no such member."""
    return next((k for k in MEMBER_KINDS if k.pattern.fullmatch(rel)), None)


def content_digest(reader: BundleReader, name: str) -> str:
    """The digest of tap ``name``'s members in ``reader``: their names, sizes and digests
    (each checked as it is extracted). What the trust findings of an imported tap are
    keyed by (`registry.TapInfo.content_key`)."""
    prefix = f"{name}/"
    rows = [
        [n[len(prefix) :], reader.members[n]["size"], reader.members[n]["sha256"]]
        for n in reader.names(prefix)
    ]
    return hashlib.sha256(canonical(sorted(rows))).hexdigest()


# --------------------------------------------------------------------------- import


def import_bundles(files: Sequence[Path]) -> List[ImportReport]:
    """Import every tap of every bundle, all or nothing: each bundle is verified, each
    tap's members extracted and checked in staging folders, and only when all of them
    pass are they swapped in together (`registry.install_imported`); then the index (and
    vectors) are brought up to date. A refusal anywhere leaves the home as it was."""
    with contextlib.ExitStack() as stack:
        checked: List[Tuple[BundleReader, List[Dict[str, Any]]]] = []
        owner: Dict[str, Path] = {}
        for path in files:
            reader = stack.enter_context(BundleReader(path))
            rows = _check_meta(reader)
            for row in rows:
                if row["name"] in owner:
                    raise UsageError(
                        f"tap {row['name']!r} is in both {owner[row['name']]} and {path}",
                        "import them one at a time",
                    )
                owner[row["name"]] = path
            checked.append((reader, rows))
        _check_room([reader for reader, _ in checked])
        staged = [
            (reader, [_stage(stack, reader, row) for row in rows]) for reader, rows in checked
        ]
        taps = [t for _, ts in staged for t in ts]
        replaced = registry.install_imported(
            [registry.Imported(t.name, t.files, _record(t), t.scan_record) for t in taps]
        )
        done = {t.name: _installed(t, again) for t, again in zip(taps, replaced)}
        reports = [
            ImportReport(str(reader.path), reader.digest, tuple(done[t.name] for t in ts))
            for reader, ts in staged
        ]
        # Enrichments first: an enriched entry's vector text holds its enrichment, so the
        # bundle's vectors match this home's texts only once it is in the store.
        _import_enrichments([(done[t.name], t.enrich) for t in taps if t.enrich is not None])
        _import_vectors([(done[t.name], t.vectors) for t in taps if t.vectors is not None])
    if reports:
        built = indexing.reindex()
        last = reports[-1]
        reports[-1] = ImportReport(last.file, last.digest, last.taps, built.to_dict())
    return reports


def _check_room(readers: Sequence[BundleReader]) -> None:
    """Refuse, before anything is extracted, bundles whose members would not fit on the
    disk of the home (with room to spare)."""
    need = sum(r.total for r in readers)
    repos = paths.repos_dir()
    repos.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(str(repos)).free
    if need + ROOM_TO_SPARE > free:
        raise UsageError(
            f"importing needs {need / 1e6:.0f} MB and {repos} has {free / 1e6:.0f} MB free",
            "free some disk space, or import fewer taps at a time",
        )


def _check_meta(reader: BundleReader) -> List[Dict[str, Any]]:
    """The bundle's tap rows, every field checked (`config.record_problem`, the check a
    config load makes), and every member of a kind its tap may carry, within its cap."""
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
                REEXPORT,
            )
        seen.add(name)
        problem = config.record_problem({k: row[k] for k in RECORD_KEYS})
        if problem:
            raise UsageError(f"{reader.path}: the record of tap {name!r}: {problem}", REEXPORT)
        if not COMMIT.fullmatch(row["commit"]):
            raise UsageError(f"{reader.path}: the record of tap {name!r}: a bad commit", REEXPORT)
        if f"{name}/catalog.json" not in reader.members:
            raise UsageError(f"{reader.path} has no catalog for tap {name!r}", "export it again")
    for member in reader.order:
        tap, _, rel = member.partition("/")
        if tap not in seen:
            raise UsageError(f"{reader.path} holds {member!r}, of no tap it lists", REEXPORT)
        kind = member_kind(rel)
        if kind is None:
            raise UsageError(f"{reader.path}: {member!r} is not a member a tap carries", REEXPORT)
        if reader.members[member]["size"] > kind.limit:
            raise UsageError(
                f"{reader.path}: {member!r} is over the {kind.limit / 1e6:.0f} MB a "
                f"{kind.what} member may hold",
                REEXPORT,
            )
    return rows


def _stage(stack: contextlib.ExitStack, reader: BundleReader, row: Dict[str, Any]) -> StagedTap:
    """Extract tap ``row``'s members into a staging folder (streamed to disk, never held
    in memory) and run each one's check (`MEMBER_KINDS`)."""
    name = row["name"]
    files = stack.enter_context(registry.staging(name))
    side = files.parent / "members"
    tap = StagedTap(reader, row, files, side)
    prefix = f"{name}/"
    for member in reader.names(prefix):
        rel = member[len(prefix) :]
        kind = member_kind(rel)
        assert kind is not None  # `_check_meta` refused any other
        if kind.into_files:
            dest = files.joinpath(*rel[len("files/") :].split("/"))
        else:
            dest = side.joinpath(*rel.split("/"))
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            reader.extract(member, dest)
        except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
            raise tap.refuse(member, "clashes with another member") from exc
        kind.check(tap, member, dest)
    return tap


def _record(tap: StagedTap) -> Dict[str, Any]:
    record = {k: tap.row[k] for k in RECORD_KEYS}
    record["bundle"] = tap.reader.digest
    record["content"] = content_digest(tap.reader, tap.name)
    return record


def _installed(tap: StagedTap, replaced: bool) -> ImportedTap:
    """What became of ``tap`` once installed: its index files seeded for the next build,
    and a note when its catalog must be scanned again."""
    entries = len(tap.scan_record.get("entries", []))
    done = ImportedTap(tap.name, tap.commit, tap.count, entries, replaced=replaced)
    skillmap.drop_cache(tap.name)  # built for what the tap held before
    if catalog.cached(tap.name, paths.tap_dir(tap.name), tap.commit) is None:
        catalog.drop_cache(tap.name)
        done.notes.append("its catalog is of another boost version: scanned again")
    seed_files(tap.index_files)
    if tap.vectors is not None:
        done.vectors = 0  # imported after every tap is in place (`_import_vectors`)
    return done


def _import_enrichments(items: Sequence[Tuple[ImportedTap, Path]]) -> None:
    """Store each installed tap's bundled enrichments, keeping only rows for the items its
    own files make (`enrich.share.import_rows`): a bundle cannot enrich another tap's skill."""
    for tap, path in items:
        kept, dropped, foreign = share.import_rows(
            path.read_bytes(), registry.snapshots([tap.name])
        )
        tap.enrichments = kept
        if dropped:
            tap.notes.append(f"{dropped} enrichment rows left out (malformed)")
        if foreign:
            tap.notes.append(f"{foreign} enrichment rows left out (not of this tap's items)")


def _import_vectors(items: Sequence[Tuple[ImportedTap, Path]]) -> None:
    for tap, path in items:
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
