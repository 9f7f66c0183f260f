"""Folding shows the origin's copy (issue 20, item 5): of the copies of one item across taps,
the hit shows the one from the tap first in the origin order (`core/origin.py`), and the
aggregator's copy goes under ``also_in`` — in the CLI text, ``--json`` and MCP
``boost_search``, for byte-identical copies and for near-duplicates, on every engine that
folds. The aggregator's name sorts first, so the order boost used before (tap name) shows
the aggregator: these tests fail on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

from boost_cli.core import origin
from boost_cli.core.models import Entry
from tests.helpers import make_repo, run_boost, skill
from tests.test_mcp_server import McpProcess

TABLES = skill(
    "pdf-tables",
    "Extract tables from PDF files into CSV",
    "Open the PDF, find each table grid and write its cells as CSV rows.",
)
CHARTS = skill(
    "chart-maker",
    "Draw bar and line charts from spreadsheet columns",
    "Read the columns, choose the axis ranges, then draw the bars and lines with labels. "
    "Label the axes, add a legend, and export the chart as PNG and SVG files for reports.",
)
# The aggregator's copy of chart-maker: same name and description, a sentence added that
# makes it score higher than the origin's for the query below.
CHARTS_EDITED = CHARTS + "\nDraw bar charts from spreadsheet columns: mirrored here.\n"
OTHER = skill("yaml-lint", "Lint YAML config files", "Parse each YAML file and report errors.")


def _taps(base: Path) -> Dict[str, Path]:
    """The origin (2 skills), another origin (1), and an aggregator holding a byte copy of
    the origin's pdf-tables, an edited copy of its chart-maker, the other origin's
    yaml-lint, and two of its own."""
    return {
        "zz-origin": make_repo(
            base / "origin",
            {"skills/pdf-tables/SKILL.md": TABLES, "skills/chart-maker/SKILL.md": CHARTS},
        ),
        "mm-other": make_repo(base / "other", {"skills/yaml-lint/SKILL.md": OTHER}),
        "aa-mirror": make_repo(
            base / "mirror",
            {
                "all/pdf-tables/SKILL.md": TABLES,
                "all/chart-maker/SKILL.md": CHARTS_EDITED,
                "all/yaml-lint/SKILL.md": OTHER,
                "all/git-hooks/SKILL.md": skill("git-hooks", "Install git hooks", "Copy them."),
                "all/json-fmt/SKILL.md": skill("json-fmt", "Format JSON", "Indent it."),
            },
        ),
    }


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("origin")
    home = base / "home"
    for name, repo in _taps(base).items():
        r = run_boost(["tap", str(repo), "--name", name], home)
        assert r.returncode == 0, r.stderr
    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr
    return home


def _json_hits(home: Path, query: str, *extra: str) -> List[Dict[str, object]]:
    r = run_boost(["search", query, "--json", "--engine", "bm25", *extra], home)
    assert r.returncode == 0, r.stderr
    hits: List[Dict[str, object]] = json.loads(r.stdout)
    return hits


def test_ranks_put_the_smaller_tap_first_ties_by_name() -> None:
    assert origin.ranks({"big": 900, "small": 18, "b": 5, "a": 5}) == {
        "a": 0,
        "b": 1,
        "small": 2,
        "big": 3,
    }
    assert origin.ranks({}) == {}


def test_best_keeps_a_taps_order_and_knows_no_rank() -> None:
    taps = ["big", "small", "small", "unknown"]
    rank = {"small": 0, "big": 1}
    assert origin.best(taps, str, rank) == 1  # the first of the origin's copies
    assert origin.best(taps, str, None) == 0
    assert origin.best(["unknown", "big"], str, rank) == 1  # an unranked tap comes last
    assert origin.best(["only"], str, rank) == 0


def test_identical_copy_is_shown_from_the_origin_in_json_and_text(home: Path) -> None:
    hits = _json_hits(home, "extract tables from pdf into csv")
    top = hits[0]
    assert top["id"] == "zz-origin:pdf-tables"
    assert top["also_in"] == ["aa-mirror:pdf-tables"] and top["similar"] == []
    assert not any(str(h["id"]).startswith("aa-mirror:pdf-tables") for h in hits)
    r = run_boost(["search", "extract tables from pdf into csv", "--engine", "bm25"], home)
    assert r.returncode == 0, r.stderr
    first = r.stdout.split("\n 2.")[0]
    assert "zz-origin:pdf-tables" in first
    assert "same file also in 1 other place: aa-mirror:pdf-tables" in first


def test_near_duplicate_is_shown_from_the_origin_and_called_similar(home: Path) -> None:
    hits = _json_hits(home, "draw bar charts from spreadsheet columns")
    top = hits[0]
    assert top["id"] == "zz-origin:chart-maker"
    assert top["also_in"] == ["aa-mirror:chart-maker"]
    assert top["similar"] == ["aa-mirror:chart-maker"]
    # The passage that ranked it lies in the aggregator's edit only: not shown as the origin's.
    assert "mirrored" not in json.dumps(top)
    r = run_boost(["search", "draw bar charts from spreadsheet columns", "--engine", "bm25"], home)
    assert "similar copies in 1 other place: aa-mirror:chart-maker" in r.stdout


def test_the_aggregator_copy_is_shown_when_only_its_tap_is_searched(home: Path) -> None:
    hits = _json_hits(home, "extract tables from pdf into csv", "--tap", "aa-mirror")
    assert hits[0]["id"] == "aa-mirror:pdf-tables"


def test_ids_round_trip_to_show(home: Path) -> None:
    for query in ("extract tables from pdf into csv", "draw bar charts", "lint yaml"):
        for h in _json_hits(home, query):
            for name in [h["id"], *h["also_in"]]:  # type: ignore[list-item]
                r = run_boost(["show", str(name), "--json"], home)
                assert r.returncode == 0, (name, r.stderr)
                assert json.loads(r.stdout)["id"] == name


def test_mcp_search_shows_the_origin_copy(home: Path) -> None:
    server = McpProcess(home)
    try:
        server.initialize()
        result = server.call_result(
            "boost_search", {"query": "extract tables from pdf into csv", "limit": 3}
        )
        hits = result["structuredContent"]["results"]
        assert hits[0]["id"] == "zz-origin:pdf-tables"
        assert hits[0]["also_in"] == ["aa-mirror:pdf-tables"]
        text = result["content"][0]["text"]
        assert "zz-origin:pdf-tables" in text.split("\n2.")[0]
        assert server.close() == 0
    finally:
        server.kill()


def test_lexical_engine_shows_the_origin_copy_too(tmp_path: Path) -> None:
    """Without an index the lexical engine folds byte-identical copies: the origin order
    comes from the taps' entry counts."""
    base = tmp_path / "taps"
    home = tmp_path / "home"
    for name, repo in _taps(base).items():
        r = run_boost(["tap", str(repo), "--name", name], home)
        assert r.returncode == 0, r.stderr
    r = run_boost(["search", "pdf tables", "--json", "--engine", "lexical"], home)
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)[0]
    assert top["id"] == "zz-origin:pdf-tables" and top["also_in"] == ["aa-mirror:pdf-tables"]


def test_dense_hits_show_the_origin_copy() -> None:
    """The dense engine folds a file's copies from its vectors' order: the rank decides."""
    from boost_cli.core.dense import query as dense_query

    class Conn:
        def execute(self, sql: str, args: List[object]) -> List[tuple]:
            if "FROM items" in sql:
                return [(1, "aa-mirror:pdf-tables", "snip"), (2, "zz-origin:pdf-tables", "snip")]
            return [
                (
                    f"{tap}:pdf-tables",
                    json.dumps(Entry("pdf-tables", "skill", "d", tap, "x", "x/SKILL.md").to_dict()),
                    "sha",
                )
                for tap in ("aa-mirror", "zz-origin")
            ]

    nearest = [(1, 0.9), (2, 0.9)]
    plain = dense_query._hits(Conn(), nearest, 5)  # type: ignore[arg-type]
    assert plain[0].entry.tap == "aa-mirror"
    ranked = dense_query._hits(Conn(), nearest, 5, {"zz-origin": 0, "aa-mirror": 1})  # type: ignore[arg-type]
    assert ranked[0].entry.tap == "zz-origin"
    assert ranked[0].also_in == ("aa-mirror:pdf-tables",)
    assert ranked[0].score == plain[0].score
