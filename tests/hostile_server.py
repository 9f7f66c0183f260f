"""A 127.0.0.1 HTTP server that misbehaves on purpose, for the deadline and size tests.

Every POST (any path: the Messages API and the embeddings API alike) is answered as
`mode` says:

- ``drip``: a 200 with a large Content-Length whose body comes one byte per `interval`
  (each read returns quickly, so per-socket-operation timeouts never trip)
- ``drip-headers``: the status line and headers themselves, one byte per `interval`
- ``huge``: a 200 declaring a ``size``-byte body and sending it as fast as it can
- ``huge-unsized``: the same without Content-Length (the body ends when the server
  closes the connection), so only a capped read stops it

The server stops sending when the client hangs up or the server is stopped.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any, List

from tests.loopback import LoopbackServer

MODES = ("drip", "drip-headers", "huge", "huge-unsized")


class HostileServer(LoopbackServer):
    def __init__(self, mode: str, interval: float = 0.2, size: int = 1 << 30) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        super().__init__()
        self.mode = mode
        self.interval = interval
        self.size = size
        self.requests: List[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HostileServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append(self.path)
                try:
                    server._answer(self)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    return  # the client gave up, as it should

        self.serve(Handler)
        return self

    def _drip(self, h: BaseHTTPRequestHandler, data: bytes) -> None:
        for i in range(len(data)):
            if self._stopping.wait(self.interval):
                return
            h.wfile.write(data[i : i + 1])
            h.wfile.flush()

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        if self.mode == "drip-headers":
            self._drip(h, head + b"X-Slow: " + b"s" * 10_000 + b"\r\n\r\n")
            return
        if self.mode == "drip":
            h.wfile.write(head + b"Content-Length: 100000\r\n\r\n")
            self._drip(h, b'{"data": [' + b" " * 99_990)
            return
        sized = self.mode == "huge"
        h.wfile.write(head + (b"Content-Length: %d\r\n" % self.size if sized else b"") + b"\r\n")
        chunk = b'{"pad": "' + b"x" * (1 << 20) + b'"}'
        sent = 0
        while sent < self.size and not self._stopping.is_set():
            h.wfile.write(chunk)
            sent += len(chunk)
