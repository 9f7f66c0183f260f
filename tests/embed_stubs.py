"""Local embedding servers speaking the Voyage and OpenAI wire formats, for tests.

`StubEmbedServer` listens on 127.0.0.1 (random port) in a background thread, answers
``POST /v1/embeddings`` like the real API, records every request (path, headers, JSON
body), and can be scripted per request:

    with StubEmbedServer("openai") as server:
        server.script = ["429", "ok"]   # first request: 429 + retry-after: 0, then success
        config = EmbedConfig("openai-compatible", "m", base_url=server.base_url)

Actions (one per request, in order; `default` after the script runs out):
``ok``, ``429`` (with ``retry-after: 0``), ``500``, ``400``, ``401`` (body echoes the
bearer token, as some APIs do, to test scrubbing), ``hang`` (sleeps `hang_seconds` before
answering, to trip the client's timeout), ``malformed`` (200 with broken JSON), ``short``
(one vector fewer than inputs), ``shuffle`` (data items in reverse order, ``index`` kept),
``redirect`` (307 to another URL).

Vectors are deterministic functions of the text (`stub_vector`) and deliberately not unit
length, so tests can check the client normalises them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Dict, List, Optional, Sequence

from tests.loopback import LoopbackServer

__all__ = ["RecordedRequest", "StubEmbedServer", "stub_vector"]


def stub_vector(text: str, dims: int) -> List[float]:
    """A deterministic, non-normalised vector for ``text`` (length about 3)."""
    out: List[float] = []
    counter = 0
    while len(out) < dims:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        out.extend((b - 127.5) / 42.5 for b in digest)
        counter += 1
    return out[:dims]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: Dict[str, str]
    body: Any


@dataclass
class StubEmbedServer(LoopbackServer):
    """A scripted Voyage- or OpenAI-format embeddings server on 127.0.0.1."""

    flavor: str = "openai"  # or "voyage"
    dims: int = 8
    model: str = "stub-model"
    script: List[str] = field(default_factory=list)
    default: str = "ok"
    hang_seconds: float = 2.0
    requests: List[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.flavor not in ("openai", "voyage"):
            raise ValueError(f"unknown flavor {self.flavor!r}")
        LoopbackServer.__init__(self)
        self._lock = threading.Lock()

    # -- lifecycle

    poll_interval = 0.02

    def start(self) -> StubEmbedServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
                return

            def do_POST(self) -> None:
                stub._handle(self)

        self.serve(Handler)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- introspection

    def inputs(self) -> List[List[str]]:
        """The ``input`` list of every request received, in order."""
        return [list(r.body["input"]) for r in self.requests if isinstance(r.body, dict)]

    # -- the handler

    def _next_action(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            body: Any = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(
                RecordedRequest("POST", h.path, {k.lower(): v for k, v in h.headers.items()}, body)
            )
        action = self._next_action()
        if h.path.rstrip("/") != "/v1/embeddings":
            self._send(h, 404, {"error": {"message": f"no route {h.path}"}})
            return
        if action == "hang":
            self._stopping.wait(self.hang_seconds)
            action = "ok"
        if action == "429":
            self._send(h, 429, {"error": {"message": "rate limited"}}, {"retry-after": "0"})
        elif action == "500":
            self._send(h, 500, {"error": {"message": "internal error"}})
        elif action == "400":
            self._send(h, 400, {"error": {"message": "input must not be empty"}})
        elif action == "401":
            token = h.headers.get("Authorization", "").replace("Bearer ", "")
            self._send(h, 401, {"error": {"message": f"Incorrect API key provided: {token}"}})
        elif action == "redirect":
            self._send(h, 307, {}, {"Location": "http://127.0.0.1:9/v1/embeddings"})
        elif action == "malformed":
            self._send_raw(h, 200, b'{"data": [ {"embedding": [0.1, ')
        else:
            self._send(h, 200, self._response(body, action))

    def _response(self, body: Any, action: str) -> Dict[str, Any]:
        texts: Sequence[str] = body.get("input", []) if isinstance(body, dict) else []
        if isinstance(texts, str):
            texts = [texts]
        dims = body.get("dimensions") or body.get("output_dimension") or self.dims
        data = [
            {"object": "embedding", "embedding": stub_vector(t, int(dims)), "index": i}
            for i, t in enumerate(texts)
        ]
        if action == "short":
            data = data[:-1]
        elif action == "shuffle":
            data = list(reversed(data))
        tokens = sum(len(t.split()) for t in texts)
        usage = (
            {"total_tokens": tokens}
            if self.flavor == "voyage"
            else {"prompt_tokens": tokens, "total_tokens": tokens}
        )
        return {"object": "list", "data": data, "model": self.model, "usage": usage}

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        payload: Dict[str, Any],
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        self._send_raw(h, status, json.dumps(payload).encode("utf-8"), headers)

    @staticmethod
    def _send_raw(
        h: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (a timeout test): nothing to answer


def wait_until(predicate: Any, timeout: float = 2.0) -> bool:
    """Poll ``predicate()`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())
