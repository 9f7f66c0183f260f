"""What an opened generation keeps between queries: the query terms' dictionary rows,
their lists' upper bounds and the lists decoded, so a warm query (``boost mcp``) neither
looks up nor reads again what an earlier query did (common terms come back).

Bounded: the least recently used items are dropped once they pass a budget
(`POSTINGS_BUDGET` postings, 3-5 bytes each; `TERMS_BUDGET` terms). Values are exactly
what `Tier.find`, `Tier.chunk_postings` and the frontier give, so no ranking changes.

Not kept: each posting's tf-part as a double. Measured: building them costs as much as
scoring the list once from the rows, and a stream of queries whose lists pass the budget
rebuilds them every time (1.3x slower than the rows).
"""

from __future__ import annotations

from typing import Dict, Generic, Hashable, Optional, Tuple, TypeVar

POSTINGS_BUDGET = 1 << 22  # ~4 M postings, ~16 MB at most (a dev query at 10x reads ~1 M)
TERMS_BUDGET = 1 << 14  # dictionary rows of this many query terms

V = TypeVar("V")


class Lru(Generic[V]):
    """A dict that drops its least recently used items once their sizes pass ``budget``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        self._items: Dict[Hashable, Tuple[V, int]] = {}

    def get(self, key: Hashable) -> Optional[V]:
        got = self._items.pop(key, None)
        if got is None:
            return None
        self._items[key] = got  # now the most recent (dicts keep insertion order)
        return got[0]

    def put(self, key: Hashable, value: V, size: int = 1) -> V:
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= old[1]
        self._items[key] = (value, size)
        self.size += size
        while self.size > self.budget and len(self._items) > 1:
            first = next(iter(self._items))
            self.size -= self._items.pop(first)[1]
        return value

    def clear(self) -> None:
        self._items.clear()
        self.size = 0

    def __len__(self) -> int:
        return len(self._items)
