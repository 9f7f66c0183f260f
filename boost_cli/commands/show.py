"""`boost show`: one entry's file, with where it lives.

The file comes from a registry: on a terminal its control sequences (cursor moves,
clipboard writes, hyperlinks, bidi overrides) are shown escaped, never run; ``--raw``
prints the bytes as they are, ``--json`` the exact text, JSON-escaped. A warning block
of the trust findings (`trust_scan.warning_lines`) comes first, before the file's text;
``--json`` has them all as ``findings``."""

from __future__ import annotations

import argparse
from typing import Any, Dict

from boost_cli.commands.render import emit_json, out
from boost_cli.core import lookup, registry, trust, trust_scan
from boost_cli.core.text import printable


def cmd_show(args: argparse.Namespace) -> int:
    found = lookup.read(args.name)
    entry, snap = found.entry, found.snapshot
    findings = registry.trust_view().findings(entry)
    if args.json:
        d: Dict[str, Any] = entry.to_dict()
        d.update(
            {
                "id": entry.qualified_name,
                "file": str(found.file),
                "url": found.url,
                "text": found.text,
                "flags": trust.summary(findings),
                "findings": [f.to_dict() for f in findings],
            }
        )
        emit_json(d)
        return 0
    out(printable(f"# {entry.qualified_name} [{entry.kind}]"))
    for line in trust_scan.warning_lines(findings):
        out(f"! {line}")  # each part escaped by warning_lines
    out(printable(f"# file: {found.file}"))
    out(printable(f"# tap: {snap.name} @ {snap.commit[:10]}  {found.url}"))
    out("")
    body = found.text.rstrip("\n")
    out(body if getattr(args, "raw", False) else printable(body, keep_newlines=True))
    return 0
