"""`boost bundle export FILE [--tap NAME...]` / `boost bundle import FILE...`: hand a
replica everything it needs to search and serve, with nothing cloned (docs/mcp.md,
"A team server")."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from boost_cli.commands.render import emit_json, out, short
from boost_cli.core import bundle
from boost_cli.core.text import printable


def cmd_bundle(args: argparse.Namespace) -> int:
    if args.action == "export":
        done = bundle.export(Path(args.file), args.tap or ())
        if args.json:
            emit_json(
                {
                    "file": done.file,
                    "bytes": done.bytes,
                    "digest": done.digest,
                    "taps": list(done.taps),
                    "skipped": list(done.skipped),
                }
            )
            return 0
        for row in done.taps:
            vectors = ", vectors" if row["vectors"] else ""
            out(
                f"  {printable(row['name'])} @ {short(row['commit'])}: {row['files']} files{vectors}"
            )
        for left in done.skipped:
            out(f"  left out ({left['reason']}): {printable(left['file'])}")
        out(
            f"Wrote {len(done.taps)} taps to {printable(done.file)} "
            f"({done.bytes / 1e6:.1f} MB, sha256 {done.digest[:12]})"
        )
        return 0
    reports = bundle.import_bundles([Path(f) for f in args.files])
    if args.json:
        emit_json(
            [
                {
                    "file": r.file,
                    "digest": r.digest,
                    "taps": [asdict(t) for t in r.taps],
                    "index": r.index,
                }
                for r in reports
            ]
        )
        return 0
    for r in reports:
        for t in r.taps:
            what = "replaced" if t.replaced else "imported"
            vectors = f", {t.vectors} vectors" if t.vectors is not None else ""
            if t.enrichments is not None:
                vectors += f", {t.enrichments} enrichments"
            out(
                f"  {printable(t.name)} @ {short(t.commit)}: {what}, {t.entries} entries, "
                f"{t.files} files{vectors}"
            )
            for note in t.notes:
                out(f"    {printable(note)}")
        out(f"Imported {len(r.taps)} taps from {printable(r.file)} (sha256 {r.digest[:12]})")
    return 0
