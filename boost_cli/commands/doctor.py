"""`boost doctor`: what boost can do on this machine right now, and how to fix what it can't."""

from __future__ import annotations

import argparse
from typing import Any, Dict

from boost_cli.commands.render import emit_json, out
from boost_cli.core import status


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
    if d.get("embedder"):
        out(f"embedder: {_embedder(d['embedder'])}; store {d['store_bytes'] / 1e6:.1f} MB")
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


def _embedder(e: Dict[str, Any]) -> str:
    """The embedder in one line: ``local all-MiniLM-L6-v2-int8, in process (2 threads,
    model 22.9 MB from …)`` or ``voyage voyage-3.5-lite, remote (api.voyageai.com)``."""
    where = "remote" if e.get("remote") else "in process" if e["host"] == "local" else "local"
    details = [f"{e['threads']} threads"] if "threads" in e else []
    if e.get("model_bytes"):
        details.append(f"model {e['model_bytes'] / 1e6:.1f} MB from {e['model_file']}")
    details.append(e.get("problem") or "")
    if e["host"] != "local":
        details.insert(0, e["host"])
    shown = "; ".join(d for d in details if d)
    return f"{e['provider']} {e['model']}, {where}" + (f" ({shown})" if shown else "")
