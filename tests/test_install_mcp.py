"""boost_install over MCP: the real `boost mcp` server, roots from the client (roots/list),
writes only inside them, never over the user's edits, idempotent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from tests.helpers import make_repo, run_boost, skill
from tests.test_mcp_server import McpProcess

FILES = {
    "skills/pdf-forms/SKILL.md": skill("pdf-forms", "Fill PDF forms."),
    "skills/pdf-forms/reference.md": "# Reference\n",
    "rules/python-style.md": "---\ndescription: Python style\n---\nUse ruff.\n",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "reg", FILES)
    home = tmp_path / "bh"
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    return home


def start(home: Path, roots: Any, env: Any = None) -> McpProcess:
    """A server initialised by a client with the roots capability (when ``roots`` is not
    None), which answers the server's roots/list request with ``roots``."""
    mcp = McpProcess(home, env)
    caps: Dict[str, Any] = {"roots": {"listChanged": True}} if roots is not None else {}
    mcp.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if roots is not None:
        ask = mcp.receive()
        assert ask["method"] == "roots/list" and "id" in ask
        uris = [{"uri": Path(r).as_uri(), "name": "project"} for r in roots]
        mcp.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": uris}})
    return mcp


def call(mcp: McpProcess, args: Dict[str, Any]) -> Dict[str, Any]:
    return mcp.call_result("boost_install", args)


def test_installs_inside_the_clients_root_and_only_there(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    other = tmp_path / "other"
    project.mkdir()
    other.mkdir()
    mcp = start(home, [str(project)])
    try:
        dry = call(mcp, {"id": "ex:pdf-forms", "dry_run": True})
        assert not dry.get("isError"), dry
        assert dry["structuredContent"]["applied"] is False
        assert not (project / ".claude").exists()
        done = call(mcp, {"id": "ex:pdf-forms"})
        assert not done.get("isError"), done
        assert (project / ".claude/skills/pdf-forms/SKILL.md").read_text() == FILES[
            "skills/pdf-forms/SKILL.md"
        ]
        book = json.loads((project / ".boost/installed.json").read_text())["items"]
        assert list(book) == [".claude/skills/pdf-forms"]
        again = call(mcp, {"id": "ex:pdf-forms"})  # idempotent
        assert not again.get("isError") and "Already installed" in again["content"][0]["text"]
        rule = call(mcp, {"id": "ex:python-style", "agent": "windsurf", "project": str(project)})
        assert (project / ".windsurf/rules/python-style.md").is_file(), rule
        outside = call(mcp, {"id": "ex:pdf-forms", "project": str(other)})
        assert (
            outside.get("isError")
            and "outside the workspace roots" in outside["content"][0]["text"]
        )
        sneaky = call(mcp, {"id": "ex:pdf-forms", "project": str(project / ".." / "other")})
        assert sneaky.get("isError")
        assert list(other.iterdir()) == []
        f = project / ".claude/skills/pdf-forms/SKILL.md"
        f.write_text("mine\n")
        edited = call(mcp, {"id": "ex:pdf-forms", "upgrade": True})
        assert edited.get("isError") and "you edited it" in edited["content"][0]["text"]
        assert f.read_text() == "mine\n"
    finally:
        mcp.close()


def test_no_root_no_write(home: Path, tmp_path: Path) -> None:
    mcp = start(home, None)
    try:
        r = call(mcp, {"id": "ex:pdf-forms", "project": str(tmp_path)})
        assert r.get("isError") and "no workspace root" in r["content"][0]["text"]
        assert "BOOST_MCP_ROOT" in r["content"][0]["text"]
    finally:
        mcp.close()
    assert not (tmp_path / ".claude").exists()
    project = tmp_path / "configured"
    project.mkdir()
    mcp = start(home, None, {"BOOST_MCP_ROOT": str(project)})
    try:
        r = call(mcp, {"id": "ex:pdf-forms"})
        assert not r.get("isError"), r
    finally:
        mcp.close()
    assert (project / ".claude/skills/pdf-forms/reference.md").is_file()


def test_mcp_check_lists_the_tools_as_a_host_would(home: Path) -> None:
    user = {"HOME": str(home / "no-such-user")}  # no host config of the real user's
    r = run_boost(["mcp", "--check"], home, env=user)
    assert r.returncode == 0, r.stderr
    assert "boost_install          writes" in r.stdout
    assert "boost_search           read-only" in r.stdout
    assert f"boost_list_taps: 1 tap(s) in {home}" in r.stdout
    data = json.loads(run_boost(["mcp", "--check", "--json"], home, env=user).stdout)
    assert [t["name"] for t in data["tools"]][-1] == "boost_install"
    assert data["protocolVersion"] == "2025-11-25" and data["taps"] == 1
