#!/usr/bin/env python3
"""The trust rules measured on a BOOST_HOME (`scripts/corpus.py` builds one with the 12
corpus registries) or straight on the corpus folders (`--corpus`, no home needed):
entries flagged per rule and severity, scan time per tap, and a seeded sample of flagged
entries with their findings, to check by hand. `--base REF` runs the same measurement
with the rules of git revision REF too and prints both counts side by side (what a rule
change moved).

    BOOST_HOME=... python scripts/trust_corpus.py [--sample 30] [--seed 23] [--json]
    python scripts/trust_corpus.py --corpus ../shared/corpus --base main --sample 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
# The code measured: this checkout's, or (for `--base`) another revision's, extracted.
sys.path.insert(0, os.environ.get("BOOST_TRUST_CODE") or str(ROOT))

from boost_cli.core import catalog, registry, trust, trust_scan  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"


def _taps(corpus: str) -> List[Tuple[str, Path, Any, str]]:
    """(name, root, entries, url) of every tap measured: the home's, or each registry
    folder of ``corpus``."""
    if not corpus:
        return [(t.name, t.root, registry.scan(t).entries, t.url) for t in registry.list_taps()]
    folders = sorted(p for p in Path(corpus).iterdir() if p.is_dir())
    return [(p.name, p, catalog.scan_tap(p.name, p).entries, "") for p in folders]


def _base(ref: str, argv: List[str]) -> Dict[str, Any]:
    """The report of this script run with the rules of git revision ``ref``."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "boost_cli"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        done = subprocess.run(
            [sys.executable, __file__, *argv, "--json"],
            env={**os.environ, "BOOST_TRUST_CODE": tmp},
            check=True,
            capture_output=True,
            text=True,
        )
    report: Dict[str, Any] = json.loads(done.stdout)
    return report


_COMPARED = ("entries", "flagged_any", "per_rule", "per_severity")


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
    ap.add_argument(
        "--corpus",
        nargs="?",
        const=str(DEFAULT_CORPUS),
        default="",
        help="scan the registry folders of this corpus (default ../shared/corpus) instead of "
        "the taps of BOOST_HOME",
    )
    ap.add_argument("--base", default="", help="also measure git revision BASE's rules")
    args = ap.parse_args()
    base: Dict[str, Any] = {}
    if args.base:
        rest = [a for a in sys.argv[1:] if a != "--json"]
        i = rest.index("--base") if "--base" in rest else -1
        rest = (
            rest[:i] + rest[i + 2 :] if i >= 0 else [a for a in rest if not a.startswith("--base=")]
        )
        base = _base(args.base, rest)
    per_rule: Counter = Counter()  # (kind, severity) -> entries
    per_kind: Counter = Counter()
    timings: List[Tuple[str, int, float, float]] = []
    flagged: List[Tuple[str, str, trust_scan.Findings]] = []
    total = 0
    per_worst: Counter = Counter()  # severity -> entries whose worst finding it is
    for name, root, entries, url in _taps(args.corpus):
        total += len(entries)
        t0, c0 = time.perf_counter(), time.process_time()
        found = trust_scan.scan_tap(root, entries, args.source or url)
        timings.append((name, len(entries), time.perf_counter() - t0, time.process_time() - c0))
        for path, fs in found.items():
            for kind, sev in {(f.kind, f.severity) for f in fs}:
                per_rule[(kind, sev)] += 1
            for kind in {f.kind for f in fs}:
                per_kind[kind] += 1
            per_worst[trust.worst(fs)] += 1
            flagged.append((name, path, fs))
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
        "per_severity": {s: per_worst[s] for s in trust.SEVERITIES},
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
    if base:
        report["base"] = {"ref": args.base, **{k: base[k] for k in _COMPARED}}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"{total} entries, {len(flagged)} with any finding")
    if base:
        print(f"entries by worst finding ({args.base} → this checkout):")
        for s in trust.SEVERITIES:
            print(f"  {s:28} {base['per_severity'].get(s, 0):6d} → {report['per_severity'][s]:6d}")
        print(f"entries per rule ({args.base} → this checkout):")
        for k in sorted(set(base["per_rule"]) | set(report["per_rule"])):
            print(f"  {k:28} {base['per_rule'].get(k, 0):6d} → {report['per_rule'].get(k, 0):6d}")
    else:
        print("entries by worst finding:")
        for s in trust.SEVERITIES:
            print(f"  {s:28} {report['per_severity'][s]:6d}")
        print("entries per rule:")
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
