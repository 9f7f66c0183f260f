"""A ranked group as a `Hit`: the shown content's representative entry (its first copy
that passes the filters), the other copies and near-duplicates (``also_in``), and its best
chunk read back from the tap's file as snippet.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Dict, List, Optional, Set, Tuple

from boost_cli.core.index.container import pread
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import NO_SPAN, damaged
from boost_cli.core.models import MAX_FILE_BYTES, Entry, Hit


def hit(
    gen: Generation,
    gcid: int,
    score: float,
    best: int,
    rank: int,
    kind: Optional[str],
    wanted: Optional[Set[int]],
    snippets: bool,
    level: str = "none",
) -> Hit:
    """Content ``gcid`` as a hit: representative entry, copies and the other members of its
    group at collapse ``level`` in ``also_in``, and its best chunk (-1: none) as snippet."""
    own, record = _entries(gen, gcid)
    if not own:
        raise damaged(f"content {gcid} has no entries")
    others: List[Tuple[int, Entry]] = []
    group = gen.groups(level)
    if group is not None:
        for member in gen.members(level, group[gcid]):
            if member != gcid:
                others += _entries(gen, member)[0]

    def fits(item: Tuple[int, Entry]) -> bool:
        s, e = item
        return (kind is None or e.kind == kind) and (wanted is None or s in wanted)

    rep_seg, rep = next((item for item in own if fits(item)), own[0])
    also = tuple(
        dict.fromkeys(
            e.qualified_name for _, e in own + others if e.qualified_name != rep.qualified_name
        )
    )
    same = {e.qualified_name for _, e in own}
    similar = tuple(n for n in also if n not in same)
    s, j = gen.seg_of(gcid)
    snippet = rep.description if snippets else ""  # the description: no chunk to show
    if snippets and best >= 0:
        start, end, bs, be, crc = gen.segment(s).span(best - gen.chunk_base[s])
        try:
            size, file_crc = int(record["size"]), int(record["crc32"])
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{gen.segment(s).c.path.name}: bad content record") from exc
        path = os.path.join(gen.roots[rep_seg], rep.path)
        snippet = read_snippet(path, size, file_crc, (start, end), (bs, be, crc), rep.description)
    sha = gen.segment(s).content_hash(j)
    if group is None:
        key = None
    else:  # a group is named by its first file: mostly the file itself
        key = sha if group[gcid] == gcid else gen.group_key(level, gcid)
    return Hit(
        entry=rep,
        score=score,
        snippet=snippet,
        also_in=also,
        similar=similar,
        ranks={"bm25": rank},
        content_hash=sha,
        group=key,
    )


def _entries(gen: Generation, gcid: int) -> Tuple[List[Tuple[int, Entry]], Dict[str, Any]]:
    """The entries of content ``gcid`` and of its byte-identical copies (with the index of
    their segment), and the content's own record."""
    entries: List[Tuple[int, Entry]] = []
    record: Dict[str, Any] = {}
    for g in (gcid, *gen.copies.get(gcid, ())):
        s, j = gen.seg_of(g)
        rec = gen.segment(s).record(j)
        if g == gcid:
            record = rec
        try:
            entries.extend((s, Entry.from_dict(d)) for d in rec["entries"])
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{gen.segment(s).c.path.name}: bad entry record") from exc
    return entries, record


def read_snippet(
    path: str,
    size: int,
    file_crc: int,
    chars: Tuple[int, int],
    span: Tuple[int, int, int],
    fallback: str,
) -> str:
    """The chunk's text read back from the tap file; ``fallback`` if the file changed.

    Valid UTF-8 files: only the chunk's byte range is read, checked by its CRC32.
    Others: the whole file, checked by size and CRC32, then cut by characters.
    """
    bs, be, crc = span
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size != size:
                return fallback
            if bs != NO_SPAN:
                data = pread(fh, bs, be - bs) if be > bs else b""
                if zlib.crc32(data) != crc:
                    return fallback
                return data.decode("utf-8", errors="replace")
            data = fh.read()
    except OSError:
        return fallback
    if zlib.crc32(data) != file_crc:
        return fallback
    return data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")[chars[0] : chars[1]]
