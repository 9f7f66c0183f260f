"""`boost discover`: find registries on GitHub through the gh CLI."""

from __future__ import annotations

import argparse

from boost_cli.commands.render import emit_json, out, table
from boost_cli.core import discover
from boost_cli.core.text import printable


def cmd_discover(args: argparse.Namespace) -> int:
    repos = discover.discover_github(" ".join(args.query), limit=args.limit)
    if args.json:
        emit_json([r.to_dict() for r in repos])
        return 0
    if not repos:
        out("No repositories with SKILL.md files matched.")
        return 0
    rows = [[printable(r.repo), r.hits, printable(r.url)] for r in repos]  # GitHub's text
    out(table(rows, ["REPOSITORY", "SKILL.md HITS", "URL"]))
    out("\nTap one with 'boost tap OWNER/REPO'.")
    return 0
