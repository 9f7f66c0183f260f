"""MCP over Streamable HTTP: one POST endpoint (``/mcp``), stateless, stdlib only.

What the transport does, and the rules it keeps (docs/mcp.md, "A team server"):

- **One request, one POST, one JSON answer.** Every JSON-RPC request is answered with
  ``application/json`` (the spec lets a server choose JSON over an SSE stream per
  request; boost has no request-scoped notifications to stream). A notification or a
  stray response gets ``202 Accepted`` and no body. Batches are refused (removed from
  Streamable HTTP since 2025-06-18). GET and DELETE get ``405`` (no standalone stream, no
  sessions); no ``Mcp-Session-Id`` is minted, so any replica can answer any request.
- **Both eras from the same handlers.** A 2026-07-28 request carries its version in
  ``params._meta``; its ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers
  must match the body (``400`` with ``-32020 HeaderMismatch`` otherwise), an unknown
  method is ``404``, an unsupported version ``400`` with the core's ``-32022``. A
  2025-era client does ``initialize`` and then sends ``MCP-Protocol-Version`` on every
  request; with no session, that header *is* the request's agreed version (absent: the
  spec's ``2025-03-26``; unsupported: ``400``).
- **Safe by default.** Binds 127.0.0.1 unless told otherwise; the ``Host`` header must name
  an allowed host (loopback names when bound to loopback) and an ``Origin``, when sent,
  an allowed origin, else ``403`` (DNS-rebinding protection); a non-loopback bind needs a
  bearer token (`HttpSettings.token`; compared in constant time; ``401`` with
  ``WWW-Authenticate`` otherwise). Bodies and headers are capped (``413``/``431``), a
  client has `HttpSettings.read_seconds` to send its request (``408``), a request has
  `HttpSettings.deadline_seconds` to be answered (a JSON-RPC error after that). Clients
  never see a traceback; the access log (stderr) has no header values and no bodies.
- **Bounded and graceful.** A fixed pool of worker threads serves connections; past its
  queue a connection gets ``503`` at once. The handlers run one at a time (the index
  readers are not shared across threads); `HttpServer.stop` stops accepting, lets
  in-flight requests finish, then returns.

The module is I/O at the edge of the protocol layer: it imports base modules only, and
takes the request handler as a function (`Respond`), so it never knows about tools.
"""

from __future__ import annotations

import base64
import concurrent.futures
import hmac
import http.server
import ipaddress
import json
import logging
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core.errors import UsageError

log = logging.getLogger("boost.mcp.http")

ENDPOINT = "/mcp"
HEALTH = "/healthz"
MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
#: What a 2025-era request without ``MCP-Protocol-Version`` is taken to speak (the spec).
DEFAULT_LEGACY_VERSION = "2025-03-26"
HEADER_MISMATCH = -32020
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
MAX_HEADER_LINE = 8192  # http.server's own cap per line (431 past it)

#: ``respond(message, legacy_version)`` → the JSON-RPC response, or None when none is
#: due. ``legacy_version`` is the 2025-era version a request without a 2026-07-28
#: envelope speaks (from the header); the handler must not keep per-connection state.
Respond = Callable[[Any, Optional[str]], Optional[Dict[str, Any]]]


@dataclass(frozen=True)
class HttpSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    token: Optional[str] = None
    allowed_hosts: Tuple[str, ...] = ()  # extra Host names (e.g. the proxy's public name)
    allowed_origins: Tuple[str, ...] = ()  # extra Origins (scheme://host[:port])
    legacy_versions: Tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")
    max_body_bytes: int = 1 << 20
    read_seconds: float = 10.0
    deadline_seconds: float = 30.0
    workers: int = 32  # connection threads (an idle keep-alive connection holds one)
    queue: int = 128
    access_log: bool = True
    log_sink: Optional[Callable[[str], None]] = field(default=None, compare=False)


def is_loopback(host: str) -> bool:
    name = host.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_listen(value: str) -> Tuple[str, int]:
    """``[HOST:]PORT`` (IPv6 as ``[::1]:PORT``) → (host, port); UsageError when malformed."""
    host, _, port = value.rpartition(":")
    host = host or "127.0.0.1"
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"invalid --http address {value!r}", "give PORT or HOST:PORT, e.g. 8765")
    return host, int(port)


def check_settings(s: HttpSettings) -> None:
    """Refuse what would be unsafe: a non-loopback bind without a token, a weak token."""
    if not is_loopback(s.host) and not s.token:
        raise UsageError(
            f"refusing to serve MCP on {s.host} without a token",
            "set BOOST_MCP_TOKEN to a long random secret (clients send it as "
            "'Authorization: Bearer …'), or bind 127.0.0.1",
        )
    if s.token is not None and len(s.token) < 16:
        raise UsageError(
            "BOOST_MCP_TOKEN is shorter than 16 characters",
            "use a long random secret, e.g. from 'python3 -c \"import secrets; "
            "print(secrets.token_urlsafe(32))\"'",
        )


def decode_header_value(value: str) -> Optional[str]:
    """A mirrored header's value, Base64 sentinel (``=?base64?…?=``) decoded; None when
    the sentinel's payload is not Base64 of UTF-8."""
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11:
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    return value


def _rpc_error(rid: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    err: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


@dataclass
class Reply:
    status: int
    body: Optional[Dict[str, Any]] = None
    headers: Tuple[Tuple[str, str], ...] = ()
    note: str = ""  # for the access log: method and tool/resource name, escaped


def _clip(value: Any, limit: int = 80) -> str:
    text = str(value)
    text = "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def route(message: Any, headers: Dict[str, str], respond: Respond, settings: HttpSettings) -> Reply:
    """The reply to one parsed POST body: the pure part of the transport (tested as is)."""
    if isinstance(message, list):
        return Reply(
            400,
            _rpc_error(
                None,
                INVALID_REQUEST,
                "invalid request: JSON-RPC batches are not "
                "supported over Streamable HTTP; send one message per POST",
            ),
        )
    if not isinstance(message, dict):
        return Reply(
            400, _rpc_error(None, INVALID_REQUEST, "invalid request: expected a JSON object")
        )
    method = message.get("method")
    params = message.get("params")
    note = _clip(method) if isinstance(method, str) else "-"
    if isinstance(method, str) and method in NAMED_METHODS and isinstance(params, dict):
        note += " " + _clip(params.get(NAMED_METHODS[method]))
    rid = message.get("id")
    meta = params.get("_meta") if isinstance(params, dict) else None
    modern = isinstance(meta, dict) and MODERN_VERSION_KEY in meta
    header_version = headers.get("mcp-protocol-version")
    if modern and isinstance(meta, dict):
        problem = _mismatch(message, meta, headers)
        if problem:
            return Reply(
                400, _rpc_error(rid, HEADER_MISMATCH, f"header mismatch: {problem}"), note=note
            )
        legacy = None
    elif method == "initialize":
        legacy = None  # the handshake names its own version in the body
    else:
        legacy = DEFAULT_LEGACY_VERSION if header_version is None else header_version
        if legacy not in settings.legacy_versions:
            supported = ", ".join(settings.legacy_versions)
            return Reply(
                400,
                _rpc_error(
                    rid if "id" in message else None,
                    INVALID_REQUEST,
                    f"unsupported MCP-Protocol-Version {_clip(legacy, 40)!r}; this server "
                    f"speaks {supported} after initialize, and 2026-07-28 per request",
                ),
                note=note,
            )
    response = respond(message, legacy)
    if response is None:
        return Reply(202, note=note)
    err = response.get("error")
    if isinstance(err, dict) and modern:
        code = err.get("code")
        if code == METHOD_NOT_FOUND:
            return Reply(404, response, note=note)
        if code in (UNSUPPORTED_PROTOCOL_VERSION, HEADER_MISMATCH, INVALID_REQUEST):
            return Reply(400, response, note=note)
    if (
        isinstance(err, dict)
        and err.get("code") in (PARSE_ERROR, INVALID_REQUEST)
        and response.get("id") is None
    ):
        return Reply(400, response, note=note)
    return Reply(200, response, note=note)


def _mismatch(message: Dict[str, Any], meta: Dict[str, Any], headers: Dict[str, str]) -> str:
    """Why a 2026-07-28 request's headers disagree with its body ("" when they agree)."""
    version = headers.get("mcp-protocol-version")
    if version is None:
        return "the MCP-Protocol-Version header is missing"
    if version != meta.get(MODERN_VERSION_KEY):
        return (
            f"MCP-Protocol-Version {_clip(version, 40)!r} does not match the body's "
            f"{_clip(meta.get(MODERN_VERSION_KEY), 40)!r}"
        )
    method = message.get("method")
    got = headers.get("mcp-method")
    if got is None:
        return "the Mcp-Method header is missing"
    if got != method:
        return f"Mcp-Method {_clip(got)!r} does not match the body's {_clip(method)!r}"
    field_name = NAMED_METHODS.get(method) if isinstance(method, str) else None
    if field_name:
        params = message.get("params")
        want = params.get(field_name) if isinstance(params, dict) else None
        raw = headers.get("mcp-name")
        if raw is None:
            return "the Mcp-Name header is missing"
        name = decode_header_value(raw)
        if name is None:
            return "the Mcp-Name header is not valid Base64 of UTF-8"
        if name != want:
            return f"Mcp-Name {_clip(name)!r} does not match the body's {_clip(want)!r}"
    return ""


# --------------------------------------------------------------------------- the server


class _Pool(socketserver.TCPServer):
    """A TCP server whose connections are served by a fixed pool of threads."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: Tuple[str, int], handler: Any, owner: HttpServer) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.owner = owner
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        owner = self.owner
        with owner._lock:
            busy = owner._pending >= owner.settings.workers + owner.settings.queue
            if not busy:
                owner._pending += 1
        if busy:
            _refuse_busy(request)
            self.shutdown_request(request)
            return
        owner._executor.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - one broken connection must not stop the server
            log.exception("error while serving a connection")
        finally:
            self.shutdown_request(request)
            with self.owner._lock:
                self.owner._pending -= 1
                self.owner._idle.notify_all()


def _refuse_busy(sock: socket.socket) -> None:
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"server busy; retry"}}'
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    try:
        sock.settimeout(1.0)
        sock.sendall(head.encode() + body)
    except OSError:
        pass


class HttpServer:
    """``boost mcp --http``: `serve_forever` until `stop` (SIGTERM/SIGINT in the command)."""

    def __init__(self, respond: Respond, settings: HttpSettings) -> None:
        check_settings(settings)
        self.settings = settings
        self._respond = respond
        self._handle_lock = threading.Lock()  # the handlers run one at a time
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.workers, thread_name_prefix="boost-mcp-http"
        )
        self._httpd = _Pool((settings.host, settings.port), _handler_class(self), self)
        self.port = self._httpd.server_address[1]

    # The allowed Host and Origin values, from the bound address and the settings.
    def allowed_hosts(self) -> Tuple[str, ...]:
        if not is_loopback(self.settings.host) and not self.settings.allowed_hosts:
            return ()  # any Host: the token guards a server bound beyond loopback
        names = list(LOOPBACK_NAMES) if is_loopback(self.settings.host) else []
        names += [h.lower() for h in self.settings.allowed_hosts]
        out = []
        for n in names:
            out += [n, f"{n}:{self.port}"]
        return tuple(out)

    def allowed_origins(self) -> Tuple[str, ...]:
        out = []
        if is_loopback(self.settings.host):
            for n in LOOPBACK_NAMES:
                out += [f"http://{n}:{self.port}", f"https://{n}:{self.port}", f"http://{n}"]
        for h in self.settings.allowed_hosts:
            out += [f"https://{h.lower()}", f"http://{h.lower()}"]
        out += [o.rstrip("/").lower() for o in self.settings.allowed_origins]
        return tuple(out)

    def respond_within_deadline(
        self, message: Any, legacy: Optional[str]
    ) -> Optional[Dict[str, Any]]:
        """The handler's answer, or a JSON-RPC error once the deadline passes. The handler
        runs in a daemon thread: one that hangs (a stuck subprocess) is left behind and
        never holds up the process's exit."""
        box: List[Any] = []

        def run() -> None:
            try:
                with self._handle_lock:
                    box.append(self._respond(message, legacy))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box.append(exc)

        worker = threading.Thread(target=run, name="boost-mcp-call", daemon=True)
        worker.start()
        worker.join(timeout=self.settings.deadline_seconds)
        if box:
            if isinstance(box[0], BaseException):
                raise box[0]
            answer: Optional[Dict[str, Any]] = box[0]
            return answer
        rid = message.get("id") if isinstance(message, dict) else None
        return _rpc_error(
            rid,
            INTERNAL_ERROR,
            f"the request took longer than {self.settings.deadline_seconds:g} s; try again "
            "or narrow it",
        )

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.2)

    def stop(self, grace_seconds: float = 30.0) -> None:
        """Stop accepting, wait (at most ``grace_seconds``) for in-flight requests, close."""
        self._httpd.shutdown()
        self._httpd.server_close()
        end = time.monotonic() + grace_seconds
        with self._lock:
            while self._pending and time.monotonic() < end:
                self._idle.wait(timeout=max(0.0, end - time.monotonic()))
        self._executor.shutdown(wait=False)

    def log(self, line: str) -> None:
        sink = self.settings.log_sink
        if sink is not None:
            sink(line)
        else:
            log.info("%s", line)


def _handler_class(server: HttpServer) -> Any:
    settings = server.settings

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "boost-mcp"
        sys_version = ""
        timeout = settings.read_seconds  # every socket read: a slow client gets 408/closed

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # http.server's own log has the raw request line; ours is `_access`

        def log_error(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _access(self, status: int, note: str, started: float) -> None:
            if settings.access_log:
                ms = (time.perf_counter() - started) * 1000
                who = self.client_address[0] if self.client_address else "-"
                server.log(
                    f"{who} {_clip(self.command, 8)} {_clip(self.path, 60)} {status} "
                    f"{ms:.1f}ms {note}".rstrip()
                )

        def _send(self, reply: Reply, started: float) -> None:
            body = b""
            if reply.body is not None:
                body = json.dumps(reply.body, ensure_ascii=False, separators=(",", ":")).encode()
            self.send_response(reply.status)
            if reply.body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for k, v in reply.headers:
                self.send_header(k, v)
            self.end_headers()
            if body:
                self.wfile.write(body)
            self._access(reply.status, reply.note, started)

        def _plain(
            self, status: int, message: str, started: float, *extra: Tuple[str, str]
        ) -> None:
            code = INVALID_REQUEST if status < 500 else INTERNAL_ERROR
            self._send(Reply(status, _rpc_error(None, code, message), tuple(extra)), started)

        def _guard(self, started: float) -> bool:
            """Host, Origin and token checks; False when a refusal was sent."""
            hosts = server.allowed_hosts()
            host = (self.headers.get("Host") or "").strip().lower()
            if hosts and host not in hosts:
                self._plain(403, "forbidden: Host not allowed", started)
                return False
            origin = self.headers.get("Origin")
            if origin is not None and origin.rstrip("/").lower() not in server.allowed_origins():
                self._plain(403, "forbidden: Origin not allowed", started)
                return False
            if settings.token:
                auth = self.headers.get("Authorization") or ""
                scheme, _, given = auth.partition(" ")
                ok = scheme.lower() == "bearer" and hmac.compare_digest(
                    given.strip().encode(), settings.token.encode()
                )
                if not ok:
                    self._plain(
                        401,
                        "unauthorized: send 'Authorization: Bearer <token>'",
                        started,
                        ("WWW-Authenticate", 'Bearer realm="boost"'),
                    )
                    return False
            return True

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            started = time.perf_counter()
            if self.path == HEALTH:
                self._send(Reply(200, {"status": "ok"}), started)
            elif self.path.split("?", 1)[0] == ENDPOINT:
                self._plain(
                    405,
                    "method not allowed: POST JSON-RPC messages to this endpoint",
                    started,
                    ("Allow", "POST"),
                )
            else:
                self._plain(404, "not found: the MCP endpoint is /mcp", started)

        def do_DELETE(self) -> None:  # noqa: N802
            started = time.perf_counter()
            self._plain(
                405, "method not allowed: there are no sessions to end", started, ("Allow", "POST")
            )

        def do_PUT(self) -> None:  # noqa: N802
            self.do_DELETE()

        def do_POST(self) -> None:  # noqa: N802
            started = time.perf_counter()
            if self.path.split("?", 1)[0] != ENDPOINT:
                self._plain(404, "not found: the MCP endpoint is /mcp", started)
                return
            if not self._guard(started):
                return
            if self.headers.get("Transfer-Encoding"):
                self._plain(
                    411, "length required: send Content-Length, not chunked bodies", started
                )
                return
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                self._plain(411, "length required: send Content-Length", started)
                return
            if length < 0 or length > settings.max_body_bytes:
                self.close_connection = True
                self._plain(
                    413, f"payload too large: at most {settings.max_body_bytes} bytes", started
                )
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                self._plain(415, "unsupported media type: send application/json", started)
                return
            accept = (self.headers.get("Accept") or "*/*").lower()
            if not any(t in accept for t in ("application/json", "*/*", "application/*")):
                self._plain(406, "not acceptable: this server answers application/json", started)
                return
            try:
                raw = self.rfile.read(length)
            except (socket.timeout, OSError):
                self.close_connection = True
                self._plain(408, "request timeout: the body did not arrive in time", started)
                return
            if len(raw) < length:
                self.close_connection = True
                self._plain(400, "bad request: the body is shorter than Content-Length", started)
                return
            try:
                message = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                self._send(
                    Reply(400, _rpc_error(None, PARSE_ERROR, "parse error: the body is not JSON")),
                    started,
                )
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = route(message, headers, server.respond_within_deadline, settings)
            except Exception:  # noqa: BLE001 - the client never sees a traceback
                log.exception("internal error while routing a request")
                reply = Reply(
                    500, _rpc_error(None, INTERNAL_ERROR, "internal error; see the server log")
                )
            self._send(reply, started)

    return Handler


def serve(
    respond: Respond,
    settings: HttpSettings,
    *,
    ready: Optional[Callable[[int], None]] = None,
    stop_on: Sequence[int] = (),
) -> None:
    """Run an `HttpServer` until one of the signals ``stop_on`` arrives (main thread)."""
    import signal

    server = HttpServer(respond, settings)
    stopping = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=server._httpd.shutdown, daemon=True).start()

    previous = {s: signal.signal(s, on_signal) for s in stop_on}
    try:
        if ready is not None:
            ready(server.port)
        server.serve_forever()
    finally:
        try:
            server.stop(grace_seconds=settings.deadline_seconds)
        finally:
            # Only now: a second SIGTERM while requests finish must not kill them.
            for s, h in previous.items():
                signal.signal(s, h)
