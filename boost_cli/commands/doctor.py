"""`boost doctor`: what boost can do on this machine right now, and how to fix what it can't."""

from __future__ import annotations

import argparse

from boost_cli.commands import render
from boost_cli.commands.render import emit_json
from boost_cli.core import status
from boost_cli.core.text import printable


def out(text: str = "") -> None:
    """`render.out` with control characters escaped: paths, reasons and tap names here may
    come from the environment, the config or a registry."""
    render.out(printable(text))


def cmd_doctor(args: argparse.Namespace) -> int:
    r = status.doctor()
    if args.json:
        emit_json(r)
        return 0
    out(f"home: {r['home']}")
    out(f"taps: {len(r['taps'])}")
    idx = r["index"]
    out(
        f"index: {idx['status']}"
        + (f" (generated {idx.get('generated')})" if idx.get("generated") else "")
    )
    d = r["dense"]
    out(
        f"dense: {'ready' if d['ready'] else 'off'} — store backend {d['backend']}"
        + (f"; {d['reason']}" if d.get("reason") else "")
    )
    if d.get("backend_note"):
        out(f"  {d['backend_note']}")
    llm = r["llm"]
    if llm["anthropic_api_key"]:
        out("rerank: Anthropic Messages API (ANTHROPIC_API_KEY is set)")
    elif llm["claude_cli"]:
        out("rerank: claude CLI")
    else:
        out("rerank: off — set ANTHROPIC_API_KEY or install the claude CLI for LLM reranking")
    out(
        f"gh: {'found' if r['gh_cli'] else 'not found (boost discover needs it: https://cli.github.com)'}"
    )
    for fix in r["fixes"]:
        out(f"fix: {fix}")
    return 0
