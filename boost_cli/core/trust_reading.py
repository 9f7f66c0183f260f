"""What a reader reads of a registry text, for the trust rules to match (pure).

A rule looks for words ("ignore previous instructions", ``base64 -d | sh``); a writer who
wants the words past it without a reader noticing has two tools, and this module takes
both away before any rule runs:

- characters no reader sees inside a word: format characters (Unicode category Cf: soft
  hyphen, zero-width space and joiners, word joiner, bidi marks, tag characters, …),
  variation selectors and the combining grapheme joiner. `Reading` strips them
  (`INVISIBLE`).
- letters of another script that look like Latin ones: Cyrillic ``о`` in ``ignоre``,
  Greek ``ο``, fullwidth ``ｉ``, mathematical ``𝐢``. `Reading` folds each to the Latin
  letter it reads as (`CONFUSABLES`: a small table, one character to one, for every Latin
  letter that has a common look-alike; not Unicode's whole confusables list).

A `Reading` keeps the offsets back to the original text, so a finding's line and excerpt
are the original's (with the stripped characters shown as ``\\uNNNN``). Line breaks are
never stripped: a line number in the reading is the same line in the original.

`hidden_spans` finds where in a text a reader sees nothing at all when it is rendered
(Markdown on a forge, HTML in a browser): comments, link reference definitions, elements
styled hidden, ``<template>``/``<script>``/``<style>``, processing instructions and
declarations, the inside of a tag (its attributes), an image's alt text and a link's
destination and title. Every such context counts alike.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from typing import Dict, FrozenSet, List, Sequence, Tuple

# Format characters that are drawn (a number sign that spans digits): not stripped.
DRAWN_FORMAT = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)

# What is stripped before matching: the Cf ranges (Unicode 15, less `DRAWN_FORMAT`),
# variation selectors and the combining grapheme joiner (U+034F). tests/test_trust_reading.py
# checks this against `unicodedata` of the running Python.
INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xE0100, 0xE01EF),
)
INVISIBLE = frozenset(chr(c) for lo, hi in INVISIBLE_RANGES for c in range(lo, hi + 1))

# Look-alikes of Latin letters (Cyrillic, Greek, Latin extensions), each to the lower-case
# Latin letter it reads as. Fullwidth, mathematical and letter-like forms are added from
# their compatibility decomposition (`_compatibility`).
CONFUSABLES: Dict[str, str] = {
    **dict(zip("аеорсухіјѕԁԛԝһӏькпгԍтмнв", "aeopcyxijsdqwhlbknrgtmhb")),
    **dict(zip("АВЕКМНОРСТХІЈЅУҮԚԜҺӀ", "abekmhopctxijsyyqwhl")),
    **dict(zip("αονικρτυχεγηϲϳ", "aovikptuxeyncj")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "abezhikmnoptyx")),
    **dict(zip("ıɡȷɑİ", "igjai")),
}
# Where a letter's compatibility forms are (fullwidth; mathematical alphanumerics;
# letter-like symbols such as ℓ and ℯ).
_COMPAT_RANGES = ((0xFF10, 0xFF5A), (0x1D400, 0x1D7FF), (0x2100, 0x214F))


@functools.lru_cache(maxsize=1)
def _compatibility() -> Dict[str, str]:
    """The characters of `_COMPAT_RANGES` whose NFKC form is one ASCII letter or digit."""
    out = {}
    for lo, hi in _COMPAT_RANGES:
        for code in range(lo, hi + 1):
            ch = chr(code)
            plain = unicodedata.normalize("NFKC", ch)
            if len(plain) == 1 and plain.isascii() and plain.isalnum():
                out[ch] = plain.lower()
    return out


@functools.lru_cache(maxsize=1)
def _table() -> Dict[int, str]:
    """`str.translate`'s table of the folding (one character for one: offsets hold)."""
    return {ord(k): v for k, v in {**_compatibility(), **CONFUSABLES}.items()}


@functools.lru_cache(maxsize=1)
def _invisible() -> re.Pattern:
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in INVISIBLE_RANGES) + "]+")


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


class Reading:
    """A text as a reader reads it: `text` the original, `norm` the text the rules match
    (invisible characters stripped, look-alikes folded), `low` it lower-cased;
    `original(offset)` maps an offset of `norm` back to `text`."""

    __slots__ = ("text", "norm", "low", "chars", "_cuts")

    def __init__(self, text: str, low: str = "") -> None:
        self.text = text
        self._cuts: List[int] = []  # per stripped character: its offset in text, less its rank
        self.chars: FrozenSet[str] = frozenset()  # the characters of text beyond ASCII
        if text.isascii():
            self.norm, self.low = text, low or text.lower()
            return
        # Which characters it holds beyond ASCII: cheaper than a search for each set (a
        # character class with astral ranges is slow in `re`).
        self.chars = chars = frozenset("".join(_NON_ASCII.findall(text)))
        norm = text
        if not INVISIBLE.isdisjoint(chars):
            parts, at = [], 0
            for m in _invisible().finditer(text):
                parts.append(text[at : m.start()])
                for i in range(m.start(), m.end()):
                    self._cuts.append(i - len(self._cuts))
                at = m.end()
            parts.append(text[at:])
            norm = "".join(parts)
        table = _table()
        if any(ord(c) in table for c in chars):
            norm = norm.translate(table)
        self.norm = norm
        self.low = low if norm is text and low else norm.lower()

    def original(self, offset: int) -> int:
        """The offset in `text` of the character at ``offset`` in `norm`."""
        return offset + bisect.bisect_right(self._cuts, offset) if self._cuts else offset


# --------------------------------------------------------------------------- contexts

# Inline CSS that leaves an element's text unseen.
_UNSEEN_STYLE = (
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0+)?(?![.\d])"
    r"|opacity\s*:\s*0(?:\.0+)?(?![.\d])|color\s*:\s*transparent"
    r"|(?:left|top|text-indent)\s*:\s*-\d{3,}|\shidden(?:[\s=>/])"
)
_HIDDEN = (
    r"<!--.*?(?:-->|\Z)"  # an HTML comment (unterminated: to the end)
    r"|<\?.*?(?:\?>|\Z)"  # a processing instruction (Markdown: an HTML block not shown)
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)|<![A-Za-z][^>]{0,2000}>"  # CDATA, a declaration
    # a link reference definition: `[//]: # (…)`, `[note]: # "…"`, `[x]: <> (…)`; never
    # shown (a footnote `[^1]: …` is, so not that)
    r"|^[ \t]{0,3}\[(?!\^)[^\]\n]{1,200}\]:[^\n]*(?:\n[ \t]+[\"'(][^\n]*)?"
    r"|<(template|script|style)\b[^>]*>.*?(?:</\1\s*>|\Z)"  # never rendered
    r"|<(\w+)[^>\n]{0,300}?(?:" + _UNSEEN_STYLE + r")[^>]{0,300}>.{0,4000}?</\2\s*>"  # styled
    r"|<[A-Za-z][\w:-]*\s[^<>]{0,2000}>"  # a tag's attributes (alt, title, data-…)
    r"|!\[[^\]\n]{0,1000}\]"  # an image's alt text
    r"|\]\([^)\n]{0,2000}\)"  # a link's destination and title
)


@functools.lru_cache(maxsize=1)
def _hidden() -> re.Pattern:
    return re.compile(_HIDDEN, re.S | re.M | re.I)


def hidden_spans(text: str) -> List[Tuple[int, int]]:
    """The stretches of ``text`` a reader of it rendered does not see, in order."""
    return [m.span() for m in _hidden().finditer(text)]


def within(spans: Sequence[Tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``start``…``end`` lies inside one of ``spans`` (sorted, not overlapping)."""
    i = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= start and end <= spans[i][1]
