"""`boost doctor`: what boost can do on this machine right now, and how to fix what it can't.

Exits 1 when it printed a ``fix:`` line (like ``brew doctor``), so a script or CI step can
check a setup with ``boost doctor -q``; 0 when everything works.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, Mapping

from boost_cli.commands.render import YELLOW, color_enabled, emit_json, out, paint, say, width, wrap
from boost_cli.core import status
from boost_cli.core.text import printable


def line(text: str) -> None:
    """A report line, wrapped to the terminal under a hanging indent."""
    say(text, " " * (len(text) - len(text.lstrip()) + 2))


def cmd_doctor(args: argparse.Namespace) -> int:
    r = status.doctor()
    if args.json:
        emit_json(r)
        return 1 if r["fixes"] else 0
    line(f"boost: {r['boost']} on Python {printable(r['python'])}")
    line(
        f"home: {printable(r['home'])} ({size_text(r['disk']) if r['disk'] else 'not created yet'})"
    )
    if not r["writable"]:
        line(f"  not writable: {printable(r['write_problem'])}")
    cfg = r["config"]
    if cfg["status"] != "ok":
        line(f"config: {cfg['status']} — {printable(cfg['reason'])}")
    line(f"taps: {len(r['taps'])}")
    idx = r["index"]
    line(
        f"index: {idx['status']}"
        + (f" (generated {idx.get('generated')})" if idx.get("generated") else "")
    )
    en = r["enrich"]
    if en["status"] == "damaged":
        line("enrichment: damaged (see the fixes below)")
    elif en["status"] == "ok":
        made = "; ".join(
            f"{b['items']} by {printable(b['model'])}, prompt v{b['prompt_version']}"
            + (", imported" if b["origin"] == "imported" else "")
            + ("" if b["current"] else " (another prompt version)")
            for b in en["by"]
        )
        line(
            f"enrichment: {en['items']} texts ({made or 'none'})"
            + ("" if en["indexed"] else "; not in the index yet")
        )
    d = r["dense"]
    line(
        f"dense: {'ready' if d['ready'] else 'off'} — store backend {d['backend']}"
        + (f"; {printable(d['reason'])}" if d.get("reason") else "")
        + (f"; out of date for {len(d['stale_taps'])} taps" if d.get("stale_taps") else "")
        + ("; read-only (see the fixes below)" if d["info"].get("read_only") else "")
    )
    if d.get("backend_note"):
        line(f"  {printable(d['backend_note'])}")
    if d.get("embedder"):
        line(f"embedder: {_embedder(d['embedder'])}; store {_mb(d['store_bytes'])}")
    llm = r["llm"]
    failing = llm.get("failing") or {}
    provider = llm.get("provider") or {}
    backend = provider.get("backend")
    if llm.get("off"):
        undo = "unset BOOST_NO_LLM" if "BOOST_NO_LLM" in llm["off"] else "'boost config set llm on'"
        line(f"rerank: off — {llm['off']} ({undo} turns it on)")
    elif backend in failing:
        line(f"rerank: not working — {printable(failing[backend]['text'])}")
    elif provider.get("problem"):
        line(f"rerank: not working — {printable(provider['problem'])}")
    elif backend:
        line(f"rerank: {llm_line(provider)}")
    else:
        line(
            "rerank: off — no LLM found: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
            "GEMINI_API_KEY, point BOOST_LLM_BASE_URL at a local model, or install the claude, "
            "codex or gemini CLI (docs/llm.md)"
        )
    sem = r["semantic"]
    by = {"llm": "LLM expansion and rerank", "dense": "the vector store"}
    if sem["by"]:
        line(f"semantic search: on ({' and '.join(by[b] for b in sem['by'])})")
    elif sem["hint"]:
        line(f"semantic search: off (no LLM, no vector store) — {printable(sem['hint'])}")
    else:
        line("semantic search: off (no LLM; the vector store cannot answer: see dense)")
    line(
        f"gh: {'found' if r['gh_cli'] else 'not found (boost discover needs it: https://cli.github.com)'}"
    )
    style = color_enabled(sys.stdout)
    for fix in r["fixes"]:
        for part in wrap(f"fix: {printable(fix)}", "  ", width()):
            out(paint(part, YELLOW, style))
    return 1 if r["fixes"] else 0


def llm_line(p: Mapping[str, Any]) -> str:
    """The LLM in one line: ``OpenAI-compatible server, model qwen2.5:3b at
    http://127.0.0.1:11434/v1 (on this machine)`` or ``claude CLI, model … (remote)``; the
    endpoint never carries a key (`llm.shown_endpoint`)."""
    title, model, endpoint = p.get("title"), p.get("model"), p.get("endpoint")
    at = f" at {endpoint}" if endpoint and endpoint != title else ""
    where = "on this machine" if p.get("local") else "remote"
    how = ", chosen by BOOST_LLM_PROVIDER or llm.provider" if p.get("named") else ""
    return printable(f"{title}, model {model}{at} ({where}{how})")


def size_text(disk: Mapping[str, int]) -> str:
    """``233 MB: repos 180 MB, cache 53 MB`` from `status.disk_use`."""
    parts = [f"{k} {_mb(v)}" for k, v in disk.items() if k != "total" and v >= 1_000_000]
    total = _mb(disk.get("total", 0))
    return f"{total} on disk" + (f": {', '.join(parts)}" if parts else "")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n < 10e6 else f"{n / 1e6:.0f} MB"


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
