"""The hybrid widens BM25 from the skills nearest in meaning: after the feedback search,
the names and descriptions of the dense half's first files give a few low-weight terms
(`Related.feedback`, relevance-model feedback over those fields), and BM25 is asked again
with them (docs/dense.md, "BM25 widened from the nearest skills").

The math on a hand-made table, and the real CLI on an isolated BOOST_HOME with the offline
`hash` provider: a skill that shares no word with the task, only a word the nearest skills'
descriptions share, gets a BM25 rank in hybrid search and none in BM25 alone."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List

import pytest

from boost_cli.core.related import build
from tests.helpers import make_repo, run_boost, skill

HASH_ENV = {"BOOST_EMBED_PROVIDER": "hash"}


def _table() -> Any:
    rows = [["semolina", "pasta", "u1"], ["semolina", "flour", "u2"], ["flour", "mill", "u3"]]
    rows += [["mill", "grain", f"v{i}"] for i in range(2)]
    rows += [[f"x{i}", f"y{i}"] for i in range(40)]
    return build(rows, min_df=2, max_df_share=0.5, min_cooc=1)


def _idf(rel: Any, term: str) -> float:
    return math.log(1 + rel.n / rel.df[list(rel.terms).index(term)])


QUERY = {"cook": 1.0, "tasti": 1.0, "pasta": 1.0, "dinner": 1.0, "tonight": 0.25}


def test_feedback_scores_are_the_weighted_term_shares_times_idf() -> None:
    rel = _table()
    docs = [(0.9, ["pasta", "semolina", "flour", "zzz"]), (0.5, ["mill", "flour"])]
    out = rel.feedback(docs, QUERY, terms=5, weight=1.0)
    # pasta: in the query; zzz: not in the table's vocabulary. Neither is ever added.
    scores = {
        "semolina": 0.9 / 4 * _idf(rel, "semolina"),
        "flour": (0.9 / 4 + 0.5 / 2) * _idf(rel, "flour"),
        "mill": 0.5 / 2 * _idf(rel, "mill"),
    }
    top = max(scores.values())
    assert out == pytest.approx({t: s / top for t, s in scores.items()})
    # The best few, the best at ``weight``.
    two = rel.feedback(docs, QUERY, terms=2, weight=0.2)
    assert list(two) == ["flour", "semolina"] and two["flour"] == pytest.approx(0.2)


def test_feedback_leaves_short_queries_and_empty_feedback_alone() -> None:
    rel = _table()
    docs = [(0.9, ["semolina", "flour"])]
    # Three content terms (the softened filler does not count): a short query, as it is.
    short = {"tasti": 1.0, "pasta": 1.0, "dinner": 1.0, "tonight": 0.25}
    assert rel.feedback(docs, short) == {}
    assert rel.feedback(docs, short, min_terms=3)
    assert rel.feedback([], QUERY) == {}
    assert rel.feedback([(0.0, ["semolina"]), (0.7, [])], QUERY) == {}
    assert rel.feedback(docs, QUERY, terms=0) == {}


# --------------------------------------------------------------------------- the CLI

TASK = "cook a tasty pasta dinner tonight"


def _registry(root: Path) -> Path:
    files = {
        "skills/pasta-night/SKILL.md": skill(
            "pasta-night", "Cook a tasty pasta dinner tonight with semolina dough."
        ),
        "skills/pasta-fresh/SKILL.md": skill(
            "pasta-fresh", "Fresh pasta for a tasty dinner, from semolina and eggs."
        ),
        # None of the task's words; only the word the two nearest skills share.
        "skills/durum-mill/SKILL.md": skill("durum-mill", "Mill durum wheat into semolina."),
    }
    for i in range(150):  # so that "semolina" is rare (the vocabulary: 2 to 5 % of fields)
        files[f"skills/chore-{i}/SKILL.md"] = skill(f"chore-{i}", f"Handles routine chore q{i}x.")
    return make_repo(root, files)


def _search(home: Path, *args: str) -> List[Dict[str, Any]]:
    proc = run_boost(["search", *args, "--json", "--no-llm", "-n", "20"], home, HASH_ENV)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _ranks(hits: List[Dict[str, Any]], hit_id: str) -> Dict[str, int]:
    return next((h["ranks"] for h in hits if h["id"] == hit_id), {})


def test_the_hybrid_finds_a_skill_by_the_nearest_skills_words(tmp_path: Path) -> None:
    repo = _registry(tmp_path / "src")
    home = tmp_path / "home"
    for args in (["tap", str(repo), "--name", "t"], ["reindex", "--dense"]):
        proc = run_boost(args, home, HASH_ENV)
        assert proc.returncode == 0, proc.stderr
    target = "t:durum-mill"
    # BM25 alone never sees it: it shares no term with the task.
    assert "bm25" not in _ranks(_search(home, TASK, "--engine", "bm25"), target)
    hybrid = _search(home, TASK)
    # Found by BM25 widened with the nearest skills' words (--explain: "widened #n").
    assert "widened" in _ranks(hybrid, target) and "bm25" not in _ranks(hybrid, target)
    explain = run_boost(["search", TASK, "--no-llm", "--explain"], home, HASH_ENV)
    assert explain.returncode == 0, explain.stderr
    assert "related terms (from the skills nearest in meaning): semolina" in explain.stdout
    # With the caller's keywords, or a short query, BM25 is not widened.
    with_keywords = _search(home, TASK, "--keywords", "noodles")
    assert not {"bm25", "widened"} & set(_ranks(with_keywords, target))
    assert not {"bm25", "widened"} & set(_ranks(_search(home, "tasty pasta dinner"), target))
