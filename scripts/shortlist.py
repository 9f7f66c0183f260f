#!/usr/bin/env python3
"""What a user sees in each shortlist: repeated skills and reasons, over the dev queries.

    python scripts/shortlist.py --home DIR [--queries FILE] [--keywords FILE] [--limit 10]

For each query, `search.run` (no LLM) gives the shortlist a user would see. Reported:
pairs of hits in one shortlist with the same normalised name + description (a skill
shown twice), hits whose *why* is just the description, and hits with copies folded
into ``also_in``. DIR is a BOOST_HOME with the corpus tapped and indexed (scripts/eval.py).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval import EVAL, load_keywords, load_queries  # noqa: E402


def normalised(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def shortlist_stats(hits_per_query: Sequence[Sequence[Any]]) -> Dict[str, Any]:
    pairs, why_is_desc, with_copies, total = 0, 0, 0, 0
    examples: List[str] = []
    for hits in hits_per_query:
        seen: Dict[str, str] = {}
        for h in hits:
            total += 1
            key = normalised(h.entry.name) + "|" + normalised(h.entry.description)
            if key in seen:
                pairs += 1
                if len(examples) < 5:
                    examples.append(f"{seen[key]} ~ {h.entry.qualified_name}")
            else:
                seen[key] = h.entry.qualified_name
            if normalised(h.why) == normalised(h.entry.description):
                why_is_desc += 1
            if h.also_in:
                with_copies += 1
    return {
        "queries": len(hits_per_query),
        "hits": total,
        "repeated_pairs": pairs,
        "why_is_description": why_is_desc,
        "hits_with_copies": with_copies,
        "examples": examples,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=EVAL / "dev.jsonl")
    ap.add_argument("--keywords", type=Path, help="JSONL of {id, keywords}")
    ap.add_argument("--limit", type=int, default=10)
    args = ap.parse_args()
    os.environ["BOOST_HOME"] = str(args.home)
    from boost_cli.core import retrieval, search

    engines = retrieval.Engines()
    keywords = load_keywords(args.keywords)
    runs = []
    for q in load_queries(args.queries):
        opts = search.SearchOptions(
            query=q["query"],
            limit=args.limit,
            kind=q.get("kind"),
            rerank="none",
            keywords=tuple(keywords.get(q["id"], ())),
        )
        runs.append(search.run(opts, engines=engines).hits)
    s = shortlist_stats(runs)
    print(
        f"{s['queries']} queries, {s['hits']} hits: {s['repeated_pairs']} repeated name+description "
        f"pairs; why = description for {s['why_is_description']} "
        f"({100 * s['why_is_description'] / max(s['hits'], 1):.0f} %); "
        f"{s['hits_with_copies']} hits fold copies into also_in"
    )
    for e in s["examples"]:
        print(f"  e.g. {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
