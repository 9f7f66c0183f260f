"""Text embeddings for the dense engine: provider config, the HTTP clients, a hash floor, a cache.

Providers: ``voyage`` and ``openai`` (their public APIs), ``openai-compatible`` (any server
speaking OpenAI's ``POST {base}/embeddings``, e.g. a local model), and ``hash`` (a
deterministic hashed random projection in pure Python: no weights, no network — the offline
floor and the test double).

`embed()` never raises for a provider problem: it returns `EmbedResult` (vectors
L2-normalised, in input order) or `EmbedFailure` (one line saying what went wrong). It
batches within each provider's limits, reorders results by their ``index``, and retries
429, 5xx, timeouts and connection errors with exponential backoff (honouring
``retry-after``, capped) through `http.post_json`; other 4xx are not retried.

API keys are read from the environment at call time and only ever put in the
``Authorization`` header: never in a config object, a repr, a log line or a failure reason
(a provider's error body goes through `http.redact` before it is quoted). A custom
``openai-compatible`` base URL only ever receives ``BOOST_EMBED_API_KEY`` — never
``OPENAI_API_KEY``, which belongs to api.openai.com. Redirects are refused so the header
cannot follow one to another host.

`EmbeddingCache` keeps vectors in the vector store's ``cache`` table, keyed by
sha256(text) + provider + model + dimensions + input type, committed per batch: unchanged
text is never sent twice, and an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import sqlite3
import sys
import urllib.parse
from array import array
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from boost_cli.core import http
from boost_cli.core.errors import ConfigError

PROVIDERS = ("voyage", "openai", "openai-compatible", "hash")
DEFAULT_MODELS: Mapping[str, str] = {
    "voyage": "voyage-3.5-lite",
    "openai": "text-embedding-3-small",
    "openai-compatible": "default",
    "hash": "hash-v1",
}
DEFAULT_BASE_URLS: Mapping[str, str] = {
    "voyage": "https://api.voyageai.com/v1",
    "openai": "https://api.openai.com/v1",
}
HASH_DIMENSIONS = 256
INPUT_TYPES = ("document", "query")

BACKOFF_SECONDS = 0.5  # first retry waits this long, then doubles
MAX_BACKOFF_SECONDS = 8.0
MAX_RETRY_AFTER_SECONDS = 20.0  # a server's retry-after is honoured up to this

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class Limits:
    """What one request may carry. Tokens are estimated as ``len(text) / 3`` (conservative:
    English runs ~4 characters a token), so ``max_tokens`` is a character budget in disguise."""

    max_inputs: int
    max_tokens: int
    max_chars_per_input: int


# Voyage: lists of up to 1,000 texts (128 on older models) and 120K-1M tokens a request
# depending on the model — 128 inputs and 100K estimated tokens fit every model.
# OpenAI: up to 2,048 inputs and 300K tokens summed a request, 8,192 tokens per input.
# openai-compatible: often a small local server (10-30 passages/s on two cores), so small
# batches keep each request well inside the timeout.
LIMITS: Dict[str, Limits] = {
    "voyage": Limits(max_inputs=128, max_tokens=100_000, max_chars_per_input=20_000),
    "openai": Limits(max_inputs=2048, max_tokens=250_000, max_chars_per_input=20_000),
    "openai-compatible": Limits(max_inputs=32, max_tokens=250_000, max_chars_per_input=20_000),
    "hash": Limits(max_inputs=4096, max_tokens=10**9, max_chars_per_input=20_000),
}


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class EmbedConfig:
    """Which embedder to use. Holds no secret: the key is read from the environment per call."""

    provider: str
    model: str
    base_url: Optional[str] = None
    dimensions: Optional[int] = None
    timeout: Optional[float] = None  # seconds a request may take; None: the caller's default

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (``{endpoint}/embeddings``); "" for ``hash``."""
        return (self.base_url or DEFAULT_BASE_URLS.get(self.provider, "")).rstrip("/")

    @property
    def label(self) -> str:
        """How failures name the provider: "Voyage", "OpenAI", "openai-compatible at <url>"
        (a user:password in the URL shown as ``***``)."""
        if self.provider == "hash":
            return "hash embedder"
        if self.provider == "openai-compatible":
            return f"openai-compatible at {http.redact(self.endpoint)}"
        name = "Voyage" if self.provider == "voyage" else "OpenAI"
        if self.base_url and self.endpoint != DEFAULT_BASE_URLS[self.provider]:
            return f"{name} at {http.redact(self.endpoint)}"
        return name

    @property
    def host(self) -> str:
        """Where texts go: the endpoint's host[:port] (no credentials), or "local" for ``hash``."""
        if self.provider == "hash":
            return "local"
        return urllib.parse.urlsplit(self.endpoint).netloc.rpartition("@")[2]

    @property
    def is_remote(self) -> bool:
        """True when embedding sends text off this machine (not hash, not a loopback server)."""
        if self.provider == "hash":
            return False
        host = urllib.parse.urlsplit(self.endpoint).hostname or ""
        return host not in http.LOOPBACK


_PROVIDER_FIX = "set BOOST_EMBED_PROVIDER to one of: " + ", ".join(PROVIDERS)


def resolve_config(config: Mapping[str, Any], env: Mapping[str, str]) -> Optional[EmbedConfig]:
    """The embedder to use, or None when none is configured.

    ``config`` is the loaded config (its ``settings.embed`` object: ``provider``, ``model``,
    ``base_url``, ``dimensions``, ``timeout``) or the settings mapping itself. The
    environment wins over the file: ``BOOST_EMBED_PROVIDER`` (``none`` turns dense off),
    ``BOOST_EMBED_MODEL``, ``BOOST_EMBED_BASE_URL``, ``BOOST_EMBED_DIMENSIONS``,
    ``BOOST_EMBED_TIMEOUT`` (seconds per request). With no provider named, a base URL
    means ``openai-compatible``, else ``VOYAGE_API_KEY`` means ``voyage``, else
    ``OPENAI_API_KEY`` means ``openai``. Raises `ConfigError` for an unknown provider, a
    base URL that is not http(s), or dimensions or a timeout that are not positive.
    """
    settings = config.get("settings", config)
    section = settings.get("embed") if isinstance(settings, Mapping) else None
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError("settings.embed in the config is not an object", _PROVIDER_FIX)

    def pick(env_name: str, key: str) -> Optional[str]:
        value = env.get(env_name) or section.get(key)
        return str(value).strip() if value not in (None, "") else None

    provider = pick("BOOST_EMBED_PROVIDER", "provider")
    base_url = pick("BOOST_EMBED_BASE_URL", "base_url")
    model = pick("BOOST_EMBED_MODEL", "model")
    dims_raw = pick("BOOST_EMBED_DIMENSIONS", "dimensions")
    timeout_raw = pick("BOOST_EMBED_TIMEOUT", "timeout")
    if provider is None:
        if base_url:
            provider = "openai-compatible"
        elif env.get("VOYAGE_API_KEY"):
            provider = "voyage"
        elif env.get("OPENAI_API_KEY"):
            provider = "openai"
        else:
            return None
    provider = provider.lower()
    if provider in ("none", "off"):
        return None
    if provider not in PROVIDERS:
        raise ConfigError(f"unknown embedding provider {provider!r}", _PROVIDER_FIX)
    if provider == "openai-compatible" and not base_url:
        raise ConfigError(
            "the openai-compatible embedding provider needs a base URL",
            "set BOOST_EMBED_BASE_URL, e.g. http://127.0.0.1:8765/v1",
        )
    if base_url is not None and provider != "hash":
        scheme = urllib.parse.urlsplit(base_url).scheme.lower()
        if scheme not in ("http", "https") or not urllib.parse.urlsplit(base_url).netloc:
            raise ConfigError(
                f"embedding base URL {base_url!r} is not an http(s) URL",
                "set BOOST_EMBED_BASE_URL to e.g. http://127.0.0.1:8765/v1",
            )
    dimensions: Optional[int] = None
    if dims_raw is not None:
        try:
            dimensions = int(dims_raw)
        except ValueError:
            dimensions = 0
        if dimensions <= 0:
            raise ConfigError(
                f"embedding dimensions {dims_raw!r} is not a positive integer",
                "set BOOST_EMBED_DIMENSIONS to e.g. 256, or unset it",
            )
    timeout: Optional[float] = None
    if timeout_raw is not None:
        try:
            timeout = float(timeout_raw)
        except ValueError:
            timeout = 0.0
        if not (math.isfinite(timeout) and timeout > 0):
            raise ConfigError(
                f"embedding timeout {timeout_raw!r} is not a positive number of seconds",
                "set BOOST_EMBED_TIMEOUT to e.g. 60, or unset it",
            )
    return EmbedConfig(
        provider=provider,
        model=model or DEFAULT_MODELS[provider],
        base_url=None if provider == "hash" else base_url,
        dimensions=dimensions,
        timeout=timeout,
    )


def _key_names(config: EmbedConfig) -> Tuple[str, ...]:
    if config.provider == "voyage":
        return ("BOOST_EMBED_API_KEY", "VOYAGE_API_KEY")
    if config.provider == "openai":
        return ("BOOST_EMBED_API_KEY", "OPENAI_API_KEY")
    if config.provider == "openai-compatible":
        return ("BOOST_EMBED_API_KEY",)
    return ()


def _api_key(config: EmbedConfig, env: Mapping[str, str]) -> Optional[str]:
    for name in _key_names(config):
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def missing_key_reason(
    config: EmbedConfig, env: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """Why ``config`` cannot be used for lack of an API key, or None when it can."""
    env = os.environ if env is None else env
    if config.provider in ("voyage", "openai") and _api_key(config, env) is None:
        names = _key_names(config)
        return f"{config.label}: no API key — set {names[1]} (or {names[0]})"
    return None


def model_id(config: EmbedConfig) -> str:
    """The model identity vectors are stored under. For ``hash`` it includes a fingerprint
    of the tokenizer, so a tokenizer change forces a re-embed instead of silently mixing
    vectors from two tokenizations."""
    if config.provider == "hash":
        return f"{config.model}+{_hash_fingerprint()}"
    return config.model


def dimensions_of(config: EmbedConfig) -> Optional[int]:
    """The vector length ``config`` yields when known before embedding anything."""
    if config.provider == "hash":
        return config.dimensions or HASH_DIMENSIONS
    return config.dimensions


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class EmbedResult:
    """Vectors in input order, each L2-normalised. ``model`` is what the provider says it
    served; ``sent``/``sent_chars`` count the texts that actually went to the provider."""

    vectors: List[List[float]]
    model: str
    dimensions: int
    sent: int = 0
    sent_chars: int = 0


@dataclass(frozen=True)
class EmbedFailure:
    """A provider problem, as one line that names the provider and never the key."""

    reason: str


EmbedOutcome = Union[EmbedResult, EmbedFailure]


# --------------------------------------------------------------------------- batching


def _approx_tokens(text: str) -> int:
    return len(text) // 3 + 1


def plan_batches(texts: Sequence[str], config: EmbedConfig) -> List[List[int]]:
    """Indexes of ``texts`` grouped into requests within ``LIMITS[config.provider]``,
    in order (a text over the token budget on its own still gets a request of its own)."""
    limits = LIMITS[config.provider]
    batches: List[List[int]] = []
    current: List[int] = []
    budget = 0
    for i, text in enumerate(texts):
        cost = _approx_tokens(text[: limits.max_chars_per_input])
        if current and (len(current) >= limits.max_inputs or budget + cost > limits.max_tokens):
            batches.append(current)
            current, budget = [], 0
        current.append(i)
        budget += cost
    if current:
        batches.append(current)
    return batches


# --------------------------------------------------------------------------- embed


def embed(
    texts: Sequence[str],
    *,
    config: EmbedConfig,
    input_type: str = "document",
    timeout: float = 30,
    max_retries: int = 4,
    progress: Optional[ProgressFn] = None,
    env: Optional[Mapping[str, str]] = None,
) -> EmbedOutcome:
    """Embed ``texts`` with ``config``'s provider; never raises for a provider problem.

    ``max_retries`` is the number of attempts a request gets in all (the failure says
    "after N tries"). ``progress(done, total)`` is called after each request. ``env``
    defaults to ``os.environ``, read now.
    """
    if input_type not in INPUT_TYPES:
        raise ValueError(f"input_type must be one of {INPUT_TYPES}, not {input_type!r}")
    env = os.environ if env is None else env
    total = len(texts)
    if total == 0:
        return EmbedResult([], model_id(config), dimensions_of(config) or 0)
    if config.provider == "hash":
        dims = dimensions_of(config) or HASH_DIMENSIONS
        vectors = [hash_vector(t, dims) for t in texts]
        if progress is not None:
            progress(total, total)
        return EmbedResult(vectors, model_id(config), dims, sent=total, sent_chars=_chars(texts))
    problem = missing_key_reason(config, env)
    if problem:
        return EmbedFailure(problem)
    key = _api_key(config, env)
    limits = LIMITS[config.provider]
    out: List[List[float]] = [[] for _ in range(total)]
    served = ""
    done = 0
    for batch in plan_batches(texts, config):
        inputs = [texts[i][: limits.max_chars_per_input] or " " for i in batch]
        outcome = _request(inputs, config, key, input_type, timeout, max(1, max_retries))
        if isinstance(outcome, EmbedFailure):
            return outcome
        vectors, served = outcome
        for i, vec in zip(batch, vectors):
            out[i] = vec
        done += len(batch)
        if progress is not None:
            progress(done, total)
    dims = len(out[0])
    if any(len(v) != dims for v in out):
        return EmbedFailure(f"{config.label} returned vectors of different lengths")
    if config.dimensions and dims != config.dimensions:
        return EmbedFailure(
            f"{config.label} returned {dims}-dimensional vectors, {config.dimensions} were asked for"
        )
    return EmbedResult(out, served or config.model, dims, sent=total, sent_chars=_chars(texts))


def _chars(texts: Sequence[str]) -> int:
    return sum(len(t) for t in texts)


def _payload(inputs: List[str], config: EmbedConfig, input_type: str) -> Dict[str, Any]:
    body: Dict[str, Any] = {"input": inputs, "model": config.model}
    if config.provider == "voyage":
        body["input_type"] = input_type
        body["truncation"] = True
        if config.dimensions:
            body["output_dimension"] = config.dimensions
    else:
        body["encoding_format"] = "float"
        if config.dimensions:
            body["dimensions"] = config.dimensions
    return body


def _request(
    inputs: List[str],
    config: EmbedConfig,
    key: Optional[str],
    input_type: str,
    timeout: float,
    tries: int,
) -> Union[Tuple[List[List[float]], str], EmbedFailure]:
    """One batch: POST with retries, then parse. Returns (vectors, served model) or a failure."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    retry = http.Retry(
        tries=tries,
        backoff=BACKOFF_SECONDS,
        max_backoff=MAX_BACKOFF_SECONDS,
        max_retry_after=MAX_RETRY_AFTER_SECONDS,
    )
    outcome = http.post_json(
        f"{config.endpoint}/embeddings",
        _payload(inputs, config, input_type),
        headers,
        timeout=timeout,
        retry=retry,
        secrets=(key,),
    )
    if isinstance(outcome, http.Response):
        if outcome.ok:
            return _parse(outcome.body, len(inputs), config)
        if not outcome.retryable:
            return EmbedFailure(
                f"{config.label}: HTTP {outcome.status}{_error_detail(outcome, key)}"
            )
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


def _parse(
    raw: bytes, n: int, config: EmbedConfig
) -> Union[Tuple[List[List[float]], str], EmbedFailure]:
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
            buf = array("f", base64.b64decode(value, validate=True))
        except ValueError:
            return None
        if sys.byteorder == "big":
            buf.byteswap()
        return list(buf)
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return None
    return [float(x) for x in value]


def l2_normalise(vector: Sequence[float]) -> Optional[List[float]]:
    """``vector`` scaled to unit length, or None when it is zero or not finite."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not norm or not math.isfinite(norm):
        return None
    return [x / norm for x in vector]


# --------------------------------------------------------------------------- hash


_HASH_KEY = b"boost-hash-embed-v1"
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.35
_WORD_RE = re.compile(r"[^\W_]+")
_SLOTS: Dict[Tuple[str, int], Tuple[int, float]] = {}
_SLOTS_LIMIT = 1_000_000


def _tokens(text: str) -> List[str]:
    """The project tokenizer when it is importable (stemmed, stopwords dropped), else a
    plain lowercase split; `model_id` fingerprints whichever is in use."""
    try:
        from boost_cli.core.tokenize import tokenize
    except ImportError:
        return [t for t in _WORD_RE.findall(text.lower()) if len(t) > 1]
    return tokenize(text)


_FINGERPRINT_PROBE = (
    "Testing the jest-runner with snake_case mocks, running tests: the quick brown foxes 42"
)


def _hash_fingerprint() -> str:
    joined = "\x1f".join(_tokens(_FINGERPRINT_PROBE))
    return hashlib.blake2b(joined.encode("utf-8"), digest_size=4).hexdigest()


def _slot(feature: str, dims: int) -> Tuple[int, float]:
    """The (dimension, ±1) a feature hashes to: keyed blake2b, so the same on every machine."""
    cached = _SLOTS.get((feature, dims))
    if cached is not None:
        return cached
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=_HASH_KEY).digest()
    value = int.from_bytes(digest, "little")
    slot = (value % dims, 1.0 if (value >> 63) & 1 else -1.0)
    if len(_SLOTS) >= _SLOTS_LIMIT:
        _SLOTS.clear()
    _SLOTS[(feature, dims)] = slot
    return slot


def _features(text: str) -> Iterator[Tuple[str, float]]:
    counts: Dict[str, int] = {}
    for token in _tokens(text):
        counts[token] = counts.get(token, 0) + 1
    for token, count in counts.items():
        weight = 1.0 + math.log(count)  # sublinear term frequency
        yield "w:" + token, _WORD_WEIGHT * weight
        padded = f"<{token}>"
        for i in range(len(padded) - 2):
            yield "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT * weight


def hash_vector(text: str, dims: int = HASH_DIMENSIONS) -> List[float]:
    """A deterministic unit vector for ``text``: its tokens (weight 1) and their character
    trigrams (weight 0.35), each scaled by 1 + ln(tf), hashed to ±1 in one of ``dims``
    dimensions; texts sharing words or word pieces get a higher cosine. A text with no
    tokens maps to a fixed unit vector."""
    acc = [0.0] * dims
    for feature, weight in _features(text):
        index, sign = _slot(feature, dims)
        acc[index] += sign * weight
    unit = l2_normalise(acc)
    if unit is None:
        index, sign = _slot("empty", dims)
        unit = [0.0] * dims
        unit[index] = sign
    return unit


# --------------------------------------------------------------------------- cache


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text, hex: the identity of a text in the cache and the store."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pack(vector: Sequence[float]) -> bytes:
    """Little-endian float32 bytes (the layout sqlite-vec reads)."""
    buf = array("f", vector)
    if sys.byteorder == "big":
        buf.byteswap()
    return buf.tobytes()


def unpack(blob: bytes) -> array[float]:
    """The float32 array packed by `pack`."""
    buf = array("f")
    buf.frombytes(blob)
    if sys.byteorder == "big":
        buf.byteswap()
    return buf


class EmbeddingCache:
    """Vectors already paid for, in a ``cache`` table of the vector store.

    Keyed by (sha256(text), provider, model id, requested dimensions, input type). Rows are
    committed after every provider batch, so an interrupted run keeps what it embedded.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS cache ("
            " text_hash TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,"
            " dims INTEGER NOT NULL, input_type TEXT NOT NULL, vector BLOB NOT NULL,"
            " served TEXT NOT NULL, PRIMARY KEY (text_hash, provider, model, dims, input_type))"
        )

    @staticmethod
    def _key(config: EmbedConfig, input_type: str) -> Tuple[str, str, int, str]:
        return (config.provider, model_id(config), config.dimensions or 0, input_type)

    def lookup(
        self, hashes: Sequence[str], config: EmbedConfig, input_type: str = "document"
    ) -> Dict[str, Tuple[List[float], str]]:
        """The cached (vector, served model) of each of ``hashes`` that is cached."""
        provider, model, dims, kind = self._key(config, input_type)
        found: Dict[str, Tuple[List[float], str]] = {}
        unique = sorted(set(hashes))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                "SELECT text_hash, vector, served FROM cache WHERE provider=? AND model=? AND dims=?"
                f" AND input_type=? AND text_hash IN ({marks})",
                (provider, model, dims, kind, *chunk),
            )
            for h, blob, served in rows:
                found[h] = (list(unpack(blob)), served)
        return found

    def store(
        self,
        items: Sequence[Tuple[str, Sequence[float]]],
        config: EmbedConfig,
        served: str,
        input_type: str = "document",
    ) -> None:
        """Save (hash, vector) pairs embedded by model ``served``, and commit."""
        provider, model, dims, kind = self._key(config, input_type)
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(h, provider, model, dims, kind, pack(v), served) for h, v in items],
            )

    def embed(
        self,
        texts: Sequence[str],
        *,
        config: EmbedConfig,
        input_type: str = "document",
        progress: Optional[ProgressFn] = None,
        timeout: float = 30,
        max_retries: int = 4,
        env: Optional[Mapping[str, str]] = None,
    ) -> EmbedOutcome:
        """Like `embed`, but each distinct text is sent at most once, ever: cached vectors
        are reused and new ones are stored batch by batch (kept even if a later batch fails).
        ``sent``/``sent_chars`` in the result count what actually went to the provider."""
        hashes = [text_hash(t) for t in texts]
        known = self.lookup(hashes, config, input_type)
        todo: Dict[str, str] = {}
        for h, t in zip(hashes, texts):
            if h not in known and h not in todo:
                todo[h] = t
        missing = list(todo.items())
        served = next((s for _, s in known.values()), model_id(config))
        sent = sent_chars = 0
        batches = plan_batches([t for _, t in missing], config)
        total = len(missing)
        for batch in batches:
            pairs = [missing[i] for i in batch]
            outcome = embed(
                [t for _, t in pairs],
                config=config,
                input_type=input_type,
                timeout=timeout,
                max_retries=max_retries,
                env=env,
            )
            if isinstance(outcome, EmbedFailure):
                return outcome
            served = outcome.model
            fresh = [(h, v) for (h, _), v in zip(pairs, outcome.vectors)]
            self.store(fresh, config, served, input_type)
            for h, v in fresh:
                known[h] = (v, served)
            sent += outcome.sent
            sent_chars += outcome.sent_chars
            if progress is not None:
                progress(sent, total)
        vectors = [known[h][0] for h in hashes]
        dims = len(vectors[0]) if vectors else dimensions_of(config) or 0
        return EmbedResult(vectors, served, dims, sent=sent, sent_chars=sent_chars)
