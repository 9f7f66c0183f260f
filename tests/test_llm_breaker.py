"""The LLM circuit breaker and the persistent switch, with a fake `claude` that is installed
but not logged in (it fails every call, as the real one does, and counts its calls)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from tests.helpers import indexed_example, run_boost
from tests.test_mcp_server import McpProcess

FAKE = """#!/usr/bin/env python3
import os, sys
sys.stdin.read()
with open(os.environ["CALLS"], "a") as fh:
    fh.write("call\\n")
if os.environ.get("FAKE_OK"):
    print('{"type": "result", "is_error": false, "result": "{\\\\"keywords\\\\": [\\\\"jest\\\\"]}"}')
    sys.exit(0)
print("Error: Invalid API key · Please run /login", file=sys.stderr)
sys.exit(1)
"""


@pytest.fixture
def setup(tmp_path: Path):
    home = indexed_example(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(FAKE)
    claude.chmod(claude.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "calls"
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "CALLS": str(calls)}
    return home, env, calls


def n_calls(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def _llm_notes(stderr: str) -> list:
    """The notes about the LLM (the keyword-bound hint that follows a search by words alone
    is another matter: it says how to get search by meaning)."""
    return [
        line
        for line in stderr.splitlines()
        if line.startswith("note:") and "ranked by your words alone" not in line
    ]


def test_a_failing_claude_is_asked_once_then_passed_over(setup) -> None:
    home, env, calls = setup
    r = run_boost(["search", "test my React app"], home, env=env)
    assert r.returncode == 0
    assert n_calls(calls) == 1  # the expansion failed; the rerank did not ask again
    assert len(_llm_notes(r.stderr)) == 1 and "Please run /login" in r.stderr
    t0 = time.monotonic()
    r = run_boost(["search", "write a migration", "--explain"], home, env=env)
    assert n_calls(calls) == 1 and _llm_notes(r.stderr) == []
    assert time.monotonic() - t0 < 5
    assert "rerank: unavailable: the claude CLI failed" in r.stdout
    assert "not asked again for 15 min" in r.stdout
    doc = run_boost(["doctor"], home, env=env)
    assert "rerank: not working — the claude CLI failed" in doc.stdout
    assert "rerank: claude CLI\n" not in doc.stdout and doc.returncode == 1
    assert "run 'claude' once to log in" in doc.stdout
    rep = json.loads(run_boost(["doctor", "--json"], home, env=env).stdout)
    assert "cli" in rep["llm"]["failing"]
    # the cool-down over, it is asked again; a success clears the record
    path = home / "cache" / "llm-breaker.json"
    data = json.loads(path.read_text())
    data["cli"]["until"] = time.time() - 1
    path.write_text(json.dumps(data))
    r = run_boost(["search", "lint my python", "--no-rerank"], home, env={**env, "FAKE_OK": "1"})
    assert n_calls(calls) == 2 and "note:" not in r.stderr
    assert "cli" not in json.loads(path.read_text())
    assert "rerank: claude CLI" in run_boost(["doctor"], home, env=env).stdout


def test_the_switch_env_and_config(setup) -> None:
    home, env, calls = setup
    r = run_boost(
        ["search", "test my React app", "--explain"], home, env={**env, "BOOST_NO_LLM": "1"}
    )
    assert n_calls(calls) == 0 and "turned off by BOOST_NO_LLM" in r.stdout
    assert run_boost(["config", "set", "llm", "off"], home).returncode == 0
    assert run_boost(["config", "get", "llm"], home).stdout.strip() == "off"
    r = run_boost(["search", "test my React app"], home, env=env)
    assert n_calls(calls) == 0 and r.returncode == 0
    assert "turned off by 'boost config set llm off'" in run_boost(["doctor"], home, env=env).stdout
    assert run_boost(["config", "set", "llm", "on"], home).returncode == 0
    run_boost(["search", "test my React app"], home, env=env)
    assert n_calls(calls) == 1


def test_config_limit_and_engine(setup) -> None:
    home, env, _ = setup
    bad = run_boost(["config", "set", "limit", "0"], home)
    assert bad.returncode == 2 and "from 1 to 100" in bad.stderr
    assert run_boost(["config", "set", "nope", "1"], home).returncode == 2
    assert run_boost(["config", "set", "limit", "2"], home).returncode == 0
    assert run_boost(["config", "set", "engine", "lexical"], home).returncode == 0
    r = run_boost(["search", "test my React app", "--json", "--no-llm", "--explain"], home)
    assert len(json.loads(r.stdout)) == 2 and '"engine": "lexical"' in r.stderr
    listed = json.loads(run_boost(["config", "list", "--json"], home).stdout)
    assert {x["name"]: x["value"] for x in listed} == {
        "llm": "on",
        "llm.provider": "auto",
        "limit": 2,
        "engine": "lexical",
        "enrich.allow_egress": False,
        "advice.semantic": True,
        "advice.sqlite": True,
    }
    assert run_boost(["config", "unset", "limit"], home).returncode == 0
    assert run_boost(["config", "get", "limit"], home).stdout.strip() == "10"


def test_mcp_rerank_uses_the_breaker(setup) -> None:
    home, env, calls = setup
    mcp = McpProcess(home, {**env, "PATH": env["PATH"]})
    try:
        mcp.initialize()
        for _ in range(3):
            res = mcp.call_result("boost_search", {"query": "test my React app", "rerank": True})
            assert not res.get("isError")
        assert n_calls(calls) == 1
    finally:
        mcp.close()
