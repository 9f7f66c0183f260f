"""The index's names on disk: format version, file names, magic numbers, sentinel values,
and the two errors every reader raises when a file does not match them.

docs/index-format.md describes every file; this module is what the code agrees on.
"""

from __future__ import annotations

from boost_cli.core.errors import IndexUnavailable
from boost_cli.core.models import KINDS

# 2: entry field postings, near-duplicate signatures and groups. 3: postings in tiers
# (block maxima, live counts), segments without postings. 4: content postings in the
# tiers (per term and content: highest tf, shortest chunk, chunks), the ranking's bounds.
FORMAT_VERSION = 4
ENGINE = "bm25"
MANIFEST = "manifest.json"
SEGMENTS = "segments"
TIERS = "tiers"
SEGMENT_MAGIC = b"BOOSTSEG"
MERGE_MAGIC = b"BOOSTMRG"
TIER_MAGIC = b"BOOSTTIR"
TAP_MAGIC = b"BOOSTTAP"  # a tap's postings on their way into a tier (build time only)

REINDEX = "run 'boost reindex'"
REINDEX_FORCE = "run 'boost reindex --force'"

DEAD = 0xFFFFFFFF  # chunk → content value of a chunk whose content is indexed elsewhere
NO_SPAN = 0xFFFFFFFF  # chunk_span byte offsets of a file that is not valid UTF-8
# chunk_span of an enrichment chunk (docs/enrich.md): no characters, an empty byte range
# (whose CRC32 is 0), so a snippet read of it yields "" and the hit shows its description.
ENRICH_CHARS = 0xFFFFFFFE
ENRICH_SPAN = (ENRICH_CHARS, ENRICH_CHARS, 0, 0, 0)
KIND_BITS = {k: 1 << i for i, k in enumerate(KINDS)}  # content_kinds: one bit per kind


def damaged(detail: str) -> IndexUnavailable:
    return IndexUnavailable(f"the search index is damaged ({detail})", REINDEX_FORCE)


class SegmentDamaged(IndexUnavailable):
    """Tap ``tap``'s segment cannot be read: the build rebuilds that tap rather than fail
    (`builder`), and a reader's message names the tap."""

    def __init__(self, tap: str, detail: str) -> None:
        super().__init__(f"the search index is damaged (tap {tap!r}: {detail})", REINDEX_FORCE)
        self.tap = tap
        self.detail = detail


def segment_damaged(tap: str, exc: IndexUnavailable) -> SegmentDamaged:
    """``exc`` (raised reading tap ``tap``'s segment) as a `SegmentDamaged` naming the tap."""
    if isinstance(exc, SegmentDamaged):
        return exc
    detail = exc.message
    prefix = "the search index is damaged ("
    if detail.startswith(prefix) and detail.endswith(")"):
        detail = detail[len(prefix) : -1]
    return SegmentDamaged(tap, detail)


def mismatch(found: object) -> IndexUnavailable:
    return IndexUnavailable(
        f"the search index has format version {found}, this boost reads version {FORMAT_VERSION}",
        REINDEX,
    )
