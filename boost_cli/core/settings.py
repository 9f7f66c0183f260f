"""The few user settings `boost config` reads and writes, kept in config.json's ``settings``.

``llm`` (on | off: off is the persistent ``--no-llm``, like ``BOOST_NO_LLM=1``),
``llm.provider`` (auto or a provider's name, like ``BOOST_LLM_PROVIDER``), ``limit``
(the default number of search results), ``engine`` (the default engine: auto or one of
`models.ENGINES`), ``enrich.allow_egress`` (the saved consent of `boost reindex
--enrich --allow-egress`) and the ``advice.*`` hints (true | false, like git's). Each value is checked when set and again when read (a hand-edited config
with a wrong value gives the default and never a crash).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from boost_cli.core import config
from boost_cli.core.errors import ConfigError, UsageError
from boost_cli.core.models import ENGINES


def _llm(text: str) -> str:
    value = text.strip().lower()
    if value in ("on", "true", "1", "yes"):
        return "on"
    if value in ("off", "false", "0", "no"):
        return "off"
    raise ValueError("on or off")


# The names `llm.choose` knows (tests/test_llm_providers.py keeps the two lists equal):
# the settings are base, the providers above them.
LLM_PROVIDERS = (
    "auto",
    "openai-compatible",
    "api",
    "openai",
    "gemini",
    "cli",
    "codex",
    "gemini-cli",
    "ollama",
    "anthropic",
    "claude",
    "local",
)


def _llm_provider(text: str) -> str:
    value = text.strip().lower()
    if value not in LLM_PROVIDERS:
        raise ValueError(", ".join(LLM_PROVIDERS))
    return value


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "on", "1", "yes"):
        return True
    if value in ("false", "off", "0", "no"):
        return False
    raise ValueError("true or false")


def _limit(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 100:
        raise ValueError("a whole number from 1 to 100")
    return value


def _engine(text: str) -> str:
    value = text.strip().lower()
    if value != "auto" and value not in ENGINES:
        raise ValueError(f"auto, {', '.join(ENGINES)}")
    return value


# name → (parse, default, what it does)
KNOWN: Mapping[str, Tuple[Callable[[str], Any], Any, str]] = {
    "llm": (_llm, "on", "use an LLM for query expansion and rerank (off: like --no-llm)"),
    "llm.provider": (
        _llm_provider,
        "auto",
        "which LLM to use: auto (the first one configured: docs/llm.md) or a provider's name",
    ),
    "limit": (_limit, 10, "how many results boost search shows by default (1-100)"),
    "engine": (_engine, "auto", f"the default search engine: auto, {', '.join(ENGINES)}"),
    "enrich.allow_egress": (
        _bool,
        False,
        "let 'boost reindex --enrich' send skill text to a remote LLM (like --allow-egress)",
    ),
    # Hints (git's advice.*): shown on a terminal at most once a day per home (`advice`).
    "advice.semantic": (
        _bool,
        True,
        "hint after a search ranked by your words alone how to search by meaning (false: never)",
    ),
    "advice.sqlite": (
        _bool,
        True,
        "hint how to get the sqlite-vec store when the exact scan stands in (false: never)",
    ),
}


def _check(name: str) -> None:
    if name not in KNOWN:
        raise UsageError(f"unknown setting {name!r}", f"choose from {', '.join(KNOWN)}")


def parse(name: str, text: str) -> Any:
    _check(name)
    try:
        return KNOWN[name][0](str(text))
    except ValueError as exc:
        hint = str(exc) if not str(exc).startswith("invalid literal") else "a whole number"
        raise UsageError(f"invalid value {text!r} for {name}", f"give {hint}") from exc


def get(name: str) -> Any:
    """The value of setting ``name``: set, else its default (also for an unusable value)."""
    _check(name)
    try:
        raw = config.load().get("settings", {}).get(name)
    except ConfigError:
        raw = None
    if raw is None:
        return KNOWN[name][1]
    try:
        return parse(name, str(raw))
    except UsageError:
        return KNOWN[name][1]


def set_value(name: str, text: str) -> Any:
    value = parse(name, text)
    with config.edit() as data:
        data.setdefault("settings", {})[name] = value
    return value


def unset(name: str) -> None:
    _check(name)
    with config.edit() as data:
        data.setdefault("settings", {}).pop(name, None)


def listing() -> List[Dict[str, Any]]:
    """Every known setting: name, value, whether it is set or the default, what it does."""
    try:
        stored = config.load().get("settings", {})
    except ConfigError:
        stored = {}
    return [
        {"name": n, "value": get(n), "set": n in stored, "default": d, "help": h}
        for n, (_, d, h) in KNOWN.items()
    ]


def llm_off(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why the LLM is switched off (``BOOST_NO_LLM`` or the ``llm`` setting), or None."""
    env = os.environ if env is None else env
    flag = env.get("BOOST_NO_LLM", "").strip().lower()
    if flag and flag not in ("0", "false", "no", "off"):
        return "turned off by BOOST_NO_LLM"
    if get("llm") == "off":
        return "turned off by 'boost config set llm off'"
    return None
