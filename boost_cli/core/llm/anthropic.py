"""The Anthropic Messages API: ``POST {ANTHROPIC_BASE_URL}/v1/messages`` with ``x-api-key``.

The request is the one boost always sent (the recorded evaluation answers are keyed by its
prompts): model, max_tokens, system, one user message, and thinking disabled for
Haiku-class models. The answer's text blocks are joined; a refusal or no text is a
failure of that answer, not of the backend.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Union

from boost_cli import __version__
from boost_cli.core import http
from boost_cli.core.llm import web
from boost_cli.core.llm.base import LLMFailure, as_text, is_local, redact_secrets, shown_endpoint
from boost_cli.core.text import clip

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
API = "Messages API"


class AnthropicAPI:
    """The Messages API at ``base_url`` (``ANTHROPIC_BASE_URL``)."""

    backend = "api"

    def __init__(self, model: str, api_key: str, base_url: str, model_var: str) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.model_var = model_var
        self.endpoint = shown_endpoint(base_url)
        self.local = is_local(base_url)

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        bad = web.check_url(self.base_url.rstrip("/"), "ANTHROPIC_BASE_URL", "api")
        if bad:
            return bad
        headers = {
            "x-api-key": self.api_key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": f"boost/{__version__}",
        }
        body = web.post(
            f"{self.base_url.rstrip('/')}/v1/messages",
            payload(system, user, self.model, max_tokens),
            headers,
            deadline=deadline,
            key=self.api_key,
            api=API,
            backend="api",
            failure=lambda status, raw: _http_failure(status, raw, self.model_var),
        )
        if isinstance(body, LLMFailure):
            return body
        answer = _answer_text(body)
        if isinstance(answer, LLMFailure):
            return LLMFailure(http.redact(answer.reason, self.api_key), "api", answer.trips)
        # A 2xx answer can echo the key too (a proxy, a hostile endpoint): never pass it on.
        return redact_secrets(answer, (self.api_key,))


def payload(system: str, user: str, model: str, max_tokens: int) -> Dict[str, Any]:
    body: Dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": user}],
    }
    if "haiku" in model:
        # Haiku-class models may think by default; a rerank wants the fast answer. Larger
        # models (some cannot disable thinking) get the API's default instead.
        body["thinking"] = {"type": "disabled"}
    return body


def _http_failure(status: int, body: bytes, model_var: str) -> str:
    """One line for a non-2xx answer, from the API's ``{"type": "error", "error": …}`` body."""
    etype, message = "", ""
    try:
        payload = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        etype = as_text(payload["error"].get("type"))
        message = as_text(payload["error"].get("message"))
    reason = f"{API} HTTP {status}"
    if etype:
        reason += f" {etype}"
    if message:
        reason += f": {clip(message, 200)}"
    if status in (401, 403):
        reason += " — check ANTHROPIC_API_KEY"
    elif status == 404 and "model" in message.lower():
        reason += f" — check {model_var}"
    return reason


def _answer_text(data: bytes) -> Union[str, LLMFailure]:
    """The text blocks of a 200 Messages API response, joined."""
    try:
        message = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        return LLMFailure(f"the {API} returned malformed JSON", "api", trips=False)
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return LLMFailure(f"the {API} returned an unexpected response", "api", trips=False)
    stop_reason = as_text(message.get("stop_reason"))
    if stop_reason == "refusal":
        return LLMFailure("the model declined to answer (stop_reason refusal)", "api", trips=False)
    # Select by type: a thinking model's answer may start with thinking blocks.
    text = "".join(
        as_text(block.get("text"))
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "text"
    )
    if not text.strip():
        return LLMFailure(
            f"the {API} returned no text (stop_reason {stop_reason})", "api", trips=False
        )
    return text
