"""The `claude` CLI in print mode: ``claude -p --output-format json`` with the prompt on
stdin, built-in tools and the user's MCP servers off (candidate text is untrusted), one turn.

It answers with one JSON envelope, ``{"type": "result", "is_error", "result", ...}``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Mapping, Union

from boost_cli.core import http
from boost_cli.core.llm import process
from boost_cli.core.llm.base import LLMFailure, as_text, redact_secrets

NAME = "claude CLI"


class ClaudeCLI:
    """The `claude` executable in print mode (``claude -p``)."""

    backend = "cli"
    endpoint = NAME
    local = False  # the CLI sends the prompt to Anthropic

    def __init__(self, model: str, claude: str, env: Mapping[str, str]) -> None:
        self.model = model
        self.claude = claude
        self.env = env

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        answer = _call(system, user, self.model, self.claude, self.env, deadline)
        # The CLI may quote the environment's key back (it reads ANTHROPIC_API_KEY too).
        key = self.env.get("ANTHROPIC_API_KEY", "").strip()
        if isinstance(answer, LLMFailure):
            return LLMFailure(http.redact(answer.reason, key or None), "cli", answer.trips)
        return redact_secrets(answer, (key,) if key else ())


def argv(claude: str, model: str, system: str) -> list:
    return [
        claude,
        "-p",
        "--output-format",
        "json",
        "--model",
        model,
        "--system-prompt",
        system,
        "--tools",
        "",
        "--strict-mcp-config",
        "--max-turns",
        "1",
    ]


def _call(
    system: str, user: str, model: str, claude: str, env: Mapping[str, str], deadline: float
) -> Union[str, LLMFailure]:
    """The answer text from ``claude -p --output-format json``, or why there is none."""
    ran = process.run(argv(claude, model, system), user, env, deadline, NAME, "cli")
    if isinstance(ran, LLMFailure):
        return ran
    envelope: Any = None
    with contextlib.suppress(ValueError):
        envelope = json.loads(ran.stdout)
    if ran.returncode != 0:
        detail = process.first_line(ran.stderr)
        if not detail and isinstance(envelope, dict):
            detail = process.first_line(as_text(envelope.get("result")))
        return LLMFailure(f"claude CLI exited {ran.returncode}: {detail or 'no message'}", "cli")
    if isinstance(envelope, dict) and "result" in envelope:
        result = as_text(envelope.get("result"))
        if envelope.get("is_error") is True:
            detail = process.first_line(result) or as_text(envelope.get("subtype")) or "no message"
            return LLMFailure(f"claude CLI reported an error: {detail}", "cli")
        return result
    # Not the documented envelope (an older CLI?): the answer may be the raw output itself.
    return ran.stdout
