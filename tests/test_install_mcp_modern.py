"""Issue 33 item 7: in protocol 2026-07-28 (no roots: paths come in tool arguments)
boost_install takes an absolute ``project`` inside the folder the host started the server
in, without BOOST_MCP_ROOT; outside it, or with the server started in ``/`` or the home
folder, it still refuses. The real `boost mcp` over stdio, one stateless request each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

from tests.helpers import ROOT, make_repo, run_boost, skill

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def install(home: Path, cwd: Path, project: str, user_home: Path) -> Dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "boost_install",
            "arguments": {"id": "ex:pdf", "project": project},
            "_meta": META,
        },
    }
    env = {**os.environ, "BOOST_HOME": str(home), "HOME": str(user_home), "PYTHONPATH": str(ROOT)}
    env.pop("BOOST_MCP_ROOT", None)
    done = subprocess.run(
        [sys.executable, "-m", "boost_cli", "mcp"],
        input=json.dumps(call) + "\n",
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=env,
        timeout=120,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert replies and "result" in replies[-1], (done.stdout, done.stderr)
    result: Dict[str, Any] = replies[-1]["result"]
    return result


def test_a_project_inside_the_servers_folder_needs_no_mcp_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "reg", {"skills/pdf/SKILL.md": skill("pdf", "PDF forms.")})
    home, user = tmp_path / "bh", tmp_path / "user"
    user.mkdir()
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    workspace = tmp_path / "work"
    app = workspace / "app"
    app.mkdir(parents=True)
    ok = install(home, workspace, str(app), user)
    assert not ok.get("isError"), ok
    assert (app / ".claude/skills/pdf/SKILL.md").is_file()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    no = install(home, workspace, str(outside), user)
    assert no.get("isError") and "outside the folder the server runs in" in no["content"][0]["text"]
    assert not (outside / ".claude").exists()
    # A server started in the home folder (a desktop app) bounds nothing: refused.
    inside_home = user / "proj"
    inside_home.mkdir()
    no = install(home, user, str(inside_home), user)
    assert no.get("isError") and "BOOST_MCP_ROOT" in no["content"][0]["text"]
    assert not (inside_home / ".claude").exists()
