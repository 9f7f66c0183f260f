"""One JSON POST over urllib with retries, and the redaction every error detail goes through.

The reranker (`ai`) and the embedding providers (`embed`) both send JSON to an HTTP API with
a secret in a header; this module owns what they share, so neither re-implements it:

- `post_json` — POST under a `Retry` policy. Redirects are refused (a header that carries
  a key must never follow one to another host) and a loopback URL never goes through a
  proxy from the environment. Any HTTP status comes back as a `Response`; no answer at all
  (timeout, refused or broken connection) as `Unreachable`. 429 and 5xx are retried (unless
  the server says ``x-should-retry: false``), timeouts and connection errors when the policy
  says so, with exponential backoff that a server's ``retry-after`` replaces, up to a cap.
- Each attempt has a whole-call deadline: a watchdog shuts its socket when the attempt's
  time is up, so a server sending one byte a second (which resets a socket timeout with
  every byte) cannot stretch it. Only name resolution is outside it. A body is read up to
  the caller's ``max_body`` and no further (`Response.too_large`).
- `redact` — a text with the given secrets, key-shaped tokens and the credentials of any
  URL masked. Callers run what they quote from a response through it; `Unreachable.detail`
  already is.

Callers phrase their own messages: the provider's wire format and wording stay theirs.
urllib is imported on the first POST, not with this module: `redact` is needed on paths
(the reranker's CLI backend) that never touch the network.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    import urllib.request

log = logging.getLogger("boost.http")

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_ERROR_BODY = 65536  # bytes of a non-2xx body kept: enough for any error message
MAX_BODY = 16 * 1024 * 1024  # bytes of a 2xx body read by default
_CHUNK = 65536


@dataclass(frozen=True)
class Retry:
    """How `post_json` retries. ``tries`` counts attempts in all; the first retry waits
    ``backoff`` seconds, each later one twice the last, at most ``max_backoff``; a
    ``retry-after`` in seconds replaces that wait, capped at ``max_retry_after``.
    ``unreachable``: retry timeouts and connection errors too (else only 429/5xx).
    ``deadline`` (a `time.monotonic()` value) bounds every attempt's timeout, and a retry
    starts only when its wait plus ``min_attempt`` seconds still fit before it."""

    tries: int = 1
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 20.0
    unreachable: bool = True
    deadline: Optional[float] = None
    min_attempt: float = 0.0


@dataclass(frozen=True)
class Response:
    """An HTTP answer of any status; header names are lower-cased. A non-2xx body is
    clipped to `MAX_ERROR_BODY` bytes (empty when it could not be read). ``too_large``: a
    2xx body longer than the caller's ``max_body``, left unread (``body`` is empty)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    too_large: bool = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """429 or 5xx, unless the server said ``x-should-retry: false``."""
        if self.headers.get("x-should-retry", "").strip().lower() == "false":
            return False
        return self.status == 429 or self.status >= 500


@dataclass(frozen=True)
class Unreachable:
    """No HTTP answer. ``timed_out``: the attempt used up its ``seconds`` (0 when the
    deadline had passed before it could start). ``connecting``: the request could not be
    sent (refused, unknown host); else the connection broke while waiting for the answer.
    ``error`` is the exception's class name; ``detail`` its words (urllib's reason when
    connecting, else the exception's repr), secrets redacted."""

    timed_out: bool
    seconds: float
    connecting: bool = False
    error: str = ""
    detail: str = ""


Outcome = Union[Response, Unreachable]


# --------------------------------------------------------------------------- redaction


_SECRETISH = re.compile(r"\b(?:sk|pa|key)-[A-Za-z0-9_\-*.]{6,}")
# Up to the last '@' before the path: a password may hold an unescaped '@'.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#]*@")


def redact(text: str, *secrets: Optional[str]) -> str:
    """``text`` with each of ``secrets``, anything shaped like an API key (``sk-…``,
    ``pa-…``, ``key-…``) and the user:password part of any URL replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _SECRETISH.sub("***", text)
    return _URL_USERINFO.sub(r"\1***@", text)


def retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a ``retry-after`` header (never negative), or None when it is absent,
    not finite, or an HTTP date (the caller's own backoff applies then)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


# --------------------------------------------------------------------------- one POST


class _Watchdog:
    """Shuts down every socket of one attempt once its ``seconds`` are up: the attempt's
    whole-call deadline (a blocked read then returns, and the attempt reports a timeout)."""

    def __init__(self, seconds: float) -> None:
        import threading

        self.fired = False
        self._lock = threading.Lock()
        self._socks: List[Any] = []
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: Any) -> None:
        with self._lock:
            self._socks.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)


def _shut(sock: Any) -> None:
    import socket

    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        return  # closed already: nothing left to stop


def _watched(connection_class: Any, dog: _Watchdog) -> Any:
    """A factory for ``connection_class`` whose sockets ``dog`` watches."""

    def make(*args: Any, **kwargs: Any) -> Any:
        conn = connection_class(*args, **kwargs)
        create = getattr(conn, "_create_connection", None)
        if create is not None:  # http.client's hook for opening the socket (3.9 and later)

            def create_watched(*a: Any, **k: Any) -> Any:
                sock = create(*a, **k)
                dog.watch(sock)
                return sock

            conn._create_connection = create_watched
        return conn

    return make


def _opener(url: str, dog: _Watchdog) -> urllib.request.OpenerDirector:
    import urllib.parse
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        """Refuse redirects: the 3xx comes back as the answer."""

        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    class Http(urllib.request.HTTPHandler):
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
            return super().do_open(_watched(http_class, dog), req, **kwargs)

    class Https(urllib.request.HTTPSHandler):
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
            return super().do_open(_watched(http_class, dog), req, **kwargs)

    handlers: List[urllib.request.BaseHandler] = [NoRedirect(), Http(), Https()]
    if (urllib.parse.urlsplit(url).hostname or "") in LOOPBACK:
        handlers.append(urllib.request.ProxyHandler({}))  # no proxy for local traffic
    return urllib.request.build_opener(*handlers)


def _headers(message: Any) -> Dict[str, str]:
    return {k.lower(): v for k, v in (message or {}).items()}


def _read_capped(answer: Any, limit: int) -> Optional[bytes]:
    """The body, or None when it is longer than ``limit`` bytes (reading stops there)."""
    declared = answer.headers.get("content-length")
    if declared and declared.strip().isdigit() and int(declared) > limit:
        return None
    parts: List[bytes] = []
    size = 0
    while True:
        chunk = answer.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


def _post_once(
    url: str,
    data: bytes,
    headers: Mapping[str, str],
    timeout: float,
    secrets: Sequence[Optional[str]],
    max_body: int,
) -> Outcome:
    """One attempt, all of it (connection, headers, body) within ``timeout`` seconds."""
    import http.client
    import socket
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=data, headers=dict(headers), method="POST")
    outcome: Outcome
    with _Watchdog(timeout) as dog:
        try:
            with _opener(url, dog).open(request, timeout=timeout) as answer:
                body = _read_capped(answer, max_body)
                status, head = answer.status, _headers(answer.headers)
            outcome = (
                Response(status, head, b"", too_large=True)
                if body is None
                else Response(status, head, body)
            )
        except urllib.error.HTTPError as exc:
            with exc:
                try:
                    error_body = exc.read(MAX_ERROR_BODY)
                except (OSError, http.client.HTTPException):
                    error_body = b""
            outcome = Response(exc.code, _headers(exc.headers), error_body)
        except urllib.error.URLError as exc:
            timed_out = isinstance(exc.reason, (socket.timeout, TimeoutError))
            name = (
                type(exc.reason).__name__ if isinstance(exc.reason, BaseException) else "URLError"
            )
            outcome = Unreachable(timed_out, timeout, True, name, redact(str(exc.reason), *secrets))
        except (socket.timeout, TimeoutError) as exc:
            outcome = Unreachable(
                True, timeout, False, type(exc).__name__, redact(repr(exc), *secrets)
            )
        except (OSError, http.client.HTTPException) as exc:
            outcome = Unreachable(
                False, timeout, False, type(exc).__name__, redact(repr(exc), *secrets)
            )
    if dog.fired:  # whatever the attempt got after its deadline is cut short: a timeout
        return Unreachable(True, timeout, False, "TimeoutError", f"no answer within {timeout:g} s")
    return outcome


def _sleep(seconds: float) -> None:
    """Indirection so tests can observe and skip backoff waits."""
    time.sleep(seconds)


def post_json(
    url: str,
    payload: Any,
    headers: Mapping[str, str],
    *,
    timeout: float,
    retry: Retry = Retry(),
    secrets: Sequence[Optional[str]] = (),
    max_body: int = MAX_BODY,
) -> Outcome:
    """POST ``payload`` as JSON to ``url`` (http or https) under ``retry``; the last outcome.

    ``timeout`` is each attempt's limit in seconds, the whole attempt included (shortened
    to what is left of ``retry.deadline``); a 2xx body over ``max_body`` bytes is not read
    (`Response.too_large`) and not retried. ``headers`` add to (or replace) the JSON content-type and accept
    headers. ``secrets`` (and the URL's password) are masked in `Unreachable.detail`.
    Never raises for a network problem; a URL of another scheme is a caller bug
    (`ValueError`).
    """
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {redact(url)!r}")
    secrets = (*secrets, parts.password)
    shown = redact(url, *secrets)
    data = json.dumps(payload).encode("utf-8")
    sent = {"Content-Type": "application/json", "Accept": "application/json"}
    sent.update(headers)
    outcome: Outcome = Unreachable(True, 0.0)
    for attempt in range(1, max(1, retry.tries) + 1):
        wait = min(retry.backoff * (2 ** (attempt - 1)), retry.max_backoff)
        seconds = timeout
        if retry.deadline is not None:
            seconds = min(timeout, retry.deadline - time.monotonic())
            if seconds <= 0:
                return Unreachable(True, 0.0)
        outcome = _post_once(url, data, sent, seconds, secrets, max_body)
        if isinstance(outcome, Response):
            log.debug("POST %s → HTTP %d (attempt %d)", shown, outcome.status, attempt)
            if outcome.ok or not outcome.retryable:
                return outcome
            server_wait = retry_after(outcome.headers.get("retry-after"))
            if server_wait is not None:
                wait = min(server_wait, retry.max_retry_after)
        else:
            log.debug("POST %s → %s (attempt %d)", shown, outcome.error, attempt)
            if not retry.unreachable:
                return outcome
        if attempt >= retry.tries:
            break
        if (
            retry.deadline is not None
            and retry.deadline - time.monotonic() < wait + retry.min_attempt
        ):
            break
        log.debug("retrying %s in %.2f s", shown, wait)
        _sleep(wait)
    return outcome
