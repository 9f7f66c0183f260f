"""`embed()`: the one entry point that sends texts to the configured provider.

It never raises for a provider problem: it returns `EmbedResult` (vectors L2-normalised,
in input order) or `EmbedFailure` (one line saying what went wrong, never the key). The
provider batches within its limits and retries (see `remote`); this checks the key first
and the vectors after.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

from boost_cli.core.embed.base import (
    INPUT_TYPES,
    EmbedConfig,
    EmbedFailure,
    EmbedOptions,
    EmbedOutcome,
    EmbedResult,
    ProgressFn,
)
from boost_cli.core.embed.config import api_key, dimensions_of, model_id, unusable_reason


def embed(
    texts: Sequence[str],
    *,
    config: EmbedConfig,
    input_type: str = "document",
    timeout: float = 30,
    max_retries: int = 4,
    progress: Optional[ProgressFn] = None,
    env: Optional[Mapping[str, str]] = None,
    one_shot: bool = False,
) -> EmbedOutcome:
    """Embed ``texts`` with ``config``'s provider; never raises for a provider problem.

    ``max_retries`` is the number of attempts a request gets in all (the failure says
    "after N tries"). ``progress(done, total)`` is called after each request. ``env``
    defaults to ``os.environ``, read now. ``one_shot``: see `EmbedOptions`.
    """
    if input_type not in INPUT_TYPES:
        raise ValueError(f"input_type must be one of {INPUT_TYPES}, not {input_type!r}")
    env = os.environ if env is None else env
    total = len(texts)
    if total == 0:
        return EmbedResult([], model_id(config), dimensions_of(config) or 0)
    problem = unusable_reason(config, env)
    if problem:
        return EmbedFailure(problem)
    key = api_key(config, env)
    options = EmbedOptions(input_type, timeout, max(1, max_retries), key, progress, one_shot)
    outcome = config.spec.embed_texts(texts, config, options)
    if isinstance(outcome, EmbedFailure):
        return outcome
    out, served = outcome
    dims = len(out[0])
    if any(len(v) != dims for v in out):
        return EmbedFailure(f"{config.label} returned vectors of different lengths")
    if config.dimensions and dims != config.dimensions:
        return EmbedFailure(
            f"{config.label} returned {dims}-dimensional vectors, {config.dimensions} were asked for"
        )
    chars = sum(len(t) for t in texts)
    return EmbedResult(out, served or config.model, dims, sent=total, sent_chars=chars)
