"""The retriever seam: one protocol every engine implements, and `get_retriever()`.

Callers (the search pipeline, MCP) ask `get_retriever()` for the best engine that is
ready and never branch on a concrete class. Engines degrade: hybrid → bm25 → lexical.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    runtime_checkable,
)

from boost_cli.core.errors import IndexError_, ProviderError, UsageError
from boost_cli.core.models import Entry, Hit, TapSnapshot

if TYPE_CHECKING:
    from boost_cli.core.index import IndexReader


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


ENGINES = ("lexical", "bm25", "dense", "hybrid")


@dataclass
class RetrieverChoice:
    """The engine `get_retriever` picked, why, and what it knows about its index."""

    retriever: Retriever
    notes: List[str] = field(default_factory=list)
    info: Dict[str, Any] = field(default_factory=dict)


def _lexical(snapshots: Sequence[TapSnapshot]) -> Retriever:
    from boost_cli.core.lexical import LexicalRetriever

    return LexicalRetriever([e for s in snapshots for e in s.entries])


def get_retriever(
    engine: Optional[str] = None,
    *,
    taps: Optional[Sequence[Any]] = None,
    snapshots: Optional[Sequence[TapSnapshot]] = None,
    refresh: bool = True,
) -> RetrieverChoice:
    """The best ready engine (hybrid → bm25 → lexical), or the one asked for.

    Auto mode degrades quietly and records the reason in ``notes``; an explicit
    ``engine`` that is not ready raises with the fix. When the BM25 index is stale for
    exactly one tap it is refreshed in place (cheap, incremental); staler indexes are
    used as they are, with a hint to run ``boost reindex``.
    """
    from boost_cli.core import registry

    if engine is not None and engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", f"use one of: {', '.join(ENGINES)}")
    tap_infos = list(taps) if taps is not None else registry.list_taps()

    def snaps() -> Sequence[TapSnapshot]:
        nonlocal snapshots
        if snapshots is None:
            snapshots = registry.snapshots()
        return snapshots

    if engine == "lexical":
        return RetrieverChoice(_lexical(snaps()), [], {"engine": "lexical"})

    notes: List[str] = []
    bm25 = None
    info: Dict[str, Any] = {}
    try:
        bm25, info = _open_bm25(tap_infos, snaps, refresh, notes)
    except IndexError_ as exc:
        if engine in ("bm25", "hybrid"):
            raise
        notes.append(f"search index unusable ({exc.message}) — {exc.fix or 'run boost reindex'}")
    if engine in ("dense", "hybrid") or (engine is None and bm25 is not None):
        dense_choice = _dense(engine, bm25, notes)
        if dense_choice is not None:
            dense_choice.info.update(info)
            return dense_choice
    if bm25 is not None:
        return RetrieverChoice(bm25, notes, info)
    if engine == "bm25":
        raise IndexError_("no search index yet", "run 'boost reindex'")
    if not notes:
        notes.append(
            "no search index yet, using name/description matching — run 'boost reindex' for full-content ranking"
        )
    return RetrieverChoice(_lexical(snaps()), notes, {"engine": "lexical"})


def _open_bm25(
    tap_infos: Sequence[Any],
    snaps: Callable[[], Sequence[TapSnapshot]],
    refresh: bool,
    notes: List[str],
) -> Tuple[Optional[Retriever], Dict[str, Any]]:
    """The BM25 engine over the persisted index, refreshed when exactly one tap changed."""
    from boost_cli.core import index

    reader = index.open_index()
    if reader is None:
        return None, {}
    current = {t.name: t.commit for t in tap_infos}
    changed = sorted({n for n, _ in set(current.items()) ^ set(reader.commits.items())})
    refreshed: List[str] = []
    if changed and refresh and len(changed) == 1:
        index.build(snaps())
        reader = index.open_index()
        if reader is None:  # pragma: no cover - build always leaves an index
            return None, {}
        refreshed = changed
        notes.append(f"search index refreshed for tap {changed[0]}")
        changed = []
    elif changed:
        notes.append(
            f"the search index is out of date for {len(changed)} taps ({', '.join(changed[:5])}) — run 'boost reindex'"
        )
    info = {
        "engine": "bm25",
        "generated": reader.generated,
        "commits": dict(reader.commits),
        "stale_taps": changed,
        "refreshed_taps": refreshed,
        "stats": dict(reader.stats),
    }
    return BM25Retriever(reader), info


class BM25Retriever:
    """The BM25 engine behind the seam: queries over the persisted index's `IndexReader`.

    (Moved here from the index package, which no longer imports the seam or the registry.)
    """

    name = "bm25"

    def __init__(
        self,
        reader: Optional[IndexReader] = None,
        snapshots: Optional[Callable[[], Sequence[TapSnapshot]]] = None,
    ) -> None:
        self._reader = reader
        self._snapshots = snapshots

    def build(self, entries: Sequence[Entry]) -> object:
        """(Re)build the index for the taps of ``entries`` (incremental: see `index.build`)."""
        from boost_cli.core import index

        snaps = list(self._snapshots()) if self._snapshots else _snapshots_for(entries)
        report = index.build(snaps)
        if self._reader is not None:
            self._reader.close()
        self._reader = index.open_index()
        return report

    def query(self, text: str, k: int = 60, kind: Optional[str] = None) -> List[Hit]:
        from boost_cli.core import index

        reader = self._reader or index.open_index()
        if reader is None:
            raise IndexError_("no search index yet", "run 'boost reindex'")
        self._reader = reader
        return reader.query(text, k=k, kind=kind)

    def ready(self) -> bool:
        from boost_cli.core import index

        if self._reader is None:
            try:
                self._reader = index.open_index()
            except IndexError_:
                return False
        return self._reader is not None and bool(self._reader.manifest)


def _snapshots_for(entries: Sequence[Entry]) -> List[TapSnapshot]:
    """``entries`` grouped into snapshots of their taps, at the commits the registry records."""
    from boost_cli.core import registry

    by_tap: Dict[str, List[Entry]] = {}
    for e in entries:
        by_tap.setdefault(e.tap, []).append(e)
    out = []
    for name, items in sorted(by_tap.items()):
        tap = registry.get_tap(name)
        out.append(TapSnapshot(name, tap.commit, tap.root, tuple(items)))
    return out


def _dense(
    engine: Optional[str], bm25: Optional[Retriever], notes: List[str]
) -> Optional[RetrieverChoice]:
    """Hybrid/dense when the dense store is ready; None (auto) or an error (explicit) otherwise."""
    from boost_cli.core import paths

    if engine is None and not paths.vectors_path().exists():
        return None  # no dense store: don't pay for importing the embedding stack
    try:
        from boost_cli.core import dense
    except (
        ImportError
    ) as exc:  # pragma: no cover - dense is stdlib-only; guard for partial installs
        if engine is not None:
            raise ProviderError(f"dense retrieval is unavailable: {exc}") from exc
        return None
    status = dense.open_status()
    if not status.ready:
        if engine is not None:
            raise ProviderError(f"dense retrieval is not ready: {status.reason}", status.fix)
        if status.exists:
            notes.append(f"dense retrieval skipped: {status.reason}")
        return None
    dense_r = dense.DenseRetriever()
    if engine == "dense":
        return RetrieverChoice(dense_r, notes, {"dense": status.info})
    if bm25 is None:
        if engine == "hybrid":
            raise IndexError_("hybrid search needs the BM25 index too", "run 'boost reindex'")
        return None
    from boost_cli.core.fusion import HybridRetriever

    return RetrieverChoice(HybridRetriever(bm25, dense_r), notes, {"dense": status.info})
