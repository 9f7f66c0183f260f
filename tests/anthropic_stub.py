"""A 127.0.0.1 stand-in for the Anthropic Messages API, for tests.

It speaks the real wire format: ``POST /v1/messages`` with ``x-api-key`` and
``anthropic-version`` headers and a ``{model, max_tokens, messages, …}`` body; success is
a ``{"type": "message", "content": [{"type": "text", "text": …}], …}`` object, errors are
``{"type": "error", "error": {"type", "message"}}`` with the API's status codes. Requests
are recorded; replies are scripted with `push()` or computed by a ``responder``.

    with AnthropicStub() as stub:
        stub.push(StubReply(status=529))
        stub.push(StubReply(text='{"picks": []}'))
        ... ANTHROPIC_BASE_URL=stub.base_url ...
        assert stub.requests[0].headers["anthropic-version"] == "2023-06-01"
"""

from __future__ import annotations

import collections
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple, Union, cast

from tests.loopback import LoopbackServer

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    529: "Overloaded",
}


@dataclass
class RecordedRequest:
    """One request as the stub saw it; header names are lower-cased."""

    method: str
    path: str
    headers: Dict[str, str]
    raw_body: bytes
    body: Any  # the decoded JSON, or None when it was not JSON


@dataclass
class StubReply:
    """What to answer one request with.

    A 2xx ``status`` sends a Messages API message whose single text block is ``text``;
    any other status sends the API's error body (``error_type``/``message`` default from
    the status). ``raw`` replaces the body entirely (for malformed answers); ``delay``
    sleeps before answering (for timeouts); ``drop`` closes the connection unanswered.
    """

    status: int = 200
    text: str = ""
    stop_reason: str = "end_turn"
    content: Optional[List[Dict[str, Any]]] = None
    error_type: Optional[str] = None
    message: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)
    raw: Optional[Union[bytes, str]] = None
    delay: float = 0.0
    drop: bool = False


def message_body(
    text: str,
    model: str = "claude-haiku-5-5",
    stop_reason: str = "end_turn",
    content: Optional[List[Dict[str, Any]]] = None,
) -> Dict[str, Any]:
    """A successful Messages API response object."""
    return {
        "id": "msg_01StubStubStubStubStubStub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content if content is not None else [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": max(1, len(text) // 4)},
    }


def error_body(error_type: str, message: str) -> Dict[str, Any]:
    """A Messages API error response object."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_01StubStubStubStubStub",
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # keep test output clean

    def do_GET(self) -> None:
        self._send(404, error_body("not_found_error", f"Not found: {self.path}"), {})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw_body=raw,
            body=body,
        )
        stub = self.server.stub
        stub._record(request)

        problem = _validate(request)
        if problem is not None:
            status, etype, msg = problem
            self._send(status, error_body(etype, msg), {})
            return
        reply = stub._next_reply(request)
        if reply.delay and stub._stopping.wait(reply.delay):
            return
        if reply.drop:
            self.close_connection = True
            return
        headers = dict(reply.headers)
        if reply.raw is not None:
            data = reply.raw.encode("utf-8") if isinstance(reply.raw, str) else reply.raw
            self._send_bytes(reply.status, data, headers)
        elif 200 <= reply.status < 300:
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
            self._send(
                reply.status,
                message_body(reply.text, model, reply.stop_reason, reply.content),
                headers,
            )
        else:
            etype = reply.error_type or ERROR_TYPES.get(reply.status, "api_error")
            msg = reply.message or ERROR_MESSAGES.get(reply.status, "error")
            self._send(reply.status, error_body(etype, msg), headers)

    def _send(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_bytes(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_01StubStubStubStubStub")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to answer


def _validate(request: RecordedRequest) -> Optional[Tuple[int, str, str]]:
    """The error the real API would answer before looking at the model, if any."""
    if request.path != "/v1/messages":
        return 404, "not_found_error", f"Not found: {request.path}"
    if not request.headers.get("x-api-key"):
        return 401, "authentication_error", "x-api-key header is required"
    if not request.headers.get("anthropic-version"):
        return 400, "invalid_request_error", "anthropic-version: header is required"
    body = request.body
    if not isinstance(body, dict):
        return 400, "invalid_request_error", "request body is not valid JSON"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return 400, "invalid_request_error", f"{key}: Field required"
    if not isinstance(body["messages"], list) or not body["messages"]:
        return 400, "invalid_request_error", "messages: at least one message is required"
    return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: AnthropicStub


class AnthropicStub(LoopbackServer):
    """The server: start it (or use it as a context manager), point ANTHROPIC_BASE_URL at
    `base_url`, script replies with `push()`, then read `requests`.

    With no scripted reply left, ``responder(request)`` decides, else ``default`` is sent.
    """

    def __init__(
        self,
        responder: Optional[Callable[[RecordedRequest], StubReply]] = None,
        default: Optional[StubReply] = None,
    ) -> None:
        super().__init__()
        self.responder = responder
        self.default = default or StubReply(text='{"picks": []}')
        self.requests: List[RecordedRequest] = []
        self._replies: Deque[StubReply] = collections.deque()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, *replies: StubReply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> AnthropicStub:
        server = self.serve(_Handler, _Server)
        cast(_Server, server).stub = self
        return self

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, request: RecordedRequest) -> StubReply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.responder is not None:
            return self.responder(request)
        return self.default
