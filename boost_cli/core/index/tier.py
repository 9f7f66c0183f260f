"""Tiers: the taps' postings merged into a few files, so a query reads a bounded number of
dictionaries and posting lists whatever the number of taps.

`plan` cuts the taps, in name order, into runs: after a tap whose name hashes to 0 mod
`CUT_EVERY` (so adding, removing or changing a tap moves no cut elsewhere), and before a
tap that would take a run past `TIER_CHUNKS` chunks (so chunk ids fit in 16 bits). A tier
file holds its taps' chunk and entry-field postings with tier-local ids, one hash-bucketed
dictionary, per term how many postings are in live chunks (df needs no posting read),
block maxima (per 128 postings: last chunk id, highest tf, shortest chunk) and the Pareto
frontier of those (tf, length) pairs, from which a query computes each term's exact upper
bound for any k1, b and average length.

`tier_bytes` builds a tier from pieces: a freshly built tap's postings file (`TapPostings`,
written by the worker next to its segment, deleted once merged) or a run of unchanged
taps sliced out of the tier file that held them. A tier is a function of its taps'
postings, its dead chunks and its chunk lengths alone, so an incremental build is
byte-identical to a build from scratch. Layout: docs/index-format.md.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from array import array
from bisect import bisect_left
from itertools import compress
from operator import ne, sub
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from boost_cli.core.atomic import write_bytes
from boost_cli.core.binio import from_le, to_le
from boost_cli.core.index.container import Container, dumps, pack
from boost_cli.core.index.layout import TAP_MAGIC, TIER_MAGIC, TIERS, damaged
from boost_cli.core.index.postings import (
    Row,
    dictionary,
    find_row,
    impact_codes,
    rows,
)
from boost_cli.core.index.segment import safe_name

TIER_CHUNKS = 0x10000  # chunks a tier holds at most (a bigger tap is a tier alone)
CUT_EVERY = 8  # a run of taps ends after a tap whose name's CRC32 is 0 mod this
BLOCK = 128  # postings per block
_U32X2 = struct.Struct("<II")
_WIDTH = {"B": 1, "H": 2, "I": 4}  # bytes per item of an array typecode the tiers use


def plan(taps: Sequence[Tuple[str, int]]) -> List[Tuple[int, int]]:
    """The tiers of ``taps`` ((name, chunks), in name order) as [start, end) index ranges."""
    out: List[Tuple[int, int]] = []
    start = size = 0
    for i, (name, chunks) in enumerate(taps):
        if i > start and size + chunks > TIER_CHUNKS:
            out.append((start, i))
            start, size = i, 0
        size += chunks
        if zlib.crc32(name.encode("utf-8")) % CUT_EVERY == 0:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(taps):
        out.append((start, len(taps)))
    return out


def _code(n: int) -> str:
    return "H" if n <= 0x10000 else "I"


# --------------------------------------------------------------------------- the sources


class Lists(NamedTuple):
    """One term's postings in a piece: chunk ids and tfs, field (content) ids and tfs."""

    ids: array[int]
    tfs: bytes
    fids: array[int]
    ftfs: bytes


class TapPostings:
    """A tap's postings file (the worker's output, `postings.tap_sections`), read whole."""

    def __init__(self, path: Path) -> None:
        c = Container(path, TAP_MAGIC)
        try:
            meta = c.meta
            self.tap = str(meta["tap"])
            self.key = str(meta["key"])
            self.chunks = int(meta["chunks"])
            self.contents = int(meta["contents"])
            code, fcode = str(meta["id_code"]), str(meta["field_code"])
            raw = c.read("terms")
            self.terms = raw.split(b"\n") if raw else []
            self.counts = c.ints("counts", "I")
            self.fcounts = c.ints("field_counts", "I")
            self.ids = c.ints("post_ids", code)
            self.tfs = c.read("post_tfs")
            self.fids = c.ints("field_ids", fcode)
            self.ftfs = c.read("field_tfs")
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{path.name} has a bad table of contents") from exc
        finally:
            c.close()
        if (
            len(self.counts) != len(self.terms)
            or len(self.fcounts) != len(self.terms)
            or not sum(self.counts) == len(self.ids) == len(self.tfs)
            or not sum(self.fcounts) == len(self.fids) == len(self.ftfs)
            or any(x >= self.chunks for x in self.ids[-1:])
        ):
            raise damaged(f"{path.name}: tables disagree")

    def lists(self, chunk_base: int, content_base: int) -> Dict[bytes, Lists]:
        """Term → its postings, ids moved to start at the given bases."""
        out: Dict[bytes, Lists] = {}
        a = fa = 0
        for term, n, fn in zip(self.terms, self.counts, self.fcounts):
            out[term] = Lists(
                _shift(self.ids[a : a + n], chunk_base),
                self.tfs[a : a + n],
                _shift(self.fids[fa : fa + fn], content_base),
                self.ftfs[fa : fa + fn],
            )
            a += n
            fa += fn
        return out


def _shift(ids: array[int], delta: int) -> array[int]:
    return ids if not delta else array(ids.typecode, map(delta.__add__, ids))


class Tier:
    """One tier file, opened for queries (`find` and the list readers) or read whole to
    take taps out of it (`lists`)."""

    def __init__(self, path: Path) -> None:
        self.c = c = Container(path, TIER_MAGIC)
        try:
            try:
                meta = c.meta
                self.taps: List[Dict[str, Any]] = list(meta["taps"])
                self.chunks = int(meta["chunks"])
                self.contents = int(meta["contents"])
                self.n_buckets = n = int(meta["buckets"])
                self.id_code = str(meta["id_code"])
                self.field_code = str(meta["field_code"])
                self.count_code = str(meta["count_code"])
                self.block = int(meta["block"])
            except (KeyError, TypeError, ValueError) as exc:
                raise damaged(f"{path.name} has a bad table of contents") from exc
            if (
                n < 1
                or n & (n - 1)
                or self.block < 1
                or {self.id_code, self.field_code} - {"H", "I"}
                or self.count_code not in ("B", "H")
            ):
                raise damaged(f"{path.name} has a bad table of contents")
            self._spans = {name: c.span(name) for name in c.sections}
            if self._spans["dict_buckets"][1] != 4 * (n + 1):
                raise damaged(f"{path.name}: bad length of dict_buckets")
        except BaseException:
            c.close()
            raise
        self.w = 2 if self.id_code == "H" else 4
        self.fw = 2 if self.field_code == "H" else 4

    def close(self) -> None:
        self.c.close()

    def find(self, term: bytes, crc: int) -> Optional[Row]:
        """The term's row, or None when no tap of this tier has it."""
        c = self.c
        bucket = crc & (self.n_buckets - 1)
        span = self._spans["dict_buckets"]
        lo, hi = _U32X2.unpack(c.slice(span, 4 * bucket, 4 * bucket + 8))
        try:
            row = find_row(c.slice(self._spans["dict_rows"], lo, hi), term)
        except ValueError as exc:
            raise damaged(f"{c.path.name}: bad dictionary row") from exc
        if row is not None and (
            row.live > row.n
            or row.flive > row.fn
            or row.first + row.n > self._spans["post_tfs"][1]
            or row.ffirst + row.fn > self._spans["field_tfs"][1]
            or 2 * (row.cfirst + row.cn) > self._spans["cont_code"][1]
            or row.cn > row.n
        ):
            raise damaged(f"{c.path.name}: postings out of bounds")
        return row

    def _ints(self, section: str, code: str, first: int, n: int) -> array[int]:
        w = _WIDTH[code]
        return from_le(code, self.c.slice(self._spans[section], first * w, (first + n) * w))

    def chunk_postings(self, row: Row) -> Tuple[array[int], bytes]:
        """The term's chunk postings: tier-local chunk ids (ascending) and tfs."""
        raw, _, tfs = self.raw_postings(row)
        ids = from_le(self.id_code, raw)
        if ids and ids[-1] >= self.chunks:
            raise damaged(f"{self.c.path.name}: postings out of bounds")
        return ids, tfs

    def raw_postings(self, row: Row, field: bool = False) -> Tuple[bytes, int, bytes]:
        """The term's chunk (or entry-field) postings undecoded: the ids' little-endian
        bytes, their width in bytes, and the tfs (`chunk_postings` and `field_postings`
        decode them, `vectorized` reads them as arrays); the caller checks the ids against
        the tier's size."""
        if field:
            span, w, a, n = self._spans["field_ids"], self.fw, row.ffirst, row.fn
            tfs = self.c.slice(self._spans["field_tfs"], a, a + n)
        else:
            span, w, a, n = self._spans["post_ids"], self.w, row.first, row.n
            tfs = self.c.slice(self._spans["post_tfs"], a, a + n)
        return self.c.slice(span, a * w, (a + n) * w), w, tfs

    def field_postings(self, row: Row) -> Tuple[array[int], bytes]:
        """The term's entry-field postings: tier-local content ids (ascending) and tfs."""
        raw, _, tfs = self.raw_postings(row, field=True)
        ids = from_le(self.field_code, raw)
        if ids and ids[-1] >= self.contents:
            raise damaged(f"{self.c.path.name}: postings out of bounds")
        return ids, tfs

    def content_postings(self, row: Row) -> Tuple[array[int], array[int], array[int]]:
        """The term's content postings: tier-local content ids (ascending), and per content
        the impact code of its highest tf and shortest chunk with the term, and how many of
        its chunks have it (its chunk postings are a run of that length, in content order)."""
        a, n = row.cfirst, row.cn
        ids = self._ints("cont_ids", self.field_code, a, n)
        if ids and ids[-1] >= self.contents:
            raise damaged(f"{self.c.path.name}: postings out of bounds")
        # A code past the grid fails its look-up (`bounds`: damaged).
        return (
            ids,
            self._ints("cont_code", "H", a, n),
            self._ints("cont_cnt", self.count_code, a, n),
        )

    def blocks(self, row: Row) -> Tuple[array[int], bytes, array[int]]:
        """Per block of the term's chunk postings: last chunk id, highest tf, shortest chunk."""
        n = -(-row.n // self.block)
        last = self._ints("blk_last", self.id_code, row.block, n)
        tfs = self.c.slice(self._spans["blk_tf"], row.block, row.block + n)
        dls = self._ints("blk_dl", "H", row.block, n)
        return last, tfs, dls

    def frontier(self, row: Row) -> List[Tuple[int, int]]:
        """The (tf, chunk length) points no block beats in both: each term's bound."""
        return self._points("front", row.front, row.n_front)

    def field_frontier(self, row: Row) -> List[Tuple[int, int]]:
        """The (tf, field length) points no field posting beats in both."""
        return self._points("ffront", row.ffront, row.n_ffront)

    def _points(self, prefix: str, first: int, n: int) -> List[Tuple[int, int]]:
        tfs = self.c.slice(self._spans[f"{prefix}_tf"], first, first + n)
        dls = self._ints(f"{prefix}_dl", "H", first, n)
        return list(zip(tfs, dls))

    def lists(
        self, chunks: Tuple[int, int], contents: Tuple[int, int], chunk_base: int, content_base: int
    ) -> Dict[bytes, Lists]:
        """Term → the postings of the tier's chunks ``[lo, hi)`` and contents ``[lo, hi)``
        (a run of its taps), ids moved so that ``lo`` becomes the given base."""
        c = self.c
        try:
            table = list(rows(c.read("dict_rows")))
        except ValueError as exc:
            raise damaged(f"{c.path.name}: bad dictionary row") from exc
        ids = c.ints("post_ids", self.id_code)
        tfs = c.read("post_tfs")
        fids = c.ints("field_ids", self.field_code)
        ftfs = c.read("field_tfs")
        lo, hi = chunks
        flo, fhi = contents
        delta, fdelta = chunk_base - lo, content_base - flo
        out: Dict[bytes, Lists] = {}
        for term, row in table:
            a, b = row.first, row.first + row.n
            i, j = bisect_left(ids, lo, a, b), bisect_left(ids, hi, a, b)
            fa, fb = row.ffirst, row.ffirst + row.fn
            fi, fj = bisect_left(fids, flo, fa, fb), bisect_left(fids, fhi, fa, fb)
            if i == j and fi == fj:
                continue
            out[term] = Lists(
                _shift(ids[i:j], delta), tfs[i:j], _shift(fids[fi:fj], fdelta), ftfs[fi:fj]
            )
        return out


# --------------------------------------------------------------------------- the build


def _frontier(points: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The Pareto frontier of (tf, length) points: highest tf first, each with a shorter
    length than every point before it. tf-part grows with tf and falls with length, so
    the frontier's best point is the best of all, whatever k1, b and the average length."""
    out: List[Tuple[int, int]] = []
    shortest = 1 << 30
    for tf, dl in sorted(points, key=lambda p: (-p[0], p[1])):
        if dl < shortest:
            out.append((tf, dl))
            shortest = dl
    return out


def content_runs(
    ids: Sequence[int], tfs: bytes, owner: Sequence[int], dls: Sequence[int]
) -> Tuple[List[int], List[int], List[int]]:
    """One term's chunk postings (``ids`` ascending, ``tfs``) as one posting per content
    (``owner``: chunk → content): the contents ascending, per content the impact code of
    its highest tf and its shortest chunk with the term (`postings.impact_codes`), and how
    many of its chunks have it. BM25's tf-part grows with tf and falls with the length,
    so the code's tf-part is at least the term's tf-part in every chunk of the content,
    for any k1, b and avgdl."""
    n = len(ids)
    if not n:
        return [], [], []
    conts = list(map(owner.__getitem__, ids))
    lens = list(map(dls.__getitem__, ids))
    starts = [0, *compress(range(1, n), map(ne, conts[1:], conts))]
    ends = [*starts[1:], n]
    top: List[int] = []
    short: List[int] = []
    for a, z in zip(starts, ends):
        if z - a == 1:
            top.append(tfs[a])
            short.append(lens[a])
        else:
            top.append(max(tfs[a:z]))
            short.append(min(lens[a:z]))
    return [conts[a] for a in starts], impact_codes(top, short), list(map(sub, ends, starts))


def tier_bytes(
    taps: Sequence[Dict[str, Any]],
    pieces: Sequence[Dict[bytes, Lists]],
    chunk_dl: array[int],
    field_dl: array[int],
    dead_chunks: bytes,
    dead_contents: bytes,
    content_first: Sequence[int],
) -> bytes:
    """A tier file of ``taps`` (their meta records: tap, key, chunks, contents, bases) from
    ``pieces`` (term → postings, tier-local ids, in tap order). ``chunk_dl`` and
    ``field_dl`` are the tier's chunk and field lengths; ``dead_chunks`` and
    ``dead_contents`` have a 1 for each chunk and content that is a copy of an earlier
    tap's (their postings do not count in the live counts); ``content_first`` the first
    tier-local chunk of each tier-local content, and the number of chunks last."""
    n_chunks, n_contents = len(chunk_dl), len(field_dl)
    code, fcode = _code(n_chunks), _code(n_contents)
    if len(content_first) != n_contents + 1 or (content_first and content_first[-1] != n_chunks):
        raise ValueError("content_first does not match the tier")
    owner = array("I", bytes(4 * n_chunks))
    for j in range(n_contents):
        a, z = content_first[j], content_first[j + 1]
        owner[a:z] = array("I", [j]) * (z - a)
    spans = list(map(sub, content_first[1:], content_first[:-1]))
    ccode = "B" if max(spans, default=0) <= 0xFF else "H"
    cont_ids, cont_code, cont_cnt = array(fcode), array("H"), array(ccode)
    any_dead, any_fdead = 1 in dead_chunks, 1 in dead_contents
    terms = sorted(set().union(*pieces))
    ids_all, fids_all = array(code), array(fcode)
    tfs_all, ftfs_all = bytearray(), bytearray()
    blk_last, blk_tf, blk_dl = array(code), bytearray(), array("H")
    front_tf, front_dl, ffront_tf, ffront_dl = bytearray(), array("H"), bytearray(), array("H")
    table: List[Row] = []
    vocab: List[bytes] = []
    dl_of = chunk_dl.__getitem__
    for term in terms:
        got = [p[term] for p in pieces if term in p]
        ids = array(code)
        tfs = b""
        fids = array(fcode)
        ftfs = b""
        for lists in got:
            ids.extend(lists.ids)
            tfs += lists.tfs
            fids.extend(lists.fids)
            ftfs += lists.ftfs
        n, fn = len(ids), len(fids)
        block, front = len(blk_tf), len(front_tf)
        points = []
        for i in range(0, n, BLOCK):
            part = ids[i : i + BLOCK]
            last, top, short = part[-1], max(tfs[i : i + BLOCK]), min(map(dl_of, part))
            blk_last.append(last)
            blk_tf.append(top)
            blk_dl.append(short)
            points.append((top, short))
        for tf, dl in _frontier(points):
            front_tf.append(tf)
            front_dl.append(dl)
        ffront = len(ffront_tf)
        for tf, dl in _frontier(list(zip(ftfs, map(field_dl.__getitem__, fids)))):
            ffront_tf.append(tf)
            ffront_dl.append(dl)
        cfirst = len(cont_ids)
        runs = content_runs(ids, tfs, owner, chunk_dl)
        cont_ids.extend(runs[0])
        cont_code.extend(runs[1])
        cont_cnt.extend(runs[2])
        live = n - sum(map(dead_chunks.__getitem__, ids)) if any_dead else n
        flive = fn - sum(map(dead_contents.__getitem__, fids)) if any_fdead else fn
        table.append(
            Row(
                len(ids_all),
                n,
                live,
                block,
                front,
                len(front_tf) - front,
                len(fids_all),
                fn,
                flive,
                ffront,
                len(ffront_tf) - ffront,
                cfirst,
                len(cont_ids) - cfirst,
            )
        )
        if n:
            vocab.append(term)
        ids_all.extend(ids)
        tfs_all += tfs
        fids_all.extend(fids)
        ftfs_all += ftfs
    buckets, dict_rows, n_buckets = dictionary(terms, table)
    sections = [
        ("dict_buckets", buckets),
        ("dict_rows", dict_rows),
        ("vocab", b"\n".join(vocab)),
        ("post_ids", to_le(ids_all)),
        ("post_tfs", bytes(tfs_all)),
        ("blk_last", to_le(blk_last)),
        ("blk_tf", bytes(blk_tf)),
        ("blk_dl", to_le(blk_dl)),
        ("front_tf", bytes(front_tf)),
        ("front_dl", to_le(front_dl)),
        ("field_ids", to_le(fids_all)),
        ("field_tfs", bytes(ftfs_all)),
        ("ffront_tf", bytes(ffront_tf)),
        ("ffront_dl", to_le(ffront_dl)),
        ("cont_ids", to_le(cont_ids)),
        ("cont_code", to_le(cont_code)),
        ("cont_cnt", to_le(cont_cnt)),
    ]
    meta = {
        "kind": "tier",
        "taps": list(taps),
        "chunks": n_chunks,
        "contents": n_contents,
        "id_code": code,
        "field_code": fcode,
        "count_code": ccode,
        "buckets": n_buckets,
        "block": BLOCK,
        "counts": {
            "terms": len(vocab),
            "postings": len(ids_all),
            "field_terms": sum(1 for r in table if r.fn),
            "field_postings": len(fids_all),
            "blocks": len(blk_tf),
            "content_postings": len(cont_ids),
        },
        "dead": {"chunks": dead_chunks.count(1), "contents": dead_contents.count(1)},
    }
    return pack(TIER_MAGIC, meta, sections)


# --------------------------------------------------------------------------- planning


TIER_LAYOUT = 3  # what `tier_bytes` writes; in every tier's key (3: content postings)

TierJob = Tuple[
    str, str, str, List[Dict[str, Any]], List[Tuple[Any, ...]], bytes, bytes, bytes, bytes, bytes
]


class TierPlan(NamedTuple):
    """One tier of the new generation: its manifest record (the previous one when the
    same tier exists), its entry in the merge's meta, the job that builds it (None:
    reused), and the taps whose postings the job takes out of old tiers."""

    record: Dict[str, Any]
    meta: Dict[str, Any]
    job: Optional[TierJob]
    from_old: Tuple[str, ...]


def tiers_plan(
    root: Path,
    old_tiers: Sequence[Dict[str, Any]],
    held: Dict[str, Tuple[str, str]],
    names: Sequence[str],
    keys: Dict[str, str],
    fresh: Dict[str, str],
    meta: Dict[str, Any],
    sections: Dict[str, bytes],
) -> List[TierPlan]:
    """The tiers of ``names`` (in name order, segment ``keys``): each reused when a tier of
    the previous generation (``old_tiers``) has the same key, else a job that builds it
    from the taps' fresh postings files (``fresh``: tap → file) and runs of unchanged
    taps taken out of the old tiers that hold them (``held``: tap → (key, tier file))."""
    taps = meta["taps"]
    live = sections["chunk_live"]
    dead_chunks_all = live.translate(bytes([1, 0]) + bytes(range(2, 256)))
    dead_contents_all = bytearray(len(sections["content_kinds"]))
    for dead in meta["copies"].values():
        for g in dead:
            dead_contents_all[g] = 1
    chunk_dl = sections["chunk_dl"]
    field_dl = sections["field_dl"]
    content_first = sections["content_first"]
    reusable = {str(r["file"]): r for r in old_tiers}
    out: List[TierPlan] = []
    for a, b in plan([(n, int(taps[i]["chunks"])) for i, n in enumerate(names)]):
        cb0, ob0 = int(taps[a]["chunk_base"]), int(taps[a]["content_base"])
        members: List[Dict[str, Any]] = []
        n_chunks = n_contents = 0
        for i in range(a, b):
            members.append(
                {
                    "tap": names[i],
                    "key": keys[names[i]],
                    "chunks": int(taps[i]["chunks"]),
                    "contents": int(taps[i]["contents"]),
                    "chunk_base": n_chunks,
                    "content_base": n_contents,
                }
            )
            n_chunks += int(taps[i]["chunks"])
            n_contents += int(taps[i]["contents"])
        dead_chunks = dead_chunks_all[cb0 : cb0 + n_chunks]
        dead_contents = bytes(dead_contents_all[ob0 : ob0 + n_contents])
        digest = hashlib.sha256(dumps([TIER_LAYOUT, members]) + dead_chunks + dead_contents)
        rel = f"{TIERS}/{safe_name(names[a])}-{digest.hexdigest()[:16]}.tir"
        tier_meta = {
            "file": rel,
            "taps": [a, b],
            "chunk_base": cb0,
            "content_base": ob0,
            "chunks": n_chunks,
            "contents": n_contents,
        }
        old = reusable.get(rel)
        if (
            old is not None
            and (root / rel).is_file()
            and (root / rel).stat().st_size == old["size"]
        ):
            out.append(TierPlan(dict(old), tier_meta, None, ()))
            continue
        pieces: List[Tuple[Any, ...]] = []
        from_old: List[str] = []
        for m in members:
            name = m["tap"]
            if name in fresh:
                pieces.append(("tap", fresh[name], (name,)))
                continue
            from_old.append(name)
            tier_file = held[name][1]
            last = pieces[-1] if pieces else None
            if last is not None and last[0] == "tier" and last[1] == tier_file:
                pieces[-1] = ("tier", tier_file, (*last[2], name))  # the run goes on
            else:
                pieces.append(("tier", tier_file, (name,)))
        ld, lf = 2 * cb0, 2 * ob0
        job: TierJob = (
            str(root),
            rel,
            digest.hexdigest()[:16],
            members,
            pieces,
            chunk_dl[ld : ld + 2 * n_chunks],
            field_dl[lf : lf + 2 * n_contents],
            dead_chunks,
            dead_contents,
            content_first[4 * ob0 : 4 * (ob0 + n_contents + 1)],
        )
        record = {"file": rel, "key": job[2], "taps": [[m["tap"], m["key"]] for m in members]}
        out.append(TierPlan(record, tier_meta, job, tuple(from_old)))
    return out


def adjacent_runs(names: Sequence[str], order: Sequence[str]) -> List[List[str]]:
    """``names`` (in ``order``) cut into runs that are adjacent in ``order``: a run's taps
    are one range of ids in the tier they come from, with no removed tap between them."""
    at = {n: i for i, n in enumerate(order)}
    runs: List[List[str]] = []
    for name in names:
        if runs and at[name] == at[runs[-1][-1]] + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    return runs


def tier_task(job: TierJob) -> Dict[str, Any]:
    """Build one tier from its pieces and write it; its manifest record. Also a
    worker-process entry (`workers.Pool`)."""
    root_s, rel, key, members, pieces, dl, fdl, dead_chunks, dead_contents, first = job
    root = Path(root_s)
    by_tap = {m["tap"]: m for m in members}
    lists: List[Dict[bytes, Lists]] = []
    for kind, file, names in pieces:
        if kind == "tap":
            base = by_tap[names[0]]
            got = TapPostings(root / file)
            if got.chunks != base["chunks"] or got.contents != base["contents"]:
                raise damaged(f"{Path(file).name} does not match its segment")
            lists.append(got.lists(base["chunk_base"], base["content_base"]))
            continue
        old = Tier(root / file)
        try:
            order = [str(t["tap"]) for t in old.taps]
            where = {str(t["tap"]): t for t in old.taps}
            for run in adjacent_runs(names, order):
                a, z, base = where[run[0]], where[run[-1]], by_tap[run[0]]
                chunks = (int(a["chunk_base"]), int(z["chunk_base"]) + int(z["chunks"]))
                contents = (int(a["content_base"]), int(z["content_base"]) + int(z["contents"]))
                lists.append(old.lists(chunks, contents, base["chunk_base"], base["content_base"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{Path(file).name} has a bad table of contents") from exc
        finally:
            old.close()
    data = tier_bytes(
        members,
        lists,
        from_le("H", dl),
        from_le("H", fdl),
        dead_chunks,
        dead_contents,
        array("I", [x - from_le("I", first[:4])[0] for x in from_le("I", first)]),
    )
    write_bytes(root / rel, data)
    taps = [[m["tap"], m["key"]] for m in members]
    return {"file": rel, "size": len(data), "crc32": zlib.crc32(data), "key": key, "taps": taps}
