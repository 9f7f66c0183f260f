"""Related terms, learnt from the taps themselves: which index terms keep company in skill
names and descriptions, so a plain query (no LLM, no vectors, no keywords) can be widened
by a few low-weight terms the user did not type.

This is global term association (co-occurrence statistics over the whole tapped catalog),
not feedback from a first ranking: each *name. description* field — the text a skill's
author wrote to say what it is for — counts as one document, and a term suggests another
when the fields that hold the first often hold the second, more often
than chance would put them there (`association`: P(e | q) weighed by e's idf). A term's
neighbours are computed once, when the index is built (`build`), kept in a small file
(`pack` / `unpack`), and looked up per query (`Related.expand`): a candidate term scores
the sum, over the query's content terms, of ``idf(q) × association(q → e)``; the best
`EXPAND_TERMS` candidates join the query with weights up to `EXPAND_WEIGHT` (the best
one; the others in proportion). A query of fewer than `MIN_QUERY_TERMS` such terms (a
keyword search: what it names is what it wants) is left as it is.

Nothing here reads files or knows the query set: the statistics come from the catalog, so
they follow whatever registries a user taps. Measured: docs/benchmarks.md ("Issue 19").
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import struct
import zlib
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.binio import from_le, to_le

__all__ = [
    "EXPAND_TERMS",
    "EXPAND_WEIGHT",
    "FEEDBACK_DOCS",
    "FEEDBACK_MIN_TERMS",
    "FEEDBACK_TERMS",
    "FEEDBACK_WEIGHT",
    "FORMAT",
    "MAGIC",
    "MIN_QUERY_TERMS",
    "Related",
    "RelatedDamaged",
    "build",
    "corpus_key",
    "load",
    "association",
    "pack",
    "unpack",
]

MAGIC = b"BOOSTREL"
FORMAT = 1

# What is counted (`build`).
MIN_DF = 2  # a term in fewer fields has no company to learn from
MAX_DF_SHARE = 0.05  # a term in more than this share of the fields says little (use, code…)
MIN_COOC = 3  # fields two terms must share before their association counts
NEIGHBOURS = 32  # neighbours kept per term (16-64 and all measured alike: docs/benchmarks.md)

# How a query uses them (`Related.expand`).
EXPAND_TERMS = 5
EXPAND_WEIGHT = 0.3
MIN_QUERY_TERMS = 3  # content terms with neighbours a query needs before it is widened

# How the hybrid widens BM25 from the skills nearest in meaning (`Related.feedback`).
FEEDBACK_DOCS = 10  # the dense search's first files whose name and description count
FEEDBACK_TERMS = 10
FEEDBACK_WEIGHT = 0.2
FEEDBACK_MIN_TERMS = 4  # content terms a query needs (a short one names what it wants)

_HEAD = struct.Struct("<8sIII")  # magic, format, header length, CRC32 of everything after


class RelatedDamaged(ValueError):
    """A related-terms file that is not one this boost wrote (bad magic, version, CRC)."""


def association(co: int, df_q: int, df_e: int, n: int) -> float:
    """How strongly a field holding ``q`` suggests ``e``, over ``n`` fields.

    ``a(q → e) = co / df_q × ln(1 + n / df_e) / ln(1 + n)``: the share of ``q``'s fields
    that hold ``e`` (P(e | q)), times ``e``'s idf as a share of the highest idf possible,
    so a neighbour found everywhere says little. In [0, 1]; not symmetric.
    """
    if co <= 0 or df_q <= 0 or df_e <= 0 or n <= 0:
        return 0.0
    return min(1.0, co / df_q) * math.log(1.0 + n / df_e) / math.log(1.0 + n)


@dataclass(frozen=True)
class Related:
    """Each term's best neighbours, by association, with the statistics `expand` needs.

    ``terms``: sorted; ``first[i]:first[i + 1]`` are term ``i``'s neighbours in
    ``nb_ids`` (indexes into ``terms``) and ``nb_score`` (`association` × 65,535, rounded);
    ``df[i]``: the fields term ``i`` is in, out of ``n``. ``key`` names the corpus it was
    built from (the caller's choice: the index's segment keys)."""

    key: str
    n: int
    terms: Sequence[str]
    df: Sequence[int]
    first: Sequence[int]
    nb_ids: Sequence[int]
    nb_score: Sequence[int]

    def _find(self, term: str) -> int:
        i = bisect.bisect_left(self.terms, term)
        return i if i < len(self.terms) and self.terms[i] == term else -1

    def neighbours(self, term: str) -> List[Tuple[str, float]]:
        """``term``'s related terms, best first, with their association ([] when none)."""
        i = self._find(term)
        if i < 0:
            return []
        return [
            (self.terms[self.nb_ids[j]], self.nb_score[j] / 65535.0)
            for j in range(self.first[i], self.first[i + 1])
        ]

    def expand(
        self,
        weights: Mapping[str, float],
        terms: int = EXPAND_TERMS,
        weight: float = EXPAND_WEIGHT,
        min_terms: int = MIN_QUERY_TERMS,
    ) -> Dict[str, float]:
        """The terms to add to the query ``weights`` (term → weight), with their weights.

        Only the query's content terms (weight ≥ 1: not the softened filler of
        `tokenize.query_weights`) that have neighbours are expanded, and only when there
        are at least ``min_terms`` of them. A candidate scores
        ``Σ_q idf(q) × association(q → e)`` over them, ``idf(q) = ln(1 + n / df(q))``; a
        term already in the query is never added. The best ``terms`` candidates get
        ``weight × score / best score`` (ties: the smaller term).
        """
        rows = []
        for q, w in weights.items():
            if w < 1.0:
                continue
            i = self._find(q)
            if i >= 0 and self.first[i] < self.first[i + 1]:
                rows.append(i)
        if len(rows) < max(min_terms, 1) or terms <= 0 or weight <= 0.0:
            return {}
        scores: Dict[str, float] = {}
        for i in rows:
            idf = math.log(1.0 + self.n / self.df[i])
            for j in range(self.first[i], self.first[i + 1]):
                e = self.terms[self.nb_ids[j]]
                if e not in weights:
                    scores[e] = scores.get(e, 0.0) + idf * self.nb_score[j] / 65535.0
        if not scores:
            return {}
        return _best(scores, terms, weight)

    def feedback(
        self,
        docs: Iterable[Tuple[float, Sequence[str]]],
        query: Mapping[str, float],
        terms: int = FEEDBACK_TERMS,
        weight: float = FEEDBACK_WEIGHT,
        min_terms: int = FEEDBACK_MIN_TERMS,
    ) -> Dict[str, float]:
        """Terms to add to the query ``query`` (term → weight) from feedback documents.

        ``docs`` are (weight, index terms) pairs: the name and description of the skills a
        search in meaning found nearest, each weighted by its similarity to the query.
        This is relevance-model feedback (RM3) over those fields: a term scores
        ``Σ_d w_d × tf_d(t) / |d| × idf(t)``, counted only for terms of this table's
        vocabulary (in 2 to 5 % of the catalog's fields: `build`), so a term the catalog
        says nothing with, or says everywhere, is never added. A term already in the query
        is never added; the best ``terms`` get ``weight × score / best score`` (ties: the
        smaller term). A query of fewer than ``min_terms`` content terms (weight ≥ 1: not
        the softened filler) is left as it is: a short query names what it wants.
        """
        content = sum(1 for w in query.values() if w >= 1.0)
        if terms <= 0 or weight <= 0.0 or content < min_terms:
            return {}
        scores: Dict[str, float] = {}
        idf: Dict[str, float] = {}
        for w, field in docs:
            if w <= 0.0 or not field:
                continue
            share = w / len(field)
            for t in field:
                if t in query:
                    continue
                if t not in idf:
                    i = self._find(t)
                    idf[t] = math.log(1.0 + self.n / self.df[i]) if i >= 0 else 0.0
                if idf[t] > 0.0:
                    scores[t] = scores.get(t, 0.0) + share * idf[t]
        return _best(scores, terms, weight)


def _best(scores: Mapping[str, float], terms: int, weight: float) -> Dict[str, float]:
    """The ``terms`` best of ``scores``, weighted ``weight × score / best score``."""
    if not scores:
        return {}
    best = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:terms]
    top = best[0][1]
    return {e: weight * s / top for e, s in best}


def build(
    fields: Iterable[Sequence[str]],
    key: str = "",
    *,
    min_df: int = MIN_DF,
    max_df_share: float = MAX_DF_SHARE,
    min_cooc: int = MIN_COOC,
    neighbours: int = NEIGHBOURS,
) -> Related:
    """The association table of ``fields`` (each the index terms of one name. description
    field; a field repeated word for word counts once, as the index keeps one copy).

    Only terms in ``min_df`` to ``max_df_share × n`` fields take part; ``q`` suggests
    ``e`` when they share at least ``min_cooc`` fields, by `association`; each term
    keeps its ``neighbours`` best (ties: the smaller term)."""
    distinct = {tuple(sorted(set(f))) for f in fields}
    docs = sorted(distinct)
    n = len(docs)
    df: Counter[str] = Counter(t for d in docs for t in d)
    cap = max_df_share * n
    vocab = sorted(t for t, c in df.items() if min_df <= c <= cap)
    ids = {t: i for i, t in enumerate(vocab)}
    size = len(vocab)
    pairs: Counter[int] = Counter()
    for d in docs:
        kept = [ids[t] for t in d if t in ids]  # ascending: the field is sorted
        if len(kept) > 1:
            pairs.update(a * size + b for a, b in itertools.combinations(kept, 2))
    dfs = [df[t] for t in vocab]
    best: List[List[Tuple[float, int]]] = [[] for _ in range(size)]
    for pair, co in pairs.items():
        if co < min_cooc:
            continue
        a, b = divmod(pair, size)
        best[a].append((association(co, dfs[a], dfs[b], n), b))
        best[b].append((association(co, dfs[b], dfs[a], n), a))
    first = array("I", [0])
    nb_ids, nb_score = array("I"), array("H")
    for i in range(size):
        top = sorted(best[i], key=lambda x: (-x[0], vocab[x[1]]))[:neighbours]
        for s, j in top:
            nb_ids.append(j)
            nb_score.append(min(65535, max(1, round(s * 65535))))
        first.append(len(nb_ids))
    return Related(key, n, vocab, array("I", dfs), first, nb_ids, nb_score)


def pack(rel: Related) -> bytes:
    """The table as the bytes of a related-terms file (little-endian, CRC-checked)."""
    terms = "\n".join(rel.terms).encode("utf-8")
    arrays = [
        to_le(array("I", rel.df)),
        to_le(array("I", rel.first)),
        to_le(array("I", rel.nb_ids)),
        to_le(array("H", rel.nb_score)),
    ]
    header = json.dumps(
        {
            "key": rel.key,
            "n": rel.n,
            "terms": len(rel.terms),
            "sizes": [len(terms), *map(len, arrays)],
        },
        sort_keys=True,
    ).encode("utf-8")
    body = header + terms + b"".join(arrays)
    return _HEAD.pack(MAGIC, FORMAT, len(header), zlib.crc32(body)) + body


def unpack(data: bytes) -> Related:
    """A related-terms file's table; `RelatedDamaged` when it is not an intact one."""
    if len(data) < _HEAD.size:
        raise RelatedDamaged("too short")
    magic, version, hlen, crc = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise RelatedDamaged("not a related-terms file")
    if version != FORMAT:
        raise RelatedDamaged(f"format {version}, this boost reads {FORMAT}")
    body = data[_HEAD.size :]
    if zlib.crc32(body) != crc:
        raise RelatedDamaged("checksum mismatch")
    try:
        header = json.loads(body[:hlen])
        sizes = [int(s) for s in header["sizes"]]
        key, n, count = str(header["key"]), int(header["n"]), int(header["terms"])
    except (ValueError, KeyError, TypeError) as exc:
        raise RelatedDamaged("bad header") from exc
    parts: List[bytes] = []
    pos = hlen
    for size in sizes:
        parts.append(body[pos : pos + size])
        pos += size
    if pos != len(body) or len(parts) != 5:
        raise RelatedDamaged("sections do not add up")
    terms = parts[0].decode("utf-8").split("\n") if count else []
    df, first = from_le("I", parts[1]), from_le("I", parts[2])
    nb_ids, nb_score = from_le("I", parts[3]), from_le("H", parts[4])
    if (
        len(terms) != count
        or len(df) != count
        or len(first) != count + 1
        or len(nb_ids) != len(nb_score)
        or first[0] != 0
        or first[-1] != len(nb_ids)
        or any(map(int.__gt__, first, first[1:]))
        or (nb_ids and max(nb_ids) >= count)
        or (df and min(df) <= 0)
    ):
        raise RelatedDamaged("tables disagree")
    return Related(key, n, terms, df, first, nb_ids, nb_score)


def corpus_key(segments: Mapping[str, Mapping[str, object]]) -> str:
    """The key of a table built from the index whose manifest lists ``segments`` (tap →
    record with the segment's ``key``): 16 hex digits over the format, the counting
    parameters and the segment keys, which change with a tap's commit, entries or the
    scan (`index-format.md`)."""
    taps = sorted((str(tap), str(rec.get("key", ""))) for tap, rec in segments.items())
    parts = [FORMAT, MIN_DF, MAX_DF_SHARE, MIN_COOC, NEIGHBOURS, taps]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:16]


def load(data: Optional[bytes], key: str) -> Optional[Related]:
    """The table in ``data`` when it is intact and built for ``key``, else None."""
    if data is None:
        return None
    try:
        rel = unpack(data)
    except RelatedDamaged:
        return None
    return rel if rel.key == key else None
