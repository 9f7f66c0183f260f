"""Registering `boost mcp` with the MCP hosts users have (`boost mcp register HOST`).

A host with a CLI is told through that CLI, as its documentation says (``claude mcp add``,
``codex mcp add``, ``gemini mcp add``): boost never guesses at a config file another
program owns and rewrites. A host configured by a JSON file boost edits that file (Cursor,
VS Code, Windsurf): it changes only its own ``boost`` entry, keeps every other server and
key as they are, writes atomically, and refuses a file it cannot parse (JSON with comments,
say) with the entry to paste instead, so nothing is ever clobbered.

`plan` says what would happen (``--dry-run`` prints it); `apply` does it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import atomic
from boost_cli.core.errors import BoostError, UsageError

SERVER = "boost"


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _vscode_user() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / "Code" / "User"
    if os.name == "nt":  # pragma: no cover - Windows
        return Path(os.environ.get("APPDATA", _home())) / "Code" / "User"
    base = os.environ.get("XDG_CONFIG_HOME") or str(_home() / ".config")
    return Path(base) / "Code" / "User"


@dataclass(frozen=True)
class Host:
    """One host: its CLI (argv builders for add and remove) or its config file."""

    name: str
    title: str
    cli: Optional[str] = None
    add: Optional[Callable[[List[str]], List[str]]] = None
    remove: Optional[List[str]] = None
    config: Optional[Callable[[], Path]] = None
    key: str = "mcpServers"
    stdio_type: bool = False  # VS Code: ``"type": "stdio"`` in the entry

    def entry(self, command: List[str]) -> Dict[str, Any]:
        d: Dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        d.update({"command": command[0], "args": command[1:]})
        return d


HOSTS: Dict[str, Host] = {
    h.name: h
    for h in (
        Host(
            "claude",
            "Claude Code",
            cli="claude",
            add=lambda cmd: ["mcp", "add", "--scope", "user", SERVER, "--", *cmd],
            remove=["mcp", "remove", "--scope", "user", SERVER],
        ),
        Host(
            "codex",
            "OpenAI Codex CLI",
            cli="codex",
            add=lambda cmd: ["mcp", "add", SERVER, "--", *cmd],
            remove=["mcp", "remove", SERVER],
        ),
        Host(
            "gemini",
            "Gemini CLI",
            cli="gemini",
            add=lambda cmd: ["mcp", "add", "--scope", "user", SERVER, *cmd],
            remove=["mcp", "remove", "--scope", "user", SERVER],
        ),
        Host("cursor", "Cursor", config=lambda: _home() / ".cursor" / "mcp.json"),
        Host(
            "vscode",
            "VS Code",
            config=lambda: _vscode_user() / "mcp.json",
            key="servers",
            stdio_type=True,
        ),
        Host(
            "windsurf",
            "Windsurf",
            config=lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json",
        ),
    )
}


def server_command() -> List[str]:
    """How a host starts boost's server: the absolute ``boost`` beside this interpreter
    (or on PATH), else this interpreter with ``-m boost_cli``."""
    exe = shutil.which("boost", path=os.path.dirname(sys.executable)) or shutil.which("boost")
    if exe:
        return [os.path.abspath(exe), "mcp"]
    return [sys.executable, "-m", "boost_cli", "mcp"]


def get(name: str) -> Host:
    host = HOSTS.get(name.lower())
    if host is None:
        raise UsageError(f"unknown host {name!r}", f"choose from {', '.join(HOSTS)}")
    return host


@dataclass(frozen=True)
class Plan:
    """What registering (or unregistering) does on one host: run ``argv``, or write
    ``content`` to ``path`` (None: nothing to change, ``note`` says why)."""

    host: Host
    action: str  # "register" | "unregister"
    argv: Optional[List[str]] = None
    path: Optional[Path] = None
    content: Optional[str] = None
    note: str = ""

    def describe(self) -> str:
        if self.argv is not None:
            return "run: " + " ".join(_quote(a) for a in self.argv)
        if self.content is None:
            return self.note
        return f"write {self.path}:\n{self.content}"


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def _read_config(path: Path, key: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The config at ``path`` ({} when there is none) and its servers object."""
    if not path.exists():
        return {}, {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(
            f"cannot read {path} as JSON ({str(exc)[:80]}); boost changes nothing in it",
            f"add the server by hand under {key!r}, or run 'boost mcp register --dry-run' for "
            "the entry",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
        raise UsageError(
            f"{path} is not an object with a {key!r} object; boost changes nothing in it",
            "fix the file or add the server by hand",
        )
    return data, data.get(key, {})


def plan(name: str, action: str, which: Callable[[str], Optional[str]] = shutil.which) -> Plan:
    """What ``action`` (register or unregister) would do for host ``name``."""
    host = get(name)
    command = server_command()
    if host.cli is not None:
        exe = which(host.cli)
        if exe is None:
            raise UsageError(
                f"{host.cli} is not on PATH, so {host.title} cannot be told about boost",
                f"install {host.title}, or add the stdio server {' '.join(command)} by hand",
            )
        assert host.add is not None and host.remove is not None
        args = host.add(command) if action == "register" else host.remove
        return Plan(host, action, argv=[exe, *args])
    assert host.config is not None
    path = host.config()
    data, servers = _read_config(path, host.key)
    entry = host.entry(command)
    if action == "register":
        if servers.get(SERVER) == entry:
            return Plan(host, action, path=path, note=f"{path}: boost is already registered")
        servers = {**servers, SERVER: entry}
    else:
        if SERVER not in servers:
            return Plan(host, action, path=path, note=f"{path}: boost is not registered")
        servers = {k: v for k, v in servers.items() if k != SERVER}
    data = {**data, host.key: servers}
    return Plan(host, action, path=path, content=json.dumps(data, indent=2) + "\n")


def apply(p: Plan) -> str:
    """Carry ``p`` out; returns one line saying what was done."""
    if p.argv is not None:
        try:
            done = subprocess.run(p.argv, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BoostError(f"{p.argv[0]} failed: {exc}", "run the command by hand") from None
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()
            raise BoostError(
                f"{' '.join(p.argv[:3])} … exited {done.returncode}"
                f"{': ' + why[-1][:200] if why else ''}",
                "run it by hand to see why: " + " ".join(_quote(a) for a in p.argv),
            )
        return f"{p.host.title}: {p.action}ed boost ({' '.join(p.argv[1:3])} …)"
    if p.content is None:
        return p.note
    assert p.path is not None
    atomic.write_text(p.path, p.content)
    return f"{p.host.title}: {p.action}ed boost in {p.path}"


def found(which: Callable[[str], Optional[str]] = shutil.which) -> List[Dict[str, Any]]:
    """Every known host, as `boost mcp register --list` shows it: its CLI on PATH or its
    config file, and whether boost is in that file."""
    rows: List[Dict[str, Any]] = []
    for host in HOSTS.values():
        row: Dict[str, Any] = {"host": host.name, "title": host.title}
        if host.cli is not None:
            exe = which(host.cli)
            row.update({"how": f"{host.cli} mcp add", "found": exe is not None, "where": exe})
        else:
            assert host.config is not None
            path = host.config()
            row.update({"how": "config file", "found": path.parent.is_dir(), "where": str(path)})
            try:
                row["registered"] = SERVER in _read_config(path, host.key)[1]
            except UsageError:
                row["registered"] = None  # a file boost cannot read: it will not touch it
        rows.append(row)
    return rows


def names() -> Sequence[str]:
    return list(HOSTS)
