"""`boost tap`, `boost taps`, `boost untap`, `boost update`."""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import sys
from typing import Any, Dict, List, Optional, Sequence

from boost_cli.commands.render import (
    Status,
    color_enabled,
    counts_delta,
    counts_text,
    detail,
    emit_json,
    err,
    note,
    out,
    progress,
    short,
    table,
    width,
)
from boost_cli.core import gitutil, http, indexing, registry, skillmap
from boost_cli.core.errors import BoostError, UsageError
from boost_cli.core.text import printable


def cmd_tap(args: argparse.Namespace) -> int:
    if args.list and not args.catalog:
        raise UsageError("--list goes with --catalog", "run 'boost tap --catalog --list'")
    if args.catalog or args.defaults:
        if args.category:
            _check_category(args.category)
        regs = registry.select_registries(
            kind=args.type,
            category=args.category,
            limit=args.limit,
            defaults=args.defaults and not args.catalog,
        )
        if args.list:
            return _list_catalog(regs, args)
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
    failures = 0
    results: List[Dict[str, Any]] = []
    bulk = len(sources) > 1
    with Status() as status:
        for i, src in enumerate(sources, start=1):
            # A clone can take a while: say what is being fetched before it starts.
            count = f" {i}/{len(sources)}" if bulk else ""
            status.show(f"  tapping{count} · cloning {src}")
            detail(f"cloning {printable(src)}")
            try:
                info, scan = registry.add(src, name=args.name)
            except BoostError as exc:
                status.clear()
                if bulk and "already exists" in exc.message:
                    out(f"skip  {printable(src)}: already tapped")
                    continue
                failures += 1
                results.append({"source": src, "error": str(exc)})
                if not bulk:
                    raise
                err(f"fail  {printable(src)}: {printable(exc)}")
                continue
            status.clear()
            results.append({**info.to_dict(), "warnings": len(scan.warnings)})
            if not args.json:
                warn = (
                    f" ({len(scan.warnings)} warnings: boost taps --warnings)"
                    if scan.warnings
                    else ""
                )
                out(
                    f"Tapped {printable(info.name)} at {short(info.commit)}: "
                    f"{counts_text(info.counts)}{warn}"
                )
            _warn_uncommitted(info)
    tapped = sum(1 for r in results if "error" not in r)
    refreshed = _refresh(quiet=args.json) if tapped else None
    if args.json:
        emit_json(results)
    elif bulk:
        if tapped == 0 and failures:
            out(f"0 of {len(sources)} sources tapped — see the errors above")
        else:
            hint = "" if refreshed or not tapped else "; run 'boost reindex' to index them"
            out(f"{len(sources) - failures} of {len(sources)} sources tapped{hint}")
    return 1 if failures else 0


def _check_category(category: str) -> None:
    """An unknown ``--category`` is a usage error naming the closest one, not an empty list."""
    known = sorted({str(r.get("category", "")).lower() for r in registry.bundled_registries()})
    if category.lower() in known:
        return
    close = difflib.get_close_matches(category.lower(), known, n=1)
    fix = f"did you mean {close[0]!r}?" if close else f"choose from {', '.join(known)}"
    raise UsageError(f"no catalog category {category!r}", fix)


def _warn_uncommitted(info: registry.TapInfo) -> None:
    """A local source's uncommitted edits are not in the tap (it clones commits): say so."""
    changed = gitutil.uncommitted(info.url)
    if changed:
        note(
            f"note: {printable(info.url)} has {changed} uncommitted change"
            f"{'' if changed == 1 else 's'}, which the tap does not see — commit them, "
            f"then run 'boost update {printable(info.name)}'"
        )


def _refresh(quiet: bool = False) -> bool:
    """Bring an existing search index, and an existing vector store, up to date with the
    taps; False when there is no search index."""
    with Status() as status:
        report = indexing.refresh(progress=progress("indexing", status))
    if report is not None and (report.built or report.removed):
        changed = len(report.built) + len(report.removed)
        message = f"Search index refreshed ({changed} tap{'' if changed == 1 else 's'} redone in {report.seconds:.1f} s)"
        (err if quiet else out)(message)
    sync_vectors(quiet)
    return report is not None


def sync_vectors(quiet: bool = False) -> None:
    """Keep an existing vector store in step with the taps (`indexing.sync_dense`) and say
    what changed, or why some taps are left to BM25 until 'boost reindex --dense'."""
    with Status() as status:
        synced = indexing.sync_dense(progress=progress("embedding", status))
    if synced is None:
        return
    if synced.changed:
        (err if quiet else out)(synced.summary())
    pending = synced.pending_note()
    if pending:
        note(f"note: {printable(pending)}")


def _list_catalog(regs: List[Dict[str, Any]], args: argparse.Namespace) -> int:
    if args.json:
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
    out(
        table(
            rows,
            ["REGISTRY", "KIND", "CATEGORY", "~ITEMS", "DEFAULT"],
            columns=width(),
            optional=(4,),
            wrap_cols=(0, 2),
            numeric=(3,),
            style=color_enabled(sys.stdout),
        )
    )
    again = _catalog_command(args)
    out(f"\n{len(regs)} registries; tap {'it' if len(regs) == 1 else 'them'} with '{again}'")
    if again == "boost tap --catalog":
        out("(narrow it down first with --type, --category or --limit)")
    return 0


def _catalog_command(args: argparse.Namespace) -> str:
    """The command that taps exactly the registries just listed (the same filters)."""
    words = ["boost", "tap", "--defaults" if args.defaults and not args.catalog else "--catalog"]
    for flag, value in (
        ("--type", args.type),
        ("--category", args.category),
        ("--limit", args.limit),
    ):
        if value:
            words += [flag, shlex.quote(str(value))]
    return " ".join(words)


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
    out(taps_table(taps, width(), color_enabled(sys.stdout)))
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


def taps_table(taps: Sequence[registry.TapInfo], columns: Optional[int], style: bool) -> str:
    """One row per tap; to fit a narrow terminal the date and commit columns go first, then
    the source wraps."""
    rows = []
    for t in taps:
        missing = "" if t.root.is_dir() else " (clone missing: boost untap + tap again)"
        if t.bundle:
            missing = f" (imported from bundle {t.bundle[:12]})"
        c = t.counts
        rows.append(
            [
                t.name,
                c.get("skill", 0),
                c.get("rule", 0),
                c.get("workflow", 0),
                t.commit[:7] or "-",
                t.updated[:10],
                http.redact(t.source) + missing,  # a source URL may carry a token
            ]
        )
    headers = ["TAP", "SKILLS", "RULES", "WORKFLOWS", "COMMIT", "UPDATED", "SOURCE"]
    full = table(rows, headers, numeric=(1, 2, 3), style=style)
    if columns is None or max(len(line) for line in _plain(full)) <= columns:
        return full
    # Too wide: the source goes under its tap's row, whole (a path squeezed into a narrow
    # column took a line per dozen characters), and the date, then the commit, make room.
    narrow = table(
        [r[:6] for r in rows],
        headers[:6],
        columns=columns,
        optional=(5, 4),
        wrap_cols=(0,),
        numeric=(1, 2, 3),
        style=style,
    )
    lines = narrow.split("\n")
    if len(lines) != len(rows) + 1:  # a wrapped name: keep the plain wrapped table
        return table(
            rows,
            headers,
            columns=columns,
            optional=(5, 4),
            wrap_cols=(6, 0),
            numeric=(1, 2, 3),
            style=style,
        )
    out_lines = [lines[0]]
    for line, row in zip(lines[1:], rows):
        out_lines += [line, f"    {printable(row[6])}"]
    return "\n".join(out_lines)


def _plain(text: str) -> List[str]:
    return [re.sub("\x1b\\[[0-9;]*m", "", line) for line in text.split("\n")]


def cmd_untap(args: argparse.Namespace) -> int:
    for name in args.names:
        info = registry.remove(name)
        skillmap.drop_cache(name)
        out(f"Untapped {printable(info.name)}")
    _refresh()
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    with Status() as status:
        status.show("  updating · fetching " + (", ".join(args.names) or "every tap"))
        results = registry.update(args.names)
    failed = 0
    for r in results:
        if r.error:
            failed += 1
            err(f"fail  {printable(r.name)}: {printable(r.error)}")
            continue
        if r.repaired:
            out(f"{r.name}: put back at {short(r.old_commit)} after an interrupted update")
        if r.old_commit == r.new_commit:
            out(f"{printable(r.name)}: up to date at {short(r.new_commit)}")
        else:
            out(
                f"{printable(r.name)}: {short(r.old_commit)} → {short(r.new_commit)} ({counts_delta(r.old_counts, r.new_counts)})"
            )
        _warn_uncommitted(registry.get_tap(r.name))
    if not results:
        out("No taps to update.")
    if any(r.old_commit != r.new_commit or r.repaired for r in results if not r.error):
        _refresh()
    return 1 if failed else 0
