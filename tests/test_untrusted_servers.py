"""Issue 10: what a slow, huge or nosy server can do to boost — through the real CLI and
MCP server, against 127.0.0.1 servers (tests/hostile_server.py) and a fake `claude`.

Items: 5 (a whole-call deadline on every network call and on `claude`), 8 (every read
capped), 16 (credentials in URLs are never printed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.embed_stubs import StubEmbedServer
from tests.helpers import ROOT, indexed_example, run_boost
from tests.hostile_server import HostileServer
from tests.test_mcp_server import McpProcess, _path_without_llm

FAKE_CLAUDE = ROOT / "tests" / "fakebin_claude"
KEY = "sk-test-key-0123456789"
MEMORY_LIMIT = 768 * 1024 * 1024  # address space for a boost that must not read 1 GB


@pytest.fixture(scope="module")
def tapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("servers"), "ex")


def _boost(
    args: List[str], home: Path, env: Dict[str, str], limit: Optional[int] = None
) -> subprocess.CompletedProcess:
    """The real CLI; with ``limit``, its address space is capped (a read of everything the
    server sends would fail)."""

    # Each test meets its own hostile server: forget the previous test's failure (the
    # LLM circuit breaker would pass over the backend), and give keywords so the search
    # does not expand first, the rerank is what meets the server.
    (home / "cache" / "llm-breaker.json").unlink(missing_ok=True)
    if args[:1] == ["search"] and "--no-rerank" not in args:
        args = [*args, "--keywords", "jest"]

    def cap() -> None:
        import resource

        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env={**os.environ, "BOOST_HOME": str(home), "PATH": _path_without_llm(), **env},
        capture_output=True,
        text=True,
        timeout=30,
        cwd=str(ROOT),
        preexec_fn=cap if limit else None,
    )


# --------------------------------------------------------------------------- item 5


@pytest.mark.parametrize("mode", ["drip", "drip-headers"])
def test_a_dripping_messages_api_cannot_hang_search(tapped: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        env = {
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": server.base_url,
            "BOOST_RERANK_TIMEOUT": "1.5",
            "BOOST_EXPAND_TIMEOUT": "1.5",
        }
        start = time.monotonic()
        r = _boost(["search", "jest", "tests"], tapped, env)
        elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert elapsed < 8, f"search took {elapsed:.1f} s with a 1.5 s rerank deadline"
    assert "note: rerank skipped: Messages API timed out" in r.stderr
    assert "ex:jest-runner" in r.stdout


@pytest.fixture(scope="module")
def dense_home(tmp_path_factory: pytest.TempPathFactory, tapped: Path) -> Path:
    """``tapped`` with a dense store built by a well-behaved embeddings server."""
    import shutil

    home = tmp_path_factory.mktemp("dense") / "home"
    shutil.copytree(tapped, home, symlinks=True)
    with StubEmbedServer("openai") as stub:
        env = {"BOOST_EMBED_BASE_URL": stub.base_url, "BOOST_EMBED_MODEL": "stub-model"}
        r = _boost(["reindex", "--dense", "--yes"], home, env)
        assert r.returncode == 0, r.stderr
    return home


@pytest.mark.parametrize("mode", ["drip", "drip-headers"])
def test_a_dripping_embedding_api_cannot_hang_search(dense_home: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        env = {
            "BOOST_EMBED_BASE_URL": f"{server.base_url}/v1",
            "BOOST_EMBED_MODEL": "stub-model",
            "BOOST_EMBED_TIMEOUT": "1",
        }
        start = time.monotonic()
        r = _boost(["search", "jest", "tests", "--no-rerank"], dense_home, env)
        elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert elapsed < 8, f"search took {elapsed:.1f} s with a 1 s embedding deadline"
    assert "timed out" in r.stderr and "ex:jest-runner" in r.stdout


def test_a_dripping_server_does_not_stop_the_mcp_server(tapped: Path) -> None:
    """Item 5: the single-threaded MCP server answers ping right after a reranked search
    against a server that never finishes its answer."""
    with HostileServer("drip") as server:
        env = {
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": server.base_url,
            "BOOST_RERANK_TIMEOUT": "1.5",
            "BOOST_EXPAND_TIMEOUT": "1.5",
        }
        mcp = McpProcess(tapped, env=env)
        try:
            mcp.initialize()
            start = time.monotonic()
            found = mcp.call_result("boost_search", {"query": "jest tests", "rerank": True})
            assert found["isError"] is False
            assert mcp.request("ping")["result"] == {}
            assert time.monotonic() - start < 8
            assert mcp.close() == 0
        finally:
            mcp.kill()


def test_a_claude_cli_that_never_answers_is_killed_at_the_deadline(tapped: Path) -> None:
    env = {
        "PATH": f"{FAKE_CLAUDE}{os.pathsep}{_path_without_llm()}",
        "FAKE_CLAUDE_MODE": "sleep",
        "BOOST_RERANK_TIMEOUT": "1",
        "BOOST_EXPAND_TIMEOUT": "1",
    }
    start = time.monotonic()
    r = _boost(["search", "jest", "tests"], tapped, env)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - start < 8
    assert "note: rerank skipped: claude CLI timed out" in r.stderr


# --------------------------------------------------------------------------- item 8


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("mode", ["huge", "huge-unsized"])
def test_a_huge_messages_api_answer_is_not_read(tapped: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
        r = _boost(["search", "jest", "tests"], tapped, env, limit=MEMORY_LIMIT)
    assert r.returncode == 0, r.stderr
    assert "note: rerank skipped: the Messages API answer is larger than" in r.stderr
    assert "ex:jest-runner" in r.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("mode", ["huge", "huge-unsized"])
def test_a_huge_embedding_answer_is_not_read(dense_home: Path, mode: str) -> None:
    with HostileServer(mode) as server:
        env = {"BOOST_EMBED_BASE_URL": f"{server.base_url}/v1", "BOOST_EMBED_MODEL": "stub-model"}
        r = _boost(["search", "jest", "--no-rerank"], dense_home, env, limit=MEMORY_LIMIT)
    assert r.returncode == 0, r.stderr
    assert "answer is larger than" in r.stderr and "ex:jest-runner" in r.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_a_huge_claude_answer_is_not_read(tapped: Path) -> None:
    env = {
        "PATH": f"{FAKE_CLAUDE}{os.pathsep}{_path_without_llm()}",
        "FAKE_CLAUDE_MODE": "huge",
    }
    start = time.monotonic()
    r = _boost(["search", "jest", "tests"], tapped, env, limit=MEMORY_LIMIT)
    assert r.returncode == 0, r.stderr
    assert "note: rerank skipped: the claude CLI printed more than" in r.stderr
    assert time.monotonic() - start < 15


# --------------------------------------------------------------------------- item 16

SECRET = "s3cret-P@ss"
USERINFO = f"someone:{SECRET}"


def _assert_hidden(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and "s3cret" not in text, text


def test_a_password_in_the_embedding_url_is_never_printed(dense_home: Path) -> None:
    """Item 16: a URL that is not http(s), an unreachable one, and a failing server."""
    with StubEmbedServer("openai") as failing:
        failing.default = "500"
        urls = [
            f"ftp://{USERINFO}@127.0.0.1/v1",
            f"http://{USERINFO}@127.0.0.1:9/v1",
            f"http://{USERINFO}@127.0.0.1:{failing.port}/v1",
        ]
        for url in urls:
            env = {"BOOST_EMBED_BASE_URL": url, "BOOST_EMBED_MODEL": "stub-model"}
            for args in (
                ["search", "jest", "--explain", "--no-rerank"],
                ["search", "jest", "--engine", "dense"],
                ["reindex", "--dense", "--yes", "--force"],
                ["doctor"],
                ["doctor", "--json"],
            ):
                r = _boost(args, dense_home, env)
                _assert_hidden(r.stdout, r.stderr)


def test_a_password_in_the_anthropic_url_is_never_printed(tapped: Path) -> None:
    with HostileServer("drip") as server:
        base = server.base_url.replace("http://", f"http://{USERINFO}@")
        for url in (base, f"ftp://{USERINFO}@127.0.0.1"):
            env = {
                "ANTHROPIC_API_KEY": KEY,
                "ANTHROPIC_BASE_URL": url,
                "BOOST_RERANK_TIMEOUT": "1",
                "BOOST_EXPAND_TIMEOUT": "1",
            }
            r = _boost(["search", "jest", "--explain"], tapped, env)
            _assert_hidden(r.stdout, r.stderr)


def test_redact_masks_userinfo_holding_an_at_sign() -> None:
    from boost_cli.core.http import redact

    assert redact(f"http://{USERINFO}@host:1/v1 and https://u:p@h/x") == (
        "http://***@host:1/v1 and https://***@h/x"
    )


def test_a_token_in_a_tap_source_is_not_printed(tapped: Path, tmp_path: Path) -> None:
    """Item 16: a source URL written with a token (a private repo) shows masked."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(tapped, home, symlinks=True)
    cfg = json.loads((home / "config.json").read_text())
    cfg["taps"]["ex"]["source"] = f"https://{USERINFO}@git.example/team/skills.git"
    (home / "config.json").write_text(json.dumps(cfg))
    r = run_boost(["taps"], home)
    assert r.returncode == 0 and "https://***@git.example/team/skills.git" in r.stdout
    _assert_hidden(r.stdout, r.stderr)
