"""`boost vectors export TAP FILE` / `boost vectors import FILE...`: share one tap's vectors
so a team embeds a registry once (docs/dense.md, "Sharing vectors")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

from boost_cli.commands.render import emit_json, out, short
from boost_cli.core import indexing

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.dense import ImportReport


def cmd_vectors(args: argparse.Namespace) -> int:
    if args.action == "export":
        found = indexing.export_vectors(args.tap, Path(args.file))
        if args.json:
            emit_json(
                {
                    "tap": found.tap,
                    "commit": found.commit,
                    "vectors": len(found.vectors),
                    "file": args.file,
                    "parity": found.parity,
                }
            )
        else:
            out(
                f"Exported {len(found.vectors)} vectors of {found.tap} @ {short(found.commit)} "
                f"({found.parity.get('provider')} {found.parity.get('model')}, "
                f"{found.parity.get('unit')} unit) to {args.file}"
            )
        return 0
    reports: List[Dict[str, Any]] = []
    for name in args.files:
        r = indexing.import_vectors(Path(name), getattr(args, "unit", None))
        row: Dict[str, Any] = {
            "file": name,
            "tap": r.tap,
            "commit": r.commit,
            "file_commit": r.file_commit,
            "rows": r.rows,
            "cached": r.cached,
            "kept": r.kept,
            "ignored": r.ignored,
            "texts": r.texts,
            "covered": r.covered,
            "built": r.build is not None,
            "sent": r.build.texts_sent if r.build else 0,
        }
        reports.append(row)
        if not args.json:
            out(_import_line(r))
    if args.json:
        emit_json(reports)
    return 0


def _import_line(r: ImportReport) -> str:
    """What an import did, and when the tap is not built, what is really missing."""
    notes = []
    if r.kept:
        notes.append(f"{r.kept} already here and kept")
    if r.ignored:
        notes.append(f"{r.ignored} rows for texts the tap does not have ignored")
    extra = f" ({'; '.join(notes)})" if notes else ""
    if r.build is not None:
        other = (
            f" (the file is of commit {short(r.file_commit)}; no text changed since)"
            if r.file_commit != r.commit
            else ""
        )
        return (
            f"Imported {r.cached} vectors for {r.tap} @ {short(r.commit)}{other}{extra}: its "
            f"{r.texts} texts are in the vector store, nothing was embedded"
        )
    missing = r.texts - r.covered
    if r.file_commit != r.commit:
        return (
            f"Imported {r.cached} vectors for {r.tap} into the cache{extra}, but the file is "
            f"of commit {short(r.file_commit)} and the tap is at {short(r.commit)}: "
            f"{missing} of its {r.texts} texts still need embedding — "
            "run 'boost reindex --dense'"
        )
    return (
        f"Imported {r.cached} vectors for {r.tap} into the cache{extra}, but the file, of "
        f"the tap's own commit {short(r.commit)}, has no vector for {missing} of its "
        f"{r.texts} texts (it was not exported from these texts: another boost version or "
        "text unit) — run 'boost reindex --dense' to embed them, or ask for a file written "
        "by 'boost vectors export' with this version"
    )
