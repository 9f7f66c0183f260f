"""The persisted BM25 index: built per tap, merged for exact global statistics, read lazily.

Under `index_dir()`: ``manifest.json`` (the one switch point), one immutable
``segments/<tap>-<key>.seg`` per tap snapshot, and one small ``merge-<hash>.bin`` across
taps. Segments are queried in place rather than merged into one postings file, so a
one-tap change rewrites one segment and the O(chunks) merge, and scores stay exact BM25;
the files, the design and its measured costs are in docs/index-format.md.

Modules, in the order data flows through them:

- `layout`: file names, magic numbers, format version, damage errors
- `params`: `IndexParams` (k1, b, chunk sizes, aggregation, field score, collapse)
- `container`: the file format every data file shares (header, TOC, checked sections)
- `contents` → `postings` → `segment`: one tap's files read, deduplicated and chunked,
  inverted into a hash-bucketed term dictionary, and packed into a segment (and read back)
- `neardup`: near-duplicate signatures (listing keys, MinHash sketches) and groups
- `merge`: the cross-tap file (copies, N, avgdl, chunk → content, groups)
- `manifest`, `builder`: the incremental, atomic `build`
- `generation`: one generation opened for queries
- `ranking` → `hits`: BM25 scores (chunks and entry fields), top-k groups, hits
- `reader`: `IndexReader` and `open_index`
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boost_cli.core.index.layout import FORMAT_VERSION, MANIFEST, SEGMENTS
from boost_cli.core.index.manifest import indexed_commits, previous_manifest
from boost_cli.core.index.params import AGGREGATIONS, COLLAPSE, IndexParams
from boost_cli.core.index.reader import IndexReader, open_index

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.index.builder import BuildReport, TapSource, build

_BUILDER = ("BuildReport", "TapSource", "build")


def __getattr__(name: str) -> Any:
    """The build side (`builder`: workers, subprocesses, the chunker) loads on first use,
    so a search process never imports it."""
    if name in _BUILDER:
        from boost_cli.core.index import builder

        return getattr(builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGGREGATIONS",
    "COLLAPSE",
    "FORMAT_VERSION",
    "MANIFEST",
    "SEGMENTS",
    "BuildReport",
    "IndexParams",
    "IndexReader",
    "TapSource",
    "build",
    "indexed_commits",
    "open_index",
    "previous_manifest",
]
