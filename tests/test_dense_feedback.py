"""The hybrid's pseudo-relevance feedback: after the first fusion, the dense half searches
again from the query vector moved towards the top file's vector, and the two are fused
again (docs/dense.md, "Pseudo-relevance feedback").

The math and the hybrid's steps against a fake vector index; `DenseIndex.entry_vector`
on a real store; and the real CLI on an isolated BOOST_HOME with the offline `hash`
provider, where a skill that shares no word with the query but most of its words with the
best hit is lifted by the second search.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from boost_cli.core import fusion, retrieval
from boost_cli.core.dense import DenseIndex, build_dense
from boost_cli.core.embed import EmbedConfig
from boost_cli.core.errors import ProviderError
from boost_cli.core.models import Entry, Hit, TapSnapshot
from tests.helpers import make_repo, run_boost, skill

HASH_ENV = {"BOOST_EMBED_PROVIDER": "hash"}


def test_feedback_vector_is_the_renormalised_rocchio_sum() -> None:
    moved = fusion.feedback_vector([1.0, 0.0], [0.0, 1.0], 0.5)
    # (1, 0.5) / |(1, 0.5)|
    assert moved == pytest.approx([1 / math.sqrt(1.25), 0.5 / math.sqrt(1.25)])
    assert math.fsum(x * x for x in moved) == pytest.approx(1.0)
    assert fusion.feedback_vector([0.6, 0.8], [0.6, 0.8], 1.0) == pytest.approx([0.6, 0.8])
    # A sum of zero leaves the query as it was; beta 0 is the query itself.
    assert fusion.feedback_vector([1.0, 0.0], [-1.0, 0.0], 1.0) == [1.0, 0.0]
    assert fusion.feedback_vector([0.6, 0.8], [1.0, 0.0], 0.0) == pytest.approx([0.6, 0.8])
    with pytest.raises(ValueError, match="2 and 3 dimensions"):
        fusion.feedback_vector([1.0, 0.0], [1.0, 0.0, 0.0])


def entry(name: str, tap: str = "t") -> Entry:
    return Entry(name=name, kind="skill", description=name, tap=tap, rel_dir=name, path=name)


class FakeIndex:
    """A `DenseIndex` stand-in: 2-d vectors, nearest by dot product."""

    def __init__(self, vectors: Dict[str, List[float]], query: List[float]) -> None:
        self.vectors = vectors
        self.query_vector = query
        self.embedded: List[str] = []
        self.searched: List[List[float]] = []
        self.fail_lookup = False

    def embed_query(self, text: str) -> List[float]:
        self.embedded.append(text)
        return list(self.query_vector)

    def query(
        self, text: str, k: int = 60, kind: Any = None, taps: Any = None, *, rank: Any = None
    ) -> List[Hit]:
        return self.search_vector(self.embed_query(text), k, kind, taps, rank=rank)

    def search_vector(
        self,
        vector: Sequence[float],
        k: int = 60,
        kind: Any = None,
        taps: Any = None,
        *,
        rank: Any = None,
    ) -> List[Hit]:
        self.searched.append(list(vector))
        scored = sorted(
            ((sum(a * b for a, b in zip(v, vector)), n) for n, v in self.vectors.items()),
            key=lambda x: (-x[0], x[1]),
        )
        return [
            Hit(entry(n), s, content_hash=f"h-{n}", ranks={"dense": i + 1})
            for i, (s, n) in enumerate(scored[:k])
        ]

    def entry_vector(
        self, entry_id: str, content_hash: Optional[str], near: Sequence[float]
    ) -> Optional[List[float]]:
        if self.fail_lookup:
            raise ProviderError("the store went away", "run it again")
        return self.vectors.get(entry_id.split(":", 1)[1])


class FakeBM25:
    name = "bm25"

    def __init__(self, hits: List[Hit]) -> None:
        self.hits = hits

    def query(
        self, text: str, k: int = 60, kind: Any = None, taps: Any = None, keywords: Any = ()
    ) -> retrieval.Retrieved:
        return retrieval.Retrieved(self.hits[:k])


def setup() -> Any:
    # The query points at x; "top" is BM25's clear best and near x; "twin" is top's
    # neighbour but far from the query; "near-q" is a little closer to the query than twin.
    vectors = {
        "top": [0.8, 0.6],
        "twin": [0.45, 0.893],
        "near-q": [0.6, -0.8],
        "far": [-1.0, 0.0],
    }
    index = FakeIndex(vectors, [1.0, 0.0])
    bm25 = FakeBM25([Hit(entry("top"), 10.0, content_hash="h-top", ranks={"bm25": 1})])
    return index, bm25


def names(hits: List[Hit]) -> List[str]:
    return [h.entry.name for h in hits]


def test_the_hybrid_searches_again_from_the_moved_vector() -> None:
    index, bm25 = setup()
    dense = retrieval.DenseRetriever(index)  # type: ignore[arg-type]
    plain = retrieval.HybridRetriever(bm25, dense, feedback=0.0).query("q", k=4)
    assert names(plain.hits) == ["top", "near-q", "twin", "far"]
    assert index.embedded == ["q"] and len(index.searched) == 1

    index.embedded, index.searched = [], []
    got = retrieval.HybridRetriever(bm25, dense).query("q", k=4)
    # Embedded once, searched twice: the second time from q + 0.5 * top, renormalised.
    assert index.embedded == ["q"] and len(index.searched) == 2
    assert index.searched[1] == pytest.approx(fusion.feedback_vector([1.0, 0.0], [0.8, 0.6]))
    assert names(got.hits) == ["top", "twin", "near-q", "far"] and got.notes == ()
    # --explain's ranks: twin is 3rd for the words (as the dense engine alone ranks it),
    # 2nd in the search from the moved vector.
    assert got.hits[1].ranks == {"dense": 3, "feedback": 2}


def test_feedback_is_skipped_with_a_note_and_the_first_fusion_kept() -> None:
    index, bm25 = setup()
    dense = retrieval.DenseRetriever(index)  # type: ignore[arg-type]
    hybrid = retrieval.HybridRetriever(bm25, dense)
    index.fail_lookup = True
    got = hybrid.query("q", k=4)
    assert names(got.hits) == ["top", "near-q", "twin", "far"]
    assert got.notes == ("dense feedback skipped: the store went away — run it again",)
    # No vector for the top file (not in the store): no second search, no note.
    index.fail_lookup = False
    index.vectors.pop("top")
    index.searched = []
    assert names(hybrid.query("q", k=3).hits) == ["top", "near-q", "twin"]
    assert len(index.searched) == 1


def test_no_second_search_for_a_scope_without_fresh_taps_or_an_empty_query() -> None:
    index, bm25 = setup()
    dense = retrieval.DenseRetriever(index, fresh=[])  # type: ignore[arg-type]
    got = retrieval.HybridRetriever(bm25, dense).query("q", k=3)
    assert names(got.hits) == ["top"] and index.embedded == [] and index.searched == []
    assert dense.vector_query("   ") == (retrieval.Retrieved([]), None)
    # A hit of a tap whose vectors are not fresh gives no feedback vector.
    assert dense.vector_of(Hit(entry("top"), 1.0), [1.0, 0.0]) is None


# --------------------------------------------------------------------------- the store


def test_entry_vector_reads_the_stored_vector_of_an_entry_or_of_its_file(
    repo_factory: Any, tmp_path: Path
) -> None:
    body = "Collect merged pull requests and write the changelog."
    repo = repo_factory(
        "notes",
        {
            "skills/a/SKILL.md": skill("release-notes", "Write release notes", body),
            "skills/b/SKILL.md": skill("pasta-cook", "Cook pasta al dente", "Boil water."),
        },
    )
    from boost_cli.core.catalog import scan_tap

    entries = list(scan_tap("notes", repo).entries)
    snap = TapSnapshot("notes", "c1", repo, entries)
    config = EmbedConfig("hash", "hash-v1")
    store = tmp_path / "vectors.sqlite"
    build_dense([snap], config=config, path=store, backend="flat")
    index = DenseIndex(config, path=store, backend="flat")
    q = index.embed_query("release notes")
    by_id = {e.name: e for e in entries}
    notes = by_id["release-notes"]
    hit = index.search_vector(q, k=1)[0]
    assert hit.entry.id == notes.id
    got = index.entry_vector(notes.id, None, q)
    assert got is not None and len(got) == len(q)
    # The stored vector is the one the search scored: its dot product is the hit's score.
    assert sum(a * b for a, b in zip(got, q)) == pytest.approx(hit.score, abs=1e-5)
    # Another entry id (a copy of the file under another name): found by the file's hash.
    assert index.entry_vector("elsewhere:x", hit.content_hash, q) == got
    assert index.entry_vector("elsewhere:x", None, q) is None
    assert index.entry_vector("elsewhere:x", "0" * 64, q) is None


# --------------------------------------------------------------------------- the CLI


def test_the_cli_lifts_the_best_hits_neighbour_that_shares_no_word_with_the_query(
    tmp_path: Path,
) -> None:
    repo = make_repo(
        tmp_path / "src",
        {
            "skills/a/SKILL.md": skill(
                "zebra-notes",
                "Zebra stripes pattern guide",
                "Zebra stripes pattern guide for artists.",
            ),
            # No word of the query; most words of the best hit.
            "skills/b/SKILL.md": skill(
                "stripe-artist",
                "Stripes pattern guide for artists",
                "Stripes pattern guide for artists.",
            ),
            # A few letters of the query (the hash embedder's trigrams), nothing else.
            "skills/c/SKILL.md": skill(
                "zebu-farm", "Zebu cattle farming", "Zebu herds and pastures."
            ),
            "skills/d/SKILL.md": skill(
                "pasta-cook", "Cook pasta al dente", "Boil water, add salt."
            ),
            "skills/e/SKILL.md": skill("garden-care", "Water the garden plants", "Prune roses."),
        },
    )
    home = tmp_path / "home"
    for args in (["tap", str(repo), "--name", "t"], ["reindex", "--dense"]):
        proc = run_boost(args, home, HASH_ENV)
        assert proc.returncode == 0, proc.stderr

    def ids(*extra: str) -> List[str]:
        proc = run_boost(
            ["search", "zebra", "--json", "--no-llm", "-n", "5", *extra], home, HASH_ENV
        )
        assert proc.returncode == 0, proc.stderr
        return [h["id"] for h in json.loads(proc.stdout)]

    hybrid = ids()
    assert hybrid[:3] == ["t:zebra-notes", "t:stripe-artist", "t:zebu-farm"]
    # Dense alone has no second search: the neighbour stays below the trigram match.
    dense = ids("--engine", "dense")
    assert dense.index("t:zebu-farm") < dense.index("t:stripe-artist")
    # --explain reports each hit's true rank in the dense engine's own list (issue 33
    # item 3: it said "dense #1" for a file the dense engine did not rank in its top 5).
    proc = run_boost(["search", "zebra", "--json", "--no-llm", "-n", "5"], home, HASH_ENV)
    for hit in json.loads(proc.stdout):
        assert hit["ranks"].get("dense") == dense.index(hit["id"]) + 1, hit
    proc = run_boost(["search", "zebra", "--explain", "--no-llm", "-n", "5"], home, HASH_ENV)
    assert f"dense #{dense.index('t:stripe-artist') + 1}, feedback #" in proc.stdout
