#!/usr/bin/env python3
"""Which taps are aggregators (copies of other registries) and which are origins: for each
tap of a home, the share of its entries whose file (byte-identical, sha256) also lies in
another tap, and the taps it shares most with. Issue 20's folding wants the origin's copy
shown: this measures the rule "a tap most of whose files appear elsewhere aggregates".

    python scripts/aggregators.py --home DIR [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Set

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["BOOST_HOME"] = str(args.home)
    from boost_cli.core import registry
    from boost_cli.core.models import content_hash

    where: Dict[str, Set[str]] = defaultdict(set)
    per_tap: Dict[str, list] = defaultdict(list)
    for snap in registry.snapshots():
        for e in snap.entries:
            sha = content_hash((snap.root / e.path).read_bytes())
            where[sha].add(snap.name)
            per_tap[snap.name].append(sha)
    rows = []
    for tap, shas in sorted(per_tap.items()):
        shared = [s for s in shas if len(where[s]) > 1]
        partners = Counter(t for s in shared for t in where[s] if t != tap)
        rows.append(
            {
                "tap": tap,
                "entries": len(shas),
                "shared": len(shared),
                "share": round(len(shared) / max(len(shas), 1), 3),
                "with": partners.most_common(3),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in sorted(rows, key=lambda r: -r["share"]):
        partners = ", ".join(f"{t} {n}" for t, n in r["with"])
        print(f"{r['share']:6.1%}  {r['shared']:5d}/{r['entries']:<5d} {r['tap']:<42} {partners}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
