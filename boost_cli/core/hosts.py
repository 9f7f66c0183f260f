"""Registering `boost mcp` with the MCP hosts users have (`boost mcp register HOST`).

A host with a CLI is told through that CLI, as its documentation says (``claude mcp add``,
``codex mcp add``, ``gemini mcp add``): boost never guesses at a config file another
program owns and rewrites. A host configured by a JSON file boost edits that file (Cursor,
VS Code, Windsurf): it changes only its own ``boost`` entry, keeps every other server and
key as they are, writes atomically, and refuses a file it cannot parse with the entry to paste
instead, so nothing is ever clobbered. A file with comments and trailing commas (VS Code's
JSONC) is read (`jsonc`) and written back as plain JSON: every entry kept, its comments not,
the file as it was saved beside it (`BACKUP`), and the user told.

What a host is told is what the user's boost needs: the command, and the environment the
user runs boost with (`server_env`: ``BOOST_HOME`` when it is set, ``BOOST_MCP_ROOT`` when
it is set or given as ``--root``), written into the host's config: a host does not always
pass its own environment on (Codex passes a small one of its own), and a host started from
another shell, or from a desktop, has another. `registered` reads back what a host has
(its config files, as each host's documentation and CLI write them), and `host_env` the
environment that host would start boost with, for `boost mcp --check`.

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
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import atomic
from boost_cli.core.errors import BoostError, UsageError

SERVER = "boost"
BACKUP = ".boost-backup"  # beside a JSONC config boost rewrote: the file as it was


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _vscode_user() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / "Code" / "User"
    if os.name == "nt":  # pragma: no cover - Windows
        return Path(os.environ.get("APPDATA", _home())) / "Code" / "User"
    base = os.environ.get("XDG_CONFIG_HOME") or str(_home() / ".config")
    return Path(base) / "Code" / "User"


Env = Dict[str, str]


def _pairs(flag: str, env: Env) -> List[str]:
    return [a for k, v in sorted(env.items()) for a in (flag, f"{k}={v}")]


@dataclass(frozen=True)
class Host:
    """One host: its CLI (argv builders for add and remove) or its config file; and
    whether it passes boost its own environment (``inherits``; Codex does not)."""

    name: str
    title: str
    cli: Optional[str] = None
    add: Optional[Callable[[List[str], Env], List[str]]] = None
    remove: Optional[List[str]] = None
    config: Optional[Callable[[], Path]] = None
    key: str = "mcpServers"
    stdio_type: bool = False  # VS Code: ``"type": "stdio"`` in the entry
    inherits: bool = True

    def entry(self, command: List[str], env: Optional[Env] = None) -> Dict[str, Any]:
        d: Dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        d.update({"command": command[0], "args": command[1:]})
        if env:
            d["env"] = dict(sorted(env.items()))
        return d


HOSTS: Dict[str, Host] = {
    h.name: h
    for h in (
        Host(
            "claude",
            "Claude Code",
            cli="claude",
            # `-e` takes several values: before the name it would swallow it (docs/mcp-hosts.md)
            add=lambda cmd, env: [
                *("mcp", "add", "--scope", "user", SERVER),
                *_pairs("-e", env),
                *("--", *cmd),
            ],
            remove=["mcp", "remove", "--scope", "user", SERVER],
        ),
        Host(
            "codex",
            "OpenAI Codex CLI",
            cli="codex",
            add=lambda cmd, env: ["mcp", "add", SERVER, *_pairs("--env", env), "--", *cmd],
            remove=["mcp", "remove", SERVER],
            inherits=False,
        ),
        Host(
            "gemini",
            "Gemini CLI",
            cli="gemini",
            # options before the name: what follows it is the command and its arguments
            add=lambda cmd, env: [
                *("mcp", "add", "--scope", "user"),
                *_pairs("-e", env),
                *(SERVER, *cmd),
            ],
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


# What boost reads from its environment that a host must pass on for boost to find the
# user's home and, without workspace roots, the folder boost_install may write in.
PASSED = ("BOOST_HOME", "BOOST_MCP_ROOT")


def server_env(root: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> Env:
    """The environment a host must give boost's server: each of `PASSED` the user has set
    (as an absolute path: a host starts boost in another folder), and ``root`` (a folder)
    as ``BOOST_MCP_ROOT``."""
    environ = os.environ if environ is None else environ
    out = {k: environ[k] for k in PASSED if environ.get(k)}
    if root:
        out["BOOST_MCP_ROOT"] = root
    for k, v in out.items():
        full = Path(os.path.expanduser(v))
        if not full.is_absolute():
            full = Path.cwd() / full
        out[k] = os.path.normpath(str(full))
    if "BOOST_MCP_ROOT" in out and not os.path.isdir(out["BOOST_MCP_ROOT"]):
        raise UsageError(
            f"the MCP root {out['BOOST_MCP_ROOT']} is not a folder",
            "give the project folder boost_install may write in",
        )
    return out


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
    first: Optional[List[str]] = None  # run before argv: --force removes the old entry
    after: str = ""  # what the user must still do in the host (Gemini CLI: trust the folder)

    def describe(self) -> str:
        if self.argv is not None:
            runs = [self.first, self.argv] if self.first else [self.argv]
            return "\n".join("run: " + " ".join(_quote(a) for a in argv) for argv in runs)
        if self.content is None:
            return self.note
        return f"write {self.path}:\n{self.content}"


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def jsonc(text: str) -> Any:
    """``text`` parsed as JSON with comments (``//``, ``/* */``) and trailing commas, as VS
    Code writes its ``mcp.json``; ValueError when it is not even that."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("a /* comment is not closed")
            out.append(" ")
            i = end + 2
        elif ch in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return json.loads("".join(out))


def _read_config(path: Path, key: str) -> Tuple[Dict[str, Any], Dict[str, Any], bool]:
    """The config at ``path`` ({} when there is none), its servers object, and whether it
    had comments or trailing commas (JSONC: rewriting it as JSON loses them)."""
    if not path.exists():
        return {}, {}, False
    commented = False
    try:
        text = path.read_text(encoding="utf-8") or "{}"
        try:
            data = json.loads(text)
        except ValueError:
            data, commented = jsonc(text), True
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
    return data, data.get(key, {}), commented


# Gemini CLI connects a workspace's MCP servers only in a folder the user trusts.
GEMINI_TRUST = (
    "Gemini CLI starts MCP servers only in trusted folders ('gemini mcp list' says "
    "Disabled elsewhere): run gemini in the project and trust the folder when it asks "
    "(or /permissions)"
)


def plan(
    name: str,
    action: str,
    which: Callable[[str], Optional[str]] = shutil.which,
    root: Optional[str] = None,
    force: bool = False,
) -> Plan:
    """What ``action`` (register or unregister) would do for host ``name``; a register
    passes on `server_env` (``root``: the folder boost_install may write in). A host CLI
    is asked nothing when its user config already has boost as asked (already
    registered); with other settings, only ``force`` replaces them (remove, then add)."""
    host = get(name)
    command = server_command()
    env = server_env(root) if action == "register" else {}
    if host.cli is not None:
        exe = which(host.cli)
        if exe is None:
            raise UsageError(
                f"{host.cli} is not on PATH, so {host.title} cannot be told about boost",
                f"install {host.title}, or add the stdio server {' '.join(command)} by hand",
            )
        assert host.add is not None and host.remove is not None
        after = GEMINI_TRUST if host.name == "gemini" and action == "register" else ""
        if action == "unregister":
            return Plan(host, action, argv=[exe, *host.remove])
        have = user_entry(host)
        if have is not None and have.command == command and have.env == env:
            return Plan(
                host,
                action,
                note=f"{host.title}: boost is already registered ({have.where})",
                after=after,
            )
        if have is not None and not force:
            raise UsageError(
                f"boost is already registered in {host.title} ({have.where}) with another "
                f"command or environment: {' '.join(have.command)}"
                + (
                    f" ({', '.join(f'{k}={v}' for k, v in sorted(have.env.items()))})"
                    if have.env
                    else ""
                ),
                f"replace it with 'boost mcp register {host.name} --force'",
            )
        first = [exe, *host.remove] if have is not None else None
        return Plan(host, action, argv=[exe, *host.add(command, env)], first=first, after=after)
    assert host.config is not None
    path = host.config()
    data, servers, commented = _read_config(path, host.key)
    entry = host.entry(command, env)
    if action == "register":
        if servers.get(SERVER) == entry:
            return Plan(host, action, path=path, note=f"{path}: boost is already registered")
        servers = {**servers, SERVER: entry}
    else:
        if SERVER not in servers:
            return Plan(host, action, path=path, note=f"{path}: boost is not registered")
        servers = {k: v for k, v in servers.items() if k != SERVER}
    data = {**data, host.key: servers}
    after = (
        f"{path} has comments or trailing commas: boost writes it as plain JSON, keeping "
        f"every entry but not the comments, and saves the file as it was as "
        f"{path.name}{BACKUP}"
        if commented
        else ""
    )
    return Plan(host, action, path=path, content=json.dumps(data, indent=2) + "\n", after=after)


def apply(p: Plan) -> str:
    """Carry ``p`` out; returns one line saying what was done."""
    if p.argv is not None:
        for argv in [p.first, p.argv] if p.first else [p.argv]:
            _run(argv)
        done = "replaced" if p.first else f"{p.action}ed"
        return f"{p.host.title}: {done} boost ({' '.join(p.argv[1:3])} …)"
    if p.content is None:
        return p.note
    assert p.path is not None
    if p.after:  # JSONC: keep the file with its comments beside the rewritten one
        atomic.write_text(
            p.path.with_name(p.path.name + BACKUP), p.path.read_text(encoding="utf-8")
        )
    atomic.write_text(p.path, p.content)
    return f"{p.host.title}: {p.action}ed boost in {p.path}"


def _run(argv: List[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BoostError(f"{argv[0]} failed: {exc}", "run the command by hand") from None
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise BoostError(
            f"{' '.join(argv[:3])} … exited {done.returncode}{': ' + why[-1][:200] if why else ''}",
            "run it by hand to see why: " + " ".join(_quote(a) for a in argv),
        )


def found(which: Callable[[str], Optional[str]] = shutil.which) -> List[Dict[str, Any]]:
    """Every known host, as `boost mcp register --list` shows it: its CLI on PATH or its
    config file, and whether boost is in that file."""
    rows: List[Dict[str, Any]] = []
    for host in HOSTS.values():
        row: Dict[str, Any] = {"host": host.name, "title": host.title}
        if host.cli is not None:
            exe = which(host.cli)
            row.update({"how": f"{host.cli} mcp add", "found": exe is not None, "where": exe})
            row["registered"] = user_entry(host) is not None
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


# --------------------------------------------------------------------------- reading back


@dataclass(frozen=True)
class Registered:
    """boost as a host has it registered: the command, the environment its config sets,
    the variables it passes through (Codex's ``env_vars``), and the file it is in."""

    host: Host
    command: List[str]
    env: Env
    where: Path
    passes: Tuple[str, ...] = ()


# The environment Codex gives a server besides its config's ``env`` (codex-rs's MCP client
# passes these alone, on Unix; `env_vars` in the config adds names).
CODEX_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ")


def host_env(reg: Registered, environ: Optional[Mapping[str, str]] = None) -> Env:
    """The environment ``reg``'s host starts boost with, from a shell with ``environ``."""
    environ = os.environ if environ is None else environ
    if reg.host.inherits:
        base = dict(environ)
    else:
        base = {k: environ[k] for k in (*CODEX_ENV, *reg.passes) if k in environ}
    return {**base, **reg.env}


def _strings(value: Any) -> Optional[List[str]]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _from_json(host: Host, entry: Any, where: Path) -> Optional[Registered]:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = _strings(entry.get("args", [])) or []
    env = entry.get("env") or {}
    if not isinstance(env, dict):
        return None
    env = {str(k): str(v) for k, v in env.items()}
    return Registered(host, [entry["command"], *args], env, where)


def _json_entry(path: Path, *keys: str) -> Any:
    """``path``'s JSON at ``keys`` (None when the file, or a key, is not there)."""
    try:
        text = path.read_text(encoding="utf-8")
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = jsonc(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


def _toml_value(text: str) -> Any:
    """A TOML value of the few shapes a host's ``mcp add`` writes: a string, an array of
    strings, an inline table of strings (None for any other)."""
    text = text.strip()
    if text.startswith("'") and text.endswith("'") and len(text) > 1:
        return text[1:-1]
    if text.startswith("{") and text.endswith("}"):
        out = {}
        for part in filter(None, (p.strip() for p in text[1:-1].split(","))):
            k, eq, v = part.partition("=")
            value = _toml_value(v)
            if not eq or not isinstance(value, str):
                return None
            out[k.strip().strip('"')] = value
        return out
    try:
        return json.loads(text)  # basic strings and arrays of them read as JSON does
    except ValueError:
        return None


def _toml_tables(text: str, *names: str) -> Dict[str, Dict[str, Any]]:
    """The key/value lines of the TOML tables ``names`` (``[name]`` headers), one line a
    key: the part of ``~/.codex/config.toml`` boost needs, without a TOML library."""
    out: Dict[str, Dict[str, Any]] = {}
    table: Optional[Dict[str, Any]] = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            header = line.strip("[]").strip()
            table = out.setdefault(header, {}) if header in names else None
        elif table is not None and "=" in line and not line.startswith("#"):
            k, _, v = line.partition("=")
            table[k.strip().strip('"')] = _toml_value(v)
    return out


def _codex(host: Host) -> Optional[Registered]:
    base = Path(os.environ.get("CODEX_HOME") or _home() / ".codex")
    path = base / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head = f"mcp_servers.{SERVER}"
    tables = _toml_tables(text, head, f"{head}.env")
    server = tables.get(head)
    if server is None or not isinstance(server.get("command"), str):
        return None
    env = tables.get(f"{head}.env") or server.get("env") or {}
    args = _strings(server.get("args", [])) or []
    passes = tuple(_strings(server.get("env_vars", [])) or ())
    env = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    return Registered(host, [server["command"], *args], env, path, passes)


def user_entry(host: Host) -> Optional[Registered]:
    """boost in the user-wide config a host CLI's ``mcp add`` writes (what register adds
    and unregister removes), or None."""
    if host.name == "codex":
        return _codex(host)
    where = {"claude": _home() / ".claude.json", "gemini": _home() / ".gemini" / "settings.json"}
    path = where.get(host.name)
    return None if path is None else _from_json(host, _json_entry(path, "mcpServers", SERVER), path)


def registered(name: str, cwd: Optional[Path] = None) -> Optional[Registered]:
    """boost as host ``name`` would start it in ``cwd`` (its config files, the one that
    wins first), or None when boost is not registered there."""
    host = get(name)
    cwd = cwd or Path.cwd()
    if host.name == "codex":
        return _codex(host)
    if host.name == "claude":  # local (this project), project (.mcp.json), then user scope
        user = _home() / ".claude.json"
        for where, keys in (
            (user, ("projects", str(cwd), "mcpServers", SERVER)),
            (cwd / ".mcp.json", ("mcpServers", SERVER)),
            (user, ("mcpServers", SERVER)),
        ):
            found = _from_json(host, _json_entry(where, *keys), where)
            if found is not None:
                return found
        return None
    if host.name == "gemini":  # project settings, then the user's
        for where in (cwd / ".gemini" / "settings.json", _home() / ".gemini" / "settings.json"):
            found = _from_json(host, _json_entry(where, "mcpServers", SERVER), where)
            if found is not None:
                return found
        return None
    assert host.config is not None
    path = host.config()
    return _from_json(host, _json_entry(path, host.key, SERVER), path)
