"""Enrichments in a bundle (`boost bundle export|import`): one JSONL member per tap, a row
per enriched item of the tap, so a replica or a teammate uses one LLM pass.

A row is ``{"digest", "about", "tasks", "model", "prompt_version", "files"}`` (``files``:
the sha256 of the tap's files with that item digest, for the store's ``files`` map). Import reads it as
data from someone else: every field is checked (a sha256 digest, text without control
characters, URLs, markup or instructions, within the answer caps), a bad row is dropped
and counted, and what is kept is stored with ``origin: "imported"`` (`store`), so doctor
and --explain label it, with its model and prompt version. Only rows for the items the
tap's own files make are kept: a bundle cannot enrich another tap's skill.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from boost_cli.core.enrich import answer, run, store
from boost_cli.core.models import TapSnapshot

MEMBER = "enrich.jsonl"
MAX_ROWS = 200_000
_DIGEST = re.compile(r"[0-9a-f]{64}")


def export_rows(snap: TapSnapshot) -> Optional[bytes]:
    """The tap's enrichments as JSONL (sorted by digest), or None when it has none."""
    db = store.open_store()
    if db is None:
        return None
    files: Dict[str, List[str]] = {}
    for item, sha in run.items_and_files([snap]):
        files.setdefault(item.digest, []).append(sha)
    with db:
        chosen = db.chosen(sorted(files))
    rows = [
        json.dumps(
            {
                "digest": d,
                "about": r.about,
                "tasks": list(r.tasks),
                "model": r.model,
                "prompt_version": r.prompt_version,
                "files": sorted(set(files[d])),
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        for d, r in sorted(chosen.items())
        if r.about
    ]
    return ("\n".join(rows) + "\n").encode("utf-8") if rows else None


def _row(value: Any) -> Optional[store.Stored]:
    if not isinstance(value, dict):
        return None
    digest, model, version = value.get("digest"), value.get("model"), value.get("prompt_version")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        return None
    if not isinstance(model, str) or not 0 < len(model) <= 100 or answer.fault(model):
        return None
    if not isinstance(version, int) or isinstance(version, bool) or not 0 < version < 1000:
        return None
    about, why = answer.clean_text(value.get("about"), answer.MAX_ABOUT_CHARS)
    tasks = value.get("tasks")
    if why or not isinstance(tasks, list) or len(tasks) > answer.MAX_TASKS:
        return None
    kept = [answer.clean_text(t, answer.MAX_TASK_CHARS) for t in tasks]
    if any(w for _, w in kept):
        return None
    return store.Stored(digest, about, tuple(t for t, _ in kept), model, version, store.IMPORTED)


def _files(value: Any) -> List[str]:
    shas = value.get("files") if isinstance(value, dict) else None
    if not isinstance(shas, list) or len(shas) > 10_000:
        return []
    return [s for s in shas if isinstance(s, str) and _DIGEST.fullmatch(s)]


def import_rows(data: bytes, snaps: Sequence[TapSnapshot]) -> Tuple[int, int, int]:
    """Store the valid rows of a bundle's member as imported, keeping only rows for items
    the tap's own files make (``snaps``: the tap as installed): a bundle cannot enrich a
    skill of another tap. (kept, dropped as malformed, dropped as another tap's)."""
    own: Dict[str, Set[str]] = {}
    for item, sha in run.items_and_files(snaps):
        own.setdefault(item.digest, set()).add(sha)
    rows: List[store.Stored] = []
    pairs: List[Tuple[str, str]] = []
    dropped = foreign = 0
    for line in data.decode("utf-8", errors="replace").splitlines()[:MAX_ROWS]:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        row = _row(value)
        if row is None:
            dropped += 1
        elif row.digest not in own:
            foreign += 1
        else:
            rows.append(row)
            pairs += [(sha, row.digest) for sha in _files(value) if sha in own[row.digest]]
    return store.import_rows(rows, files=pairs), dropped, foreign
