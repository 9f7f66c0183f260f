"""`boost mcp register HOST` / `unregister` / `--dry-run` / `--list`, through the real CLI,
against real config files in a temporary HOME and fake host CLIs that record their argv
(and, in a slow test, the real host CLIs from npm when they install here)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.helpers import ROOT, indexed_example, run_boost

FAKE_CLI = """#!/bin/sh
printf '%s\\n' "$0 $*" >> "$FAKE_LOG"
exit ${FAKE_RC:-0}
"""


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    home = tmp_path / "user"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": os.pathsep.join(
            [str(bin_dir), os.path.dirname(sys.executable), "/usr/bin", "/bin"]
        ),
        "FAKE_LOG": str(tmp_path / "calls.log"),
    }


def fake(env: Dict[str, str], name: str) -> None:
    path = Path(env["PATH"].split(os.pathsep)[0]) / name
    path.write_text(FAKE_CLI)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def calls(env: Dict[str, str]) -> List[str]:
    log = Path(env["FAKE_LOG"])
    return log.read_text().splitlines() if log.exists() else []


def boost(args: List[str], env: Dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    return run_boost(["mcp", *args], tmp_path / "boost-home", env=env)


def command() -> List[str]:
    exe = shutil.which("boost", path=os.path.dirname(sys.executable))
    return [os.path.abspath(exe), "mcp"] if exe else [sys.executable, "-m", "boost_cli", "mcp"]


@pytest.mark.parametrize(
    "host, add, remove",
    [
        (
            "claude",
            "mcp add --scope user boost -e BOOST_HOME={home} -- {cmd}",
            "mcp remove --scope user boost",
        ),
        ("codex", "mcp add boost --env BOOST_HOME={home} -- {cmd}", "mcp remove boost"),
        (
            "gemini",
            "mcp add --scope user -e BOOST_HOME={home} boost {cmd}",
            "mcp remove --scope user boost",
        ),
    ],
)
def test_a_host_with_a_cli_is_told_through_it(
    host: str, add: str, remove: str, env: Dict[str, str], tmp_path: Path
) -> None:
    fake(env, host)
    exe = str(Path(env["PATH"].split(os.pathsep)[0]) / host)
    r = boost(["register", host, "--dry-run"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"run: {exe} mcp add") and calls(env) == []
    r = boost(["register", host], env, tmp_path)
    assert r.returncode == 0, r.stderr
    r = boost(["unregister", host], env, tmp_path)
    assert r.returncode == 0, r.stderr
    cmd, home = " ".join(command()), tmp_path / "boost-home"
    assert calls(env) == [f"{exe} {add.format(cmd=cmd, home=home)}", f"{exe} {remove}"]


def test_a_failing_host_cli_is_an_error_with_the_command(
    env: Dict[str, str], tmp_path: Path
) -> None:
    fake(env, "claude")
    r = boost(["register", "claude"], {**env, "FAKE_RC": "3"}, tmp_path)
    assert r.returncode != 0
    assert "exited 3" in r.stderr and "run it by hand to see why:" in r.stderr


def test_a_missing_host_cli_says_how_to_add_by_hand(env: Dict[str, str], tmp_path: Path) -> None:
    r = boost(["register", "codex"], env, tmp_path)
    assert r.returncode == 2
    assert "codex is not on PATH" in r.stderr and " mcp by hand" in r.stderr


CONFIGS = {
    "cursor": (".cursor/mcp.json", "mcpServers", False),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers", False),
    "vscode": (".config/Code/User/mcp.json", "servers", True),
}


@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_a_config_file_gains_and_loses_only_boost(
    host: str, env: Dict[str, str], tmp_path: Path
) -> None:
    rel, key, typed = CONFIGS[host]
    path = Path(env["HOME"]) / rel
    path.parent.mkdir(parents=True)
    before = {"theme": "dark", key: {"other": {"command": "other-server", "args": ["x"]}}}
    path.write_text(json.dumps(before))
    r = boost(["register", host, "--dry-run"], env, tmp_path)
    assert r.returncode == 0 and f"write {path}:" in r.stdout
    assert json.loads(path.read_text()) == before  # a dry run changes nothing
    r = boost(["register", host], env, tmp_path)
    assert r.returncode == 0, r.stderr
    after = json.loads(path.read_text())
    entry = {
        "command": command()[0],
        "args": command()[1:],
        "env": {"BOOST_HOME": str(tmp_path / "boost-home")},
    }
    if typed:
        entry = {"type": "stdio", **entry}
    assert after == {"theme": "dark", key: {**before[key], "boost": entry}}
    r = boost(["register", host], env, tmp_path)
    assert "already registered" in r.stdout
    r = boost(["register", "--list"], env, tmp_path)
    assert any(
        line.startswith(host) and "boost registered" in line for line in r.stdout.splitlines()
    )
    r = boost(["unregister", host], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(path.read_text()) == before
    r = boost(["unregister", host], env, tmp_path)
    assert "not registered" in r.stdout


def test_a_missing_config_file_is_created(env: Dict[str, str], tmp_path: Path) -> None:
    r = boost(["register", "cursor"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((Path(env["HOME"]) / ".cursor/mcp.json").read_text())
    assert list(data["mcpServers"]) == ["boost"]


@pytest.mark.parametrize(
    "text",
    [
        '{\n  // my servers\n  "servers": {"x": {"command": "y"}\n',  # not closed
        '{"servers": ["not", "an", "object"]}',
        "[]",
    ],
)
def test_a_file_boost_cannot_read_is_never_clobbered(
    text: str, env: Dict[str, str], tmp_path: Path
) -> None:
    path = Path(env["HOME"]) / ".config/Code/User/mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    for action in ("register", "unregister"):
        r = boost([action, "vscode"], env, tmp_path)
        assert r.returncode == 2 and "boost changes nothing in it" in r.stderr
        assert path.read_text() == text
    r = boost(["register", "--list"], env, tmp_path)
    assert "unreadable (boost leaves it alone)" in r.stdout


def test_list_shows_each_host_and_usage_errors(env: Dict[str, str], tmp_path: Path) -> None:
    fake(env, "gemini")
    r = boost(["register", "--list"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert set(rows) == {"claude", "codex", "gemini", "cursor", "vscode", "windsurf"}
    assert "not found" in rows["claude"] and " found: " in rows["gemini"]
    r = boost(["register", "emacs"], env, tmp_path)
    assert r.returncode == 2 and "unknown host 'emacs'" in r.stderr
    r = boost(["register"], env, tmp_path)
    assert r.returncode == 2 and "need a HOST" in r.stderr


# --------------------------------------------------------------------------- real host CLIs

NPM = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}


@pytest.fixture(scope="module")
def real_clis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real host CLIs from npm in a temporary prefix (skipped when npm or the
    registry is not reachable here)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm")
    prefix = tmp_path_factory.mktemp("npm")
    done = subprocess.run(
        ["npm", "install", "--no-fund", "--no-audit", "--prefix", str(prefix), *NPM.values()],
        capture_output=True,
        text=True,
        timeout=900,
    )
    bin_dir = prefix / "node_modules" / ".bin"
    if done.returncode != 0 or not all((bin_dir / name).exists() for name in NPM):
        pytest.skip(f"npm cannot install the host CLIs here: {done.stderr[-200:]}")
    return bin_dir


def _registered(host: str, home: Path) -> Optional[Dict[str, object]]:
    """boost's entry in the file the real CLI wrote, or None."""
    if host == "claude":
        servers = json.loads((home / ".claude.json").read_text()).get("mcpServers", {})
        return servers.get("boost")
    if host == "gemini":
        servers = json.loads((home / ".gemini" / "settings.json").read_text()).get("mcpServers", {})
        return servers.get("boost")
    text = (home / ".codex" / "config.toml").read_text()
    if "[mcp_servers.boost]" not in text:
        return None
    block = text.split("[mcp_servers.boost]", 1)[1]
    command = block.split('command = "', 1)[1].split('"', 1)[0]
    args = json.loads(block.split("args = ", 1)[1].splitlines()[0]) if "args = " in block else []
    env = {}
    if "[mcp_servers.boost.env]" in block:
        for line in block.split("[mcp_servers.boost.env]", 1)[1].strip().splitlines():
            if line.startswith("["):
                break
            k, _, v = line.partition(" = ")
            env[k.strip()] = json.loads(v)
    return {"command": command, "args": args, "env": env}


@pytest.mark.slow
@pytest.mark.parametrize("host", sorted(NPM))
def test_the_real_host_cli_registers_and_unregisters_boost(
    host: str, real_clis: Path, tmp_path: Path, env: Dict[str, str]
) -> None:
    env = {**env, "PATH": os.pathsep.join([str(real_clis), env["PATH"]])}
    env["PATH"] += os.pathsep + os.path.dirname(shutil.which("node") or "/usr/bin/node")
    home = indexed_example(tmp_path / "tapped")
    r = run_boost(["mcp", "register", host], home, env=env)
    assert r.returncode == 0, r.stderr
    again = run_boost(["mcp", "register", host], home, env=env)  # issue 33 item 7
    assert again.returncode == 0 and "already registered" in again.stdout, again.stderr
    entry = _registered(host, Path(env["HOME"]))
    assert entry is not None
    assert [entry["command"], *entry["args"]] == command()  # type: ignore[misc]
    assert entry["env"] == {"BOOST_HOME": str(home)}
    # --check reads back what the real CLI wrote, starts boost as that host would, searches
    r = run_boost(["mcp", "--check", "--json"], home, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    rows = json.loads(r.stdout)["hosts"]
    assert [(h["host"], h["problem"], h["home"], h["taps"]) for h in rows] == [
        (host, None, str(home), 1)
    ]
    r = boost(["unregister", host], env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert _registered(host, Path(env["HOME"])) is None


# --------------------------------------------------------------------------- the user's env


def bare(args: List[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
    """The real CLI run with exactly ``env`` (no BOOST_HOME unless it holds one)."""
    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
    )


def test_register_passes_boost_home_only_when_it_is_set(
    env: Dict[str, str], tmp_path: Path
) -> None:
    fake(env, "codex")
    r = bare(["mcp", "register", "codex"], env)
    assert r.returncode == 0, r.stderr
    assert calls(env)[-1].endswith(f"mcp add boost -- {' '.join(command())}")
    rel = tmp_path / "rel-home"
    r = bare(["mcp", "register", "codex"], {**env, "BOOST_HOME": os.path.relpath(rel, ROOT)})
    assert r.returncode == 0, r.stderr
    assert f" --env BOOST_HOME={rel} -- " in calls(env)[-1]  # absolute: hosts start elsewhere


def test_register_writes_the_mcp_root(env: Dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    r = boost(["register", "cursor", "--root", str(project)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    entry = json.loads((Path(env["HOME"]) / ".cursor/mcp.json").read_text())["mcpServers"]["boost"]
    assert entry["env"] == {
        "BOOST_HOME": str(tmp_path / "boost-home"),
        "BOOST_MCP_ROOT": str(project),
    }
    r = boost(["register", "vscode", "--root", str(tmp_path / "nope")], env, tmp_path)
    assert r.returncode == 2 and "is not a folder" in r.stderr
    fake(env, "claude")
    r = boost(["register", "claude"], {**env, "BOOST_MCP_ROOT": str(project)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert f" -e BOOST_MCP_ROOT={project} -- " in calls(env)[-1]


# --------------------------------------------------------------------------- --check


@pytest.fixture(scope="module")
def tapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("check"))


def codex_config(env: Dict[str, str], extra: str = "") -> Path:
    """``~/.codex/config.toml`` as ``codex mcp add`` writes it (see docs/mcp-hosts.md)."""
    path = Path(env["HOME"]) / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    cmd = command()
    path.write_text(
        'model = "o3"\n\n[mcp_servers.boost]\n'
        f"command = {json.dumps(cmd[0])}\nargs = {json.dumps(cmd[1:])}\n{extra}"
    )
    return path


def test_check_fails_when_a_host_would_start_boost_on_another_home(
    env: Dict[str, str], tapped: Path, tmp_path: Path
) -> None:
    codex_config(env)  # registered without BOOST_HOME: Codex passes its own small env
    r = run_boost(["mcp", "--check"], tapped, env=env)
    assert r.returncode == 1, (r.stdout, r.stderr)
    default = Path(env["HOME"]) / ".boost"
    assert f"codex: {' '.join(command())} " in r.stdout
    assert r.stderr.strip() == (
        f"boost: error: OpenAI Codex CLI: it uses the home {default}, not {tapped} (yours) — "
        "run 'boost mcp register codex' again from the shell you run boost in"
    )
    codex_config(env, f"\n[mcp_servers.boost.env]\nBOOST_HOME = {json.dumps(str(tapped))}\n")
    r = run_boost(["mcp", "--check", "--json"], tapped, env=env)
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)["hosts"][0]
    assert row["host"] == "codex" and row["problem"] is None
    assert row["home"] == str(tapped) and row["taps"] == 1 and row["hits"] >= 1


def test_check_runs_a_search_and_fails_on_a_home_with_no_taps(
    env: Dict[str, str], tmp_path: Path
) -> None:
    r = run_boost(["mcp", "--check"], tmp_path / "empty", env=env)
    assert r.returncode == 1
    assert f"its home {tmp_path / 'empty'} has no taps" in r.stderr
    assert "boost tap --defaults" in r.stderr


def test_check_reads_the_json_hosts_with_their_env(
    env: Dict[str, str], tapped: Path, tmp_path: Path
) -> None:
    cmd = command()
    claude = Path(env["HOME"]) / ".claude.json"
    claude.write_text(
        json.dumps({"mcpServers": {"boost": {"type": "stdio", "command": cmd[0], "args": cmd[1:]}}})
    )
    # Claude Code passes its own environment on: the shell's BOOST_HOME reaches boost
    r = run_boost(["mcp", "--check", "--json"], tapped, env=env)
    assert r.returncode == 0, r.stderr
    assert [(h["host"], h["problem"]) for h in json.loads(r.stdout)["hosts"]] == [("claude", None)]
    other = tmp_path / "other-home"
    gemini = Path(env["HOME"]) / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    entry = {"command": cmd[0], "args": cmd[1:], "env": {"BOOST_HOME": str(other)}}
    gemini.write_text(json.dumps({"mcpServers": {"boost": entry}}))
    r = run_boost(["mcp", "--check"], tapped, env=env)
    assert r.returncode == 1
    assert f"gemini: {' '.join(cmd)} ({gemini}, env BOOST_HOME): FAILS: it uses the home " in (
        r.stdout
    )
    assert "Gemini CLI: it uses the home" in r.stderr and "register gemini" in r.stderr


def test_codex_config_shapes_a_user_may_write_by_hand() -> None:
    """Inline tables, literal strings and comments read as Codex reads them; other tables
    and values boost does not need are left alone."""
    from boost_cli.core import hosts

    text = (
        "# mine\n[profiles.x]\ncommand = 'not-this'\n\n[mcp_servers.boost]\n"
        "command = '/opt/boost/bin/boost'\nargs = [\"mcp\"]\n"
        'env = { BOOST_HOME = "/data/boost", "BOOST_MCP_ROOT" = \'/code/app\' }\n'
        'env_vars = ["LANGUAGE"]\nstartup_timeout_sec = 20\n'
    )
    tables = hosts._toml_tables(text, "mcp_servers.boost")
    assert tables == {
        "mcp_servers.boost": {
            "command": "/opt/boost/bin/boost",
            "args": ["mcp"],
            "env": {"BOOST_HOME": "/data/boost", "BOOST_MCP_ROOT": "/code/app"},
            "env_vars": ["LANGUAGE"],
            "startup_timeout_sec": 20,
        }
    }
    reg = hosts.Registered(hosts.get("codex"), ["boost", "mcp"], {"BOOST_HOME": "/h"}, Path("x"))
    shell = {"HOME": "/u", "PATH": "/bin", "BOOST_HOME": "/mine", "SECRET": "s"}
    assert hosts.host_env(reg, shell) == {"HOME": "/u", "PATH": "/bin", "BOOST_HOME": "/h"}
    claude = hosts.Registered(hosts.get("claude"), ["boost", "mcp"], {}, Path("x"))
    assert hosts.host_env(claude, shell) == shell


def test_each_host_s_config_is_read_back_where_the_host_looks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hosts.registered` in process: Claude Code's local, project and user scopes (that
    order), Gemini CLI's project then user settings, an editor's file, Codex's TOML."""
    from boost_cli.core import hosts

    user, project = tmp_path / "user", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user / ".config"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert all(hosts.registered(h, project) is None for h in hosts.names())

    def entry(home: str) -> Dict[str, object]:
        return {"command": "boost", "args": ["mcp"], "env": {"BOOST_HOME": home}}

    user.mkdir()
    claude = user / ".claude.json"
    claude.write_text(json.dumps({"mcpServers": {"boost": entry("/u")}}))
    assert hosts.registered("claude", project).env == {"BOOST_HOME": "/u"}  # type: ignore[union-attr]
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"boost": entry("/p")}}))
    assert hosts.registered("claude", project).env == {"BOOST_HOME": "/p"}  # type: ignore[union-attr]
    local = {"projects": {str(project): {"mcpServers": {"boost": entry("/l")}}}}
    claude.write_text(json.dumps({**local, "mcpServers": {"boost": entry("/u")}}))
    found = hosts.registered("claude", project)
    assert found is not None and found.env == {"BOOST_HOME": "/l"} and found.where == claude
    assert found.command == ["boost", "mcp"]

    (user / ".gemini").mkdir()
    (user / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"x": {}}}))
    assert hosts.registered("gemini", project) is None
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text(
        json.dumps({"mcpServers": {"boost": entry("/g")}})
    )
    assert hosts.registered("gemini", project).env == {"BOOST_HOME": "/g"}  # type: ignore[union-attr]

    (user / ".cursor").mkdir()
    (user / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"boost": "bad"}}))
    assert hosts.registered("cursor", project) is None
    vscode = user / ".config" / "Code" / "User" / "mcp.json"
    vscode.parent.mkdir(parents=True)
    vscode.write_text(json.dumps({"servers": {"boost": {"type": "stdio", **entry("/v")}}}))
    assert hosts.registered("vscode", project).env == {"BOOST_HOME": "/v"}  # type: ignore[union-attr]

    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    (codex / "config.toml").write_text('[mcp_servers.boost]\ncommand = "boost"\n')
    found = hosts.registered("codex", project)
    assert found is not None and found.command == ["boost"] and found.env == {}


def test_server_env_is_absolute_and_checks_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boost_cli.core import hosts
    from boost_cli.core.errors import UsageError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    got = hosts.server_env(environ={"BOOST_HOME": "h", "BOOST_MCP_ROOT": "app", "X": "1"})
    assert got == {"BOOST_HOME": str(tmp_path / "h"), "BOOST_MCP_ROOT": str(tmp_path / "app")}
    assert hosts.server_env(environ={"BOOST_HOME": ""}) == {}
    with pytest.raises(UsageError, match="is not a folder"):
        hosts.server_env("missing", environ={})


def test_check_in_process_names_the_host_and_the_fix(
    env: Dict[str, str],
    tapped: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from boost_cli.cli import main

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.setenv("BOOST_HOME", str(tapped))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    codex_config(env, '\n[mcp_servers.boost.env]\nBOOST_HOME = "/nowhere/boost"\n')
    assert main(["mcp", "--check"]) == 1
    captured = capsys.readouterr()
    assert "boost_search 'write and run tests for a project':" in captured.out
    assert "codex: " in captured.out and "FAILS: it uses the home /nowhere/boost" in captured.out
    assert "OpenAI Codex CLI: it uses the home /nowhere/boost" in captured.err
    codex_config(env)
    monkeypatch.setenv("BOOST_HOME", str(Path(env["HOME"]) / ".boost"))  # empty: no taps
    assert main(["mcp", "--check"]) == 1
    assert "(and 1 more)" in capsys.readouterr().err
