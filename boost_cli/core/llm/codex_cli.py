"""The Codex CLI headless: ``codex exec --json … -`` with the prompt on stdin.

Flags (from ``codex exec --help``, @openai/codex 0.171): ``--json`` prints events as
JSONL; ``--ephemeral`` keeps no session files; ``--skip-git-repo-check`` lets it run in
the empty folder boost starts it in (nothing there for its tools to read);
``--sandbox read-only`` forbids writes; ``--ignore-user-config`` skips
``$CODEX_HOME/config.toml`` and with it the user's MCP servers (the login still comes from
``CODEX_HOME``); ``-c model_reasoning_effort="low"`` keeps a ranking answer quick. Codex
has no system-prompt flag: the system text comes first on stdin.

The answer is the text of the last ``item.completed`` event whose item is an
``agent_message``; ``turn.failed`` and ``error`` events carry the reason of a failure.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional, Union

from boost_cli.core.llm import process
from boost_cli.core.llm.base import LLMFailure, as_text

NAME = "codex CLI"
DEFAULT_MODEL = "default"  # the CLI's own choice (its login decides which models it may use)


class CodexCLI(process.ScratchCLI):
    backend = "codex"
    endpoint = NAME  # the CLI sends the prompt to OpenAI (or where its login points)

    def argv(self) -> List[str]:
        return argv(self.exe, self.model)

    def read(self, ran: process.Ran) -> Union[str, LLMFailure]:
        return read_events(ran)


def argv(codex: str, model: str) -> List[str]:
    args = [
        codex,
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
    ]
    if model and model != DEFAULT_MODEL:
        args += ["-m", model]
    return [*args, "-"]


def read_events(ran: process.Ran) -> Union[str, LLMFailure]:
    """The answer in ``codex exec --json`` output, or why there is none."""
    answer: Optional[str] = None
    failed = ""
    for line in ran.stdout.splitlines():
        try:
            event: Any = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message":
                answer = as_text(item.get("text"))
        elif kind == "turn.failed" and isinstance(event.get("error"), dict):
            failed = as_text(event["error"].get("message")) or failed
        elif kind == "error":
            failed = as_text(event.get("message")) or failed
    if ran.returncode != 0 or (answer is None and failed):
        detail = process.first_line(failed) or process.first_line(ran.stderr) or "no message"
        how = f"exited {ran.returncode}" if ran.returncode else "failed"
        return LLMFailure(f"{NAME} {how}: {detail}", "codex")
    if answer is None or not answer.strip():
        return LLMFailure(f"the {NAME} gave no answer", "codex", trips=False)
    return answer
