"""Which tap a folded item's shown copy comes from: its origin, not an aggregator.

When one skill lies in several taps (byte-identical copies, or near-duplicates folded into
one group), a hit shows one copy and lists the others under ``also_in``. The copy shown is
the one from the tap most likely to be the item's *origin* — the registry that wrote it —
rather than a registry that aggregates others' work.

The rule is *containment*: a copy shared by two taps is a larger part of its origin than of
an aggregator, because an aggregator holds slices of many origins plus more. For taps A and
B sharing ``s`` files, the share ``s/|A|`` of A is the larger exactly when A is the smaller
tap, so the pairwise rule is an order of the taps by size: the tap with the fewest entries
is the origin, ties by name (so the order is total and deterministic). It is computed once
per index build (`index.merge`) from the entry counts of the taps' scans, so a query only
looks a rank up.

Measured on the shared corpus (12 registries; `scripts/aggregators.py --rules`, in
docs/folding.md): of the 17 files whose origin is in the corpus it picks the origin for 17;
the rule the issue first suggested ("a tap most of whose files appear elsewhere is an
aggregator") picks it for 0, and the order by tap name boost used before for 10. Where it
would fail: a small hand-picked list that copies a few files of a much larger origin (the
list is then the smaller tap); no tap of the corpus is one. Git history would settle it
(the older copy), but taps are cloned at depth 1.
"""

from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Sequence, TypeVar

T = TypeVar("T")


def ranks(sizes: Mapping[str, int]) -> Dict[str, int]:
    """tap → its origin rank (0: most likely an item's origin): fewer entries first, then
    by name. ``sizes`` maps each tap to its number of catalog entries."""
    order = sorted(sizes, key=lambda tap: (max(int(sizes[tap]), 0), tap))
    return {tap: i for i, tap in enumerate(order)}


def best(
    candidates: Sequence[T], tap_of: Callable[[T], str], rank: Optional[Mapping[str, int]]
) -> int:
    """The index in ``candidates`` of the one whose tap ranks first (the earliest of those
    on a tie, so a tap's own order is kept); 0 when ``rank`` is None or ``candidates``
    holds one. A tap ``rank`` does not know ranks after every tap it knows."""
    if not rank or len(candidates) < 2:
        return 0
    last = len(rank)
    return min(range(len(candidates)), key=lambda i: (rank.get(tap_of(candidates[i]), last), i))
