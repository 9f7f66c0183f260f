"""`boost doctor`: what boost can do on this machine right now, and how to fix what it can't."""

from __future__ import annotations

import argparse
import os
import shutil
from typing import Any, Dict, List

from boost_cli.commands.render import emit_json, out
from boost_cli.core import paths, registry
from boost_cli.core.errors import BoostError


def collect() -> Dict[str, Any]:
    report: Dict[str, Any] = {"home": str(paths.boost_home())}
    taps = registry.list_taps()
    report["taps"] = [
        {"name": t.name, "commit": t.commit, "counts": t.counts, "clone": t.root.is_dir()}
        for t in taps
    ]
    fixes: List[str] = []
    if not taps:
        fixes.append("no taps: run 'boost tap --defaults'")
    missing = [t.name for t in taps if not t.root.is_dir()]
    if missing:
        fixes.append(
            f"clones missing for {', '.join(missing)}: 'boost untap NAME' then 'boost tap SOURCE'"
        )
    from boost_cli.core import index

    try:
        reader = index.open_index()
    except BoostError as exc:
        report["index"] = {"status": "damaged", "reason": str(exc)}
        fixes.append("index damaged: run 'boost reindex --force'")
    else:
        if reader is None:
            report["index"] = {"status": "missing"}
            if taps:
                fixes.append("no search index: run 'boost reindex'")
        else:
            stale = sorted(t.name for t in taps if reader.commits.get(t.name) != t.commit)
            report["index"] = {
                "status": "stale" if stale else "fresh",
                "generated": reader.generated,
                "stale_taps": stale,
            }
            if stale:
                fixes.append("index out of date: run 'boost reindex'")
    from boost_cli.core import dense

    st = dense.open_status()
    report["dense"] = {
        "ready": st.ready,
        "exists": st.exists,
        "reason": st.reason,
        "fix": st.fix,
        "info": st.info,
    }
    backend, note = dense.backend_status()
    report["dense"]["backend"] = backend
    report["dense"]["backend_note"] = note
    report["llm"] = {
        "anthropic_api_key": bool(os.environ.get("ANTHROPIC_API_KEY")),
        "claude_cli": shutil.which("claude") is not None,
    }
    report["gh_cli"] = shutil.which("gh") is not None
    report["fixes"] = fixes
    return report


def cmd_doctor(args: argparse.Namespace) -> int:
    r = collect()
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
