"""Serving HTTP/1.1 connections: one reader thread, and workers that only see whole requests.

`http.server` gives each connection a thread that reads its own request, so 40 clients
sending one header byte a second held all of boost's workers and nobody was answered; a
refused request's unread body was parsed as the next request; and an open keep-alive
connection kept being served after SIGTERM. This module owns the connections instead:

- **One reader** (`ConnServer.serve_forever`, the caller's thread) accepts, reads and
  writes every connection through a selector. A request goes to a worker only once its head and its
  body (at most ``max_body`` bytes) have arrived whole, so clients that dawdle cost a
  socket each, never a worker. Framing is `http_wire`'s.
- **Deadlines per connection**: a request has ``read_seconds`` from its first byte to
  arrive whole (head and body), else ``408`` and the connection is closed; a kept-alive
  connection idle for ``idle_seconds`` is closed. At most ``max_connections`` are open (a
  new one past that gets ``503`` at once), and the bodies being read declare at most
  ``max_buffered`` bytes in all (``503`` past that).
- **Always in step**: the body of every request is read before it is answered, refused or
  not, so it can never be taken for the next request; a body over ``max_body`` or one that
  cannot be framed gets its error and the connection is closed in stages (RFC 9112 §9.6:
  the write side first, then what the client still sends is read and dropped for a second,
  so a reset cannot destroy the answer before it is delivered).
- **One write per answer**, with ``TCP_NODELAY``: a kept-alive client waits for no delayed
  ACK. What the client's socket does not take at once goes back to the reader, which sends
  it as the client reads (a client that takes nothing for ``read_seconds`` is dropped): no
  worker waits on a slow reader either.
- **Stopping** (`shutdown`): the listener closes, every connection without an answer
  pending is closed (idle, or half a request: nothing more is read), the requests in
  workers are answered with ``Connection: close``, and `serve_forever` returns once they
  are written, or after ``drain_seconds``. The threads are daemons: nothing holds the
  process's exit past that.

What a request means is the caller's (`Handle`); this module knows HTTP, not MCP.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import queue
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Deque, List, Optional, Set, Tuple

from boost_cli.core.http_wire import (
    CONTINUE,
    Head,
    WireError,
    body_length,
    encode_response,
    head_end,
    parse_head,
    skip_empty_lines,
)

log = logging.getLogger("boost.mcp.http")

_READ_CHUNK = 65536
_TICK = 0.25  # how often deadlines are checked (seconds)
_LINGER = 1.0  # how long a refused connection is read and dropped before it is closed


@dataclass(frozen=True)
class Request:
    head: Head
    body: bytes
    client: str  # the peer's address, for the access log


@dataclass(frozen=True)
class Response:
    status: int
    fields: Tuple[Tuple[str, str], ...] = ()
    body: bytes = b""
    close: bool = False


#: A whole request → its response (in a worker thread; exceptions become ``500``).
Handle = Callable[[Request], Response]
#: ``refuse(status, message, client)`` → the response to a request that could not be read
#: (built and logged by the caller, who knows the body format).
Refuse = Callable[[int, str, str], Response]


class _Conn:
    __slots__ = (
        "sock",
        "client",
        "buf",
        "head",
        "length",
        "started",
        "idle_since",
        "closing",
        "out",
        "write_by",
        "close_after",
        "linger",
    )

    def __init__(self, sock: socket.socket, client: str) -> None:
        self.sock = sock
        self.client = client
        self.buf = bytearray()  # read, not yet parsed
        self.head: Optional[Head] = None
        self.length = 0
        self.started: Optional[float] = None  # the first byte of the request being read
        self.idle_since = time.monotonic()
        self.closing: Optional[float] = None  # half-closed after an error: closed by then
        self.out = bytearray()  # an answer's bytes the client has not taken yet
        self.write_by = 0.0
        self.close_after = False  # close once ``out`` is sent
        self.linger = False  # ... in stages (an error: the client may still be sending)

    def next_request(self) -> None:
        self.head, self.length, self.started = None, 0, None
        self.idle_since = time.monotonic()


class ConnServer:
    """Listen on ``address`` and serve with ``handle`` until `shutdown`."""

    def __init__(
        self,
        address: Tuple[str, int],
        handle: Handle,
        refuse: Refuse,
        *,
        workers: int = 8,
        max_connections: int = 512,
        max_body: int = 1 << 20,
        max_buffered: int = 64 << 20,
        read_seconds: float = 10.0,
        idle_seconds: Optional[float] = None,
        drain_seconds: float = 30.0,
    ) -> None:
        self._handle = handle
        self._refuse = refuse
        self.max_connections = max_connections
        self.max_body = max_body
        self.max_buffered = max_buffered
        self._buffered = 0  # the declared bodies of the requests being read (bytes)
        self.read_seconds = read_seconds
        self.idle_seconds = read_seconds if idle_seconds is None else idle_seconds
        self.drain_seconds = drain_seconds
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind(address)
            self._listener.listen(128)
        except OSError:
            self._listener.close()
            raise
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel = selectors.DefaultSelector()
        self._owned: Set[_Conn] = set()  # connections the reader holds (not in a worker)
        self._lock = threading.Lock()
        self._returned: Deque[_Conn] = collections.deque()
        self._open = 0  # connections open, in the reader or in a worker
        self._inflight = 0  # requests handed to workers and not yet answered
        self._stopping = threading.Event()
        self._serving = False
        self._reader_done = threading.Event()
        self._jobs: queue.Queue[Optional[Tuple[_Conn, Request]]] = queue.Queue()
        self._workers = [
            threading.Thread(target=self._work, name="boost-mcp-http", daemon=True)
            for _ in range(max(1, workers))
        ]
        for t in self._workers:
            t.start()

    # ------------------------------------------------------------------ the reader

    def serve_forever(self) -> None:
        """Accept, read, dispatch and write until `shutdown`; then stop reading, finish the
        answers (at most ``drain_seconds``) and close every connection."""
        self._serving = True
        self._sel.register(self._listener, selectors.EVENT_READ, "listen")
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            while not self._stopping.is_set():
                self._turn()
            self._sel.unregister(self._listener)
            self._listener.close()
            for conn in list(self._owned):
                if not conn.out:
                    self._drop(conn)  # idle, or half a request: nothing more is read
            end = time.monotonic() + self.drain_seconds
            while time.monotonic() < end:
                with self._lock:
                    busy = self._inflight or self._returned
                if not busy and not self._owned:
                    break
                self._turn()
        finally:
            self._sel.close()
            self._listener.close()
            with self._lock:
                self._reader_done.set()
                leftover = list(self._owned) + list(self._returned)
                self._returned.clear()
            for conn in leftover:
                self._close(conn)

    def _turn(self) -> None:
        for key, mask in self._sel.select(timeout=_TICK):
            if key.data == "listen":
                self._accept()
            elif key.data == "wake":
                self._take_returned()
            elif mask & selectors.EVENT_WRITE:
                self._write(key.data)
            else:
                self._read(key.data)
        self._expire(time.monotonic())

    def _accept(self) -> None:
        while True:
            try:
                sock, addr = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors, a connection reset before accept
                log.warning("accept failed", exc_info=True)
                return
            client = str(addr[0]) if isinstance(addr, tuple) and addr else "-"
            with self._lock:
                full = self._open >= self.max_connections
                if not full:
                    self._open += 1
            if full:
                answer = self._refuse(503, "server busy; retry", client)
                _send_now(sock, answer, close=True, extra=(("Retry-After", "1"),))
                sock.close()
                continue
            sock.setblocking(False)
            with contextlib.suppress(OSError):  # not TCP: nothing to turn off
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(sock, client)
            self._owned.add(conn)
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(_READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not data:
            self._drop(conn)  # the client closed: nothing to answer
            return
        if conn.closing is not None:
            return  # what a refused client still sends is read and dropped
        conn.buf += data
        self._advance(conn)

    def _advance(self, conn: _Conn) -> None:
        """Parse what ``conn`` has buffered; dispatch a whole request to the workers."""
        if conn.head is None:
            del conn.buf[: skip_empty_lines(conn.buf)]
            if not conn.buf:
                return
            if conn.started is None:
                conn.started = time.monotonic()
            try:
                end = head_end(conn.buf)
                if end < 0:
                    return
                head = parse_head(conn.buf[:end])
                length = body_length(head)
            except WireError as exc:
                self._fail(conn, exc.status, exc.message)
                return
            del conn.buf[:end]
            if length > self.max_body:
                self._fail(conn, 413, f"payload too large: at most {self.max_body} bytes")
                return
            if self._buffered + length > self.max_buffered:
                self._fail(conn, 503, "server busy; retry")
                return
            self._buffered += length
            conn.head, conn.length = head, length
            if head.expects_continue and len(conn.buf) < length:
                with contextlib.suppress(OSError):  # the client sends its body anyway
                    conn.sock.send(CONTINUE)
        if len(conn.buf) < conn.length:
            return
        body = bytes(conn.buf[: conn.length])
        del conn.buf[: conn.length]
        self._buffered -= conn.length
        assert conn.head is not None
        request = Request(conn.head, body, conn.client)
        self._sel.unregister(conn.sock)
        self._owned.discard(conn)
        with self._lock:
            self._inflight += 1
        self._jobs.put((conn, request))

    def _write(self, conn: _Conn) -> None:
        """Send what ``conn``'s client has not taken of its answer."""
        try:
            sent = conn.sock.send(conn.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        del conn.out[:sent]
        if not conn.out:
            self._written(conn)

    def _written(self, conn: _Conn) -> None:
        """An answer is out: close, close in stages, or read the next request."""
        if conn.close_after:
            if not conn.linger:
                self._drop(conn)
                return
            try:
                conn.sock.shutdown(socket.SHUT_WR)
            except OSError:
                self._drop(conn)
                return
            conn.closing = time.monotonic() + _LINGER
        self._sel.modify(conn.sock, selectors.EVENT_READ, conn)
        if conn.closing is None and conn.buf:
            conn.started = time.monotonic()
            self._advance(conn)  # a pipelined request was already read

    def _expire(self, now: float) -> None:
        for conn in list(self._owned):
            if conn.out:
                if now > conn.write_by:
                    self._drop(conn)  # a client that does not take its answer
            elif conn.closing is not None:
                if now > conn.closing:
                    self._drop(conn)
            elif conn.started is not None and now - conn.started > self.read_seconds:
                self._fail(
                    conn,
                    408,
                    f"request timeout: a request must arrive whole within {self.read_seconds:g} s",
                )
            elif conn.started is None and now - conn.idle_since > self.idle_seconds:
                self._drop(conn)

    def _fail(self, conn: _Conn, status: int, message: str) -> None:
        """Answer a request that cannot be read, then close its connection in stages
        (RFC 9112 §9.6): the write side first, then what the client still sends is read
        and dropped until it closes, or a second. Closing at once, with its bytes unread,
        would reset the connection, and a reset can destroy the answer before it arrives."""
        response = self._refuse(status, message, conn.client)
        busy = (("Retry-After", "1"),) if status == 503 else ()
        fields = response.fields + busy
        data = encode_response(response.status, fields, response.body, close=True)
        if conn.head is not None:
            self._buffered -= conn.length
        conn.head, conn.length, conn.buf = None, 0, bytearray()
        conn.out, conn.close_after, conn.linger = bytearray(data), True, True
        conn.write_by = time.monotonic() + self.read_seconds
        self._sel.modify(conn.sock, selectors.EVENT_WRITE, conn)
        self._write(conn)

    def _drop(self, conn: _Conn) -> None:
        if conn.head is not None:
            self._buffered -= conn.length
            conn.head = None
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(conn.sock)
        self._owned.discard(conn)
        self._close(conn)

    def _take_returned(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        with self._lock:
            back = list(self._returned)
            self._returned.clear()
        stopping = self._stopping.is_set()
        for conn in back:
            if stopping and not conn.out:
                self._close(conn)
                continue
            conn.close_after = conn.close_after or stopping
            self._owned.add(conn)
            if conn.out:
                self._sel.register(conn.sock, selectors.EVENT_WRITE, conn)
                self._write(conn)
            else:
                self._sel.register(conn.sock, selectors.EVENT_READ, conn)
                if conn.buf:
                    conn.started = time.monotonic()
                    self._advance(conn)  # a pipelined request was already read

    # ------------------------------------------------------------------ the workers

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            conn, request = job
            try:
                self._answer(conn, request)
            finally:
                with self._lock:
                    self._inflight -= 1
                if self._stopping.is_set():
                    self._wake()  # the reader waits for the last answer to exit

    def _answer(self, conn: _Conn, request: Request) -> None:
        try:
            response = self._handle(request)
        except Exception:  # noqa: BLE001 - one broken request must not stop the server
            log.exception("internal error while answering a request")
            response = self._refuse(500, "internal error; see the server log", conn.client)
        close = response.close or not request.head.keep_alive or self._stopping.is_set()
        body = b"" if request.head.method == "HEAD" else response.body  # never a body
        data = encode_response(response.status, response.fields, body, close=close)
        try:
            sent = conn.sock.send(data)  # one write: status line, headers and body together
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self._close(conn)
            return
        if sent == len(data) and close:
            self._close(conn)
            return
        conn.next_request()
        if sent < len(data):  # the reader sends the rest as the client takes it
            conn.out = bytearray(data[sent:])
            conn.write_by = time.monotonic() + self.read_seconds
            conn.close_after = close
        with self._lock:
            back = not self._reader_done.is_set()
            if back:
                self._returned.append(conn)
        if back:
            self._wake()
        else:
            self._close(conn)

    # ------------------------------------------------------------------ shared

    def _wake(self) -> None:
        # Full: the reader has wake-ups pending already; closed: it is gone.
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _close(self, conn: _Conn) -> None:
        try:
            conn.sock.close()
        finally:
            with self._lock:
                self._open -= 1

    def shutdown(self) -> None:
        """Stop accepting and reading (safe from a signal handler and any thread)."""
        self._stopping.set()
        self._wake()

    def stop(self, grace_seconds: float) -> None:
        """`shutdown`, and wait (at most ``grace_seconds``) for `serve_forever` to finish
        the answers being written and return."""
        self.shutdown()
        if self._serving:
            self._reader_done.wait(timeout=grace_seconds)
        else:
            self._listener.close()
        for _ in self._workers:
            self._jobs.put(None)
        for s in (self._wake_r, self._wake_w):
            s.close()

    def open_connections(self) -> int:
        with self._lock:
            return self._open


def _send_now(
    sock: socket.socket,
    response: Response,
    *,
    close: bool,
    extra: Tuple[Tuple[str, str], ...] = (),
) -> None:
    """Send a short answer from the reader without waiting: what does not fit in the
    socket's buffer at once is dropped (the connection is closed next anyway)."""
    data = encode_response(response.status, response.fields + extra, response.body, close=close)
    try:
        sock.setblocking(False)
        sock.send(data)
    except OSError:
        pass


__all__: List[str] = ["ConnServer", "Handle", "Refuse", "Request", "Response"]
