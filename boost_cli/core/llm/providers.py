"""The LLM providers boost knows, in the order ``auto`` tries them, with their defaults.

A provider is a row: its backend name (what ``BOOST_LLM_PROVIDER``, the breaker and
``--explain`` call it), how it is named in messages, whether ``auto`` finds it configured
in an environment (a cheap look-up: a variable, a PATH search; nothing is sent), its
default model and timeouts, and how its transport is built. The model for a purpose is
the caller's, else ``$BOOST_<PURPOSE>_MODEL``, else ``$BOOST_LLM_MODEL``, else the row's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple, Union

from boost_cli.core.llm import process
from boost_cli.core.llm.anthropic import DEFAULT_BASE_URL as ANTHROPIC_URL
from boost_cli.core.llm.anthropic import AnthropicAPI
from boost_cli.core.llm.base import Client, LLMFailure
from boost_cli.core.llm.claude_cli import ClaudeCLI
from boost_cli.core.llm.codex_cli import DEFAULT_MODEL as DEFAULT_CODEX_MODEL
from boost_cli.core.llm.codex_cli import CodexCLI
from boost_cli.core.llm.gemini import DEFAULT_BASE_URL as GEMINI_URL
from boost_cli.core.llm.gemini import GeminiAPI
from boost_cli.core.llm.gemini_cli import GeminiCLI
from boost_cli.core.llm.openai import OLLAMA_URL, OPENAI_URL, OpenAIChat

# Seconds the whole call may take, by purpose, unless BOOST_<PURPOSE>_TIMEOUT says otherwise:
# a hosted API answers in seconds; a model on this machine's CPU or an agent CLI (which
# starts a runtime and an agent before it asks) takes longer.
FAST = {"expand": 8.0, "rerank": 20.0, "enrich": 30.0}
SLOW = {"expand": 30.0, "rerank": 60.0, "enrich": 120.0}
# Every variable that may hold an LLM key: no answer, reason or log line carries one on.
KEY_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "BOOST_LLM_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)

Build = Callable[[str, str, Mapping[str, str]], Union[Client, LLMFailure]]


@dataclass(frozen=True)
class Provider:
    name: str  # the backend name
    title: str  # "Anthropic API", "claude CLI"
    default_model: str
    timeouts: Mapping[str, float]
    configured: Callable[[Mapping[str, str]], bool]
    build: Build  # (model, model_var, env) → the transport, or why there is none
    needs: str  # what configures it, for docs and messages
    fix: str  # what doctor says when it keeps failing


def _key(env: Mapping[str, str], *names: str) -> str:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return ""


def _key_var(env: Mapping[str, str], *names: str) -> str:
    return next((n for n in names if env.get(n, "").strip()), names[0])


def secrets(env: Mapping[str, str]) -> List[str]:
    """Every LLM key set in ``env`` (`KEY_VARS`)."""
    return [v for v in (env.get(n, "").strip() for n in KEY_VARS) if v]


def _anthropic(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    key = _key(env, "ANTHROPIC_API_KEY")
    if not key:
        return LLMFailure(
            "ANTHROPIC_API_KEY is not set — set it, or use the claude CLI backend", "api"
        )
    base = env.get("ANTHROPIC_BASE_URL", "").strip() or ANTHROPIC_URL
    return AnthropicAPI(model, key, base, model_var)


def _openai(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    base = env.get("OPENAI_BASE_URL", "").strip() or OPENAI_URL
    key = _key(env, "OPENAI_API_KEY")
    if not key and base == OPENAI_URL:
        return LLMFailure("OPENAI_API_KEY is not set — set it, or name another provider", "openai")
    return OpenAIChat(
        "openai",
        model,
        base,
        key or None,
        key_var="OPENAI_API_KEY",
        url_var="OPENAI_BASE_URL",
        model_var=model_var,
    )


def _compatible(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    base = env.get("BOOST_LLM_BASE_URL", "").strip()
    if not base:
        return LLMFailure(
            "BOOST_LLM_BASE_URL is not set — set it to the server's /v1 URL, e.g. "
            "http://127.0.0.1:8080/v1",
            "openai-compatible",
        )
    return OpenAIChat(
        "openai-compatible",
        model,
        base,
        _key(env, "BOOST_LLM_API_KEY") or None,
        key_var="BOOST_LLM_API_KEY",
        url_var="BOOST_LLM_BASE_URL",
        model_var=model_var,
    )


def _ollama(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    return OpenAIChat(
        "ollama",
        model,
        env.get("BOOST_LLM_BASE_URL", "").strip() or OLLAMA_URL,
        _key(env, "BOOST_LLM_API_KEY") or None,
        key_var="BOOST_LLM_API_KEY",
        url_var="BOOST_LLM_BASE_URL",
        model_var=model_var,
    )


def _gemini(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    key = _key(env, "GEMINI_API_KEY", "GOOGLE_API_KEY")
    if not key:
        return LLMFailure(
            "GEMINI_API_KEY is not set — set it (or GOOGLE_API_KEY), or name another provider",
            "gemini",
        )
    base = env.get("GOOGLE_GEMINI_BASE_URL", "").strip() or GEMINI_URL
    var = _key_var(env, "GEMINI_API_KEY", "GOOGLE_API_KEY")
    return GeminiAPI(model, key, var, base, model_var)


def _claude(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    claude = process.find("claude", env)
    if not claude:
        return LLMFailure(
            "the claude CLI is not on PATH — install Claude Code, or set ANTHROPIC_API_KEY",
            "cli",
        )
    return ClaudeCLI(model, claude, env)


def _codex(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    codex = process.find("codex", env)
    if not codex:
        return LLMFailure("the codex CLI is not on PATH — npm install -g @openai/codex", "codex")
    return CodexCLI(model, codex, env, secrets(env))


def _gemini_cli(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    gemini = process.find("gemini", env)
    if not gemini:
        return LLMFailure(
            "the gemini CLI is not on PATH — npm install -g @google/gemini-cli", "gemini-cli"
        )
    return GeminiCLI(model, gemini, env, secrets(env))


def _on_path(name: str) -> Callable[[Mapping[str, str]], bool]:
    return lambda env: process.find(name, env) is not None


def _set(*names: str) -> Callable[[Mapping[str, str]], bool]:
    return lambda env: bool(_key(env, *names))


OFF = "or 'boost config set llm off'"

# In the order `auto` tries them: a server the user pointed boost at, then the hosted APIs
# whose key is set, then the agent CLIs on PATH. Ollama is used only when named.
PROVIDERS: Tuple[Provider, ...] = (
    Provider(
        "openai-compatible",
        "OpenAI-compatible server",
        "default",
        SLOW,
        _set("BOOST_LLM_BASE_URL"),
        _compatible,
        "BOOST_LLM_BASE_URL",
        f"the server at BOOST_LLM_BASE_URL fails: check it runs and serves BOOST_LLM_MODEL, {OFF}",
    ),
    Provider(
        "api",
        "Anthropic API",
        "claude-haiku-5-5",
        FAST,
        _set("ANTHROPIC_API_KEY"),
        _anthropic,
        "ANTHROPIC_API_KEY",
        f"the Anthropic API fails: check ANTHROPIC_API_KEY, {OFF}",
    ),
    Provider(
        "openai",
        "OpenAI API",
        "gpt-4.1-mini",
        FAST,
        _set("OPENAI_API_KEY"),
        _openai,
        "OPENAI_API_KEY",
        f"the OpenAI API fails: check OPENAI_API_KEY (and OPENAI_BASE_URL), {OFF}",
    ),
    Provider(
        "gemini",
        "Gemini API",
        "gemini-2.5-flash-lite",
        FAST,
        _set("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        _gemini,
        "GEMINI_API_KEY or GOOGLE_API_KEY",
        f"the Gemini API fails: check GEMINI_API_KEY, {OFF}",
    ),
    Provider(
        "cli",
        "claude CLI",
        "claude-haiku-5-5",
        FAST,
        _on_path("claude"),
        _claude,
        "the claude CLI on PATH",
        f"the claude CLI fails: run 'claude' once to log in, {OFF}",
    ),
    Provider(
        "codex",
        "codex CLI",
        DEFAULT_CODEX_MODEL,
        SLOW,
        _on_path("codex"),
        _codex,
        "the codex CLI on PATH",
        f"the codex CLI fails: run 'codex login', {OFF}",
    ),
    Provider(
        "gemini-cli",
        "gemini CLI",
        "gemini-2.5-flash",
        SLOW,
        _on_path("gemini"),
        _gemini_cli,
        "the gemini CLI on PATH",
        f"the gemini CLI fails: run 'gemini' once to log in, {OFF}",
    ),
    Provider(
        "ollama",
        "Ollama",
        "llama3.2",
        SLOW,
        lambda env: False,  # a server that may not be running: used when named
        _ollama,
        "BOOST_LLM_PROVIDER=ollama",
        f"Ollama fails: start it ('ollama serve') and 'ollama pull' the model, {OFF}",
    ),
)

BY_NAME: Dict[str, Provider] = {p.name: p for p in PROVIDERS}
# Other names a user may give BOOST_LLM_PROVIDER or `boost config set llm.provider`.
ALIASES: Mapping[str, str] = {"anthropic": "api", "claude": "cli", "local": "openai-compatible"}


def named(name: str) -> Optional[Provider]:
    """The provider called ``name`` (a backend name or an alias), or None."""
    name = name.strip().lower()
    return BY_NAME.get(ALIASES.get(name, name))


def label(backend: str) -> str:
    """How messages name ``backend``: its title, or the name itself when unknown."""
    found = BY_NAME.get(backend)
    return found.title if found else backend


def timeout(backend: str, purpose: str) -> float:
    """The default seconds for ``purpose`` ("expand", "rerank", "enrich") on ``backend``."""
    found = BY_NAME.get(backend)
    return (found.timeouts if found else FAST)[purpose]
