"""The Gemini API: ``POST {base}/v1beta/models/{model}:generateContent`` with the key in
the ``x-goog-api-key`` header (never in the URL, where logs and proxies keep it).

``GEMINI_API_KEY`` (else ``GOOGLE_API_KEY``); ``GOOGLE_GEMINI_BASE_URL`` (the Gen AI
SDK's variable) replaces the default host. The answer is the text parts of the first
candidate, thought parts left out; a blocked prompt or a safety stop is a failure of that
answer, not of the backend.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, Union

from boost_cli import __version__
from boost_cli.core import http
from boost_cli.core.llm import web
from boost_cli.core.llm.base import LLMFailure, as_text, is_local, redact_secrets, shown_endpoint
from boost_cli.core.text import clip

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API = "Gemini API"


class GeminiAPI:
    """generateContent at ``base_url``."""

    backend = "gemini"

    def __init__(self, model: str, key: str, key_var: str, base_url: str, model_var: str) -> None:
        self.model = model
        self.key = key
        self.key_var = key_var
        self.base_url = base_url.rstrip("/")
        self.model_var = model_var
        self.endpoint = shown_endpoint(self.base_url)
        self.local = is_local(self.base_url)

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        bad = web.check_url(self.base_url, "GOOGLE_GEMINI_BASE_URL", "gemini")
        if bad:
            return bad
        model = self.model[len("models/") :] if self.model.startswith("models/") else self.model
        url = (
            f"{self.base_url}/v1beta/models/{urllib.parse.quote(model, safe='-._')}:generateContent"
        )
        headers = {"x-goog-api-key": self.key, "user-agent": f"boost/{__version__}"}
        body = web.post(
            url,
            payload(system, user, model, max_tokens),
            headers,
            deadline=deadline,
            key=self.key,
            api=API,
            backend="gemini",
            failure=self._failure,
        )
        if isinstance(body, LLMFailure):
            return body
        answer = answer_text(body)
        if isinstance(answer, LLMFailure):
            return LLMFailure(http.redact(answer.reason, self.key), "gemini", answer.trips)
        return redact_secrets(answer, (self.key,))

    def _failure(self, status: int, raw: bytes) -> str:
        message, code = "", ""
        try:
            doc = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            doc = None
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict):
            message, code = as_text(err.get("message")), as_text(err.get("status"))
        reason = f"{API} HTTP {status}"
        if code:
            reason += f" {code}"
        if message:
            reason += f": {clip(message, 200)}"
        if status in (401, 403) or "API key" in message:
            reason += f" — check {self.key_var}"
        elif status == 404:
            reason += f" — check {self.model_var} (or BOOST_LLM_MODEL)"
        return reason


def payload(system: str, user: str, model: str, max_tokens: int) -> Dict[str, Any]:
    config: Dict[str, Any] = {"maxOutputTokens": max_tokens}
    if "flash" in model and "2.5" in model:
        # 2.5 Flash and Flash-Lite think unless told not to; the budget counts against the
        # answer's tokens. (Pro cannot turn thinking off: it gets the API's default.)
        config["thinkingConfig"] = {"thinkingBudget": 0}
    return {
        "systemInstruction": {"parts": [{"text": system}]},
        "contents": [{"role": "user", "parts": [{"text": user}]}],
        "generationConfig": config,
    }


def answer_text(data: bytes) -> Union[str, LLMFailure]:
    """The text parts of the first candidate of a 200 generateContent answer, joined."""
    try:
        doc = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        return LLMFailure(f"the {API} returned malformed JSON", "gemini", trips=False)
    if not isinstance(doc, dict):
        return LLMFailure(f"the {API} returned an unexpected response", "gemini", trips=False)
    feedback = doc.get("promptFeedback")
    blocked = as_text(feedback.get("blockReason")) if isinstance(feedback, dict) else ""
    candidates = doc.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if not isinstance(first, dict):
        if blocked:
            return LLMFailure(f"the {API} blocked the prompt ({blocked})", "gemini", trips=False)
        return LLMFailure(f"the {API} returned no candidate", "gemini", trips=False)
    content = first.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    text = "".join(
        as_text(p.get("text"))
        for p in (parts if isinstance(parts, list) else [])
        if isinstance(p, dict) and not p.get("thought")
    )
    if text.strip():
        return text
    finish = as_text(first.get("finishReason")) or "none"
    return LLMFailure(f"the {API} returned no text (finishReason {finish})", "gemini", trips=False)
