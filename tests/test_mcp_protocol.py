"""The MCP server core: registry, lifecycle, tools, JSON-RPC errors and the line loop.

`Server.handle` is pure, so most tests are literal dicts in, dicts out; the
stream tests drive `Server.serve` over in-memory buffers.
"""

from __future__ import annotations

import dataclasses
import errno
import io
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from boost_cli import __version__
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.mcp import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SUPPORTED_PROTOCOL_VERSIONS,
    Registry,
    Server,
    ToolRegistrationError,
    ToolResult,
    ToolSpec,
    default_instructions,
    dump_line,
)
from boost_cli.core.mcp_log import LOG_FORMAT, StderrLog

ROOT = Path(__file__).resolve().parent.parent

QUERY_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["query"],
    "additionalProperties": False,
}
HITS_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {"hits": {"type": "array", "items": {"type": "string"}}},
    "required": ["hits"],
}


def make_registry() -> Registry:
    reg = Registry()

    @reg.tool("boost_search", "Find skills for a task.", QUERY_SCHEMA, output_schema=HITS_SCHEMA)
    def search(args: Dict[str, Any]) -> ToolResult:
        hits = [f"hit-{i}-{args['query']}" for i in range(args.get("limit", 2))]
        return ToolResult(text="\n".join(hits), structured={"hits": hits})

    @reg.tool("echo", "Echo the query back as plain text.", QUERY_SCHEMA)
    def echo(args: Dict[str, Any]) -> str:
        return args["query"]

    @reg.tool("missing", "Always fails with a BoostError.", {"type": "object"})
    def missing(args: Dict[str, Any]) -> str:
        raise NotFoundError("no skill named 'x'", "run boost_search to find names")

    @reg.tool("crash", "Always crashes.", {"type": "object"})
    def crash(args: Dict[str, Any]) -> str:
        raise RuntimeError("secret internal detail\nwith a second line")

    return reg


@pytest.fixture
def server() -> Server:
    return Server(make_registry())


def request(method: str, params: Optional[Dict[str, Any]] = None, rid: Any = 1) -> Dict[str, Any]:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(server: Server, name: str, arguments: Any = None, rid: Any = 1) -> Dict[str, Any]:
    params: Dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    response = server.handle(request("tools/call", params, rid))
    assert response is not None and response["id"] == rid
    return response


def error_code(response: Optional[Dict[str, Any]]) -> int:
    assert response is not None and "result" not in response
    return int(response["error"]["code"])


# --------------------------------------------------------------------------- registry


def test_registry_keeps_registration_order() -> None:
    reg = Registry()
    for name in ("zeta", "alpha", "mid"):
        reg.register(name, f"the {name} tool", {"type": "object"}, lambda args: "ok")
    assert [spec.name for spec in reg.tools()] == ["zeta", "alpha", "mid"]
    assert reg.names() == ["zeta", "alpha", "mid"] and len(reg) == 3 and "mid" in reg


def test_a_bare_tool_spec_lists_name_description_and_input_schema_only() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    spec = ToolSpec("t", "does t", schema)
    listed = spec.to_dict()
    assert listed == {"name": "t", "description": "does t", "inputSchema": schema}
    listed["inputSchema"]["properties"]["q"]["type"] = "number"  # a copy, not the spec's
    assert schema["properties"]["q"]["type"] == "string"


def test_a_tool_lists_its_title_output_schema_and_hints() -> None:
    reg = Registry()
    out = {"type": "object", "properties": {"hits": {"type": "array"}}}
    hints = {"readOnlyHint": True, "openWorldHint": False}
    reg.register("t", "does t", {"type": "object"}, lambda a: "ok", out, "The T", hints)
    assert reg.tools()[0].to_dict() == {
        "name": "t",
        "title": "The T",
        "description": "does t",
        "inputSchema": {"type": "object"},
        "outputSchema": out,
        "annotations": hints,
    }


def test_registry_refuses_duplicate_names() -> None:
    reg = Registry()
    reg.register("boost_search", "search", {"type": "object"}, lambda args: "ok")
    with pytest.raises(ToolRegistrationError) as info:
        reg.register("boost_search", "again", {"type": "object"}, lambda args: "ok")
    assert isinstance(info.value, ValueError) and isinstance(info.value, BoostError)
    assert (
        str(info.value)
        == "a tool named 'boost_search' is already registered — give each tool a unique name"
    )


def test_decorator_registers_and_returns_the_handler() -> None:
    reg = Registry()

    def handler(args: Dict[str, Any]) -> str:
        return "hi"

    assert reg.tool("t", "a tool", {"type": "object"}, title="T")(handler) is handler
    entry = reg.get("t")
    assert entry is not None and entry[1] is handler and entry[0].title == "T"


NAME_FIX = "use 1-128 ASCII letters, digits, '_', '-' or '.'"
SCHEMA_FIX = "use the JSON Schema subset boost_cli.core.schema supports"


@pytest.mark.parametrize(
    ("name", "description", "schema", "message"),
    [
        ("bad name", "d", {"type": "object"}, f"invalid tool name 'bad name' — {NAME_FIX}"),
        ("", "d", {"type": "object"}, f"invalid tool name '' — {NAME_FIX}"),
        ("x" * 129, "d", {"type": "object"}, f"invalid tool name '{'x' * 129}' — {NAME_FIX}"),
        ("t", "  ", {"type": "object"}, "tool 't' has no description — say what the tool does"),
        (
            "t",
            "d",
            {"type": "string"},
            "tool 't' has an unusable input_schema: $: MCP tool schemas must have type 'object'"
            f" — {SCHEMA_FIX}",
        ),
        (
            "t",
            "d",
            {"type": "object", "required": ["q", "r"]},
            "tool 't' has an unusable input_schema: $: required names not in properties: q, r"
            f" — {SCHEMA_FIX}",
        ),
        (
            "t",
            "d",
            {"type": "object", "properties": {"q": {"pattern": "x", "minimum": "1"}}},
            "tool 't' has an unusable input_schema: q: unsupported keyword 'pattern'; "
            f"q: 'minimum' must be a number — {SCHEMA_FIX}",
        ),
    ],
)
def test_registry_refuses_bad_tools_at_registration(
    name: str, description: str, schema: Dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        Registry().register(name, description, schema, lambda args: "ok")
    assert str(info.value) == message


def test_registry_refuses_a_bad_output_schema() -> None:
    with pytest.raises(ToolRegistrationError) as info:
        Registry().register(
            "t", "d", {"type": "object"}, lambda a: "ok", output_schema={"type": "array"}
        )
    assert str(info.value) == (
        "tool 't' has an unusable output_schema: $: MCP tool schemas must have type 'object'"
        f" — {SCHEMA_FIX}"
    )


def test_registered_schemas_are_copies() -> None:
    schema: Dict[str, Any] = {"type": "object", "properties": {}}
    output: Dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    reg = Registry()
    reg.register("t", "d", schema, lambda args: "ok", output_schema=output)
    schema["properties"]["late"] = {"type": "string"}
    output["properties"]["n"]["type"] = "string"
    listed = reg.tools()[0].to_dict()
    assert listed["inputSchema"] == {"type": "object", "properties": {}}
    assert listed["outputSchema"]["properties"]["n"] == {"type": "integer"}
    # Nor does a client-facing listing share anything with the registry.
    listed["outputSchema"]["properties"]["n"]["type"] = "null"
    listed["inputSchema"]["properties"]["late"] = {}
    again = reg.tools()[0].to_dict()
    assert again["outputSchema"]["properties"]["n"] == {"type": "integer"}
    assert again["inputSchema"]["properties"] == {}


def test_specs_and_results_are_values() -> None:
    spec = Registry().register("t", "d", {"type": "object"}, lambda args: "ok")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "u"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolResult("x").is_error = True  # type: ignore[misc]


def test_default_instructions_name_the_tools() -> None:
    intro = (
        "boost finds the right AI-agent skill, rule or workflow (SKILL.md files, "
        "Cursor/Windsurf/Cline rules, Claude Code commands and subagents) in tapped git "
        "registries for a task written in plain language."
    )
    assert default_instructions(Registry()) == f"{intro} Tools: none yet."
    assert default_instructions(make_registry()) == (
        f"{intro} Tools: boost_search, echo, missing, crash."
    )


def test_error_codes_are_the_json_rpc_ones() -> None:
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
    )


# --------------------------------------------------------------------------- lifecycle


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_echoes_a_supported_version(server: Server, version: str) -> None:
    response = server.handle(
        request("initialize", {"protocolVersion": version, "capabilities": {}})
    )
    assert response is not None
    result = response["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == {"name": "boost", "version": __version__}
    assert "boost_search" in result["instructions"]
    assert server.protocol_version == version


@pytest.mark.parametrize("params", [{"protocolVersion": "1999-01-01"}, {}, {"protocolVersion": 7}])
def test_initialize_offers_the_newest_version_otherwise(
    server: Server, params: Dict[str, Any]
) -> None:
    response = server.handle(request("initialize", params))
    assert response is not None
    assert response["result"]["protocolVersion"] == "2025-11-25" == SUPPORTED_PROTOCOL_VERSIONS[0]


def test_supported_versions_cover_every_handshake_revision() -> None:
    assert set(SUPPORTED_PROTOCOL_VERSIONS) == {
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
    }


def test_a_server_needs_a_protocol_version() -> None:
    with pytest.raises(ValueError, match=r"^a server needs at least one protocol version$"):
        Server(Registry(), protocol_versions=())


def test_custom_protocol_versions_are_negotiated() -> None:
    server = Server(Registry(), protocol_versions=("2025-06-18",))
    response = server.handle(request("initialize", {"protocolVersion": "2025-11-25"}))
    assert response is not None and response["result"]["protocolVersion"] == "2025-06-18"


def test_initialize_without_params_and_custom_instructions() -> None:
    server = Server(Registry(), instructions="", version="9.9")
    response = server.handle(request("initialize"))
    assert response is not None
    assert "instructions" not in response["result"]
    assert response["result"]["serverInfo"]["version"] == "9.9"


def test_initialized_notification_gets_no_reply(server: Server) -> None:
    # Before the handshake: no version agreed, not initialized; initialize agrees a version,
    # and only the client's notification marks the session initialized.
    assert server.protocol_version is None and server.initialized is False
    server.handle(request("initialize", {"protocolVersion": "2025-06-18"}))
    assert server.protocol_version == "2025-06-18" and server.initialized is False
    assert server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert server.initialized is True


def test_requests_before_initialize_are_answered(server: Server) -> None:
    response = server.handle(request("tools/list"))
    assert response is not None and len(response["result"]["tools"]) == 4


def test_ping_returns_an_empty_result(server: Server) -> None:
    assert server.handle(request("ping", rid="p-1")) == {
        "jsonrpc": "2.0",
        "id": "p-1",
        "result": {},
    }


# --------------------------------------------------------------------------- tools/list


def test_tools_list_shows_specs_in_order(server: Server) -> None:
    response = server.handle(request("tools/list", {}))
    assert response is not None
    tools = response["result"]["tools"]
    assert [t["name"] for t in tools] == ["boost_search", "echo", "missing", "crash"]
    assert tools[0] == {
        "name": "boost_search",
        "description": "Find skills for a task.",
        "inputSchema": QUERY_SCHEMA,
        "outputSchema": HITS_SCHEMA,
    }
    assert "outputSchema" not in tools[1]
    assert "nextCursor" not in response["result"]


def test_tools_list_shows_a_title_when_given() -> None:
    reg = Registry()
    reg.register("t", "d", {"type": "object"}, lambda a: "ok", title="Search skills")
    response = Server(reg).handle(request("tools/list"))
    assert response is not None
    assert response["result"]["tools"] == [
        {
            "name": "t",
            "title": "Search skills",
            "description": "d",
            "inputSchema": {"type": "object"},
        }
    ]


def test_tools_list_accepts_an_empty_cursor_and_refuses_a_foreign_one(server: Server) -> None:
    assert "result" in (server.handle(request("tools/list", {"cursor": None})) or {})
    assert "result" in (server.handle(request("tools/list", {"cursor": ""})) or {})
    assert server.handle(request("tools/list", {"cursor": "page-2"})) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": INVALID_PARAMS,
            "message": "invalid params: unknown cursor (there is one page)",
        },
    }


# --------------------------------------------------------------------------- tools/call


def test_call_returns_text_and_structured_content(server: Server) -> None:
    result = call(server, "boost_search", {"query": "react", "limit": 3})["result"]
    hits = ["hit-0-react", "hit-1-react", "hit-2-react"]
    assert result == {
        "content": [{"type": "text", "text": "\n".join(hits)}],
        "isError": False,
        "structuredContent": {"hits": hits},
    }


def test_call_normalizes_integral_floats_before_the_handler(server: Server) -> None:
    result = call(server, "boost_search", {"query": "q", "limit": 2.0})["result"]
    assert result["structuredContent"] == {"hits": ["hit-0-q", "hit-1-q"]}


def test_call_accepts_a_plain_string_result(server: Server) -> None:
    result = call(server, "echo", {"query": "hello"})["result"]
    assert result == {"content": [{"type": "text", "text": "hello"}], "isError": False}


def test_boost_error_becomes_is_error_with_its_line(server: Server) -> None:
    result = call(server, "missing", {})["result"]
    assert result == {
        "content": [
            {"type": "text", "text": "no skill named 'x' — run boost_search to find names"}
        ],
        "isError": True,
    }


def test_unexpected_exception_is_generic_logged_and_survived(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="boost_cli.core.mcp"):
        result = call(server, "crash", {}, rid=5)["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert text == "tool 'crash' failed unexpectedly; the details are in the server log"
    assert "secret" not in text
    assert [(r.getMessage(), str(r.exc_info[1]) if r.exc_info else "") for r in caplog.records] == [
        ("tool crash raised", "secret internal detail\nwith a second line")
    ]
    assert (
        call(server, "echo", {"query": "still here"})["result"]["content"][0]["text"]
        == "still here"
    )


def test_an_os_error_is_a_tool_error_with_its_fix(caplog: pytest.LogCaptureFixture) -> None:
    reg = Registry()
    full = OSError(errno.ENOSPC, "No space left on device", "/home/x/.boost/cache")
    reg.register("t", "d", {"type": "object"}, _raise(full))
    with caplog.at_level(logging.WARNING, logger="boost_cli.core.mcp"):
        result = call(Server(reg), "t", {})["result"]
    message = (
        "cannot use /home/x/.boost/cache: No space left on device — free some disk space and retry"
    )
    assert result == {"content": [{"type": "text", "text": message}], "isError": True}
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"tool t: {message}")
    ]


def test_multiline_boost_error_is_sent_as_one_line() -> None:
    reg = Registry()
    reg.register("t", "d", {"type": "object"}, _raise(UsageError("first\nsecond", "fix\tit")))
    result = call(Server(reg), "t", {})["result"]
    assert result["content"][0]["text"] == "first second — fix it"


def _raise(err: Exception) -> Any:
    def handler(args: Dict[str, Any]) -> str:
        raise err

    return handler


def test_tool_result_is_error_passes_through_without_structured_content() -> None:
    reg = Registry()
    reg.register(
        "t",
        "d",
        {"type": "object"},
        lambda a: ToolResult("nope", {"hits": []}, is_error=True),
        output_schema=HITS_SCHEMA,
    )
    result = call(Server(reg), "t", {})["result"]
    assert result == {"content": [{"type": "text", "text": "nope"}], "isError": True}


def test_structured_only_result_gets_its_json_as_text() -> None:
    reg = Registry()
    reg.register(
        "t",
        "d",
        {"type": "object"},
        lambda a: ToolResult("", {"hits": ["a"]}),
        output_schema=HITS_SCHEMA,
    )
    result = call(Server(reg), "t", {})["result"]
    assert result["content"][0]["text"] == '{"hits":["a"]}'
    assert result["structuredContent"] == {"hits": ["a"]}


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        (
            ToolResult("text only"),
            "the tool declares an outputSchema but returned no structured data",
        ),
        (
            ToolResult("bad", {"hits": [1, "a", 2, 3, 4, 5, 6]}),  # six problems: five shown
            "structured data breaks the outputSchema: "
            + "; ".join(f"hits[{i}]: expected string, got integer" for i in (0, 2, 3, 4, 5)),
        ),
        (
            ToolResult("bad", {"hits": [], "path": Path("/x")}),
            "structured data is not JSON: Object of type PosixPath is not JSON serializable",
        ),
        (
            ToolResult("bad", {"hits": [], "score": float("nan")}),
            "structured data is not JSON: Out of range float values are not JSON compliant",
        ),
        (42, "expected ToolResult or str, got int"),
        (
            ToolResult(text=None, structured={"hits": []}),  # type: ignore[arg-type]
            "ToolResult.text must be a str, got NoneType",
        ),
        (ToolResult("x", ["a"]), "structured data must be a dict, got list"),  # type: ignore[arg-type]
    ],
)
def test_bad_handler_results_become_a_generic_error(
    returned: Any, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    reg = Registry()
    reg.register("t", "d", {"type": "object"}, lambda a: returned, output_schema=HITS_SCHEMA)
    with caplog.at_level(logging.ERROR, logger="boost_cli.core.mcp"):
        result = call(Server(reg), "t", {})["result"]
    assert result == {
        "content": [
            {
                "type": "text",
                "text": "tool 't' failed unexpectedly; the details are in the server log",
            }
        ],
        "isError": True,
    }
    assert [r.getMessage() for r in caplog.records] == [f"tool t returned a bad result: {reason}"]


def test_structured_content_without_output_schema_is_still_sent() -> None:
    reg = Registry()
    reg.register("t", "d", {"type": "object"}, lambda a: ToolResult("x", {"k": 1}))
    assert call(Server(reg), "t", {})["result"]["structuredContent"] == {"k": 1}
    reg.register("u", "d", {"type": "object"}, lambda a: ToolResult("x", ["not", "a", "dict"]))  # type: ignore[arg-type]
    assert call(Server(reg), "u", {})["result"]["isError"] is True


def test_missing_arguments_mean_an_empty_object(server: Server) -> None:
    assert call(server, "missing")["result"]["isError"] is True


@pytest.mark.parametrize("version", ["2025-11-25", None])
def test_schema_violation_is_a_tool_error_from_2025_11_25(
    server: Server, version: Optional[str]
) -> None:
    if version:
        server.handle(request("initialize", {"protocolVersion": version}))
    result = call(server, "boost_search", {"query": 12345})["result"]
    assert result == {
        "content": [
            {
                "type": "text",
                "text": "invalid arguments for tool 'boost_search': query: expected string, got integer",
            }
        ],
        "isError": True,
    }


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_schema_violation_is_invalid_params_before_2025_11_25(server: Server, version: str) -> None:
    server.handle(request("initialize", {"protocolVersion": version}))
    response = call(server, "boost_search", {})
    assert response["error"] == {
        "code": INVALID_PARAMS,
        "message": "invalid arguments for tool 'boost_search': query: required property is missing",
    }


def test_many_schema_violations_are_capped_in_the_message() -> None:
    reg = Registry()
    props = {f"p{i}": {"type": "string"} for i in range(8)}
    reg.register("t", "d", {"type": "object", "properties": props}, lambda a: "ok")

    def text(n: int) -> str:
        result = call(Server(reg), "t", {f"p{i}": i for i in range(n)})["result"]
        return str(result["content"][0]["text"])

    assert text(2) == (
        "invalid arguments for tool 't': "
        "p0: expected string, got integer; p1: expected string, got integer"
    )
    assert text(5).count("expected string") == 5 and text(5).endswith("got integer")
    assert text(6).count("expected string") == 5 and text(6).endswith("got integer; ...")
    assert text(8).count("expected string") == 5 and text(8).endswith("; ...")


# --------------------------------------------------------------------------- JSON-RPC errors


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        (
            {"name": "nope", "arguments": {}},
            "unknown tool: nope (tools: boost_search, echo, missing, crash)",
        ),
        ({"arguments": {}}, "invalid params: 'name' must be a tool name string"),
        ({"name": "echo", "arguments": ["q"]}, "invalid params: 'arguments' must be an object"),
        ({"name": "echo", "arguments": "q"}, "invalid params: 'arguments' must be an object"),
    ],
)
def test_tools_call_protocol_errors_are_invalid_params(
    server: Server, params: Dict[str, Any], fragment: str
) -> None:
    response = server.handle(request("tools/call", params, rid=9))
    assert response == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": INVALID_PARAMS, "message": fragment},
    }


def test_unknown_tool_when_there_are_none() -> None:
    response = Server(Registry()).handle(request("tools/call", {"name": "x"}))
    assert response is not None
    assert response["error"]["message"] == "unknown tool: x (tools: none)"


def test_params_that_are_not_an_object_are_invalid_params(server: Server) -> None:
    assert server.handle(request("ping", [1, 2])) == {  # type: ignore[arg-type]
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": INVALID_PARAMS, "message": "invalid params: 'params' must be an object"},
    }


def test_unknown_method_is_method_not_found(server: Server) -> None:
    response = server.handle(request("resources/list", rid="r"))
    assert response == {
        "jsonrpc": "2.0",
        "id": "r",
        "error": {"code": METHOD_NOT_FOUND, "message": "method not found: resources/list"},
    }
    # A long name is clipped to 80 characters in the message.
    response = server.handle(request("m" * 100))
    assert response is not None
    assert response["error"]["message"] == "method not found: " + "m" * 79 + "…"


NOT_AN_OBJECT = "expected a JSON object"
BAD_ID = "'id' must be a string or a number"


@pytest.mark.parametrize(
    ("message", "reply_id", "problem"),
    [
        (42, None, NOT_AN_OBJECT),
        ([], None, NOT_AN_OBJECT),
        ("ping", None, NOT_AN_OBJECT),
        ({"jsonrpc": "2.0", "id": 78}, 78, "'method' is missing"),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3, "'jsonrpc' must be \"2.0\""),
        ({"id": 3, "method": "ping"}, 3, "'jsonrpc' must be \"2.0\""),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, 3, "'method' must be a string"),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": float("inf"), "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0"}, None, "'method' is missing"),
    ],
)
def test_invalid_requests(server: Server, message: Any, reply_id: Any, problem: str) -> None:
    assert server.handle(message) == {
        "jsonrpc": "2.0",
        "id": reply_id,
        "error": {"code": INVALID_REQUEST, "message": f"invalid request: {problem}"},
    }


@pytest.mark.parametrize("rid", [0, -1, 10**30, 1.5, "", "α-id"])
def test_any_string_or_number_id_is_echoed(server: Server, rid: Any) -> None:
    assert server.handle(request("ping", rid=rid)) == {"jsonrpc": "2.0", "id": rid, "result": {}}


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "notifications/whatever", "params": [1]},
        {"jsonrpc": "2.0", "method": "tools/call"},  # a request method sent as a notification
        {"jsonrpc": "2.0", "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 4, "result": {}},  # a response: boost sent no request
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},
    ],
)
def test_notifications_and_responses_get_no_reply(server: Server, message: Dict[str, Any]) -> None:
    assert server.handle(message) is None


def test_internal_bug_is_an_internal_error_not_a_crash(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(params: Dict[str, Any], call: Any) -> Dict[str, Any]:
        raise KeyError("oops")

    monkeypatch.setitem(server._methods, "ping", broken)
    with caplog.at_level(logging.ERROR, logger="boost_cli.core.mcp"):
        response = server.handle(request("ping", rid=2))
    assert response == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": INTERNAL_ERROR,
            "message": "internal error while handling ping; see the server log",
        },
    }
    assert [
        (r.getMessage(), repr(r.exc_info[1]) if r.exc_info else "") for r in caplog.records
    ] == [("internal error while handling ping", "KeyError('oops')")]


# --------------------------------------------------------------------------- lines


def test_handle_line_parse_errors_have_null_id(server: Server) -> None:
    for line in [
        '{"jsonrpc": "2.0", "id": 77, "method": "tools/list"',
        "not json",
        "NaN",
        "[1, Infinity]",
        'X{"jsonrpc": "2.0", "id": 1, "method": "ping"}',  # junk before a message
    ]:
        reply = server.handle_line(line)
        assert reply is not None
        message = json.loads(reply)
        assert message["id"] is None and message["error"]["code"] == PARSE_ERROR
    assert server.handle_line("NaN") == (
        '{"jsonrpc":"2.0","id":null,"error":'
        '{"code":-32700,"message":"parse error: NaN is not valid JSON"}}'
    )


def test_handle_line_invalid_utf8_is_a_parse_error(server: Server) -> None:
    reply = server.handle_line(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\xff\n')
    assert reply is not None
    assert json.loads(reply)["error"] == {
        "code": PARSE_ERROR,
        "message": "parse error: the line is not valid UTF-8",
    }


def test_handle_line_deep_nesting_is_a_parse_error_not_a_crash(server: Server) -> None:
    reply = server.handle_line("[" * 100_000 + "]" * 100_000)
    assert reply is not None and json.loads(reply)["error"]["code"] in (
        PARSE_ERROR,
        INVALID_REQUEST,
    )


def test_handle_line_blank_lines_bom_and_crlf(server: Server) -> None:
    assert server.handle_line("") is None
    assert server.handle_line(b"  \r\n") is None
    reply = server.handle_line('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n')
    assert reply == '{"jsonrpc":"2.0","id":1,"result":{}}'


def test_batch_is_refused_outside_2025_03_26(server: Server) -> None:
    batch = json.dumps([request("ping", rid=1), request("tools/list", rid=2)])
    for version in (None, "2025-06-18", "2025-11-25"):
        if version:
            server.handle(request("initialize", {"protocolVersion": version}))
        reply = server.handle_line(batch)
        assert reply is not None
        message = json.loads(reply)
        assert message["id"] is None and message["error"] == {
            "code": INVALID_REQUEST,
            "message": "invalid request: JSON-RPC batches are not supported "
            + (f"in protocol version {version}" if version else "before initialize")
            + "; send one message per line",
        }


def test_batch_is_answered_as_an_array_in_2025_03_26(server: Server) -> None:
    server.handle(request("initialize", {"protocolVersion": "2025-03-26"}))
    batch = [
        request("ping", rid=1),
        {"jsonrpc": "2.0", "method": "notifications/x"},
        42,
        request("nope", rid=2),
    ]
    reply = server.handle_line(json.dumps(batch))
    assert reply is not None
    answers = json.loads(reply)
    assert [a["id"] for a in answers] == [1, None, 2]
    assert answers[0]["result"] == {} and answers[1]["error"]["code"] == INVALID_REQUEST
    assert answers[2]["error"]["code"] == METHOD_NOT_FOUND
    assert json.loads(server.handle_line("[]") or "")["error"] == {
        "code": INVALID_REQUEST,
        "message": "invalid request: empty batch",
    }
    assert server.handle_line(json.dumps([{"jsonrpc": "2.0", "method": "notifications/x"}])) is None


def test_dump_line_is_one_utf8_safe_line() -> None:
    line = dump_line({"text": "a\nb\u2028c\u2029d\u0085e — ü", "lone": "\ud800"})
    assert "\n" not in line and "\u2028" not in line and "\u0085" not in line
    line.encode("utf-8")  # lone surrogate escaped, not emitted raw
    assert json.loads(line) == {"text": "a\nb\u2028c\u2029d\u0085e — ü", "lone": "\ud800"}
    assert "—" in dump_line({"t": "—"})  # UTF-8 kept when it can be
    assert dump_line({"t": "a\u2028b\u0085c\u2029"}) == '{"t":"a\\u2028b\\u0085c\\u2029"}'


def test_unserialisable_result_still_answers_the_id(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(server._methods, "ping", lambda params, call: {"bad": object()})
    with caplog.at_level(logging.ERROR, logger="boost_cli.core.mcp"):
        reply = server.handle_line(json.dumps(request("ping", rid=11)))
    assert [r.getMessage() for r in caplog.records] == ["a response could not be serialised"]
    assert caplog.records[0].exc_info  # the traceback goes to the log
    assert reply is not None
    assert json.loads(reply) == {
        "jsonrpc": "2.0",
        "id": 11,
        "error": {"code": INTERNAL_ERROR, "message": "internal error: the result was not JSON"},
    }


def test_unserialisable_batch_answer_still_answers_every_id(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server.handle(request("initialize", {"protocolVersion": "2025-03-26"}))
    monkeypatch.setitem(server._methods, "tools/list", lambda params, call: {"bad": {1, 2}})
    reply = server.handle_line(json.dumps([request("ping", rid=1), request("tools/list", rid=2)]))
    answers = json.loads(reply or "")
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (1, INTERNAL_ERROR),
        (2, INTERNAL_ERROR),
    ]


# --------------------------------------------------------------------------- serve()


def run_serve(server: Server, data: bytes) -> List[Dict[str, Any]]:
    out = io.BytesIO()
    server.serve(io.BytesIO(data), out)
    raw = out.getvalue()
    assert raw == b"" or raw.endswith(b"\n")
    lines = raw.decode("utf-8").splitlines()  # also proves the output is UTF-8
    return [json.loads(line) for line in lines]


def test_serve_answers_every_request_in_order_over_garbage(server: Server) -> None:
    lines = [
        json.dumps(request("initialize", {"protocolVersion": "2025-06-18"}, rid=1)),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json",
        json.dumps(request("tools/list", rid=2)),
        '{"jsonrpc": "2.0", "id": 77, "method": "tools/list"',
        "",
        "42",
        json.dumps(
            request("tools/call", {"name": "echo", "arguments": {"query": "ü — ok"}}, rid="three")
        ),
        json.dumps(request("tools/call", {"name": "crash"}, rid=4)),
        json.dumps(request("nope", rid=5)),
    ]
    data = (
        "\n".join(lines).encode("utf-8")
        + b"\n\xff\xfe garbage \xc3\n"
        + json.dumps(request("ping", rid=6)).encode()
    )
    replies = run_serve(server, data)  # the last line has no newline: still answered
    answered = [r["id"] for r in replies if r["id"] is not None]
    assert answered == [1, 2, "three", 4, 5, 6]
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert by_id["three"]["result"]["content"][0]["text"] == "ü — ok"
    assert by_id[4]["result"]["isError"] is True
    codes = [r["error"]["code"] for r in replies if r["id"] is None]
    assert codes == [PARSE_ERROR, PARSE_ERROR, INVALID_REQUEST, PARSE_ERROR]
    assert all(r["jsonrpc"] == "2.0" for r in replies)


def test_serve_on_text_streams() -> None:
    out = io.StringIO()
    Server(make_registry()).serve(io.StringIO(json.dumps(request("ping", rid=1)) + "\n"), out)
    assert out.getvalue() == '{"jsonrpc":"2.0","id":1,"result":{}}\n'


class _StrOnlyWriter:
    """A text sink that is no io.TextIOBase (like some wrapped streams)."""

    def __init__(self) -> None:
        self.parts: List[str] = []

    def write(self, data: Any) -> int:
        if not isinstance(data, str):
            raise TypeError("write() argument must be str")
        self.parts.append(data)
        return len(data)

    def flush(self) -> None:
        pass


def test_serve_adapts_to_a_text_sink_of_unknown_kind() -> None:
    out = _StrOnlyWriter()
    Server(Registry()).serve(io.BytesIO(json.dumps(request("ping", rid=1)).encode() + b"\n"), out)  # type: ignore[arg-type]
    assert out.parts == ['{"jsonrpc":"2.0","id":1,"result":{}}\n']


def test_serve_exits_on_eof_without_output() -> None:
    out = io.BytesIO()
    Server(Registry()).serve(io.BytesIO(b""), out)
    assert out.getvalue() == b""


def test_serve_skips_an_oversized_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("boost_cli.core.mcp.MAX_LINE_BYTES", 64)
    data = b'{"x": "' + b"a" * 500 + b'"}\n' + json.dumps(request("ping", rid=1)).encode() + b"\n"
    replies = run_serve(Server(Registry()), data)
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": PARSE_ERROR, "message": "parse error: message longer than 64 bytes"},
        },
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]


def sized_ping(rid: str, size: int) -> str:
    """A ping request of exactly ``size`` bytes (ASCII), its id padded."""
    line = json.dumps(request("ping", rid=rid))
    return json.dumps(request("ping", rid=rid + "x" * (size - len(line))))


@pytest.mark.parametrize("text", [False, True])
def test_serve_line_limit_is_exact(monkeypatch: pytest.MonkeyPatch, text: bool) -> None:
    """64 bytes (plus the newline) pass, also as the last line without one; 65 do not."""
    monkeypatch.setattr("boost_cli.core.mcp.MAX_LINE_BYTES", 64)
    fits, too_long, last = sized_ping("a", 64), sized_ping("b", 65), sized_ping("c", 64)
    data = f"{fits}\n{too_long}\n{last}"
    out: Any = io.StringIO() if text else io.BytesIO()
    stdin: Any = io.StringIO(data) if text else io.BytesIO(data.encode())
    Server(Registry()).serve(stdin, out)
    raw = out.getvalue()
    replies = [json.loads(line) for line in (raw if text else raw.decode()).splitlines()]
    assert [(r["id"], "error" in r) for r in replies] == [
        (json.loads(fits)["id"], False),
        (None, True),
        (json.loads(last)["id"], False),
    ]


def test_serve_refuses_lines_over_8_mib() -> None:
    big = json.dumps(request("ping", rid="x" * (8 * 1024 * 1024)))
    data = (big + "\n" + json.dumps(request("ping", rid=2)) + "\n").encode()
    replies = run_serve(Server(Registry()), data)
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": PARSE_ERROR,
                "message": "parse error: message longer than 8388608 bytes",
            },
        },
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    ]


class _ClosedPipe(io.BytesIO):
    def write(self, data: Any) -> int:
        raise BrokenPipeError


def test_serve_stops_quietly_when_the_client_hangs_up() -> None:
    lines = [json.dumps(request("ping", rid=i)).encode() + b"\n" for i in range(3)]
    stdin = io.BytesIO(b"".join(lines))
    Server(Registry()).serve(stdin, _ClosedPipe())
    assert stdin.read() == lines[1] + lines[2]  # nothing more was read once the reply failed


class _Refusing:
    def write(self, data: Any) -> int:
        raise TypeError("no")

    def flush(self) -> None:
        pass


def test_serve_fails_loudly_on_a_sink_that_takes_neither_text_nor_bytes() -> None:
    stdin = io.BytesIO(json.dumps(request("ping", rid=1)).encode() + b"\n")
    with pytest.raises(TypeError, match=r"^cannot write lines to _Refusing$"):
        Server(Registry()).serve(stdin, _Refusing())  # type: ignore[arg-type]


class _InterruptingInput(io.BytesIO):
    def readline(self, size: Optional[int] = -1) -> bytes:
        raise KeyboardInterrupt


def test_serve_returns_quietly_on_ctrl_c() -> None:
    out = io.BytesIO()
    Server(Registry()).serve(_InterruptingInput(), out)
    assert out.getvalue() == b""


def test_serve_stdio_in_a_subprocess_keeps_stdout_clean(tmp_path: Path) -> None:
    """A handler that prints and spawns a child writing to stdout cannot break the stream."""
    script = tmp_path / "srv.py"
    script.write_text(
        textwrap.dedent(
            """
            import logging, os, subprocess, sys, warnings
            from boost_cli.core.mcp import Registry, Server
            from boost_cli.core.mcp_log import log_to_stderr

            spare = open(os.devnull, "wb")  # fd 3: stray output must go to stderr, not here
            log = log_to_stderr()
            reg = Registry()

            def noisy(args):
                print("stray print")
                logging.getLogger("boost_cli.core.mcp").info("too quiet to show")
                logging.getLogger("boost_cli.core.mcp").warning("loud %s", 1)
                warnings.warn("careful")
                subprocess.run([sys.executable, "-c", "print('child output')"], check=True)
                return "clean"

            def stdin_is_devnull():
                return os.path.samestat(os.fstat(0), os.stat(os.devnull))

            def child_stdin(args):
                code = "import os; print(os.path.samestat(os.fstat(0), os.stat(os.devnull)))"
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                return out.stdout.strip()

            reg.register("noisy", "prints things", {"type": "object"}, noisy)
            reg.register("child_stdin", "what a child reads", {"type": "object"}, child_stdin)
            print("before serve")  # buffered: flushed to stdout before fd 1 is diverted
            Server(reg).serve_stdio()
            print("after serve", stdin_is_devnull())
            log.flush_for(5)
            """
        )
    )
    messages = [
        request("initialize", {"protocolVersion": "2025-06-18"}, rid=1),
        request("tools/call", {"name": "noisy", "arguments": {}}, rid=2),
        request("tools/call", {"name": "child_stdin", "arguments": {}}, rid=3),
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages) + "garbage\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONUNBUFFERED", None)  # as a client starts it: stdout block-buffered
    proc = subprocess.run(
        [sys.executable, str(script)],
        input=stdin.encode(),
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    out_lines = proc.stdout.decode("utf-8").splitlines()
    assert out_lines[0] == "before serve"
    replies = [json.loads(line) for line in out_lines[1:5]]
    assert [r["id"] for r in replies] == [1, 2, 3, None]
    assert replies[1]["result"]["content"][0]["text"] == "clean"
    # A child process cannot read the protocol's input: its stdin is /dev/null.
    assert replies[2]["result"]["content"][0]["text"] == "True"
    assert out_lines[5:] == ["after serve False"]  # fds 0 and 1 restored once serving ends
    assert b"stray print" in proc.stderr and b"child output" in proc.stderr
    # The log (log_to_stderr): boost's format, WARNING and up, Python's warnings included.
    err = proc.stderr.decode()
    assert "boost mcp: WARNING loud 1\n" in err and "too quiet" not in err
    assert re.search(r"^boost mcp: WARNING .*UserWarning: careful$", err, re.MULTILINE)


# --------------------------------------------------------------------------- the log


def read_until(fd: int, marker: bytes, seconds: float = 10.0) -> bytes:
    """What arrives on the pipe's read end ``fd`` until ``marker`` does (or time is up)."""
    os.set_blocking(fd, False)
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        try:
            seen += os.read(fd, 1 << 16)
        except BlockingIOError:
            time.sleep(0.01)
    return seen


@pytest.fixture
def pipe_log() -> Any:
    """A `StderrLog` (capacity 2, boost's format) on a pipe, behind its own logger."""
    read_fd, write_fd = os.pipe()
    handler = StderrLog(write_fd, capacity=2)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger = logging.getLogger("boost.test.stderr-log")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield read_fd, write_fd, handler, logger
    finally:
        logger.removeHandler(handler)
        os.close(read_fd)


def test_stderr_log_writes_each_record_as_a_line(pipe_log: Any) -> None:
    read_fd, _, handler, logger = pipe_log
    logger.error("first %s", "ü")
    logger.warning("second")
    handler.flush_for(5)  # returns once the writer has emptied the queue
    os.set_blocking(read_fd, False)
    assert os.read(read_fd, 1 << 16) == (
        "boost mcp: ERROR first ü\nboost mcp: WARNING second\n".encode()
    )
    assert handler.dropped == 0


def fill(fd: int) -> int:
    """Fill the pipe's write end ``fd`` as a client that never reads stderr does."""
    os.set_blocking(fd, False)
    filled = 0
    try:
        while True:
            filled += os.write(fd, b"." * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(fd, True)
    return filled


def test_stderr_log_drops_when_nobody_reads_and_says_how_many(pipe_log: Any) -> None:
    read_fd, write_fd, handler, logger = pipe_log
    filler = fill(write_fd)
    start = time.monotonic()
    for i in range(20):
        logger.error("line %d", i)  # the writer is stuck: at most 1 + 2 get through
    assert time.monotonic() - start < 2  # emit never waited on the pipe
    assert handler.dropped in (17, 18)
    seen = read_until(read_fd, b"nobody read stderr\n")
    *lines, last = seen[filler:].decode().splitlines()
    kept = [int(line.rsplit(" ", 1)[1]) for line in lines]
    assert lines == [f"boost mcp: ERROR line {i}" for i in kept]
    assert kept[0] == 0 and kept == sorted(kept) and len(kept) == 20 - handler.dropped
    assert last == f"boost mcp: {handler.dropped} log lines dropped: nobody read stderr"
    # Once the pipe drains, records get through again and nothing more is reported dropped.
    logger.error("after")
    assert read_until(read_fd, b"after\n") == b"boost mcp: ERROR after\n"
    # A second stall is counted on its own.
    first = handler.dropped
    filler = fill(write_fd)
    for i in range(10):
        logger.error("again %d", i)
    again = handler.dropped - first
    assert again in (7, 8)
    seen = read_until(read_fd, b"nobody read stderr\n")
    assert seen[filler:].decode().splitlines()[-1] == (
        f"boost mcp: {again} log lines dropped: nobody read stderr"
    )


def test_stderr_log_escapes_what_utf8_cannot_carry(pipe_log: Any) -> None:
    read_fd, _, handler, logger = pipe_log
    logger.error("lone \ud800 surrogate")
    handler.flush_for(5)
    assert read_until(read_fd, b"surrogate\n") == b"boost mcp: ERROR lone \\ud800 surrogate\n"


def test_stderr_log_flush_returns_once_the_queue_is_empty(pipe_log: Any) -> None:
    _, _, handler, _ = pipe_log
    start = time.monotonic()
    handler.flush_for(5)  # nothing queued: no wait for the deadline
    assert time.monotonic() - start < 2
