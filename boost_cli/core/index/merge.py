"""The cross-tap merge: which contents are copies of an earlier tap's, N and avgdl (of the
chunks and of the entry fields), per chunk its global content and length, and per content
its near-duplicate group. Rebuilt from the segments on every build, O(chunks); the build
adds the tiers (whose live counts need the copies found here) and packs it.
"""

from __future__ import annotations

from array import array
from itertools import compress
from typing import Any, Dict, Iterable, List, NamedTuple, Sequence, Tuple

from boost_cli.core import origin
from boost_cli.core.binio import to_le
from boost_cli.core.errors import IndexUnavailable
from boost_cli.core.index import neardup
from boost_cli.core.index.layout import DEAD, SEGMENTS, damaged, segment_damaged
from boost_cli.core.index.segment import Segment

Sections = List[Tuple[str, bytes]]


def merge(segments: Sequence[Segment]) -> Tuple[Sections, Dict[str, Any]]:
    """The cross-tap file's sections and meta: copies, N, avgdl, chunk → content, chunk
    lengths, groups. O(chunks).

    Taps come in name order and contents in path order inside a tap, so the first copy
    of a content by (tap, path) is the one indexed; later copies are dead (queries skip
    their chunks; N, avgdl and df leave them out).
    """
    owner: Dict[bytes, int] = {}  # content hash -> global content id of its live copy
    copies: Dict[int, List[int]] = {}
    chunk_content = array("I")
    chunk_dl = array("H")
    chunk_live = bytearray()
    content_first = array("I")
    content_kinds = bytearray()
    taps_meta: List[Dict[str, Any]] = []
    n_live = 0
    total_dl = 0
    entries = 0
    field_dl = array("H")
    field_total = 0
    names: Dict[int, str] = {}
    keys: Dict[int, List[bytes]] = {}
    sketches: Dict[int, bytes] = {}
    live_of: Dict[int, int] = {}  # dead content → its live copy
    for seg in segments:
        c = seg.c
        try:
            t = _tables(seg)
        except IndexUnavailable as exc:
            raise segment_damaged(seg.tap, exc) from exc
        hashes, first, kinds, cc, dl, fdl = t.hashes, t.first, t.kinds, t.cc, t.dl, t.fdl
        n_contents, seg_names, seg_keys, seg_sketches = t.n, t.names, t.keys, t.sketches
        c_base = len(content_kinds)
        k_base = len(chunk_content)
        dead: List[int] = []
        for j in range(n_contents):
            h = hashes[32 * j : 32 * j + 32]
            live = owner.get(h)
            if live is None:
                g = owner[h] = c_base + j
                names[g] = seg_names[j]
                keys[g] = list(seg_keys[j])
                sketches[g] = seg_sketches[j]
                field_total += fdl[j]
            else:
                dead.append(j)
                copies.setdefault(live, []).append(c_base + j)
                content_kinds[live] |= kinds[j]
                keys[live].extend(seg_keys[j])
                live_of[c_base + j] = live
        field_dl.extend(fdl)
        content_kinds += kinds
        content_first.extend(map(k_base.__add__, first[:-1]))
        chunk_dl.extend(dl)
        if dead:
            cmap = array("I", map(c_base.__add__, range(n_contents)))
            for j in dead:
                cmap[j] = DEAD
            mapped = array("I", map(cmap.__getitem__, cc))
            live_bytes = bytes(x != DEAD for x in mapped)
            seg_dl = sum(compress(dl, live_bytes))
        else:
            mapped = array("I", map(c_base.__add__, cc))
            live_bytes = b"\x01" * len(cc)
            seg_dl = sum(dl)
        chunk_content.extend(mapped)
        chunk_live += live_bytes
        seg_live = live_bytes.count(1)
        n_live += seg_live
        total_dl += seg_dl
        entries += seg.counts.get("entries", 0)
        taps_meta.append(
            {
                "tap": seg.tap,
                "commit": seg.commit,
                "root": seg.recorded_root,
                "file": f"{SEGMENTS}/{c.path.name}",
                "content_base": c_base,
                "chunk_base": k_base,
                "chunks": len(cc),
                "contents": n_contents,
                "dead_chunks": len(cc) - seg_live,
                "entries": seg.counts.get("entries", 0),
            }
        )
    content_first.append(len(chunk_content))
    n_contents_all = len(content_kinds)
    by_key, near = neardup.groups(sorted(owner.values()), keys, names, sketches, n_contents_all)
    for d, live in live_of.items():
        by_key[d], near[d] = by_key[live], near[live]
    group_stats = {
        level: _group_stats(g, owner.values()) for level, g in (("key", by_key), ("near", near))
    }
    meta = {
        "kind": "merge",
        "taps": taps_meta,
        "chunks": n_live,
        "total_dl": total_dl,
        "avgdl": total_dl / n_live if n_live else 0.0,
        "contents": len(owner),
        "entries": entries,
        "copies": {str(k): v for k, v in sorted(copies.items())},
        # The order in which a folded item's copies are shown (`origin`): computed here,
        # once per build, so a query only looks it up.
        "origin": origin.ranks({t["tap"]: int(t["entries"]) for t in taps_meta}),
        "field": {
            "contents": len(owner),
            "avgdl": field_total / len(owner) if owner else 0.0,
        },
        "groups": group_stats,
    }
    sections = [
        ("chunk_content", to_le(chunk_content)),
        ("chunk_dl", to_le(chunk_dl)),
        ("chunk_live", bytes(chunk_live)),
        ("content_first", to_le(content_first)),
        ("content_kinds", bytes(content_kinds)),
        ("field_dl", to_le(field_dl)),
        ("key_group", to_le(by_key)),
        ("key_next", to_le(_next_member(by_key, owner.values()))),
        ("near_group", to_le(near)),
        ("near_next", to_le(_next_member(near, owner.values()))),
    ]
    return sections, meta


class _SegTables(NamedTuple):
    hashes: bytes
    first: array[int]
    kinds: bytes
    cc: array[int]
    dl: array[int]
    fdl: array[int]
    n: int
    names: List[str]
    keys: List[List[bytes]]
    sketches: List[bytes]


def _tables(seg: Segment) -> _SegTables:
    """The tables of ``seg`` the merge reads, checked against each other."""
    c = seg.c
    hashes = c.read("content_hash")
    first = c.ints("content_first", "I")
    kinds = c.read("content_kinds")
    cc = c.ints("chunk_content", "I")
    dl = c.ints("chunk_dl", "H")
    n_contents = len(hashes) // 32
    fdl = c.ints("field_dl", "H")
    names, keys, sketches = seg.signatures(n_contents)
    if (
        len(hashes) % 32
        or len(first) != n_contents + 1
        or len(fdl) != n_contents
        or len(kinds) != n_contents
        or len(cc) != len(dl)
        or first[-1] != len(dl)
        or any(x >= n_contents for x in cc[-1:])
    ):
        raise damaged(f"{c.path.name}: tables disagree")
    return _SegTables(hashes, first, kinds, cc, dl, fdl, n_contents, names, keys, sketches)


def _group_stats(group: Sequence[int], live: Iterable[int]) -> Dict[str, int]:
    """How many groups the live contents form, how many have several members, how many
    members those have."""
    sizes: Dict[int, int] = {}
    for g in live:
        sizes[group[g]] = sizes.get(group[g], 0) + 1
    return {
        "groups": len(sizes),
        "merged": sum(1 for n in sizes.values() if n > 1),
        "members": sum(n for n in sizes.values() if n > 1),
    }


def _next_member(group: Sequence[int], live: Iterable[int]) -> array[int]:
    """Per content the next live member of its group, ascending and round (the last one
    points back to the first); a content alone, or dead, points to itself. A query lists
    a hit's group by following these from its first member, without a scan."""
    nxt = array("I", range(len(group)))
    last: Dict[int, int] = {}
    for j in sorted(live):
        g = group[j]
        prev = last.get(g)
        if prev is not None:
            nxt[prev] = j
        last[g] = j
    for g, j in last.items():
        nxt[j] = g
    return nxt
