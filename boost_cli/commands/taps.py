"""`boost tap`, `boost taps`, `boost untap`, `boost update`."""

from __future__ import annotations

import argparse
from typing import Any, Dict, List

from boost_cli.commands.render import (
    counts_delta,
    counts_text,
    emit_json,
    err,
    out,
    progress,
    short,
    table,
)
from boost_cli.core import http, indexing, registry
from boost_cli.core.errors import BoostError, UsageError
from boost_cli.core.text import printable


def cmd_tap(args: argparse.Namespace) -> int:
    if args.list and not args.catalog:
        raise UsageError("--list goes with --catalog", "run 'boost tap --catalog --list'")
    if args.catalog or args.defaults:
        regs = registry.select_registries(
            kind=args.type,
            category=args.category,
            limit=args.limit,
            defaults=args.defaults and not args.catalog,
        )
        if args.list:
            return _list_catalog(regs, args.json)
        sources = [r["name"] for r in regs]
    else:
        if args.type or args.category or args.limit:
            raise UsageError("--type, --category and --limit go with --catalog")
        sources = list(args.sources)
    if not sources:
        raise UsageError(
            "nothing to tap", "give a SOURCE (OWNER/REPO, URL or path), --defaults or --catalog"
        )
    if args.name and len(sources) > 1:
        raise UsageError("--name needs exactly one SOURCE")
    existing = {t.name for t in registry.list_taps()}
    failures = 0
    results: List[Dict[str, Any]] = []
    bulk = len(sources) > 1
    for src in sources:
        try:
            info, scan = registry.add(src, name=args.name)
        except BoostError as exc:
            if bulk and "already exists" in exc.message:
                out(f"skip  {printable(src)}: already tapped")
                continue
            failures += 1
            results.append({"source": src, "error": str(exc)})
            if not bulk:
                raise
            err(f"fail  {printable(src)}: {printable(exc)}")
            continue
        existing.add(info.name)
        results.append({**info.to_dict(), "warnings": len(scan.warnings)})
        if not args.json:
            warn = (
                f" ({len(scan.warnings)} warnings: boost taps --warnings)" if scan.warnings else ""
            )
            out(
                printable(
                    f"Tapped {info.name} at {short(info.commit)}: {counts_text(info.counts)}{warn}"
                )
            )
    tapped = sum(1 for r in results if "error" not in r)
    refreshed = _refresh(quiet=args.json) if tapped else None
    if args.json:
        emit_json(results)
    if bulk and not args.json:
        hint = "" if refreshed else "; run 'boost reindex' to index them"
        out(f"{len(sources) - failures} of {len(sources)} sources tapped{hint}")
    return 1 if failures else 0


def _refresh(quiet: bool = False) -> bool:
    """Bring an existing search index up to date with the taps; False when there is none."""
    report = indexing.refresh(progress=progress("indexing"))
    if report is None:
        return False
    if report.built or report.removed:
        changed = len(report.built) + len(report.removed)
        message = f"Search index refreshed ({changed} tap{'' if changed == 1 else 's'} redone in {report.seconds:.1f} s)"
        (err if quiet else out)(message)
    return True


def _list_catalog(regs: List[Dict[str, Any]], as_json: bool) -> int:
    if as_json:
        emit_json(regs)
        return 0
    rows = [
        [
            r["name"],
            r.get("type", ""),
            r.get("category", ""),
            r.get("est_items", ""),
            "yes" if r.get("default") else "",
        ]
        for r in regs
    ]
    out(table(rows, ["REGISTRY", "KIND", "CATEGORY", "~ITEMS", "DEFAULT"]))
    out(
        f"\n{len(regs)} registries; tap them with 'boost tap --catalog' (filters: --type, --category, --limit)"
    )
    return 0


def cmd_taps(args: argparse.Namespace) -> int:
    taps = registry.list_taps()
    if args.json:
        data = []
        for t in taps:
            d = t.to_dict()
            if args.warnings:
                d["warning_lines"] = list(registry.scan(t).warnings) if t.root.is_dir() else []
            data.append(d)
        emit_json(data)
        return 0
    if not taps:
        out("No taps yet. Try 'boost tap --defaults' or 'boost tap OWNER/REPO'.")
        return 0
    rows = []
    for t in taps:
        missing = "" if t.root.is_dir() else " (clone missing: boost untap + tap again)"
        source = http.redact(t.source)  # a source URL may carry a token
        cells = [t.name, short(t.commit), counts_text(t.counts), t.updated, source + missing]
        rows.append([printable(c) for c in cells])
    out(table(rows, ["TAP", "COMMIT", "ITEMS", "UPDATED", "SOURCE"]))
    if args.warnings:
        for t in taps:
            if not t.root.is_dir():
                continue
            warnings = registry.scan(t).warnings
            if warnings:
                out(f"\n{printable(t.name)}: {len(warnings)} warnings")
                for w in warnings:
                    out(f"  {printable(w)}")
    else:
        n = sum(t.warnings for t in taps)
        if n:
            out(f"\n{n} scan warnings; see them with 'boost taps --warnings'")
    return 0


def cmd_untap(args: argparse.Namespace) -> int:
    for name in args.names:
        info = registry.remove(name)
        out(f"Untapped {printable(info.name)}")
    _refresh()
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    results = registry.update(args.names)
    failed = 0
    for r in results:
        if r.error:
            failed += 1
            err(printable(f"fail  {r.name}: {r.error}"))
            continue
        if r.repaired:
            out(f"{r.name}: put back at {short(r.old_commit)} after an interrupted update")
        if r.old_commit == r.new_commit:
            out(f"{r.name}: up to date at {short(r.new_commit)}")
        else:
            out(
                f"{r.name}: {short(r.old_commit)} → {short(r.new_commit)} ({counts_delta(r.old_counts, r.new_counts)})"
            )
    if not results:
        out("No taps to update.")
    if any(r.old_commit != r.new_commit or r.repaired for r in results if not r.error):
        _refresh()
    return 1 if failed else 0
