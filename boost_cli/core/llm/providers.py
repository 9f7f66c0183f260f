"""The LLM providers boost knows, in the order ``auto`` tries them, with their defaults.

A provider is a row: its backend name (what ``BOOST_LLM_PROVIDER``, the breaker and
``--explain`` call it), how it is named in messages, whether ``auto`` finds it configured
in an environment (a cheap look-up: a variable, a PATH search; nothing is sent), its
default model and timeouts, and how its transport is built. The model for a purpose is
the caller's, else ``$BOOST_<PURPOSE>_MODEL``, else ``$BOOST_LLM_MODEL``, else the row's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Optional, Tuple, Union

from boost_cli.core.llm import process
from boost_cli.core.llm.anthropic import DEFAULT_BASE_URL as ANTHROPIC_URL
from boost_cli.core.llm.anthropic import AnthropicAPI
from boost_cli.core.llm.base import Client, LLMFailure
from boost_cli.core.llm.claude_cli import ClaudeCLI

# Seconds the whole call may take, by purpose, unless BOOST_<PURPOSE>_TIMEOUT says otherwise.
FAST = {"expand": 8.0, "rerank": 20.0, "enrich": 30.0}

Build = Callable[[str, str, Mapping[str, str]], Union[Client, LLMFailure]]


@dataclass(frozen=True)
class Provider:
    name: str  # the backend name
    title: str  # "Anthropic API", "claude CLI"
    default_model: str
    timeouts: Mapping[str, float]
    configured: Callable[[Mapping[str, str]], bool]
    build: Build  # (model, model_var, env) → the transport, or why there is none
    needs: str  # what configures it, for messages ("ANTHROPIC_API_KEY")
    fix: str  # what doctor says when it keeps failing


def _key(env: Mapping[str, str], *names: str) -> str:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return ""


def _anthropic(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    key = _key(env, "ANTHROPIC_API_KEY")
    if not key:
        return LLMFailure(
            "ANTHROPIC_API_KEY is not set — set it, or use the claude CLI backend", "api"
        )
    base = env.get("ANTHROPIC_BASE_URL", "").strip() or ANTHROPIC_URL
    return AnthropicAPI(model, key, base, model_var)


def _claude(model: str, model_var: str, env: Mapping[str, str]) -> Union[Client, LLMFailure]:
    claude = process.find("claude", env)
    if not claude:
        return LLMFailure(
            "the claude CLI is not on PATH — install Claude Code, or set ANTHROPIC_API_KEY",
            "cli",
        )
    return ClaudeCLI(model, claude, env)


PROVIDERS: Tuple[Provider, ...] = (
    Provider(
        "api",
        "Anthropic API",
        "claude-haiku-5-5",
        FAST,
        lambda env: bool(_key(env, "ANTHROPIC_API_KEY")),
        _anthropic,
        "ANTHROPIC_API_KEY",
        "the Anthropic API fails: check ANTHROPIC_API_KEY, or 'boost config set llm off'",
    ),
    Provider(
        "cli",
        "claude CLI",
        "claude-haiku-5-5",
        FAST,
        lambda env: process.find("claude", env) is not None,
        _claude,
        "the claude CLI on PATH",
        "the claude CLI fails: run 'claude' once to log in, or 'boost config set llm off'",
    ),
)

BY_NAME: Dict[str, Provider] = {p.name: p for p in PROVIDERS}
# Other names a user may give BOOST_LLM_PROVIDER or `boost config set llm.provider`.
ALIASES: Mapping[str, str] = {"anthropic": "api", "claude": "cli"}


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
