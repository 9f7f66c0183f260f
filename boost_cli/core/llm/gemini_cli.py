"""The Gemini CLI headless: ``gemini -p "" -o json …`` with the prompt on stdin.

Flags (from ``gemini --help``, @google/gemini-cli 0.61): ``-p`` runs headless and appends
its (empty) text to stdin; ``-o json`` prints one object, ``{"response", "stats"}`` or
``{"error": {"type", "message", "code"}}`` (on stderr, exit 1, or 41 when not logged in);
``--approval-mode plan`` is its read-only mode, and ``--skip-trust`` trusts, for this run
only, the empty folder boost starts it in (an untrusted folder resets the approval
mode); ``-e none`` loads no extension and ``--allowed-mcp-server-names`` with a name no
server has starts none of the user's MCP servers. It has no system-prompt flag (its
``GEMINI_SYSTEM_MD`` replaces its own): the system text comes first on stdin.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, List, Union

from boost_cli.core.llm import process
from boost_cli.core.llm.base import LLMFailure, as_text

NAME = "gemini CLI"
NO_SERVER = "boost-allows-none"  # an MCP server name no user has: none is started


class GeminiCLI(process.ScratchCLI):
    backend = "gemini-cli"
    endpoint = NAME  # the CLI sends the prompt to Google

    def argv(self) -> List[str]:
        return argv(self.exe, self.model)

    def read(self, ran: process.Ran) -> Union[str, LLMFailure]:
        return read_output(ran)


def argv(gemini: str, model: str) -> List[str]:
    return [
        gemini,
        "-p",
        "",
        "-o",
        "json",
        "-m",
        model,
        "--approval-mode",
        "plan",
        "--skip-trust",
        "-e",
        "none",
        "--allowed-mcp-server-names",
        NO_SERVER,
    ]


def _object(text: str) -> Any:
    """The JSON object ``text`` holds (it may follow a warning line), or None."""
    with contextlib.suppress(ValueError):
        return json.loads(text)
    start = text.find("{")
    with contextlib.suppress(ValueError):
        return json.loads(text[start:]) if start >= 0 else None
    return None


def read_output(ran: process.Ran) -> Union[str, LLMFailure]:
    """The ``response`` of ``gemini -o json``, or why there is none."""
    doc = _object(ran.stdout)
    if not isinstance(doc, dict) or "response" not in doc:
        doc = _object(ran.stderr) if not isinstance(doc, dict) or "error" not in doc else doc
    err = doc.get("error") if isinstance(doc, dict) else None
    if ran.returncode != 0 or isinstance(err, dict):
        detail = as_text(err.get("message")) if isinstance(err, dict) else ""
        detail = process.first_line(detail) or process.first_line(ran.stderr) or "no message"
        how = f"exited {ran.returncode}" if ran.returncode else "failed"
        return LLMFailure(f"{NAME} {how}: {detail}", "gemini-cli")
    response = as_text(doc.get("response")) if isinstance(doc, dict) else ""
    if not response.strip():
        return LLMFailure(f"the {NAME} gave no answer", "gemini-cli", trips=False)
    return response
