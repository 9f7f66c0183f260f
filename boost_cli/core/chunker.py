"""Split an entry's body into passages (`Chunk`) for scoring and for snippets.

Pure functions over strings; no I/O.

How a body is cut (``target`` characters per chunk, 1000 by default):

* Headings first. An ATX heading (``#`` .. ``######``, up to 3 spaces of indent,
  not inside a code fence) ends a chunk once the chunk holds ``target // 4``
  characters. Smaller sections in a row are packed into one chunk, whose heading
  path is the common prefix of theirs, unless they would then have to share a
  chunk with part of a long section: then they stay a chunk of their own.
* Inside a section too long for one chunk (``target + target // 4``), the cut is
  the *furthest* line start of the strongest rank between ``target // 2`` and
  ``target`` characters in: paragraph start outside code fences (after a blank
  line, at a fence's opening line, after its closing line), then any line outside
  fences, then a blank line inside a fence, then any line inside a fence. If only
  in-fence cuts are in reach, an earlier cut outside fences is taken instead, so a
  fence is split only when it is itself too long. A paragraph with no line
  break in reach is cut after a sentence, else at whitespace, else hard.
* A chunk that continues a section starts ~``overlap`` characters before the end
  of the previous one (at most half of it), at a word start. A chunk that starts
  at a heading has no overlap: the heading is its context.
* At most ``max_chunks`` chunks per body; the rest of a very long file is
  dropped. This is a cap on cost (the index grows with chunks); 40 chunks is
  ~25-40 KB, and a skill says what it is for long before that.

``text`` is the exact slice ``body[start:end]`` (leading blank lines and trailing
whitespace trimmed; indentation kept), fences and all, for display.
``score_text`` is the same passage with the *noise inside code fences* replaced
by a space -- what we saw in the corpus's code blocks: the fence markers
themselves (the info string, e.g. ``python``, is kept), punctuation-only tokens
of 3+ characters (``|---|``, ``====``, ``-->``, ``├──`` trees), and inside
tokens of 16+ characters, runs of 3+ punctuation characters (``://``), hex runs
of 16+ digits (hashes, keys), base64-like runs of 20+ characters that mix upper
case, lower case and digits (JWTs, data URIs, keys), and alphanumeric runs longer
than 40 characters. Identifiers and words inside code are kept: they are what
people search for. Prose is left as it is: the tokenizer already ignores
punctuation, and cleaning it too would double the cost of chunking.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterator, List, Optional, Sequence, Tuple

from boost_cli.core.models import Chunk

__all__ = ["chunk_body", "clean_score_text", "context_prefix", "MAX_DESCRIPTION_CHARS"]

MAX_DESCRIPTION_CHARS = 300

# Boundary ranks, strongest first (headings are kept apart, see _Layout).
_PARA, _LINE, _CODE_PARA, _CODE_LINE = range(4)

_CANDIDATE_RE = re.compile(r"\n([ \t]*)(`{3,}|~{3,}|#)")
_NONSPACE_RE = re.compile(r"\S")
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*\Z")
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+\Z")
_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END_RE = re.compile(r"[.!?:;][\"')\]]*\s")
_SPACE_RE = re.compile(r"\s")

# Noise is looked for in whitespace-separated tokens: one cheap scan finds tokens
# of 16+ characters (judged piece by piece in _drop_long), punctuation-only tokens
# of 3+ characters, and fence markers at the start of a token.
_NOISE_RE = re.compile(r"(?<!\S)(?=\S{3})(?:(?P<long>\S{16,})|[^\w\s]{3,}(?!\S)|`{3,}|~{3,})")
_INNER_NOISE_RE = re.compile(r"[^\w\s]{3,}|(?<![\w+/-])(?P<run>[\w+/-]{16,}={0,2})")
_HEX_RE = re.compile(r"(?:0[xX])?[0-9a-fA-F]{16,}")
_B64_RE = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
_LONG_ALNUM_RE = re.compile(r"[^\W_]{41,}")
_DIGIT_RE = re.compile(r"[0-9]")
_TITLE_MARKUP_RE = re.compile(r"[#\[*_`]")


def _drop_long(m: re.Match[str]) -> str:
    """A noise token becomes a space; a long token keeps its non-noise pieces."""
    token = m.group("long")
    if token is None:
        return " "
    return _INNER_NOISE_RE.sub(_drop_noise, token)


def _drop_noise(m: re.Match[str]) -> str:
    """Replace noise with a space; keep long runs that are identifiers or paths."""
    s = m.group("run")
    if s is None:
        return " "
    if _HEX_RE.fullmatch(s):
        return " "
    # base64: mixes upper case, lower case and digits (identifiers rarely do all three)
    if s != s.lower() and s != s.upper() and _DIGIT_RE.search(s) and _B64_RE.fullmatch(s):
        return " "
    return _LONG_ALNUM_RE.sub(" ", s) if len(s) > 40 else s


def clean_score_text(code: str) -> str:
    """``code`` (a fenced block, markers included) with its noise dropped.

    See the module docstring for what counts as noise.
    """
    return _NOISE_RE.sub(_drop_long, code)


def _heading_title(raw: Optional[str]) -> str:
    """A heading's text without closing hashes, link targets and emphasis marks."""
    if raw is None:
        return ""
    if _TITLE_MARKUP_RE.search(raw) is None:
        return raw.strip()
    title = _CLOSING_HASHES_RE.sub("", raw.strip())
    title = _LINK_RE.sub(r"\1", title)
    return title.strip().strip("*_`").strip()


def _candidates(body: str) -> Iterator[Tuple[int, str]]:
    """(line start, leading mark) of each line starting with ```, ~~~ or #."""
    m = _CANDIDATE_RE.match("\n" + body[:64])
    if m:
        yield 0, m.group(2)
    for m in _CANDIDATE_RE.finditer(body):
        yield m.start() + 1, m.group(2)


class _Layout:
    """Headings, sections and code fences of a body, found in one regex pass.

    Only lines that could open or close a fence or be a heading are looked at
    eagerly; line and paragraph boundaries are ranked lazily, inside the few
    windows where a section is too long to be one chunk. ``sections`` are
    (start, heading path), sorted, the first at 0; ``headings`` the starts of
    heading lines; for the k-th code fence, ``fence_opens[k]`` is the start of its
    opening line, ``fence_closes[k]`` the start of its closing line and
    ``fence_ends[k]`` the end of it (both ``len(body)`` when it is never closed).
    """

    def __init__(self, body: str) -> None:
        self.body = body
        self.headings: List[int] = []
        self.sections: List[Tuple[int, Tuple[str, ...]]] = [(0, ())]
        self.fence_opens: List[int] = []
        self.fence_closes: List[int] = []
        self.fence_ends: List[int] = []  # end of the closing line (before its newline)
        m = _NONSPACE_RE.search(body)
        self.first_text = -1 if m is None else body.rfind("\n", 0, m.start()) + 1
        stack: List[Tuple[int, str]] = []
        fence_char = ""
        fence_len = 0
        n = len(body)
        for pos, mark in _candidates(body):
            nl = body.find("\n", pos)
            line = body[pos : n if nl < 0 else nl].rstrip("\r")
            if fence_char:
                if mark[0] == fence_char and len(mark) >= fence_len and line.strip() == mark:
                    fence_char = ""
                    self.fence_closes.append(pos)
                    self.fence_ends.append(n if nl < 0 else nl)
                continue
            if mark[0] in "`~":
                info = line.lstrip(" \t")[len(mark) :]
                if mark[0] == "`" and "`" in info:
                    continue  # inline code, not a fence
                fence_char, fence_len = mark[0], len(mark)
                self.fence_opens.append(pos)
                continue
            h = _HEADING_RE.match(line)
            if h is None:
                continue
            level = len(h.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _heading_title(h.group(2))))
            path = tuple(t for _, t in stack if t)
            self.headings.append(pos)
            if pos == 0:
                self.sections[0] = (0, path)
            else:
                self.sections.append((pos, path))
        if fence_char:
            self.fence_closes.append(n)
            self.fence_ends.append(n)
        self._section_starts = [start for start, _ in self.sections]

    def next_heading(self, after: int) -> Optional[int]:
        """The first heading line starting strictly after ``after``."""
        i = bisect.bisect_right(self.headings, after)
        return self.headings[i] if i < len(self.headings) else None

    def last_heading(self, after: int, upto: int) -> Optional[int]:
        """The last heading line starting in (after, upto], if any."""
        i = bisect.bisect_right(self.headings, upto)
        if i and self.headings[i - 1] > after:
            return self.headings[i - 1]
        return None

    def score_text(self, start: int, end: int) -> str:
        """``body[start:end]`` with the noise of the code fences in it dropped."""
        body = self.body
        k = bisect.bisect_right(self.fence_ends, start)
        if k == len(self.fence_opens) or self.fence_opens[k] >= end:
            return body[start:end]
        parts = []
        cur = start
        while k < len(self.fence_opens) and self.fence_opens[k] < end:
            lo = max(self.fence_opens[k], cur)
            hi = min(self.fence_ends[k], end)
            parts.append(body[cur:lo])
            parts.append(clean_score_text(body[lo:hi]))
            cur = hi
            k += 1
        parts.append(body[cur:end])
        return "".join(parts)

    def _in_fence(self, pos: int) -> bool:
        """True when the line starting at ``pos`` is inside a fence (closing line included)."""
        i = bisect.bisect_left(self.fence_opens, pos) - 1
        return i >= 0 and pos <= self.fence_closes[i]

    def best_boundary(self, floor: int, lo: int, hi: int) -> Optional[int]:
        """The furthest line start in (lo, hi] of the strongest rank present.

        Ranks: paragraph start outside fences (after a blank line, at a fence's
        opening line, after a fence's closing line) > other line outside fences >
        line after a blank line inside a fence > other line inside a fence. When
        (lo, hi] only offers cuts inside a fence, a cut outside fences in
        (floor, lo] is taken instead, to keep the fence whole.
        """
        best = self._ranked(lo, hi)
        in_fence_only = best[_PARA] < 0 and best[_LINE] < 0 and max(best) >= 0
        if in_fence_only and floor < lo:
            earlier = self._ranked(floor, lo)
            if earlier[_PARA] >= 0 or earlier[_LINE] >= 0:
                best = earlier
        for p in best:
            if p >= 0:
                return p
        return None

    def _ranked(self, lo: int, hi: int) -> List[int]:
        """The furthest line start in (lo, hi] of each rank, -1 where there is none."""
        body = self.body
        best = [-1, -1, -1, -1]
        prev_blank = False
        nl = body.rfind("\n", 0, lo + 1)
        if nl < 0:
            nl = body.find("\n", lo)
        if nl >= 0:
            prev_start = body.rfind("\n", 0, nl) + 1
            prev_blank = not body[prev_start:nl].strip()
        while 0 <= nl < hi:
            p = nl + 1
            nl = body.find("\n", p)
            line_end = len(body) if nl < 0 else nl
            blank = not body[p:line_end].strip()
            if p > lo and not blank:
                if self._in_fence(p):
                    rank = _CODE_PARA if prev_blank else _CODE_LINE
                elif prev_blank or self._fence_edge(p):
                    rank = _PARA
                else:
                    rank = _LINE
                best[rank] = p
            prev_blank = blank
        return best

    def _fence_edge(self, pos: int) -> bool:
        """True when ``pos`` opens a fence or follows the line that closes one."""
        i = bisect.bisect_left(self.fence_opens, pos)
        if i < len(self.fence_opens) and self.fence_opens[i] == pos:
            return True
        if i == 0:
            return False
        close = self.fence_closes[i - 1]
        return close < pos and self.body.find("\n", close, pos) == pos - 1

    def heading_path(self, start: int, end: int) -> Tuple[str, ...]:
        """The common heading path of every section that [start, end) touches."""
        sections = self.sections
        i = bisect.bisect_right(self._section_starts, start) - 1
        path = sections[i][1]
        for j in range(i + 1, len(sections)):
            sec_start, other = sections[j]
            if sec_start >= end:
                break
            k = 0
            while k < min(len(path), len(other)) and path[k] == other[k]:
                k += 1
            path = path[:k]
        return path


def _soft_cut(body: str, lo: int, hi: int) -> int:
    """A cut in (lo, hi] inside one long paragraph: sentence end, whitespace, or hi."""
    window = body[lo:hi]
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(window)]
    if ends:
        return lo + ends[-1]
    i = max(window.rfind(" "), window.rfind("\t"), window.rfind("\n"))
    if i > 0:
        return lo + i + 1
    return hi


def _overlap_start(body: str, cut: int, prev_start: int, overlap: int) -> int:
    """Where the next chunk starts: ~``overlap`` before ``cut``, at a word start.

    The overlap never exceeds half of the previous chunk.
    """
    lo = max(cut - overlap, prev_start + (cut - prev_start + 1) // 2)
    m = _SPACE_RE.search(body, lo, cut)
    if m is None:
        return cut
    i = m.end()
    while i < cut and body[i].isspace():
        i += 1
    return i


def _trim(body: str, start: int, end: int) -> Tuple[int, int]:
    """Drop leading blank lines (keep indentation) and trailing whitespace."""
    while end > start and body[end - 1].isspace():
        end -= 1
    i = start
    while i < end:
        nl = body.find("\n", i, end)
        if nl < 0 or body[i:nl].strip():
            break
        i = nl + 1
    return i, end


def chunk_body(
    body: str,
    *,
    entry_id: str,
    tap: str,
    kind: str,
    target: int = 1000,
    overlap: int = 150,
    max_chunks: int = 40,
) -> List[Chunk]:
    """Cut ``body`` (frontmatter already stripped) into at most ``max_chunks`` chunks.

    Invariants: ``body[c.start:c.end] == c.text``; starts strictly increase; every
    non-whitespace character of ``body`` is in some chunk unless the cap was hit;
    consecutive chunks of one section overlap by at most ``overlap`` characters.
    Raises ValueError on nonsensical sizes (a caller bug, not a user error).
    """
    if target < 100 or not 0 <= overlap <= target // 4 or max_chunks < 1:
        raise ValueError(f"bad chunk sizes: target={target} overlap={overlap} max={max_chunks}")
    layout = _Layout(body)
    if layout.first_text < 0:
        return []
    n = len(body)
    min_section = target // 4
    slack = target // 4
    tiny = target // 10
    chunks: List[Chunk] = []
    start = core = layout.first_text
    at_section_start = True  # no overlap: the chunk starts a section or the body
    while len(chunks) < max_chunks:
        if at_section_start:
            # Whole sections smaller than min_section are packed with the next ones.
            h = layout.next_heading(start + min_section - 1)
        else:
            h = layout.next_heading(core)
        stop = n if h is None else h
        hi = start + target
        if stop - start <= target + slack:
            cut, overlapping = stop, False
        else:
            skipped = layout.last_heading(start + tiny - 1, min(hi, stop) - 1)
            if skipped is not None:
                # The small sections do not fit with what follows: end before it.
                cut, overlapping = skipped, False
            else:
                lo = start + target // 2
                # A cut must take in something new: past the first non-space after core.
                fresh = _NONSPACE_RE.search(body, core)
                floor = max(start + tiny, fresh.start() if fresh else core)
                found = layout.best_boundary(floor, lo, hi)
                cut = found if found is not None else _soft_cut(body, lo, hi)
                overlapping = True
        s, e = _trim(body, start, cut)
        if e > s:
            text = body[s:e]
            chunks.append(
                Chunk(
                    entry_id=entry_id,
                    tap=tap,
                    kind=kind,
                    index=len(chunks),
                    heading=layout.heading_path(max(s, core), e),
                    text=text,
                    score_text=layout.score_text(s, e),
                    start=s,
                    end=e,
                )
            )
        if cut >= n or _NONSPACE_RE.search(body, cut) is None:
            break
        core = cut
        at_section_start = not overlapping
        start = _overlap_start(body, cut, s, overlap) if overlapping else cut
    return chunks


def context_prefix(name: str, description: str, heading: Sequence[str]) -> str:
    """The short context scored with every chunk of an entry.

    ``"jest-runner. Unit testing for JavaScript. Testing > Mocking"``; the
    description is whitespace-collapsed and capped at `MAX_DESCRIPTION_CHARS`
    (cut at a word boundary); empty parts are left out.
    """
    desc = " ".join(description.split())
    if len(desc) > MAX_DESCRIPTION_CHARS:
        cut = desc.rfind(" ", 0, MAX_DESCRIPTION_CHARS + 1)
        desc = desc[: cut if cut > MAX_DESCRIPTION_CHARS // 2 else MAX_DESCRIPTION_CHARS]
    parts = [name.strip(), desc.strip(), " > ".join(h for h in heading if h)]
    return ". ".join(p.rstrip(".") for p in parts if p.rstrip("."))
