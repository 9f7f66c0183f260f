"""`boost mcp --check`: start the MCP server as each host would, and search with it.

It runs ``boost mcp`` as a child process, first as this shell would start it (this Python,
this boost, this environment), then as every host where boost is registered would (the
command and environment its config holds, with the environment that host passes on:
`hosts.host_env`), speaks the stdio transport to each (``initialize``,
``notifications/initialized``, ``tools/list``, ``boost_list_taps`` and a real
``boost_search``), and prints what a host would see. A server that does not answer, a
search that fails, a home with no taps, or a home that is not the one this shell uses
(Codex, say, which passes no ``BOOST_HOME`` on) is a failure: the check exits 1 and says
how to fix it. Nothing is registered anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from boost_cli.commands.render import emit_json, out
from boost_cli.core import hosts, paths
from boost_cli.core.errors import BoostError
from boost_cli.core.text import printable

TIMEOUT = 60.0
PROTOCOL = "2025-11-25"
QUERY = "write and run tests for a project"  # what the check searches for


def _messages() -> str:
    msgs: List[Dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "boost-mcp-check", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "boost_list_taps", "arguments": {}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "boost_search", "arguments": {"query": QUERY, "limit": 3}},
        },
    ]
    return "".join(json.dumps(m) + "\n" for m in msgs)


def home_of(env: Mapping[str, str]) -> Path:
    """The home a boost started with ``env`` uses (`paths.boost_home`'s rule)."""
    given = env.get("BOOST_HOME")
    if given:
        return Path(os.path.expanduser(given))
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".boost"


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _text(result: Mapping[str, Any]) -> str:
    parts = result.get("content") or []
    first = parts[0] if parts and isinstance(parts[0], dict) else {}
    return str(first.get("text", ""))


def run_check(
    argv: Optional[List[str]] = None, env: Optional[Mapping[str, str]] = None
) -> Dict[str, Any]:
    """Start the server ``argv`` with ``env`` (default: as this shell would), talk to it,
    and return what it answered (BoostError when it does not answer)."""
    argv = argv or [sys.executable, "-m", "boost_cli", "mcp"]
    env = dict(os.environ if env is None else env)
    try:
        proc = subprocess.run(
            argv,
            input=_messages(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        raise BoostError(
            f"{printable(' '.join(argv))} did not answer within {TIMEOUT:.0f} s",
            "run 'boost doctor'",
        ) from exc
    except OSError as exc:
        raise BoostError(
            f"cannot start {printable(' '.join(argv))}: {printable(exc.strerror or str(exc))}",
            "register boost again with 'boost mcp register HOST'",
        ) from None
    replies: Dict[int, Dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise BoostError(
                f"boost mcp wrote a line that is not JSON: {printable(line[:80])}",
                "report it: nothing but JSON-RPC may reach stdout",
            ) from exc
        if isinstance(msg, dict) and isinstance(msg.get("id"), int):
            replies[msg["id"]] = msg
    missing = [i for i in (1, 2, 3, 4) if "result" not in replies.get(i, {})]
    if missing:
        err = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise BoostError(
            f"boost mcp gave no answer to request {missing[0]} (exit {proc.returncode}): "
            f"{printable(err[:200])}",
            "run 'boost doctor'",
        )
    init, tools = replies[1]["result"], replies[2]["result"].get("tools", [])
    taps, found = replies[3]["result"], replies[4]["result"]
    hits = (found.get("structuredContent") or {}).get("results") or []
    return {
        # What a host's config should start: the boost on PATH, else this interpreter's.
        "command": f"{shutil.which('boost')} mcp" if shutil.which("boost") else " ".join(argv),
        "home": str(home_of(env)),
        "protocolVersion": init.get("protocolVersion"),
        "server": init.get("serverInfo", {}),
        "tools": [
            {
                "name": t.get("name"),
                "title": t.get("title"),
                "readOnly": bool((t.get("annotations") or {}).get("readOnlyHint")),
            }
            for t in tools
        ],
        "taps": len((taps.get("structuredContent") or {}).get("taps", [])),
        "list_taps_error": bool(taps.get("isError")),
        "search": {
            "query": QUERY,
            "error": _text(found)[:200] if found.get("isError") else None,
            "hits": len(hits),
        },
    }


def problem(report: Mapping[str, Any], mine: Path) -> Optional[str]:
    """What is wrong with a server that answered ``report``, for a user whose home is
    ``mine``; None when nothing is."""
    home = Path(report["home"])
    if not _same(home, mine):
        return f"it uses the home {home}, not {mine} (yours)"
    if report["taps"] == 0:
        return f"its home {home} has no taps"
    if report["search"]["error"]:
        return f"boost_search failed: {report['search']['error']}"
    return None


def check_hosts(cwd: Path, mine: Path) -> List[Dict[str, Any]]:
    """Every host where boost is registered, checked as that host would start it."""
    rows: List[Dict[str, Any]] = []
    for name in hosts.names():
        reg = hosts.registered(name, cwd)
        if reg is None:
            continue
        row: Dict[str, Any] = {
            "host": name,
            "title": reg.host.title,
            "config": str(reg.where),
            "command": reg.command,
            "env": sorted(reg.env),
        }
        try:
            report = run_check(reg.command, hosts.host_env(reg))
        except BoostError as exc:
            row.update(problem=str(exc), home=None, taps=None, hits=None)
        else:
            row.update(
                problem=problem(report, mine),
                home=report["home"],
                taps=report["taps"],
                hits=report["search"]["hits"],
            )
        rows.append(row)
    return rows


def cmd_check(args: argparse.Namespace) -> int:
    mine = paths.boost_home()
    report = run_check()
    report["problem"] = problem(report, mine)
    report["hosts"] = check_hosts(Path.cwd(), mine)
    failed = [r for r in [report, *report["hosts"]] if r["problem"]]
    if getattr(args, "json", False):
        emit_json(report)
    else:
        server = report["server"]
        out(
            f"started: {printable(report['command'])} — {printable(str(server.get('name')))} "
            f"{printable(str(server.get('version')))}, protocol {report['protocolVersion']}"
        )
        out(f"tools ({len(report['tools'])}):")
        for t in report["tools"]:
            mode = "read-only" if t["readOnly"] else "writes"
            out(f"  {t['name']:<22} {mode:<9} {printable(t['title'] or '')}")
        out(f"boost_list_taps: {report['taps']} tap(s) in {printable(report['home'])}")
        out(f"boost_search {QUERY!r}: {report['search']['hits']} hit(s)")
        for row in report["hosts"]:
            state = f"FAILS: {row['problem']}" if row["problem"] else "ok"
            out(
                f"{row['host']}: {printable(' '.join(row['command']))} ({printable(row['config'])}"
                f"{', env ' + ', '.join(row['env']) if row['env'] else ''}): "
                + printable(state)
                + (f"; {row['taps']} tap(s), {row['hits']} hit(s)" if not row["problem"] else "")
            )
        if not failed:
            out("ok: a host that starts this command gets these tools, and boost_search works")
    if failed:
        first = failed[0]
        who = first.get("title") or "boost mcp from this shell"
        fix = (
            f"run 'boost mcp register {first['host']}' again from the shell you run boost in"
            if "host" in first
            else "run 'boost tap --defaults' (or set BOOST_HOME to the home you use)"
        )
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise BoostError(f"{who}: {first['problem']}{more}", fix)
    return 0
