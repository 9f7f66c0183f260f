#!/usr/bin/env python3
"""The trust rules measured on a BOOST_HOME (`scripts/corpus.py` builds one with the 12
corpus registries): entries flagged per rule and severity, scan time per tap, and a
seeded sample of flagged entries with their findings, to check by hand.

    BOOST_HOME=... python scripts/trust_corpus.py [--sample 30] [--seed 23] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boost_cli.core import registry, trust, trust_scan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--min", default="low", choices=trust.SEVERITIES, help="sample floor")
    ap.add_argument(
        "--source",
        default="https://github.com/corpus/registry",
        help="the URL the registries count as theirs (the corpus taps are local copies of "
        "GitHub repositories; '' for the taps' own sources)",
    )
    args = ap.parse_args()
    per_rule: Counter = Counter()  # (kind, severity) -> entries
    per_kind: Counter = Counter()
    timings: List[Tuple[str, int, float, float]] = []
    flagged: List[Tuple[str, str, trust_scan.Findings]] = []
    total = 0
    for tap in registry.list_taps():
        entries = registry.scan(tap).entries
        total += len(entries)
        t0, c0 = time.perf_counter(), time.process_time()
        found = trust_scan.scan_tap(tap.root, entries, args.source or tap.url)
        timings.append((tap.name, len(entries), time.perf_counter() - t0, time.process_time() - c0))
        for path, fs in found.items():
            for kind, sev in {(f.kind, f.severity) for f in fs}:
                per_rule[(kind, sev)] += 1
            for kind in {f.kind for f in fs}:
                per_kind[kind] += 1
            flagged.append((tap.name, path, fs))
    floor = trust.rank(args.min)
    pool = [x for x in flagged if any(trust.rank(f.severity) >= floor for f in x[2])]
    rng = random.Random(args.seed)
    # Stratified by the entry's worst finding's kind, so rare rules get looked at too.
    by_kind: Dict[str, List[Any]] = {}
    for x in pool:
        top = min(x[2], key=trust.sort_key)
        by_kind.setdefault(f"{top.kind}/{top.severity}", []).append(x)
    sample: List[Any] = []
    keys = sorted(by_kind)
    for v in by_kind.values():
        rng.shuffle(v)
    while len(sample) < args.sample and any(by_kind.values()):
        for k in keys:
            if by_kind[k] and len(sample) < args.sample:
                sample.append(by_kind[k].pop())
    report = {
        "entries": total,
        "flagged_any": len(flagged),
        "per_rule": {f"{k}/{s}": n for (k, s), n in sorted(per_rule.items())},
        "per_kind": dict(sorted(per_kind.items())),
        "load": [round(x, 2) for x in os.getloadavg()],
        "timings": [
            {"tap": n, "entries": e, "seconds": round(s, 3), "cpu_seconds": round(c, 3)}
            for n, e, s, c in timings
        ],
        "sample": [
            {
                "tap": t,
                "path": p,
                "findings": [
                    trust_scan.finding_line(f) for f in fs if trust.rank(f.severity) >= floor
                ],
            }
            for t, p, fs in sample
        ],
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"{total} entries, {len(flagged)} with any finding")
    for k, n in report["per_rule"].items():
        print(f"  {k:28} {n:6d}")
    print(f"scan seconds per tap, wall and CPU (load {report['load']}):")
    for t in report["timings"]:
        print(f"  {t['tap']:44} {t['entries']:6d} {t['seconds']:8.3f} {t['cpu_seconds']:8.3f}")
    print(
        f"  {'total':44} {total:6d} {sum(t[2] for t in timings):8.3f} "
        f"{sum(t[3] for t in timings):8.3f}"
    )
    print(f"sample of {len(sample)} (floor {args.min}):")
    for i, s in enumerate(report["sample"], 1):
        print(f"[{i}] {s['tap']}:{s['path']}")
        for line in s["findings"][:6]:
            print(f"     {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
