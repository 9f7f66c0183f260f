"""`boost vectors export TAP FILE` / `boost vectors import FILE...`: share one tap's vectors
so a team embeds a registry once (docs/dense.md, "Sharing vectors")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict, List

from boost_cli.commands.render import emit_json, out, short
from boost_cli.core import indexing


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
        r = indexing.import_vectors(Path(name))
        row: Dict[str, Any] = {
            "file": name,
            "tap": r.tap,
            "commit": r.commit,
            "file_commit": r.file_commit,
            "cached": r.cached,
            "texts": r.texts,
            "covered": r.covered,
            "built": r.build is not None,
            "sent": r.build.texts_sent if r.build else 0,
        }
        reports.append(row)
        if args.json:
            continue
        if r.build is not None:
            other = (
                f" (the file is of commit {short(r.file_commit)}; no text changed since)"
                if r.file_commit != r.commit
                else ""
            )
            out(
                f"Imported {r.cached} vectors for {r.tap} @ {short(r.commit)}{other}: its "
                f"{r.texts} texts are in the vector store, nothing was embedded"
            )
        else:
            out(
                f"Imported {r.cached} vectors for {r.tap} into the cache, but the file is of "
                f"commit {short(r.file_commit)} and the tap is at {short(r.commit)}: "
                f"{r.texts - r.covered} of its {r.texts} texts still need embedding — "
                "run 'boost reindex --dense'"
            )
    if args.json:
        emit_json(reports)
    return 0
