"""The retrieval seam: one `Retriever` protocol for every engine, and `get_retriever()`.

Callers (the search pipeline, MCP, the evaluation scripts) ask `get_retriever()` for the
best engine that is ready and never branch on a concrete class. Auto mode degrades
hybrid → bm25 → lexical and records why; an engine asked for by name fails loudly with
the fix. A query never writes anything: a stale index is used as it is and named in the
notes (``boost reindex``, ``tap`` and ``update`` are the paths that write it).

`Engines` holds what a process keeps open between searches (the index reader, the
dense index): a long-lived ``boost mcp`` keeps one, so queries stay warm; a test gets a
clean slate by making a new one.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
)

from boost_cli.core import config, fusion, index, lexical, origin, paths, related
from boost_cli.core.errors import BoostError, IndexUnavailable, ProviderError, UsageError
from boost_cli.core.models import ENGINES, Entry, Hit, TapSnapshot, content_hash
from boost_cli.core.related import Related
from boost_cli.core.tokenize import query_weights, tokenize

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.dense import DenseIndex

REINDEX = "run 'boost reindex'"
REINDEX_DENSE = "run 'boost reindex --dense'"
READ_ONLY_NOTE = (
    "the vector store {path} is read-only here (its folder is not writable): dense search "
    "reads it as it is, and tap, update and reindex cannot change it — point BOOST_HOME at a "
    "writable folder (or make this one writable)"
)


@dataclass(frozen=True)
class Retrieved:
    """One query's answer: hits best first (one per distinct file, copies in ``also_in``),
    the reasons anything degraded while answering it, and the related terms it added."""

    hits: List[Hit]
    notes: Tuple[str, ...] = ()
    related: Tuple[str, ...] = ()  # index terms the query was widened with (`core/related`)


class Retriever(Protocol):
    """A search engine over catalog entries."""

    name: str

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Retrieved:
        """The top ``k`` distinct files for ``text``, optionally of one ``kind`` and from
        the named ``taps`` only (None: every tap). ``keywords`` are extra words or phrases
        a skill's author would likely use (from the calling agent or an LLM): they widen
        the search beyond the user's wording."""
        ...


# --------------------------------------------------------------------------- freshness


def stale_taps(current: Mapping[str, str], indexed: Mapping[str, str]) -> List[str]:
    """Taps whose indexed commit differs from the tapped one, including taps indexed but
    no longer tapped and taps tapped but not indexed yet (``{name: commit}`` each)."""
    return sorted({n for n, _ in set(current.items()) ^ set(indexed.items())})


def stale_note(what: str, stale: Sequence[str], fix: str) -> str:
    """The note naming the taps ``what`` (an index or store) is out of date for: five at most."""
    plural = "s" if len(stale) > 1 else ""
    return f"{what} is out of date for {len(stale)} tap{plural} ({', '.join(stale[:5])}) — {fix}"


def tap_state(commit: str, indexed: Optional[str]) -> str:
    """One tap's index state: ``indexed``, ``stale index`` or ``not indexed``."""
    if indexed is None:
        return "not indexed"
    return "indexed" if indexed == commit else "stale index"


# --------------------------------------------------------------------------- engines


def with_keywords(text: str, keywords: Sequence[str]) -> str:
    """The task text followed by the keywords: one query text for engines that weigh every
    word alike."""
    return " ".join([text, *keywords]) if keywords else text


def file_hash(snapshot_root: Path, entry: Entry) -> Optional[str]:
    """`content_hash` of an entry's file (what the index and the vector store key copies
    by), or None when it cannot be read."""
    try:
        return content_hash((snapshot_root / entry.path).read_bytes())
    except OSError:
        return None


class LexicalRetriever:
    """Name/description/frontmatter matching over entries in memory: needs no index."""

    name = "lexical"

    def __init__(self, snapshots: Sequence[TapSnapshot]) -> None:
        self.snapshots = list(snapshots)

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Retrieved:
        text = with_keywords(text, keywords)
        snaps = [s for s in self.snapshots if taps is None or s.name in taps]
        roots = {s.name: s.root for s in snaps}
        entries = [e for s in snaps for e in s.entries]
        # Copies of one file are one hit: ask for more until k distinct files (or all).
        wanted = k
        while True:
            hits = lexical.search(entries, text, wanted, kind)
            hashed = [
                Hit(
                    entry=h.entry,
                    score=h.score,
                    snippet=h.snippet,
                    ranks=h.ranks,
                    content_hash=file_hash(roots[h.entry.tap], h.entry),
                )
                for h in hits
            ]
            distinct = fusion.collapse(hashed, lambda h: h.content_hash)
            if len(distinct) >= k or len(hits) < wanted:
                return Retrieved(self._origin_first(distinct[:k], entries, kind))
            wanted *= 2

    def _origin_first(
        self, hits: List[Hit], entries: Sequence[Entry], kind: Optional[str]
    ) -> List[Hit]:
        """``hits`` each showing, of its byte-identical copies, the one from the tap first
        in the origin order (`origin`, by the taps' entry counts: no index to store it)."""
        rank = origin.ranks({s.name: len(s.entries) for s in self.snapshots})
        by_name = {e.qualified_name: e for e in entries}
        out = []
        for h in hits:
            copies = [h.entry] + [
                by_name[n]
                for n in h.also_in
                if n not in h.similar and n in by_name and kind in (None, by_name[n].kind)
            ]
            shown = copies[origin.best(copies, lambda e: e.tap, rank)]
            if shown is not h.entry:
                names = (h.entry.qualified_name, *h.also_in)
                also = tuple(n for n in names if n != shown.qualified_name)
                h = replace(h, entry=shown, also_in=also)
            out.append(h)
        return out


class BM25Retriever:
    """The persisted BM25 index (`index.IndexReader`): the task and the keywords are
    weighed apart, and near-duplicates come back as one hit. ``related`` gives the
    related-terms table of the index (`core/related.py`, None: none): a query without
    keywords is widened with a few of the task's related terms, at a low weight."""

    name = "bm25"

    def __init__(
        self,
        reader: index.IndexReader,
        related: Optional[Callable[[], Optional[Related]]] = None,
    ) -> None:
        self.reader = reader
        self.related = related

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Retrieved:
        # Task words on the query stoplist weigh less; keyword terms weigh a little less
        # than the task's own (`tokenize.query_weights`; measured: docs/benchmarks.md).
        weights = query_weights(text, keywords)
        table = self.related() if self.related is not None and not keywords else None
        extra = table.expand(weights) if table is not None else {}
        weights.update(extra)
        hits = self.reader.query(k=k, kind=kind, taps=taps, weights=weights)
        return Retrieved(hits, related=tuple(extra))

    def widened(
        self,
        task: Mapping[str, float],
        extra: Mapping[str, float],
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
    ) -> Retrieved:
        """The task's query weights ``task`` (`tokenize.query_weights`) widened by
        ``extra`` (term → weight; a term of the task keeps the task's weight) instead of
        the related-terms table."""
        added = tuple(t for t in extra if t not in task)
        weights = {**task, **{t: extra[t] for t in added}}
        hits = self.reader.query(k=k, kind=kind, taps=taps, weights=weights)
        return Retrieved(hits, related=added)


def without_related(retriever: Retriever) -> Retriever:
    """``retriever`` without the related-terms widening: what a search ranks by when an
    LLM reranks (its candidates stay those of the user's words and the LLM's keywords)."""
    if isinstance(retriever, BM25Retriever) and retriever.related is not None:
        return BM25Retriever(retriever.reader)
    if isinstance(retriever, HybridRetriever) and retriever.related is not None:
        plain = copy.copy(retriever)
        plain.related = None
        return plain
    return retriever


class DenseStale(IndexUnavailable):
    """The vector store lacks a tap of the query's scope at its tapped commit."""


def above(hits: Sequence[Hit], floor: Optional[float]) -> List[Hit]:
    """``hits`` whose cosine reaches ``floor`` (None: all). Measured: docs/dense.md,
    "A floor"."""
    return list(hits) if floor is None else [h for h in hits if h.score >= floor]


class DenseRetriever:
    """Nearest neighbours in the vector store (`dense.DenseIndex`).

    ``fresh`` — when given, the taps whose vectors are of the commit now tapped: the only
    ones searched (a tap gone or embedded at another commit never answers); ``stale`` —
    tapped taps the store lacks at their commit; ``rank`` — the index's origin order
    (`origin`: which copy of a file is shown). With ``strict``, a query whose scope holds
    a stale tap raises `DenseStale` instead (the hybrid then ranks with BM25 alone rather
    than fuse a ranking that cannot see those taps)."""

    name = "dense"

    def __init__(
        self,
        index: DenseIndex,
        fresh: Optional[Sequence[str]] = None,
        stale: Sequence[str] = (),
        strict: bool = False,
        rank: Optional[Mapping[str, int]] = None,
        min_similarity: Optional[float] = None,
        has_words: Optional[Callable[[str, Optional[str], Optional[Sequence[str]]], bool]] = None,
    ) -> None:
        self.index = index
        # Whether BM25 finds the query: then the measured floor does not apply (None: no
        # BM25 to ask, it always does); an explicit floor (``has_words`` given as None
        # with ``min_similarity`` set by the user) applies to every query.
        self.has_words = has_words
        self.fresh = None if fresh is None else frozenset(fresh)
        self.stale = tuple(sorted(stale))
        self.strict = strict
        self.rank = rank
        self.min_similarity = min_similarity  # cosine below which a hit is not shown

    def _scope(self, taps: Optional[Sequence[str]]) -> Tuple[bool, Optional[List[str]]]:
        """(whether any tap is left to search, those taps: None for every tap)."""
        scope = list(taps) if taps else None
        if self.strict:
            missing = [t for t in self.stale if scope is None or t in scope]
            if missing:
                raise DenseStale(stale_note("the vector store", missing, REINDEX_DENSE))
        if self.fresh is not None:
            scope = sorted(
                t for t in (scope if scope is not None else self.fresh) if t in self.fresh
            )
            if not scope:
                return False, scope
        return True, scope

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Retrieved:
        text = with_keywords(text, keywords)
        searchable, scope = self._scope(taps)
        if not searchable:
            return Retrieved([])
        hits = self.index.query(text, k=k, kind=kind, taps=scope, rank=self.rank)
        if self.min_similarity is not None and not (
            self.has_words is not None and self.has_words(text, kind, scope)
        ):
            hits = above(hits, self.min_similarity)
        return Retrieved(hits)

    def vector_query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Tuple[Retrieved, Optional[List[float]]]:
        """`query`, and the query vector it searched with (None when nothing was searched),
        so the hybrid can search again from a moved vector without embedding twice."""
        text = with_keywords(text, keywords)
        searchable, scope = self._scope(taps)
        if not searchable or not text.strip() or k <= 0:
            return Retrieved([]), None
        vector = self.index.embed_query(text)
        return (
            Retrieved(self.index.search_vector(vector, k=k, kind=kind, taps=scope, rank=self.rank)),
            vector,
        )

    def by_vector(
        self,
        vector: Sequence[float],
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
    ) -> Retrieved:
        """The ``k`` files nearest to a query vector, in the same scope as `query`."""
        searchable, scope = self._scope(taps)
        if not searchable:
            return Retrieved([])
        return Retrieved(
            self.index.search_vector(vector, k=k, kind=kind, taps=scope, rank=self.rank)
        )

    def vector_of(self, hit: Hit, near: Sequence[float]) -> Optional[List[float]]:
        """The stored vector of ``hit``'s entry (or of a copy of its file) nearest to
        ``near``; None when the store holds neither."""
        if self.fresh is not None and hit.entry.tap not in self.fresh:
            return None
        return self.index.entry_vector(hit.entry.id, hit.content_hash, near)


class HybridRetriever:
    """BM25 and dense fused at entry level (`fusion.fuse`). With a `DenseRetriever` and
    ``feedback`` > 0, the dense half then searches again from the query vector moved
    towards the first fusion's top file (`fusion.feedback_vector`: pseudo-relevance
    feedback, one more k-NN, the query embedded once) and the fusion is redone with
    that ranking. When the dense half cannot answer (provider down, store from another
    model) the query degrades to BM25's ranking and says why in its notes. ``groups`` maps file hashes to the index's
    near-duplicate groups (`index.IndexReader.group_keys`), so a dense hit on one copy of a
    skill fuses with BM25's hit on another."""

    name = "hybrid"

    def __init__(
        self,
        bm25: Retriever,
        dense: Retriever,
        method: str = fusion.DEFAULT_METHOD,
        *,
        rrf_k: int = fusion.RRF_K,
        weights: Optional[Mapping[str, float]] = None,
        depth: int = fusion.DEPTH,
        groups: Optional[Callable[[Sequence[str]], Mapping[str, str]]] = None,
        norms: Optional[Mapping[str, str]] = None,
        floor: bool = False,
        feedback: float = fusion.FEEDBACK,
        related: Optional[Callable[[], Optional[Related]]] = None,
    ) -> None:
        if method not in fusion.METHODS:
            raise UsageError(
                f"unknown fusion method {method!r}", f"use one of: {', '.join(fusion.METHODS)}"
            )
        self.bm25 = bm25
        self.dense = dense
        self.method = method
        self.rrf_k = rrf_k
        self.weights = dict(weights if weights is not None else fusion.DEFAULT_WEIGHTS)
        self.depth = depth
        self.groups = groups
        self.norms = dict(norms if norms is not None else fusion.DEFAULT_NORMS)
        self.floor = floor
        self.feedback = feedback
        self.related = related

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Sequence[str]] = None,
        keywords: Sequence[str] = (),
    ) -> Retrieved:
        depth = max(k, self.depth)
        dense = self.dense
        vector: Optional[List[float]] = None
        skipped: List[str] = []
        # The dense half first: a local model brings numpy, and BM25 then ranks with it
        # (`index/vectorized.py`: the same hits, faster).
        try:
            if self.feedback and isinstance(dense, DenseRetriever):
                semantic, vector = dense.vector_query(text, depth, kind, taps, keywords)
            else:
                semantic = dense.query(text, k=depth, kind=kind, taps=taps, keywords=keywords)
        except BoostError as exc:
            skipped.append(f"dense skipped: {exc}")
            semantic = Retrieved([])
        lexical = self.bm25.query(text, k=depth, kind=kind, taps=taps, keywords=keywords)
        notes = [*lexical.notes, *skipped, *semantic.notes]
        if isinstance(dense, DenseRetriever) and (not lexical.hits or dense.has_words is None):
            # No word of the query is in the index: what the vectors find must reach the
            # floor (a nonsense query finds nothing; docs/dense.md, "A floor").
            semantic = Retrieved(above(semantic.hits, dense.min_similarity))
        hits = self._fuse(lexical.hits, semantic.hits, k)
        if vector is not None and hits and isinstance(dense, DenseRetriever):
            # Pseudo-relevance feedback: search the vectors again from the query moved
            # towards the file this fusion ranked first, and fuse again (docs/dense.md).
            try:
                found = dense.vector_of(hits[0], vector)
                if found is not None:
                    moved = fusion.feedback_vector(vector, found, self.feedback)
                    again = dense.by_vector(moved, depth, kind, taps)
                    if dense.has_words is None:  # a floor the user set holds here too
                        again = Retrieved(above(again.hits, dense.min_similarity))
                    first = lexical
                    if not keywords:
                        lexical = self._widened(text, again.hits, depth, kind, taps, lexical)
                    hits = self._fuse(lexical.hits, again.hits, k)
                    # --explain's ranks: each engine's for the user's words, then the
                    # second searches' under their own names (not "dense #1" for a file
                    # the words alone rank 30th).
                    shown = {
                        "bm25": first.hits,
                        "dense": self._grouped(semantic.hits),
                        "feedback": self._grouped(again.hits),
                    }
                    if lexical is not first:
                        shown["widened"] = lexical.hits
                    hits = fusion.true_ranks(hits, shown)
            except BoostError as exc:
                notes.append(f"dense feedback skipped: {exc}")
        return Retrieved(hits, tuple(notes), related=lexical.related)

    def _widened(
        self,
        text: str,
        nearest: Sequence[Hit],
        depth: int,
        kind: Optional[str],
        taps: Optional[Sequence[str]],
        lexical: Retrieved,
    ) -> Retrieved:
        """BM25 asked again, widened by the terms the names and descriptions of the files
        nearest in meaning share (`Related.feedback`; docs/dense.md): the vocabulary the
        user's words lacked, where the vectors found it. ``lexical`` when there is no
        table, no BM25 index to ask or nothing to add."""
        table = self.related() if self.related is not None else None
        if table is None or not isinstance(self.bm25, BM25Retriever):
            return lexical
        docs = [
            (h.score, tokenize(f"{h.entry.name} {h.entry.description}"))
            for h in nearest[: related.FEEDBACK_DOCS]
        ]
        task = query_weights(text)
        extra = table.feedback(docs, task)
        if not extra:
            return lexical
        return self.bm25.widened(task, extra, k=depth, kind=kind, taps=taps)

    def _fuse(self, lexical: List[Hit], semantic: List[Hit], k: int) -> List[Hit]:
        per_engine = {"bm25": lexical, "dense": self._grouped(semantic)}
        return fusion.fuse(
            per_engine,
            k,
            self.method,
            rrf_k=self.rrf_k,
            weights=self.weights,
            depth=self.depth,
            norms=self.norms,
            floor=self.floor,
        )

    def _grouped(self, hits: List[Hit]) -> List[Hit]:
        """``hits`` with the index's group of each file whose hash the index knows."""
        hashes = [h.content_hash for h in hits if h.content_hash and h.group is None]
        if self.groups is None or not hashes:
            return hits
        known = self.groups(hashes)
        out = []
        for h in hits:
            group = known.get(h.content_hash) if h.content_hash and h.group is None else None
            out.append(replace(h, group=group) if group else h)
        return out


# --------------------------------------------------------------------------- the choice


class Engines:
    """What one process keeps open between searches: the index reader (it re-opens itself
    when a build replaces the index) and the dense index (its flat vectors stay warm).
    ``one_shot``: made for one search and dropped (a CLI search), so an in-process
    embedding model loads for a fast start rather than fast repeated queries."""

    def __init__(self, one_shot: bool = False) -> None:
        self.one_shot = one_shot
        self._reader: Optional[index.IndexReader] = None
        self._dense: Dict[Tuple[str, Any], DenseIndex] = {}
        self._related: Tuple[Any, Optional[Related]] = (None, None)

    def index_reader(self) -> Optional[index.IndexReader]:
        """The index under `paths.index_dir()`, or None when there is none yet; raises
        IndexUnavailable (with the fix) when it is damaged or of another format."""
        root = paths.index_dir()
        last = self._reader
        if last is not None and last.root == root and last.manifest:
            return last
        reader = index.open_index(root)
        if last is not None:
            last.close()
        self._reader = reader
        return reader

    def related_terms(self, reader: index.IndexReader) -> Optional[Related]:
        """The related-terms table built for the index ``reader`` has open now (None: no
        table, a damaged one, or one of another index: a query is then not widened). Read
        once, and again when the file or the index changed (one ``stat`` a query)."""
        path = paths.related_path()
        try:
            st = path.stat()
        except OSError:
            return None
        key = related.corpus_key(reader.manifest.get("segments", {}))
        sig = (str(path), st.st_mtime_ns, st.st_size, st.st_ino, key)
        if self._related[0] != sig:
            try:
                data: Optional[bytes] = path.read_bytes()
            except OSError:
                data = None
            self._related = (sig, related.load(data, key))
        return self._related[1]

    def dense_index(self) -> DenseIndex:
        """The dense index for the configured embedder and `paths.vectors_path()`."""
        from boost_cli.core import dense, embed

        embedder = embed.resolve_config(config.load(), os.environ)
        key = (str(paths.vectors_path()), embedder)
        found = self._dense.get(key)
        if found is None:
            self._dense.clear()  # one home and one embedder per process is the norm
            found = self._dense[key] = dense.DenseIndex(
                embedder, path=paths.vectors_path(), one_shot=self.one_shot
            )
        return found


@dataclass
class RetrieverChoice:
    """The engine `get_retriever` picked, why, and what it knows about its index."""

    retriever: Retriever
    notes: List[str] = field(default_factory=list)
    info: Dict[str, Any] = field(default_factory=dict)


def get_retriever(
    engine: Optional[str] = None,
    *,
    current: Optional[Mapping[str, str]] = None,
    snapshots: Optional[Callable[[], Sequence[TapSnapshot]]] = None,
    engines: Optional[Engines] = None,
    min_similarity: Optional[float] = None,
) -> RetrieverChoice:
    """The best ready engine (hybrid → bm25 → lexical), or the one asked for.

    ``current`` maps each tapped registry to its commit (for the staleness note; None:
    not checked); ``snapshots`` gives the taps' entries when the lexical engine needs
    them. Auto mode degrades quietly and records the reason in ``notes``; an explicit
    ``engine`` that is not ready raises with the fix. Without ``engines``, the engines
    opened serve this one search (`Engines.one_shot`).
    """
    if engine is not None and engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", f"use one of: {', '.join(ENGINES)}")
    engines = engines or Engines(one_shot=True)

    def lexical() -> Retriever:
        return LexicalRetriever(snapshots() if snapshots is not None else [])

    if engine == "lexical":
        return RetrieverChoice(lexical(), [], {"engine": "lexical"})
    notes: List[str] = []
    bm25: Optional[BM25Retriever] = None
    info: Dict[str, Any] = {}
    try:
        reader = engines.index_reader()
    except IndexUnavailable as exc:
        if engine in ("bm25", "hybrid"):
            raise
        notes.append(f"search index unusable ({exc.message}) — {exc.fix or REINDEX}")
    else:
        if reader is not None:
            bm25 = BM25Retriever(reader, partial(engines.related_terms, reader))
            info = _index_info(reader, current, notes)
    if engine in ("dense", "hybrid") or (engine is None and bm25 is not None):
        dense_choice = _dense(engine, bm25, engines, notes, current, min_similarity)
        if dense_choice is not None:
            dense_choice.info.update(info)
            return dense_choice
    if bm25 is not None:
        return RetrieverChoice(bm25, notes, info)
    if engine == "bm25":
        raise IndexUnavailable("no search index yet", REINDEX)
    if not notes:
        notes.append(
            "no search index yet, using name/description matching — run 'boost reindex' for full-content ranking"
        )
    return RetrieverChoice(lexical(), notes, {"engine": "lexical"})


def _index_info(
    reader: index.IndexReader, current: Optional[Mapping[str, str]], notes: List[str]
) -> Dict[str, Any]:
    commits = dict(reader.commits)
    stale = stale_taps(current, commits) if current is not None else []
    if stale:
        notes.append(stale_note("the search index", stale, REINDEX))
    return {
        "engine": "bm25",
        "generated": reader.generated,
        "commits": commits,
        "stale_taps": stale,
        "stats": dict(reader.stats),
    }


def _dense(
    engine: Optional[str],
    bm25: Optional[BM25Retriever],
    engines: Engines,
    notes: List[str],
    current: Optional[Mapping[str, str]] = None,
    min_similarity: Optional[float] = None,
) -> Optional[RetrieverChoice]:
    """Hybrid/dense when the dense store is ready; None (auto) or an error (explicit) otherwise.
    A ready store that misses taps of ``current`` (or holds older commits) is used as it
    is, and named in ``notes``."""
    if engine is None and not paths.vectors_path().exists():
        return None  # no dense store: don't pay for importing the embedding stack
    index = engines.dense_index()
    status = index.status()
    if not status.ready:
        if engine is not None:
            raise ProviderError(f"dense retrieval is not ready: {status.reason}", status.fix)
        if status.exists:
            notes.append(f"dense retrieval skipped: {status.reason}")
        return None
    if status.info.get("read_only"):
        notes.append(READ_ONLY_NOTE.format(path=paths.vectors_path()))
    stored: Mapping[str, str] = status.info.get("taps") or {}
    fresh: Optional[List[str]] = None
    behind: List[str] = []
    if current is not None:
        # Only vectors of the commit now tapped answer; a tap the store lacks at its commit
        # is named, and the hybrid leaves a query that covers it to BM25 (`DenseRetriever`).
        fresh = sorted(n for n, c in stored.items() if current.get(n) == c)
        behind = sorted(n for n, c in current.items() if stored.get(n) != c)
        if len(fresh) == len(stored):
            fresh = None  # every stored tap answers: no filter to pay for
    if behind and engine == "dense":
        notes.append(stale_note("the vector store", behind, REINDEX_DENSE))
    rank = bm25.reader.origin if bm25 is not None else None
    from boost_cli.core import embed  # loaded already: the dense index needs it

    floor = embed.local.similarity_floor(index.config) if min_similarity is None else min_similarity
    floor = floor or None  # 0 shows every hit
    if engine == "dense":
        words = None
        if bm25 is not None and min_similarity is None:  # the measured floor: gated
            lexical_half = bm25

            def words(text: str, kind: Optional[str], taps: Optional[Sequence[str]]) -> bool:
                return bool(lexical_half.query(text, k=1, kind=kind, taps=taps).hits)

        dense_r = DenseRetriever(
            index, fresh, behind, rank=rank, min_similarity=floor, has_words=words
        )
        return RetrieverChoice(dense_r, notes, {"dense": status.info})
    if bm25 is None:
        if engine == "hybrid":
            raise IndexUnavailable("hybrid search needs the BM25 index too", REINDEX)
        return None
    gate = None if min_similarity is not None else (lambda *_: True)  # hybrid: BM25's own
    dense_r = DenseRetriever(
        index, fresh, behind, strict=True, rank=rank, min_similarity=floor, has_words=gate
    )
    # The hybrid fuses the task's own words with the vectors: the plain path's related-
    # terms widening is off there (it stands in for meaning where there are no vectors);
    # the table serves the hybrid's own widening from the nearest skills (docs/dense.md).
    hybrid = HybridRetriever(
        without_related(bm25), dense_r, groups=bm25.reader.group_keys, related=bm25.related
    )
    return RetrieverChoice(hybrid, notes, {"dense": status.info})
