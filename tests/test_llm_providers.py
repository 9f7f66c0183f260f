"""Every LLM provider through the real CLI: OpenAI-compatible Chat Completions (OpenAI, an
Ollama-style server with no key, a BOOST_LLM_BASE_URL server), the Gemini API, and the
codex and gemini CLIs (fakes taking the real packages' flags), against 127.0.0.1 stubs
speaking each wire format. Success, timeout, 429 with retry-after, 401, a malformed answer,
a huge answer, a redirect, a CLI not logged in; the key never in any output, log or cache;
the auto order and its overrides."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from boost_cli.core import llm, settings
from tests.helpers import ROOT, indexed_example, run_boost
from tests.llm_stubs import ChatStub, GeminiStub, Reply

KEY = "sk-proj-TESTKEYtestkey0123456789secret"
GKEY = "AIzaSyTESTgeminiKEY0123456789abcdef"
AGENTS = ROOT / "tests" / "fakebin_agents"
SEARCH = ["search", "test my React app", "--explain"]


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("llm"))


@pytest.fixture
def home(shared_home: Path) -> Path:
    """The indexed example home with no breaker record and no cached expansion."""
    for name in ("llm-breaker.json",):
        (shared_home / "cache" / name).unlink(missing_ok=True)
    for cached in (shared_home / "cache" / "expansions").glob("*.json"):
        cached.unlink()
    return shared_home


def base_env(**extra: str) -> Dict[str, str]:
    """No LLM on PATH (no claude, codex or gemini) unless a test adds one."""
    return {"PATH": os.path.dirname(os.sys.executable) + os.pathsep + "/usr/bin:/bin", **extra}


def agents_env(**extra: str) -> Dict[str, str]:
    return {**base_env(**extra), "PATH": f"{AGENTS}{os.pathsep}/usr/bin:/bin"}


def everything(home: Path) -> str:
    """Every file under the home, as text: where a key must never be."""
    out = []
    for path in home.rglob("*"):
        if path.is_file():
            out.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(out)


@pytest.fixture
def chat() -> Iterator[ChatStub]:
    with ChatStub(key=KEY) as stub:
        yield stub


@pytest.fixture
def gemini() -> Iterator[GeminiStub]:
    with GeminiStub(key=GKEY) as stub:
        yield stub


def openai_env(stub: ChatStub, **extra: str) -> Dict[str, str]:
    return base_env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=stub.base_url, **extra)


def gemini_env(stub: GeminiStub, **extra: str) -> Dict[str, str]:
    return base_env(GEMINI_API_KEY=GKEY, GOOGLE_GEMINI_BASE_URL=stub.base_url, **extra)


# --------------------------------------------------------------------------- OpenAI


def test_openai_expands_and_reranks(home: Path, chat: ChatStub) -> None:
    r = run_boost(SEARCH, home, env=openai_env(chat))
    assert r.returncode == 0, r.stderr
    assert [s.is_expansion for s in chat.requests] == [True, False]
    first = chat.requests[0]
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body["model"] == "gpt-4.1-mini" and first.body["max_tokens"] == 200
    assert first.body["messages"][1]["content"] == "Task: test my React app"
    endpoint = re.escape(chat.base_url)
    assert re.search(rf"rerank: ok \(openai, {endpoint}, on this machine\)", r.stdout)
    assert "keywords (from the LLM): jest, component tests" in r.stdout
    doc = run_boost(["doctor"], home, env=openai_env(chat))
    assert f"rerank: OpenAI API, model gpt-4.1-mini at {chat.base_url} (on this machine)" in (
        doc.stdout
    )
    assert KEY not in r.stdout + r.stderr + doc.stdout + doc.stderr


def test_ollama_style_server_with_no_key(home: Path) -> None:
    with ChatStub(key=None) as stub:
        # what small local models send: content as parts with a reasoning field beside it,
        # then picks in prose and a code fence, with a trailing comma and a spaced id
        stub.push(
            Reply(
                content=[{"type": "text", "text": '{"keywords": ["jest", "react testing",]}'}],
                extra={"reasoning_content": "The user wants tests."},
            ),
            Reply(
                text='Sure! Here are the picks:\n```json\n{"picks": [{"id": " example:jest-runner ",'
                ' "why": "runs Jest tests"},]}\n```\nHope that helps.'
            ),
        )
        env = base_env(
            BOOST_LLM_PROVIDER="ollama",
            BOOST_LLM_BASE_URL=stub.base_url,
            BOOST_LLM_MODEL="qwen2.5:3b",
            OPENAI_API_KEY=KEY,
        )
        r = run_boost(SEARCH, home, env=env)
        doc = run_boost(["doctor", "--json"], home, env=env)
    assert r.returncode == 0, r.stderr
    assert [s.is_expansion for s in stub.requests] == [True, False]
    assert all("authorization" not in s.headers for s in stub.requests)  # no key, not OpenAI's
    assert stub.requests[0].body["model"] == "qwen2.5:3b"
    assert "keywords (from the LLM): jest, react testing" in r.stdout
    assert re.search(
        r"rerank: ok \(ollama, http://127\.0\.0\.1:\d+/v1, on this machine\)", r.stdout
    )
    assert re.search(r"^ 1\. example:jest-runner", r.stdout, re.M)
    assert "runs Jest tests" in r.stdout
    provider = json.loads(doc.stdout)["llm"]["provider"]
    assert provider == {
        "backend": "ollama",
        "title": "Ollama",
        "named": True,
        "model": "qwen2.5:3b",
        "endpoint": stub.base_url,
        "local": True,
    }


def test_a_local_reasoning_models_thinking_is_not_the_answer(home: Path) -> None:
    with ChatStub(key=None) as stub:
        stub.push(
            Reply(
                text='<think>Maybe {"keywords": ["wrong"]} fits.</think>\n{"keywords": ["vitest"]}'
            )
        )
        env = base_env(BOOST_LLM_BASE_URL=stub.base_url)
        r = run_boost(["search", "test my React app", "--explain", "--no-rerank"], home, env=env)
    assert "keywords (from the LLM): vitest" in r.stdout, r.stdout


def test_a_base_url_comes_first_and_never_gets_the_openai_key(home: Path) -> None:
    with ChatStub(key=None) as stub:
        env = base_env(
            BOOST_LLM_BASE_URL=stub.base_url, OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY="sk-ant-x"
        )
        r = run_boost(SEARCH, home, env=env)
    assert r.returncode == 0, r.stderr
    assert "rerank: ok (openai-compatible, http://127.0.0.1:" in r.stdout
    assert stub.requests and all("authorization" not in s.headers for s in stub.requests)
    assert stub.requests[0].body["model"] == "default"


def test_answer_shapes_that_hold_no_text(home: Path, chat: ChatStub) -> None:
    # a reasoning model out of tokens (finish_reason length, content null), then a refusal
    chat.push(
        Reply(content=None, finish="length", extra={"reasoning": "thinking..."}),
        Reply(content=None, extra={"refusal": "I can't help with that."}),
    )
    r = run_boost(SEARCH, home, env=openai_env(chat))
    assert r.returncode == 0, r.stderr
    assert "no text (finish_reason length: it used its tokens before it answered" in r.stdout
    assert "the model declined to answer: I can't help with that." in r.stdout
    # neither says the backend is down: no breaker record, the next search asks again
    assert not (home / "cache" / "llm-breaker.json").exists() or "openai" not in json.loads(
        (home / "cache" / "llm-breaker.json").read_text()
    )


def test_an_error_object_in_a_200(home: Path, chat: ChatStub) -> None:
    chat.push(Reply(raw=json.dumps({"error": {"message": "upstream overloaded", "code": 502}})))
    r = run_boost(SEARCH, home, env=openai_env(chat))
    assert "returned an error: 502: upstream overloaded" in r.stdout + r.stderr
    assert len(chat.requests) == 1  # it trips the breaker: the rerank does not ask


# --------------------------------------------------------------------------- failures


FAILURES = [
    ("timeout", [Reply(delay=5)], "timed out after"),
    ("malformed", [Reply(raw="{not json")], "returned malformed JSON"),
    ("huge", [Reply(size=5 * 1024 * 1024)], "answer is larger than 4 MB"),
    (
        "redirect",
        [Reply(status=302, raw=b"", headers={"location": "http://127.0.0.1:9/steal"})],
        "HTTP 302",
    ),
]


@pytest.mark.parametrize("name,replies,said", FAILURES, ids=[f[0] for f in FAILURES])
@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_http_failures_degrade_in_one_line(
    home: Path, provider: str, name: str, replies: List[Reply], said: str
) -> None:
    stub = ChatStub(key=KEY) if provider == "openai" else GeminiStub(key=GKEY)
    with stub:
        stub.push(*replies)
        extra = {"BOOST_EXPAND_TIMEOUT": "1", "BOOST_RERANK_TIMEOUT": "1"}
        env = openai_env(stub, **extra) if provider == "openai" else gemini_env(stub, **extra)
        r = run_boost(SEARCH, home, env=env)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert said in r.stdout, r.stdout
    assert re.search(r"^ 1\. example:", r.stdout, re.M)  # BM25 order, still answered
    assert KEY not in r.stdout + r.stderr and GKEY not in r.stdout + r.stderr
    if name == "redirect":
        assert len(stub.requests) == 1  # not followed (nothing at the Location was asked)


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_429_is_retried_after_retry_after(home: Path, provider: str) -> None:
    stub = ChatStub(key=KEY) if provider == "openai" else GeminiStub(key=GKEY)
    with stub:
        stub.push(Reply(status=429, message="Rate limit reached", headers={"retry-after": "0.2"}))
        env = openai_env(stub) if provider == "openai" else gemini_env(stub)
        r = run_boost(SEARCH, home, env=env)
    assert r.returncode == 0, r.stderr
    assert [s.is_expansion for s in stub.requests] == [True, True, False]
    assert "expansion: ok" in r.stdout and "rerank: ok" in r.stdout


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_refused_key_is_said_once_and_never_shown(home: Path, provider: str) -> None:
    if provider == "openai":
        stub, env_of, fix = ChatStub(key="sk-the-right-one-000000"), openai_env, "OPENAI_API_KEY"
    else:
        stub, env_of, fix = GeminiStub(key="AIza-the-right-one"), gemini_env, "GEMINI_API_KEY"
    with stub:
        r = run_boost(SEARCH, home, env=env_of(stub))  # type: ignore[operator]
        again = run_boost(SEARCH, home, env=env_of(stub))  # type: ignore[operator]
        doc = run_boost(["doctor"], home, env=env_of(stub))  # type: ignore[operator]
    assert r.returncode == 0 and f"check {fix}" in r.stdout
    assert len(stub.requests) == 1  # the breaker: neither the rerank nor the next search asks
    assert "not asked again for 15 min" in again.stdout
    assert "rerank: not working" in doc.stdout and doc.returncode == 1
    shown = r.stdout + r.stderr + again.stdout + again.stderr + doc.stdout + doc.stderr
    assert KEY not in shown and GKEY not in shown


def test_the_key_is_never_in_output_log_or_cache(home: Path, chat: ChatStub) -> None:
    chat.push(
        Reply(text=json.dumps({"keywords": ["jest", KEY, f"use {KEY} here"]})),
        Reply(text=json.dumps({"picks": [{"id": "example:jest-runner", "why": f"key {KEY}"}]})),
    )
    r = run_boost([*SEARCH, "-v"], home, env=openai_env(chat, BOOST_DEBUG="1"))
    assert r.returncode == 0, r.stderr
    j = run_boost(["search", "test my React app", "--json"], home, env=openai_env(chat))
    assert KEY not in r.stdout + r.stderr + j.stdout + j.stderr
    assert KEY not in everything(home)


# --------------------------------------------------------------------------- Gemini


def test_gemini_key_in_a_header_never_the_url(home: Path, gemini: GeminiStub) -> None:
    r = run_boost(SEARCH, home, env=gemini_env(gemini))
    assert r.returncode == 0, r.stderr
    assert [s.is_expansion for s in gemini.requests] == [True, False]
    first = gemini.requests[0]
    assert first.path == "/v1beta/models/gemini-2.5-flash-lite:generateContent"
    assert first.headers["x-goog-api-key"] == GKEY and "key=" not in first.path
    assert first.body["generationConfig"] == {
        "maxOutputTokens": 200,
        "thinkingConfig": {"thinkingBudget": 0},
    }
    assert first.body["contents"][0]["parts"][0]["text"] == "Task: test my React app"
    assert re.search(r"rerank: ok \(gemini, http://127\.0\.0\.1:\d+, on this machine\)", r.stdout)
    assert GKEY not in r.stdout + r.stderr


def test_gemini_thought_parts_and_google_api_key(home: Path, gemini: GeminiStub) -> None:
    gemini.push(
        Reply(
            content=[
                {"text": "Let me think about jest.", "thought": True},
                {"text": '{"keywords": ["vitest"]}'},
            ]
        )
    )
    env = base_env(GOOGLE_API_KEY=GKEY, GOOGLE_GEMINI_BASE_URL=gemini.base_url)
    r = run_boost(["search", "test my React app", "--explain", "--no-rerank"], home, env=env)
    assert "keywords (from the LLM): vitest" in r.stdout


# --------------------------------------------------------------------------- agent CLIs


@pytest.mark.parametrize("cli", ["codex", "gemini"])
def test_agent_cli_answers(home: Path, tmp_path: Path, cli: str) -> None:
    log = tmp_path / "log.json"
    env = agents_env(BOOST_LLM_PROVIDER=f"{cli}-cli" if cli == "gemini" else cli)
    r = run_boost(SEARCH, home, env={**env, "FAKE_AGENT_LOG": str(log)})
    assert r.returncode == 0, r.stderr
    seen = json.loads(log.read_text())  # the rerank, the last call
    assert seen["stdin"].startswith("You rerank search results")
    assert '"id": "example:' in seen["stdin"]
    assert not Path(seen["cwd"]).exists()  # an empty scratch folder, removed afterwards
    if cli == "codex":
        assert seen["argv"] == [
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            "--sandbox",
            "read-only",
            "--ignore-user-config",
            "--color",
            "never",
            "-c",
            'model_reasoning_effort="low"',
            "-",
        ]
        assert "rerank: ok (codex, codex CLI, remote)" in r.stdout
    else:
        assert seen["argv"][:7] == [
            "-p",
            "",
            "-o",
            "json",
            "-m",
            "gemini-2.5-flash",
            "--approval-mode",
        ]
        assert seen["argv"][7:] == [
            "plan",
            "--skip-trust",
            "-e",
            "none",
            "--allowed-mcp-server-names",
            "boost-allows-none",
        ]
        assert "rerank: ok (gemini-cli, gemini CLI, remote)" in r.stdout
    assert "keywords (from the LLM): jest, component tests" in r.stdout


@pytest.mark.parametrize(
    "cli,said,fix",
    [
        ("codex", "codex CLI exited 1: unexpected status 401 Unauthorized", "run 'codex login'"),
        ("gemini-cli", "gemini CLI exited 41: Please set an Auth method", "run 'gemini' once"),
    ],
)
def test_a_cli_not_logged_in_fails_once(
    home: Path, tmp_path: Path, cli: str, said: str, fix: str
) -> None:
    log = tmp_path / "log.json"
    env = agents_env(FAKE_AGENT_MODE="login", FAKE_AGENT_LOG=str(log))
    if cli != "codex":  # auto takes codex, the first agent CLI on PATH
        env["BOOST_LLM_PROVIDER"] = cli
    r = run_boost(SEARCH, home, env=env)
    notes = [n for n in r.stderr.splitlines() if n.startswith("note:") and "alone" not in n]
    assert r.returncode == 0 and len(notes) == 1, r.stderr
    assert said in notes[0]
    log.unlink()
    again = run_boost(SEARCH, home, env=env)
    assert not log.exists()  # not run again: passed over for the cool-down
    assert "not asked again for 15 min" in again.stdout
    doc = run_boost(["doctor"], home, env=env)
    assert fix in doc.stdout and doc.returncode == 1


@pytest.mark.parametrize(
    "mode,said",
    [
        ("sleep", "codex CLI timed out after"),
        ("huge", "the codex CLI printed more than 4 MB"),
        ("garbage", "the codex CLI gave no answer"),
    ],
)
def test_codex_failures(home: Path, mode: str, said: str) -> None:
    env = agents_env(FAKE_AGENT_MODE=mode, BOOST_EXPAND_TIMEOUT="1", BOOST_RERANK_TIMEOUT="1")
    r = run_boost(SEARCH, home, env=env, timeout=60)
    assert r.returncode == 0 and said in r.stdout, r.stdout + r.stderr


def test_gemini_cli_garbage_is_no_keywords(home: Path) -> None:
    env = agents_env(BOOST_LLM_PROVIDER="gemini-cli", FAKE_AGENT_MODE="garbage")
    r = run_boost(SEARCH, home, env=env)
    assert "the expansion answer held no keywords" in r.stdout


# --------------------------------------------------------------------------- the choice


def provider_of(home: Path, env: Dict[str, str]) -> object:
    r = run_boost(["doctor", "--json"], home, env=env)
    return json.loads(r.stdout)["llm"]["provider"].get("backend")


def test_auto_order_and_overrides(home: Path) -> None:
    keys = dict(ANTHROPIC_API_KEY="sk-ant-a", OPENAI_API_KEY=KEY, GEMINI_API_KEY=GKEY)
    assert provider_of(home, agents_env(**keys)) == "api"
    assert provider_of(home, agents_env(OPENAI_API_KEY=KEY, GEMINI_API_KEY=GKEY)) == "openai"
    assert provider_of(home, agents_env(GEMINI_API_KEY=GKEY)) == "gemini"
    assert provider_of(home, agents_env()) == "codex"
    assert provider_of(home, base_env()) is None
    assert provider_of(home, agents_env(BOOST_LLM_PROVIDER="gemini-cli", **keys)) == "gemini-cli"
    r = run_boost(["config", "set", "llm.provider", "openai"], home)
    assert r.returncode == 0, r.stderr
    try:
        assert provider_of(home, agents_env(**keys)) == "openai"
        # the environment wins over the setting
        assert provider_of(home, agents_env(BOOST_LLM_PROVIDER="auto", **keys)) == "api"
    finally:
        run_boost(["config", "unset", "llm.provider"], home)
    bad = run_boost(["config", "set", "llm.provider", "gpt"], home)
    assert bad.returncode != 0 and "invalid value 'gpt' for llm.provider" in bad.stderr
    r = run_boost(SEARCH, home, env=base_env(BOOST_LLM_PROVIDER="gpt"))
    assert r.returncode != 0 and "unknown LLM provider 'gpt' in BOOST_LLM_PROVIDER" in r.stderr


def test_a_named_provider_without_its_key(home: Path) -> None:
    env = base_env(BOOST_LLM_PROVIDER="openai")
    doc = run_boost(["doctor"], home, env=env)
    assert "rerank: not working — OPENAI_API_KEY is not set" in doc.stdout
    assert doc.returncode == 1


def test_no_llm_turns_every_provider_off(home: Path, chat: ChatStub) -> None:
    env = {**openai_env(chat), "PATH": f"{AGENTS}{os.pathsep}/usr/bin:/bin"}
    r = run_boost([*SEARCH, "--no-llm"], home, env=env)
    r2 = run_boost(SEARCH, home, env={**env, "BOOST_NO_LLM": "1"})
    assert r.returncode == 0 and r2.returncode == 0
    assert chat.requests == []


def test_settings_know_every_provider_name() -> None:
    names = {p.name for p in llm.PROVIDERS} | set(llm.providers.ALIASES) | {"auto"}
    assert set(settings.LLM_PROVIDERS) == names
