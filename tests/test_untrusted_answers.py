"""Issue 17 (items 2 and 3): what a model's answer can do to what boost shows — through the
real CLI and the real `boost mcp` server, against a 127.0.0.1 Messages API stub that speaks
the real wire format (tests/anthropic_stub.py).

Item 2: an endpoint that echoes the ``x-api-key`` header back in a *successful* answer gets
the key neither printed (text, ``--json``, MCP text and structured content, ``--explain``)
nor written into the expansion cache.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from boost_cli.core import expand, rerank
from tests.anthropic_stub import AnthropicStub, RecordedRequest, StubReply
from tests.helpers import indexed_example, run_boost
from tests.test_mcp_server import McpProcess, _path_without_llm

# Shaped like no known key (no sk-/pa-/key- prefix): only the exact-secret rule can catch it.
KEY = "Zq7-my-very-own-secret-0123456789"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("answers"), "ex")


def _ids(request: RecordedRequest) -> List[str]:
    """The candidate ids a rerank prompt offers, in order."""
    user = request.body["messages"][0]["content"]
    return re.findall(r'"id": "([^"]+)"', user) or re.findall(r"^id: (.+)$", user, re.M)


def _is_expansion(request: RecordedRequest) -> bool:
    return '{"keywords": [' in str(request.body.get("system", ""))


def echo_key(request: RecordedRequest) -> StubReply:
    """A 2xx answer that quotes the caller's key: raw, and JSON-escaped (\\u0041 forms)."""
    key = request.headers["x-api-key"]
    escaped = "".join(f"\\u{ord(c):04x}" for c in key)  # JSON text, as a model may write it
    if _is_expansion(request):
        return StubReply(text=f'{{"keywords": ["pdf", "{key}", "acroform", "{escaped}"]}}')
    ids = _ids(request)
    picks = [
        f'{{"id": "{ids[0]}", "why": "your key is {key}, fill forms"}}',
        f'{{"id": "{ids[1]}", "why": "again {escaped}"}}',
    ]
    return StubReply(text=f'{{"picks": [{", ".join(picks)}]}}')


@pytest.fixture
def stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as server:
        yield server


def _env(stub: AnthropicStub) -> Dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": stub.base_url,
        "PATH": _path_without_llm(),
    }


def _files_under(root: Path) -> str:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_a_key_echoed_in_a_2xx_answer_is_never_shown_or_cached(
    home: Path, stub: AnthropicStub
) -> None:
    """Item 2, the CLI: text, --json and --explain; the expansion cache on disk."""
    stub.responder = echo_key
    env = _env(stub)
    for args in (["--explain"], ["--json"]):
        r = run_boost(["search", "fill", "pdf", "forms", *args], home, env=env)
        assert r.returncode == 0, r.stderr
        assert KEY not in r.stdout + r.stderr
        assert "Zq7-my-very" not in r.stdout + r.stderr  # not even a clipped part of it
    hits = json.loads(run_boost(["search", "fill pdf forms", "--json"], home, env=env).stdout)
    assert "your key is ***, fill forms" in hits[0]["why"]
    assert hits[1]["why"] == "again ***"
    assert len(stub.requests) >= 4  # the stub was asked: expansion and rerank
    cache = home / "cache" / "expansions"
    assert list(cache.glob("*.json"))
    written = _files_under(cache)
    assert KEY not in written and "acroform" in written


def test_a_key_echoed_in_a_2xx_answer_never_reaches_an_agent(
    home: Path, stub: AnthropicStub
) -> None:
    """Item 2, MCP: boost_search with rerank, its text and its structured content."""
    stub.responder = echo_key
    proc = McpProcess(home, env=_env(stub))
    try:
        proc.initialize()
        result = proc.call_result(
            "boost_search", {"query": "fill pdf forms", "keywords": ["pdf"], "rerank": True}
        )
        assert stub.requests, "the reranker was not asked"
        wire = json.dumps(result)
        assert KEY not in wire and "Zq7-my-very" not in wire
        assert "your key is ***" in result["content"][0]["text"]
    finally:
        proc.kill()
    assert all(KEY.encode() not in line for line in proc.lines)


def test_the_parsers_redact_like_error_messages() -> None:
    """Item 2, the rule: the exact secret, anything shaped like a key, a URL password —
    before a why is clipped, so no part of a key survives the cut."""
    long_why = "x" * 190 + " " + KEY
    answer = json.dumps(
        {
            "picks": [
                {"id": "a", "why": long_why},
                {"id": "b", "why": "see https://u:hunter2@host/ and sk-ant-api03-abcdefghij"},
            ]
        }
    )
    picks = rerank.parse_picks(answer, {"a", "b"}, (KEY,))
    assert "Zq7" not in picks[0][1] and picks[0][1].endswith("***")
    assert "hunter2" not in picks[1][1] and "sk-ant" not in picks[1][1]
    words = expand.parse_keywords(
        json.dumps({"keywords": ["pdf", KEY, "sk-live-0123456789"]}), (KEY,)
    )
    assert words == ["pdf"]


def test_an_old_expansion_cache_holding_a_key_is_asked_again(tmp_path: Path) -> None:
    """Item 2: a cache file written before the fix is a miss (and is then overwritten)."""
    cache = expand.ExpansionCache(tmp_path)
    cache.put("m", "task", ["pdf", KEY])
    assert cache.get("m", "task") == ("pdf", KEY)  # without the secret, nothing to hide
    assert cache.get("m", "task", (KEY,)) is None
