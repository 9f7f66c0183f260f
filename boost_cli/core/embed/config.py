"""Which embedder to use: settings and environment resolved into an `EmbedConfig`, the
provider's key, and the identity (model id, dimensions) its vectors are stored under.

API keys are read from the environment at call time and only ever put in a request
header: never in a config object, a repr, a log line or a failure reason.
"""

from __future__ import annotations

import math
import os
import urllib.parse
from typing import Any, Callable, Dict, Mapping, Optional, TypeVar

from boost_cli.core import http
from boost_cli.core.embed.base import EmbedConfig, provider_named, registered
from boost_cli.core.embed.providers import PROVIDERS
from boost_cli.core.errors import ConfigError

DEFAULT_MODELS: Mapping[str, str] = {n: provider_named(n).default_model for n in PROVIDERS}
DEFAULT_BASE_URLS: Mapping[str, str] = {
    n: provider_named(n).default_base_url for n in PROVIDERS if provider_named(n).default_base_url
}

# Why dense cannot run, and the fix, wherever that is said (store status, query, build).
NO_PROVIDER = "no embedding provider is configured"
NO_PROVIDER_FIX = (
    "pip install '.[local]' (in boost's clone) for a model that runs in process (no key, nothing "
    "sent), or set BOOST_EMBED_PROVIDER=voyage (with VOYAGE_API_KEY), openai (with "
    "OPENAI_API_KEY), or BOOST_EMBED_BASE_URL=http://host:port/v1 for an OpenAI-compatible "
    "server; 'hash' works offline"
)


def _provider_fix() -> str:
    return "set BOOST_EMBED_PROVIDER to one of: " + ", ".join(p.name for p in registered())


def resolve_config(config: Mapping[str, Any], env: Mapping[str, str]) -> Optional[EmbedConfig]:
    """The embedder to use, or None when none is configured.

    ``config`` is the loaded config (its ``settings.embed`` object: ``provider``, ``model``,
    ``base_url``, ``dimensions``, ``timeout``) or the settings mapping itself. The
    environment wins over the file: ``BOOST_EMBED_PROVIDER`` (``none`` turns dense off),
    ``BOOST_EMBED_MODEL``, ``BOOST_EMBED_BASE_URL``, ``BOOST_EMBED_DIMENSIONS``,
    ``BOOST_EMBED_TIMEOUT`` (seconds per request). With no provider named, the first
    registered provider that detects itself is used: a base URL means
    ``openai-compatible``, else the installed [local] extra means ``local``. A key alone
    (``VOYAGE_API_KEY``, ``OPENAI_API_KEY``) never picks a remote API: it is used only
    when that provider is named. A named ``openai`` honours ``OPENAI_BASE_URL``.
    Raises `ConfigError` for an unknown provider, a
    base URL that is not http(s), or dimensions or a timeout that are not positive.
    """
    settings = config.get("settings", config)
    section = settings.get("embed") if isinstance(settings, Mapping) else None
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError("settings.embed in the config is not an object", _provider_fix())

    def pick(env_name: str, key: str) -> Optional[str]:
        value = env.get(env_name) or section.get(key)
        return str(value).strip() if value not in (None, "") else None

    provider = pick("BOOST_EMBED_PROVIDER", "provider")
    base_url = pick("BOOST_EMBED_BASE_URL", "base_url")
    model = pick("BOOST_EMBED_MODEL", "model")
    dims_raw = pick("BOOST_EMBED_DIMENSIONS", "dimensions")
    timeout_raw = pick("BOOST_EMBED_TIMEOUT", "timeout")
    if provider is None:
        # Only BOOST_EMBED_BASE_URL (or the config's base_url) names a server here:
        # OPENAI_BASE_URL is honoured once openai is named, below.
        found = next((p for p in registered() if p.detect(base_url, env)), None)
        if found is None:
            return None
        provider = found.name
    provider = provider.lower()
    if provider in ("none", "off"):
        return None
    spec = next((p for p in registered() if p.name == provider), None)
    if spec is None:
        raise ConfigError(f"unknown embedding provider {provider!r}", _provider_fix())
    if base_url is None and spec.base_url_var:
        base_url = env.get(spec.base_url_var, "").strip() or None
    if spec.needs_base_url and not base_url:
        raise ConfigError(
            f"the {provider} embedding provider needs a base URL",
            "set BOOST_EMBED_BASE_URL, e.g. http://127.0.0.1:8765/v1",
        )
    if base_url is not None and not spec.in_process:
        scheme = urllib.parse.urlsplit(base_url).scheme.lower()
        if scheme not in ("http", "https") or not urllib.parse.urlsplit(base_url).netloc:
            raise ConfigError(
                f"embedding base URL {http.redact(base_url)!r} is not an http(s) URL",
                "set BOOST_EMBED_BASE_URL to e.g. http://127.0.0.1:8765/v1",
            )
    dimensions = _positive(
        dims_raw, int, "dimensions", "a positive integer", "BOOST_EMBED_DIMENSIONS", "256"
    )
    timeout = _positive(
        timeout_raw, float, "timeout", "a positive number of seconds", "BOOST_EMBED_TIMEOUT", "60"
    )
    return EmbedConfig(
        provider=provider,
        model=model or spec.default_model,
        base_url=None if spec.in_process else base_url,
        dimensions=dimensions,
        timeout=timeout,
    )


N = TypeVar("N", int, float)


def _positive(
    raw: Optional[str], parse: Callable[[str], N], what: str, expected: str, variable: str, eg: str
) -> Optional[N]:
    """``raw`` parsed, or None when unset; `ConfigError` unless it is finite and positive."""
    if raw is None:
        return None
    try:
        value = parse(raw)
    except ValueError:
        value = parse("0")
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(
            f"embedding {what} {raw!r} is not {expected}",
            f"set {variable} to e.g. {eg}, or unset it",
        )
    return value


def api_key(config: EmbedConfig, env: Mapping[str, str]) -> Optional[str]:
    """The provider's key from ``env`` (the first of its `Provider.key_names` set), or None."""
    for name in config.spec.key_names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def missing_key_reason(
    config: EmbedConfig, env: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """Why ``config`` cannot be used for lack of an API key, or None when it can."""
    env = os.environ if env is None else env
    spec = config.spec
    if spec.key_required and api_key(config, env) is None:
        *others, own = spec.key_names
        return f"{config.label}: no API key — set {own} (or {', '.join(others)})"
    return None


def unusable_reason(config: EmbedConfig, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why ``config`` cannot embed now (no key, a missing package), or None when it can.
    Loads and sends nothing."""
    return missing_key_reason(config, env) or config.spec.problem(config)


def model_id(config: EmbedConfig) -> str:
    """The model identity vectors are stored under (`Provider.model_id`)."""
    return config.spec.model_id(config)


def parity_of(config: EmbedConfig) -> Dict[str, str]:
    """The provider's identity fields beyond the model id (`Provider.parity`)."""
    return config.spec.parity(config)


def cache_model(config: EmbedConfig) -> str:
    """The model key cached vectors are filed under: the model id plus the parity fields,
    so a new model file or tokenizer never reuses an old vector."""
    extra = sorted(parity_of(config).items())
    return "+".join([model_id(config), *(f"{k}={v}" for k, v in extra)])


def describe(config: EmbedConfig) -> Dict[str, Any]:
    """The embedder as `boost doctor` shows it: provider, model, where texts go, and what
    the provider adds (`Provider.describe`)."""
    return {
        "provider": config.provider,
        "model": config.model,
        "host": config.host,
        "remote": config.is_remote,
        **config.spec.describe(config),
    }


def dimensions_of(config: EmbedConfig) -> Optional[int]:
    """The vector length ``config`` yields when known before embedding anything."""
    return config.spec.dimensions(config)
