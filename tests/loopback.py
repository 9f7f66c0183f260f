"""A stdlib HTTP server on 127.0.0.1 in a daemon thread: the lifecycle the wire-format
stubs (Anthropic Messages API, embedding providers) share."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional, Type


class LoopbackServer:
    """Start with `serve(handler)`; stop with `stop()` or by leaving the `with` block."""

    poll_interval = 0.05
    server_class: Type[ThreadingHTTPServer] = ThreadingHTTPServer

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def serve(
        self,
        handler: Type[BaseHTTPRequestHandler],
        server_class: Optional[Type[ThreadingHTTPServer]] = None,
    ) -> ThreadingHTTPServer:
        """Bind a random loopback port and serve ``handler`` until `stop()`."""
        server = (server_class or self.server_class)(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": self.poll_interval}, daemon=True
        )
        self._thread.start()
        return server

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return int(self._server.server_address[1])

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def start(self) -> Any:  # pragma: no cover - each stub defines it
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
