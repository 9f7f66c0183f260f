"""GitHub discovery through `gh`: grouping (pure) and the subprocess edge, via tests/fakebin/gh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

from boost_cli.core.discover import (
    INSTALL_HINT,
    DiscoveredRepo,
    GhError,
    GhMissingError,
    discover_github,
    first_line,
    gh_command,
    group_hits,
    parse_gh_json,
)
from boost_cli.core.errors import BoostError, UsageError

TESTS = Path(__file__).resolve().parent
FAKEBIN = TESTS / "fakebin"
FIXTURES = TESTS / "fixtures" / "gh"


@pytest.fixture
def fake_gh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Put the fake gh first on PATH; returns the file it records its argv in."""
    monkeypatch.setenv("PATH", f"{FAKEBIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "home"))
    for var in ("FAKE_GH_MODE", "FAKE_GH_FIXTURE"):
        monkeypatch.delenv(var, raising=False)
    argv_file = tmp_path / "gh-argv.json"
    monkeypatch.setenv("FAKE_GH_ARGV", str(argv_file))
    return argv_file


def fixture(name: str) -> List[Dict[str, Any]]:
    data = json.loads((FIXTURES / name).read_text())
    assert isinstance(data, list)
    return data


# --------------------------------------------------------------------------- pure parts


def test_gh_command_is_an_argument_list_with_words_after_double_dash() -> None:
    assert gh_command("/usr/bin/gh", ["react", "-testing"], 50) == [
        "/usr/bin/gh", "search", "code", "--filename", "SKILL.md", "--limit", "50",
        "--json", "repository,path,url", "--", "react", "-testing",
    ]  # fmt: skip


def test_group_hits_ranks_repositories_by_skill_files() -> None:
    repos = group_hits(fixture("search_code_skills.json"), limit=10)
    assert [(r.repo, r.hits) for r in repos] == [
        ("acme/agent-skills", 4),
        ("jdoe/claude-skills", 2),
        ("webtools/skillbook", 1),  # ties keep GitHub's relevance order
        ("orgx/frontend-rules", 1),
    ]
    assert repos[0] == DiscoveredRepo(
        repo="acme/agent-skills",
        url="https://github.com/acme/agent-skills",
        hits=4,
        paths=(
            "skills/react-testing/SKILL.md",
            "skills/playwright-e2e/SKILL.md",
            "skills/vitest/SKILL.md",
        ),
    )
    assert repos[2].paths == ("SKILL.md",)


def test_group_hits_applies_the_limit_after_ranking() -> None:
    assert [r.repo for r in group_hits(fixture("search_code_skills.json"), limit=2)] == [
        "acme/agent-skills",
        "jdoe/claude-skills",
    ]


def test_group_hits_skips_odd_items_and_counts_a_path_once() -> None:
    repos = group_hits(fixture("search_code_odd.json"), limit=10)
    assert [r.to_dict() for r in repos] == [
        {
            "repo": "dup/repo",
            "url": "https://github.com/dup/repo",
            "hits": 2,
            "paths": ["a/SKILL.md", "b/SKILL.md"],
        },
        {
            "repo": "legacy/shape",
            "url": "https://github.com/legacy/shape",  # non-https URL replaced
            "hits": 1,
            "paths": ["a/SKILL.md"],
        },
    ]


def test_parse_gh_json_refuses_non_lists_and_names_gh_stderr() -> None:
    with pytest.raises(GhError) as info:
        parse_gh_json("<html>", "warning: proxy said no\nmore")
    assert str(info.value) == (
        "'gh search code' printed output boost cannot read (not JSON: Expecting value: line 1 "
        "column 1 (char 0)); gh said: warning: proxy said no — retry; if it keeps happening, "
        "update gh from https://cli.github.com"
    )
    with pytest.raises(GhError, match=r"expected a JSON list, got dict"):
        parse_gh_json('{"message": "x"}')
    assert parse_gh_json('[1, {"path": "SKILL.md"}]') == [{"path": "SKILL.md"}]


def test_first_line() -> None:
    assert first_line("\n  \n  boom  \nrest") == "boom"
    assert first_line("") == ""


# --------------------------------------------------------------------------- through gh


def test_discover_runs_gh_and_groups_its_answer(fake_gh: Path, tmp_path: Path) -> None:
    repos = discover_github("react   testing", limit=3)
    assert [r.repo for r in repos] == [
        "acme/agent-skills",
        "jdoe/claude-skills",
        "webtools/skillbook",
    ]
    argv = json.loads(fake_gh.read_text())
    assert argv == [
        "search", "code", "--filename", "SKILL.md", "--limit", "100",
        "--json", "repository,path,url", "--", "react", "testing",
    ]  # fmt: skip
    assert not (tmp_path / "home").exists()  # discovery never writes a cache


def test_discover_passes_max_hits_as_limit(fake_gh: Path) -> None:
    repos = discover_github("react", max_hits=3)
    assert json.loads(fake_gh.read_text())[5] == "3"
    assert [(r.repo, r.hits) for r in repos] == [
        ("acme/agent-skills", 2),
        ("jdoe/claude-skills", 1),
    ]


def test_discover_with_no_results(fake_gh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GH_FIXTURE", "search_code_empty.json")
    assert discover_github("nothing matches this") == []


def test_gh_missing_names_the_install_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GhMissingError) as info:
        discover_github("react")
    assert isinstance(info.value, BoostError)
    assert str(info.value) == (
        "the GitHub CLI (gh) is not on PATH — install the GitHub CLI from https://cli.github.com "
        "and run 'gh auth login'"
    )
    assert info.value.fix == INSTALL_HINT


def test_an_explicit_gh_path_that_is_not_executable(tmp_path: Path) -> None:
    not_exec = tmp_path / "gh"
    not_exec.write_text("#!/bin/sh\n")
    with pytest.raises(GhMissingError, match="is not on PATH"):
        discover_github("react", gh=str(not_exec))


def test_gh_failure_carries_its_first_stderr_line_and_a_retry_hint(
    fake_gh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GH_MODE", "fail")
    with pytest.raises(GhError) as info:
        discover_github("react")
    assert str(info.value) == (
        "'gh search code' failed (exit 1): HTTP 403: API rate limit exceeded for user ID 1. "
        "(https://api.github.com/search/code) — retry in a minute (GitHub allows 10 code searches "
        "a minute); 'gh auth status' shows whether gh is logged in"
    )


def test_gh_not_logged_in_says_to_log_in(fake_gh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GH_MODE", "auth")
    with pytest.raises(GhError) as info:
        discover_github("react")
    assert str(info.value) == (
        "'gh search code' failed (exit 4): To get started with GitHub CLI, please run:  "
        "gh auth login — run 'gh auth login', then retry"
    )


def test_gh_timeout(fake_gh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GH_MODE", "hang")
    with pytest.raises(GhError) as info:
        discover_github("react", timeout=0.5)
    assert str(info.value) == (
        "'gh search code' did not answer within 0.5s — check your network, then retry"
    )


@pytest.mark.parametrize(
    ("mode", "fixture_name", "fragment"),
    [
        (
            "garbage",
            None,
            "(not JSON: Expecting value: line 1 column 1 (char 0)); gh said: warning: ",
        ),
        ("ok", "search_code_object.json", "(expected a JSON list, got dict)"),
    ],
)
def test_unreadable_gh_output(
    fake_gh: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    fixture_name: Any,
    fragment: str,
) -> None:
    monkeypatch.setenv("FAKE_GH_MODE", mode)
    if fixture_name:
        monkeypatch.setenv("FAKE_GH_FIXTURE", fixture_name)
    with pytest.raises(GhError) as info:
        discover_github("react")
    assert fragment in str(info.value)
    assert str(info.value).endswith("update gh from https://cli.github.com")


@pytest.mark.parametrize(("query", "limit"), [("", 10), ("   ", 10), ("react", 0)])
def test_bad_arguments_are_usage_errors(fake_gh: Path, query: str, limit: int) -> None:
    with pytest.raises(UsageError):
        discover_github(query, limit=limit)
    assert not fake_gh.exists()  # gh was never run


def test_gh_that_cannot_start_is_reported_as_missing(tmp_path: Path) -> None:
    broken = tmp_path / "gh"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    with pytest.raises(GhMissingError) as info:
        discover_github("react", gh=str(broken))
    assert str(info.value) == f"cannot run {broken}: No such file or directory — {INSTALL_HINT}"
