"""One POST to an LLM's HTTP API under the rules every HTTP provider keeps: the whole
call within the deadline, one retry on 429/5xx (honouring ``retry-after`` up to
`MAX_RETRY_AFTER`), none on a timeout, a connection error or another 4xx; redirects
refused; the answer read up to `MAX_ANSWER_BYTES`; the key masked in every reason.

Each provider builds its URL, headers and body and reads its own answer and error shapes;
this module turns "no usable HTTP answer" into an `LLMFailure` worded the same for all.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any, Callable, Mapping, Optional, Union

from boost_cli.core import http
from boost_cli.core.llm import base
from boost_cli.core.text import clip

__all__ = ["post", "check_url"]


def check_url(base_url: str, var: str, backend: str) -> Optional[base.LLMFailure]:
    """Why ``base_url`` (from ``var``) cannot be used, or None for an http(s) URL."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return base.LLMFailure(f"{var} must be an http(s) URL", backend)
    return None


def post(
    url: str,
    payload: Any,
    headers: Mapping[str, str],
    *,
    deadline: float,
    key: Optional[str],
    api: str,
    backend: str,
    failure: Callable[[int, bytes], str],
) -> Union[bytes, base.LLMFailure]:
    """The body of a 2xx answer to POSTing ``payload`` to ``url``, or why there is none.

    ``api`` names the service in reasons ("Messages API"); ``failure(status, body)`` words
    a non-2xx answer (the provider knows its error shape); ``key`` is masked everywhere.
    """
    retry = http.Retry(
        tries=2,
        backoff=base.DEFAULT_BACKOFF,
        max_retry_after=base.MAX_RETRY_AFTER,
        unreachable=False,
        deadline=deadline,
        min_attempt=base.MIN_ATTEMPT_SECONDS,
    )
    outcome = http.post_json(
        url,
        payload,
        headers,
        timeout=max(deadline - time.monotonic(), 0.0),
        retry=retry,
        secrets=(key,),
        max_body=base.MAX_ANSWER_BYTES,
    )
    if isinstance(outcome, http.Unreachable):
        if outcome.timed_out:
            after = f" after {outcome.seconds:.1f} s" if outcome.seconds > 0 else ""
            return base.LLMFailure(f"{api} timed out{after}", backend)
        shown = http.redact(url, key)
        detail = http.redact(clip(outcome.detail, 200), key)
        return base.LLMFailure(f"could not reach {shown}: {detail}", backend)
    if outcome.ok and outcome.too_large:
        return base.LLMFailure(
            f"the {api} answer is larger than {base.MAX_ANSWER_BYTES // (1024 * 1024)} MB",
            backend,
        )
    if outcome.ok:
        return outcome.body
    return base.LLMFailure(http.redact(failure(outcome.status, outcome.body), key), backend)
