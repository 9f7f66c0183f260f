"""Protocol 2026-07-28 in the I/O-free core (`Server.handle`, `core.protocol`) and the
Skills extension's naming rules (`skillmap`), without pipes."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pytest

from boost_cli.core import skillmap
from boost_cli.core.mcp import Registry, Server, Session, ToolResult
from boost_cli.core.models import Entry
from boost_cli.core.protocol import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    JsonRpcError,
    classify,
)

EXT = {"io.modelcontextprotocol/skills": {"directoryRead": True}}


def envelope(version: str = "2026-07-28", **extra: Any) -> Dict[str, Any]:
    meta = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_INFO_KEY: {"name": "t", "version": "1"},
        CLIENT_CAPABILITIES_KEY: {},
    }
    return {"_meta": meta, **extra}


def make_server() -> Server:
    reg = Registry()

    @reg.tool(
        "echo",
        "Echo a word, with a link.",
        {
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
            "additionalProperties": False,
        },
    )
    def echo(args: Dict[str, Any]) -> ToolResult:
        return ToolResult(args["word"], links=({"uri": "skill://t/x/SKILL.md", "name": "x"},))

    return Server(reg, instructions="hi", capabilities={"resources": {}}, extensions=EXT)


def req(method: str, params: Optional[Dict[str, Any]] = None, rid: int = 1) -> Dict[str, Any]:
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def test_discover_answers_versions_capabilities_and_cache_hints() -> None:
    got = make_server().handle(req("server/discover", envelope()))
    assert got is not None
    result = got["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {},
        "extensions": EXT,
    }
    assert result["instructions"] == "hi"
    assert result["resultType"] == "complete" and result["cacheScope"] == "public"
    assert result["ttlMs"] > 0
    assert result["_meta"][SERVER_INFO_KEY]["name"] == "boost"


def test_initialize_declares_no_extensions_and_stays_as_before() -> None:
    server = make_server()
    got = server.handle(req("initialize", {"protocolVersion": "2026-07-28"}))
    assert got is not None
    result = got["result"]
    assert result["protocolVersion"] == "2025-11-25"  # the handshake era's newest
    assert "extensions" not in result["capabilities"] and "resultType" not in result


def test_an_unknown_version_is_32022_with_every_supported_version() -> None:
    got = make_server().handle(req("tools/list", envelope("2099-01-01")))
    assert got is not None
    error = got["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert error["data"]["supported"][0] == "2026-07-28"
    assert "2025-11-25" in error["data"]["supported"]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}, "clientCapabilities"),
        ({"_meta": {PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {}}}, "string"),
        (
            envelope(**{"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: 1}}),
            "objects",
        ),
        ({}, "server/discover needs params._meta"),
    ],
)
def test_a_broken_envelope_is_invalid_params(params: Dict[str, Any], message: str) -> None:
    got = make_server().handle(req("server/discover", params))
    assert got is not None and got["error"]["code"] == -32602
    assert message in got["error"]["message"]


def test_modern_requests_need_no_session_and_ignore_the_handshake() -> None:
    server = make_server()
    server.handle(req("initialize", {"protocolVersion": "2024-11-05"}))
    # the 2024-11-05 session would make bad arguments a protocol error; a modern request
    # carries its own version, so they are a tool error (SEP-1303) whatever came before
    bad = server.handle(req("tools/call", envelope(name="echo", arguments={})))
    assert bad is not None and bad["result"]["isError"] is True
    assert bad["result"]["resultType"] == "complete"
    old = server.handle(req("tools/call", {"name": "echo", "arguments": {}}))
    assert old is not None and old["error"]["code"] == -32602
    fresh = server.handle(req("tools/list", envelope()), Session())
    assert fresh is not None and fresh["result"]["cacheScope"] == "public"
    assert server.protocol_version == "2024-11-05"


def test_resource_links_only_from_2025_06_18() -> None:
    server = make_server()
    modern = server.handle(req("tools/call", envelope(name="echo", arguments={"word": "a"})))
    assert modern is not None
    assert [c["type"] for c in modern["result"]["content"]] == ["text", "resource_link"]
    old = Session()
    server.handle(req("initialize", {"protocolVersion": "2025-03-26"}), old)
    legacy = server.handle(req("tools/call", {"name": "echo", "arguments": {"word": "a"}}), old)
    assert legacy is not None
    assert [c["type"] for c in legacy["result"]["content"]] == ["text"]


def test_classify_reads_only_the_request() -> None:
    assert classify("tools/list", {}, "2025-06-18").version == "2025-06-18"
    assert classify("tools/list", {"_meta": {"progressToken": 1}}, None).modern is False
    call = classify("tools/list", envelope(), "2024-11-05")
    assert call.modern and call.version == "2026-07-28"
    assert call.client_info == {"name": "t", "version": "1"}
    with pytest.raises(JsonRpcError):
        classify("ping", envelope("2025-11-25"), None)  # a handshake version is no envelope's


def test_add_method_refuses_a_clash() -> None:
    server = make_server()
    with pytest.raises(ValueError):
        server.add_method("tools/list", lambda p, c: {})
    with pytest.raises(ValueError):
        server.add_method("initialize", lambda p, c: {})


# --------------------------------------------------------------------------- naming rules


@pytest.mark.parametrize(
    "name, problem",
    [
        ("pdf-tools", None),
        ("a", None),
        ("x" * 64, None),
        ("x" * 65, "bad-name"),
        ("PDF", "bad-name"),
        ("two words", "bad-name"),
        ("double--hyphen", "bad-name"),
        ("-lead", "bad-name"),
        ("trail-", "bad-name"),
        ("under_score", "bad-name"),
        ("", "no-name"),
        (None, "no-name"),
        (12, "no-name"),
    ],
)
def test_agent_skills_naming_rules(name: Any, problem: Optional[str]) -> None:
    assert skillmap.name_problem(name) == problem


def _entry(rel_dir: str, tap: str = "t") -> Entry:
    return Entry("x", "skill", "d", tap, rel_dir, f"{rel_dir}/SKILL.md" if rel_dir else "SKILL.md")


@pytest.mark.parametrize(
    "rel_dir, text, reason",
    [
        ("skills/pdf", "---\nname: pdf\ndescription: d\n---\n", None),
        ("skills/pdf", "---\nname: other\ndescription: d\n---\n", "name-mismatch"),
        ("skills/pdf", "---\nname: pdf\n---\n", "no-description"),
        (
            "skills/pdf",
            "---\nname: pdf\ndescription: '" + "x" * 1025 + "'\n---\n",
            "no-description",
        ),
        ("skills/pdf", "---\nname: pdf\ndescription: [\n---\n", "frontmatter"),
        ("skills/pdf", "no frontmatter at all\n", "no-name"),
        ("my skills/pdf", "---\nname: pdf\ndescription: d\n---\n", "bad-path"),
        ("", "---\nname: t\ndescription: d\n---\n", None),  # a skill at the root of tap t
    ],
)
def test_judge(rel_dir: str, text: str, reason: Optional[str]) -> None:
    assert skillmap.judge(_entry(rel_dir), text)[0] == reason


def test_uris_are_ascii_with_encoded_file_names() -> None:
    assert skillmap.file_uri("t", "a/b", "x y/é.md") == "skill://t/a/b/x%20y/%C3%A9.md"
    assert skillmap.file_uri("t", "", "SKILL.md") == "skill://t/SKILL.md"


@pytest.mark.parametrize(
    "raw, rejected",
    [
        ("description: Use when: tests fail\n", True),
        ("metadata:\n  note: a: b\n", True),
        ("description: ends with:\n", True),
        ('description: "Use when: quoted"\n', False),
        ("url: https://example.com/x\n", False),
        ("time: 10:30\n", False),
        ("description: |\n  IMPORTANT: inside a block\nname: x\n", False),
        ("description: >-\n  a: b\nname: bad: x\n", True),
        ("description: fine # a comment: here\n", False),
    ],
)
def test_frontmatter_yaml_parsers_reject_is_refused(raw: str, rejected: bool) -> None:
    assert (skillmap.yaml_rejects(raw) is not None) == rejected
