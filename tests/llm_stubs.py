"""127.0.0.1 stand-ins for the OpenAI Chat Completions API (and the servers that copy it:
Ollama, LM Studio, llama.cpp, vLLM, OpenRouter) and the Gemini API, for tests.

Each speaks its real wire format. Chat Completions: ``POST {base}/chat/completions`` with
``Authorization: Bearer <key>`` (none for an Ollama-style server), ``{model, messages,
max_tokens | max_completion_tokens}``; success is ``{"choices": [{"message": {"role":
"assistant", "content": ...}, "finish_reason"}], ...}``; errors ``{"error": {"message",
"type", "code"}}``. Gemini: ``POST /v1beta/models/{model}:generateContent`` with
``x-goog-api-key``, ``{systemInstruction, contents, generationConfig}``; success is
``{"candidates": [{"content": {"parts": [{"text"}], "role": "model"}, "finishReason"}]}``;
errors ``{"error": {"code", "message", "status"}}``.

Replies are scripted with `push()` or computed by ``responder(request)``; by default the
stub answers an expansion prompt with keywords and a rerank prompt with its candidates'
ids in reverse (`default_answer`).
"""

from __future__ import annotations

import collections
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple, Union, cast

from tests.loopback import LoopbackServer

GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class Seen:
    """One request as the stub saw it; header names are lower-cased."""

    path: str
    headers: Dict[str, str]
    raw: bytes
    body: Any

    @property
    def system(self) -> str:
        if not isinstance(self.body, dict):
            return ""
        if "messages" in self.body:
            return str(self.body["messages"][0].get("content", ""))
        parts = self.body.get("systemInstruction", {}).get("parts", [{}])
        return str(parts[0].get("text", ""))

    @property
    def user(self) -> str:
        if not isinstance(self.body, dict):
            return ""
        if "messages" in self.body:
            return str(self.body["messages"][-1].get("content", ""))
        return str(self.body["contents"][0]["parts"][0]["text"])

    @property
    def is_expansion(self) -> bool:
        return '{"keywords": [' in self.system


@dataclass
class Reply:
    """One answer. A 2xx ``status`` sends ``text`` in the wire format's success shape (or
    ``content`` as the message's content as it is: a list of parts, None); another
    status sends the error shape with ``message``. ``raw`` replaces the body; ``delay``
    waits first; ``size`` pads a success body to that many bytes (a huge answer)."""

    status: int = 200
    text: Optional[str] = None  # None: `default_answer`
    content: Any = "unset"
    finish: str = "stop"
    message: str = "error"
    headers: Dict[str, str] = field(default_factory=dict)
    raw: Optional[Union[bytes, str]] = None
    delay: float = 0.0
    size: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


def default_answer(seen: Seen) -> str:
    """Keywords for an expansion prompt; for a rerank prompt every offered id, reversed."""
    if seen.is_expansion:
        return '{"keywords": ["jest", "component tests"]}'
    ids = re.findall(r'"id": "([^"]+)"', seen.user)
    picks = [{"id": i, "why": "fits the task"} for i in reversed(ids)]
    return json.dumps({"picks": picks})


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
        stub = self.server.stub
        stub._record(seen)
        problem = stub.validate(seen)
        if problem is not None:
            self._send(problem[0], stub.error_body(problem[0], problem[1]), {})
            return
        reply = stub._next(seen)
        if reply.delay and stub._stopping.wait(reply.delay):
            return
        if reply.raw is not None:
            data = reply.raw.encode("utf-8") if isinstance(reply.raw, str) else reply.raw
            self._send_bytes(reply.status, data, reply.headers)
        elif 200 <= reply.status < 300:
            payload = stub.success_body(reply, seen)
            data = json.dumps(payload).encode("utf-8")
            if reply.size > len(data):
                payload["padding"] = "x" * (reply.size - len(data))
                data = json.dumps(payload).encode("utf-8")
            self._send_bytes(reply.status, data, reply.headers)
        else:
            self._send(reply.status, stub.error_body(reply.status, reply.message), reply.headers)

    def _send(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), headers)

    def _send_bytes(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: _Stub


class _Stub(LoopbackServer):
    def __init__(
        self, key: Optional[str] = None, responder: Optional[Callable[[Seen], Reply]] = None
    ) -> None:
        super().__init__()
        self.key = key
        self.responder = responder
        self.requests: List[Seen] = []
        self._replies: Deque[Reply] = collections.deque()
        self._lock = threading.Lock()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> Any:
        server = self.serve(_Handler, _Server)
        cast(_Server, server).stub = self
        return self

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.responder is not None:
            return self.responder(seen)
        return Reply()

    def validate(self, seen: Seen) -> Optional[Tuple[int, str]]:  # pragma: no cover
        raise NotImplementedError

    def success_body(self, reply: Reply, seen: Seen) -> Dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> Dict[str, Any]:  # pragma: no cover
        raise NotImplementedError


class ChatStub(_Stub):
    """OpenAI Chat Completions at `base_url` (``…/v1``). With ``key`` None it is an
    Ollama-style server that takes no key (and refuses none)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def validate(self, seen: Seen) -> Optional[Tuple[int, str]]:
        if seen.path != "/v1/chat/completions":
            return 404, f"Invalid URL (POST {seen.path})"
        if self.key is not None and seen.headers.get("authorization") != f"Bearer {self.key}":
            return 401, "Incorrect API key provided"
        body = seen.body
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, "'messages' is a required property"
        if "model" not in body:
            return 400, "you must provide a model parameter"
        roles = [m.get("role") for m in body["messages"]]
        if roles != ["system", "user"]:
            return 400, f"unexpected roles {roles}"
        return None

    def success_body(self, reply: Reply, seen: Seen) -> Dict[str, Any]:
        text = default_answer(seen) if reply.text is None else reply.text
        content = text if reply.content == "unset" else reply.content
        message: Dict[str, Any] = {"role": "assistant", "content": content, **reply.extra}
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 1765000000,
            "model": seen.body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def error_body(self, status: int, message: str) -> Dict[str, Any]:
        kind = "invalid_request_error" if status < 500 else "server_error"
        code = "invalid_api_key" if status == 401 else None
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class GeminiStub(_Stub):
    """The Gemini API at `base_url` (point GOOGLE_GEMINI_BASE_URL at it)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def validate(self, seen: Seen) -> Optional[Tuple[int, str]]:
        if not re.fullmatch(r"/v1beta/models/[A-Za-z0-9.\-]+:generateContent", seen.path):
            return 404, f"Requested entity was not found: {seen.path}"
        if self.key is not None and seen.headers.get("x-goog-api-key") != self.key:
            return 400, "API key not valid. Please pass a valid API key."
        body = seen.body
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            return 400, "* GenerateContentRequest.contents: contents is not specified"
        return None

    def success_body(self, reply: Reply, seen: Seen) -> Dict[str, Any]:
        text = default_answer(seen) if reply.text is None else reply.text
        parts = [{"text": text}] if reply.content == "unset" else reply.content
        return {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": reply.finish if reply.finish != "stop" else "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20},
            "modelVersion": seen.path.split("/")[-1].split(":")[0],
            **reply.extra,
        }

    def error_body(self, status: int, message: str) -> Dict[str, Any]:
        return {
            "error": {
                "code": status,
                "message": message,
                "status": GEMINI_STATUS.get(status, "UNKNOWN"),
            }
        }
