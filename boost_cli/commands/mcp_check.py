"""`boost mcp --check`: start the MCP server as a host would and list its tools.

It runs ``boost mcp`` as a child process (this Python, this boost), speaks the stdio
transport to it (``initialize``, ``notifications/initialized``, ``tools/list`` and a
``boost_list_taps`` call), and prints what a host would see, or one line saying what
failed. Nothing is registered anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List

from boost_cli.commands.render import emit_json, out
from boost_cli.core.errors import BoostError
from boost_cli.core.text import printable

TIMEOUT = 60.0
PROTOCOL = "2025-11-25"


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
    ]
    return "".join(json.dumps(m) + "\n" for m in msgs)


def run_check() -> Dict[str, Any]:
    """Start the server, talk to it, and return what it answered (BoostError on failure)."""
    argv = [sys.executable, "-m", "boost_cli", "mcp"]
    try:
        proc = subprocess.run(
            argv,
            input=_messages(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=os.environ.copy(),
        )
    except subprocess.TimeoutExpired as exc:
        raise BoostError(
            f"boost mcp did not answer within {TIMEOUT:.0f} s", "run 'boost doctor'"
        ) from exc
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
    missing = [i for i in (1, 2, 3) if "result" not in replies.get(i, {})]
    if missing:
        err = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise BoostError(
            f"boost mcp gave no answer to request {missing[0]} (exit {proc.returncode}): "
            f"{printable(err[:200])}",
            "run 'boost doctor'",
        )
    init, tools = replies[1]["result"], replies[2]["result"].get("tools", [])
    taps = replies[3]["result"]
    return {
        # What a host's config should start: the boost on PATH, else this interpreter's.
        "command": f"{shutil.which('boost')} mcp" if shutil.which("boost") else " ".join(argv),
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
    }


def cmd_check(args: argparse.Namespace) -> int:
    report = run_check()
    if getattr(args, "json", False):
        emit_json(report)
        return 0
    server = report["server"]
    out(
        f"started: {report['command']} — {server.get('name')} {server.get('version')}, "
        f"protocol {report['protocolVersion']}"
    )
    out(f"tools ({len(report['tools'])}):")
    for t in report["tools"]:
        mode = "read-only" if t["readOnly"] else "writes"
        out(f"  {t['name']:<22} {mode:<9} {printable(t['title'] or '')}")
    out(f"boost_list_taps: {report['taps']} tap(s)")
    out("ok: a host that starts this command gets these tools")
    return 0
