"""One generation of the index opened for queries: the manifest it was opened from, the
merge arrays, the segments, per chunk (and per entry field) the BM25 tf-part row for its
length, and the near-duplicate groups.

A build never changes a generation's files; it writes a new generation and switches the
manifest. `reader.IndexReader` notices the switch and opens the new one.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from boost_cli.core import bm25
from boost_cli.core.index.container import Container
from boost_cli.core.index.layout import MANIFEST, MERGE_MAGIC, damaged
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.segment import Segment


class _TfRow(Dict[int, float]):
    """tf → BM25 tf-part for one document length; filled on first use."""

    def __init__(self, dl: int, avgdl: float, k1: float, b: float) -> None:
        super().__init__()
        self.dl, self.avgdl, self.k1, self.b = dl, avgdl, k1, b

    def __missing__(self, tf: int) -> float:
        w = bm25.term_weight(tf, self.dl, self.avgdl, self.k1, self.b)
        self[tf] = w
        return w


class _Rows(Dict[int, _TfRow]):
    """dl → its `_TfRow`, so a posting's weight is two C-level look-ups."""

    def __init__(self, avgdl: float, k1: float, b: float) -> None:
        super().__init__()
        self.avgdl, self.k1, self.b = avgdl, k1, b

    def __missing__(self, dl: int) -> _TfRow:
        row = _TfRow(dl, self.avgdl, self.k1, self.b)
        self[dl] = row
        return row


class Generation:
    """One generation of the index, opened: manifest, merge arrays, segments."""

    def __init__(self, root: Path, manifest: Dict[str, Any]) -> None:
        self.manifest = manifest
        self._open: List[Container] = []
        try:
            self._load(root, manifest)
        except BaseException:
            self.close()
            raise

    def _load(self, root: Path, manifest: Dict[str, Any]) -> None:
        try:
            merge_rec = manifest["merge"]
            self.params = IndexParams.from_dict(manifest["params"])
            seg_recs = manifest["segments"]
            merge_file = str(merge_rec["file"])
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{MANIFEST} is incomplete") from exc
        self.merge = m = Container(root / merge_file, MERGE_MAGIC)
        self._open.append(m)
        if m.size != merge_rec.get("size"):
            raise damaged(f"{m.path.name} has the wrong size")
        meta = m.meta
        try:
            self.n = int(meta["chunks"])
            self.avgdl = float(meta["avgdl"])
            taps = meta["taps"]
            self.copies: Dict[int, List[int]] = {
                int(k): [int(x) for x in v] for k, v in meta["copies"].items()
            }
            self.field_n = int(meta["field"]["contents"])
            self.field_avgdl = float(meta["field"]["avgdl"])
            self.content_base = [int(t["content_base"]) for t in taps]
            self.chunk_base = [int(t["chunk_base"]) for t in taps]
            self.has_dead = [int(t["dead_chunks"]) > 0 for t in taps]
            self.tap_names = [str(t["tap"]) for t in taps]
            self.roots = [str(t["root"]) for t in taps]
            seg_files = [str(t["file"]) for t in taps]
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{m.path.name} has a bad table of contents") from exc
        self.segments: List[Segment] = []
        for tap, rel in zip(self.tap_names, seg_files):
            seg = Segment(root / rel)
            self._open.append(seg.c)
            rec = seg_recs.get(tap) or {}
            if seg.c.size != rec.get("size") or seg.tap != tap:
                raise damaged(f"{seg.c.path.name} does not match the manifest")
            self.segments.append(seg)
        self.tap_index = {t: i for i, t in enumerate(self.tap_names)}
        self.chunk_content = m.ints("chunk_content", "I")
        self.chunk_live = m.read("chunk_live")
        self.content_first = m.ints("content_first", "I")
        self.content_kinds = m.read("content_kinds")
        if (
            len(self.chunk_live) != len(self.chunk_content)
            or len(self.content_first) != len(self.content_kinds) + 1
            or self.content_first[-1] != len(self.chunk_content)
            or self.chunk_live.count(1) != self.n
        ):
            raise damaged(f"{m.path.name}: tables disagree")
        ends = [*self.chunk_base[1:], len(self.chunk_content)]
        self.seg_chunks = [end - base for base, end in zip(self.chunk_base, ends)]
        if any(n < 0 for n in self.seg_chunks):
            raise damaged(f"{m.path.name}: tables disagree")
        self.seg_live = [self.chunk_live[base:end] for base, end in zip(self.chunk_base, ends)]
        self._rowref: Optional[List[List[_TfRow]]] = None
        self._rowref_key = (-1.0, -1.0)
        self._field_rows: Optional[List[_TfRow]] = None
        self._field_key = (-1.0, -1.0)
        self._live: Optional[bytes] = None
        self._id_tables: Dict[str, array[int]] = {}  # group and next-member tables
        self._by_hash: Optional[Dict[str, int]] = None

    def close(self) -> None:
        for c in self._open:
            c.close()
        self._open = []

    def rowrefs(self, k1: float, b: float) -> List[List[_TfRow]]:
        """Per segment, local chunk id → the tf-part row for its length.

        Built on the first query and kept while k1 and b stay the same.
        """
        if self._rowref is None or self._rowref_key != (k1, b):
            rows = self._length_rows("chunk_dl", len(self.chunk_content), self.avgdl, k1, b)
            self._rowref = [
                rows[base : base + n] for base, n in zip(self.chunk_base, self.seg_chunks)
            ]
            self._rowref_key = (k1, b)
        return self._rowref

    def field_rows(self, k1: float, b: float) -> List[_TfRow]:
        """Global content id → the entry-field tf-part row for its field length.

        Built on the first query and kept while k1 and b stay the same.
        """
        if self._field_rows is None or self._field_key != (k1, b):
            n = len(self.content_kinds)
            self._field_rows = self._length_rows("field_dl", n, self.field_avgdl, k1, b)
            self._field_key = (k1, b)
        return self._field_rows

    def _length_rows(self, section: str, n: int, avgdl: float, k1: float, b: float) -> List[_TfRow]:
        """The tf-part row of each length in the merge's u16 ``section`` (``n`` of them)."""
        dl = self.merge.ints(section, "H")
        if len(dl) != n:
            raise damaged(f"{self.merge.path.name}: tables disagree")
        return list(map(_Rows(avgdl, k1, b).__getitem__, dl))

    @property
    def live(self) -> bytes:
        """Per global content 1 when it is live (not a copy of an earlier tap's)."""
        if self._live is None:
            live = bytearray(b"\x01" * len(self.content_kinds))
            for dead in self.copies.values():
                for g in dead:
                    live[g] = 0
            self._live = bytes(live)
        return self._live

    def groups(self, level: str) -> Optional[array[int]]:
        """Per global content the id of its group at collapse ``level`` (`params.COLLAPSE`):
        the group's first live content; None for "none"."""
        return None if level == "none" else self._content_ids(f"{level}_group")

    def members(self, level: str, gid: int) -> List[int]:
        """The live contents of group ``gid`` at ``level``, ascending (``[gid]`` alone)."""
        nxt = self._content_ids(f"{level}_next")
        out = [gid]
        j = nxt[gid]
        while j != gid and len(out) <= len(nxt):
            out.append(j)
            j = nxt[j]
        return out

    def _content_ids(self, section: str) -> array[int]:
        """A merge section of one content id per content, read once and bounds-checked."""
        found = self._id_tables.get(section)
        if found is None:
            found = self.merge.ints(section, "I")
            if len(found) != len(self.content_kinds) or (found and max(found) >= len(found)):
                raise damaged(f"{self.merge.path.name}: tables disagree")
            self._id_tables[section] = found
        return found

    def content_of(self, sha256: str) -> Optional[int]:
        """The live global content id of the file with this SHA-256 (hex), None if unknown."""
        if self._by_hash is None:
            by_hash: Dict[str, int] = {}
            for s, seg in enumerate(self.segments):
                raw = seg.c.read("content_hash")
                base = self.content_base[s]
                for j in range(len(raw) // 32):
                    by_hash.setdefault(raw[32 * j : 32 * j + 32].hex(), base + j)
            self._by_hash = by_hash
        return self._by_hash.get(sha256)

    def group_key(self, level: str, gcid: int) -> str:
        """The name of content ``gcid``'s group at ``level``: the SHA-256 (hex) of the
        group's first file (its own for "none")."""
        group = self.groups(level)
        s, j = self.seg_of(group[gcid] if group is not None else gcid)
        return self.segments[s].content_hash(j)

    def seg_of(self, gcid: int) -> Tuple[int, int]:
        """Global content id → (segment index, content id local to that segment)."""
        s = bisect_right(self.content_base, gcid) - 1
        return s, gcid - self.content_base[s]

    def chunk_range(self, gcid: int) -> Tuple[int, int]:
        """The global chunk ids [first, end) of content ``gcid``."""
        return self.content_first[gcid], self.content_first[gcid + 1]

    def kinds(self, gcid: int) -> int:
        """The kind bits of every copy of content ``gcid``."""
        return self.content_kinds[gcid]
