"""Property tests: no input crashes the server and every request gets its answer.

Arbitrary JSON values go to `Server.handle`, arbitrary bytes to
`Server.handle_line` and `Server.serve`. Bounded (300 examples, no deadline,
no example database) so the file stays fast and writes nothing; `make mutation`
runs it once per mutant and asks for fewer (MCP_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import io
import json
import math
import os
from typing import Any, Dict, List, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boost_cli.core.mcp import Registry, Server, ToolResult

FUZZ = settings(
    max_examples=int(os.environ.get("MCP_FUZZ_EXAMPLES", "300")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5},
        "kind": {"enum": ["skill", "rule"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def make_server() -> Server:
    reg = Registry()

    @reg.tool("boost_search", "search", SCHEMA, output_schema={"type": "object"})
    def search(args: Dict[str, Any]) -> ToolResult:
        assert isinstance(args["query"], str)  # the schema held
        assert isinstance(args.get("limit", 1), int)  # normalized
        return ToolResult(args["query"], {"n": args.get("limit", 1)})

    @reg.tool("echo", "echo", {"type": "object"})
    def echo(args: Dict[str, Any]) -> str:
        return json.dumps(args)

    return Server(reg)


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ids = (
    st.integers()
    | st.text(max_size=10)
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_values
)
methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "notifications/initialized",
        "resources/list",
    ]
) | st.text(max_size=15)
versions = st.sampled_from(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01"])
arguments = st.fixed_dictionaries(
    {},
    optional={
        "query": st.text(max_size=10) | json_values,
        "limit": st.integers(-2, 8) | st.floats(-2, 8, allow_nan=False) | json_values,
        "kind": st.sampled_from(["skill", "rule", "x"]),
        "tags": st.lists(st.text(max_size=5) | st.integers(), max_size=3),
        "extra": json_values,
    },
)
params = (
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["boost_search", "echo", "nope"]) | json_values,
            "arguments": arguments | json_values,
            "protocolVersion": versions | json_values,
            "cursor": st.none() | st.just("") | json_values,
        },
    )
    | json_values
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """Request-shaped dicts (most keys present, some wrong) or any JSON value."""
    if draw(st.integers(0, 4)) == 0:
        return draw(json_values)
    msg: Dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        msg["jsonrpc"] = (
            draw(st.just("2.0") | json_values) if draw(st.integers(0, 9)) == 0 else "2.0"
        )
    if draw(st.booleans()):
        msg["id"] = draw(ids)
    if draw(st.integers(0, 9)):
        msg["method"] = (
            draw(methods | json_values) if draw(st.integers(0, 9)) == 0 else draw(methods)
        )
    if draw(st.booleans()):
        msg["params"] = draw(params)
    if draw(st.integers(0, 9)) == 0:
        msg[draw(st.sampled_from(["result", "error", "x"]))] = draw(json_values)
    return msg


def is_response(msg: Any) -> bool:
    """A valid JSON-RPC 2.0 response object (the shape mcp_check accepts)."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "id" not in msg:
        return False
    if ("result" in msg) == ("error" in msg):
        return False
    if "error" in msg:
        err = msg["error"]
        return (
            isinstance(err, dict)
            and isinstance(err.get("code"), int)
            and isinstance(err.get("message"), str)
        )
    return isinstance(msg["result"], dict)


def valid_id(value: Any) -> bool:
    """MCP: a string or a number; never null, and a JSON number is finite and no boolean."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expects_answer(msg: Any) -> Optional[Any]:
    """The id a message must be answered with, or None when no answer is owed."""
    if isinstance(msg, dict) and "method" in msg and "id" in msg and valid_id(msg["id"]):
        return msg["id"]
    return None


def silent(msg: Any) -> bool:
    """Whether no reply is due: a well-formed notification, or a response (boost asks nothing)."""
    if not isinstance(msg, dict):
        return False
    if "method" not in msg:
        return "result" in msg or "error" in msg
    return "id" not in msg and msg.get("jsonrpc") == "2.0" and isinstance(msg["method"], str)


def check_reply_line(reply: Optional[str]) -> List[Dict[str, Any]]:
    if reply is None:
        return []
    assert "\n" not in reply and "\r" not in reply
    reply.encode("utf-8")
    parsed = json.loads(reply)
    items = parsed if isinstance(parsed, list) else [parsed]
    assert items and all(is_response(item) for item in items), reply
    return items


@FUZZ
@given(st.lists(messages(), min_size=1, max_size=6))
def test_handle_never_crashes_and_answers_every_request(batch: List[Any]) -> None:
    server = make_server()
    for msg in batch:
        response = server.handle(msg)
        owed = expects_answer(msg)
        if owed is not None:
            assert response is not None, msg
            assert response["id"] == owed and type(response["id"]) is type(owed)
        assert (response is None) == silent(msg), (msg, response)
        if response is not None:
            assert is_response(response), response
            check_reply_line(server._dump_response(response))


@FUZZ
@given(st.binary(max_size=200))
def test_handle_line_survives_any_bytes(data: bytes) -> None:
    server = make_server()
    check_reply_line(server.handle_line(data))
    check_reply_line(server.handle_line(data.decode("latin-1")))


@FUZZ
@given(messages(), st.integers(0, 3), st.binary(max_size=3))
def test_handle_line_answers_damaged_and_intact_messages(msg: Any, cut: int, junk: bytes) -> None:
    server = make_server()
    line = json.dumps(msg).encode("utf-8")
    items = check_reply_line(server.handle_line(line))
    owed = expects_answer(msg)
    if owed is not None and not isinstance(msg, list):
        assert [item["id"] for item in items] == [owed]
    damaged = line[: len(line) - cut] + junk if cut or junk else line
    check_reply_line(server.handle_line(damaged))


@FUZZ
@given(st.lists(st.binary(max_size=40) | messages(), min_size=1, max_size=8))
def test_serve_answers_every_request_in_order(parts: List[Any]) -> None:
    lines: List[bytes] = []
    expected: List[str] = []
    for i, part in enumerate(parts):
        if isinstance(part, bytes):
            lines.append(part.replace(b"\n", b" "))
        else:
            rid = f"serve-probe-{i}"  # longer than any fuzzed id, so unique
            lines.append(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode())
            expected.append(rid)
            lines.append(json.dumps(part).encode())
    out = io.BytesIO()
    make_server().serve(io.BytesIO(b"\n".join(lines)), out)
    raw = out.getvalue()
    assert raw == b"" or raw.endswith(b"\n")
    replies: List[Dict[str, Any]] = []
    for line in raw.split(b"\n")[:-1]:
        replies.extend(check_reply_line(line.decode("utf-8")))
    answered = [r["id"] for r in replies if r["id"] in expected]
    assert answered == expected
    assert all(r.get("result") == {} for r in replies if r["id"] in expected)
