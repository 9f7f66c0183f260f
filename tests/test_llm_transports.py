"""The provider transports in process (the CLI tests in test_llm_providers.py run them in
a subprocess): each answer shape and failure of each wire format, read by `llm.choose`'s
client, and the choice's pure parts."""

from __future__ import annotations

import json
import os
import time
from typing import Dict, Union

import pytest

from boost_cli.core import http, llm
from boost_cli.core.llm import openai
from boost_cli.core.llm.rerank import Candidate, RerankResult, rerank
from tests.helpers import ROOT
from tests.llm_stubs import ChatStub, GeminiStub, Reply

KEY = "opaque-TESTKEY-0123456789abcdef"
AGENTS = ROOT / "tests" / "fakebin_agents"
CANDS = [Candidate(f"t:s{i}", f"s{i}", "skill", f"skill {i}", "") for i in range(3)]


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "_sleep", lambda seconds: None)


def ask(env: Dict[str, str], timeout: float = 5.0) -> Union[str, llm.LLMFailure]:
    client = llm.choose("auto", env=env)
    assert not isinstance(client, llm.LLMFailure), client
    return client.complete("system", "user", max_tokens=50, deadline=time.monotonic() + timeout)


def chat_env(stub: ChatStub, **extra: str) -> Dict[str, str]:
    return {"PATH": "", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.base_url, **extra}


def gemini_env(stub: GeminiStub, **extra: str) -> Dict[str, str]:
    return {"PATH": "", "GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": stub.base_url, **extra}


@pytest.mark.parametrize(
    "reply,expected",
    [
        (Reply(text="plain"), "plain"),
        (Reply(content=[{"type": "text", "text": "a"}, {"type": "reasoning"}, "x"]), "a"),
        (Reply(text="<think>{x}</think>ok"), "ok"),
        (Reply(text="cut", finish="length"), "cut"),
        (Reply(text=f"echo {KEY}"), "echo ***"),
        (Reply(content=None, finish="length"), "no text (finish_reason length"),
        (Reply(content=None, extra={"refusal": "no"}), "declined to answer: no"),
        (Reply(raw="[]"), "unexpected response"),
        (Reply(raw='{"choices": []}'), "unexpected response"),
        (Reply(raw='{"error": "boom"}'), "returned an error: boom"),
        (Reply(raw="nope"), "malformed JSON"),
        (Reply(status=404, message="The model `x` does not exist"), "check BOOST_RERANK_MODEL"),
        (Reply(status=401, message=f"bad key {KEY}"), "check OPENAI_API_KEY"),
        (Reply(status=307, raw=b"", headers={"location": "http://127.0.0.1:9/"}), "redirect"),
        (Reply(status=400, raw="<html>"), "Chat Completions API HTTP 400"),
    ],
)
def test_chat_completions_answers(reply: Reply, expected: str) -> None:
    with ChatStub(key=KEY) as stub:
        stub.push(reply)
        answer = ask(chat_env(stub))
    text = answer if isinstance(answer, str) else answer.reason
    assert expected in text and KEY not in text


@pytest.mark.parametrize(
    "reply,expected",
    [
        (Reply(text="plain"), "plain"),
        (Reply(content=[{"text": "t", "thought": True}, {"text": "a"}]), "a"),
        (Reply(text=f"echo {KEY}"), "echo ***"),
        (Reply(content=[], finish="SAFETY"), "no text (finishReason SAFETY)"),
        (Reply(raw='{"promptFeedback": {"blockReason": "OTHER"}}'), "blocked the prompt (OTHER)"),
        (Reply(raw='{"candidates": []}'), "no candidate"),
        (Reply(raw="[]"), "unexpected response"),
        (Reply(raw="nope"), "malformed JSON"),
        (Reply(status=400, message="API key not valid."), "check GEMINI_API_KEY"),
        (Reply(status=404, message="models/x is not found"), "check BOOST_RERANK_MODEL"),
        (Reply(status=500, raw="oops"), "Gemini API HTTP 500"),
    ],
)
def test_gemini_answers(reply: Reply, expected: str) -> None:
    with GeminiStub(key=KEY) as stub:
        stub.push(reply, reply)  # a 500 is retried once
        answer = ask(gemini_env(stub))
    text = answer if isinstance(answer, str) else answer.reason
    assert expected in text and KEY not in text


def test_gemini_model_path_and_pro_keeps_thinking() -> None:
    with GeminiStub(key=KEY) as stub:
        assert ask(gemini_env(stub, BOOST_RERANK_MODEL="models/gemini-2.5-pro")) == (
            '{"picks": []}'
        )
    seen = stub.requests[0]
    assert seen.path == "/v1beta/models/gemini-2.5-pro:generateContent"
    assert seen.body["generationConfig"] == {"maxOutputTokens": 50}


def test_openai_itself_gets_max_completion_tokens() -> None:
    body = openai.payload("s", "u", "gpt-5-mini", 99, openai=True)
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body


def test_unusable_base_urls() -> None:
    for env in (
        {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "ftp://x"},
        {"GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": "file:///x"},
        {"BOOST_LLM_BASE_URL": "127.0.0.1:8080/v1"},
    ):
        answer = ask({"PATH": "", **env})
        assert isinstance(answer, llm.LLMFailure) and "must be an http(s) URL" in answer.reason


def test_named_providers_without_what_they_need() -> None:
    cases = {
        "openai": "OPENAI_API_KEY is not set",
        "gemini": "GEMINI_API_KEY is not set",
        "openai-compatible": "BOOST_LLM_BASE_URL is not set",
        "codex": "the codex CLI is not on PATH",
        "gemini-cli": "the gemini CLI is not on PATH",
    }
    for name, said in cases.items():
        got = llm.choose(name, env={"PATH": ""})
        assert isinstance(got, llm.LLMFailure) and got.reason.startswith(said), got
        assert llm.describe({"PATH": "", "BOOST_LLM_PROVIDER": name})["problem"] == got.reason


def test_ollama_needs_no_key_and_is_local() -> None:
    client = llm.choose("ollama", env={"PATH": ""})
    assert not isinstance(client, llm.LLMFailure)
    assert (client.backend, client.model, client.endpoint, client.local) == (
        "ollama",
        "llama3.2",
        "http://127.0.0.1:11434/v1",
        True,
    )


def test_endpoints_are_shown_without_credentials() -> None:
    assert llm.shown_endpoint("https://u:p@h.example:8/v1/?key=k#f") == "https://h.example:8/v1"
    assert llm.is_local("http://[::1]:8/v1") and llm.is_local("http://LOCALHOST/v1")
    assert not llm.is_local("http://127.0.0.2/v1")
    client = llm.choose(
        "openai", env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "https://a:b@x/v1"}
    )
    assert not isinstance(client, llm.LLMFailure) and client.endpoint == "https://x/v1"
    assert client.local is False


@pytest.mark.parametrize("cli,backend", [("codex", "codex"), ("gemini", "gemini-cli")])
@pytest.mark.parametrize(
    "mode,expected",
    [
        ("good", None),
        ("login", "exited"),
        ("garbage", "gave no answer|held no keywords|could not parse|named no candidate"),
        ("huge", "printed more than 4 MB"),
        ("sleep", "timed out"),
    ],
)
def test_agent_clis_in_process(
    cli: str, backend: str, mode: str, expected: Union[str, None]
) -> None:
    env = {
        "PATH": f"{AGENTS}{os.pathsep}/usr/bin:/bin",
        "BOOST_LLM_PROVIDER": backend,
        "FAKE_AGENT_MODE": mode,
        "FAKE_AGENT_BYTES": str(5 * 1024 * 1024),
        "OPENAI_API_KEY": KEY,
    }
    res = rerank("task", CANDS, 2, env=env, timeout=3.0 if mode == "sleep" else 20.0)
    if expected is None:
        assert isinstance(res, RerankResult) and res.backend == backend
        assert [cid for cid, _ in res.order] == ["t:s2", "t:s1"]
        assert res.endpoint == f"{cli} CLI" and res.local is False
    else:
        import re

        assert not isinstance(res, RerankResult) and re.search(expected, res.reason), res


def test_codex_events_read_as_the_cli_writes_them() -> None:
    from boost_cli.core.llm.codex_cli import read_events
    from boost_cli.core.llm.process import Ran

    lines = [
        {"type": "thread.started", "thread_id": "x"},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"type": "reasoning", "text": "hmm"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "first"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "last"}},
        {"type": "turn.completed", "usage": {}},
    ]
    out = "\n".join(json.dumps(e) for e in lines) + "\nnot json\n[]\n"
    assert read_events(Ran(0, out, "")) == "last"  # a transient error is not the outcome
    failed = read_events(Ran(1, "", "Error: boom\n"))
    assert isinstance(failed, llm.LLMFailure) and failed.reason == "codex CLI exited 1: Error: boom"


def test_gemini_output_after_a_warning_line() -> None:
    from boost_cli.core.llm.gemini_cli import read_output
    from boost_cli.core.llm.process import Ran

    out = 'Loaded cached credentials.\n{"session_id": "s", "response": "ok"}'
    assert read_output(Ran(0, out, "")) == "ok"
    err = json.dumps({"error": {"type": "Error", "message": "quota exceeded", "code": 1}})
    failed = read_output(Ran(1, "", err))
    assert (
        isinstance(failed, llm.LLMFailure)
        and failed.reason == "gemini CLI exited 1: quota exceeded"
    )
