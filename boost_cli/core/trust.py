"""Trust signals: what a skill's files ask of an agent, found before anyone loads them.

Pure functions over text (no file system, no state): each rule takes a file's text (or an
entry's frontmatter, name or file list) and returns `Finding` values with a kind, a
severity and the 1-based line they come from. `trust_scan` runs them over a tap's files at
catalog time and caches the result; the CLI and the MCP tools show it.

Kinds (`KINDS`) and what each finds:

- ``instructions``: text aimed at the model rather than the task ("ignore previous
  instructions", "do not tell the user", "you are now …", sending secrets somewhere). High
  when a human reader would not see it (an HTML comment, a Markdown comment, an element
  styled hidden); info when it is quoted (in backticks, quotes or a code block) or
  discussed ("attempts to override system instructions"): on the corpus those are security
  skills quoting the attacks they detect, never an attack; medium otherwise.
- ``remote-code``: code fetched and run in one step (``curl … | sh``, ``iwr … | iex``,
  ``bash <(curl …)``, ``eval "$(curl …)"``): medium; a base64-decoded payload run by a
  shell: high.
- ``download``: an executable or installer fetched (``.exe``, ``.msi``, ``.pkg``, ``.dmg``,
  ``.deb``, ``.rpm``, ``.AppImage``, ``.ps1`` …, or a download made executable): low.
- ``secret``: a key-shaped token of a common provider, or a private key block with a body
  (shown redacted): high. Placeholders (``AKIA…EXAMPLE``, ``xxxx``, low-entropy runs) are
  not secrets.
- ``hidden-text``: Unicode tag characters (ASCII smuggling) and bidi overrides: high;
  zero-width characters outside emoji sequences and a leading byte-order mark: medium.
- ``lookalike``: a name that reads as a well-known skill's name but is not it (Cyrillic or
  Greek letters, ``0`` for ``o``): high; a word mixing Latin with another script: medium.
- ``powers``: frontmatter asking for powers: ``allowed-tools`` with an unscoped shell or a
  wildcard (medium) or a scoped shell command (low), ``hooks`` (medium), a permission
  mode that skips prompts (medium).
- ``url``: links to hosts outside the registry's own (each host once per file): info.
- ``script``: a script shipped beside the skill (what a host would run): info.

Registry text stays data: an excerpt is at most `EXCERPT_CHARS` of one line, escaped
(control, bidi, zero-width and tag characters become ``\\uNNNN``), and a secret's excerpt
shows only its first and last characters.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import sys
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

from boost_cli.core.text import ELLIPSIS, clip, printable

VERSION = 2  # bump when a rule changes: cached findings of older versions are redone
SEVERITIES = ("info", "low", "medium", "high")
KINDS = (
    "instructions",
    "remote-code",
    "download",
    "secret",
    "hidden-text",
    "lookalike",
    "powers",
    "url",
    "script",
)
EXCERPT_CHARS = 120
MAX_FINDINGS_PER_FILE = 50  # a file with more says so in one more finding, no more


class _Lazy:
    """A regular expression compiled on first use: importing this module (every search
    does, to read cached findings) compiles none of the rules' patterns."""

    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._rx: Optional[re.Pattern] = None

    @property
    def rx(self) -> re.Pattern:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match]:
        return self.rx.finditer(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match]:
        return self.rx.search(text, pos, endpos)

    def match(self, text: str) -> Optional[re.Match]:
        return self.rx.match(text)

    def sub(self, repl: Callable[[re.Match], str], text: str) -> str:
        return self.rx.sub(repl, text)


_lazy = _Lazy


@dataclass(frozen=True)
class Finding:
    """One thing a rule found: ``file`` is the path inside the tap, ``line`` 1-based (0:
    the whole file), ``detail`` boost's own words, ``excerpt`` the clipped, escaped line."""

    kind: str
    severity: str
    file: str
    line: int
    detail: str
    excerpt: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "detail": self.detail,
            "excerpt": self.excerpt,
        }

    def to_row(self) -> List[Any]:
        """The compact form the cache keeps."""
        return [self.kind, self.severity, self.file, self.line, self.detail, self.excerpt]

    @classmethod
    def from_row(cls, row: Any) -> Optional[Finding]:
        """A cached row back as a Finding; None when it is not one `to_row` could make."""
        if not (isinstance(row, list) and len(row) == 6):
            return None
        kind, severity, file, line, detail, excerpt = row
        if kind not in KINDS or severity not in SEVERITIES or not isinstance(line, int):
            return None
        if not all(isinstance(x, str) for x in (file, detail, excerpt)):
            return None
        return cls(kind, severity, file, line, detail, excerpt)


# --------------------------------------------------------------------------- summaries


def rank(severity: str) -> int:
    """0 (info) … 3 (high)."""
    return SEVERITIES.index(severity)


def worst(findings: Iterable[Finding]) -> Optional[str]:
    """The highest severity among ``findings`` (None when there are none)."""
    top = max((rank(f.severity) for f in findings), default=-1)
    return SEVERITIES[top] if top >= 0 else None


def has_high(findings: Iterable[Finding]) -> bool:
    """Whether any finding is high severity (what `boost audit` exits 1 for, and what an
    install should refuse without --force)."""
    return any(f.severity == "high" for f in findings)


def summary(findings: Iterable[Finding]) -> List[Dict[str, Any]]:
    """The ``flags`` of a hit: one ``{kind, severity, count}`` per kind, at the kind's
    highest severity, worst first (then in `KINDS` order)."""
    by_kind: Dict[str, List[int]] = {}
    for f in findings:
        slot = by_kind.setdefault(f.kind, [0, 0])
        slot[0] = max(slot[0], rank(f.severity))
        slot[1] += 1
    ordered = sorted(by_kind.items(), key=lambda kv: (-kv[1][0], KINDS.index(kv[0])))
    return [{"kind": k, "severity": SEVERITIES[s], "count": n} for k, (s, n) in ordered]


def sort_key(f: Finding) -> Tuple[int, str, int, str]:
    """Worst first, then by file and line."""
    return (-rank(f.severity), f.file, f.line, f.kind)


# --------------------------------------------------------------------------- excerpts

_INVISIBLE = _lazy(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)


def escape(text: str) -> str:
    """``text`` with control characters (`printable`) and the invisible ones (zero-width,
    bidi marks and overrides, tag characters) shown as visible escapes."""
    return _INVISIBLE.sub(_visible, printable(text))


def _visible(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def excerpt(line: str) -> str:
    """One registry line as a finding quotes it: clipped, then escaped."""
    return escape(clip(line, EXCERPT_CHARS))


def redact(token: str) -> str:
    """A secret as findings show it: its first four and last two characters, its length."""
    if len(token) <= 10:
        return f"{token[:2]}… ({len(token)} chars)"
    return f"{token[:4]}…{token[-2:]} ({len(token)} chars)"


class Lines:
    """Offsets of one text → 1-based line numbers and the line's text (computed on
    demand: a file has few findings, and most have none)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def number(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def around(self, offset: int) -> str:
        """The line holding ``offset``, from its start; from a little before ``offset``
        (with '…') when that is far into a long line; never more than a few excerpts."""
        text, near = self.text, EXCERPT_CHARS // 2
        found = text.rfind("\n", max(offset - near, 0), offset)
        start, lead = found + 1, ""
        if found < 0 and offset > near:  # the line starts further back
            start, lead = offset - near // 2, ELLIPSIS
        end = text.find("\n", offset, start + 4 * EXCERPT_CHARS)
        return lead + text[start : start + 4 * EXCERPT_CHARS if end < 0 else end]


# --------------------------------------------------------------------------- contexts

_HIDDEN_SPANS = _lazy(
    r"<!--.*?(?:-->|\Z)"  # an HTML comment (unterminated: to the end)
    r"|^[ \t]*\[(?://|comment)\]:[ \t]*(?:#|<>)[^\n]*"  # a Markdown comment
    r"|<(\w+)[^>\n]{0,300}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0"
    r"|\shidden(?:[\s=>/]))[^>]{0,300}>.{0,4000}?</\1\s*>",  # an element styled hidden
    re.S | re.M | re.I,
)
_FENCE = _lazy(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_QUOTED = _lazy(r"`[^`\n]+`|\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|'[^'\n]{8,400}'")


LINE_REACH = 500  # a line rule looks this far around its anchor (a 1 MB line stays cheap)


def regions(low: str, anchors: Iterable[str], before: int, after: int) -> List[Tuple[int, int]]:
    """The stretches of a text (``low``: it lower-cased) a rule needs to look at: from
    ``before`` characters before each anchor word to ``after`` characters after it, or,
    with ``before`` < 0, the line holding it (`LINE_REACH` at most either side); merged, in
    order. A rule's regex runs
    on these alone (every match holds an anchor), which spares it nearly every file."""
    found = []
    for word in anchors:
        i = low.find(word)
        while i >= 0:
            if before < 0:  # the line, at most LINE_REACH characters either side
                end = low.find("\n", i, i + LINE_REACH)
                end = min(len(low), i + LINE_REACH) if end < 0 else end
                start = max(low.rfind("\n", max(i - LINE_REACH, 0), i) + 1, i - LINE_REACH, 0)
                found.append((start, end))
            else:
                found.append((max(i - before, 0), min(i + len(word) + after, len(low))))
            i = low.find(word, i + 1)
    merged: List[Tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _holding(
    low: str, spans: Sequence[Tuple[int, int]], needs: Sequence[str]
) -> List[Tuple[int, int]]:
    """The ``spans`` of ``low`` that hold one of ``needs`` (a rule cannot match elsewhere)."""
    return [(a, b) for a, b in spans if any(low.find(n, a, b) >= 0 for n in needs)]


def _matches(rule: _Lazy, text: str, spans: Sequence[Tuple[int, int]]) -> List[re.Match]:
    """``rule``'s matches in the ``spans`` of ``text``: at most `MAX_MATCHES`."""
    out: List[re.Match] = []
    for start, end in spans:
        for m in rule.finditer(text, start, end):
            out.append(m)
            if len(out) >= MAX_MATCHES:
                return out
    return out


def _spans(pattern: _Lazy, text: str) -> List[Tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _within(spans: Sequence[Tuple[int, int]], start: int, end: int) -> bool:
    i = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= start and end <= spans[i][1]


# --------------------------------------------------------------------------- instructions

# Each rule runs only on text holding one of its words (lower case): a cheap `in` test
# spares the regex on nearly every file.
_INSTRUCTION_RULES: Tuple[Tuple[str, Tuple[str, ...], _Lazy], ...] = tuple(
    (detail, words, _lazy(pattern, re.I))
    for detail, words, pattern in (
        (
            "tells the model to drop its earlier instructions",
            ("ignore", "disregard", "forget", "overrid", "overrule", "bypass"),
            r"\b(?:ignore|disregard|forget|override|overrule|bypass)\s+(?:all\s+|any\s+|every\s+)?"
            r"(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
            r"(?:previous|prior|earlier|above|preceding|original|initial|system|existing)\s+"
            r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|messages)",
        ),
        (
            "tells the model to keep something from the user",
            ("the user",),
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|show|mention|reveal|disclose)\s+"
            r"(?:this|these\s+instructions|it|that|anything)\s+to\s+the\s+user\b"
            r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform)\s+the\s+user\s+(?:about\s+)?"
            r"(?:this|these\s+instructions|what\s+you\s+(?:are|were)\s+(?:really\s+)?doing)\b"
            r"|\b(?:hide|conceal|keep)\s+(?:this|it|that|these\s+instructions|your\s+actions)\s+"
            r"(?:secret\s+|hidden\s+)?from\s+the\s+user\b"
            r"|\bwithout\s+the\s+user\s+(?:knowing|noticing)\b",
        ),
        (
            "tells the model it is now someone else",
            ("you are now",),
            r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN\b|jailbroken|unrestricted|unfiltered|"
            r"no\s+longer\s+(?:bound|an?\s+AI|restricted|claude)|free\s+(?:from|of)\s+"
            r"|(?:in\s+)?developer\s+mode|(?:in\s+)?god\s+mode)",
        ),
        (
            "asks for the system prompt or secrets to be sent out",
            (
                "system prompt",
                "credentials",
                "secrets",
                "keys",
                "tokens",
                "passwords",
                ".env",
                "environment variables",
                "cookies",
            ),
            r"\b(?:reveal|print|output|leak|repeat)\s+(?:your|the)\s+(?:full\s+|entire\s+)?"
            r"system\s+prompt\b"
            r"|\b(?:send|post|upload|transmit|forward|exfiltrate|leak|copy)\s+(?:all\s+|the\s+|any\s+|"
            r"your\s+|their\s+)?(?:\w+\s+)?(?:credentials|secrets|api[\s_-]?keys|tokens|passwords|"
            r"\.env(?:\s+files?)?|environment\s+variables|ssh\s+keys|private\s+keys|cookies)\s+"
            r"to\s+(?:https?://|[\w.-]+\.\w{2,}\b|the\s+(?:following|attacker|remote))",
        ),
    )
)


# Words before a match that say the text talks about such instructions, not gives them.
_DISCUSSED = _lazy(
    r"attempts?\b|tries\b|trying\b|try\s+to|attack|inject|detect|such\s+as|e\.g\.|example|"
    r"payload|malicious|adversarial|prevent|block|resist|jailbreak|crafted|phrases?\b|patterns?\b"
)


def instructions(text: str, file: str, low: Optional[str] = None) -> List[Finding]:
    """Text aimed at the model rather than the task (see the module docstring); ``low``:
    ``text.lower()`` when the caller has it."""
    low = text.lower() if low is None else low
    hits = [
        (m, detail)
        for detail, words, rule in _INSTRUCTION_RULES
        for m in _matches(rule, text, regions(low, words, 160, 160))
    ]
    if not hits:
        return []
    lines = Lines(text)
    hidden = _spans(_HIDDEN_SPANS, text)
    fenced = _spans(_FENCE, text)
    quoted = _spans(_QUOTED, text)
    out = []
    for m, detail in sorted(hits, key=lambda h: h[0].start()):
        start, end = m.span()
        if _within(hidden, start, end):
            severity, where = "high", " in text a reader does not see"
        elif _within(fenced, start, end) or _within(quoted, start, end):
            severity, where = "info", " (quoted)"
        elif _DISCUSSED.search(low, max(start - 80, 0), start):
            severity, where = "info", " (discussed)"
        else:
            severity, where = "medium", ""
        n = lines.number(start)
        out.append(
            Finding("instructions", severity, file, n, detail + where, excerpt(lines.around(start)))
        )
    return out


# --------------------------------------------------------------------------- remote code

_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
_REMOTE_WORDS = (
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-",
    "downloadstring",
    "base64",
    "atob",
    "buffer.from",
)
_SHELLS = (
    r"(?:sudo\s+(?:-\w+\s+)*)?(?:ba|z|k|da|fi)?sh|python[23]?|node|perl|ruby|php|pwsh|powershell"
)
# What a fetch fetches: a URL, a variable, or a host name with a path (not ``http*``).
_ADDRESS = r"(?:https?://\w|\$\{?\w|\b[\w-]+(?:\.[\w-]+)+/)"
# (severity, what it does, what a stretch must hold for the rule to run there, pattern)
_REMOTE_RULES: Tuple[Tuple[str, str, Tuple[str, ...], _Lazy], ...] = tuple(
    (severity, detail, needs, _lazy(pattern, re.I))
    for severity, detail, needs, pattern in (
        (
            "high",
            "runs a base64-decoded payload",
            ("|",),
            r"base64\s+(?:-d|--decode|-D)\b[^\n|]{0,400}\s\|\s*(?:" + _SHELLS + r")\b"
            r"|\bFromBase64String\b[^\n]{0,400}\s\|\s*(?:iex|invoke-expression)\b",
        ),
        (
            "medium",
            "evaluates a base64-decoded string",
            ("eval", "exec"),
            r"\b(?:eval|exec)\s*\(\s*(?:base64\.b64decode|atob|Buffer\.from)\s*\(",
        ),
        (
            "medium",
            "pipes a download into a shell or an interpreter",
            ("|",),
            _FETCH
            + r"(?=[^\n|;]{0,400}?"  # an address before the pipe (a lookahead: linear)
            + _ADDRESS
            + r")[^\n|;]{0,400}\|\s*(?:"
            + _SHELLS
            + r")\b(?!\s*-c\b)(?![\w-])",
        ),
        (
            "medium",
            "pipes a download into Invoke-Expression",
            ("iex", "invoke-expression"),
            r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b[^\n]{0,400}\s\|\s*"
            r"(?:iex|invoke-expression)\b"
            r"|\b(?:iex|invoke-expression)\s*\(?\s*\(?\s*(?:new-object\s+(?:system\.)?net\.webclient\)?"
            r"\.downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod)\b",
        ),
        (
            "medium",
            "runs a download through process substitution or eval",
            ("<(", "$("),
            r"\b(?:"
            + _SHELLS
            + r"|source|\.)\s+<\(\s*"
            + _FETCH
            + r"|\beval\s+\"?\$\(\s*"
            + _FETCH
            + r"|\b(?:ba|z)?sh\s+-c\s+\"?\$\(\s*"
            + _FETCH,
        ),
    )
)

_EXEC_EXT = r"(?:exe|msi|pkg|dmg|deb|rpm|appimage|apk|scr|bat|cmd|ps1|vbs|jar)"
_EXE_URL = _lazy(r"https?://[^\s\"'<>)]{1,400}\." + _EXEC_EXT + r"\b(?![\w.-])", re.I)
_FETCH_WORD = _lazy(_FETCH, re.I)
_CHMOD = _lazy(r"\b(?:curl|wget)\b[^\n;]{0,400}(?:&&|;)\s*chmod\s+(?:\+x|[0-7]*[1357]\b)", re.I)
MAX_MATCHES = 200  # matches a rule looks at in one file: enough to report, bounded work


def remote_code(text: str, file: str, low: Optional[str] = None) -> List[Finding]:
    """Code fetched and run in one step, and downloads of executables."""
    low = text.lower() if low is None else low
    spans = regions(low, _REMOTE_WORDS, -1, -1)
    if not spans:
        return []
    found: Dict[int, Finding] = {}
    lines: Optional[Lines] = None
    for severity, detail, needs, rule in _REMOTE_RULES:
        for m in _matches(rule, text, _holding(low, spans, needs)):
            lines = lines or Lines(text)
            start = m.start()
            n = lines.number(start)
            if n not in found:  # one finding a line: the worst rule (they run worst first)
                found[n] = Finding(
                    "remote-code", severity, file, n, detail, excerpt(lines.around(start))
                )
    downloads = [
        m
        for m in _matches(_EXE_URL, text, _holding(low, spans, ("://",)))
        if _FETCH_WORD.search(
            text, max(text.rfind("\n", 0, m.start()) + 1, m.start() - LINE_REACH), m.start()
        )
    ]
    for m in downloads + _matches(_CHMOD, text, _holding(low, spans, ("chmod",))):
        lines = lines or Lines(text)
        start = m.start()
        n = lines.number(start)
        if n not in found:
            found[n] = Finding(
                "download", "low", file, n, "downloads an executable", excerpt(lines.around(start))
            )
    return [found[n] for n in sorted(found)]


# --------------------------------------------------------------------------- secrets

# (what it is, literal prefixes one of which the text must hold, the token's pattern)
_SECRET_RULES: Tuple[Tuple[str, Tuple[str, ...], _Lazy], ...] = tuple(
    (detail, prefixes, _lazy(pattern))
    for detail, prefixes, pattern in (
        (
            "an AWS access key id",
            ("AKIA", "ASIA", "ABIA", "ACCA"),
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ),
        (
            "a GitHub token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{60,255}\b",
        ),
        ("a GitLab token", ("glpat-",), r"\bglpat-[0-9A-Za-z_-]{20}\b"),
        ("a Slack token", ("xox",), r"\bxox[baprse]-(?:[0-9]{6,}-)[0-9A-Za-z-]{10,}\b"),
        ("a Stripe live key", ("k_live_",), r"\b[sr]k_live_[0-9A-Za-z]{20,}\b"),
        (
            "an Anthropic API key",
            ("sk-ant-",),
            r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{60,}",
        ),
        (
            "an OpenAI API key",
            ("T3BlbkFJ", "sk-proj-"),
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"
            r"|\bsk-proj-[A-Za-z0-9_-]{80,}",
        ),
        ("a Google API key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        ("an npm token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a PyPI token", ("pypi-AgEI",), r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
        ("a Hugging Face token", ("hf_",), r"\bhf_[A-Za-z]{34}\b"),
        ("a SendGrid key", ("SG.",), r"\bSG\.[\w-]{22}\.[\w-]{43}\b"),
    )
)
_KEY_BLOCK = _lazy(
    r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----[ \t]*\r?\n"
    r"((?:[ \t]*[A-Za-z0-9+/=:, -]*\r?\n){0,4}(?:[ \t]*[A-Za-z0-9+/=]{40,}\r?\n){2,})"
)
_PLACEHOLDER = _lazy(r"example|sample|dummy|fake|test|your|xxxx|0000|1234|abcd", re.I)


def _entropy(s: str) -> float:
    counts: Dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def looks_random(token: str) -> bool:
    """Whether ``token`` reads as a real key rather than a placeholder: no placeholder
    word or run, no character four times in a row, enough entropy per character."""
    if _PLACEHOLDER.search(token) or re.search(r"(.)\1{3}", token):
        return False
    return _entropy(token) >= 3.0


def secrets(text: str, file: str) -> List[Finding]:
    """Key-shaped tokens of common providers and private key blocks, redacted."""
    out = []
    lines: Optional[Lines] = None
    for detail, prefixes, rule in _SECRET_RULES:
        if not any(p in text for p in prefixes):
            continue
        for m in itertools.islice(rule.finditer(text), MAX_MATCHES):
            token = m.group(0)
            if not looks_random(token):
                continue
            lines = lines or Lines(text)
            n = lines.number(m.start())
            out.append(Finding("secret", "high", file, n, f"{detail}: {redact(token)}"))
    for m in _KEY_BLOCK.finditer(text) if "PRIVATE KEY" in text else ():
        body = "".join(m.group(2).split())
        if not looks_random(body[-200:]):
            continue
        lines = lines or Lines(text)
        n = lines.number(m.start())
        out.append(
            Finding("secret", "high", file, n, f"a {m.group(1).lower()} block ({len(body)} chars)")
        )
    return sorted(out, key=lambda f: f.line)


# --------------------------------------------------------------------------- hidden text

_HIDDEN_CHARS = _lazy(
    "[\U000e0000-\U000e007f]+|[\u202a-\u202e\u2066-\u2069]|[\u200b\u200c\u200d\u2060-\u2064\u180e\ufeff]"
)
_ANY_HIDDEN = _lazy(
    "[\u180e\u200b-\u200d\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_EMOJI_NEIGHBOUR = _lazy("[\u00a9\u00ae\u203c-\u3299\U0001f000-\U0001faff\ufe0f]")


def hidden_text(text: str, file: str) -> List[Finding]:
    """Characters a reader does not see: tag characters and bidi overrides (high),
    zero-width characters outside emoji sequences and a BOM past the start (medium)."""
    if text.isascii() or not _ANY_HIDDEN.search(text):
        return []
    found: Dict[int, Finding] = {}
    lines = Lines(text)
    for m in itertools.islice(_HIDDEN_CHARS.finditer(text), MAX_MATCHES):
        start, ch = m.start(), m.group(0)
        code = ord(ch[0])
        if code >= 0xE0000:
            severity, detail = "high", f"{len(ch)} invisible Unicode tag characters"
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            severity, detail = "high", f"a bidi control character (U+{code:04X}) that reorders text"
        elif (ch == "\ufeff" and start == 0) or (ch == "\u200d" and _joins_emoji(text, start)):
            continue  # a byte-order mark where one belongs; a joiner inside an emoji
        else:
            severity, detail = "medium", f"a zero-width character (U+{code:04X})"
        n = lines.number(start)
        old = found.get(n)
        if old is None or rank(severity) > rank(old.severity):
            found[n] = Finding(
                "hidden-text", severity, file, n, detail, excerpt(lines.around(start))
            )
    return [found[n] for n in sorted(found)]


def _joins_emoji(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    return bool(_EMOJI_NEIGHBOUR.match(before) and _EMOJI_NEIGHBOUR.match(after))


# --------------------------------------------------------------------------- powers

_SHELL_TOOLS = _lazy(
    r"^(?:bash|shell|sh|zsh|powershell|pwsh|terminal|run_terminal_cmd|execute|exec)\b", re.I
)


def _tools(value: Any) -> List[str]:
    if isinstance(value, str):
        # "Bash(git:*), Read" — split on commas and spaces outside parentheses
        return [t for t in re.findall(r"[^,\s()]+(?:\([^)]*\))?", value) if t]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def _key_line(text: str, key: str) -> int:
    m = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 0


def powers(meta: Mapping[str, Any], text: str, file: str) -> List[Finding]:
    """What the frontmatter asks the host for: shells, wildcards, hooks, no prompts."""
    out = []
    for key in ("allowed-tools", "allowed_tools", "tools"):
        if key not in meta:
            continue
        tools = _tools(meta[key])
        wild = [
            t
            for t in tools
            if t == "*" or t.lower() in ("all", "any") or re.search(r"\(\s*\*\s*\)", t)
        ]
        shell = [t for t in tools if _SHELL_TOOLS.match(t)]
        open_shell = [t for t in shell if "(" not in t or re.search(r"\(\s*\*?\s*\)", t)]
        line = _key_line(text, key)
        if wild or open_shell:
            what = ", ".join(dict.fromkeys(wild + open_shell))
            out.append(
                Finding("powers", "medium", file, line, f"{key} grants {what}", excerpt(what))
            )
        elif shell:
            what = ", ".join(shell)
            out.append(
                Finding("powers", "low", file, line, f"{key} grants shell commands", excerpt(what))
            )
    if meta.get("hooks"):
        out.append(
            Finding(
                "powers",
                "medium",
                file,
                _key_line(text, "hooks"),
                "frontmatter sets hooks (commands the host runs)",
            )
        )
    mode = meta.get("permissionMode") or meta.get("permission-mode")
    if isinstance(mode, str) and mode.strip() in ("bypassPermissions", "acceptEdits", "dontAsk"):
        key = "permissionMode" if "permissionMode" in meta else "permission-mode"
        out.append(
            Finding(
                "powers",
                "medium",
                file,
                _key_line(text, key),
                f"asks for permission mode {clip(mode, 40)!r}",
            )
        )
    return out


# --------------------------------------------------------------------------- urls

_URL = _lazy(r"\bhttps?://([^\s/\"'<>()\[\]{}`\\]+)", re.I)
_DOC_HOSTS = frozenset(
    {"example.com", "example.org", "example.net", "localhost", "127.0.0.1", "0.0.0.0"}
)
# Reserved for documentation (RFC 2606, RFC 6761): never a real destination.
_DOC_SUFFIXES = (
    ".example",
    ".invalid",
    ".test",
    ".localhost",
    ".local",
    ".example.com",
    ".example.org",
    ".example.net",
)
GITHUB_HOSTS = (
    "github.com",
    "raw.githubusercontent.com",
    "gist.github.com",
    "githubusercontent.com",
)


def host_of(url: str) -> str:
    """The lower-case host of ``url`` ('' when it has none)."""
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def own_hosts(source_url: str) -> Tuple[str, ...]:
    """The hosts a registry cloned from ``source_url`` calls its own: its host (a GitHub
    registry also its raw-content and gist hosts); none for a local registry."""
    host = host_of(source_url) if "://" in source_url else ""
    if not host and source_url.startswith("git@"):
        host = source_url[4:].partition(":")[0].lower()
    if host in GITHUB_HOSTS:
        return GITHUB_HOSTS
    return (host,) if host else ()


def _outside(host: str, own: Sequence[str]) -> bool:
    if not host or host in _DOC_HOSTS or host.endswith(_DOC_SUFFIXES):
        return False
    if re.fullmatch(r"[\d.]+", host) and (host.startswith(("10.", "192.168.", "127."))):
        return False
    return not any(host == h or host.endswith("." + h) for h in own)


def urls(text: str, file: str, own: Sequence[str]) -> List[Finding]:
    """Each host outside ``own`` a file links to, once, at its first line."""
    first: Dict[str, int] = {}
    if "://" not in text:
        return []
    for m in _URL.finditer(text):
        raw = m.group(1).rsplit("@", 1)[-1]
        host = raw.split(":")[0].rstrip(".,;").lower()
        if host and host not in first and "." in host and _outside(host, own):
            first[host] = m.start()
            if len(first) >= MAX_MATCHES:
                break
    if not first:
        return []
    lines = Lines(text)
    return [
        Finding("url", "info", file, lines.number(at), f"links to {escape(clip(host, 80))}")
        for host, at in sorted(first.items(), key=lambda kv: kv[1])
    ]


# --------------------------------------------------------------------------- scripts

SCRIPT_SUFFIXES = (
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".py",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".ps1",
    ".psm1",
    ".rb",
    ".pl",
    ".php",
    ".lua",
    ".bat",
    ".cmd",
    ".vbs",
    ".exe",
)


def is_script(path: str, head: bytes = b"", executable: bool = False) -> bool:
    """Whether a file is something a host would run: a script's suffix, a ``#!`` line,
    or the executable bit."""
    return path.lower().endswith(SCRIPT_SUFFIXES) or head.startswith(b"#!") or executable


def script(file: str) -> Finding:
    return Finding("script", "info", file, 0, "a script shipped beside the skill")


# --------------------------------------------------------------------------- one file


def scan_text(text: str, file: str, own: Sequence[str] = ()) -> List[Finding]:
    """Every text rule over one file (at most `MAX_FINDINGS_PER_FILE`, worst first kept)."""
    low = text.lower()
    found = [
        *instructions(text, file, low),
        *remote_code(text, file, low),
        *secrets(text, file),
        *hidden_text(text, file),
        *urls(text, file, own),
    ]
    if len(found) <= MAX_FINDINGS_PER_FILE:
        return sorted(found, key=lambda f: (f.line, f.kind))
    kept = sorted(
        sorted(found, key=sort_key)[:MAX_FINDINGS_PER_FILE], key=lambda f: (f.line, f.kind)
    )
    more = len(found) - MAX_FINDINGS_PER_FILE
    return [*kept, Finding("url", "info", file, 0, f"{more} more findings in this file not listed")]
