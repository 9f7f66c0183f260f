"""What an opened generation keeps between queries: the query terms' dictionary rows
(one look-up per tier each) and their most tf-part per tier (`Generation.term_max`, from
the frontier), so a warm query (``boost mcp``) does not look up again what an earlier one
did: common terms come back. Values are exactly what `Tier.find` gives.

Not kept (measured, issue 21): the posting lists themselves, and each posting's tf-part
as a double. A stream of agent queries reads ~70 k postings a query at 1x and ~1 M at
10x, so any budget worth its memory is thrashed; building the doubles costs as much as
scoring the list once, so a thrashed cache made queries 1.3x slower, and a kept list
saved only its read (a ``pread`` and a copy, cheap next to scoring it).
"""

from __future__ import annotations

from typing import Dict, Generic, Hashable, Optional, Tuple, TypeVar

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
