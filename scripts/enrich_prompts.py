#!/usr/bin/env python3
"""Print the enrichment prompts a home would send, one JSON object a line.

    BOOST_HOME=DIR python scripts/enrich_prompts.py [--skip ANSWERS.jsonl ...] > prompts.jsonl

Each row is {"batch": n, "key": prompt_key(system, user), "system": ..., "user": ...,
"ids": [digest, ...]}: the prompts `boost reindex --enrich` builds for every tapped entry
(distinct texts, sorted by digest, cut into batches). The recorders of
scripts/fixtures/enrich-*.jsonl answered exactly these prompts and nothing else: no query,
no judgment. `--skip` leaves out batches whose key a recording already answers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from recorded_llm import load_answers, prompt_key  # noqa: E402

from boost_cli.core import registry  # noqa: E402
from boost_cli.core.enrich import prompt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip", type=Path, nargs="*", default=[])
    args = ap.parse_args()
    known = load_answers(list(args.skip)) if args.skip else {}
    items = []
    for snap in registry.snapshots():
        for entry in snap.entries:
            items.append(
                prompt.item_of(entry.kind, entry.name, entry.description, snap.text(entry))
            )
    for n, batch in enumerate(prompt.batches(items)):
        user = prompt.build_prompt(batch)
        key = prompt_key(prompt.SYSTEM_PROMPT, user)
        if key in known:
            continue
        row = {
            "batch": n,
            "key": key,
            "system": prompt.SYSTEM_PROMPT,
            "user": user,
            "ids": [it.digest for it in batch],
        }
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
