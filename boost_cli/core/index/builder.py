"""Bringing the index up to date: which taps' segments to rebuild, building them (in
worker processes when there is enough work), the merge, the manifest switch, and the
clean-up of files no manifest points to. One build at a time per index (a file lock).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from boost_cli.core.atomic import write_bytes, write_json
from boost_cli.core.errors import IndexUnavailable, UsageError
from boost_cli.core.index.layout import ENGINE, FORMAT_VERSION, MANIFEST, SEGMENTS
from boost_cli.core.index.manifest import file_record, files_intact, previous_manifest
from boost_cli.core.index.merge import merge
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.segment import Segment, safe_name, segment_job, segment_key
from boost_cli.core.models import TapSnapshot
from boost_cli.core.paths import index_dir

_STALE_TMP_SECONDS = 3600
_PARALLEL_MIN_ENTRIES = 1500  # below this a worker pool costs more than it saves


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


def build(
    snapshots: Sequence[TapSnapshot],
    *,
    force: bool = False,
    force_taps: Sequence[str] = (),
    params: Optional[IndexParams] = None,
    use_prefix: bool = True,
    progress: Optional[Callable[[int, int, str], None]] = None,
    workers: Optional[int] = None,
) -> BuildReport:
    """Bring the index under `index_dir()` up to date with ``snapshots``.

    A tap's segment is rebuilt only when its key (`segment.segment_key`) changed, or with
    ``force`` (every tap) / ``force_taps`` (those); taps not passed are dropped. New files
    are written beside the old ones and `manifest.json` is replaced last, atomically, so a
    crash at any point leaves the previous index usable. ``progress(done, total, tap)`` is called
    as each segment is built. ``workers``: processes for segment builds (None: 2 when there is
    enough work and a second CPU, else 1).
    """
    root = index_dir()
    root.mkdir(parents=True, exist_ok=True)
    with _build_lock(root):
        return _build(snapshots, force, set(force_taps), params, use_prefix, progress, workers)


@contextlib.contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    """One build at a time per index, so no build deletes files another is about to publish.

    A POSIX advisory lock; where there is none (Windows) builds are not serialised.
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
    snapshots: Sequence[TapSnapshot],
    force: bool,
    force_taps: Set[str],
    params: Optional[IndexParams],
    use_prefix: bool,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> BuildReport:
    t0 = time.perf_counter()
    params = params or IndexParams()
    params.validate()
    snaps = sorted(snapshots, key=lambda s: s.name)
    names = [s.name for s in snaps]
    if len(set(names)) != len(names):
        raise UsageError("two snapshots have the same tap name", "pass each tap once")
    root = index_dir()
    seg_dir = root / SEGMENTS
    old = previous_manifest(root)
    param_dict = params.to_dict(use_prefix)
    keys = {s.name: segment_key(s, params, use_prefix) for s in snaps}
    removed = tuple(sorted(set(old["commits"]) - set(names))) if old else ()

    if (
        old is not None
        and not force
        and not force_taps
        and old["params"] == param_dict
        and {t: r.get("key") for t, r in old["segments"].items()} == keys
        and files_intact(root, old)
    ):
        st = old["stats"]
        return BuildReport(
            built=(),
            reused=tuple(names),
            removed=(),
            entries=int(st.get("entries", 0)),
            contents=int(st.get("contents", 0)),
            chunks=int(st.get("chunks", 0)),
            terms=int(st.get("terms", 0)),
            bytes=int(st.get("bytes", 0)),
            seconds=time.perf_counter() - t0,
        )

    seg_dir.mkdir(parents=True, exist_ok=True)
    files = {s.name: f"{safe_name(s.name)}-{keys[s.name]}.seg" for s in snaps}
    opened: Dict[str, Segment] = {}
    try:
        todo: List[TapSnapshot] = []
        for s in snaps:
            rebuild = force or s.name in force_taps
            seg = None if rebuild else _reusable(seg_dir / files[s.name], keys[s.name])
            if seg is None:
                todo.append(s)
            else:
                opened[s.name] = seg
        skipped = _build_segments(todo, params, use_prefix, keys, files, seg_dir, progress, workers)
        for s in todo:
            opened[s.name] = Segment(seg_dir / files[s.name])
        merge_bytes, meta = merge([opened[n] for n in names])
    finally:
        for seg in opened.values():
            seg.c.close()
    merge_name = f"merge-{zlib.crc32(merge_bytes):08x}{len(merge_bytes):08x}.bin"
    write_bytes(root / merge_name, merge_bytes)
    seg_records = {}
    for s in snaps:
        rec = file_record(root, f"{SEGMENTS}/{files[s.name]}")
        rec["key"] = keys[s.name]
        seg_records[s.name] = rec
    merge_record = file_record(root, merge_name)
    data_bytes = merge_record["size"] + sum(r["size"] for r in seg_records.values())
    stats = {
        "taps": len(snaps),
        "entries": meta["entries"],
        "contents": meta["contents"],
        "chunks": meta["chunks"],
        "terms": meta["terms"],
        "avgdl": round(meta["avgdl"], 6),
        "bytes": data_bytes,
    }
    manifest = {
        "version": FORMAT_VERSION,
        "engine": ENGINE,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commits": {s.name: s.commit for s in snaps},
        "params": param_dict,
        "stats": stats,
        "segments": seg_records,
        "merge": merge_record,
    }
    write_json(root / MANIFEST, manifest)
    _cleanup(root, {merge_name}, set(files.values()))
    built = {s.name for s in todo}
    return BuildReport(
        built=tuple(n for n in names if n in built),
        reused=tuple(n for n in names if n not in built),
        removed=removed,
        entries=stats["entries"],
        contents=stats["contents"],
        chunks=stats["chunks"],
        terms=stats["terms"],
        bytes=data_bytes,
        seconds=time.perf_counter() - t0,
        skipped=tuple(sorted(skipped)),
    )


def _reusable(path: Path, key: str) -> Optional[Segment]:
    """The segment at ``path`` if it exists, is intact and has ``key``; else None (rebuild)."""
    try:
        seg = Segment(path)
    except FileNotFoundError:
        return None
    except IndexUnavailable:
        return None  # damaged or of another format: rebuilt
    try:
        if seg.key == key:
            seg.c.verify()
            return seg
    except IndexUnavailable:
        pass  # a checksum mismatch: rebuilt
    seg.c.close()
    return None


def _build_segments(
    todo: Sequence[TapSnapshot],
    params: IndexParams,
    prefix: bool,
    keys: Dict[str, str],
    files: Dict[str, str],
    seg_dir: Path,
    progress: Optional[Callable[[int, int, str], None]],
    workers: Optional[int],
) -> List[str]:
    """Build and write the segments of ``todo``; returns the skipped entry ids."""
    jobs = [(s, params, prefix, keys[s.name], str(seg_dir / files[s.name])) for s in todo]
    if workers is None:
        enough = sum(len(s.entries) for s in todo) >= _PARALLEL_MIN_ENTRIES
        workers = 2 if enough and len(todo) > 1 and (os.cpu_count() or 1) > 1 else 1
    skipped: List[str] = []
    total = len(jobs)
    if workers <= 1 or total <= 1:
        for done, job in enumerate(jobs, start=1):
            name, skip = segment_job(job)
            skipped += skip
            if progress:
                progress(done, total, name)
        return skipped
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Largest taps first, so the workers finish together.
    jobs.sort(key=lambda job: -len(job[0].entries))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(segment_job, job) for job in jobs]
        for done, fut in enumerate(as_completed(futures), start=1):
            name, skip = fut.result()
            skipped += skip
            if progress:
                progress(done, total, name)
    return skipped


def _cleanup(root: Path, keep_merge: Set[str], keep_segments: Set[str]) -> None:
    """Delete the files no manifest points to any more, and old temporaries of crashed builds.

    Deleting is best effort: a file still open in a reader on Windows cannot be deleted
    and is left for the next build (nothing refers to it).
    """
    now = time.time()

    def sweep(folder: Path, keep: Set[str], pattern: str) -> None:
        if not folder.is_dir():
            return
        for p in folder.iterdir():
            name = p.name
            with contextlib.suppress(OSError):
                if name.startswith(".") and name.endswith(".tmp"):
                    if now - p.stat().st_mtime > _STALE_TMP_SECONDS:
                        p.unlink()
                elif re.fullmatch(pattern, name) and name not in keep:
                    p.unlink()

    sweep(root, keep_merge, r"merge-[0-9a-f]{16}\.bin")
    sweep(root / SEGMENTS, keep_segments, r".+-[0-9a-f]{16}\.seg")
