"""Issue 33 item 7: `boost mcp register HOST` a second time says it is already registered
(exit 0) or, with other settings, names --force, which replaces it; `--list` shows the
registration for the CLI hosts too; `register gemini` says the folder must be trusted.
Through the real CLI, with fake host CLIs that record their argv (tests/test_mcp_register.py
runs the real ones from npm in the slow suite)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from tests.helpers import ROOT
from tests.test_mcp_register import boost, calls, command, env, fake, real_clis  # noqa: F401


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _claude_has(env: Dict[str, str], cmd, extra_env) -> None:  # noqa: F811
    entry = {"type": "stdio", "command": cmd[0], "args": cmd[1:], "env": extra_env}
    path = Path(env["HOME"]) / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {"boost": entry}}))


def test_register_twice_is_already_registered_or_needs_force(
    env: Dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    fake(env, "claude")
    exe = str(Path(env["PATH"].split(":")[0]) / "claude")
    home = str(tmp_path / "boost-home")
    _claude_has(env, command(), {"BOOST_HOME": home})
    r = boost(["register", "claude"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (
        f"Claude Code: boost is already registered ({env['HOME']}/.claude.json)"
    )
    assert calls(env) == []
    _claude_has(env, ["/old/boost", "mcp"], {})
    r = boost(["register", "claude"], env, tmp_path)
    assert r.returncode == 2 and calls(env) == []
    assert r.stderr.strip() == (
        f"boost: error: boost is already registered in Claude Code ({env['HOME']}/.claude.json) "
        "with another command or environment: /old/boost mcp — replace it with "
        "'boost mcp register claude --force'"
    )
    dry = boost(["register", "claude", "--force", "--dry-run"], env, tmp_path)
    assert dry.stdout.splitlines()[0] == f"run: {exe} mcp remove --scope user boost"
    r = boost(["register", "claude", "--force"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert calls(env) == [
        f"{exe} mcp remove --scope user boost",
        f"{exe} mcp add --scope user boost -e BOOST_HOME={home} -- {' '.join(command())}",
    ]
    assert r.stdout.startswith("Claude Code: replaced boost")


def test_list_shows_cli_hosts_registration_and_gemini_names_trust(
    env: Dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    fake(env, "claude")
    fake(env, "gemini")
    _claude_has(env, command(), {})
    r = boost(["register", "--list"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert "found, boost registered" in rows["claude"]
    assert "boost registered" not in rows["gemini"] and "found" in rows["gemini"]
    r = boost(["register", "gemini"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Gemini CLI starts MCP servers only in trusted folders" in r.stderr


JSONC = """{
  // my servers (VS Code writes JSONC)
  "servers": {
    "web": {"type": "http", "url": "https://example.invalid//mcp", /* two slashes */ },
    "quote": {"command": "echo", "args": ["a \\" // not a comment"],},
  },
}
"""


def test_vscode_jsonc_is_read_kept_and_backed_up(
    env: Dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    path = Path(env["HOME"]) / ".config/Code/User/mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(JSONC)
    dry = boost(["register", "vscode", "--dry-run"], env, tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert path.read_text() == JSONC and "comments" in dry.stderr
    r = boost(["register", "vscode"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "keeping every entry but not the comments" in r.stderr
    servers = json.loads(path.read_text())["servers"]
    assert servers["web"] == {"type": "http", "url": "https://example.invalid//mcp"}
    assert servers["quote"]["args"] == ['a " // not a comment']
    assert servers["boost"]["command"] == command()[0]
    assert (path.parent / "mcp.json.boost-backup").read_text() == JSONC
    again = boost(["register", "vscode"], env, tmp_path)
    assert again.returncode == 0 and "already registered" in again.stdout


@pytest.mark.slow
def test_real_host_clis_connect_to_the_http_team_server(
    real_clis: Path,  # noqa: F811
    tmp_path: Path,
    env: Dict[str, str],  # noqa: F811
) -> None:
    """The set-up lines docs/mcp.md gives for the team server, with the real CLIs from npm:
    Claude Code and Gemini CLI (in a trusted folder) report boost connected; Codex records
    the URL."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "boost_cli", "mcp", "--http", f"127.0.0.1:{port}"],
        env={**os.environ, "BOOST_HOME": str(tmp_path / "bh")},
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    project = tmp_path / "project"
    project.mkdir()
    run_env = {**env, "PATH": os.pathsep.join([str(real_clis), env["PATH"]])}
    run_env["PATH"] += os.pathsep + os.path.dirname(shutil.which("node") or "/usr/bin/node")

    def cli(*argv: str) -> str:
        done = subprocess.run(
            list(argv), env=run_env, cwd=str(project), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        return done.stdout + done.stderr

    try:
        assert server.stderr is not None
        server.stderr.readline()  # "serving MCP on …": it listens
        cli("claude", "mcp", "add", "--transport", "http", "boost", url)
        assert "boost: " + url + " (HTTP) - ✔ Connected" in cli("claude", "mcp", "list")
        cli("gemini", "mcp", "add", "--scope", "user", "--transport", "http", "boost", url)
        assert "Disabled" in cli("gemini", "mcp", "list")  # an untrusted folder
        trusted = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
        trusted.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
        assert f"boost: {url} (http) - Connected" in cli("gemini", "mcp", "list")
        cli("codex", "mcp", "add", "boost", "--url", url)
        config = (Path(env["HOME"]) / ".codex" / "config.toml").read_text()
        assert f'[mcp_servers.boost]\nurl = "{url}"' in config
    finally:
        server.terminate()
        server.wait(timeout=30)
