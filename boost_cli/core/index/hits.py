"""A ranked group as a `Hit`: the copy shown (of those that pass the filters, the one
from the tap first in the origin order: `origin`), the other copies and near-duplicates
(``also_in``), and its best chunk read back from the tap's file as snippet.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Dict, List, Optional, Set, Tuple

from boost_cli.core import origin
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
    """Content ``gcid`` as a hit: the copy shown, the other copies and the other members
    of its group at collapse ``level`` in ``also_in``, and its best chunk (-1: none) as
    snippet.

    The copy shown is, of those that pass the ``kind`` and tap filters, the one whose tap
    is first in the origin order (`origin`, stored by the build): the item's origin rather
    than an aggregator's copy of it, whether that copy is byte-identical or a near-duplicate
    in the group. The score stays the group's."""
    own, record = _entries(gen, gcid)
    if not own:
        raise damaged(f"content {gcid} has no entries")
    candidates: List[Tuple[int, int, Entry]] = [(gcid, s, e) for s, e in own]
    group = gen.groups(level)
    if group is not None:
        for member in gen.members(level, group[gcid]):
            if member != gcid:
                candidates += [(member, s, e) for s, e in _entries(gen, member)[0]]

    def fits(item: Tuple[int, int, Entry]) -> bool:
        _, s, e = item
        return (kind is None or e.kind == kind) and (wanted is None or s in wanted)

    fitting = [c for c in candidates if fits(c)] or candidates[:1]
    shown, rep_seg, rep = fitting[origin.best(fitting, lambda c: c[2].tap, gen.origin)]
    names = dict.fromkeys(e.qualified_name for _, _, e in candidates)
    also = tuple(n for n in names if n != rep.qualified_name)
    same = {e.qualified_name for c, _, e in candidates if c == shown}
    similar = tuple(n for n in also if n not in same)
    s, j = gen.seg_of(gcid)
    snippet = rep.description if snippets else ""  # the description: no chunk to show
    if snippets and best >= 0:
        start, end, bs, be, crc = gen.segment(s).span(best - gen.chunk_base[s])
        try:
            size, file_crc = int(record["size"]), int(record["crc32"])
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{gen.segment(s).c.path.name}: bad content record") from exc
        own_seg, own_entry = own[0] if shown != gcid else (rep_seg, rep)
        path = os.path.join(gen.root(own_seg), own_entry.path)
        chunk = read_snippet(path, size, file_crc, (start, end), (bs, be, crc), "")
        if shown != gcid:  # a near-duplicate shown: the chunk only if its file has it too
            shown_path = os.path.join(gen.root(rep_seg), rep.path)
            chunk = chunk if chunk.strip() and _holds(shown_path, chunk.strip()) else ""
        snippet = chunk or rep.description
    s, j = gen.seg_of(shown)
    sha = gen.segment(s).content_hash(j)
    if group is None:
        key = None
    else:  # a group is named by its first file: mostly the file itself
        key = sha if group[shown] == shown else gen.group_key(level, shown)
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


def _holds(path: str, text: str) -> bool:
    """Whether the file at ``path`` (its first `MAX_FILE_BYTES`) contains ``text``."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES)
    except OSError:
        return False
    return text in data.decode("utf-8", errors="replace")


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
