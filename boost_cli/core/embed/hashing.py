"""The ``hash`` provider: a deterministic hashed random projection in pure Python.

No weights, no network: the offline floor and the test double. Texts that share words or
word pieces get a higher cosine; it is not semantic.
"""

from __future__ import annotations

import hashlib
import math
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from boost_cli.core.embed.base import (
    EmbedConfig,
    Embedded,
    EmbedOptions,
    Limits,
    Provider,
    l2_normalise,
)
from boost_cli.core.tokenize import tokenize

HASH_DIMENSIONS = 256

_HASH_KEY = b"boost-hash-embed-v1"
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.35
_SLOTS_LIMIT = 1_000_000
_FINGERPRINT_PROBE = (
    "Testing the jest-runner with snake_case mocks, running tests: the quick brown foxes 42"
)


class HashEmbedder(Provider):
    """Tokens (weight 1) and their character trigrams (weight 0.35), each scaled by
    1 + ln(tf), hashed to ±1 in one of ``dims`` dimensions, then L2-normalised.

    An instance remembers where features hash to (up to a million of them): keep one to
    keep that warm, make a new one to start clean."""

    name = "hash"
    title = "hash embedder"
    default_model = "hash-v1"
    in_process = True
    limits = Limits(max_inputs=4096, max_tokens=10**9, max_chars_per_input=20_000)

    def __init__(self) -> None:
        self._slots: Dict[Tuple[str, int], Tuple[int, float]] = {}
        self._fingerprint: Optional[str] = None

    def model_id(self, config: EmbedConfig) -> str:
        """The model name plus a fingerprint of the tokenizer, so a tokenizer change forces
        a re-embed instead of silently mixing vectors from two tokenizations."""
        if self._fingerprint is None:
            joined = "\x1f".join(tokenize(_FINGERPRINT_PROBE))
            self._fingerprint = hashlib.blake2b(joined.encode("utf-8"), digest_size=4).hexdigest()
        return f"{config.model}+{self._fingerprint}"

    def dimensions(self, config: EmbedConfig) -> Optional[int]:
        return config.dimensions or HASH_DIMENSIONS

    def embed_texts(
        self, texts: Sequence[str], config: EmbedConfig, options: EmbedOptions
    ) -> Embedded:
        dims = config.dimensions or HASH_DIMENSIONS
        vectors = [self.vector(t, dims) for t in texts]
        if options.progress is not None:
            options.progress(len(texts), len(texts))
        return vectors, self.model_id(config)

    def vector(self, text: str, dims: int = HASH_DIMENSIONS) -> List[float]:
        """The unit vector for ``text``; a text with no tokens maps to a fixed one."""
        acc = [0.0] * dims
        for feature, weight in _features(text):
            index, sign = self._slot(feature, dims)
            acc[index] += sign * weight
        unit = l2_normalise(acc)
        if unit is None:
            index, sign = self._slot("empty", dims)
            unit = [0.0] * dims
            unit[index] = sign
        return unit

    def _slot(self, feature: str, dims: int) -> Tuple[int, float]:
        """The (dimension, ±1) a feature hashes to: keyed blake2b, the same on every machine."""
        cached = self._slots.get((feature, dims))
        if cached is not None:
            return cached
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=_HASH_KEY).digest()
        value = int.from_bytes(digest, "little")
        slot = (value % dims, 1.0 if (value >> 63) & 1 else -1.0)
        if len(self._slots) >= _SLOTS_LIMIT:
            self._slots.clear()
        self._slots[(feature, dims)] = slot
        return slot


def _features(text: str) -> Iterator[Tuple[str, float]]:
    counts: Dict[str, int] = {}
    for token in tokenize(text):
        counts[token] = counts.get(token, 0) + 1
    for token, count in counts.items():
        weight = 1.0 + math.log(count)  # sublinear term frequency
        yield "w:" + token, _WORD_WEIGHT * weight
        padded = f"<{token}>"
        for i in range(len(padded) - 2):
            yield "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT * weight


def hash_vector(text: str, dims: int = HASH_DIMENSIONS) -> List[float]:
    """`HashEmbedder.vector` from a fresh embedder (nothing shared between calls)."""
    return HashEmbedder().vector(text, dims)
