"""Text to index terms: the one tokenizer used for documents and queries alike.

Rules, in order:

1. lowercase the text;
2. split on anything that is not a letter or digit (``\\w`` minus ``_``), so
   ``jest-runner`` -> jest, runner; ``snake_case`` -> snake, case;
   ``foo.bar/baz`` -> foo, bar, baz; any Unicode letter counts as a letter;
3. drop stopwords (`STOPWORDS`, checked before stemming), tokens of one
   character, and tokens longer than `MAX_TOKEN_LEN` (hashes, base64, URLs
   glued together -- noise that would only bloat the vocabulary);
4. stem tokens made only of ASCII letters with the Porter stemmer
   (`boost_cli.core.stem`); tokens with digits (``es2015``, ``v8``) or non-ASCII
   letters are kept as they are.

camelCase is *not* split: ``useEffect`` is the one token ``useeffect``, which is
what users type for it (splitting it measured no better: docs/benchmarks.md).
Speed: one compiled ``findall`` over the lowercased text (64 K characters at a
time), then one dict look-up per token in a cache that maps a raw token to its
term ("" when dropped).
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List

from boost_cli.core.stem import stem

__all__ = ["MAX_TOKEN_LEN", "STOPWORDS", "tokenize"]

MAX_TOKEN_LEN = 40

# A small English list: articles, pronouns, auxiliaries, prepositions,
# conjunctions and contraction fragments ("don't" -> don, t). Domain words such
# as test, use, file, app, code, run are deliberately absent.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren as at
    be because been before being below between both but by
    can cannot could couldn
    did didn do does doesn doing don down during
    each either etc even ever every
    few for from further
    had hadn has hasn have haven having he her here hers herself him himself his how however
    i ie if in into is isn it its itself
    just
    ll
    may me might mightn more most must mustn my myself
    needn neither no nor not now
    of off on once only or other our ours ourselves out over own
    re
    same shall shan she should shouldn so some such
    than that the their theirs them themselves then there these they this those
    through thus to too
    under until up upon us
    ve very
    was wasn we were weren what when where whether which while who whom whose why
    will with won would wouldn
    yet you your yours yourself yourselves
"""
STOPWORDS: FrozenSet[str] = frozenset(_STOPWORD_TEXT.split())

_TOKEN_RE = re.compile(r"[^\W_]+")

# Raw tokens seen in a long-lived process are bounded by the corpus vocabulary
# plus noise; clear the cache rather than let a pathological input grow it forever.
_CACHE_LIMIT = 2_000_000


class _TermCache(Dict[str, str]):
    """raw token -> term, or "" when the token is dropped; filled on first sight."""

    def __missing__(self, token: str) -> str:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        term = _term(token)
        self[token] = term
        return term


def _term(token: str) -> str:
    """The index term for one lowercased raw token, or "" to drop it."""
    if len(token) < 2 or len(token) > MAX_TOKEN_LEN or token in STOPWORDS:
        return ""
    if token.isascii() and token.isalpha():
        return stem(token)
    return token


_CACHE = _TermCache()


# Long texts are tokenized a piece at a time: one findall over 80 MB builds a
# 10-million-item list and runs ~1.6x slower than the same work in 64 K pieces.
_PIECE = 1 << 16
_SEPARATOR_RE = re.compile(r"[\W_]")


def _tokenize_piece(text: str) -> List[str]:
    lookup = _CACHE.__getitem__
    return [t for t in map(lookup, _TOKEN_RE.findall(text.lower())) if t]


def tokenize(text: str) -> List[str]:
    """The index terms of ``text``, in order, duplicates kept (BM25 counts them).

    >>> tokenize("Testing the jest-runner with snake_case mocks")
    ['test', 'jest', 'runner', 'snake', 'case', 'mock']
    """
    n = len(text)
    if n <= _PIECE:
        return _tokenize_piece(text)
    out: List[str] = []
    i = 0
    while i < n:
        j = i + _PIECE
        if j < n:
            # Cut just after a separator, so no token is split in two.
            k = text.rfind("\n", i, j)
            if k <= i:
                k = text.rfind(" ", i, j)
            if k > i:
                j = k + 1
            else:
                m = _SEPARATOR_RE.search(text, j)
                j = n if m is None else m.end()
        out.extend(_tokenize_piece(text[i:j]))
        i = j
    return out
