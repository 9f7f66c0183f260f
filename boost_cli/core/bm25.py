"""BM25 scoring math: one small pure function per formula, the formula in its docstring.

The index (`boost_cli.core.index`) stores exact ``tf`` and ``dl`` and turns the postings a
query touches into ``idf × tf-part`` with these functions (through per-length look-up
rows, so a posting costs two look-ups and an add). Nothing here touches files.

Notation: ``N`` documents (here: chunks), ``df`` documents containing the term, ``tf``
occurrences of the term in the document, ``dl`` the document's length in terms,
``avgdl`` the mean ``dl`` over the collection, ``k1`` tf saturation, ``b`` length
normalisation strength.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

__all__ = ["B", "K1", "idf", "length_norm", "score", "term_weight"]

K1 = 1.2
B = 0.75


def idf(df: int, n: int) -> float:
    """Non-negative (Lucene / BM25+) inverse document frequency.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``

    Unlike Robertson-Spärck Jones' ``ln((N - df + 0.5) / (df + 0.5))`` it never goes
    negative, so a term found in most documents still adds a little instead of
    penalising the documents that contain it.
    """
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def length_norm(dl: int, avgdl: float, k1: float = K1, b: float = B) -> float:
    """The document-length part of the tf denominator.

    ``K = k1 * (1 - b + b * dl / avgdl)``  (``K = k1`` when ``avgdl`` is 0).
    """
    if avgdl <= 0:
        return k1
    return k1 * (1.0 - b + b * dl / avgdl)


def term_weight(tf: int, dl: int, avgdl: float, k1: float = K1, b: float = B) -> float:
    """The saturated, length-normalised term frequency ("tf-part").

    ``w = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``

    It is 0 for ``tf = 0`` and stays below ``k1 + 1`` however large ``tf`` grows.
    """
    if tf <= 0:
        return 0.0
    return tf * (k1 + 1.0) / (tf + length_norm(dl, avgdl, k1, b))


def score(
    query_terms: Iterable[str],
    doc_tf: Mapping[str, int],
    dl: int,
    avgdl: float,
    df: Mapping[str, int],
    n: int,
    k1: float = K1,
    b: float = B,
) -> float:
    """BM25 of one document for a query: ``sum over query terms t of idf(t) * w(t)``.

    Every occurrence of a term in the query counts (a repeated query word weighs
    double), as in the reference definition; terms absent from ``df`` add nothing.
    """
    total = 0.0
    for t in query_terms:
        d = df.get(t, 0)
        tf = doc_tf.get(t, 0)
        if d and tf:
            total += idf(d, n) * term_weight(tf, dl, avgdl, k1, b)
    return total
