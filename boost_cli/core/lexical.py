"""Lexical search: the always-available fallback over name, description and frontmatter.

No index is needed: every entry's name, description and frontmatter values are
tokenized (same tokenizer as BM25) and scored by weighted query-token matches. It is
what search degrades to when there is no index yet.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Dict, Iterable, List, Optional, Sequence

from boost_cli.core.models import Entry, Hit
from boost_cli.core.tokenize import tokenize

NAME_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 2.0
META_WEIGHT = 1.0
_META_SKIP = frozenset({"name", "description"})


def _meta_text(meta: Any, depth: int = 0) -> Iterable[str]:
    if depth > 4:
        return
    if isinstance(meta, dict):
        for k, v in meta.items():
            if depth == 0 and k in _META_SKIP:
                continue
            yield from _meta_text(v, depth + 1)
    elif isinstance(meta, (list, tuple)):
        for v in meta:
            yield from _meta_text(v, depth + 1)
    elif isinstance(meta, str):
        yield meta


def score_entry(
    query_terms: Sequence[str], entry: Entry, idf: Optional[Dict[str, float]] = None
) -> float:
    """Weighted count of distinct query terms found in the name (3), description (2) and meta (1).

    With ``idf``, each term's weight is multiplied by its inverse document frequency so
    rare words count more than common ones. An exact name match adds a bonus of 2.
    """
    name = set(tokenize(entry.name.replace("-", " ")))
    desc = set(tokenize(entry.description))
    meta = set(tokenize(" ".join(_meta_text(dict(entry.meta)))))
    total = 0.0
    for t in set(query_terms):
        w = idf.get(t, 1.0) if idf else 1.0
        if t in name:
            total += NAME_WEIGHT * w
        if t in desc:
            total += DESCRIPTION_WEIGHT * w
        if t in meta:
            total += META_WEIGHT * w
    if total and tokenize(entry.name) == list(query_terms):
        total += 2.0
    return total


def search(
    entries: Sequence[Entry], query: str, k: int = 60, kind: Optional[str] = None
) -> List[Hit]:
    """Rank ``entries`` for ``query``; entries matching no query term are left out."""
    terms = tokenize(query)
    if not terms:
        return []
    pool = [e for e in entries if kind is None or e.kind == kind]
    n = max(len(pool), 1)
    df: Dict[str, int] = {t: 0 for t in terms}
    fields = []
    for e in pool:
        toks = set(tokenize(f"{e.name.replace('-', ' ')} {e.description}"))
        fields.append(toks)
        for t in df:
            if t in toks:
                df[t] += 1
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    scored = []
    for i, (e, toks) in enumerate(zip(pool, fields)):
        if not toks.intersection(terms) and not e.meta:
            continue
        s = score_entry(terms, e, idf)
        if s > 0:
            scored.append((s, -i, e))
    best = heapq.nlargest(k, scored, key=lambda x: (x[0], x[1]))
    return [
        Hit(entry=e, score=s, snippet=e.description, ranks={"lexical": r})
        for r, (s, _, e) in enumerate(best, start=1)
    ]
