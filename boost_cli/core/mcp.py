"""boost's MCP server: the JSON-RPC protocol machinery and a registry of tools.

The layers, each testable on its own:

* `Registry` holds the tools (spec + handler) in registration order; adding a
  tool is one `Registry.register` call (or `@registry.tool(...)`), never an edit
  to the dispatcher.
* `Server.handle` is pure (no I/O): one parsed JSON value (and the `Session` it
  arrived on) in, the response dict out, or ``None`` for a notification. A session
  keeps only the version a handshake agreed; 2026-07-28 requests need none (each
  carries its own, see `core.protocol`), so a stateless transport hands every
  request a fresh `Session`.
* Methods beyond the core (resources, the skills extension) are added with
  `Server.add_method`, and their capabilities with ``capabilities``/``extensions``.
* `Server.handle_line` adds parsing, batches and serialisation: one line in,
  one line out.
* `Server.serve` reads a stream line by line and writes one JSON message per
  line (UTF-8, flushed); `Server.serve_stdio` runs it on the process's stdio.

Protocol decisions (MCP 2024-11-05 … 2025-11-25, and 2026-07-28 in `core.protocol`):

* ``server/discover`` (2026-07-28) answers the versions, capabilities (extensions
  included) and instructions; a request carrying an envelope with a version boost
  does not speak gets -32022 listing the ones it does, so a client can fall back.

* ``initialize`` answers the client's ``protocolVersion`` when supported, else
  the newest supported one (the client then decides whether to go on).
* Requests before ``initialize`` are answered: the spec only says clients
  SHOULD NOT send them, and refusing helps nobody.
* Batches (JSON arrays) are answered as an array only when the session
  negotiated 2025-03-26, the one revision that had them; otherwise, batching
  having been removed in 2025-06-18, the array gets one -32600 error.
* Arguments that break a tool's ``inputSchema`` are a tool execution error
  (``isError: true``) from 2025-11-25 on (SEP-1303: the model sees the message
  and can correct itself) and a -32602 protocol error for older sessions.
* A tool that raises `BoostError` yields ``isError: true`` with ``str(err)``; an
  OSError (a full disk, an unreadable file) the same, as one line with its fix; any
  other exception yields a generic ``isError`` message and its traceback goes to the
  log (stderr), never to stdout.
* The log never blocks the protocol (`mcp_log.log_to_stderr`): a client that never reads
  stderr fills its pipe, and a server that then waited on it would stop answering.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import logging
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import (
    IO,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)
from urllib.parse import unquote, urlparse

from boost_cli import __version__
from boost_cli.core import schema as schemas
from boost_cli.core.errors import BoostError, from_os_error
from boost_cli.core.protocol import (
    HANDSHAKE_VERSIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MODERN_VERSIONS,
    PARSE_ERROR,
    Call,
    JsonRpcError,
    classify,
    shape_result,
)
from boost_cli.core.text import clip, one_line, printable

log = logging.getLogger(__name__)

__all__ = ["JsonRpcError", "Call", "INVALID_PARAMS", "METHOD_NOT_FOUND", "INTERNAL_ERROR"]

#: The handshake revisions, newest first; the first one is what an unknown or missing
#: version gets. 2026-07-28 (`MODERN_VERSIONS`) needs no handshake.
SUPPORTED_PROTOCOL_VERSIONS: Tuple[str, ...] = HANDSHAKE_VERSIONS
#: Tool results may carry ``resource_link`` content from this revision on.
RESOURCE_LINKS_SINCE = "2025-06-18"
#: The revisions whose sessions may send JSON-RPC batches (added 2025-03-26, removed 2025-06-18).
BATCH_PROTOCOL_VERSIONS = frozenset({"2025-03-26"})
#: From this revision on, argument validation failures are tool errors (SEP-1303).
VALIDATION_AS_TOOL_ERROR_SINCE = "2025-11-25"

#: A longer line is answered with a parse error and skipped, not buffered.
MAX_LINE_BYTES = 8 * 1024 * 1024

# MCP 2025-11-25 tool names: 1-128 of ASCII letters, digits, '_', '-' and '.'.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
# Valid inside JSON strings, but some line splitters (str.splitlines) break on them.
_LINE_BREAKERS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class ToolRegistrationError(BoostError, ValueError):
    """A tool cannot be registered: duplicate name, bad name, or unusable schema."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool handler returns: text for the model, optional structured data.

    ``structured`` must be a JSON object; it becomes ``structuredContent`` (and,
    when ``text`` is empty, its JSON is the text). ``is_error`` marks a failure
    the model should see (a handler may also just raise `BoostError`).
    """

    text: str
    structured: Optional[Dict[str, Any]] = None
    is_error: bool = False
    #: ``resource_link`` content items (``uri``, ``name``, ...) after the text, for
    #: clients of 2025-06-18 and later; older ones get the text alone.
    links: Tuple[Mapping[str, Any], ...] = ()


Handler = Callable[[Dict[str, Any]], Union[ToolResult, str]]
H = TypeVar("H", bound=Handler)


@dataclass(frozen=True)
class ToolSpec:
    """A tool as ``tools/list`` shows it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Optional[Mapping[str, Any]] = None
    title: Optional[str] = None
    annotations: Optional[Mapping[str, Any]] = None  # hints: readOnlyHint, openWorldHint...

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": self.name}
        if self.title:
            d["title"] = self.title
        d["description"] = self.description
        d["inputSchema"] = copy.deepcopy(dict(self.input_schema))
        if self.output_schema is not None:
            d["outputSchema"] = copy.deepcopy(dict(self.output_schema))
        if self.annotations:
            d["annotations"] = dict(self.annotations)
        return d


class Registry:
    """Tools by name, in registration order."""

    def __init__(self) -> None:
        self._tools: Dict[str, Tuple[ToolSpec, Handler]] = {}

    def register(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        handler: Handler,
        output_schema: Optional[Mapping[str, Any]] = None,
        title: Optional[str] = None,
        annotations: Optional[Mapping[str, Any]] = None,
    ) -> ToolSpec:
        """Add a tool; raises `ToolRegistrationError` for a duplicate name or a bad schema.

        Schemas are checked here, once, so a mistake fails at startup rather
        than on the first call (see `schema.check_schema` for the subset).
        """
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise ToolRegistrationError(
                f"invalid tool name {name!r}",
                "use 1-128 ASCII letters, digits, '_', '-' or '.'",
            )
        if name in self._tools:
            raise ToolRegistrationError(
                f"a tool named {name!r} is already registered", "give each tool a unique name"
            )
        if not isinstance(description, str) or not description.strip():
            raise ToolRegistrationError(
                f"tool {name!r} has no description", "say what the tool does"
            )
        _check_tool_schema(name, "input_schema", input_schema)
        if output_schema is not None:
            _check_tool_schema(name, "output_schema", output_schema)
        spec = ToolSpec(
            name=name,
            description=description,
            input_schema=copy.deepcopy(dict(input_schema)),
            output_schema=None if output_schema is None else copy.deepcopy(dict(output_schema)),
            title=title,
            annotations=None if annotations is None else dict(annotations),
        )
        self._tools[name] = (spec, handler)
        return spec

    def tool(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Optional[Mapping[str, Any]] = None,
        title: Optional[str] = None,
        annotations: Optional[Mapping[str, Any]] = None,
    ) -> Callable[[H], H]:
        """Decorator form of `register`; returns the handler unchanged."""

        def decorate(handler: H) -> H:
            self.register(
                name, description, input_schema, handler, output_schema, title, annotations
            )
            return handler

        return decorate

    def tools(self) -> List[ToolSpec]:
        """Every tool's spec, in registration order."""
        return [spec for spec, _ in self._tools.values()]

    def get(self, name: str) -> Optional[Tuple[ToolSpec, Handler]]:
        return self._tools.get(name)

    def names(self) -> List[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


def _check_tool_schema(tool: str, which: str, schema: Any) -> None:
    problems = schemas.check_schema(schema)
    if not problems and schema.get("type") != "object":
        problems.append("$: MCP tool schemas must have type 'object'")
    if not problems:
        props = schema.get("properties") or {}
        missing = [r for r in schema.get("required") or () if r not in props]
        if missing:
            problems.append(f"$: required names not in properties: {', '.join(missing)}")
    if problems:
        raise ToolRegistrationError(
            f"tool {tool!r} has an unusable {which}: {'; '.join(problems)}",
            "use the JSON Schema subset boost_cli.core.schema supports",
        )


@dataclass
class Session:
    """What a connection remembers: the version its ``initialize`` agreed (None before
    one), whether the client said ``notifications/initialized``, its capabilities and its
    roots. A 2026-07-28 request never reads it."""

    protocol_version: Optional[str] = None
    initialized: bool = False
    #: What the client declared in ``initialize`` (``capabilities``).
    client_capabilities: Dict[str, Any] = field(default_factory=dict)
    #: The folders of the client's roots, once it answered ``roots/list``.
    roots: Optional[List[str]] = None


MethodHandler = Callable[[Dict[str, Any], Call], Dict[str, Any]]


def _short(value: Any, limit: int = 80) -> str:
    return clip(value if isinstance(value, str) else schemas.shown(value), limit)


def _valid_id(value: Any) -> bool:
    """MCP ids are strings or numbers (never null); booleans and non-finite floats are not."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (str, int))


def _error(rid: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    error: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def _tool_result(
    text: str,
    structured: Optional[Dict[str, Any]],
    is_error: bool,
    links: Sequence[Mapping[str, Any]] = (),
) -> Dict[str, Any]:
    content: List[Dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend({"type": "resource_link", **link} for link in links)
    result: Dict[str, Any] = {"content": content, "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity are refused (Python's json accepts them)."""
    return json.loads(text, parse_constant=_reject_constant)


def dump_line(message: Any) -> str:
    """One message as one line of compact JSON, safe for any line splitter.

    Falls back to ASCII escapes when a string holds a lone surrogate (which
    UTF-8 cannot carry).
    """
    text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for char, escape in _LINE_BREAKERS.items():
        if char in text:  # only ever inside strings: JSON's own syntax is ASCII
            text = text.replace(char, escape)
    return text


def default_instructions(registry: Registry) -> str:
    tools = ", ".join(registry.names()) or "none yet"
    return (
        "boost finds the right AI-agent skill, rule or workflow (SKILL.md files, Cursor/Windsurf/"
        "Cline rules, Claude Code commands and subagents) in tapped git registries for a task "
        f"written in plain language. Tools: {tools}."
    )


class Server:
    """An MCP server over a `Registry`; see the module docstring for the protocol choices."""

    def __init__(
        self,
        registry: Registry,
        *,
        name: str = "boost",
        version: str = __version__,
        instructions: Optional[str] = None,
        protocol_versions: Sequence[str] = SUPPORTED_PROTOCOL_VERSIONS,
        modern_versions: Sequence[str] = MODERN_VERSIONS,
        capabilities: Optional[Mapping[str, Any]] = None,
        extensions: Optional[Mapping[str, Any]] = None,
    ) -> None:
        if not protocol_versions:
            raise ValueError("a server needs at least one protocol version")
        self.registry = registry
        self.name = name
        self.version = version
        self.instructions = instructions
        self.protocol_versions: Tuple[str, ...] = tuple(protocol_versions)
        self.modern_versions: Tuple[str, ...] = tuple(modern_versions)
        #: Capabilities beyond ``tools`` (e.g. ``resources``), in every revision.
        self.capabilities: Dict[str, Any] = dict(capabilities or {})
        #: ``capabilities.extensions`` (2026-07-28: ``server/discover`` only).
        self.extensions: Dict[str, Any] = dict(extensions or {})
        #: The connection `handle` uses when it is given none (stdio has one).
        self.session = Session()
        #: Requests boost sends the stdio client (``roots/list``), and those it awaits.
        self._outbox: List[Dict[str, Any]] = []
        self._pending: Dict[str, str] = {}
        self._methods: Dict[str, MethodHandler] = {
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        if self.modern_versions:
            self._methods["server/discover"] = self._discover

    @property
    def protocol_version(self) -> Optional[str]:
        """The version the default session's last ``initialize`` agreed; None before it."""
        return self.session.protocol_version

    @property
    def initialized(self) -> bool:
        """True once the client sent ``notifications/initialized`` (informative only)."""
        return self.session.initialized

    def add_method(self, method: str, handler: MethodHandler) -> None:
        """Serve ``method`` with ``handler(params, call)``, which returns the result or
        raises `JsonRpcError`; the result is shaped for the caller's revision
        (`protocol.shape_result`)."""
        if method in self._methods or method == "initialize":
            raise ValueError(f"method {method!r} is already served")
        self._methods[method] = handler

    # ------------------------------------------------------------------ pure core

    def handle(self, message: Any, session: Optional[Session] = None) -> Optional[Dict[str, Any]]:
        """The response to one parsed JSON-RPC message, or None when none is due.

        ``session`` is the connection's (default: `self.session`); a stateless transport
        passes a new one per request.

        None for notifications (no ``id``) and for stray responses (boost sends
        no requests, so a client's ``result``/``error`` message answers nothing).
        Every request with a valid ``id`` gets a response carrying that ``id``.
        """
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "invalid request: expected a JSON object")
        pending = message.get("id")
        if "method" not in message and isinstance(pending, str) and pending in self._pending:
            self._on_response(self._pending.pop(pending), message)
            return None
        if "method" not in message and ("result" in message or "error" in message):
            # Never answer a response, even a malformed one: two peers replying to
            # each other's errors would loop forever.
            log.debug("ignoring a response message (boost sends no requests)")
            return None
        has_id = "id" in message
        rid = message.get("id")
        if has_id and not _valid_id(rid):
            return _error(
                None, INVALID_REQUEST, "invalid request: 'id' must be a string or a number"
            )
        reply_id = rid if has_id else None
        if "method" not in message:
            return _error(reply_id, INVALID_REQUEST, "invalid request: 'method' is missing")
        if message.get("jsonrpc") != "2.0":
            return _error(reply_id, INVALID_REQUEST, "invalid request: 'jsonrpc' must be \"2.0\"")
        method = message["method"]
        if not isinstance(method, str):
            return _error(reply_id, INVALID_REQUEST, "invalid request: 'method' must be a string")
        session = self.session if session is None else session
        if not has_id:
            self._notify(method, session)
            return None
        try:
            result = self._dispatch(method, message.get("params"), session)
        except JsonRpcError as err:
            return _error(rid, err.code, err.message, err.data)
        except Exception:
            # A bug in boost, not in the request: keep serving, record the traceback.
            log.exception("internal error while handling %s", _short(method))
            return _error(
                rid,
                INTERNAL_ERROR,
                f"internal error while handling {_short(method)}; see the server log",
            )
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def _notify(self, method: str, session: Session) -> None:
        if method == "notifications/initialized":
            session.initialized = True
            self._ask_roots(session)
        elif method == "notifications/roots/list_changed":
            self._ask_roots(session)
        else:
            log.debug("ignoring notification %s", _short(method))

    # ------------------------------------------------------------------ requests to the client

    @property
    def roots(self) -> Optional[List[str]]:
        """The folders of the stdio client's roots (``roots/list``): None until a client
        with the ``roots`` capability answered; tools that write stay inside them. A
        stateless request has none (boost sends no requests on it)."""
        return self.session.roots

    def _ask_roots(self, session: Session) -> None:
        """Queue a ``roots/list`` request when the connection's client has the roots
        capability: only on the connection `serve` holds (a stateless transport cannot
        send the client a request)."""
        if session is not self.session:
            return
        if not isinstance(session.client_capabilities.get("roots"), dict):
            return
        rid = f"boost-roots-{len(self._pending) + len(self._outbox) + 1}"
        self._pending[rid] = "roots/list"
        self._outbox.append({"jsonrpc": "2.0", "id": rid, "method": "roots/list"})

    def _on_response(self, method: str, message: Dict[str, Any]) -> None:
        result = message.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
        if method != "roots/list" or not isinstance(roots, list):
            log.debug("the client did not list its roots: %s", _short(message.get("error")))
            self.session.roots = []
            return
        self.session.roots = [
            p for p in (file_uri_path(r.get("uri")) for r in roots if isinstance(r, dict)) if p
        ]

    def take_outbox(self) -> List[Dict[str, Any]]:
        """The requests boost has for the client, to send after the current response."""
        out, self._outbox = self._outbox, []
        return out

    def _dispatch(self, method: str, params: Any, session: Session) -> Dict[str, Any]:
        handler = self._methods.get(method)
        if handler is None and method != "initialize":
            raise JsonRpcError(METHOD_NOT_FOUND, f"method not found: {_short(method)}")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise JsonRpcError(INVALID_PARAMS, "invalid params: 'params' must be an object")
        call = classify(
            method, params, session.protocol_version, self.modern_versions, self.protocol_versions
        )
        if handler is None:
            return self._initialize(params, session)
        return shape_result(method, handler(params, call), call, self.server_info())

    def server_info(self) -> Dict[str, Any]:
        return {"name": self.name, "version": self.version}

    def _capabilities(self, call: Call) -> Dict[str, Any]:
        caps: Dict[str, Any] = {"tools": {"listChanged": False}}
        caps.update(copy.deepcopy(self.capabilities))
        if call.modern and self.extensions:
            caps["extensions"] = copy.deepcopy(self.extensions)
        return caps

    def _discover(self, params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        result: Dict[str, Any] = {
            "supportedVersions": list(self.modern_versions),
            "capabilities": self._capabilities(call),
        }
        instructions = self._instructions()
        if instructions:
            result["instructions"] = instructions
        return result

    def _instructions(self) -> str:
        if self.instructions is None:
            return default_instructions(self.registry)
        return self.instructions

    def _initialize(self, params: Dict[str, Any], session: Session) -> Dict[str, Any]:
        requested = params.get("protocolVersion")
        if isinstance(requested, str) and requested in self.protocol_versions:
            version = requested
        else:
            version = self.protocol_versions[0]
            log.debug("client asked for protocol %s; offering %s", _short(requested), version)
        session.protocol_version = version
        caps = params.get("capabilities")
        session.client_capabilities = caps if isinstance(caps, dict) else {}
        instructions = self._instructions()
        result: Dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self._capabilities(Call(version)),
            "serverInfo": self.server_info(),
        }
        if instructions:
            result["instructions"] = instructions
        return result

    def _ping(self, params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        return {}

    def _tools_list(self, params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        cursor = params.get("cursor")
        if cursor not in (None, ""):
            # boost lists every tool on one page, so it never hands out a cursor.
            raise JsonRpcError(INVALID_PARAMS, "invalid params: unknown cursor (there is one page)")
        return {"tools": [spec.to_dict() for spec in self.registry.tools()]}

    def _tools_call(self, params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, "invalid params: 'name' must be a tool name string")
        entry = self.registry.get(name)
        if entry is None:
            known = ", ".join(self.registry.names()) or "none"
            raise JsonRpcError(INVALID_PARAMS, f"unknown tool: {_short(name)} (tools: {known})")
        spec, handler = entry
        args = params.get("arguments")
        if args is None:
            args = {}
        elif not isinstance(args, dict):
            raise JsonRpcError(INVALID_PARAMS, "invalid params: 'arguments' must be an object")
        problems = schemas.validate(args, spec.input_schema)
        if problems:
            shown = "; ".join(problems[:5]) + ("; ..." if len(problems) > 5 else "")
            message = f"invalid arguments for tool {name!r}: {shown}"
            if call.at_least(VALIDATION_AS_TOOL_ERROR_SINCE):
                return _tool_result(message, None, True)
            raise JsonRpcError(INVALID_PARAMS, message)
        return self._run_tool(spec, handler, schemas.normalize(args, spec.input_schema), call)

    def _run_tool(
        self, spec: ToolSpec, handler: Handler, args: Dict[str, Any], call: Call
    ) -> Dict[str, Any]:
        generic = f"tool {spec.name!r} failed unexpectedly; the details are in the server log"
        try:
            out = handler(args)
        except BoostError as err:
            # escaped: an error may quote a name or a path from a registry
            return _tool_result(printable(one_line(str(err))), None, True)
        except OSError as err:
            message = printable(one_line(str(from_os_error(err))))
            log.warning("tool %s: %s", spec.name, message)
            return _tool_result(message, None, True)
        except Exception:
            # Whatever a handler hits, the session survives; the traceback goes to stderr.
            log.exception("tool %s raised", spec.name)
            return _tool_result(generic, None, True)
        if isinstance(out, str):
            out = ToolResult(out)
        problem = _result_problem(spec, out)
        if problem or not isinstance(out, ToolResult):
            log.error("tool %s returned a bad result: %s", spec.name, problem)
            return _tool_result(generic, None, True)
        if out.is_error:
            return _tool_result(out.text, None, True)
        text = out.text
        if not text and out.structured is not None:
            text = dump_line(out.structured)  # the spec's fallback for text-only clients
        links = out.links if call.at_least(RESOURCE_LINKS_SINCE) else ()
        return _tool_result(text, out.structured, False, links)

    # ------------------------------------------------------------------ lines

    def handle_line(self, line: Union[str, bytes]) -> Optional[str]:
        """The reply line (without newline) to one input line, or None when none is due."""
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                return dump_line(
                    _error(None, PARSE_ERROR, "parse error: the line is not valid UTF-8")
                )
        else:
            text = line
        text = text.strip().lstrip("\ufeff")
        if not text:
            return None
        try:
            value = parse_json(text)
        except (ValueError, RecursionError) as err:
            return dump_line(_error(None, PARSE_ERROR, f"parse error: {_short(str(err), 120)}"))
        if isinstance(value, list):
            return self._handle_batch(value)
        response = self.handle(value)
        return None if response is None else self._dump_response(response)

    def _handle_batch(self, batch: List[Any]) -> Optional[str]:
        version = self.session.protocol_version
        if version not in BATCH_PROTOCOL_VERSIONS:
            when = f"in protocol version {version}" if version else "before initialize"
            return dump_line(
                _error(
                    None,
                    INVALID_REQUEST,
                    f"invalid request: JSON-RPC batches are not supported {when}; "
                    "send one message per line",
                )
            )
        if not batch:
            return dump_line(_error(None, INVALID_REQUEST, "invalid request: empty batch"))
        responses = [r for r in (self.handle(item) for item in batch) if r is not None]
        if not responses:
            return None
        return self._dump_response(responses)

    def _dump_response(self, response: Union[Dict[str, Any], List[Dict[str, Any]]]) -> str:
        try:
            return dump_line(response)
        except (TypeError, ValueError, RecursionError):
            # A result that is not JSON is boost's bug; the request still gets an answer.
            log.exception("a response could not be serialised")
            if isinstance(response, list):
                return dump_line([_serialisation_error(r) for r in response])
            return dump_line(_serialisation_error(response))

    # ------------------------------------------------------------------ streams

    def serve(self, stdin: IO[Any], stdout: IO[Any]) -> None:
        """Answer ``stdin`` line by line on ``stdout`` until EOF (text or binary streams).

        Returns on EOF, when ``stdout`` is closed by the peer, or on Ctrl-C.
        """
        write = _line_writer(stdout)
        try:
            while True:
                line = stdin.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES and line[-1:] not in ("\n", b"\n"):
                    _skip_rest_of_line(stdin)
                    reply: Optional[str] = dump_line(
                        _error(
                            None,
                            PARSE_ERROR,
                            f"parse error: message longer than {MAX_LINE_BYTES} bytes",
                        )
                    )
                else:
                    reply = self.handle_line(line)
                if reply is not None and not write(reply):
                    log.debug("stdout closed by the client; stopping")
                    return
                for request in self.take_outbox():
                    if not write(dump_line(request)):
                        return
        except KeyboardInterrupt:
            log.debug("interrupted; stopping")

    def serve_stdio(self) -> None:
        """`serve` on the process's stdin/stdout.

        The protocol gets private copies of fds 0 and 1; fd 1 then points at
        stderr and fd 0 at /dev/null, so a stray ``print`` or a child process
        that inherits stdio can never corrupt the JSON stream or eat its input.
        """
        with _protocol_stdio() as (stdin, stdout):
            self.serve(stdin, stdout)


def file_uri_path(uri: Any) -> Optional[str]:
    """The local path of a ``file://`` URI (a root), None for anything else."""
    if not isinstance(uri, str) or not uri.startswith("file://"):
        return None
    parsed = urlparse(uri)
    if parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


def _result_problem(spec: ToolSpec, out: Any) -> Optional[str]:
    """Why a handler's return value cannot be sent, or None when it can."""
    if not isinstance(out, ToolResult):
        return f"expected ToolResult or str, got {type(out).__name__}"
    if not isinstance(out.text, str):
        return f"ToolResult.text must be a str, got {type(out.text).__name__}"
    for link in out.links:
        if not (
            isinstance(link, Mapping)
            and isinstance(link.get("uri"), str)
            and isinstance(link.get("name"), str)
        ):
            return "a resource link needs a 'uri' and a 'name' string"
    if out.is_error:
        return None
    if out.structured is None:
        if spec.output_schema is not None:
            return "the tool declares an outputSchema but returned no structured data"
        return None
    if not isinstance(out.structured, dict):
        return f"structured data must be a dict, got {type(out.structured).__name__}"
    try:
        dump_line(out.structured)
    except (TypeError, ValueError, RecursionError) as err:
        return f"structured data is not JSON: {err}"
    if spec.output_schema is not None:
        problems = schemas.validate(out.structured, spec.output_schema)
        if problems:
            return "structured data breaks the outputSchema: " + "; ".join(problems[:5])
    return None


def _serialisation_error(response: Dict[str, Any]) -> Dict[str, Any]:
    return _error(response.get("id"), INTERNAL_ERROR, "internal error: the result was not JSON")


def _line_writer(stream: IO[Any]) -> Callable[[str], bool]:
    """A function writing one message line and flushing; False once the peer is gone.

    Works on text and binary streams alike: it starts with the mode the
    stream's class suggests and switches once if the stream refuses it.
    """
    text_mode = [isinstance(stream, io.TextIOBase)]

    def write(line: str) -> bool:
        for _ in range(2):
            text = line + "\n"
            data: Union[str, bytes] = text if text_mode[0] else text.encode("utf-8")
            try:
                stream.write(data)
                stream.flush()
                return True
            except TypeError:
                text_mode[0] = not text_mode[0]
            except (BrokenPipeError, ConnectionResetError, ValueError):
                return False  # the peer hung up (ValueError: the stream was closed)
        raise TypeError(f"cannot write lines to {type(stream).__name__}")

    return write


def _skip_rest_of_line(stream: IO[Any]) -> None:
    while True:
        chunk = stream.readline(MAX_LINE_BYTES)
        if not chunk or chunk[-1:] in ("\n", b"\n"):
            return


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


@contextlib.contextmanager
def _protocol_stdio() -> Iterator[Tuple[IO[bytes], IO[bytes]]]:
    _flush_std()
    try:
        in_fd = os.dup(0)
        out_fd = os.dup(1)
    except OSError as err:  # no real fds (embedded interpreters): serve the streams as they are
        log.debug("cannot duplicate stdio (%s); serving on sys.stdin/sys.stdout", err)
        yield sys.stdin.buffer, sys.stdout.buffer
        return
    rin, wout = os.fdopen(in_fd, "rb"), os.fdopen(out_fd, "wb")
    try:
        try:
            devnull = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(devnull, 0)
            finally:
                os.close(devnull)
            os.dup2(2, 1)
        except OSError as err:
            log.debug("cannot divert fds 0/1 (%s); a stray print could reach the client", err)
        yield rin, wout
    finally:
        _flush_std()
        os.dup2(in_fd, 0)
        os.dup2(out_fd, 1)
        rin.close()
        # Closing flushes; after the client hung up that raises, and there is nobody left to tell.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            wout.close()
