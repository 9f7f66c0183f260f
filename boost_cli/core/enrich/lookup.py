"""What a search shows of the enrichment: per hit, the query words it matched through
its enrichment (words its own file does not have), the sentence as its *why* (labelled
``why_source: "enrichment"``, never as the skill's own words), and who wrote it.

Read at query time for the few hits shown, from the store (`store`), by the item digest
of each hit's file (`prompt.item_of`); a search with no store reads nothing. A damaged
store is a note with the fix, never a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import paths
from boost_cli.core.enrich import prompt, store
from boost_cli.core.models import MAX_FILE_BYTES, Hit
from boost_cli.core.tokenize import tokenize


@dataclass(frozen=True)
class Matched:
    """A hit's enrichment and the query terms only it supplied."""

    stored: store.Stored
    words: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "words": list(self.words),
            "about": self.stored.about,
            "model": self.stored.model,
            "prompt_version": self.stored.prompt_version,
            "origin": self.stored.origin,
            "current": self.stored.prompt_version == prompt.PROMPT_VERSION,
        }


def _words(text: str) -> List[str]:
    """The words of ``text`` as typed, once each (what --explain shows, not stems)."""
    return list(dict.fromkeys(w.lower() for w in re.findall(r"[^\W_]+", text)))


def damaged_note(exc: store.EnrichDamaged) -> str:
    return str(exc)


def _text(roots: Mapping[str, Path], hit: Hit) -> Optional[str]:
    root = roots.get(hit.entry.tap)
    if root is None:
        return None
    try:
        with open(root / hit.entry.path, "rb") as fh:
            return fh.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _digest(hit: Hit, text: Optional[str]) -> str:
    """The item digest of a hit whose file the store does not map (tapped after the last
    `--enrich`, or imported without the map): computed from its text ("" unreadable)."""
    if text is None:
        return ""
    return prompt.item_of(hit.entry.kind, hit.entry.name, hit.entry.description, text).digest


def annotate(
    query_text: str, hits: Sequence[Hit], roots: Mapping[str, Path]
) -> Tuple[List[Hit], Dict[str, Dict[str, Any]], List[str]]:
    """``hits`` with the enrichment's sentence as the *why* of each hit that matched a
    query word through its enrichment alone (unless it has a why already: an LLM's),
    what each such hit matched (by entry id) and notes (a damaged store)."""
    if not paths.enrich_path().exists() or not hits:
        return list(hits), {}, []
    texts = {h.entry.id: _text(roots, h) for h in hits}
    try:
        db = store.open_store()
        if db is None:
            return list(hits), {}, []
        with db:
            known = db.digests_of(sorted({h.content_hash for h in hits if h.content_hash}))
            digests = {
                h.entry.id: known.get(h.content_hash or "") or _digest(h, texts[h.entry.id])
                for h in hits
            }
            chosen = db.chosen(sorted({d for d in digests.values() if d}))
    except store.EnrichDamaged as exc:
        return list(hits), {}, [damaged_note(exc)]
    terms = set(tokenize(query_text))
    out: List[Hit] = []
    matched: Dict[str, Dict[str, Any]] = {}
    for h in hits:
        stored = chosen.get(digests[h.entry.id])
        if stored is None or not stored.about:
            out.append(h)
            continue
        found = terms & set(tokenize(stored.text()))
        if found:  # the file is tokenized only when the enrichment shares a query word
            found -= set(tokenize(texts[h.entry.id] or ""))
        if not found:
            out.append(h)
            continue
        words = tuple(w for w in _words(query_text) if tokenize(w)[:1] and tokenize(w)[0] in found)
        matched[h.entry.qualified_name] = Matched(stored, words).to_dict()
        out.append(h if h.why else replace(h, why=stored.about, why_source="enrichment"))
    return out, matched, []


def status(indexed_key: Optional[str]) -> Tuple[Dict[str, Any], List[str]]:
    """What `boost doctor` says of the store: ``{status, items, by: [...], indexed}`` and
    the fixes. ``indexed_key``: the enrichment key the index was built with (None: no
    index)."""
    path = paths.enrich_path()
    if not path.exists():
        return {"status": "none"}, []
    try:
        db = store.open_store(path)
        assert db is not None
        with db:
            chosen = db.chosen()
    except store.EnrichDamaged as exc:
        return {"status": "damaged", "reason": str(exc)}, [f"enrichment store damaged: {exc}"]
    texts = {d: r.text() for d, r in chosen.items()}
    by: Dict[Tuple[str, int, str], int] = {}
    for r in chosen.values():
        key = (r.model, r.prompt_version, r.origin)
        by[key] = by.get(key, 0) + 1
    report: Dict[str, Any] = {
        "status": "ok",
        "items": len(chosen),
        "by": [
            {
                "model": m,
                "prompt_version": v,
                "origin": o,
                "items": n,
                "current": v == prompt.PROMPT_VERSION,
            }
            for (m, v, o), n in sorted(by.items())
        ],
        "indexed": indexed_key is not None and indexed_key == store.fingerprint(texts),
    }
    fixes = []
    if indexed_key is not None and not report["indexed"]:
        fixes.append("the index does not hold the current enrichment: run 'boost reindex'")
    return report, fixes
