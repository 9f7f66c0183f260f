"""`IndexReader`: queries against the current generation of the index, re-opened when a
build switched the manifest; `open_index` opens the index under `index_dir()`.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from boost_cli.core.errors import UsageError
from boost_cli.core.index import vectorized
from boost_cli.core.index.bounds import top_groups
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.hits import hit
from boost_cli.core.index.layout import KIND_BITS, MANIFEST, damaged
from boost_cli.core.index.manifest import load_manifest
from boost_cli.core.index.params import check_aggregation, check_collapse
from boost_cli.core.models import KINDS, Hit
from boost_cli.core.paths import index_dir
from boost_cli.core.tokenize import query_weights


def _stat_sig(path: Path) -> Optional[Tuple[int, int, int]]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _open_generation(root: Path) -> Optional[Tuple[Generation, Tuple[int, int, int]]]:
    """Open the generation the manifest points to; retry if a build swaps it meanwhile."""
    for _ in range(5):
        sig = _stat_sig(root / MANIFEST)
        if sig is None:
            return None
        manifest = load_manifest(root)
        if manifest is None:
            return None
        try:
            return Generation(root, manifest), sig
        except FileNotFoundError as exc:
            if _stat_sig(root / MANIFEST) == sig:
                raise damaged(f"{Path(exc.filename or '?').name} is missing") from exc
            # A build replaced the manifest and deleted the old files: read the new one.
    raise damaged("it kept changing while being opened")


class IndexReader:
    """Answers queries from the index under ``root``; re-opens when a build replaced it.

    Opening reads the manifest, each file's table of contents and the merge arrays;
    every query first checks (one ``stat``) whether manifest.json was replaced.
    """

    def __init__(self, root: Path, generation: Generation, sig: Tuple[int, int, int]) -> None:
        self.root = root
        self._generation: Optional[Generation] = generation
        self._sig: Optional[Tuple[int, int, int]] = sig

    @classmethod
    def open(cls, root: Optional[Path] = None) -> Optional[IndexReader]:
        root = root or index_dir()
        loaded = _open_generation(root)
        if loaded is None:
            return None
        return cls(root, *loaded)

    def close(self) -> None:
        """Close the files; a later query opens the current generation again."""
        if self._generation is not None:
            self._generation.close()
        self._generation, self._sig = None, None

    def __enter__(self) -> IndexReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _current(self) -> Optional[Generation]:
        sig = _stat_sig(self.root / MANIFEST)
        if sig != self._sig:
            loaded = _open_generation(self.root)
            if self._generation is not None:
                self._generation.close()
            self._generation, self._sig = loaded if loaded is not None else (None, None)
        return self._generation

    @property
    def manifest(self) -> Dict[str, Any]:
        gen = self._current()
        return gen.manifest if gen else {}

    @property
    def commits(self) -> Dict[str, str]:
        return dict(self.manifest.get("commits", {}))

    @property
    def generated(self) -> str:
        return str(self.manifest.get("generated", ""))

    @property
    def stats(self) -> Dict[str, Any]:
        return dict(self.manifest.get("stats", {}))

    @property
    def params(self) -> Dict[str, Any]:
        return dict(self.manifest.get("params", {}))

    def verify(self) -> None:
        """Check every file's size and CRC32 against the manifest (reads everything)."""
        gen = self._current()
        if gen is None:
            return
        for rec in [
            *gen.manifest["segments"].values(),
            *gen.manifest["tiers"],
            gen.manifest["merge"],
        ]:
            try:
                data = (self.root / rec["file"]).read_bytes()
            except OSError as exc:
                raise damaged(f"{rec['file']} cannot be read: {exc.strerror or exc}") from exc
            if len(data) != rec["size"] or zlib.crc32(data) != rec["crc32"]:
                raise damaged(f"{rec['file']}: checksum mismatch")

    def query(
        self,
        text: str = "",
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        *,
        weights: Optional[Mapping[str, float]] = None,
        aggregation: Optional[str] = None,
        k1: Optional[float] = None,
        b: Optional[float] = None,
        field_weight: Optional[float] = None,
        collapse: Optional[str] = None,
        snippets: bool = True,
    ) -> List[Hit]:
        """The top ``k`` near-duplicate groups for a query, best first, one hit each.

        The query is ``weights`` (term → weight, `tokenize.query_weights` of the task and
        the caller's keywords), else ``query_weights(text)``. A group scores its best
        member's score; the hit shows that member, through its first copy (by tap, path)
        that passes the ``kind`` and ``taps`` filters (the filters apply to the member
        shown); ``also_in`` names the other copies and members; ``snippet`` is its best
        chunk, read back from the tap file. Groups are near-duplicates at the ``collapse``
        level (`params.COLLAPSE`; "none": every distinct file alone). ``aggregation``,
        ``k1``, ``b``, ``field_weight`` and ``collapse`` override the indexed params for
        this query (for tuning).
        """
        if kind is not None and kind not in KINDS:
            raise UsageError(f"unknown kind {kind!r}", f"use one of: {', '.join(KINDS)}")
        gen = self._current()
        if gen is None or k <= 0 or gen.n == 0:
            return []
        how = aggregation or gen.params.aggregation
        check_aggregation(how)
        level = collapse or gen.params.collapse
        check_collapse(level)
        p = gen.params
        wanted = None if taps is None else {gen.tap_index[t] for t in taps if t in gen.tap_index}
        if wanted is not None and not wanted:
            return []
        rank = vectorized.top_groups if vectorized.available() else top_groups
        ranked = rank(
            gen,
            query_weights(text) if weights is None else weights,
            k,
            how,
            acceptor(gen, kind, wanted),
            gen.groups(level),
            (p.k1 if k1 is None else k1, p.b if b is None else b),
            (p.field_weight if field_weight is None else field_weight, p.field_k1, p.field_b),
        )
        return [
            hit(gen, gcid, score, best, rank, kind, wanted, snippets, level)
            for rank, (score, gcid, best) in enumerate(ranked, start=1)
        ]

    @property
    def origin(self) -> Dict[str, int]:
        """tap → origin rank (0 first) stored by the build (`origin`): which copy of a
        folded item is shown; empty without an index."""
        gen = self._current()
        return dict(gen.origin) if gen is not None else {}

    def group_keys(self, hashes: Iterable[str]) -> Dict[str, str]:
        """The near-duplicate group (`Hit.group`, at the indexed collapse level) of each
        file SHA-256 (hex) the index knows; other hashes are left out. Lets another engine's hits join the index's
        groups (the hybrid engine fuses on them)."""
        gen = self._current()
        if gen is None:
            return {}
        out: Dict[str, str] = {}
        for sha in hashes:
            gcid = gen.content_of(sha)
            if gcid is not None:
                out[sha] = gen.group_key(gen.params.collapse, gcid)
        return out


def acceptor(
    gen: Generation, kind: Optional[str], wanted: Optional[Set[int]]
) -> Optional[Callable[[int], bool]]:
    """Whether a content passes the ``kind`` filter and the tap filter (``wanted``: segment
    indexes) through one of its copies; None when there is no filter."""
    if kind is None and wanted is None:
        return None
    kind_bit = KIND_BITS[kind] if kind else 0

    def accept(gcid: int) -> bool:
        if kind_bit and not gen.kinds(gcid) & kind_bit:  # kinds of all its copies
            return False
        if wanted is None:
            return True
        copies = (gcid, *gen.copies.get(gcid, ()))
        if not kind_bit or len(copies) == 1:
            return any(gen.seg_of(g)[0] in wanted for g in copies)
        # Both filters and several copies (rare): one copy must pass both.
        return any(
            s in wanted and any(e.get("kind") == kind for e in gen.segment(s).record(j)["entries"])
            for s, j in map(gen.seg_of, copies)
        )

    return accept


def open_index(root: Optional[Path] = None) -> Optional[IndexReader]:
    """The index under ``root`` (default: `index_dir()`, read at call time) opened for
    queries, or None when there is none yet.

    Every call opens a new reader, which the caller owns: a long-lived process keeps one
    (it follows rebuilds by itself) so the merge arrays and scoring rows stay warm.
    Raises IndexUnavailable (with the fix) when the index is damaged or of another format version.
    """
    return IndexReader.open(root)
