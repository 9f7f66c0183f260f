"""boost's MCP tools in process: `Server(build_registry()).handle(...)` over real taps.

The subprocess tests in test_mcp_server.py prove the wire; these cover every branch of
the handlers in boost_cli/commands/mcp.py (and count toward coverage).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from boost_cli.commands import mcp as mcp_command
from boost_cli.commands.mcp import INSTRUCTIONS, build_registry
from boost_cli.core import index, llm, registry, search
from boost_cli.core.discover import INSTALL_HINT, RETRY_HINT
from boost_cli.core.mcp import Server
from tests.helpers import EXAMPLES, ROOT, commit_all, make_repo, skill

FAKEBIN = ROOT / "tests" / "fakebin"


class Session:
    """An initialized in-process MCP session."""

    def __init__(self, version: str = "2025-11-25") -> None:
        self.server = Server(build_registry(), instructions=INSTRUCTIONS)
        self._id = 0
        result = self.request("initialize", {"protocolVersion": version, "capabilities": {}})
        assert result["result"]["protocolVersion"] == version
        assert self.server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self._id += 1
        reply = self.server.handle(
            {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        )
        assert reply is not None and reply["id"] == self._id
        return reply

    def call(self, tool: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in reply, reply
        result: Dict[str, Any] = reply["result"]
        types = [c["type"] for c in result["content"]]
        assert types[:1] == ["text"] and set(types[1:]) <= {"resource_link"}
        return result


def text_of(result: Dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text


@pytest.fixture
def session() -> Session:
    return Session()


SYSTEM_PATH = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])


@pytest.fixture
def no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with git but no `claude`: 'auto' rerank finds no LLM."""
    monkeypatch.setenv("PATH", SYSTEM_PATH)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    dest = tmp_path / "example-registry"
    shutil.copytree(EXAMPLES, dest)
    return make_repo(dest)


@pytest.fixture
def tapped(origin: Path, no_llm: None) -> Path:
    """The example registry tapped as ``example``, not indexed yet."""
    registry.add(str(origin), name="example")
    return origin


@pytest.fixture
def indexed(tapped: Path) -> Path:
    index.build(registry.snapshots())
    return tapped


# --------------------------------------------------------------------------- registry


def test_tools_are_registered_in_order_with_object_schemas() -> None:
    reg = build_registry()
    assert reg.names() == [
        "boost_search",
        "boost_get_skill",
        "boost_list_taps",
        "boost_discover_github",
        "boost_install",
    ]
    for spec in reg.tools():
        d = spec.to_dict()
        assert d["inputSchema"]["type"] == "object" and d["description"]
    assert reg.tools()[0].output_schema is not None


def test_tools_list_through_the_server(session: Session) -> None:
    tools = session.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools][0] == "boost_search"
    assert "outputSchema" in tools[0] and "outputSchema" not in tools[1]


def test_cmd_mcp_serves_stdio_with_the_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: List[Server] = []

    def fake_serve_stdio(self: Server) -> None:
        seen.append(self)
        out = io.StringIO()
        line = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        self.serve(io.StringIO(json.dumps(line) + "\n"), out)
        seen_reply = json.loads(out.getvalue())
        assert seen_reply["result"]["instructions"] == INSTRUCTIONS

    monkeypatch.setattr(Server, "serve_stdio", fake_serve_stdio)
    assert mcp_command.cmd_mcp(argparse.Namespace()) == 0
    assert seen and seen[0].registry.names()[0] == "boost_search"


# --------------------------------------------------------------------------- boost_search


def test_search_returns_a_ranked_shortlist(indexed: Path, session: Session) -> None:
    result = session.call("boost_search", {"query": "test my React app"})
    assert result["isError"] is False
    data = result["structuredContent"]
    assert data["engine"] == "bm25" and data["notes"] == []
    top = data["results"][0]
    assert top["id"] == "example:jest-runner" and top["kind"] == "skill"
    assert top["path"] == "skills/jest-runner/SKILL.md"
    assert top["file"].endswith("/repos/example/skills/jest-runner/SKILL.md")
    assert top["url"].startswith("file://") and top["url"].endswith("jest-runner/SKILL.md")
    assert set(top) <= {*mcp_command._HIT_SCHEMA["properties"], "path"}
    assert "snippet" not in top and "meta" not in top and "ranks" not in top
    lines = text_of(result).splitlines()
    assert lines[0] == f"1. example:jest-runner [skill] — {top['why']}"
    assert lines[1] == f"   file: {top['file']}"
    assert len(lines) == 2 * len(data["results"]) <= 16


def test_search_honours_limit_kind_and_tap(indexed: Path, session: Session) -> None:
    result = session.call(
        "boost_search", {"query": "review code", "limit": 2, "kind": "workflow", "tap": "example"}
    )
    rows = result["structuredContent"]["results"]
    assert 1 <= len(rows) <= 2 and all(r["kind"] == "workflow" for r in rows)


def test_search_without_an_index_falls_back_to_lexical_with_a_note(
    tapped: Path, session: Session
) -> None:
    result = session.call("boost_search", {"query": "unit testing javascript"})
    data = result["structuredContent"]
    assert data["engine"] == "lexical"
    assert data["results"][0]["id"] == "example:jest-runner"
    assert any("boost reindex" in n for n in data["notes"])
    assert text_of(result).splitlines()[-1] == f"note: {data['notes'][-1]}"


def test_search_with_no_match_says_so(indexed: Path, session: Session) -> None:
    result = session.call("boost_search", {"query": "zzqxv"})
    assert result["isError"] is False
    assert result["structuredContent"]["results"] == []
    assert text_of(result) == "No matches for 'zzqxv'."


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            {"query": "tests", "tap": "nowhere"},
            "no tap named 'nowhere' — call boost_list_taps for the tapped registries",
        ),
        (
            {"query": "   "},
            "the query is empty — describe the task, e.g. boost search 'test my React app'",
        ),
    ],
)
def test_search_usage_problems_are_tool_errors(
    indexed: Path, session: Session, arguments: Dict[str, Any], message: str
) -> None:
    result = session.call("boost_search", arguments)
    assert result["isError"] is True and text_of(result) == message


def test_search_without_taps_points_at_tap_defaults(session: Session) -> None:
    result = session.call("boost_search", {"query": "test my React app"})
    assert result["isError"] is True
    assert text_of(result) == (
        "no registries are tapped yet — ask the user to run 'boost tap --defaults' for a "
        "starter set, or 'boost tap OWNER/REPO' in a terminal"
    )


def test_search_sees_a_rebuilt_index_in_the_same_session(indexed: Path, session: Session) -> None:
    query = {"query": "knit a woollen scarf with cable stitches", "limit": 3}
    before = session.call("boost_search", query)["structuredContent"]["results"]
    assert all(r["name"] != "scarf-knitting" for r in before)
    new = skill("scarf-knitting", "Knit a woollen scarf with cable stitches.", "Cable knit.")
    (indexed / "skills" / "scarf-knitting").mkdir()
    (indexed / "skills" / "scarf-knitting" / "SKILL.md").write_text(new, encoding="utf-8")
    commit_all(indexed, "add scarf-knitting")
    registry.update(["example"])
    index.build(registry.snapshots(), force=True)
    after = session.call("boost_search", query)["structuredContent"]
    assert after["results"][0]["id"] == "example:scarf-knitting" and after["notes"] == []


# --------------------------------------------------------------------------- boost_get_skill


def test_get_skill_by_name_and_by_path(tapped: Path, session: Session) -> None:
    path = registry.get_tap("example").root / "rules" / "python-style.md"
    expected = f"# example:python-style [rule] — file: {path}\n\n" + path.read_text("utf-8")
    for name in ("python-style", "example:python-style", "example:rules/python-style.md"):
        result = session.call("boost_get_skill", {"name": name})
        assert result["isError"] is False and text_of(result) == expected
        assert "structuredContent" not in result


def test_get_skill_ambiguous_lists_the_candidates(
    tapped: Path, session: Session, tmp_path: Path
) -> None:
    other = make_repo(
        tmp_path / "other", {"skills/pdf-forms/SKILL.md": skill("pdf-forms", "Print forms")}
    )
    registry.add(str(other), name="other")
    result = session.call("boost_get_skill", {"name": "pdf-forms"})
    assert result["isError"] is True
    assert text_of(result) == (
        "'pdf-forms' matches 2 entries: example:pdf-forms, other:pdf-forms — "
        "ask for one of them as TAP:NAME (or TAP:PATH)"
    )
    assert session.call("boost_get_skill", {"name": "other:pdf-forms"})["isError"] is False


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "no-such-thing",
            "no skill, rule or workflow named 'no-such-thing' — find one with boost_search",
        ),
        ("nowhere:x", "no tap named 'nowhere' — call boost_list_taps for the tapped registries"),
    ],
)
def test_get_skill_unknown_is_a_tool_error(
    tapped: Path, session: Session, name: str, message: str
) -> None:
    result = session.call("boost_get_skill", {"name": name})
    assert result["isError"] is True and text_of(result) == message


def test_get_skill_without_taps(session: Session) -> None:
    result = session.call("boost_get_skill", {"name": "jest-runner"})
    assert result["isError"] is True and "'boost tap --defaults'" in text_of(result)


# --------------------------------------------------------------------------- boost_list_taps


def test_list_taps_without_taps(session: Session) -> None:
    result = session.call("boost_list_taps", {})
    assert result["isError"] is False
    assert result["structuredContent"] == {"taps": []}
    assert (
        text_of(result) == "No taps yet: ask the user to run 'boost tap --defaults' in a terminal."
    )


def test_list_taps_reports_index_freshness(indexed: Path, session: Session, tmp_path: Path) -> None:
    def states() -> Dict[str, str]:
        data = session.call("boost_list_taps", {})["structuredContent"]
        return {t["name"]: t["index"] for t in data["taps"]}

    assert states() == {"example": "indexed"}
    other = make_repo(tmp_path / "other", {"skills/a/SKILL.md": skill("a", "Do a thing")})
    registry.add(str(other), name="other")
    assert states() == {"example": "indexed", "other": "not indexed"}
    (indexed / "NOTES.md").write_text("a change\n", encoding="utf-8")
    commit_all(indexed)
    registry.update(["example"])
    assert states() == {"example": "stale index", "other": "not indexed"}
    result = session.call("boost_list_taps", {})
    tap = result["structuredContent"]["taps"][0]
    assert tap["counts"] == {"skill": 17, "rule": 7, "workflow": 5}
    assert {"name", "source", "url", "commit", "counts", "added", "updated", "warnings"} <= set(tap)
    first = text_of(result).splitlines()[0]
    assert first == f"example @ {tap['commit'][:10]}: 17 skills, 7 rules, 5 workflows (stale index)"


def test_list_taps_survives_a_damaged_index(indexed: Path, session: Session) -> None:
    manifest = index.open_index()
    assert manifest is not None
    (manifest.root / "manifest.json").write_text("{not json", encoding="utf-8")
    result = session.call("boost_list_taps", {})
    assert result["isError"] is False
    assert [t["index"] for t in result["structuredContent"]["taps"]] == ["unreadable index"]
    last = text_of(result).splitlines()[-1]
    assert last.startswith("note: the search index cannot be read (") and "boost reindex" in last


# --------------------------------------------------------------------------- boost_discover_github


@pytest.fixture
def fake_gh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PATH", os.pathsep.join([str(FAKEBIN), SYSTEM_PATH]))
    yield


def test_discover_lists_repositories(fake_gh: None, session: Session) -> None:
    result = session.call("boost_discover_github", {"query": "react testing"})
    assert result["isError"] is False
    repos = result["structuredContent"]["repositories"]
    assert [r["hits"] for r in repos] == [4, 2, 1, 1]
    assert repos[0] == {
        "repo": "acme/agent-skills",
        "url": "https://github.com/acme/agent-skills",
        "hits": 4,
        "paths": [
            "skills/react-testing/SKILL.md",
            "skills/playwright-e2e/SKILL.md",
            "skills/vitest/SKILL.md",
        ],
    }
    lines = text_of(result).splitlines()
    assert len(lines) == 5 and lines[-1] == "Tap one with: boost tap OWNER/REPO"
    limited = session.call("boost_discover_github", {"query": "react testing", "limit": 1})
    assert len(limited["structuredContent"]["repositories"]) == 1


def test_discover_with_no_results(fake_gh: None, session: Session, monkeypatch: Any) -> None:
    monkeypatch.setenv("FAKE_GH_FIXTURE", "search_code_empty.json")
    result = session.call("boost_discover_github", {"query": "nothing here"})
    assert result["structuredContent"] == {"repositories": []}
    assert text_of(result).splitlines() == [
        "No repositories matched.",
        "Tap one with: boost tap OWNER/REPO",
    ]


def test_discover_failures_are_one_line_tool_errors(
    fake_gh: None, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GH_MODE", "fail")
    result = session.call("boost_discover_github", {"query": "react"})
    assert result["isError"] is True
    assert text_of(result) == (
        "'gh search code' failed (exit 1): HTTP 403: API rate limit exceeded for user ID 1. "
        f"(https://api.github.com/search/code) — {RETRY_HINT}"
    )


def test_discover_without_gh(
    session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH at all
    result = session.call("boost_discover_github", {"query": "react"})
    assert result["isError"] is True
    assert text_of(result) == f"the GitHub CLI (gh) is not on PATH — {INSTALL_HINT}"


def test_discover_blank_query_is_a_tool_error(fake_gh: None, session: Session) -> None:
    result = session.call("boost_discover_github", {"query": "   "})
    assert result["isError"] is True
    assert text_of(result) == "discovery needs words to search for — e.g. 'react testing'"


# --------------------------------------------------------------------------- argument checks


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("boost_search", {"query": "x", "limit": 51}),
        ("boost_search", {"query": "x", "kind": "agent"}),
        ("boost_search", {"query": ""}),
        ("boost_get_skill", {}),
        ("boost_list_taps", {"verbose": True}),
        ("boost_discover_github", {"query": "x", "limit": 0}),
    ],
)
def test_schema_violations_never_reach_the_handlers(tool: str, arguments: Dict[str, Any]) -> None:
    new = Session("2025-11-25")
    result = new.call(tool, arguments)
    assert result["isError"] is True
    assert text_of(result).startswith(f"invalid arguments for tool {tool!r}: ")
    old = Session("2025-06-18")
    reply = old.request("tools/call", {"name": tool, "arguments": arguments})
    assert reply["error"]["code"] == -32602


# --------------------------------------------------------------------------- warm-path costs


FAKE_CLAUDE_DIR = ROOT / "tests" / "fakebin_claude"


def test_auto_backend_follows_the_environment(tmp_path: Path) -> None:
    assert llm.auto_backend({"PATH": str(tmp_path)}) is None
    assert llm.auto_backend({"PATH": str(tmp_path), "ANTHROPIC_API_KEY": " "}) is None
    assert llm.auto_backend({"PATH": str(tmp_path), "ANTHROPIC_API_KEY": "k"}) == "api"
    assert llm.auto_backend({"PATH": str(FAKE_CLAUDE_DIR)}) == "cli"


@pytest.mark.parametrize(
    "options, env, pool",
    [
        ({"limit": 8}, {}, 8),
        ({"limit": 8, "rerank": "none"}, {"ANTHROPIC_API_KEY": "k"}, 8),
        ({"limit": 8}, {"ANTHROPIC_API_KEY": "k"}, search.RERANK_POOL),
        ({"limit": 8, "rerank": "api"}, {}, search.RERANK_POOL),
        ({"limit": 8, "taps": ("example",)}, {}, 8),  # the engines filter by tap themselves
    ],
)
def test_the_pool_is_the_shortlist_unless_a_reranker_needs_more(
    no_llm: None,
    monkeypatch: pytest.MonkeyPatch,
    options: Dict[str, Any],
    env: Dict[str, str],
    pool: int,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert search.pool_size(search.SearchOptions(query="q", **options)) == pool


def test_a_shortlist_pool_gives_the_top_of_the_full_ranking(indexed: Path) -> None:
    def ids(limit: int) -> List[str]:
        out = search.run(search.SearchOptions(query="write tests for my app", limit=limit))
        assert out.diagnostics["pool"] == limit
        return [h.entry.qualified_name for h in out.hits]

    assert ids(3) == ids(20)[:3]


def test_copies_collapse_without_shrinking_the_shortlist(no_llm: None, tmp_path: Path) -> None:
    files = {  # a outranks b in each tap, so the first two candidates are copies of a
        "skills/a/SKILL.md": skill("a", "Lint the files of a monorepo"),
        "skills/b/SKILL.md": skill("b", "Lint files"),
    }
    for tap in ("one", "two"):  # byte-identical copies, no index: the lexical engine
        registry.add(str(make_repo(tmp_path / tap, files)), name=tap)
    out = search.run(search.SearchOptions(query="lint monorepo files", limit=2))
    assert out.engine == "lexical" and out.diagnostics["pool"] == 2
    assert out.diagnostics["candidates"] == 2  # distinct files: [one:a, two:a] are one
    assert [(h.entry.qualified_name, h.also_in) for h in out.hits] == [
        ("one:a", ("two:a",)),
        ("one:b", ("two:b",)),
    ]


def test_rerank_is_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """boost_search passes rerank='none' unless the caller asks for it."""
    from boost_cli.commands import mcp as mcp_cmd
    from boost_cli.core import search as search_mod

    seen = []

    def fake_run(opts: search_mod.SearchOptions, **kwargs: Any) -> search_mod.SearchOutcome:
        seen.append(opts.rerank)
        assert opts.expand == "none"  # the caller writes its own keywords
        return search_mod.SearchOutcome(hits=[], engine="bm25")

    monkeypatch.setattr(mcp_cmd.search, "run", fake_run)
    server = mcp_cmd.Server(mcp_cmd.build_registry())
    for args in ({"query": "x"}, {"query": "x", "rerank": True}, {"query": "x", "rerank": False}):
        server.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "boost_search", "arguments": args},
            }
        )
    assert seen == ["none", "required", "none"]
