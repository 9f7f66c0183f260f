"""The *why* of a hit without an LLM: a whole prose sentence of its best passage that shares
query terms, with Markdown markup taken out; else the description.

A passage is a chunk of a Markdown file, so it holds headings, lists, checkboxes, links,
tables, code and YAML as well as prose, and its first and last sentences may be cut by the
chunk's bounds. Lines are read as Markdown: code fences, headings, table rows, YAML-like
``key: value`` lines, HTML comments and code-looking lines are dropped; list markers,
checkboxes, links (their text kept), images, inline code and emphasis markers are taken
out; the lines of one paragraph are joined before it is split into sentences, so a sentence
wrapped over lines stays whole. A sentence is *whole* when it ends in ``.``, ``!`` or ``?``
and starts inside the passage; a cut one is only picked when no whole one fits, and then
says so with an ellipsis. A sentence longer than the limit is cut at a word boundary,
with an ellipsis.
"""

from __future__ import annotations

import re
import string
from typing import FrozenSet, List, Optional, Sequence, Tuple

from boost_cli.core.text import ELLIPSIS, one_line
from boost_cli.core.tokenize import tokenize

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_RULE = re.compile(r"^\s*([-*_=]\s*){3,}$")
_YAML = re.compile(r"^\s*[A-Za-z_][\w-]*:(\s|$)")
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s*")
_QUOTE = re.compile(r"^\s*>+\s?")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(?:https?|mailto):[^>]*>")
_URL = re.compile(r"https?://\S+")
_HTML = re.compile(r"</?[A-Za-z][^>]*>|<!--.*?-->")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`+)")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<!\w)_([^_]+)_(?!\w)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_WHOLE_END = re.compile(r"[.!?][\"')\]]*$")
_CODE = re.compile(
    r"[{};=<>$]|^\s*(import|from|const|let|var|def|class|return|npm|pip|git|for|if|while|with|"
    r"elif|else|try|except|await|async)\b|\(\)|^\s*(//|/\*)"
)
_NOT_PROSE = re.compile(r"[^\w ]|[\d_]")
MIN_CHARS = 20
MIN_WORDS = 4


def strip_inline(text: str) -> str:
    """One line's inline Markdown taken out: images, links (their text kept), URLs, HTML,
    inline code ticks and emphasis markers."""
    # Each pattern is tried only when the text holds the characters any match of it must
    # (most lines hold none): the same result, a fraction of the regex calls.
    if "[" in text:
        if "![" in text:
            text = _IMAGE.sub("", text)
        if "](" in text:
            text = _LINK.sub(r"\1", text)
        if "][" in text:
            text = _REF_LINK.sub(r"\1", text)
    if "<" in text:
        text = _AUTOLINK.sub("", text)
    if "http" in text:
        text = _URL.sub("", text)
    if "<" in text:
        text = _HTML.sub("", text)
    if "*" in text or "_" in text or "`" in text:
        text = _EMPHASIS.sub("", text)
    if "_" in text:
        text = _UNDERSCORE_EMPHASIS.sub(r"\1", text)
    return one_line(text)


# ASCII letters and the space: in ASCII text, what `_NOT_PROSE` does not match.
_PROSE_ASCII = str.maketrans("", "", string.ascii_letters + " ")


def _not_prose(text: str) -> int:
    """How many characters of ``text`` `_NOT_PROSE` matches (an ASCII line is counted by
    deleting its letters and spaces, in C; any other by the pattern)."""
    if text.isascii():
        return len(text.translate(_PROSE_ASCII))
    return len(_NOT_PROSE.findall(text))


def _code_line(text: str) -> bool:
    if "|" in text or _CODE.search(text):
        return True
    return _not_prose(text) > 0.25 * max(len(text), 1)


def paragraphs(passage: str) -> List[Tuple[str, bool]]:
    """The prose paragraphs of ``passage`` (markup out) and whether each starts at the
    passage's first line (so may begin mid-sentence)."""
    out: List[Tuple[str, bool]] = []
    current: List[str] = []
    starts_first = False
    in_fence = False

    def flush() -> None:
        if current:
            out.append((" ".join(current), starts_first))
        current.clear()

    for n, raw in enumerate(passage.splitlines()):
        line = raw.rstrip()
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        if not line.strip():
            flush()
            continue
        if _HEADING.match(line) or _RULE.match(line) or _YAML.match(line):
            flush()
            continue
        body = _QUOTE.sub("", line)
        item = _LIST.match(body)
        if item:
            flush()
            body = _CHECKBOX.sub("", body[item.end() :])
        text = strip_inline(body)
        if not text or _code_line(text):
            flush()
            continue
        if not current:
            starts_first = n == 0
        current.append(text)
    flush()
    return out


def sentences(passage: str) -> List[Tuple[str, int]]:
    """Every sentence of the passage's prose with its quality: 2 ends in ``.``/``!``/``?``,
    1 is complete without (a list item), 0 is cut by the passage's bounds (it starts the
    passage in lowercase, or runs into its end unfinished)."""
    found: List[Tuple[str, int]] = []
    paras = paragraphs(passage)
    for i, (para, at_start) in enumerate(paras):
        parts = [p.strip() for p in _SENTENCE_END.split(para) if p.strip()]
        for j, s in enumerate(parts):
            cut_start = at_start and j == 0 and not s[:1].isupper()
            ends = bool(_WHOLE_END.search(s))
            cut_end = not ends and i == len(paras) - 1 and j == len(parts) - 1
            quality = 0 if cut_start or cut_end else 2 if ends else 1
            found.append((s, quality))
    return found


def clip_sentence(text: str, limit: int, whole: bool) -> str:
    """``text`` within ``limit`` characters: cut at a word boundary with an ellipsis when it
    is longer, or when it was cut already (not ``whole``)."""
    text = one_line(text)
    if len(text) <= limit and whole:
        return text
    room = limit - 2
    if len(text) > room:
        cut = text.rfind(" ", 0, room + 1)
        text = text[: cut if cut > room // 2 else room]
    return text.rstrip(" ,;:-–—") + " " + ELLIPSIS


def query_terms(query: str) -> FrozenSet[str]:
    """The terms `reason` matches sentences by: the query's (and keywords') tokens."""
    return frozenset(tokenize(query))


def reason(
    query: str,
    passage: str,
    description: str,
    limit: int,
    terms: Optional[FrozenSet[str]] = None,
) -> str:
    """The *why* (see the module docstring): the passage sentence sharing the most query
    terms (at least one, and no fewer than the description), whole sentences first.
    ``terms``: ``set(tokenize(query))`` computed once for a whole list of hits."""
    terms = query_terms(query) if terms is None else terms
    desc = strip_inline(description)
    desc_score = len(terms.intersection(tokenize(desc))) if desc else 0
    floor = max(desc_score, 1)
    heads = {t[:4] for t in terms}
    best: Tuple[int, int, str] = (-1, 0, "")  # quality, score, text
    for text, quality in sentences(passage or ""):
        if len(text) < MIN_CHARS or len(text.split()) < MIN_WORDS or text.endswith(":"):
            continue
        lower = text.lower()
        if not any(h in lower for h in heads):
            continue
        score = len(terms.intersection(tokenize(text)))
        if score < floor or (quality == 0 and score <= desc_score):
            continue  # a cut sentence must say more than the description to stand for it
        if (min(quality, 1), score, quality) > (min(best[0], 1), best[1], best[0]):
            best = (quality, score, text)
    if best[2]:
        return clip_sentence(best[2], limit, best[0] > 0)
    if desc:
        return clip_sentence(desc, limit, True)
    first = next(iter(sentences(passage or "")), None)
    return clip_sentence(first[0], limit, first[1] > 0) if first else ""


def pick(query: str, keywords: Sequence[str], passage: str, description: str, limit: int) -> str:
    return reason(" ".join([query, *keywords]), passage, description, limit)
