"""`boost show`: one entry's file, with where it lives."""

from __future__ import annotations

import argparse
from typing import Any, Dict

from boost_cli.commands.render import emit_json, out
from boost_cli.core import lookup


def cmd_show(args: argparse.Namespace) -> int:
    found = lookup.read(args.name)
    entry, snap = found.entry, found.snapshot
    if args.json:
        d: Dict[str, Any] = entry.to_dict()
        d.update(
            {
                "id": entry.qualified_name,
                "file": str(found.file),
                "url": found.url,
                "text": found.text,
            }
        )
        emit_json(d)
        return 0
    out(f"# {entry.qualified_name} [{entry.kind}]")
    out(f"# file: {found.file}")
    out(f"# tap: {snap.name} @ {snap.commit[:10]}  {found.url}")
    out("")
    out(found.text.rstrip("\n"))
    return 0
