"""One generation of the index opened for queries: the manifest it was opened from, the
merge arrays, the tiers (the postings), the segments (opened when a hit needs one), per
chunk (and per entry field) the BM25 tf-part row for its length, and the near-duplicate
groups.

A build never changes a generation's files; it writes a new generation and switches the
manifest. `reader.IndexReader` notices the switch and opens the new one.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from operator import sub
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import bm25, origin
from boost_cli.core.binio import u16_view
from boost_cli.core.errors import IndexUnavailable
from boost_cli.core.index.cache import TERMS_BUDGET, Lru
from boost_cli.core.index.container import Container
from boost_cli.core.index.layout import MANIFEST, MERGE_MAGIC, damaged, segment_damaged
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.postings import Row, code_points
from boost_cli.core.index.segment import Segment, resolve_root
from boost_cli.core.index.tier import Tier

Postings = Tuple["array[int]", bytes]  # ids (ascending) and tfs of one list


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
            self.tap_names = [str(t["tap"]) for t in taps]
            self._recorded_roots = [str(t["root"]) for t in taps]
            seg_files = [str(t["file"]) for t in taps]
            ranks = meta.get("origin")
            if not isinstance(ranks, dict):  # an index built before the origin rule
                ranks = origin.ranks(
                    {str(t["tap"]): int(t.get("entries", t["contents"])) for t in taps}
                )
            # tap → origin rank (`origin`): which copy of a folded item a hit shows.
            self.origin: Dict[str, int] = {str(t): int(r) for t, r in ranks.items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{m.path.name} has a bad table of contents") from exc
        self._root = root
        self._seg_files = seg_files
        self._seg_sizes = [(seg_recs.get(t) or {}).get("size") for t in self.tap_names]
        self._segments: Dict[int, Segment] = {}
        self._roots: Dict[int, str] = {}
        tier_recs = {str(r.get("file")): r for r in manifest.get("tiers") or []}
        self.tiers: List[Tier] = []
        try:
            metas = meta["tiers"]
            self.tier_chunk_base = [int(t["chunk_base"]) for t in metas]
            self.tier_content_base = [int(t["content_base"]) for t in metas]
            tier_files = [str(t["file"]) for t in metas]
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{m.path.name} has a bad table of contents") from exc
        for rel in tier_files:
            tier = Tier(root / rel)
            self._open.append(tier.c)
            if tier.c.size != (tier_recs.get(rel) or {}).get("size"):
                raise damaged(f"{tier.c.path.name} does not match the manifest")
            self.tiers.append(tier)
        self.tap_index = {t: i for i, t in enumerate(self.tap_names)}
        # Per chunk tables are read when first needed (a query reads the lengths of the
        # tiers it scores; the exhaustive reference the rest): sizes from the TOC.
        self.n_chunks = m.span("chunk_content")[1] // 4
        self._chunk_content: Optional[array[int]] = None
        self._chunk_live: Optional[bytes] = None
        self.content_first = m.ints("content_first", "I")
        self.content_kinds = m.read("content_kinds")
        if (
            m.span("chunk_content")[1] != 4 * self.n_chunks
            or m.span("chunk_live")[1] != self.n_chunks
            or m.span("chunk_dl")[1] != 2 * self.n_chunks
            or len(self.content_first) != len(self.content_kinds) + 1
            or self.content_first[-1] != self.n_chunks
        ):
            raise damaged(f"{m.path.name}: tables disagree")
        tier_ends = [*self.tier_chunk_base[1:], self.n_chunks]
        if [t.chunks for t in self.tiers] != [
            end - base for base, end in zip(self.tier_chunk_base, tier_ends)
        ]:
            raise damaged(f"{m.path.name}: tables disagree")
        self._rows: Dict[Tuple[int, float, float], List[_TfRow]] = {}
        self._field_rows: Dict[Tuple[int, float, float], List[_TfRow]] = {}
        self._dl: Optional[Sequence[int]] = None
        self._field_dl: Optional[Sequence[int]] = None
        self._max_chunks: Dict[int, int] = {}
        self._counts: Dict[int, List[int]] = {}
        self._tier_cc: Dict[int, array[int]] = {}
        self._tier_dl: Dict[int, Sequence[int]] = {}
        self._tier_fdl: Dict[int, Sequence[int]] = {}
        self._codes: Dict[Tuple[float, float], List[float]] = {}
        self.memo: Dict[Tuple[Any, ...], Any] = {}  # per-tier tables the ranking derives
        self._live: Optional[bytes] = None
        self._tables: Dict[Tuple[str, float, float], _Rows] = {}
        self._id_tables: Dict[str, array[int]] = {}  # group and next-member tables
        self._by_hash: Optional[Dict[str, int]] = None
        self._terms: Lru[List[Optional[Row]]] = Lru(TERMS_BUDGET)  # term → row per tier
        self._term_max: Lru[float] = Lru(4 * TERMS_BUDGET)  # (tier, term, k1, b) → its most

    @property
    def chunk_content(self) -> array[int]:
        """Per global chunk its global content id (`DEAD` for a copy's), read once."""
        if self._chunk_content is None:
            self._chunk_content = self.merge.ints("chunk_content", "I")
        return self._chunk_content

    @property
    def chunk_live(self) -> bytes:
        """Per global chunk 1 when it counts (not a copy's), read once and checked."""
        if self._chunk_live is None:
            live = self.merge.read("chunk_live")
            if live.count(1) != self.n:
                raise damaged(f"{self.merge.path.name}: tables disagree")
            self._chunk_live = live
        return self._chunk_live

    def close(self) -> None:
        for c in self._open:
            c.close()
        self._open = []

    def root(self, s: int) -> str:
        """Tap ``s``'s folder (`resolve_root` of the recorded one), made when a hit first
        needs it: a query shows a few taps of the 120 at 10x."""
        got = self._roots.get(s)
        if got is None:
            got = self._roots[s] = str(resolve_root(self._recorded_roots[s]))
        return got

    def segment(self, s: int) -> Segment:
        """Tap ``s``'s segment (records, spans, hashes), opened on first use."""
        seg = self._segments.get(s)
        if seg is None:
            path = self._root / self._seg_files[s]
            try:
                seg = Segment(path)
            except FileNotFoundError as exc:
                raise segment_damaged(
                    self.tap_names[s], damaged(f"{path.name} is missing")
                ) from exc
            except IndexUnavailable as exc:
                raise segment_damaged(self.tap_names[s], exc) from exc
            self._open.append(seg.c)
            if seg.c.size != self._seg_sizes[s] or seg.tap != self.tap_names[s]:
                raise damaged(f"{seg.c.path.name} does not match the manifest")
            self._segments[s] = seg
        return seg

    def term_rows(self, term: bytes, crc: int) -> List[Optional[Row]]:
        """The term's dictionary row in each tier (None: not in that tier), kept."""
        rows = self._terms.get(term)
        if rows is None:
            rows = self._terms.put(term, [tier.find(term, crc) for tier in self.tiers])
        return rows

    def chunk_list(self, t: int, row: Row) -> Postings:
        """Tier ``t``'s chunk postings of ``row`` (`Tier.chunk_postings`), read on each
        call: not kept between queries (`cache`: why)."""
        return self.tiers[t].chunk_postings(row)

    def field_list(self, t: int, row: Row) -> Postings:
        """Tier ``t``'s entry-field postings of ``row`` (`Tier.field_postings`)."""
        return self.tiers[t].field_postings(row)

    def chunk_rows(self, t: int, k1: float, b: float) -> List[_TfRow]:
        """Tier ``t``'s chunks (tier-local ids) → the tf-part row for their length.

        Built on the first query that reads the tier, kept while k1 and b stay the same.
        """
        rows = self._rows.get((t, k1, b))
        if rows is None:
            if self._dl is None:
                self._dl = self._lengths("chunk_dl", self.n_chunks)
            base = self.tier_chunk_base[t]
            lengths = self._dl[base : base + self.tiers[t].chunks]
            rows = list(map(self.length_rows(k1, b).__getitem__, lengths))
            self._rows = {key: v for key, v in self._rows.items() if key[1:] == (k1, b)}
            self._rows[(t, k1, b)] = rows
        return rows

    def field_rows(self, t: int, k1: float, b: float) -> List[_TfRow]:
        """Tier ``t``'s contents (tier-local ids) → the entry-field tf-part row for their
        field length."""
        rows = self._field_rows.get((t, k1, b))
        if rows is None:
            if self._field_dl is None:
                self._field_dl = self._lengths("field_dl", len(self.content_kinds))
            base = self.tier_content_base[t]
            lengths = self._field_dl[base : base + self.tiers[t].contents]
            rows = list(map(self.field_length_rows(k1, b).__getitem__, lengths))
            self._field_rows = {key: v for key, v in self._field_rows.items() if key[1:] == (k1, b)}
            self._field_rows[(t, k1, b)] = rows
        return rows

    def code_table(self, k1: float, b: float) -> List[float]:
        """Impact code → the tf-part that bounds its pairs (`postings.code_points`), kept."""
        got = self._codes.get((k1, b))
        if got is None:
            avgdl = self.avgdl
            got = [bm25.term_weight(tf, dl, avgdl, k1, b) for tf, dl in code_points()]
            self._codes = {(k1, b): got}
        return got

    def term_max(self, t: int, row: Row, k1: float, b: float, field: bool = False) -> float:
        """The most tf-part of the term of ``row`` in any chunk (``field``: entry field)
        of tier ``t``, from its frontier's best point; kept."""
        key = (t, row.ffront if field else row.front, field, k1, b)
        got = self._term_max.get(key)
        if got is None:
            tier = self.tiers[t]
            avgdl = self.field_avgdl if field else self.avgdl
            points = tier.field_frontier(row) if field else tier.frontier(row)
            got = max((bm25.term_weight(tf, dl, avgdl, k1, b) for tf, dl in points), default=0.0)
            self._term_max.put(key, got)
        return got

    def length_rows(self, k1: float, b: float) -> _Rows:
        """Chunk length → its tf-part row (the same rows `chunk_rows` hands out)."""
        return self._length_table("chunk", self.avgdl, k1, b)

    def field_length_rows(self, k1: float, b: float) -> _Rows:
        """Field length → its tf-part row."""
        return self._length_table("field", self.field_avgdl, k1, b)

    def _length_table(self, what: str, avgdl: float, k1: float, b: float) -> _Rows:
        key = (what, k1, b)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = _Rows(avgdl, k1, b)
        return table

    def _lengths(self, section: str, n: int) -> Sequence[int]:
        """The merge's u16 ``section`` of ``n`` lengths (CRC32 checked), as a view of the
        bytes read: the chunk lengths are 2.4 MB at 10x, and a copy into an array plus one
        slice per tier cost a cold search ~2 ms there."""
        raw = self.merge.read(section)
        if len(raw) != 2 * n:
            raise damaged(f"{self.merge.path.name}: tables disagree")
        return u16_view(raw)

    def tier_lengths(self, t: int) -> Sequence[int]:
        """Tier ``t``'s chunks (tier-local ids) → their lengths."""
        got = self._tier_dl.get(t)
        if got is None:
            if self._dl is None:
                self._dl = self._lengths("chunk_dl", self.n_chunks)
            base = self.tier_chunk_base[t]
            got = self._tier_dl[t] = self._dl[base : base + self.tiers[t].chunks]
        return got

    def tier_field_lengths(self, t: int) -> Sequence[int]:
        """Tier ``t``'s contents (tier-local ids) → their entry-field lengths."""
        got = self._tier_fdl.get(t)
        if got is None:
            if self._field_dl is None:
                self._field_dl = self._lengths("field_dl", len(self.content_kinds))
            base = self.tier_content_base[t]
            got = self._tier_fdl[t] = self._field_dl[base : base + self.tiers[t].contents]
        return got

    def tier_chunk_content(self, t: int) -> array[int]:
        """Tier ``t``'s chunks (tier-local ids) → global content id (`DEAD` for a copy's)."""
        got = self._tier_cc.get(t)
        if got is None:
            base = self.tier_chunk_base[t]
            got = self._tier_cc[t] = self.chunk_content[base : base + self.tiers[t].chunks]
        return got

    def chunk_counts(self, t: int) -> List[int]:
        """Per content of tier ``t`` (tier-local ids) how many chunks it has, kept: the
        tier's most (`max_chunks`) and the bounds' per-content slack come from this one
        pass over the contents, not one pass each."""
        got = self._counts.get(t)
        if got is None:
            base, n, first = self.tier_content_base[t], self.tiers[t].contents, self.content_first
            got = list(map(sub, first[base + 1 : base + n + 1], first[base : base + n]))
            self._counts[t] = got
        return got

    def max_chunks(self, t: int) -> int:
        """The most chunks a content of tier ``t`` has."""
        got = self._max_chunks.get(t)
        if got is None:
            got = self._max_chunks[t] = max(self.chunk_counts(t), default=0)
        return got

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
        n = len(nxt)
        if not 0 <= gid < n:
            raise damaged(f"{self.merge.path.name}: tables disagree")
        out = [gid]
        j = nxt[gid]
        while j != gid and len(out) <= n:
            if j >= n:
                raise damaged(f"{self.merge.path.name}: tables disagree")
            out.append(j)
            j = nxt[j]
        return out

    def _content_ids(self, section: str) -> array[int]:
        """A merge section of one content id per content, read once (its CRC32 and length
        checked). The ids are checked where they are followed (`members`, `group_key`),
        not all of them on first use: a pass over 90 k ids is ~2 ms of a cold search at
        10x, and a query follows a few dozen."""
        found = self._id_tables.get(section)
        if found is None:
            found = self.merge.ints(section, "I")
            if len(found) != len(self.content_kinds):
                raise damaged(f"{self.merge.path.name}: tables disagree")
            self._id_tables[section] = found
        return found

    def content_of(self, sha256: str) -> Optional[int]:
        """The live global content id of the file with this SHA-256 (hex), None if unknown."""
        if self._by_hash is None:
            by_hash: Dict[str, int] = {}
            for s in range(len(self.tap_names)):
                raw = self.segment(s).c.read("content_hash")
                base = self.content_base[s]
                for j in range(len(raw) // 32):
                    by_hash.setdefault(raw[32 * j : 32 * j + 32].hex(), base + j)
            self._by_hash = by_hash
        return self._by_hash.get(sha256)

    def group_key(self, level: str, gcid: int) -> str:
        """The name of content ``gcid``'s group at ``level``: the SHA-256 (hex) of the
        group's first file (its own for "none")."""
        group = self.groups(level)
        first = group[gcid] if group is not None else gcid
        if first >= len(self.content_kinds):
            raise damaged(f"{self.merge.path.name}: tables disagree")
        s, j = self.seg_of(first)
        return self.segment(s).content_hash(j)

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
