"""`boost search`: the shortlist, as text for people or JSON for programs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict

from boost_cli.commands.render import color_enabled, emit_json, err, mark_terms, out
from boost_cli.core import records, registry, search
from boost_cli.core.text import printable


def cmd_search(args: argparse.Namespace) -> int:
    opts = search.SearchOptions(
        query=" ".join(args.query),
        limit=args.limit,
        kind=args.kind,
        taps=tuple(args.tap),
        rerank="none" if args.no_rerank or args.no_llm else "auto",
        expand="none" if args.no_llm else "auto",
        engine=args.engine,
        keywords=search.keyword_list(args.keywords),
    )
    result = search.run(opts)
    taps = {t.name: t for t in registry.list_taps()}
    if args.json:
        emit_json([records.hit_record(h, taps) for h in result.hits])
        for note in result.notes:
            err(f"note: {note}")
        if args.explain:
            err(json.dumps(result.diagnostics, indent=2))
        return 0
    for note in result.notes:
        err(f"note: {printable(note)}")
    if not result.hits:
        out(
            f"No matches for {printable(repr(opts.query))}. Try other words, or 'boost tap --catalog --list' for more registries."
        )
    style = color_enabled(sys.stdout)
    terms = " ".join([opts.query, *opts.keywords])
    for rank, h in enumerate(result.hits, start=1):
        out(f"{rank:2d}. {printable(h.entry.qualified_name)}  [{h.entry.kind}]  {h.score:.3f}")
        if h.why:
            out(f"    {mark_terms(h.why, terms, style)}")
        if h.also_in:
            more = f" (+{len(h.also_in) - 3} more)" if len(h.also_in) > 3 else ""
            out(f"    also in: {printable(', '.join(h.also_in[:3]))}{more}")
        if args.explain:
            ranks = ", ".join(f"{k} #{v}" for k, v in h.ranks.items())
            out(f"    ranks: {ranks}  path: {printable(h.entry.path)}")
    if args.explain:
        out("")
        out(printable(render_explain(result.diagnostics), keep_newlines=True))  # LLM keywords
    return 0


def render_explain(d: Dict[str, Any]) -> str:
    lines = [f"engine: {d.get('engine')}"]
    if d.get("keywords"):
        source = (d.get("expansion") or {}).get("source", "caller")
        by = "from the LLM" if source == "llm" else "given"
        lines.append(f"keywords ({by}): {', '.join(d['keywords'])}")
    for note in d.get("engine_notes", []):
        lines.append(f"  degraded/hint: {note}")
    info = d.get("index") or {}
    if info.get("generated"):
        lines.append(f"index: generated {info['generated']}, {len(info.get('commits', {}))} taps")
        for tap, commit in sorted(info.get("commits", {}).items()):
            lines.append(f"  {tap} @ {commit[:10]}")
        if info.get("stale_taps"):
            lines.append(f"  stale taps: {', '.join(info['stale_taps'])}")
    dense = info.get("dense")
    if dense:
        stale = sorted(
            t
            for t, c in dense.get("taps", {}).items()
            if info.get("commits", {}).get(t) not in (None, c)
        )
        lines.append(
            f"dense: {dense.get('provider')}/{dense.get('model')}, {dense.get('vectors')} vectors"
            f" ({dense.get('unit')} unit, {dense.get('dimensions')} dims), {dense.get('backend')} store"
            + (
                f"; embedded at older commits for {', '.join(stale)} — run 'boost reindex --dense'"
                if stale
                else ""
            )
        )
        if dense.get("backend_note"):
            lines.append(f"  {dense['backend_note']}")
    shown = d.get("rerank_candidates")
    lines.append(
        f"candidates: {d.get('candidates')} distinct files retrieved"
        + (f", {shown} shown to the reranker" if shown else "")
    )
    ex = d.get("expansion", {})
    if ex:
        how = ", ".join(
            str(x)
            for x in (ex.get("backend"), ex.get("model"), "cached" if ex.get("cached") else None)
            if x
        )
        detail = ex.get("reason") or ""
        lines.append(
            f"expansion: {ex.get('status')}{' (' + how + ')' if how else ''}{': ' + str(detail) if detail else ''}"
        )
    rr = d.get("rerank", {})
    detail = rr.get("reason") or rr.get("model") or ""
    lines.append(
        f"rerank: {rr.get('status')}{' (' + str(rr.get('backend')) + ')' if rr.get('backend') else ''}{': ' + str(detail) if detail else ''}"
    )
    t = d.get("timings", {})
    lines.append("timings: " + ", ".join(f"{k[:-3]} {v:.1f} ms" for k, v in t.items()))
    return "\n".join(lines)
