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
from typing import Dict, FrozenSet, List, Sequence

from boost_cli.core.stem import stem

__all__ = [
    "KEYWORD_WEIGHT",
    "MAX_TOKEN_LEN",
    "QUERY_STOPWORDS",
    "QUERY_STOP_WEIGHT",
    "STOPWORDS",
    "query_weights",
    "tokenize",
]

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


# --------------------------------------------------------------------------- query weights

# Query side only: the SMART / MySQL full-text stopword list (543 words; the 47 with an
# apostrophe can never be a raw token and are left out). It holds the conversational
# filler of task descriptions ("help me figure out", "keeps", "really", "got") that the
# index-side `STOPWORDS` keeps on purpose: such words are rare in skill files, so their
# idf is high and they would outweigh the task's real terms. Measured: docs/benchmarks.md.
_QUERY_STOPWORD_TEXT = """
    able about above according accordingly across actually after afterwards again against
    all allow allows almost alone along already also although always am among amongst an and
    another any anybody anyhow anyone anything anyway anyways anywhere apart appear appreciate
    appropriate are around as aside ask asking associated at available away awfully be became
    because become becomes becoming been before beforehand behind being believe below beside
    besides best better between beyond both brief but by came can cannot cant cause causes
    certain certainly changes clearly co com come comes concerning consequently consider
    considering contain containing contains corresponding could course currently definitely
    described despite did different do does doing done down downwards during each edu eg
    eight either else elsewhere enough entirely especially et etc even ever every everybody
    everyone everything everywhere ex exactly example except far few fifth first five followed
    following follows for former formerly forth four from further furthermore get gets getting
    given gives go goes going gone got gotten greetings had happens hardly has have having he
    hello help hence her here hereafter hereby herein hereupon hers herself hi him himself
    his hither hopefully how howbeit however ie if ignored immediate in inasmuch inc indeed
    indicate indicated indicates inner insofar instead into inward is it its itself just
    keep keeps kept know known knows last lately later latter latterly least less lest let
    like liked likely little look looking looks ltd mainly many may maybe me mean meanwhile
    merely might more moreover most mostly much must my myself name namely nd near nearly
    necessary need needs neither never nevertheless new next nine no nobody non none noone
    nor normally not nothing novel now nowhere obviously of off often oh ok okay old on once
    one ones only onto or other others otherwise ought our ours ourselves out outside over
    overall own particular particularly per perhaps placed please plus possible presumably
    probably provides que quite qv rather rd re really reasonably regarding regardless regards
    relatively respectively right said same saw say saying says second secondly see seeing
    seem seemed seeming seems seen self selves sensible sent serious seriously seven several
    shall she should since six so some somebody somehow someone something sometime sometimes
    somewhat somewhere soon sorry specified specify specifying still sub such sup sure take
    taken tell tends th than thank thanks thanx that thats the their theirs them themselves
    then thence there thereafter thereby therefore therein theres thereupon these they think
    third this thorough thoroughly those though three through throughout thru thus to together
    too took toward towards tried tries truly try trying twice two un under unfortunately
    unless unlikely until unto up upon us use used useful uses using usually value various
    very via viz vs want wants was way we welcome well went were what whatever when whence
    whenever where whereafter whereas whereby wherein whereupon wherever whether which while
    whither who whoever whole whom whose why will willing wish with within without wonder
    would yes yet you your yours yourself yourselves zero
"""
QUERY_STOPWORDS: FrozenSet[str] = frozenset(_QUERY_STOPWORD_TEXT.split())
QUERY_STOP_WEIGHT = 0.25  # a task word on the query stoplist keeps this much of its weight
KEYWORD_WEIGHT = 0.7  # a keyword term the task does not contain, per occurrence


def query_weights(text: str, keywords: Sequence[str] = ()) -> Dict[str, float]:
    """Term → weight for a query: the task ``text`` and the caller's ``keywords``.

    - Each task term counts 1 per occurrence, or `QUERY_STOP_WEIGHT` when its raw
      lowercased word is in `QUERY_STOPWORDS` — unless every task word is (then all count 1).
    - Each keyword term adds `KEYWORD_WEIGHT` per occurrence when the task does not
      contain it, and 1 when it does (as if the keyword were appended to the task).

    >>> query_weights("help me test the app", ["jest"])
    {'help': 0.25, 'test': 1.0, 'app': 1.0, 'jest': 0.7}
    """
    lookup = _CACHE.__getitem__
    task = [
        (term, raw in QUERY_STOPWORDS)
        for raw in _TOKEN_RE.findall(text.lower())
        for term in (lookup(raw),)
        if term
    ]
    soften = not all(stop for _, stop in task)
    out: Dict[str, float] = {}
    for term, stop in task:
        out[term] = out.get(term, 0.0) + (QUERY_STOP_WEIGHT if stop and soften else 1.0)
    in_task = set(out)
    for phrase in keywords:
        for term in tokenize(phrase):
            out[term] = out.get(term, 0.0) + (1.0 if term in in_task else KEYWORD_WEIGHT)
    return out
