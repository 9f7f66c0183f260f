"""HTTP/1.1 request framing for `boost mcp --http`: pure functions over bytes.

The team server reads requests itself (`http_serve`), so that a request reaches a worker
only once its head and body have arrived whole. This module owns the wire rules it keeps
(RFC 9112), and is tested with literals:

- **A head** is the request line and the header lines up to the first empty line. Empty
  lines before the request line are skipped (§2.2). A line ends at LF, with or without CR.
  A line longer than `MAX_LINE` bytes is refused (``414`` for the request line, ``431``
  for a header line), and so is a head past `MAX_HEAD` bytes or `MAX_FIELDS` fields.
- **Fields** are ``name: value``: a name is a token (no space before the colon, §5.1), a
  value has its surrounding spaces and tabs removed (§5); a folded line is refused (§5.2).
- **The body's length** (§6.3): ``Transfer-Encoding`` cannot be framed here (``411``, and
  the connection is closed); ``Content-Length`` is ASCII digits only (§8.6: ``+45``,
  ``4_5``, ``0x2d``, ``٤٥`` and ``45, 46`` are ``400``); several equal values are one, different
  values are ``400``; no ``Content-Length`` is an empty body. Every framing error closes
  the connection, since what follows can no longer be told apart from the next request.
- **A response** is one buffer: status line, headers, ``Content-Length`` and body, so it
  goes out in one write.
"""

from __future__ import annotations

import email.utils
import http
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

MAX_LINE = 8192  # bytes per line, CRLF excluded
MAX_HEAD = 65536  # bytes for the whole head
MAX_FIELDS = 100
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
Buffer = Union[bytes, bytearray]


class WireError(Exception):
    """A request that cannot be read: its status and the message the client gets. The
    connection is closed after the answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Head:
    method: str
    target: str
    version: str  # "HTTP/1.1" or "HTTP/1.0"
    fields: Tuple[Tuple[str, str], ...]  # (lower-cased name, value), in order

    def get(self, name: str) -> Optional[str]:
        """The first value of the field ``name`` (lower case), or None."""
        for key, value in self.fields:
            if key == name:
                return value
        return None

    def values(self, name: str) -> Tuple[str, ...]:
        return tuple(v for k, v in self.fields if k == name)

    @property
    def keep_alive(self) -> bool:
        """Whether the client lets the connection stay open after the answer (§9.3)."""
        tokens = {t.strip().lower() for v in self.values("connection") for t in v.split(",")}
        if self.version == "HTTP/1.1":
            return "close" not in tokens
        return "keep-alive" in tokens and "close" not in tokens

    @property
    def expects_continue(self) -> bool:
        return self.version == "HTTP/1.1" and (self.get("expect") or "").lower() == "100-continue"


def skip_empty_lines(buf: Buffer) -> int:
    """How many bytes of CR and LF start ``buf`` (§2.2: ignored before a request line)."""
    i = 0
    while i < len(buf) and buf[i] in (0x0D, 0x0A):
        i += 1
    return i


def head_end(buf: Buffer) -> int:
    """The offset just past the empty line that ends the head at the start of ``buf``
    (which starts with no empty line), or -1 while it is incomplete. Raises WireError when
    a line, complete or not, or the head is already too long."""
    pos = 0
    first = True
    while True:
        nl = buf.find(b"\n", pos)
        end = len(buf) if nl < 0 else nl
        length = end - pos - (1 if nl >= 0 and end > pos and buf[end - 1] == 0x0D else 0)
        if length > MAX_LINE:
            if first:
                raise WireError(414, f"URI too long: a request line is at most {MAX_LINE} bytes")
            raise WireError(
                431, f"request header fields too large: a header line is at most {MAX_LINE} bytes"
            )
        if end > MAX_HEAD:
            raise WireError(431, f"request header fields too large: at most {MAX_HEAD} bytes")
        if nl < 0:
            return -1
        if length == 0 and not first:
            return nl + 1
        first = False
        pos = nl + 1


def parse_head(raw: Buffer) -> Head:
    """The `Head` in ``raw`` (what `head_end` delimited). Raises WireError (400/505)."""
    lines = bytes(raw).decode("latin-1").split("\n")
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise WireError(400, "bad request: no request line")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise WireError(400, "bad request: the request line is not 'METHOD target HTTP/1.1'")
    method, target, version = parts
    if not set(method) <= _TOKEN:
        raise WireError(400, "bad request: the method is not a token")
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        if version.startswith("HTTP/") and version[5:6].isdigit():
            raise WireError(505, "HTTP version not supported: speak HTTP/1.1")
        raise WireError(400, "bad request: the request line is not 'METHOD target HTTP/1.1'")
    fields = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t"):
            raise WireError(400, "bad request: folded header lines are not accepted")
        name, colon, value = line.partition(":")
        if not colon or not name or not set(name) <= _TOKEN:
            raise WireError(400, "bad request: a header line is not 'Name: value'")
        fields.append((name.lower(), value.strip(" \t")))
    if len(fields) > MAX_FIELDS:
        raise WireError(431, f"request header fields too large: at most {MAX_FIELDS} fields")
    head = Head(method, target, version, tuple(fields))
    if version == "HTTP/1.1" and len(head.values("host")) != 1:
        raise WireError(400, "bad request: HTTP/1.1 needs exactly one Host header")
    return head


def body_length(head: Head) -> int:
    """The length of the body that follows ``head`` (RFC 9112 §6.3); WireError when it
    cannot be framed."""
    if head.values("transfer-encoding"):
        raise WireError(411, "length required: send Content-Length, not chunked bodies")
    given = head.values("content-length")
    if not given:
        return 0
    if any(not (v.isascii() and v.isdigit()) for v in given):
        raise WireError(400, "bad request: Content-Length must be digits only")
    if len({int(v) for v in given}) != 1:
        raise WireError(400, "bad request: Content-Length values disagree")
    return int(given[0])


def encode_response(
    status: int,
    fields: Sequence[Tuple[str, str]],
    body: bytes = b"",
    *,
    close: bool = False,
    date: Optional[str] = None,
) -> bytes:
    """One buffer: the status line, ``fields`` (values already plain ASCII), Date, Server,
    Content-Length and Connection, an empty line and ``body``."""
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", "Server: boost-mcp"]
    lines.append(f"Date: {date or email.utils.formatdate(usegmt=True)}")
    lines += [f"{k}: {v}" for k, v in fields]
    lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
