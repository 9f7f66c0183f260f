"""Markdown frontmatter: split the ``---`` block off a file and parse its YAML subset.

Skill registries put metadata in a YAML block at the very top of a Markdown file.
boost has no runtime dependencies, so this module parses the subset of YAML those
files actually use, stdlib only:

* mappings nested by indentation, keys plain or quoted (keys are always strings);
* block lists (``- item``), including lists of maps and lists at the same indent as
  their key; flow lists ``[a, "b, c"]`` and flow maps ``{a: 1}``, nested, multi-line;
* plain, ``'single'`` (``''`` escape) and ``"double"`` quoted scalars (backslash
  escapes incl. ``\\uXXXX``), multi-line scalars folded as YAML folds them;
* ``|`` and ``>`` block scalars with ``-``/``+`` chomping and an indentation digit;
* comments, blank lines, CRLF line endings, a UTF-8 BOM; a whole document written
  as one flow map.

Plain scalars resolve as YAML 1.2's core schema mostly does: ``null``/``~``/empty
→ None; ``true``/``false``/``yes``/``no`` (any case — the YAML 1.1 words these files
use, but not ``on``/``off``/``y``/``n``) → bool; ``42`` → int; ``1.5``/``2e3`` → float.
Numbers with a leading zero (``007``), dates and ``.inf``/``.nan`` stay strings, so
nothing is lost and every result is JSON-serialisable. Quoted scalars are strings.

Deliberate leniency where real registries break YAML and the author's meaning is
unambiguous (strict parsers such as PyYAML reject each of these; about one file in
nine of the reference corpus needs one):

* after ``key:`` a plain value runs to the end of the line, colons included
  (``description: Use when: the user asks``), and so do its continuation lines —
  an indented line under a plain value is text even if it looks like ``key: value``;
* a value that starts with ``*``, ``&``, ``!``, ``%``, ``@`` or a backtick is a plain
  string (``globs: **/*.ts``) — anchors, aliases and tags are not supported;
* a quoted string or flow collection that closes and is followed by more text on the
  same line makes the whole value a plain string
  (``argument-hint: [file] | --all`` → ``"[file] | --all"``), and so does a ``|``/``>``
  followed by text (``range: > 5 years``);
* a ``#`` comment inside a multi-line plain scalar that goes on after it is text
  (a ``# Heading`` in a long description), since YAML could not continue there;
* an unknown or malformed escape in a double-quoted string is kept as written.

Duplicate keys: the last one wins. Errors (:class:`FrontmatterError`) name the line:
bad indentation, tabs used for indentation, unterminated quotes or flow collections,
and lines that are neither a key, a list item nor a continuation.

Where a document is valid YAML within this subset, the result equals PyYAML's
``safe_load`` (checked on the 8,001 corpus files PyYAML accepts), except that dates stay
strings and ``1e5`` is a float (YAML 1.2).

The parser works over a list of lines with explicit ``(line, column)`` positions:
every ``_parse_*`` function takes a position and returns the position after what it
read, tomli style. Well-formed input is read in one pass (linear time).
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from boost_cli.core.errors import BoostError

__all__ = ["FrontmatterError", "parse", "parse_lenient", "parse_yaml", "split"]

_BOM = "\ufeff"
_DEFAULT_FIX = "fix the YAML between the '---' lines at the top of the file"
_MAX_DEPTH = 64  # nesting deeper than this is an error, never a RecursionError


class FrontmatterError(BoostError):
    """Malformed frontmatter. ``line`` is 1-based (in the file, for :func:`parse`)."""

    def __init__(self, message: str, line: Optional[int] = None, fix: Optional[str] = None) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(where + message, fix or _DEFAULT_FIX)
        self.line = line


# --------------------------------------------------------------------------- splitting


def _line_at(text: str, pos: int) -> Tuple[str, int]:
    """The line starting at ``pos`` (without its newline) and the index after its newline
    (``len(text) + 1`` when it is the last line)."""
    nl = text.find("\n", pos)
    if nl == -1:
        return text[pos:], len(text) + 1
    return text[pos:nl], nl + 1


def _opens(text: str) -> bool:
    """Whether the first line (after a BOM) is a ``---`` fence."""
    start = 1 if text.startswith(_BOM) else 0
    first, _ = _line_at(text, start)
    return first.rstrip() == "---"


def split(text: str) -> Tuple[Optional[str], str, int]:
    """Split ``text`` into (raw frontmatter, body, body_offset).

    The frontmatter is the lines between a first line ``---`` (after an optional BOM)
    and the next line that is ``---`` or ``...``; raw is None when there is none or it
    is never closed (then the whole text, minus a BOM, is the body). Always
    ``body == text[body_offset:]``.
    """
    start = 1 if text.startswith(_BOM) else 0
    first, pos = _line_at(text, start)
    if first.rstrip() != "---" or pos > len(text):
        return None, text[start:], start
    fm_start = pos
    while pos <= len(text):
        line, nxt = _line_at(text, pos)
        if line.rstrip() in ("---", "..."):
            offset = min(nxt, len(text))
            return text[fm_start:pos], text[offset:], offset
        pos = nxt
    return None, text[start:], start


# --------------------------------------------------------------------------- public parse


def parse(text: str) -> Tuple[Dict[str, Any], str]:
    """(meta, body) of a Markdown file; raises FrontmatterError on malformed frontmatter.

    A file without frontmatter gives ``({}, text)``; one whose ``---`` is never closed
    raises (use :func:`parse_lenient` to read it as body).
    """
    raw, body, _ = split(text)
    if raw is None:
        if _opens(text):
            raise FrontmatterError(
                "the frontmatter opened by '---' is never closed",
                1,
                "add a line '---' after the frontmatter, or remove the first line",
            )
        return {}, body
    meta, _ = _parse_document(_source(raw, 2), recover=False)
    return meta, body


def parse_lenient(text: str) -> Tuple[Dict[str, Any], str, Optional[str]]:
    """(meta, body, warning): never raises on a str.

    On malformed frontmatter ``meta`` holds every top-level key that parsed (the bad
    entries are skipped) and ``warning`` describes the first problem, with its line.
    """
    raw, body, _ = split(text)
    if raw is None:
        if _opens(text):
            return {}, body, "line 1: the frontmatter opened by '---' is never closed"
        return {}, body, None
    meta, err = _parse_document(_source(raw, 2), recover=True)
    return meta, body, (err.message if err is not None else None)


def parse_yaml(src: str) -> Dict[str, Any]:
    """Parse the YAML subset (see the module docstring) into a dict; line numbers in
    errors count from 1 at the first line of ``src``."""
    meta, _ = _parse_document(_source(src, 1), recover=False)
    return meta


# --------------------------------------------------------------------------- lines


class _Src(NamedTuple):
    lines: List[str]  # without line endings
    indents: List[int]  # leading spaces of each line
    first_line: int  # the number of lines[0] in error messages
    open_end: bool  # the last line has no line break (matters to block scalars)


def _source(src: str, first_line: int) -> _Src:
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in src.split("\n")]
    open_end = not src.endswith("\n")
    if not open_end:
        lines.pop()  # the empty string after the final newline is not a line
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in lines]
    return _Src(lines, indents, first_line, open_end)


def _err(src: _Src, i: int, message: str, fix: Optional[str] = None) -> FrontmatterError:
    return FrontmatterError(message, src.first_line + min(i, len(src.lines) - 1), fix)


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def _next_content(src: _Src, i: int) -> int:
    """The first line at or after ``i`` that is neither blank nor a comment."""
    lines, n = src.lines, len(src.lines)
    while i < n:
        s = lines[i].lstrip(" \t")
        if s and not s.startswith("#"):
            return i
        i += 1
    return n


def _check_block_line(src: _Src, i: int) -> None:
    """A line that starts a block node must be indented with spaces only."""
    ind = src.indents[i]
    line = src.lines[i]
    if ind < len(line) and line[ind] == "\t":
        raise _err(src, i, "a tab is used for indentation", "indent with spaces, not tabs")


def _is_dash(line: str, col: int) -> bool:
    """Whether a block list item (``-`` then a space or the line end) starts at ``col``."""
    return line.startswith("-", col) and (col + 1 == len(line) or line[col + 1] in " \t")


def _skip_spaces(line: str, col: int) -> int:
    n = len(line)
    while col < n and line[col] in " \t":
        col += 1
    return col


def _at_comment_or_end(line: str, col: int) -> bool:
    """After ``_skip_spaces``: nothing but an optional comment remains."""
    return col >= len(line) or (line[col] == "#" and (col == 0 or line[col - 1] in " \t"))


_COMMENT = re.compile(r"[ \t]#")


def _strip_comment(text: str) -> Tuple[str, bool]:
    """(text before a `` #`` comment, whether there was one)."""
    m = _COMMENT.search(text)
    if m is None:
        return text, False
    return text[: m.start()], True


# --------------------------------------------------------------------------- scalars

_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_BOOLS = {"true": True, "yes": True, "false": False, "no": False}


def _resolve(text: str) -> Any:
    """The value of a plain (unquoted) scalar: None, bool, int, float or the string."""
    low = text.lower()
    if not text or text == "~" or low == "null":
        return None
    if low in _BOOLS:
        return _BOOLS[low]
    first = text[0]
    if first.isdigit() or first in "+-.":
        if _INT.fullmatch(text):
            return int(text)
        if _FLOAT.fullmatch(text):
            value = float(text)
            return text if math.isinf(value) else value
    return text


_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_HEX = re.compile(r"[0-9a-fA-F]+")


def _escape(line: str, k: int) -> Tuple[str, int]:
    """Decode the escape whose backslash is at ``k``: (text, index after it).

    Unknown or malformed escapes are kept as written; a UTF-16 surrogate pair written as
    two ``\\u`` escapes becomes one character, a lone surrogate becomes U+FFFD.
    """
    ch = line[k + 1]
    if ch in _ESCAPES:
        return _ESCAPES[ch], k + 2
    size = _HEX_LEN.get(ch)
    digits = line[k + 2 : k + 2 + size] if size else ""
    if not size or len(digits) != size or not _HEX.fullmatch(digits):
        return line[k : k + 2], k + 2
    code = int(digits, 16)
    end = k + 2 + size
    if 0xD800 <= code <= 0xDBFF:
        low = line[end + 2 : end + 6]
        if line.startswith("\\u", end) and len(low) == 4 and _HEX.fullmatch(low):
            low_code = int(low, 16)
            if 0xDC00 <= low_code <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low_code - 0xDC00)), end + 6
        return "\ufffd", end
    if 0xDC00 <= code <= 0xDFFF:
        return "\ufffd", end
    if code > 0x10FFFF:
        return line[k:end], end
    return chr(code), end


_DQ_STOP = re.compile(r'["\\]')
_CLOSED, _OPEN, _JOINED = 0, 1, 2  # how a quoted scalar's line ended


def _scan_quoted_line(line: str, col: int, end: int, quote: str) -> Tuple[str, int, int]:
    """Read a quoted scalar's text on one line, from ``col`` up to at most ``end``.

    Returns (text, index after the closing quote or ``end``, state): _CLOSED, _OPEN (the
    line ends inside the string) or _JOINED (a double-quoted line ending in a backslash,
    which joins it to the next line without a space).
    """
    parts: List[str] = []
    k = col
    if quote == "'":
        while True:
            q = line.find("'", k, end)
            if q == -1:
                parts.append(line[k:end])
                return "".join(parts), end, _OPEN
            parts.append(line[k:q])
            if q + 1 < end and line[q + 1] == "'":
                parts.append("'")
                k = q + 2
                continue
            return "".join(parts), q + 1, _CLOSED
    while True:
        m = _DQ_STOP.search(line, k, end)
        if m is None:
            parts.append(line[k:end])
            return "".join(parts), end, _OPEN
        q = m.start()
        parts.append(line[k:q])
        if line[q] == '"':
            return "".join(parts), q + 1, _CLOSED
        if q + 1 >= end:
            return "".join(parts), end, _JOINED
        text, k = _escape(line, q)
        parts.append(text)


def _scan_quoted(src: _Src, i: int, col: int) -> Tuple[int, int, str]:
    """A quoted scalar whose opening quote is at (i, col): (line, column after it, text).

    Line breaks inside fold as YAML folds them: one break → a space, n blank lines →
    n newlines; a backslash before a break (double quotes) joins the lines. Trailing and
    leading whitespace around a break is dropped. Any indentation is accepted; the
    string runs until its closing quote or is reported unterminated at its first line.
    """
    lines = src.lines
    quote = lines[i][col]
    start = i
    out: List[str] = []
    pos = col + 1
    while True:
        line = lines[i]
        text, pos, state = _scan_quoted_line(line, pos, len(line.rstrip(" \t")), quote)
        out.append(text)
        if state == _CLOSED:
            return i, pos, "".join(out)
        blanks = 0
        i += 1
        while i < len(lines) and _is_blank(lines[i]):
            blanks += 1
            i += 1
        if i >= len(lines):
            kind = "single" if quote == "'" else "double"
            raise _err(
                src,
                start,
                f"unterminated {kind}-quoted string",
                f"close it with {quote} or remove the opening {quote}",
            )
        if blanks:
            out.append("\n" * blanks)
        elif state == _OPEN:
            out.append(" ")
        pos = _skip_spaces(lines[i], 0)


_BLOCK_HEADER = re.compile(r"([|>])(?:([-+])([1-9])?|([1-9])([-+])?)?[ \t]*(?:#.*)?")


def _parse_block_scalar(src: _Src, i: int, col: int, parent_indent: int) -> Tuple[int, Any]:
    """A ``|``/``>`` block scalar whose header is at (i, col): (next line, text).

    A header followed by other text (``> 5 years``) is read as a plain scalar instead.

    Content is every following line indented more than ``parent_indent`` (blank lines
    included); its indentation is the first content line's, or ``parent_indent`` plus
    the header's digit. Chomping: clip (one final newline), ``-`` strip, ``+`` keep.
    """
    lines, indents = src.lines, src.indents
    m = _BLOCK_HEADER.fullmatch(lines[i], col)
    if m is None:  # `> 5 years`, `| pipe`: text, not a block scalar header
        return _parse_plain(src, i, col, parent_indent)
    folded = m.group(1) == ">"
    chomp = m.group(2) or m.group(5) or ""
    digit = m.group(3) or m.group(4)
    n = len(lines)
    j = i + 1
    if digit:
        ci = max(parent_indent, 0) + int(digit)
    else:
        k = j
        while k < n and _is_blank(lines[k]):
            k += 1
        ci = indents[k] if k < n else parent_indent + 1
        if ci <= parent_indent:  # no content lines: an empty scalar
            ci = parent_indent + 1
    texts: List[Optional[str]] = []  # None for an empty line
    while j < n:
        line = lines[j]
        if _is_blank(line) and len(line) <= ci:
            texts.append(None)
        elif indents[j] >= ci:
            texts.append(line[ci:])
        else:
            break
        j += 1
    # Trailing empty lines belong to the scalar only under '+' chomping.
    k = len(texts)
    while k and texts[k - 1] is None:
        k -= 1
    trailing = len(texts) - k
    value = _fold_block(texts[:k], trailing, folded, chomp)
    if j == n and src.open_end and value.endswith("\n"):
        value = value[:-1]  # the last line had no line break to keep
    return j, value


def _fold_block(texts: List[Optional[str]], trailing: int, folded: bool, chomp: str) -> str:
    """Join block scalar lines (None = empty line) as YAML does, then chomp.

    Folding (``>``) turns the break between two lines that do not start with a space
    into a space, or drops it when empty lines follow; breaks next to more-indented
    lines are kept.
    """
    out: List[str] = []
    prev: Optional[str] = None
    blanks = 0
    for text in texts:
        if text is None:
            blanks += 1
            continue
        if prev is None:
            out.append("\n" * blanks)
        elif folded and prev[:1] not in (" ", "\t") and text[:1] not in (" ", "\t"):
            out.append("\n" * blanks if blanks else " ")
        else:
            out.append("\n" * (blanks + 1))
        out.append(text)
        prev = text
        blanks = 0
    if prev is None:  # no content at all
        return "\n" * (blanks + trailing) if chomp == "+" else ""
    if chomp == "-":
        return "".join(out)
    if chomp == "+":
        return "".join(out) + "\n" * (1 + trailing)
    return "".join(out) + "\n"


def _parse_plain(src: _Src, i: int, col: int, parent_indent: int) -> Tuple[int, Any]:
    """A plain scalar from (i, col) to the end of the line, continued by following lines
    indented more than ``parent_indent``: (next line, resolved value).

    Lenient: ``: `` inside is just text. A comment (`` #`` or a ``#`` line) ends the
    scalar, as in YAML — unless the scalar continues after it, which YAML would reject:
    then the ``#`` is text (a ``# Heading`` inside a long description).
    """
    lines, indents = src.lines, src.indents
    n = len(lines)
    parts: List[str] = []
    sep = ""  # what joins the next line's text to the previous one
    text_until = i  # lines before this index are text even if they look like comments
    j = i
    while True:
        text = lines[i][col:] if j == i else lines[j].strip(" \t")
        if j >= text_until:
            whole = j > i and text.startswith("#")
            cut, commented = ("", True) if whole else _strip_comment(text)
            if commented:
                k = _next_content(src, j + 1)
                if k < n and indents[k] > parent_indent:
                    text_until = k
                elif whole:
                    break
                else:
                    parts += [sep, cut.rstrip(" \t")]
                    j += 1
                    break
        parts += [sep, text.rstrip(" \t")]
        j += 1
        blanks = 0
        while j < n and _is_blank(lines[j]):
            blanks += 1
            j += 1
        if j >= n or indents[j] <= parent_indent:
            break
        sep = "\n" * blanks if blanks else " "
    # `j` may sit after trailing blank lines; callers skip those anyway.
    if len(parts) == 2:
        return j, _resolve(parts[1])
    return j, "".join(parts)


# --------------------------------------------------------------------------- flow collections

_FLOW_PLAIN_STOP = re.compile(r"[,\[\]{}]|:(?=[ \t,\[\]{}]|$)|[ \t]#")


def _flow_ws(
    src: _Src, i: int, col: int, parent_indent: int, start: int, kind: str
) -> Tuple[int, int]:
    """Skip spaces, comments and line breaks inside a flow collection opened on line
    ``start``; raise when the input ends, or a line that looks like the next key comes,
    before it is closed."""
    lines, n = src.lines, len(src.lines)
    while True:
        line = lines[i]
        col = _skip_spaces(line, col)
        if not _at_comment_or_end(line, col):
            return i, col
        i += 1
        col = 0
        while i < n and _is_blank(lines[i]):
            i += 1
        if i >= n or (
            src.indents[i] <= parent_indent
            and lines[i].lstrip(" \t")[:1] not in ("]", "}")
            and _key_end(lines[i], src.indents[i]) is not None
        ):
            closer = "]" if kind == "list" else "}"
            raise _err(
                src,
                start,
                f"unterminated flow {kind} (no closing '{closer}')",
                f"close it with '{closer}', or quote the value if it is text",
            )


def _flow_scalar(src: _Src, i: int, col: int) -> Tuple[int, int, Any, bool]:
    """A scalar inside a flow collection: (line, column after, value, was quoted)."""
    line = src.lines[i]
    if line[col] in "\"'":
        i, col, text = _scan_quoted(src, i, col)
        return i, col, text, True
    m = _FLOW_PLAIN_STOP.search(line, col)
    end = m.start() if m else len(line)
    text = line[col:end].rstrip(" \t")
    if not text:
        raise _err(src, i, f"empty entry at column {col + 1}", "remove the extra ','")
    return i, end, text, False


def _flow_node(src: _Src, i: int, col: int, parent_indent: int, depth: int) -> Tuple[int, int, Any]:
    """Any node inside a flow collection, at (i, col)."""
    if depth > _MAX_DEPTH:
        raise _err(src, i, "nested too deeply", "flatten the structure")
    ch = src.lines[i][col]
    if ch == "[":
        return _flow_seq(src, i, col, parent_indent, depth + 1)
    if ch == "{":
        return _flow_map(src, i, col, parent_indent, depth + 1)
    i, col, text, quoted = _flow_scalar(src, i, col)
    return i, col, (text if quoted else _resolve(text))


def _flow_seq(
    src: _Src, i: int, col: int, parent_indent: int, depth: int
) -> Tuple[int, int, List[Any]]:
    """``[a, b]`` at (i, col); an entry ``k: v`` is a one-pair map, as in YAML."""
    start = i
    items: List[Any] = []
    col += 1
    while True:
        i, col = _flow_ws(src, i, col, parent_indent, start, "list")
        line = src.lines[i]
        if line[col] == "]":
            return i, col + 1, items
        if line[col] in "[{":
            i, col, item = _flow_node(src, i, col, parent_indent, depth)
        else:
            i, col, text, quoted = _flow_scalar(src, i, col)
            line = src.lines[i]
            after = _skip_spaces(line, col)
            if (
                after < len(line)
                and line[after] == ":"
                and (quoted or after + 1 == len(line) or line[after + 1] in " \t,[]{}")
            ):
                i, col = _flow_ws(src, i, after + 1, parent_indent, start, "list")
                if src.lines[i][col] in ",]":
                    value: Any = None
                else:
                    i, col, value = _flow_node(src, i, col, parent_indent, depth)
                item = {str(text): value}
            else:
                item = text if quoted else _resolve(text)
        items.append(item)
        i, col = _flow_ws(src, i, col, parent_indent, start, "list")
        ch = src.lines[i][col]
        if ch == ",":
            col += 1
        elif ch != "]":
            raise _err(src, i, f"expected ',' or ']' in a flow list, found {ch!r}")


def _flow_map(
    src: _Src, i: int, col: int, parent_indent: int, depth: int
) -> Tuple[int, int, Dict[str, Any]]:
    """``{a: 1, "b": [2]}`` at (i, col); a key without ``:`` maps to None."""
    start = i
    result: Dict[str, Any] = {}
    col += 1
    while True:
        i, col = _flow_ws(src, i, col, parent_indent, start, "map")
        line = src.lines[i]
        if line[col] == "}":
            return i, col + 1, result
        if line[col] in "[{":
            raise _err(src, i, "a list or map used as a key", "use a plain or quoted key")
        i, col, key, _ = _flow_scalar(src, i, col)
        i, col = _flow_ws(src, i, col, parent_indent, start, "map")
        value: Any = None
        if src.lines[i][col] == ":":
            i, col = _flow_ws(src, i, col + 1, parent_indent, start, "map")
            if src.lines[i][col] not in ",}":
                i, col, value = _flow_node(src, i, col, parent_indent, depth)
        result[key] = value
        i, col = _flow_ws(src, i, col, parent_indent, start, "map")
        ch = src.lines[i][col]
        if ch == ",":
            col += 1
        elif ch != "}":
            raise _err(src, i, f"expected ',' or '}}' in a flow map, found {ch!r}")


# --------------------------------------------------------------------------- block nodes


def _key_end(line: str, col: int) -> Optional[Tuple[str, int]]:
    """If a ``key:`` starts at ``col``: (key, column after the colon); else None.

    The colon must be followed by a space, a tab or the line end. A key is plain or
    quoted on one line; a line starting with a flow or block indicator is not a key.
    """
    if col >= len(line):
        return None
    ch = line[col]
    if ch in "\"'":
        text, end, state = _scan_quoted_line(line, col + 1, len(line), ch)
        if state != _CLOSED:
            return None
        end = _skip_spaces(line, end)
        if line.startswith(":", end) and (end + 1 == len(line) or line[end + 1] in " \t"):
            return text, end + 1
        return None
    if ch in "[{|>#" or _is_dash(line, col):
        return None
    k = col
    while True:
        k = line.find(":", k)
        if k == -1:
            return None
        if k + 1 == len(line) or line[k + 1] in " \t":
            break
        k += 1
    key = line[col:k]
    if _COMMENT.search(key):
        return None
    key = key.rstrip(" \t")
    return (key, k + 1) if key else None


def _preview(line: str, size: int = 40) -> str:
    """The start of a line for an error message."""
    text = line.strip()
    return text if len(text) <= size else text[: size - 1] + "…"


def _parse_node(src: _Src, i: int, col: int, parent_indent: int, depth: int) -> Tuple[int, Any]:
    """The block node at (i, col) — the start of a line's content, or the text after
    ``- ``: a list, a map, or a scalar continued by lines indented past ``parent_indent``."""
    if depth > _MAX_DEPTH:
        raise _err(src, i, "nested too deeply", "flatten the structure")
    line = src.lines[i]
    if _is_dash(line, col):
        return _parse_seq(src, i, col, depth + 1)
    if _key_end(line, col) is not None:
        return _parse_map(src, i, col, depth + 1)
    return _parse_scalar(src, i, col, parent_indent, depth + 1)


def _parse_scalar(src: _Src, i: int, col: int, parent_indent: int, depth: int) -> Tuple[int, Any]:
    """The value at (i, col) after ``key: `` (or as a list item): a block scalar, a
    quoted scalar, a flow collection or a plain scalar."""
    line = src.lines[i]
    ch = line[col]
    if ch in "|>":
        return _parse_block_scalar(src, i, col, parent_indent)
    if ch in "\"'[{":
        if ch in "\"'":
            j, end, value = _scan_quoted(src, i, col)
        else:
            j, end, value = _flow_node(src, i, col, parent_indent, depth)
        rest = _skip_spaces(src.lines[j], end)
        if _at_comment_or_end(src.lines[j], rest):
            return j + 1, value
        if j == i:  # `[file] | --all`, `"a" or "b"`: the whole line is the value
            return _parse_plain(src, i, col, parent_indent)
        what = "quoted string" if ch in "\"'" else "flow collection"
        raise _err(
            src,
            i,
            f"the {what} opened here ends on line {src.first_line + j} with more text after it",
            "check for a missing or extra quote or bracket, or quote the whole value",
        )
    return _parse_plain(src, i, col, parent_indent)


def _parse_map(src: _Src, i: int, col: int, depth: int) -> Tuple[int, Dict[str, Any]]:
    """A block map whose first key is at (i, col); later keys sit at column ``col``."""
    indent = col
    result: Dict[str, Any] = {}
    n = len(src.lines)
    while True:
        i, key, value = _parse_entry(src, i, col, indent, depth)
        result[key] = value
        i = _next_content(src, i)
        if i >= n or src.indents[i] < indent:
            return i, result
        _check_line(src, i, indent)
        col = indent
        if _is_dash(src.lines[i], col):
            raise _err(
                src,
                i,
                "a list item where a key was expected",
                "indent the list under its key, or write 'key: value'",
            )


def _parse_seq(src: _Src, i: int, col: int, depth: int) -> Tuple[int, List[Any]]:
    """A block list whose first ``-`` is at (i, col); later items sit at column ``col``."""
    indent = col
    items: List[Any] = []
    lines, n = src.lines, len(src.lines)
    while True:
        after = _skip_spaces(lines[i], col + 1)
        if _at_comment_or_end(lines[i], after):
            j = _next_content(src, i + 1)
            if j < n and src.indents[j] > indent:
                _check_block_line(src, j)
                i, item = _parse_node(src, j, src.indents[j], indent, depth)
            else:
                i, item = i + 1, None
        else:
            i, item = _parse_node(src, i, after, indent, depth)
        items.append(item)
        i = _next_content(src, i)
        if i >= n or src.indents[i] < indent:
            return i, items
        _check_line(src, i, indent)
        if not _is_dash(lines[i], indent):
            return i, items  # a key at the list's indent belongs to the parent map


def _check_line(src: _Src, i: int, indent: int) -> None:
    """The next line of a map or list at ``indent`` must not be indented further."""
    _check_block_line(src, i)
    if src.indents[i] > indent:
        raise _err(
            src,
            i,
            f"bad indentation: expected {indent} spaces, found {src.indents[i]}",
            "align the line with the keys above it, or indent continuation text under its key",
        )


def _parse_entry(src: _Src, i: int, col: int, indent: int, depth: int) -> Tuple[int, str, Any]:
    """One ``key: value`` of a map at ``indent``, starting at (i, col): (next line, key, value).

    An empty value takes the block node on the following lines: one indented past the
    key, or a list at the key's own indent. Otherwise the value is on this line.
    """
    line = src.lines[i]
    found = _key_end(line, col)
    if found is None:
        raise _err(
            src,
            i,
            f"expected 'key: value', found {_preview(line)!r}",
            "write 'key: value', indent continuation text under its key, or quote the value",
        )
    key, vcol = found
    vcol = _skip_spaces(line, vcol)
    if not _at_comment_or_end(line, vcol):
        j, value = _parse_scalar(src, i, vcol, indent, depth)
        return j, key, value
    j = _next_content(src, i + 1)
    n = len(src.lines)
    if j < n and (
        src.indents[j] > indent or (src.indents[j] == indent and _is_dash(src.lines[j], indent))
    ):
        _check_block_line(src, j)
        j, value = _parse_node(src, j, src.indents[j], indent, depth)
        return j, key, value
    return i + 1, key, None


# --------------------------------------------------------------------------- documents


def _parse_document(src: _Src, recover: bool) -> Tuple[Dict[str, Any], Optional[FrontmatterError]]:
    """The top-level map: (meta, first error). With ``recover`` a bad entry is skipped
    up to the next top-level key and parsing goes on; otherwise the error is raised."""
    n = len(src.lines)
    i = _next_content(src, 0)
    if i >= n:
        return {}, None
    indent = src.indents[i]
    if src.lines[i].startswith("{", indent):
        return _parse_flow_document(src, i, indent, recover)
    meta: Dict[str, Any] = {}
    first_error: Optional[FrontmatterError] = None
    while i < n:
        try:
            _check_line(src, i, indent)
            if src.indents[i] < indent:
                raise _err(
                    src,
                    i,
                    f"bad indentation: expected {indent} spaces, found {src.indents[i]}",
                    "align the line with the keys above it",
                )
            if _is_dash(src.lines[i], indent):
                raise _err(
                    src,
                    i,
                    "a list item where a key was expected",
                    "frontmatter is 'key: value' lines; put the list under a key",
                )
            i, key, value = _parse_entry(src, i, indent, indent, 0)
            meta[key] = value
        except FrontmatterError as err:
            if not recover:
                raise
            if first_error is None:
                first_error = err
            i = _resync(src, i + 1, indent)
            continue
        i = _next_content(src, i)
    return meta, first_error


def _resync(src: _Src, i: int, indent: int) -> int:
    """The next line from ``i`` that looks like a top-level key."""
    n = len(src.lines)
    while i < n:
        if src.indents[i] == indent and _key_end(src.lines[i], indent) is not None:
            return i
        i += 1
    return n


def _parse_flow_document(
    src: _Src, i: int, col: int, recover: bool
) -> Tuple[Dict[str, Any], Optional[FrontmatterError]]:
    """A document that is one flow map, ``{name: x, tags: [a]}``."""
    try:
        i, col, meta = _flow_map(src, i, col, -1, 0)
        end = _next_content(src, i + 1)
        if not _at_comment_or_end(src.lines[i], _skip_spaces(src.lines[i], col)) or end < len(
            src.lines
        ):
            raise _err(src, i, "unexpected text after the frontmatter's closing '}'")
    except FrontmatterError as err:
        if not recover:
            raise
        return {}, err
    return meta, None
