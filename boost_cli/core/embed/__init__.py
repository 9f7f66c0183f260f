"""Text embeddings for the dense engine: which provider, how texts reach it, a cache.

Providers: ``voyage`` and ``openai`` (their public APIs), ``openai-compatible`` (any server
speaking OpenAI's ``POST {base}/embeddings``, e.g. a local model), ``local`` (all-MiniLM-L6-v2
run in process by onnxruntime: the ``[local]`` extra), and ``hash`` (a deterministic hashed
random projection in pure Python: the offline floor and the test double). The modules,
bottom up:

- `base` — the `Provider` contract, `EmbedConfig`, the result types, the registry, batching;
- `remote` — the HTTP APIs (wire formats, response checks) over `core.http`;
- `hashing` — the ``hash`` provider (`HashEmbedder`);
- `wordpiece` (with its generated `wordpiece_tables`) — BERT WordPiece tokenisation in the
  stdlib, equal to Hugging Face ``tokenizers``;
- `local` — the ``local`` provider (`LocalProvider`, `LocalEmbedder`): numpy and onnxruntime
  are imported only when a model is loaded;
- `providers` — the registration line: which providers exist, in auto-detection order;
- `config` — settings and environment → `EmbedConfig`, keys, model identity;
- `dispatch` — `embed()`, the one call that sends texts to the configured provider;
- `cache` — `EmbeddingCache` (vectors by text hash, in the vector store) and the float32
  byte layout (`pack`/`unpack`).

Everything public is re-exported here: ``from boost_cli.core.embed import embed``.
"""

from __future__ import annotations

from boost_cli.core.embed.base import (
    INPUT_TYPES,
    LIMITS,
    EmbedConfig,
    Embedded,
    EmbedFailure,
    EmbedOptions,
    EmbedOutcome,
    EmbedResult,
    Limits,
    ProgressFn,
    Provider,
    l2_normalise,
    plan_batches,
    provider_named,
    register,
    registered,
)
from boost_cli.core.embed.cache import EmbeddingCache, pack, text_hash, unpack
from boost_cli.core.embed.config import (
    DEFAULT_BASE_URLS,
    DEFAULT_MODELS,
    NO_PROVIDER,
    NO_PROVIDER_FIX,
    api_key,
    cache_model,
    describe,
    dimensions_of,
    missing_key_reason,
    model_id,
    parity_of,
    resolve_config,
    unusable_reason,
)
from boost_cli.core.embed.dispatch import embed
from boost_cli.core.embed.hashing import HASH_DIMENSIONS, HashEmbedder, hash_vector
from boost_cli.core.embed.local import LocalProvider
from boost_cli.core.embed.providers import PROVIDERS
from boost_cli.core.embed.remote import (
    BACKOFF_SECONDS,
    MAX_BACKOFF_SECONDS,
    MAX_RETRY_AFTER_SECONDS,
    HttpProvider,
)

__all__ = [
    "BACKOFF_SECONDS",
    "DEFAULT_BASE_URLS",
    "DEFAULT_MODELS",
    "HASH_DIMENSIONS",
    "INPUT_TYPES",
    "LIMITS",
    "MAX_BACKOFF_SECONDS",
    "MAX_RETRY_AFTER_SECONDS",
    "NO_PROVIDER",
    "NO_PROVIDER_FIX",
    "PROVIDERS",
    "EmbedConfig",
    "EmbedFailure",
    "EmbedOptions",
    "EmbedOutcome",
    "EmbedResult",
    "Embedded",
    "EmbeddingCache",
    "HashEmbedder",
    "HttpProvider",
    "Limits",
    "LocalProvider",
    "ProgressFn",
    "Provider",
    "api_key",
    "cache_model",
    "describe",
    "dimensions_of",
    "embed",
    "hash_vector",
    "l2_normalise",
    "missing_key_reason",
    "model_id",
    "pack",
    "parity_of",
    "plan_batches",
    "provider_named",
    "register",
    "registered",
    "resolve_config",
    "text_hash",
    "unpack",
    "unusable_reason",
]
