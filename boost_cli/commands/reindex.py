"""`boost reindex`: build or refresh the BM25 index and, with --dense, the vector store
(saying first what text leaves the machine)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Dict, Sequence

from boost_cli.commands.render import emit_json, err, out, progress
from boost_cli.core import indexing, registry
from boost_cli.core.errors import UsageError
from boost_cli.core.models import TapSnapshot


def cmd_reindex(args: argparse.Namespace) -> int:
    registry.require_taps(args.tap)
    t0 = time.perf_counter()
    report = indexing.reindex(
        force=args.force,
        force_taps=args.tap,
        progress=progress("indexing"),
        workers=args.workers,
    )
    result: Dict[str, Any] = {"bm25": report.to_dict(), "scan_seconds": round(report.seconds, 3)}
    if args.dense:
        result["dense"] = _dense(args, registry.snapshots())
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


def _dense(args: argparse.Namespace, snaps: Sequence[TapSnapshot]) -> Dict[str, Any]:
    from boost_cli.core import dense

    embedder, unit = indexing.dense_settings(args.unit)
    if embedder.is_remote:
        where, n_texts, n_chars = dense.egress_summary(snaps, embedder, unit)
        if n_texts:
            err(
                f"boost will send {n_texts} texts ({n_chars:,} characters of tapped skill files) to {where} to embed them."
            )
            if not args.yes and sys.stdin.isatty():
                answer = input("Continue? [y/N] ").strip().lower()
                if answer not in ("y", "yes"):
                    raise UsageError(
                        "dense indexing cancelled", "rerun with --yes to skip the question"
                    )
    report = indexing.build_dense(
        snaps, embedder, unit, force=args.force, progress=progress("embedding")
    )
    d: Dict[str, Any] = report.to_dict()
    backend, note = dense.backend_status()
    if backend != "sqlite-vec":
        d["backend_note"] = note
    return d


def _dense_line(d: Dict[str, Any]) -> str:
    if d.get("error"):
        return f"Dense index not built: {d['error']}"
    return (
        f"Dense index ({d.get('provider')}/{d.get('model')}, {d.get('unit')} vectors, {d.get('backend')} store): "
        f"{d.get('texts')} texts, {d.get('sent')} sent to the provider, {d.get('seconds', 0):.1f} s"
        + (f"\n  note: {d['backend_note']}" if d.get("backend_note") else "")
    )
