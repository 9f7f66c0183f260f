"""Asking an LLM one question, whichever LLM the user has: the seam, the providers, and the
two uses a search makes of it (`expand`, `rerank`).

    from boost_cli.core import llm
    client = llm.choose("auto", model=None, model_var="BOOST_RERANK_MODEL", env=env)
    answer = client.complete(system, user, max_tokens=..., deadline=...)  # str | LLMFailure

Modules: `base` (the `Client` seam, `LLMFailure`, what providers share), `answers` (the
JSON in a model's answer), `web` (one POST under the shared rules), `process` (an agent
CLI run headless), one module per provider (`anthropic`, `openai`, `gemini`, `claude_cli`,
`codex_cli`, `gemini_cli`), `providers` (the
table ``auto`` walks, with each provider's defaults), `choice` (`choose`, `auto_backend`,
`blocked`), `breaker` (a failing backend passed over for a while), `expand` and `rerank`
(prompts and parsers). See docs/llm.md.
"""

from __future__ import annotations

from typing import Mapping, Optional

from boost_cli.core.llm.answers import json_values, strip_trailing_commas
from boost_cli.core.llm.anthropic import DEFAULT_BASE_URL, AnthropicAPI
from boost_cli.core.llm.base import (
    DEFAULT_BACKOFF,
    MAX_ANSWER_BYTES,
    MAX_ANSWER_CHARS,
    MAX_CLI_ERRORS,
    MAX_CLI_OUTPUT,
    MAX_RETRY_AFTER,
    MIN_ATTEMPT_SECONDS,
    Client,
    LLMFailure,
    as_text,
    is_local,
    redact_secrets,
    seconds_setting,
    shown_endpoint,
)
from boost_cli.core.llm.choice import (
    BACKENDS,
    NO_LLM,
    answer_secrets,
    auto_backend,
    blocked,
    choose,
    describe,
    requested,
    resolve_model,
)
from boost_cli.core.llm.claude_cli import ClaudeCLI
from boost_cli.core.llm.process import find
from boost_cli.core.llm.providers import PROVIDERS, label, timeout

DEFAULT_MODEL = "claude-haiku-5-5"  # the Anthropic providers' default (providers.PROVIDERS)


def find_claude(env: Mapping[str, str]) -> Optional[str]:
    """The `claude` executable on ``env``'s PATH."""
    return find("claude", env)


__all__ = [
    "BACKENDS",
    "DEFAULT_BACKOFF",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "MAX_ANSWER_BYTES",
    "MAX_ANSWER_CHARS",
    "MAX_CLI_ERRORS",
    "MAX_CLI_OUTPUT",
    "MAX_RETRY_AFTER",
    "MIN_ATTEMPT_SECONDS",
    "NO_LLM",
    "PROVIDERS",
    "AnthropicAPI",
    "ClaudeCLI",
    "Client",
    "LLMFailure",
    "answer_secrets",
    "as_text",
    "auto_backend",
    "blocked",
    "choose",
    "describe",
    "find_claude",
    "is_local",
    "json_values",
    "label",
    "redact_secrets",
    "requested",
    "resolve_model",
    "seconds_setting",
    "shown_endpoint",
    "strip_trailing_commas",
    "timeout",
]
