"""`boost reindex`: build or refresh the BM25 index (and, with --dense, the vector store)."""

from __future__ import annotations

import argparse
import time
from typing import Any, Dict

from boost_cli.commands.render import emit_json, out, progress
from boost_cli.core import registry


def cmd_reindex(args: argparse.Namespace) -> int:
    from boost_cli.core import index

    registry.require_taps(args.tap)
    t0 = time.perf_counter()
    snaps = registry.snapshots()
    report = index.build(
        snaps, force=args.force, force_taps=tuple(args.tap), progress=progress("indexing")
    )
    result: Dict[str, Any] = {"bm25": report.to_dict(), "scan_seconds": round(report.seconds, 3)}
    if args.dense:
        result["dense"] = _dense(args, snaps)
    total = time.perf_counter() - t0
    result["seconds"] = round(total, 3)
    if args.json:
        emit_json(result)
        return 0
    r = report
    out(
        f"Indexed {r.taps_total} taps ({len(r.built)} rebuilt, {len(r.reused)} unchanged"
        f"{', ' + str(len(r.removed)) + ' removed' if r.removed else ''}): "
        f"{r.entries} entries, {r.chunks} chunks, {r.terms} terms, {r.bytes / 1e6:.1f} MB in {total:.2f} s"
    )
    if "dense" in result:
        out(_dense_line(result["dense"]))
    return 0


def _dense(args: argparse.Namespace, snaps: Any) -> Dict[str, Any]:
    from boost_cli.commands.dense import build_dense

    return build_dense(snaps, unit=args.unit, force=args.force, assume_yes=args.yes)


def _dense_line(d: Dict[str, Any]) -> str:
    if d.get("error"):
        return f"Dense index not built: {d['error']}"
    return (
        f"Dense index ({d.get('provider')}/{d.get('model')}, {d.get('unit')} vectors, {d.get('backend')} store): "
        f"{d.get('texts')} texts, {d.get('sent')} sent to the provider, {d.get('seconds', 0):.1f} s"
        + (f"\n  note: {d['backend_note']}" if d.get("backend_note") else "")
    )
