"""OpenAI-compatible Chat Completions: ``POST {base}/chat/completions``.

One wire format serves the OpenAI API (``OPENAI_BASE_URL``, default
``https://api.openai.com/v1``, key ``OPENAI_API_KEY``) and every server that copies it:
Ollama (``http://127.0.0.1:11434/v1``, no key), LM Studio, llama.cpp's server, vLLM and
OpenRouter, picked with ``BOOST_LLM_BASE_URL`` (key ``BOOST_LLM_API_KEY``, if any; never
``OPENAI_API_KEY``, which belongs to OpenAI).

The answer is read as servers really send it: ``content`` a string or a list of parts, a
reasoning model's extra fields (``reasoning_content``, ``reasoning``) and ``<think>`` block
ignored, a
``refusal``, ``finish_reason: length`` with what was written so far, and an ``error``
object in place of choices (OpenRouter answers some upstream failures with a 200).
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional, Tuple, Union

from boost_cli import __version__
from boost_cli.core import http
from boost_cli.core.llm import web
from boost_cli.core.llm.base import LLMFailure, as_text, is_local, redact_secrets, shown_endpoint
from boost_cli.core.text import clip

OPENAI_URL = "https://api.openai.com/v1"
OLLAMA_URL = "http://127.0.0.1:11434/v1"
API = "Chat Completions API"


class OpenAIChat:
    """Chat Completions at ``base_url``; ``key_var`` names the variable its key came from
    (for the fix a 401 names), ``url_var`` the one its URL came from."""

    def __init__(
        self,
        backend: str,
        model: str,
        base_url: str,
        key: Optional[str],
        *,
        key_var: str,
        url_var: str,
        model_var: str,
    ) -> None:
        self.backend = backend
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.key_var = key_var
        self.url_var = url_var
        self.model_var = model_var
        self.endpoint = shown_endpoint(self.base_url)
        self.local = is_local(self.base_url)

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        bad = web.check_url(self.base_url, self.url_var, self.backend)
        if bad:
            return bad
        headers = {"user-agent": f"boost/{__version__}"}
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        body = web.post(
            f"{self.base_url}/chat/completions",
            payload(system, user, self.model, max_tokens, self.base_url == OPENAI_URL),
            headers,
            deadline=deadline,
            key=self.key,
            api=API,
            backend=self.backend,
            failure=self._failure,
        )
        if isinstance(body, LLMFailure):
            return body
        answer = answer_text(body, self.backend)
        if isinstance(answer, LLMFailure):
            return LLMFailure(http.redact(answer.reason, self.key), self.backend, answer.trips)
        return redact_secrets(answer, (self.key,) if self.key else ())

    def _failure(self, status: int, raw: bytes) -> str:
        message, code = _error(raw)
        reason = f"{API} HTTP {status}"
        if code:
            reason += f" {code}"
        if message:
            reason += f": {clip(message, 200)}"
        if status in (401, 403):
            reason += f" — check {self.key_var}"
        elif status == 404 and "model" in message.lower():
            reason += f" — check {self.model_var} (or BOOST_LLM_MODEL)"
        elif 300 <= status < 400:
            reason += f" (a redirect: not followed) — check {self.url_var}"
        return reason


def payload(
    system: str, user: str, model: str, max_tokens: int, openai: bool = False
) -> Dict[str, Any]:
    """The request body. OpenAI's own API takes ``max_completion_tokens`` (its reasoning
    models refuse ``max_tokens``); the servers that copy the format know ``max_tokens``."""
    body: Dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
        "stream": False,
    }
    body["max_completion_tokens" if openai else "max_tokens"] = max_tokens
    return body


def _error(raw: bytes) -> Tuple[str, str]:
    """(message, type or code) from an error body: ``{"error": {...}}``, ``{"error": "..."}``
    (Ollama, llama.cpp) or ``{"message": ...}``."""
    try:
        doc = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return "", ""
    if not isinstance(doc, dict):
        return "", ""
    err = doc.get("error", doc)
    if isinstance(err, str):
        return err, ""
    if isinstance(err, dict):
        code = as_text(err.get("code")) or as_text(err.get("type"))
        return as_text(err.get("message")), code
    return "", ""


def answer_text(data: bytes, backend: str) -> Union[str, LLMFailure]:
    """The assistant's text in a 200 Chat Completions answer, or why there is none."""
    try:
        doc = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        return LLMFailure(f"the {API} returned malformed JSON", backend, trips=False)
    if not isinstance(doc, dict):
        return LLMFailure(f"the {API} returned an unexpected response", backend, trips=False)
    if doc.get("error") and not doc.get("choices"):
        said, code = _error(data)
        detail = ": ".join(x for x in (code, clip(said, 200)) if x) or "no message"
        return LLMFailure(f"the {API} returned an error: {detail}", backend)
    choices = doc.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return LLMFailure(f"the {API} returned an unexpected response", backend, trips=False)
    finish = as_text(first.get("finish_reason")) if isinstance(first, dict) else ""
    text = _THINKING.sub("", content_text(message.get("content")))
    if text.strip():
        return text  # a "length" answer is cut short, and the parsers salvage what they can
    refusal = as_text(message.get("refusal"))
    if refusal:
        return LLMFailure(f"the model declined to answer: {clip(refusal, 200)}", backend, False)
    why = f"finish_reason {finish}" if finish else "no finish_reason"
    if finish == "length":
        why += ": it used its tokens before it answered (a reasoning model?)"
    return LLMFailure(f"the {API} returned no text ({why})", backend, trips=False)


# A local reasoning model (qwen3, deepseek-r1 under Ollama or llama.cpp) may put its thinking
# in the content, braces and all: the answer is what follows it.
_THINKING = re.compile(r"(?s)<think>.*?(?:</think>|\Z)")


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text of its parts (``{"type": "text",
    "text": ...}``; parts of other types, such as reasoning, left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            as_text(part.get("text"))
            for part in content
            if isinstance(part, dict) and part.get("type") in ("text", "output_text", None)
        )
    return ""
