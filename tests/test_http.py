"""`http.post_json` against a scripted 127.0.0.1 server (retries, backoff, retry-after, the
deadline, refused redirects, no proxy for loopback), and `redact` on keys and URLs."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Dict, Iterator, List, Tuple

import pytest

from boost_cli.core import http
from tests.loopback import LoopbackServer

KEY = "sk-test-SECRET-0123456789abcdef"

# One scripted answer: (status, headers, body); "hang" sleeps past the client's timeout,
# "drop" closes the connection without answering.
Answer = Tuple[int, Dict[str, str], bytes]


class Scripted(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.script: List[object] = []
        self.bodies: List[object] = []
        self.headers: List[Dict[str, str]] = []
        self._lock = threading.Lock()

    def start(self) -> Scripted:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with stub._lock:
                    stub.bodies.append(json.loads(raw))
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    action = stub.script.pop(0) if stub.script else (200, {}, b"{}")
                if action == "hang":
                    stub._stopping.wait(2)
                    return
                if action == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, headers, body = action  # type: ignore[misc]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.serve(Handler)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/x"


@pytest.fixture
def server() -> Iterator[Scripted]:
    with Scripted() as s:
        yield s


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> List[float]:
    seen: List[float] = []
    monkeypatch.setattr(http, "_sleep", seen.append)
    return seen


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1/x"


# --------------------------------------------------------------------------- redaction


def test_redact_masks_secrets_key_shapes_and_url_credentials() -> None:
    assert http.redact(f"bad key {KEY} and sk-abc***wxyz1234", KEY) == "bad key *** and ***"
    assert http.redact("at http://user:hunter2@127.0.0.1:8/v1 and https://tok@h/x") == (
        "at http://***@127.0.0.1:8/v1 and https://***@h/x"
    )
    assert http.redact("pa-0123456789 key-abcdefgh", None, "") == "*** ***"
    assert http.redact("a plain http://host/path stays", "") == "a plain http://host/path stays"


def test_retry_after_accepts_seconds_only() -> None:
    assert http.retry_after(None) is None
    assert http.retry_after(" 2.5 ") == 2.5
    assert http.retry_after("-3") == 0.0
    assert http.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert http.retry_after("nan") is None and http.retry_after("inf") is None


# --------------------------------------------------------------------------- one POST


def test_success_sends_json_with_headers(server: Scripted) -> None:
    server.script = [(200, {"X-Served": "m"}, b'{"ok": true}')]
    out = http.post_json(server.url, {"a": [1, "é"]}, {"Authorization": "Bearer t"}, timeout=5)
    assert out == http.Response(200, out.headers, b'{"ok": true}')  # type: ignore[union-attr]
    assert isinstance(out, http.Response) and out.ok and out.headers["x-served"] == "m"
    assert server.bodies == [{"a": [1, "é"]}]
    sent = server.headers[0]
    assert sent["content-type"] == "application/json" and sent["accept"] == "application/json"
    assert sent["authorization"] == "Bearer t"


def test_a_4xx_is_returned_at_once_with_its_body(server: Scripted, waits: List[float]) -> None:
    server.script = [(400, {}, b'{"error": "no"}')]
    out = http.post_json(server.url, {}, {}, timeout=5, retry=http.Retry(tries=4))
    assert isinstance(out, http.Response) and (out.status, out.body) == (400, b'{"error": "no"}')
    assert not out.ok and not out.retryable and waits == [] and len(server.bodies) == 1


def test_5xx_is_retried_with_exponential_backoff_then_returned(
    server: Scripted, waits: List[float]
) -> None:
    server.script = [(500, {}, b"e1"), (503, {}, b"e2"), (502, {}, b"e3"), (500, {}, b"e4")]
    retry = http.Retry(tries=4, backoff=0.5, max_backoff=1.5)
    out = http.post_json(server.url, {}, {}, timeout=5, retry=retry)
    assert isinstance(out, http.Response) and (out.status, out.body) == (500, b"e4")
    assert waits == [0.5, 1.0, 1.5] and len(server.bodies) == 4


def test_retry_after_replaces_the_backoff_up_to_its_cap(
    server: Scripted, waits: List[float]
) -> None:
    server.script = [
        (429, {"retry-after": "3"}, b""),
        (429, {"retry-after": "3600"}, b""),
        (429, {"retry-after": "soon"}, b""),
        (200, {}, b"{}"),
    ]
    retry = http.Retry(tries=4, backoff=0.25, max_retry_after=20.0)
    out = http.post_json(server.url, {}, {}, timeout=5, retry=retry)
    assert isinstance(out, http.Response) and out.ok
    assert waits == [3.0, 20.0, 1.0]


def test_the_server_can_say_do_not_retry(server: Scripted, waits: List[float]) -> None:
    server.script = [(503, {"x-should-retry": "false"}, b"")]
    out = http.post_json(server.url, {}, {}, timeout=5, retry=http.Retry(tries=3))
    assert isinstance(out, http.Response) and out.status == 503 and not out.retryable
    assert len(server.bodies) == 1 and waits == []


def test_a_redirect_is_refused(server: Scripted) -> None:
    server.script = [(307, {"Location": dead_url()}, b"")]
    out = http.post_json(server.url, {}, {"Authorization": f"Bearer {KEY}"}, timeout=5)
    assert isinstance(out, http.Response) and out.status == 307
    assert len(server.bodies) == 1


def test_a_long_error_body_is_clipped(server: Scripted) -> None:
    server.script = [(400, {}, b"x" * (http.MAX_ERROR_BODY + 10))]
    out = http.post_json(server.url, {}, {}, timeout=5)
    assert isinstance(out, http.Response) and len(out.body) == http.MAX_ERROR_BODY


def test_loopback_skips_a_proxy_from_the_environment(
    server: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", dead_url())
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    out = http.post_json(server.url, {}, {}, timeout=5)
    assert isinstance(out, http.Response) and out.ok


# --------------------------------------------------------------------------- no answer


def test_connection_refused_is_retried_when_the_policy_says_so(waits: List[float]) -> None:
    url = dead_url()
    out = http.post_json(url, {}, {}, timeout=2, retry=http.Retry(tries=3))
    assert isinstance(out, http.Unreachable) and out.connecting and not out.timed_out
    assert out.error == "ConnectionRefusedError" and "Connection refused" in out.detail
    assert waits == [0.5, 1.0]
    waits.clear()
    once = http.post_json(url, {}, {}, timeout=2, retry=http.Retry(tries=3, unreachable=False))
    assert isinstance(once, http.Unreachable) and waits == []


def test_a_timeout_and_a_dropped_connection(server: Scripted, waits: List[float]) -> None:
    server.script = ["hang", "drop"]
    slow = http.post_json(server.url, {}, {}, timeout=0.2)
    assert isinstance(slow, http.Unreachable) and slow.timed_out and slow.seconds == 0.2
    dropped = http.post_json(server.url, {}, {}, timeout=2)
    assert isinstance(dropped, http.Unreachable) and not dropped.timed_out
    assert not dropped.connecting and dropped.error == "RemoteDisconnected"
    assert dropped.detail.startswith("RemoteDisconnected(")


def test_url_credentials_never_reach_a_detail() -> None:
    # No port: urllib reads "user:hunter2@127.0.0.1" as host:port and names the "port".
    out = http.post_json("http://user:hunter2@127.0.0.1/v1", {}, {}, timeout=2)
    assert isinstance(out, http.Unreachable) and "hunter2" not in out.detail
    assert out.error == "InvalidURL" and "***@127.0.0.1" in out.detail


def test_other_schemes_are_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="not an http"):
        http.post_json("file:///etc/passwd", {}, {}, timeout=1)


# --------------------------------------------------------------------------- the deadline


def test_the_deadline_bounds_each_attempt_and_stops_retries(
    server: Scripted, waits: List[float]
) -> None:
    server.script = [(529, {"retry-after": "2"}, b"")]
    retry = http.Retry(tries=2, deadline=time.monotonic() + 1.0, min_attempt=0.2)
    out = http.post_json(server.url, {}, {}, timeout=30, retry=retry)
    assert isinstance(out, http.Response) and out.status == 529  # 2 s would overrun
    assert waits == [] and len(server.bodies) == 1
    server.script = ["hang"]
    start = time.monotonic()
    late = http.post_json(
        server.url, {}, {}, timeout=30, retry=http.Retry(deadline=time.monotonic() + 0.3)
    )
    assert isinstance(late, http.Unreachable) and late.timed_out and 0 < late.seconds <= 0.3
    assert time.monotonic() - start < 1.5
    past = http.post_json(server.url, {}, {}, timeout=30, retry=http.Retry(deadline=0.0))
    assert past == http.Unreachable(True, 0.0)
