"""The seam every LLM provider answers through, and what the providers share.

`Client` is one prompt → one answer (`complete`) before a deadline, or an `LLMFailure`
saying in one line why not; it never raises for a provider problem. Every client says
what it is for display: ``backend`` (the provider's name), ``model``, ``endpoint`` (a URL
without credentials or query, or the CLI's name) and ``local`` (True only for an HTTP
endpoint on this machine: 127.0.0.1, ::1 or localhost).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Protocol, Sequence, Union

from boost_cli.core import http

MAX_RETRY_AFTER = 2.0
DEFAULT_BACKOFF = 0.5
# Don't start a retry that could not finish: it needs at least this much of the deadline left.
MIN_ATTEMPT_SECONDS = 0.2
MAX_ANSWER_CHARS = 100_000
MAX_ANSWER_BYTES = 4 * 1024 * 1024  # an HTTP answer's body; a rerank answer is kilobytes
MAX_CLI_OUTPUT = 4 * 1024 * 1024  # what an agent CLI may print on stdout
MAX_CLI_ERRORS = 64 * 1024  # what is kept of its stderr (the rest is read and dropped)


@dataclass(frozen=True)
class LLMFailure:
    """Why there is no answer; ``backend`` is the one that failed, if one was chosen."""

    reason: str
    backend: Optional[str]
    # Whether it says the backend is down (trips the `breaker`): not for one answer's
    # content (a refusal, no text, malformed JSON), which the next prompt may not repeat.
    trips: bool = field(default=True, compare=False)


class Client(Protocol):
    """Something that answers one prompt: a provider's transport, the breaker's guard
    around one, or a stand-in (recorded answers for evaluation)."""

    backend: str
    model: str
    endpoint: str
    local: bool

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        """The answer text, or why there is none, before ``deadline`` (`time.monotonic`)."""
        ...


def shown_endpoint(url: str) -> str:
    """``url`` as doctor and ``--explain`` show it: no user:password, query or fragment."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def is_local(url: str) -> bool:
    """Whether ``url`` is HTTP(S) on this machine (127.0.0.1, ::1, localhost)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:  # a malformed port or bracket: not a URL we would call
        return False
    return parts.scheme in ("http", "https") and host.lower() in http.LOOPBACK


def seconds_setting(
    value: Optional[float], env: Mapping[str, str], var: str, default: float
) -> Union[float, str]:
    """Seconds to allow: ``value``, else ``$var``, else ``default``; or the reason the
    configured value is unusable."""
    if value is not None:
        return float(value)
    raw = env.get(var, "").strip()
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:  # also rejects NaN
        return f"{var} must be a positive number of seconds, not {raw!r}"
    return seconds


def redact_secrets(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``***``: what a transport does to
    a whole answer (an endpoint may echo the key back). Only the exact secrets: the answer
    still has to parse, and its ids must still match. The fields taken from it (a reason,
    a keyword) then get the whole `http.redact` rule, like an error message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def as_text(value: Any) -> str:
    """A JSON value as text: strings as they are, numbers written out, anything else ""."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""
