"""Embedding providers against local wire-format servers; the hash floor; the cache; keys."""

from __future__ import annotations

import math
import sqlite3
from typing import Iterator, List

import pytest

from boost_cli.core import embed as E
from boost_cli.core import http
from boost_cli.core.embed import (
    EmbedConfig,
    EmbeddingCache,
    EmbedFailure,
    EmbedResult,
    embed,
    hash_vector,
    resolve_config,
)
from boost_cli.core.embed.remote import _parse
from boost_cli.core.errors import ConfigError
from tests.embed_stubs import StubEmbedServer, stub_vector

KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> List[float]:
    """Backoff waits, recorded instead of slept."""
    seen: List[float] = []
    monkeypatch.setattr(http, "_sleep", seen.append)
    return seen


@pytest.fixture
def openai_server() -> Iterator[StubEmbedServer]:
    with StubEmbedServer("openai") as server:
        yield server


@pytest.fixture
def voyage_server() -> Iterator[StubEmbedServer]:
    with StubEmbedServer("voyage", dims=6) as server:
        yield server


def compat(server: StubEmbedServer) -> EmbedConfig:
    return EmbedConfig("openai-compatible", "m", base_url=server.base_url)


def dot(a: List[float], b: List[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def unit(v: List[float]) -> List[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


# --------------------------------------------------------------------------- success paths


def test_openai_compatible_success_normalised_and_in_order(openai_server: StubEmbedServer) -> None:
    texts = ["alpha", "beta", "gamma"]
    result = embed(texts, config=compat(openai_server), env={})
    assert isinstance(result, EmbedResult)
    assert result.model == "stub-model" and result.dimensions == 8
    for text, vec in zip(texts, result.vectors):
        assert vec == pytest.approx(unit(stub_vector(text, 8)))
        assert math.isclose(math.sqrt(dot(vec, vec)), 1.0, rel_tol=1e-9)
    (req,) = openai_server.requests
    assert req.path == "/v1/embeddings"
    assert req.body == {"input": texts, "model": "m", "encoding_format": "float"}
    assert "authorization" not in req.headers  # no key configured: none sent


def test_out_of_order_index_is_reordered(openai_server: StubEmbedServer) -> None:
    openai_server.script = ["shuffle"]
    texts = ["one", "two", "three", "four"]
    result = embed(texts, config=compat(openai_server), env={})
    assert isinstance(result, EmbedResult)
    assert [v[:3] for v in result.vectors] == [
        pytest.approx(unit(stub_vector(t, 8))[:3]) for t in texts
    ]


def test_voyage_wire_format_headers_and_input_type(voyage_server: StubEmbedServer) -> None:
    config = EmbedConfig("voyage", "voyage-3.5-lite", base_url=voyage_server.base_url)
    result = embed(["a doc"], config=config, env={"VOYAGE_API_KEY": KEY})
    assert isinstance(result, EmbedResult) and result.dimensions == 6
    query = embed(["a query"], config=config, input_type="query", env={"VOYAGE_API_KEY": KEY})
    assert isinstance(query, EmbedResult)
    first, second = voyage_server.requests
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body == {
        "input": ["a doc"],
        "model": "voyage-3.5-lite",
        "input_type": "document",
        "truncation": True,
    }
    assert second.body["input_type"] == "query"


def test_dimensions_are_requested_per_provider(
    openai_server: StubEmbedServer, voyage_server: StubEmbedServer
) -> None:
    r1 = embed(
        ["x"],
        config=EmbedConfig("openai", "text-embedding-3-small", openai_server.base_url, 4),
        env={"OPENAI_API_KEY": KEY},
    )
    r2 = embed(
        ["x"],
        config=EmbedConfig("voyage", "voyage-3.5", voyage_server.base_url, 5),
        env={"VOYAGE_API_KEY": KEY},
    )
    assert isinstance(r1, EmbedResult) and r1.dimensions == 4
    assert isinstance(r2, EmbedResult) and r2.dimensions == 5
    assert openai_server.requests[0].body["dimensions"] == 4
    assert voyage_server.requests[0].body["output_dimension"] == 5


def test_boost_key_wins_and_openai_key_never_goes_to_a_custom_url(
    openai_server: StubEmbedServer,
) -> None:
    embed(["x"], config=compat(openai_server), env={"OPENAI_API_KEY": KEY})
    assert "authorization" not in openai_server.requests[-1].headers
    embed(["x"], config=compat(openai_server), env={"BOOST_EMBED_API_KEY": "local-key"})
    assert openai_server.requests[-1].headers["authorization"] == "Bearer local-key"


# --------------------------------------------------------------------------- batching


def test_batches_respect_count_limit(
    openai_server: StubEmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(E.LIMITS, "openai-compatible", E.Limits(3, 10**6, 1000))
    texts = [f"text {i}" for i in range(8)]
    progress: List[tuple] = []
    result = embed(
        texts, config=compat(openai_server), env={}, progress=lambda d, t: progress.append((d, t))
    )
    assert isinstance(result, EmbedResult) and len(result.vectors) == 8
    assert openai_server.inputs() == [texts[0:3], texts[3:6], texts[6:8]]
    assert progress == [(3, 8), (6, 8), (8, 8)]
    assert result.vectors[7] == pytest.approx(unit(stub_vector("text 7", 8)))


def test_batches_respect_token_budget_and_clip_long_inputs(
    openai_server: StubEmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 300 characters ~ 101 estimated tokens each; a budget of 250 fits two per request.
    monkeypatch.setitem(E.LIMITS, "openai-compatible", E.Limits(100, 250, 300))
    texts = ["a" * 300, "b" * 300, "c" * 300, "d" * 5000]
    result = embed(texts, config=compat(openai_server), env={})
    assert isinstance(result, EmbedResult)
    sizes = [[len(t) for t in batch] for batch in openai_server.inputs()]
    assert sizes == [[300, 300], [300, 300]]  # the 5,000-char text was clipped to 300


def test_plan_batches_gives_an_oversized_text_its_own_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(E.LIMITS, "openai", E.Limits(10, 50, 10**6))
    config = EmbedConfig("openai", "m")
    assert E.plan_batches(["x" * 30, "y" * 600, "z" * 30], config) == [[0], [1], [2]]
    assert E.plan_batches([], config) == []


# --------------------------------------------------------------------------- failures and retries


def test_429_then_success_retries_with_retry_after(
    openai_server: StubEmbedServer, waits: List[float]
) -> None:
    openai_server.script = ["429", "ok"]
    result = embed(["x"], config=compat(openai_server), env={})
    assert isinstance(result, EmbedResult)
    assert len(openai_server.requests) == 2
    assert waits == [0.0]  # retry-after: 0 honoured instead of the backoff


def test_500_always_fails_after_all_tries_with_exponential_backoff(
    openai_server: StubEmbedServer, waits: List[float]
) -> None:
    openai_server.default = "500"
    config = compat(openai_server)
    result = embed(["x"], config=config, env={})
    assert result == EmbedFailure(f"openai-compatible at {config.endpoint}: HTTP 500 after 4 tries")
    assert len(openai_server.requests) == 4
    assert waits == [0.5, 1.0, 2.0]


def test_hang_past_timeout_is_retried_then_reported(
    openai_server: StubEmbedServer, waits: List[float]
) -> None:
    openai_server.script = ["hang", "hang"]
    config = compat(openai_server)
    result = embed(["x"], config=config, timeout=0.2, max_retries=2, env={})
    assert result == EmbedFailure(
        f"openai-compatible at {config.endpoint}: timed out after 0.2 s (2 tries)"
    )
    openai_server.script = ["hang"]
    recovered = embed(["x"], config=config, timeout=0.2, max_retries=2, env={})
    assert isinstance(recovered, EmbedResult)


def test_connection_refused_is_retried_then_reported(waits: List[float]) -> None:
    config = EmbedConfig("openai-compatible", "m", base_url="http://127.0.0.1:9/v1")
    result = embed(["x"], config=config, max_retries=3, env={})
    assert isinstance(result, EmbedFailure)
    assert result.reason.startswith("openai-compatible at http://127.0.0.1:9/v1: cannot connect")
    assert result.reason.endswith("after 3 tries")
    assert len(waits) == 2


def test_malformed_json(openai_server: StubEmbedServer, waits: List[float]) -> None:
    openai_server.script = ["malformed"]
    config = compat(openai_server)
    assert embed(["x"], config=config, env={}) == EmbedFailure(
        f"malformed JSON from openai-compatible at {config.endpoint}"
    )
    assert waits == []


def test_wrong_vector_count(voyage_server: StubEmbedServer) -> None:
    voyage_server.script = ["short"]
    config = EmbedConfig("voyage", "voyage-3.5-lite", base_url=voyage_server.base_url)
    result = embed(["a", "b", "c", "d"], config=config, env={"VOYAGE_API_KEY": KEY})
    assert result == EmbedFailure(
        f"Voyage at {voyage_server.base_url} returned 3 vectors for 4 inputs"
    )


def test_other_4xx_is_not_retried_and_quotes_the_message(
    openai_server: StubEmbedServer, waits: List[float]
) -> None:
    openai_server.script = ["400"]
    config = compat(openai_server)
    result = embed(["x"], config=config, env={})
    assert result == EmbedFailure(
        f"openai-compatible at {config.endpoint}: HTTP 400 — input must not be empty"
    )
    assert len(openai_server.requests) == 1 and waits == []


def test_redirect_is_refused_so_the_key_cannot_follow(openai_server: StubEmbedServer) -> None:
    openai_server.script = ["redirect"]
    config = compat(openai_server)
    result = embed(["x"], config=config, env={"BOOST_EMBED_API_KEY": KEY})
    assert isinstance(result, EmbedFailure) and "HTTP 307" in result.reason
    assert len(openai_server.requests) == 1


def test_missing_key_for_a_hosted_provider() -> None:
    result = embed(["x"], config=EmbedConfig("voyage", "voyage-3.5-lite"), env={})
    assert result == EmbedFailure(
        "Voyage: no API key — set VOYAGE_API_KEY (or BOOST_EMBED_API_KEY)"
    )
    result = embed(["x"], config=EmbedConfig("openai", "text-embedding-3-small"), env={})
    assert result == EmbedFailure(
        "OpenAI: no API key — set OPENAI_API_KEY (or BOOST_EMBED_API_KEY)"
    )


# --------------------------------------------------------------------------- keys never leak


def test_keys_never_leak_into_repr_or_failures(
    openai_server: StubEmbedServer, voyage_server: StubEmbedServer, waits: List[float]
) -> None:
    env = {"BOOST_EMBED_API_KEY": KEY, "VOYAGE_API_KEY": KEY, "OPENAI_API_KEY": KEY}
    config = resolve_config({}, {**env, "BOOST_EMBED_BASE_URL": openai_server.base_url})
    assert config is not None and KEY not in repr(config)
    reasons: List[str] = []
    for action in ("401", "400", "500", "malformed", "short", "redirect"):
        for server, cfg in (
            (openai_server, config),
            (voyage_server, EmbedConfig("voyage", "v", base_url=voyage_server.base_url)),
        ):
            server.script = [action]
            server.default = action
            result = embed(["x", "y"], config=cfg, max_retries=1, env=env)
            assert isinstance(result, EmbedFailure), action
            reasons.append(result.reason)
    assert reasons and all(KEY not in r and "SECRET" not in r for r in reasons)
    assert any("HTTP 401 — the API key was refused" in r for r in reasons)


def test_scrub_masks_the_key_and_key_shaped_tokens() -> None:
    assert http.redact(f"bad key {KEY} and sk-abc***wxyz1234", KEY) == "bad key *** and ***"


# --------------------------------------------------------------------------- resolve_config


def test_resolve_config_from_env_and_file() -> None:
    assert resolve_config({}, {}) is None
    assert resolve_config({}, {"BOOST_EMBED_PROVIDER": "none", "VOYAGE_API_KEY": KEY}) is None
    # a key alone never picks a remote API (tests/test_egress.py); naming one does
    assert resolve_config({}, {"VOYAGE_API_KEY": KEY}) is None
    assert resolve_config({}, {"OPENAI_API_KEY": KEY}) is None
    named = {"BOOST_EMBED_PROVIDER": "voyage", "VOYAGE_API_KEY": KEY}
    assert resolve_config({}, named) == EmbedConfig("voyage", "voyage-3.5-lite")
    url = "http://127.0.0.1:8765/v1"
    assert resolve_config({}, {"BOOST_EMBED_BASE_URL": url, "VOYAGE_API_KEY": KEY}) == (
        EmbedConfig("openai-compatible", "default", url)
    )
    file_cfg = {"settings": {"embed": {"provider": "openai", "model": "m1", "dimensions": 256}}}
    assert resolve_config(file_cfg, {}) == EmbedConfig("openai", "m1", None, 256)
    assert resolve_config(file_cfg, {"BOOST_EMBED_MODEL": "m2"}) == EmbedConfig(
        "openai", "m2", None, 256
    )
    assert resolve_config({}, {"BOOST_EMBED_PROVIDER": "hash"}) == EmbedConfig("hash", "hash-v1")


@pytest.mark.parametrize(
    "env, message",
    [
        ({"BOOST_EMBED_PROVIDER": "cohere"}, "unknown embedding provider 'cohere'"),
        ({"BOOST_EMBED_PROVIDER": "openai-compatible"}, "needs a base URL"),
        ({"BOOST_EMBED_BASE_URL": "file:///etc/passwd"}, "is not an http(s) URL"),
        ({"BOOST_EMBED_PROVIDER": "hash", "BOOST_EMBED_DIMENSIONS": "-3"}, "not a positive"),
    ],
)
def test_resolve_config_rejects_bad_settings(env: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_config({}, env)


def test_is_remote_and_host() -> None:
    assert not EmbedConfig("hash", "hash-v1").is_remote
    local = EmbedConfig("openai-compatible", "m", "http://127.0.0.1:8765/v1")
    assert not local.is_remote and local.host == "127.0.0.1:8765"
    assert EmbedConfig("voyage", "voyage-3.5-lite").host == "api.voyageai.com"
    assert EmbedConfig("voyage", "voyage-3.5-lite").is_remote


def test_url_credentials_are_never_shown(waits: List[float]) -> None:
    # No port: urllib fails before any lookup, naming "hunter2@127.0.0.1" as a bad port.
    config = EmbedConfig("openai-compatible", "m", "http://user:hunter2@127.0.0.1/v1")
    assert config.label == "openai-compatible at http://***@127.0.0.1/v1"
    assert config.host == "127.0.0.1" and not config.is_remote
    result = embed(["x"], config=config, max_retries=2, env={})
    assert result == EmbedFailure(
        "openai-compatible at http://***@127.0.0.1/v1: connection failed (InvalidURL) after 2 tries"
    )


# --------------------------------------------------------------------------- hash provider


def test_hash_vectors_are_deterministic_unit_and_pinned() -> None:
    a = hash_vector("Test my React app with Jest")
    assert a == hash_vector("Test my React app with Jest")
    assert len(a) == 256 and math.isclose(dot(a, a), 1.0, rel_tol=1e-9)
    # Pinned: the same text gives the same vector on every machine and every run.
    nonzero = [(i, round(x, 6)) for i, x in enumerate(hash_vector("pdf", 16)) if x]
    assert nonzero == PINNED_PDF_16


PINNED_PDF_16 = [(3, -0.428393), (6, -0.795587), (14, -0.428393)]


def test_hash_similar_texts_score_higher() -> None:
    q = hash_vector("write unit tests for a react component")
    near = hash_vector("Testing React components with Jest and Testing Library")
    far = hash_vector("Provision a Kubernetes cluster on AWS with Terraform")
    assert dot(q, near) > dot(q, far) + 0.2


def test_hash_provider_through_embed_and_empty_text() -> None:
    config = EmbedConfig("hash", "hash-v1", dimensions=32)
    result = embed(["one", "!!!"], config=config)
    assert isinstance(result, EmbedResult) and result.dimensions == 32
    assert result.model.startswith("hash-v1+")
    assert math.isclose(dot(result.vectors[1], result.vectors[1]), 1.0)


def test_a_hash_embedder_owns_its_slot_cache() -> None:
    warm = E.HashEmbedder()
    first = warm.vector("write unit tests", 64)
    assert warm._slots and first == E.HashEmbedder().vector("write unit tests", 64)
    assert not E.HashEmbedder()._slots  # a new embedder starts clean
    assert hash_vector("write unit tests", 64) == first


class Reversed(E.Provider):
    """A made-up in-process provider: what a new provider module declares."""

    name = "reversed"
    title = "reversed embedder"
    default_model = "rev-1"
    in_process = True

    def embed_texts(self, texts, config, options):  # type: ignore[no-untyped-def]
        return [unit([1.0 + len(t), 2.0]) for t in texts], f"{config.model}@served"


@pytest.fixture
def reversed_provider(monkeypatch: pytest.MonkeyPatch) -> E.Provider:
    from boost_cli.core.embed import base

    provider = Reversed()
    monkeypatch.setitem(base._REGISTRY, provider.name, provider)
    monkeypatch.setitem(base.LIMITS, provider.name, provider.limits)
    return provider


def test_a_registered_provider_works_everywhere(reversed_provider: E.Provider) -> None:
    config = resolve_config({}, {"BOOST_EMBED_PROVIDER": "reversed"})
    assert config == EmbedConfig("reversed", "rev-1")
    assert (config.label, config.host, config.is_remote) == ("reversed embedder", "local", False)
    assert E.missing_key_reason(config, {}) is None and E.model_id(config) == "rev-1"
    result = embed(["ab", "c"], config=config, env={})
    assert isinstance(result, EmbedResult) and result.model == "rev-1@served"
    assert result.vectors == [unit([3.0, 2.0]), unit([2.0, 2.0])] and result.dimensions == 2
    cached = EmbeddingCache(sqlite3.connect(":memory:"))
    assert isinstance(cached.embed(["ab"], config=config), EmbedResult)
    again = cached.embed(["ab"], config=config)  # from the cache: float32 precision
    assert isinstance(again, EmbedResult) and (again.sent, again.model) == (0, "rev-1@served")
    assert again.vectors[0] == pytest.approx(unit([3.0, 2.0]), abs=1e-7)
    with pytest.raises(ValueError, match="registered twice"):
        E.register(Reversed())


# --------------------------------------------------------------------------- cache


def test_cache_sends_each_distinct_text_once(openai_server: StubEmbedServer) -> None:
    conn = sqlite3.connect(":memory:")
    cache = EmbeddingCache(conn)
    config = compat(openai_server)
    first = cache.embed(["a", "b", "a"], config=config, env={})
    assert isinstance(first, EmbedResult)
    assert (first.sent, first.sent_chars) == (2, 2)
    assert first.vectors[0] == first.vectors[2]
    second = cache.embed(["b", "c", "a"], config=config, env={})
    assert isinstance(second, EmbedResult)
    assert (second.sent, second.model) == (1, "stub-model")
    assert openai_server.inputs() == [["a", "b"], ["c"]]
    assert second.vectors[0] == pytest.approx(first.vectors[1])
    # Another model or input type is another cache key.
    other = cache.embed(["a"], config=EmbedConfig("openai-compatible", "m2", config.base_url))
    assert isinstance(other, EmbedResult) and other.sent == 1


def test_cache_keeps_batches_embedded_before_a_failure(
    openai_server: StubEmbedServer, monkeypatch: pytest.MonkeyPatch, waits: List[float]
) -> None:
    monkeypatch.setitem(E.LIMITS, "openai-compatible", E.Limits(2, 10**6, 1000))
    conn = sqlite3.connect(":memory:")
    cache = EmbeddingCache(conn)
    config = compat(openai_server)
    openai_server.script = ["ok", "500"]
    texts = ["t1", "t2", "t3", "t4"]
    failed = cache.embed(texts, config=config, max_retries=1, env={})
    assert isinstance(failed, EmbedFailure)
    resumed = cache.embed(texts, config=config, env={})
    assert isinstance(resumed, EmbedResult) and resumed.sent == 2
    assert openai_server.inputs()[-1] == ["t3", "t4"]


# --------------------------------------------------------------------------- response parsing


@pytest.mark.parametrize(
    "payload, reason",
    [
        ({"data": "nope"}, "unexpected response from OpenAI: no 'data' list"),
        ([1, 2], "unexpected response from OpenAI: no 'data' list"),
        ({"data": [1]}, "unexpected response from OpenAI: a data item is not an object"),
        ({"data": [{"embedding": [1.0], "index": 3}]}, "OpenAI returned a bad or repeated index 3"),
        ({"data": [{"embedding": ["a"], "index": 0}]}, "not a list of numbers"),
        ({"data": [{"embedding": [True], "index": 0}]}, "not a list of numbers"),
        ({"data": [{"embedding": [], "index": 0}]}, "not a list of numbers"),
        ({"data": [{"embedding": "%%%", "index": 0}]}, "not a list of numbers"),
        ({"data": [{"embedding": [0.0, 0.0], "index": 0}]}, "a zero or non-finite vector"),
    ],
)
def test_parse_rejects_bad_responses(payload: object, reason: str) -> None:
    import json

    result = _parse(json.dumps(payload).encode(), 1, EmbedConfig("openai", "m"))
    assert isinstance(result, EmbedFailure) and reason in result.reason


def test_parse_accepts_base64_float32_and_missing_index() -> None:
    import base64
    import json

    blob = base64.b64encode(E.pack([3.0, 4.0])).decode()
    payload = {"data": [{"embedding": blob}, {"embedding": [0.0, 2.0]}], "model": "x"}
    result = _parse(json.dumps(payload).encode(), 2, EmbedConfig("openai", "m"))
    assert result == ([[0.6, 0.8], [0.0, 1.0]], "x")
    assert list(E.unpack(E.pack([1.5, -2.0]))) == [1.5, -2.0]


def test_retry_after_parsing() -> None:
    assert http.retry_after(None) is None
    assert http.retry_after(" 2.5 ") == 2.5
    assert http.retry_after("-3") == 0.0
    assert http.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert http.retry_after("inf") is None


def test_retry_after_is_capped(openai_server: StubEmbedServer, waits: List[float]) -> None:
    openai_server.script = ["429", "ok"]
    original = openai_server._send

    def slow_retry(h, status, payload, headers=None):  # type: ignore[no-untyped-def]
        if status == 429:
            headers = {"retry-after": "3600"}
        original(h, status, payload, headers)

    openai_server._send = slow_retry  # type: ignore[method-assign]
    assert isinstance(embed(["x"], config=compat(openai_server), env={}), EmbedResult)
    assert waits == [E.MAX_RETRY_AFTER_SECONDS]


def test_bad_input_type_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="input_type"):
        embed(["x"], config=EmbedConfig("hash", "hash-v1"), input_type="passage")
    assert embed([], config=EmbedConfig("hash", "hash-v1")) == EmbedResult(
        [], E.model_id(EmbedConfig("hash", "hash-v1")), 256
    )
