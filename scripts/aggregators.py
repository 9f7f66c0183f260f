#!/usr/bin/env python3
"""Which taps are aggregators (copies of other registries) and which are origins: for each
tap of a home, the share of its entries whose file (byte-identical, sha256) also lies in
another tap, and the taps it shares most with. Issue 20's folding wants the origin's copy
shown: this measures the rule "a tap most of whose files appear elsewhere aggregates".

With ``--rules``, it scores rules that pick the origin among the taps holding one item:
for every file in several taps (byte-identical) and every near-duplicate group of the
home's index spanning several taps, which tap each rule picks, against the truth for the
shared corpus (`AGGREGATORS`, read from the registries' READMEs).

    python scripts/aggregators.py --home DIR [--json] [--rules]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Set

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


# The shared corpus's aggregators, from their READMEs (upstream, at the corpus's commits):
# Microck/ordinary-claude-skills "aggregates hundreds of skills from anthropic, composiohq,
# k-dense-ai, and random internet geniuses"; davila7/claude-code-templates "includes
# components from multiple sources" (its Attribution: anthropics/skills, obra/superpowers,
# wshobson/agents, K-Dense-AI, ...); davepoon/buildwithclaude is "Claude Skills, Agents,
# Commands, Hooks, Plugins, Marketplaces collections" (it holds copies of anthropics/skills'
# and wshobson/agents' items). Directories collect as well as write:
# anthropics/claude-plugins-official is "a curated directory of plugins" and
# github/awesome-copilot a community collection; of an item one shares with a registry
# that only writes (anthropics/skills), that registry is the origin.
AGGREGATORS = {
    "Microck__ordinary-claude-skills",
    "davila7__claude-code-templates",
    "davepoon__buildwithclaude",
}
DIRECTORIES = {"anthropics__claude-plugins-official", "github__awesome-copilot"}


def truth(holders: Set[str]) -> Optional[str]:
    """The origin among ``holders`` (corpus tap names), or None when only aggregators
    (or several origins) hold it: its origin is outside the corpus."""
    origins = holders - AGGREGATORS
    if len(origins) > 1:
        origins -= DIRECTORIES
    return next(iter(origins)) if len(origins) == 1 else None


def rules(
    sizes: Dict[str, int], share: Dict[str, float], partners: Dict[str, float]
) -> Dict[str, Callable[[Set[str]], str]]:
    """Each rule: holders → the tap it calls the origin."""
    from boost_cli.core import origin

    ranks = origin.ranks(sizes)

    def contained(holders: Set[str]) -> str:
        return min(holders, key=lambda t: ranks[t])

    return {
        "tap name (before)": lambda h: min(h),
        "least shared share (issue's idea)": lambda h: min(h, key=lambda t: (share[t], t)),
        "most shared share": lambda h: min(h, key=lambda t: (-share[t], t)),
        "partners per shared file": lambda h: min(h, key=lambda t: (-partners[t], t)),
        "containment = fewest entries (applied)": contained,
    }


def score_rules(home: Path, where: Dict[str, Set[str]], per_tap: Dict[str, list]) -> Dict[str, Any]:
    """Per rule: right / wrong / no origin in the corpus, for identical files and for the
    index's near-duplicate groups (key level) spanning several taps."""
    from boost_cli.core import index

    sizes = {t: len(v) for t, v in per_tap.items()}
    share = {t: sum(len(where[s]) > 1 for s in v) / max(len(v), 1) for t, v in per_tap.items()}
    shared_files = {t: sum(len(where[s]) > 1 for s in v) for t, v in per_tap.items()}
    links = {t: {o for s in v for o in where[s] if o != t} for t, v in per_tap.items()}
    partners = {t: len(links[t]) / max(shared_files[t], 1) for t in per_tap}
    items = {"identical": [h for h in where.values() if len(h) > 1]}
    reader = index.open_index(home / "cache" / "index")
    if reader is not None:
        gen = reader._current()
        assert gen is not None
        groups = gen.groups("key")
        holders: Dict[int, Set[str]] = defaultdict(set)
        if groups is not None:
            for g in range(len(groups)):
                s, _ = gen.seg_of(g)
                holders[groups[g]].add(gen.tap_names[s])
        items["groups"] = [h for h in holders.values() if len(h) > 1]
        reader.close()
    out: Dict[str, Any] = {}
    for what, sets in items.items():
        known = [(h, truth(h)) for h in sets]
        row: Dict[str, Any] = {
            "items": len(sets),
            "with origin": sum(t is not None for _, t in known),
        }
        for name, rule in rules(sizes, share, partners).items():
            right = sum(rule(h) == t for h, t in known if t is not None)
            picks = Counter(rule(h) for h, t in known if t is None)
            row[name] = {"right": right, "no origin in corpus, picks": dict(picks)}
        out[what] = row
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rules", action="store_true", help="score origin rules on the corpus")
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
    if args.rules:
        scored = score_rules(args.home, where, per_tap)
        if args.json:
            print(json.dumps(scored, indent=2))
            return 0
        for what, row in scored.items():
            print(
                f"{what}: {row['items']} items in several taps, {row['with origin']} with their origin in the corpus"
            )
            for name, r in row.items():
                if isinstance(r, dict):
                    print(
                        f"  {r['right']:4d}/{row['with origin']:<4d} {name:<42} others: {r['no origin in corpus, picks']}"
                    )
        return 0
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
