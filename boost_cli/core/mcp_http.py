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
  ``WWW-Authenticate`` otherwise). Bodies and header lines are capped (``413``/``431``),
  a request has `HttpSettings.read_seconds` from its first byte to arrive whole (``408``),
  and `HttpSettings.deadline_seconds` to be answered (a JSON-RPC error after that).
  Clients never see a traceback; the access log (stderr) has no header values and no
  bodies.
- **Bounded and graceful.** Connections are `http_serve`'s: one reader thread reads every
  request whole before a worker sees it (a slow client holds no worker), at most
  `HttpSettings.max_connections` are open (``503`` past that). The handlers run one at a
  time (the index readers are not shared across threads); `HttpServer.stop` stops
  accepting and reading, kept-alive connections included, lets the requests being
  answered finish (with ``Connection: close``), then returns.

The module is I/O at the edge of the protocol layer: it imports base modules only, and
takes the request handler as a function (`Respond`), so it never knows about tools. Any
other route goes, after the same Host/Origin checks and caps, to an optional `Pages`
function (the team page, `webapp`): the transport never knows about HTML either.
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core.errors import UsageError
from boost_cli.core.http_serve import ConnServer, Request, Response
from boost_cli.core.http_wire import Head

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

#: ``respond(message, legacy_version)`` → the JSON-RPC response, or None when none is
#: due. ``legacy_version`` is the 2025-era version a request without a 2026-07-28
#: envelope speaks (from the header); the handler must not keep per-connection state.
Respond = Callable[[Any, Optional[str]], Optional[Dict[str, Any]]]

#: ``pages(head, body)`` → the response to any other route (the team page, `webapp`),
#: called after the Host and Origin checks, one at a time with the handlers. The
#: transport knows nothing of what it answers.
Pages = Callable[[Head, bytes], Response]


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
    workers: int = 8  # threads that answer whole requests (the handlers run one at a time)
    max_connections: int = 512  # open connections, idle and reading included (503 past it)
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


def _json_reply(reply: Reply) -> Response:
    body = b""
    fields: List[Tuple[str, str]] = [("Cache-Control", "no-store")]
    if reply.body is not None:
        body = json.dumps(reply.body, ensure_ascii=False, separators=(",", ":")).encode()
        fields.insert(0, ("Content-Type", "application/json"))
    return Response(reply.status, tuple(fields) + reply.headers, body)


def _plain(status: int, message: str, *extra: Tuple[str, str]) -> Reply:
    code = INVALID_REQUEST if status < 500 else INTERNAL_ERROR
    return Reply(status, _rpc_error(None, code, message), tuple(extra))


class HttpServer:
    """``boost mcp --http``: `serve_forever` until `shutdown`, then `stop` (the command does
    both on SIGTERM/SIGINT). Connections are `http_serve`'s; this class answers requests."""

    def __init__(
        self, respond: Respond, settings: HttpSettings, pages: Optional[Pages] = None
    ) -> None:
        check_settings(settings)
        self.settings = settings
        self._respond = respond
        self._pages = pages
        self._handle_lock = threading.Lock()  # the handlers run one at a time
        self._conns = ConnServer(
            (settings.host, settings.port),
            self.handle,
            self.refuse,
            workers=settings.workers,
            max_connections=settings.max_connections,
            max_body=settings.max_body_bytes,
            read_seconds=settings.read_seconds,
            drain_seconds=settings.deadline_seconds,
        )
        self.port = self._conns.port

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
        self._conns.serve_forever()

    def shutdown(self) -> None:
        """Stop accepting and reading requests, open connections included (any thread, or a
        signal handler); `serve_forever` returns."""
        self._conns.shutdown()

    def stop(self, grace_seconds: float = 30.0) -> None:
        """`shutdown`, wait (at most ``grace_seconds``) for the requests being answered,
        which go out with ``Connection: close``."""
        self._conns.stop(grace_seconds)

    def log(self, line: str) -> None:
        sink = self.settings.log_sink
        if sink is not None:
            sink(line)
        else:
            log.info("%s", line)

    def _access(
        self, client: str, method: str, target: str, status: int, ms: float, note: str
    ) -> None:
        if self.settings.access_log:
            self.log(
                f"{client} {_clip(method, 8)} {_clip(target, 60)} {status} {ms:.1f}ms {note}".rstrip()
            )

    def refuse(self, status: int, message: str, client: str) -> Response:
        """The answer to a request that could not be read whole (`http_serve.Refuse`)."""
        self._access(client, "-", "-", status, 0.0, "")
        return _json_reply(_plain(status, message))

    def handle(self, request: Request) -> Response:
        """One whole request → its response (`http_serve.Handle`, in a worker thread)."""
        started = time.perf_counter()
        head = request.head
        path = head.target.split("?", 1)[0]
        if self._pages is not None and path not in (ENDPOINT, HEALTH):
            return self._page(request, path, started)
        try:
            reply = self.answer(head, request.body)
        except Exception:  # noqa: BLE001 - the client never sees a traceback
            log.exception("internal error while routing a request")
            reply = _plain(500, "internal error; see the server log")
        ms = (time.perf_counter() - started) * 1000
        self._access(request.client, head.method, head.target, reply.status, ms, reply.note)
        return _json_reply(reply)

    def _page(self, request: Request, path: str, started: float) -> Response:
        """A request for the pages: Host and Origin as for ``/mcp`` (the token is the
        pages' own business: a person signs in), then `Pages` (the access log has the
        path, never the query: it may hold what a person searched for)."""
        head = request.head
        refused = self._guard(head, bearer=False)
        if refused is not None:
            response = _json_reply(refused)
        else:
            try:
                with self._handle_lock:
                    assert self._pages is not None
                    response = self._pages(head, request.body)
            except Exception:  # noqa: BLE001 - the client never sees a traceback
                log.exception("internal error while answering a page")
                response = _json_reply(_plain(500, "internal error; see the server log"))
        ms = (time.perf_counter() - started) * 1000
        self._access(request.client, head.method, path, response.status, ms, "page")
        return response

    def answer(self, head: Head, body: bytes) -> Reply:
        path = head.target.split("?", 1)[0]
        if head.method == "GET":
            if head.target == HEALTH:
                return Reply(200, {"status": "ok"})
            if path == ENDPOINT:
                return _plain(
                    405,
                    "method not allowed: POST JSON-RPC messages to this endpoint",
                    ("Allow", "POST"),
                )
            return _plain(404, "not found: the MCP endpoint is /mcp")
        if head.method in ("DELETE", "PUT"):
            return _plain(
                405, "method not allowed: there are no sessions to end", ("Allow", "POST")
            )
        if head.method != "POST":
            return _plain(501, "not implemented: POST JSON-RPC messages to /mcp", ("Allow", "POST"))
        if path != ENDPOINT:
            return _plain(404, "not found: the MCP endpoint is /mcp")
        refused = self._guard(head)
        if refused is not None:
            return refused
        if head.get("content-length") is None:
            return _plain(411, "length required: send Content-Length")
        ctype = (head.get("content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return _plain(415, "unsupported media type: send application/json")
        accept = (head.get("accept") or "*/*").lower()
        if not any(t in accept for t in ("application/json", "*/*", "application/*")):
            return _plain(406, "not acceptable: this server answers application/json")
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return Reply(400, _rpc_error(None, PARSE_ERROR, "parse error: the body is not JSON"))
        headers = dict(head.fields)
        return route(message, headers, self.respond_within_deadline, self.settings)

    def _guard(self, head: Head, *, bearer: bool = True) -> Optional[Reply]:
        """Host, Origin and (``bearer``) token checks: the refusal, or None."""
        hosts = self.allowed_hosts()
        host = (head.get("host") or "").strip().lower()
        if hosts and host not in hosts:
            return _plain(403, "forbidden: Host not allowed")
        origin = head.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.allowed_origins():
            return _plain(403, "forbidden: Origin not allowed")
        token = self.settings.token
        if token and bearer:
            scheme, _, given = (head.get("authorization") or "").partition(" ")
            ok = scheme.lower() == "bearer" and hmac.compare_digest(
                given.strip().encode(), token.encode()
            )
            if not ok:
                return _plain(
                    401,
                    "unauthorized: send 'Authorization: Bearer <token>'",
                    ("WWW-Authenticate", 'Bearer realm="boost"'),
                )
        return None


def serve(
    respond: Respond,
    settings: HttpSettings,
    *,
    ready: Optional[Callable[[int], None]] = None,
    stop_on: Sequence[int] = (),
    pages: Optional[Pages] = None,
) -> None:
    """Run an `HttpServer` until one of the signals ``stop_on`` arrives (main thread)."""
    import signal

    server = HttpServer(respond, settings, pages)

    def on_signal(signum: int, _frame: Any) -> None:
        server.shutdown()

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
