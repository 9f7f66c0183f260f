"""`boost search`: the shortlist, as text for people or JSON for programs."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.commands.render import (
    BOLD,
    DIM,
    NORMAL,
    advise,
    color_enabled,
    detail,
    emit_json,
    err,
    fold,
    id_lines,
    mark_terms,
    note,
    out,
    paint,
    quiet,
    say,
    width,
    wrap,
)
from boost_cli.core import records, registry, search, settings, skillmap, trust_scan
from boost_cli.core.errors import UsageError
from boost_cli.core.models import Hit
from boost_cli.core.text import one_line, printable


def _default_engine() -> Optional[str]:
    engine = settings.get("engine")
    return None if engine == "auto" else str(engine)


def cmd_search(args: argparse.Namespace) -> int:
    keys = records.fields(args.fields) if args.fields else None
    opts = search.SearchOptions(
        query=" ".join(args.query),
        limit=args.limit if args.limit is not None else settings.get("limit"),
        kind=args.kind,
        taps=tuple(args.tap),
        rerank="none" if args.no_rerank or args.no_llm else "auto",
        expand="none" if args.no_llm else "auto",
        engine=args.engine or _default_engine(),
        keywords=search.keyword_list(args.keywords),
        min_score=args.min_score,
    )
    result = search.run(opts)
    taps = {t.name: t for t in registry.list_taps()}
    for line in result.notes:
        note(f"note: {printable(line)}")
    wants_uri = args.explain or (keys is None or "uri" in keys)
    skills = skillmap.for_entries(h.entry for h in result.hits) if wants_uri else None
    if result.keyword_bound and result.hits and not quiet():
        # A hint for a person at a terminal, once a day (`advise`); composed only when
        # shown: it resolves the embedder (`semantic_fix`), which imports the embedding
        # package (~10 ms of a cold search).
        advise("semantic", lambda: f"note: {search.semantic_hint()}")
    view = trust_scan.View(taps)
    if getattr(args, "format", None):
        for line in format_lines(args.format, result.hits, taps, skills, view):
            out(line)
        return 1 if args.exit_status and not result.hits else 0
    if args.json or keys:
        fields = keys or records.HIT_FIELDS
        emit_json([records.hit_record(h, taps, fields, skills, view) for h in result.hits])
        if args.explain:
            err(json.dumps(result.diagnostics, indent=2))
    else:
        marks = {h.entry.id: trust_scan.marker(view.flags(h.entry)) for h in result.hits}
        render_hits(result.hits, " ".join([opts.query, *opts.keywords]), args.explain, marks)
        if not result.hits:  # a hint, not a result: stderr, so `| wc -l` counts hits
            err(
                f"No matches for {printable(repr(opts.query))}. Try other words, or "
                "'boost tap --catalog --list' for more registries."
            )
        if args.explain:
            out("")
            # printable: the keywords shown may be an LLM's (model output)
            for line in printable(
                render_explain(result.diagnostics), keep_newlines=True
            ).splitlines():
                say(line, " " * (len(line) - len(line.lstrip()) + 2))
            for line in render_served(result.hits, skills):
                say(printable(line), "    ")
            why = ((result.diagnostics.get("index") or {}).get("dense") or {}).get("backend_note")
            if why:  # the exact scan gives the same results: a hint, not a problem
                advise("sqlite", lambda: f"note: {why}")
    detail(_summary(result.diagnostics))
    return 1 if args.exit_status and not result.hits else 0


def render_served(hits: Sequence[Hit], skills: Optional[skillmap.Statuses]) -> List[str]:
    """For --explain: how each skill hit is served over MCP (its skill:// URI), or why not."""
    lines = []
    for rank, h in enumerate(hits, start=1):
        if skills is None:
            continue
        uri = skills.uri_of(h.entry.tap, h.entry.path)
        refused = skills.refused_of(h.entry.tap, h.entry.path)
        if uri:
            lines.append(f"{rank}. MCP skill: {uri}")
        elif refused:
            lines.append(
                f"{rank}. MCP skill: not served ({refused.message()}); boost_get_skill reads it"
            )
    return ["MCP Skills extension:", *lines] if lines else []


_FIELD = re.compile(r"{([a-z_]+)}")


def format_lines(
    template: str,
    hits: Sequence[Hit],
    taps: Dict[str, Any],
    skills: Optional[skillmap.Statuses] = None,
    view: Optional[trust_scan.View] = None,
) -> List[str]:
    """Each hit as ``template`` with ``{field}`` replaced by the hit record's field (the
    `records.HIT_FIELDS`), ``\\t`` and ``\\n`` as tab and newline: one line per hit for
    fzf-style pipelines. Values are one line, tabs made spaces, control characters escaped,
    so a registry's text cannot add a field or a line."""
    names = _FIELD.findall(template)
    bad = [n for n in names if n not in records.HIT_FIELDS]
    if bad or not names:
        raise UsageError(
            f"unknown field {{{bad[0]}}} in --format" if bad else "--format names no {field}",
            f"use {{{'}, {'.join(records.HIT_FIELDS)}}}",
        )
    pattern = template.replace("\\t", "\t").replace("\\n", "\n")
    lines = []
    for h in hits:
        rec = records.hit_record(h, taps, records.HIT_FIELDS, skills, view)

        def value(m: re.Match[str], rec: Dict[str, Any] = rec) -> str:
            v = rec[m.group(1)]
            text = ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
            return printable(one_line(text).replace("\t", " "))

        lines.append(_FIELD.sub(value, pattern))
    return lines


def copies_lines(h: Hit) -> List[str]:
    """What was folded into the hit: byte-identical copies ("same file") and near-duplicates
    ("similar"), each with the first few names."""
    similar = set(h.similar)
    groups = (
        ("same file also in", [n for n in h.also_in if n not in similar]),
        ("similar copies in", [n for n in h.also_in if n in similar]),
    )
    lines = []
    for label, names in groups:
        if names:
            n = len(names)
            shown = ", ".join(names[:3]) + (f" (+{n - 3} more)" if n > 3 else "")
            lines.append(f"{label} {n} other place{'' if n == 1 else 's'}: {shown}")
    return lines


def render_hits(
    hits: Sequence[Hit],
    terms: str,
    explain: bool = False,
    marks: Optional[Mapping[str, str]] = None,
) -> None:
    """The shortlist for a person: rank, ``tap:name``, kind and match on one line (and the
    trust marker of a flagged hit, ``marks`` by entry id), then the reason and the copies,
    wrapped to the terminal and indented under the name."""
    columns = width()
    style = color_enabled(sys.stdout)
    best = max((h.score for h in hits), default=0.0)
    indent = "    "
    for rank, h in enumerate(hits, start=1):
        name = printable(h.entry.qualified_name)
        tail = f"[{h.entry.kind}]  {match(h.score, best)}"
        mark = (marks or {}).get(h.entry.id)
        if mark:
            tail += f"  {mark}"
        head = f"{rank:2d}. {name}  {tail}"
        # A long id keeps the rank's line (cut only after a '/' or ':'), the kind and match
        # under it; but an id that fits the width only without the rank gets a line of its
        # own, whole (so it copies as one), under the rank, kind and match.
        if columns is None or len(head) <= columns:
            lines = [head]
        elif len(head) - len(tail) - 2 > columns and len(name) <= columns:
            lines = [f"{rank:2d}. {tail}", *id_lines(name, columns, indent)]
        else:
            lines = [*fold(head[: -len(tail) - 2], columns, indent), indent + tail]
        for line in lines:
            out(line.replace(name, paint(name, BOLD, style, NORMAL), 1) if name in line else line)
        if h.why:
            # An LLM's summary written at index time is never shown as the skill's words.
            why = f"(enrichment) {h.why}" if h.why_source == "enrichment" else h.why
            for line in wrap(printable(why), indent, columns):
                out(mark_terms(line, terms, style))
        for copies in copies_lines(h):
            for line in wrap(printable(copies), indent, columns):
                out(paint(line, DIM, style, NORMAL))
        if explain:
            ranks = ", ".join(f"{k} #{v}" for k, v in h.ranks.items())
            text = f"ranks: {ranks}  score: {h.score:.3f}  path: {printable(h.entry.path)}"
            for line in wrap(text, indent, columns):
                out(line)


def match(score: float, best: float) -> str:
    """A hit's score as a labelled share of the best score in the list: ``match 87%``.
    Raw scores (BM25 sums, fused ranks) have no fixed scale; the share reads the same
    for every engine, and --explain and --json keep the raw number."""
    share = round(100 * score / best) if best > 0 else 0
    return f"match {max(min(share, 100), 0)}%"


def _summary(d: Dict[str, Any]) -> str:
    rr = d.get("rerank", {})
    total = d.get("timings", {}).get("total_ms")
    return (
        f"engine {d.get('engine')}, {d.get('candidates')} candidates, rerank {rr.get('status')}"
        + (f", {total:.0f} ms" if isinstance(total, (int, float)) else "")
    )


def _where(step: Dict[str, Any]) -> Tuple[str, ...]:
    """Where an LLM step was asked: its endpoint and whether that is this machine."""
    if not step.get("endpoint"):
        return ()
    return (printable(str(step["endpoint"])), "on this machine" if step.get("local") else "remote")


def render_explain(d: Dict[str, Any]) -> str:
    lines = [f"engine: {d.get('engine')}"]
    if d.get("keywords"):
        source = (d.get("expansion") or {}).get("source", "caller")
        by = "from the LLM" if source == "llm" else "given"
        lines.append(f"keywords ({by}): {', '.join(d['keywords'])}")
    if d.get("related"):
        # The hybrid widens BM25 from the skills nearest in meaning; BM25 alone from the
        # company words keep in the taps' descriptions (docs/dense.md, docs/benchmarks.md).
        source = (
            "from the skills nearest in meaning"
            if d.get("engine") == "hybrid"
            else "learnt from the taps"
        )
        lines.append(f"related terms ({source}): {', '.join(d['related'])}")
    for hint in d.get("engine_notes", []):
        lines.append(f"  degraded/hint: {hint}")
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
    shown = d.get("rerank_candidates")
    lines.append(
        f"candidates: {d.get('candidates')} distinct files retrieved"
        + (f", {shown} shown to the reranker" if shown else "")
    )
    ex = d.get("expansion", {})
    if ex:
        how = ", ".join(
            str(x)
            for x in (
                ex.get("backend"),
                ex.get("model"),
                *_where(ex),
                "cached" if ex.get("cached") else None,
            )
            if x
        )
        detail = ex.get("reason") or ""
        lines.append(
            f"expansion: {ex.get('status')}{' (' + how + ')' if how else ''}{': ' + str(detail) if detail else ''}"
        )
    rr = d.get("rerank", {})
    detail = rr.get("reason") or rr.get("model") or ""
    how = ", ".join(str(x) for x in (rr.get("backend"), *_where(rr)) if x)
    lines.append(
        f"rerank: {rr.get('status')}{' (' + how + ')' if how else ''}{': ' + str(detail) if detail else ''}"
    )
    if rr.get("not_lifted"):
        lines.append(
            f"  not lifted (picked, but scored under {search.LIFT_FLOOR:.0%} of the best): "
            + ", ".join(rr["not_lifted"])
        )
    for name, m in (d.get("enrichment") or {}).items():
        who = f"{m.get('model')}, prompt v{m.get('prompt_version')}"
        if m.get("origin") == "imported":
            who += ", imported"
        if not m.get("current"):
            who += ", another prompt version"
        lines.append(
            f"enrichment: {name} matched through its enrichment on "
            f"{', '.join(m.get('words', []))} ({who})"
        )
    t = d.get("timings", {})
    lines.append("timings: " + ", ".join(f"{k[:-3]} {v:.1f} ms" for k, v in t.items()))
    return "\n".join(lines)
