"""The Porter stemmer (1980), as in Martin Porter's reference C implementation.

Written from the algorithm description ("An algorithm for suffix stripping",
Program 14(3), 1980) and kept faithful to the reference implementation's output,
including its two documented departures from the paper: step 2 maps ``-bli`` to
``-ble`` (the paper has ``-abli`` to ``-able``) and adds ``-logi`` to ``-log``;
words of one or two letters are left alone.

`stem` is memoized without bound: an index's vocabulary is a few hundred
thousand distinct words, each stemmed once per process.

Notation used below, from the paper: a *consonant* is a letter other than
a, e, i, o, u, and other than a ``y`` preceded by a consonant. ``m`` (the
*measure*) of a stem is the number of vowel-sequence-then-consonant-sequence
pairs in it; ``*v*`` means the stem contains a vowel; ``*d`` that it ends in a
double consonant; ``*o`` that it ends consonant-vowel-consonant where the last
consonant is not w, x or y.
"""

from __future__ import annotations

from functools import cache
from typing import Dict, Tuple

__all__ = ["stem"]


def _cons(w: str, i: int) -> bool:
    """True when ``w[i]`` is a consonant in Porter's sense."""
    ch = w[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(w: str, end: int) -> int:
    """``m`` of ``w[:end]``: the number of VC pairs in ``[C](VC)^m[V]``."""
    n = 0
    i = 0
    while i < end and _cons(w, i):
        i += 1
    while i < end:
        while i < end and not _cons(w, i):
            i += 1
        if i >= end:
            break
        n += 1
        while i < end and _cons(w, i):
            i += 1
    return n


def _has_vowel(w: str, end: int) -> bool:
    """``*v*`` for the stem ``w[:end]``."""
    return any(not _cons(w, i) for i in range(end))


def _double_cons(w: str, i: int) -> bool:
    """``*d``: ``w[i-1:i+1]`` is a double consonant."""
    return i >= 1 and w[i] == w[i - 1] and _cons(w, i)


def _cvc(w: str, i: int) -> bool:
    """``*o``: ``w[i-2:i+1]`` is consonant-vowel-consonant, the last not w, x or y."""
    return i >= 2 and _cons(w, i) and not _cons(w, i - 1) and _cons(w, i - 2) and w[i] not in "wxy"


def _step1ab(w: str) -> str:
    """Plurals and -ed / -ing."""
    if w.endswith("s"):
        if w.endswith("sses") or w.endswith("ies"):
            w = w[:-2]
        elif not w.endswith("ss"):
            w = w[:-1]
    if w.endswith("eed"):
        if _measure(w, len(w) - 3) > 0:
            w = w[:-1]
        return w
    if w.endswith("ed"):
        base = len(w) - 2
    elif w.endswith("ing"):
        base = len(w) - 3
    else:
        return w
    if not _has_vowel(w, base):
        return w
    w = w[:base]
    if w.endswith(("at", "bl", "iz")):
        return w + "e"
    if _double_cons(w, len(w) - 1):
        return w if w[-1] in "lsz" else w[:-1]
    if _measure(w, len(w)) == 1 and _cvc(w, len(w) - 1):
        return w + "e"
    return w


def _step1c(w: str) -> str:
    """(*v*) Y -> I."""
    if w.endswith("y") and _has_vowel(w, len(w) - 1):
        return w[:-1] + "i"
    return w


# Suffix rules keyed by the character the reference implementation switches on.
# Within a group the first suffix the word ends with is the only one tried.
_Rules = Dict[str, Tuple[Tuple[str, str], ...]]

_STEP2: _Rules = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}

_STEP3: _Rules = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}

_STEP4: Dict[str, Tuple[str, ...]] = {
    "a": ("al",),
    "c": ("ance", "ence"),
    "e": ("er",),
    "i": ("ic",),
    "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"),
    "o": ("ion", "ou"),
    "s": ("ism",),
    "t": ("ate", "iti"),
    "u": ("ous",),
    "v": ("ive",),
    "z": ("ize",),
}


def _replace_if_m_gt0(w: str, rules: _Rules, key: str) -> str:
    """Steps 2 and 3: (m>0) SUFFIX -> REPLACEMENT for the first matching suffix."""
    for suffix, repl in rules.get(key, ()):
        if w.endswith(suffix):
            base = len(w) - len(suffix)
            if _measure(w, base) > 0:
                return w[:base] + repl
            return w
    return w


def _step4(w: str) -> str:
    """(m>1) drop a residual suffix; -ion only after s or t."""
    for suffix in _STEP4.get(w[-2], ()):
        if w.endswith(suffix):
            base = len(w) - len(suffix)
            if suffix == "ion" and not (base >= 1 and w[base - 1] in "st"):
                continue  # the reference then tries -ou, which cannot match
            if _measure(w, base) > 1:
                return w[:base]
            return w
    return w


def _step5(w: str) -> str:
    """(m>1) E ->; (m=1 and not *o) E ->; (m>1 and *d and *L) -> single letter."""
    if w.endswith("e"):
        m = _measure(w, len(w))
        if m > 1 or (m == 1 and not _cvc(w, len(w) - 2)):
            w = w[:-1]
    if w.endswith("ll") and _measure(w, len(w)) > 1:
        w = w[:-1]
    return w


@cache
def stem(word: str) -> str:
    """The Porter stem of ``word`` (expected lowercase ASCII letters).

    >>> [stem(w) for w in ("connections", "tested", "ponies", "relational")]
    ['connect', 'test', 'poni', 'relat']
    """
    if len(word) <= 2:
        return word
    w = _step1ab(word)
    if len(w) <= 1:
        return w
    w = _step1c(w)
    w = _replace_if_m_gt0(w, _STEP2, w[-2])
    w = _replace_if_m_gt0(w, _STEP3, w[-1])
    if len(w) >= 2:
        w = _step4(w)
    return _step5(w) if w else w
