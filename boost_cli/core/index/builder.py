"""Bringing the index up to date: which taps' segments to rebuild, building them (in
worker processes when there is enough work), the merge, the manifest switch, and the
clean-up of files no manifest points to. One build at a time per index (a file lock).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

from boost_cli.core.atomic import write_bytes, write_json
from boost_cli.core.enrich import store as enrich_store
from boost_cli.core.errors import IndexUnavailable, UsageError
from boost_cli.core.index import segment
from boost_cli.core.index.container import Container, dumps, pack
from boost_cli.core.index.layout import (
    ENGINE,
    FORMAT_VERSION,
    MANIFEST,
    MERGE_MAGIC,
    SEGMENT_MAGIC,
    SEGMENTS,
    TAP_MAGIC,
    TIERS,
    SegmentDamaged,
    segment_damaged,
)
from boost_cli.core.index.manifest import previous_manifest
from boost_cli.core.index.merge import merge
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.segment import Segment, safe_name
from boost_cli.core.index.tier import Tier, tier_task, tiers_plan
from boost_cli.core.index.workers import Pool, worker_count
from boost_cli.core.models import TapSnapshot
from boost_cli.core.paths import index_dir

_STALE_TMP_SECONDS = 3600
_PARALLEL_MIN_ENTRIES = 1500  # below this a worker pool costs more than it saves
_PARALLEL_MIN_CHUNKS = 20_000  # the same for the tiers to build


@dataclass(frozen=True)
class BuildReport:
    """What `build` did: taps built / reused / removed, the index's size, and the time."""

    built: Tuple[str, ...]
    reused: Tuple[str, ...]
    removed: Tuple[str, ...]
    entries: int
    contents: int
    chunks: int
    terms: int
    bytes: int
    seconds: float
    skipped: Tuple[str, ...] = ()  # entry ids whose file could not be read

    @property
    def taps_total(self) -> int:
        return len(self.built) + len(self.reused)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "taps": self.taps_total,
            "built": list(self.built),
            "reused": list(self.reused),
            "removed": list(self.removed),
            "entries": self.entries,
            "contents": self.contents,
            "chunks": self.chunks,
            "terms": self.terms,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True)
class TapSource:
    """A tap as a build first sees it: enough to tell from the manifest alone whether its
    segment is current, and how to load its entries when it is not.

    ``scan`` names what made the entries from the tap's files (the catalog scan's version);
    ``entries`` is a size hint (the config's counts) for choosing worker processes.
    ``load`` must pickle (a module-level function, or a `functools.partial` of one): a
    worker process calls it, so the build's parent never holds the taps' entries.
    """

    name: str
    commit: str
    root: Path
    scan: str
    load: Callable[[], TapSnapshot] = field(compare=False, repr=False)
    entries: int = 0


TapInput = Union[TapSnapshot, TapSource]


def source_key(tap: TapSource, params: IndexParams, prefix: bool) -> str:
    """What a segment depends on, told without loading the tap's entries: its commit
    and scan version (not its folder: see `segment.segment_key`), the chunking, the prefix flag, the layout and boost's version.

    The entries are a function of the files at the commit and of the scanner (the
    catalog caches them per commit on the same assumption), so an unchanged source key
    means an unchanged `segment_key`.
    """
    from boost_cli import __version__

    blob = dumps(
        [
            FORMAT_VERSION,
            segment.SEGMENT_LAYOUT,
            __version__,
            tap.name,
            tap.commit,
            segment.portable_root(tap.root),
            tap.scan,
            prefix,
            [params.chunk_target, params.chunk_overlap, params.max_chunks],
            *([params.enrich_shape()] if params.enrich_shape() else []),
        ]
    )
    return hashlib.sha256(blob).hexdigest()[:16]


def with_enrichment(params: IndexParams) -> IndexParams:
    """``params`` keyed by the enrichment store as it is now (`enrich.store.fingerprint`):
    no store, a damaged one or a weight of 0 indexes no enrichment."""
    if not params.enrich_weight:
        return dataclasses.replace(params, enrich_key="")
    try:
        texts = enrich_store.texts()
    except enrich_store.EnrichDamaged:
        texts = {}
    return dataclasses.replace(params, enrich_key=enrich_store.fingerprint(texts))


def build(
    taps: Sequence[TapInput],
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    params: Optional[IndexParams] = None,
    use_prefix: bool = True,
    progress: Optional[Callable[[int, int, str], None]] = None,
    workers: Optional[int] = None,
) -> BuildReport:
    """Bring the index under `index_dir()` up to date with ``taps``.

    ``taps`` are `TapSnapshot` values (entries loaded) or `TapSource` values (loaded only
    when their segment must be rebuilt). A tap's segment is rebuilt only when its key
    (`segment.segment_key`) changed, or with ``force`` (every tap) / ``force_taps``
    (those); taps not passed are dropped. A `TapSource` whose `source_key` is the
    manifest's, with its segment file present at the recorded size, is current without
    being loaded: with nothing changed a build reads only the manifest and stats files.
    New files are written beside the old ones and `manifest.json` is replaced last,
    atomically, so a crash at any point leaves the previous index usable.
    ``progress(done, total, tap)`` is called as each changed tap is done. ``workers``:
    processes for segment builds (None: `workers.worker_count`, when there is enough work).
    """
    root = index_dir()
    root.mkdir(parents=True, exist_ok=True)
    with _build_lock(root):
        return _build(taps, force, set(force_taps), params, use_prefix, progress, workers)


@contextlib.contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    """One build at a time per index, so no build deletes files another is about to publish.

    A POSIX advisory lock (``flock``) on ``.lock``. The kernel drops it when the holding
    process dies, however it dies, and no other process shares it: worker processes are
    started without the parent's open files (`workers.Pool`). Where there is no flock
    (Windows) builds are not serialised.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(root / ".lock", "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _build(
    taps: Sequence[TapInput],
    force: bool,
    force_taps: Set[str],
    params: Optional[IndexParams],
    use_prefix: bool,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> BuildReport:
    t0 = time.perf_counter()
    params = with_enrichment(params or IndexParams())
    params.validate()
    ordered = sorted(taps, key=lambda t: t.name)
    names = [t.name for t in ordered]
    if len(set(names)) != len(names):
        raise UsageError("two snapshots have the same tap name", "pass each tap once")
    root = index_dir()
    old = previous_manifest(root)
    param_dict = params.to_dict(use_prefix)
    removed = tuple(sorted(set(old["commits"]) - set(names))) if old else ()
    sources = {
        t.name: source_key(t, params, use_prefix) for t in ordered if isinstance(t, TapSource)
    }
    held = _held_postings(root, old)  # tap → (segment key, tier file) of the taps a tier holds

    records: Dict[str, Dict[str, Any]] = {}
    todo: List[TapInput] = []
    for t in ordered:
        rebuild = force or t.name in force_taps
        rec = None if rebuild else _current_record(root, old, t.name, sources.get(t.name), held)
        if rec is None:
            todo.append(t)
        else:
            records[t.name] = rec
    built: Set[str] = set()
    skipped: List[str] = []
    fresh: Dict[str, str] = {}  # tap → its postings file, to go into a tier
    if todo:
        for d in (SEGMENTS, TIERS):
            (root / d).mkdir(parents=True, exist_ok=True)
        jobs = [(t, held.get(t.name, ("", ""))[0], force or t.name in force_taps) for t in todo]
        for name, rec, was_built, skip, tap_file in _segments(
            jobs, params, use_prefix, progress, workers
        ):
            records[name] = rec
            skipped += skip
            if tap_file is not None:
                fresh[name] = tap_file
            if was_built:
                built.add(name)

    seg_files = [records[n]["file"] for n in names]
    if old is not None and not fresh and _same_segments(root, old, names, seg_files):
        # Same segment files, in the same order, postings all in the tiers: the merge
        # and the tiers are the same too.
        merge_record, tiers, stats = old["merge"], list(old["tiers"]), dict(old["stats"])
        if (
            old["params"] == param_dict
            and old.get("sources", {}) == sources
            and old["segments"] == records
        ):
            return _report(names, built, removed, stats, t0, skipped)  # nothing to write
    else:
        try:
            merge_record, tiers, meta = _merge_and_tiers(
                root, None if force else old, held, names, records, fresh, workers
            )
        except (_StaleTier, SegmentDamaged) as exc:
            # An old tier that held unchanged taps' postings is damaged, or a reused
            # segment is: redo those taps (a segment this build wrote is not redone).
            stale = exc if isinstance(exc, _StaleTier) else _StaleTier({exc.tap}, exc)
            if stale.taps <= force_taps | built or force:
                raise stale.cause from None
            again = _build(
                taps, force, force_taps | stale.taps, params, use_prefix, progress, workers
            )
            redone = built | set(again.built)  # this attempt built some already
            return dataclasses.replace(
                again,
                built=tuple(n for n in names if n in redone),
                reused=tuple(n for n in names if n not in redone),
            )
        stats = {
            "taps": len(names),
            "entries": meta["entries"],
            "contents": meta["contents"],
            "chunks": meta["chunks"],
            "terms": meta["terms"],
            "tiers": len(tiers),
            "avgdl": round(meta["avgdl"], 6),
            "bytes": merge_record["size"]
            + sum(r["size"] for r in records.values())
            + sum(r["size"] for r in tiers),
        }
    manifest = {
        "version": FORMAT_VERSION,
        "engine": ENGINE,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commits": {t.name: t.commit for t in ordered},
        "params": param_dict,
        "stats": stats,
        "segments": {n: records[n] for n in names},
        "sources": sources,
        "tiers": tiers,
        "merge": merge_record,
    }
    write_json(root / MANIFEST, manifest)
    _cleanup(root, {str(merge_record["file"])}, set(seg_files), {str(r["file"]) for r in tiers})
    return _report(names, built, removed, stats, t0, skipped)


def _report(
    names: Sequence[str],
    built: Set[str],
    removed: Tuple[str, ...],
    stats: Dict[str, Any],
    t0: float,
    skipped: Sequence[str],
) -> BuildReport:
    return BuildReport(
        built=tuple(n for n in names if n in built),
        reused=tuple(n for n in names if n not in built),
        removed=removed,
        entries=int(stats.get("entries", 0)),
        contents=int(stats.get("contents", 0)),
        chunks=int(stats.get("chunks", 0)),
        terms=int(stats.get("terms", 0)),
        bytes=int(stats.get("bytes", 0)),
        seconds=time.perf_counter() - t0,
        skipped=tuple(sorted(skipped)),
    )


def _size_is(path: Path, size: Any) -> bool:
    try:
        return path.stat().st_size == size
    except OSError:
        return False


def _held_postings(root: Path, old: Optional[Dict[str, Any]]) -> Dict[str, Tuple[str, str]]:
    """Tap → (the segment key whose postings a tier of the previous generation holds, that
    tier's file), for the taps whose tier file is there at its recorded size."""
    out: Dict[str, Tuple[str, str]] = {}
    if old is None:
        return out
    try:
        for rec in old["tiers"]:
            if _size_is(root / str(rec["file"]), rec["size"]):
                for tap, key in rec["taps"]:
                    out[str(tap)] = (str(key), str(rec["file"]))
    except (KeyError, TypeError, ValueError):
        return {}
    return out


def _current_record(
    root: Path,
    old: Optional[Dict[str, Any]],
    name: str,
    source: Optional[str],
    held: Dict[str, Tuple[str, str]],
) -> Optional[Dict[str, Any]]:
    """The previous manifest's record of ``name``'s segment when its source key is
    unchanged, the file is there at its recorded size (one ``stat``) and a tier there
    holds its postings; else None."""
    if old is None or source is None or old.get("sources", {}).get(name) != source:
        return None
    rec = old["segments"].get(name)
    if not isinstance(rec, dict) or not {"file", "size", "crc32", "key"} <= rec.keys():
        return None
    if held.get(name, ("", ""))[0] != rec["key"]:
        return None
    return dict(rec) if _size_is(root / str(rec["file"]), rec["size"]) else None


def _same_segments(
    root: Path, old: Dict[str, Any], names: Sequence[str], seg_files: Sequence[str]
) -> bool:
    """Whether the previous generation has these segment files in this order, and its
    merge and tier files at their recorded sizes."""
    try:
        before = [old["segments"][n]["file"] for n in old["commits"]]
        files = [old["merge"], *old["tiers"]]
        return (
            list(old["commits"]) == list(names)
            and before == list(seg_files)
            and all(_size_is(root / str(r["file"]), r["size"]) for r in files)
        )
    except (KeyError, TypeError):
        return False


class _StaleTier(Exception):
    """An old tier could not be read to take unchanged taps' postings out of it."""

    def __init__(self, taps: Set[str], cause: IndexUnavailable) -> None:
        super().__init__(str(cause))
        self.taps = taps
        self.cause = cause


def _merge_and_tiers(
    root: Path,
    old: Optional[Dict[str, Any]],
    held: Dict[str, Tuple[str, str]],
    names: Sequence[str],
    records: Dict[str, Dict[str, Any]],
    fresh: Dict[str, str],
    workers: Optional[int],
) -> Tuple[Dict[str, Any], List[Dict[str, Any]], Dict[str, Any]]:
    """The merge (copies, lengths, groups), then the tiers (their live counts need the
    copies), then the merge file naming the tiers: (merge record, tier records, meta).
    A tier of ``old`` (the previous manifest) is reused when it has the same taps at the
    same keys and its file is there at its size; ``old`` None (a forced build): every
    tier is written anew, so a tier file damaged in place is replaced."""
    opened: List[Segment] = []
    try:
        for n in names:
            try:
                opened.append(Segment(root / str(records[n]["file"])))
            except FileNotFoundError as exc:
                raise SegmentDamaged(n, f"{records[n]['file']} is missing") from exc
            except IndexUnavailable as exc:
                raise segment_damaged(n, exc) from exc
        sections, meta = merge(opened)
    finally:
        for seg in opened:
            seg.c.close()
    old_tiers = list(old["tiers"]) if old else []
    keys = {n: str(records[n]["key"]) for n in names}
    plans = tiers_plan(root, old_tiers, held, names, keys, fresh, meta, dict(sections))
    jobs = [p.job for p in plans if p.job is not None]
    chunks = sum(int(p.meta["chunks"]) for p in plans if p.job is not None)
    if workers is None:
        n_workers = worker_count(len(jobs)) if chunks >= _PARALLEL_MIN_CHUNKS else 1
    else:
        n_workers = min(workers, len(jobs))
    try:
        if n_workers <= 1:
            results = [tier_task(job) for job in jobs]
        else:
            with Pool(n_workers) as pool:
                results = list(pool.map_unordered(tier_task, jobs))
    except IndexUnavailable as exc:
        stale = {t for p in plans for t in p.from_old}
        raise _StaleTier(stale, exc) from exc
    by_file = {r["file"]: r for r in results}
    tiers = [by_file.get(p.record["file"], p.record) for p in plans]
    vocab: Set[bytes] = set()
    for rec in tiers:
        t = Tier(root / str(rec["file"]))
        try:
            vocab.update(t.c.read("vocab").split(b"\n"))
        finally:
            t.close()
    vocab.discard(b"")
    meta["terms"] = len(vocab)
    meta["tiers"] = [p.meta for p in plans]
    merge_bytes = pack(MERGE_MAGIC, meta, sections)
    crc = zlib.crc32(merge_bytes)
    merge_name = f"merge-{crc:08x}{len(merge_bytes):08x}.bin"
    write_bytes(root / merge_name, merge_bytes)
    return {"file": merge_name, "size": len(merge_bytes), "crc32": crc}, tiers, meta


SegmentResult = Tuple[str, Dict[str, Any], bool, List[str], Optional[str]]
SegmentJob = Tuple[TapInput, IndexParams, bool, str, bool, Optional[str]]


def segment_task(job: SegmentJob) -> SegmentResult:
    """One tap's segment, current on disk: (tap, its manifest record, built?, skipped ids,
    its postings file when they must go into a tier).

    Loads the tap (a `TapSource` is loaded here, in the worker process) and keys it. An
    intact segment file with that key is kept unless ``rebuild``: with its postings in
    a tier of the previous generation (``held`` is its key there), or in an intact
    postings file a crashed build left; else the segment and its postings are built.
    Also the worker-process entry (`workers.Pool`).
    """
    tap, params, prefix, root, rebuild, held = job
    snap = tap.load() if isinstance(tap, TapSource) else tap
    if snap.name != tap.name:
        raise UsageError(
            f"tap {tap.name!r} loaded as {snap.name!r}", "pass each tap under its own name"
        )
    key = segment.segment_key(snap, params, prefix)
    stem = f"{safe_name(snap.name)}-{key}"
    rel, tap_rel = f"{SEGMENTS}/{stem}.seg", f"{TIERS}/{stem}.tap"
    path, tap_path = Path(root) / rel, Path(root) / tap_rel
    if not rebuild:
        rec = _intact(path, key, SEGMENT_MAGIC)
        if rec is not None and held == key:
            return snap.name, {"file": rel, "key": key, **rec}, False, [], None
        if rec is not None and _intact(tap_path, key, TAP_MAGIC) is not None:
            return snap.name, {"file": rel, "key": key, **rec}, False, [], tap_rel
    data, tap_data, skipped = segment.segment_bytes(snap, params, prefix, key)
    write_bytes(tap_path, tap_data)
    write_bytes(path, data)
    built: Dict[str, Any] = {"file": rel, "size": len(data), "crc32": zlib.crc32(data)}
    return snap.name, {**built, "key": key}, True, skipped, tap_rel


def segment_files(
    snap: TapSnapshot, params: Optional[IndexParams] = None, use_prefix: bool = True
) -> List[Tuple[str, bytes]]:
    """``snap``'s segment and postings files as `build` would write them (paths relative
    to the index folder): what `boost bundle export` ships so an import chunks nothing."""
    params = with_enrichment(params or IndexParams())
    key = segment.segment_key(snap, params, use_prefix)
    data, tap_data, _ = segment.segment_bytes(snap, params, use_prefix, key)
    stem = f"{safe_name(snap.name)}-{key}"
    return [(f"{SEGMENTS}/{stem}.seg", data), (f"{TIERS}/{stem}.tap", tap_data)]


_SEEDED = re.compile(r"(segments|tiers)/([A-Za-z0-9._-]+)-([0-9a-f]{16})\.(seg|tap)")


def seed_identity(path: Path, rel: str) -> Tuple[str, str]:
    """The tap and commit a bundled index file (at ``path``, to be placed at ``rel`` in the
    index folder) is of, read from its own header: a segment or postings file whose
    header names the key and the tap its file name does ("" as the commit of a postings
    file, which records none). `UsageError` for anything else."""
    m = _SEEDED.fullmatch(rel)
    if m is None or (m.group(1), m.group(4)) not in ((SEGMENTS, "seg"), (TIERS, "tap")):
        raise UsageError(f"{rel!r} is not an index file name", "export the bundle again")
    try:
        c = Container(path, SEGMENT_MAGIC if m.group(4) == "seg" else TAP_MAGIC)
    except IndexUnavailable as exc:
        raise UsageError(
            f"{rel!r} is not an index file ({exc})", "export the bundle again"
        ) from exc
    try:
        meta = c.meta
    finally:
        c.close()
    tap = meta.get("tap") if isinstance(meta, dict) else None
    commit = meta.get("commit", "") if isinstance(meta, dict) else None
    if (
        not isinstance(tap, str)
        or safe_name(tap) != m.group(2)
        or meta.get("key") != m.group(3)
        or not isinstance(commit, str)
    ):
        raise UsageError(f"{rel!r} is not the index file its name says", "export the bundle again")
    return tap, commit


def seed_files(files: Sequence[Tuple[str, Path]]) -> None:
    """Place bundled `segment_files` (each extracted at a path, checked by `seed_identity`)
    in the index folder for the next `build` to take (it checks each file's key and every
    byte before it does; a file already there is kept)."""
    root = index_dir()
    for rel, src in files:
        path = root / rel
        if path.parent.name not in (SEGMENTS, TIERS) or path.parent.parent != root:
            raise UsageError(f"{rel!r} is not an index file name", "export the bundle again")
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _copy_in(src, path)


def _copy_in(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` a block at a time through a temporary file beside it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=str(dest.parent))
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _intact(path: Path, key: str, magic: bytes) -> Optional[Dict[str, int]]:
    """Size and CRC32 of the file at ``path`` if it exists, has ``key`` and passes
    `Container.verify` (every byte); None when it must be (re)built."""
    try:
        c = Container(path, magic)
    except (FileNotFoundError, IndexUnavailable):
        return None  # absent, damaged or of another format: rebuilt
    try:
        if c.meta.get("key") != key:
            return None
        data = c.verify()
        return {"size": len(data), "crc32": zlib.crc32(data)}
    except IndexUnavailable:
        return None  # a checksum mismatch: rebuilt
    finally:
        c.close()


def _segments(
    jobs: Sequence[Tuple[TapInput, Optional[str], bool]],
    params: IndexParams,
    prefix: bool,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> List[SegmentResult]:
    """`segment_task` for every job (tap, key of its postings in an old tier, rebuild?),
    in worker processes when that pays."""
    root = str(index_dir())
    full: List[SegmentJob] = [(t, params, prefix, root, rb, held) for t, held, rb in jobs]
    # Largest taps first, so the workers finish together.
    full.sort(key=lambda job: -_size_hint(job[0]))
    if workers is None:
        enough = sum(_size_hint(job[0]) for job in full) >= _PARALLEL_MIN_ENTRIES
        workers = worker_count(len(full)) if enough else 1
    workers = min(workers, len(full))
    out: List[SegmentResult] = []

    def done(res: SegmentResult) -> None:
        out.append(res)
        if progress:
            progress(len(out), len(full), res[0])

    if workers <= 1:
        for job in full:
            done(segment_task(job))
    else:
        with Pool(workers) as pool:
            for res in pool.map_unordered(segment_task, full):
                done(res)
    return out


def _size_hint(tap: TapInput) -> int:
    return tap.entries if isinstance(tap, TapSource) else len(tap.entries)


def _cleanup(
    root: Path, keep_merge: Set[str], keep_segments: Set[str], keep_tiers: Set[str]
) -> None:
    """Delete the files no manifest points to any more (postings files once in a tier),
    and old temporaries of crashed builds.

    Deleting is best effort: a file still open in a reader on Windows cannot be deleted
    and is left for the next build (nothing refers to it).
    """
    now = time.time()

    def sweep(folder: str, keep: Set[str], pattern: str) -> None:
        path = root / folder if folder else root
        if not path.is_dir():
            return
        for p in path.iterdir():
            name = p.name
            rel = f"{folder}/{name}" if folder else name
            with contextlib.suppress(OSError):
                if name.startswith(".") and name.endswith(".tmp"):
                    if now - p.stat().st_mtime > _STALE_TMP_SECONDS:
                        p.unlink()
                elif re.fullmatch(pattern, name) and rel not in keep:
                    p.unlink()

    sweep("", keep_merge, r"merge-[0-9a-f]{16}\.bin")
    sweep(SEGMENTS, keep_segments, r".+-[0-9a-f]{16}\.seg")
    sweep(TIERS, keep_tiers, r".+-[0-9a-f]{16}\.(tir|tap)")
