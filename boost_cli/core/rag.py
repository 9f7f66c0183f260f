"""The retriever seam: one protocol every engine implements, and `get_retriever()`.

Callers (the search pipeline, MCP) ask `get_retriever()` for the best engine that is
ready and never branch on a concrete class. Engines degrade: hybrid → bm25 → lexical.
"""

from __future__ import annotations

from typing import List, Optional, Protocol, Sequence, runtime_checkable

from boost_cli.core.models import Entry, Hit


@runtime_checkable
class Retriever(Protocol):
    """A search engine over catalog entries."""

    name: str

    def build(self, entries: Sequence[Entry]) -> object:
        """(Re)build whatever the engine persists for ``entries``; returns a report."""
        ...

    def query(self, text: str, k: int = 60, kind: Optional[str] = None) -> List[Hit]:
        """The top ``k`` entries for ``text``, best first, optionally of one ``kind``."""
        ...

    def ready(self) -> bool:
        """True when the engine can answer queries without building anything."""
        ...
