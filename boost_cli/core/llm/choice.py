"""Which LLM answers: one choice, made once per call from the environment and settings,
and the guard that remembers a failing backend (`breaker`).

``auto`` is ``BOOST_LLM_PROVIDER`` when set, else the ``llm.provider`` setting
(`boost config set llm.provider …`) when not ``auto``, else the first provider in
`providers.PROVIDERS` order that is configured. ``BOOST_NO_LLM``, ``--no-llm`` and
``boost config set llm off`` turn every provider off.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from boost_cli.core import settings
from boost_cli.core.errors import UsageError
from boost_cli.core.llm import breaker, providers
from boost_cli.core.llm.base import Client, LLMFailure

log = logging.getLogger("boost.llm")

BACKENDS = ("auto", "none", *(p.name for p in providers.PROVIDERS), *providers.ALIASES)
NO_LLM = (
    "no LLM available (set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, point "
    "BOOST_LLM_BASE_URL at a local model, or install the claude, codex or gemini CLI: "
    "docs/llm.md)"
)


def requested(env: Mapping[str, str]) -> Optional[str]:
    """The provider the user named (``BOOST_LLM_PROVIDER``, else the setting), or None for
    auto. An unknown name is a usage error naming the choices."""
    raw = env.get("BOOST_LLM_PROVIDER", "").strip().lower()
    source = "BOOST_LLM_PROVIDER"
    if not raw:
        raw, source = str(settings.get("llm.provider")), "llm.provider"
    if raw in ("", "auto"):
        return None
    found = providers.named(raw)
    if found is None:
        raise UsageError(
            f"unknown LLM provider {raw!r} in {source}",
            f"use one of: auto, {', '.join(n for n in BACKENDS if n not in ('auto', 'none'))}",
        )
    return found.name


def _configured(env: Mapping[str, str]) -> Optional[str]:
    named = requested(env)
    if named:
        return named
    return next((p.name for p in providers.PROVIDERS if p.configured(env)), None)


def auto_backend(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """What ``backend="auto"`` resolves to: the provider the user named, else the first
    configured one (`providers.PROVIDERS` order); None when there is none, or when the LLM
    is switched off or that provider is cooling down after a failure.

    Cheap (environment look-ups and PATH searches), so callers can size their work first:
    the search pipeline retrieves a reranking pool only when a reranker will run.
    """
    env = os.environ if env is None else env
    return None if blocked(env) else _configured(env)


def blocked(env: Mapping[str, str], backend: Optional[str] = None) -> Optional[str]:
    """Why no LLM may be asked (``backend``, default: the one auto would pick): switched off
    (`settings.llm_off`) or cooling down after a failure (`breaker`); None when it may."""
    off = settings.llm_off(env)
    if off:
        return off
    backend = backend or _configured(env)
    rec = breaker.tripped(backend) if backend else None
    return breaker.describe(backend, rec) if backend and rec else None


def resolve_model(
    provider: providers.Provider, model: Optional[str], model_var: str, env: Mapping[str, str]
) -> str:
    """``model``, else ``$model_var``, else ``$BOOST_LLM_MODEL``, else the provider's default."""
    return (
        model
        or env.get(model_var, "").strip()
        or env.get("BOOST_LLM_MODEL", "").strip()
        or provider.default_model
    )


def choose(
    backend: str,
    *,
    model: Optional[str] = None,
    model_var: str = "BOOST_RERANK_MODEL",
    env: Optional[Mapping[str, str]] = None,
) -> Union[Client, LLMFailure]:
    """The transport for ``backend`` ("auto" or a provider's name; "none" is a failure
    saying it is off), with the model `resolve_model` gives. ``env`` replaces os.environ
    for all configuration. An unknown backend is a caller error."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown LLM backend {backend!r}", f"use one of: {', '.join(BACKENDS)}")
    env = os.environ if env is None else env
    if backend == "none":
        return LLMFailure("turned off", None)
    if backend == "auto":
        backend = auto_backend(env) or ""
        if not backend:
            return LLMFailure(blocked(env) or NO_LLM, None)
        log.debug("LLM backend auto → %s", backend)
    else:
        backend = providers.ALIASES.get(backend, backend)
        why = blocked(env, backend)
        if why:
            return LLMFailure(why, backend)
    provider = providers.BY_NAME[backend]
    client = provider.build(resolve_model(provider, model, model_var, env), model_var, env)
    return client if isinstance(client, LLMFailure) else Guarded(client)


class Guarded:
    """A transport whose failures trip the `breaker` (and whose successes reset it)."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.endpoint = inner.endpoint
        self.local = inner.local

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        answer = self.inner.complete(system, user, max_tokens=max_tokens, deadline=deadline)
        if isinstance(answer, LLMFailure):
            if answer.trips:
                breaker.record(self.backend, answer.reason)
        else:
            breaker.record(self.backend, None)
        return answer


def answer_secrets(env: Mapping[str, str]) -> Tuple[str, ...]:
    """The secrets a model's answer must never carry on: every LLM key in ``env`` (an
    agent CLI may read them too)."""
    return tuple(providers.secrets(env))


def describe(env: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The LLM as doctor shows it, sending nothing: the provider ``auto`` resolves to (or
    None), its title, the rerank model, its endpoint, whether it is on this machine, and
    why it cannot be used (its transport's failure, e.g. no key); never a key."""
    env = os.environ if env is None else env
    backend = _configured(env)
    if backend is None:
        return {"backend": None}
    provider = providers.BY_NAME[backend]
    client = provider.build(resolve_model(provider, None, "BOOST_RERANK_MODEL", env), "", env)
    info: Dict[str, Any] = {
        "backend": backend,
        "title": provider.title,
        "named": requested(env) is not None,
    }
    if isinstance(client, LLMFailure):
        info["problem"] = client.reason
    else:
        info.update(model=client.model, endpoint=client.endpoint, local=client.local)
    return info
