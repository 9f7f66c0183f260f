"""The HTTP embedding APIs: Voyage, OpenAI, and any server speaking OpenAI's wire format.

All three ``POST {endpoint}/embeddings`` with ``{"input": [...], "model": ...}`` and answer
``{"data": [{"embedding", "index"}], "model"}``; they differ in the payload's extra fields
(Voyage's ``input_type`` and ``output_dimension``, OpenAI's ``dimensions``), their
defaults, their batch limits and which environment variables hold their key. Requests
go through `http.post_json` (retries, redirects refused, redaction); responses are
checked and put back in input order here.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core import http
from boost_cli.core.binio import from_le
from boost_cli.core.embed.base import (
    LIMITS,
    EmbedConfig,
    Embedded,
    EmbedFailure,
    EmbedOptions,
    Limits,
    Provider,
    l2_normalise,
    plan_batches,
)

BACKOFF_SECONDS = 0.5  # first retry waits this long, then doubles
# A batch's answer is read up to this much per input (a 4,096-dimension vector written
# out as JSON floats) plus a margin; a server sending more is not read further.
MAX_BYTES_PER_INPUT = 4096 * 24
MAX_BYTES_MARGIN = 64 * 1024
MAX_BACKOFF_SECONDS = 8.0
MAX_RETRY_AFTER_SECONDS = 20.0  # a server's retry-after is honoured up to this


class HttpProvider(Provider):
    """An API answering OpenAI's embeddings wire format; subclasses add their fields."""

    key_names: Tuple[str, ...] = ("BOOST_EMBED_API_KEY",)

    def detect(self, base_url: Optional[str], env: Mapping[str, str]) -> bool:
        # Never by a key alone: a key in the environment is there for other tools, and
        # embedding would send every registry text to a paid remote API (docs/llm.md,
        # "One egress rule"). A hosted API is used when named; a base URL means
        # openai-compatible.
        return False

    def payload(self, inputs: List[str], config: EmbedConfig, input_type: str) -> Dict[str, Any]:
        body: Dict[str, Any] = {"input": inputs, "model": config.model}
        body["encoding_format"] = "float"
        if config.dimensions:
            body["dimensions"] = config.dimensions
        return body

    def embed_texts(
        self, texts: Sequence[str], config: EmbedConfig, options: EmbedOptions
    ) -> Embedded:
        limits = LIMITS[config.provider]
        out: List[List[float]] = [[] for _ in texts]
        served = ""
        done = 0
        for batch in plan_batches(texts, config):
            inputs = [texts[i][: limits.max_chars_per_input] or " " for i in batch]
            outcome = self._request(inputs, config, options)
            if isinstance(outcome, EmbedFailure):
                return outcome
            vectors, served = outcome
            for i, vec in zip(batch, vectors):
                out[i] = vec
            done += len(batch)
            if options.progress is not None:
                options.progress(done, len(texts))
        return out, served

    def _request(self, inputs: List[str], config: EmbedConfig, options: EmbedOptions) -> Embedded:
        """One batch: POST with retries, then parse."""
        key, timeout, tries = options.key, options.timeout, options.tries
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        retry = http.Retry(
            tries=tries,
            backoff=BACKOFF_SECONDS,
            max_backoff=MAX_BACKOFF_SECONDS,
            max_retry_after=MAX_RETRY_AFTER_SECONDS,
        )
        outcome = http.post_json(
            f"{config.endpoint}/embeddings",
            self.payload(inputs, config, options.input_type),
            headers,
            timeout=timeout,
            retry=retry,
            secrets=(key,),
            max_body=MAX_BYTES_MARGIN + len(inputs) * MAX_BYTES_PER_INPUT,
        )
        if isinstance(outcome, http.Response):
            if outcome.ok and outcome.too_large:
                limit = (MAX_BYTES_MARGIN + len(inputs) * MAX_BYTES_PER_INPUT) / 1e6
                return EmbedFailure(f"{config.label}: the answer is larger than {limit:.1f} MB")
            if outcome.ok:
                return _parse(outcome.body, len(inputs), config)
            if not outcome.retryable:
                detail = _error_detail(outcome, key)
                return EmbedFailure(f"{config.label}: HTTP {outcome.status}{detail}")
            last = f"HTTP {outcome.status}"
        elif outcome.timed_out:
            last = f"timed out after {timeout:g} s"
        elif outcome.connecting:
            last = f"cannot connect ({outcome.detail})"
        else:
            last = f"connection failed ({outcome.error})"
        if tries == 1:
            return EmbedFailure(f"{config.label}: {last}")
        if isinstance(outcome, http.Unreachable) and outcome.timed_out:
            return EmbedFailure(f"{config.label}: {last} ({tries} tries)")
        return EmbedFailure(f"{config.label}: {last} after {tries} tries")


class OpenAI(HttpProvider):
    name = "openai"
    title = "OpenAI"
    default_model = "text-embedding-3-small"
    default_base_url = "https://api.openai.com/v1"
    key_names = ("BOOST_EMBED_API_KEY", "OPENAI_API_KEY")
    key_required = True
    # When named, OPENAI_BASE_URL (the OpenAI SDK's variable) is honoured like the LLM's.
    base_url_var = "OPENAI_BASE_URL"
    # Up to 2,048 inputs and 300K tokens summed a request, 8,192 tokens per input.
    limits = Limits(max_inputs=2048, max_tokens=250_000, max_chars_per_input=20_000)


class Voyage(HttpProvider):
    name = "voyage"
    title = "Voyage"
    default_model = "voyage-3.5-lite"
    default_base_url = "https://api.voyageai.com/v1"
    key_names = ("BOOST_EMBED_API_KEY", "VOYAGE_API_KEY")
    key_required = True
    # Lists of up to 1,000 texts (128 on older models) and 120K-1M tokens a request
    # depending on the model: 128 inputs and 100K estimated tokens fit every model.
    limits = Limits(max_inputs=128, max_tokens=100_000, max_chars_per_input=20_000)

    def payload(self, inputs: List[str], config: EmbedConfig, input_type: str) -> Dict[str, Any]:
        body: Dict[str, Any] = {"input": inputs, "model": config.model}
        body["input_type"] = input_type
        body["truncation"] = True
        if config.dimensions:
            body["output_dimension"] = config.dimensions
        return body


class OpenAICompatible(HttpProvider):
    """Any server at ``BOOST_EMBED_BASE_URL``. It only ever gets ``BOOST_EMBED_API_KEY``,
    never ``OPENAI_API_KEY`` (that key belongs to api.openai.com)."""

    name = "openai-compatible"
    title = "openai-compatible"
    default_model = "default"
    needs_base_url = True
    # Often a small local model server: small batches keep each request inside the
    # timeout (its throughput: docs/dense.md).
    limits = Limits(max_inputs=32, max_tokens=250_000, max_chars_per_input=20_000)

    def detect(self, base_url: Optional[str], env: Mapping[str, str]) -> bool:
        return bool(base_url)


# --------------------------------------------------------------------------- responses


def _error_detail(response: http.Response, key: Optional[str]) -> str:
    """ " — <provider's message>" for a 4xx (key redacted, one line, clipped), or a fix."""
    if response.status in (401, 403):
        return " — the API key was refused; check the key in your environment"
    body = response.body[:4096].decode("utf-8", errors="replace")
    message = body
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        err = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(err, dict):
            err = err.get("message")
        if isinstance(err, str):
            message = err
    message = " ".join(http.redact(message, key).split())[:200]
    return f" — {message}" if message else ""


def _parse(raw: bytes, n: int, config: EmbedConfig) -> Embedded:
    """(unit vectors in input order, the model served) from a 200 body, or why not."""
    label = config.label
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return EmbedFailure(f"malformed JSON from {label}")
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return EmbedFailure(f"unexpected response from {label}: no 'data' list")
    if len(data) != n:
        return EmbedFailure(f"{label} returned {len(data)} vectors for {n} inputs")
    slots: List[Optional[List[float]]] = [None] * n
    for pos, item in enumerate(data):
        if not isinstance(item, dict):
            return EmbedFailure(f"unexpected response from {label}: a data item is not an object")
        index = item.get("index", pos)
        if not isinstance(index, int) or not 0 <= index < n or slots[index] is not None:
            return EmbedFailure(f"{label} returned a bad or repeated index {index!r}")
        vector = _vector(item.get("embedding"))
        if vector is None:
            return EmbedFailure(f"{label} returned an embedding that is not a list of numbers")
        normalised = l2_normalise(vector)
        if normalised is None:
            return EmbedFailure(f"{label} returned a zero or non-finite vector")
        slots[index] = normalised
    model = doc.get("model")
    return [s for s in slots if s is not None], model if isinstance(model, str) else ""


def _vector(value: object) -> Optional[List[float]]:
    if isinstance(value, str):  # encoding_format=base64: little-endian float32
        try:
            return list(from_le("f", base64.b64decode(value, validate=True)))
        except ValueError:
            return None
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return None
    return [float(x) for x in value]
