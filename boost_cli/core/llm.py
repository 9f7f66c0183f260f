"""Asking an LLM one question: the Anthropic Messages API or the `claude` CLI, chosen once.

The reranker and the query expander build their prompts and parse their answers; this
module only gets an answer to a (system, user) prompt within a deadline, or says in one
line why not. It never raises for a provider problem.

Two transports:

* ``api`` — ``POST {ANTHROPIC_BASE_URL}/v1/messages`` through `http.post_json` with
  ``x-api-key``: one retry on 429/5xx/529 (honouring ``retry-after`` up to 2 s), none on
  4xx; redirects refused.
* ``cli`` — ``claude -p --output-format json`` with the prompt on stdin, run as an
  argument list (never a shell), built-in tools and MCP servers off, killed (with
  anything it started) at the deadline or once it prints more than `MAX_CLI_OUTPUT`.

Every answer is read up to a cap (`MAX_ANSWER_BYTES`, `MAX_CLI_OUTPUT`): a rerank needs
kilobytes, and a server or CLI that sends more is not read further.

``auto`` picks ``api`` when ANTHROPIC_API_KEY is set, else ``cli`` when `claude` is on
PATH. The API key never appears in a reason, a log line or an exception message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
)

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

from boost_cli import __version__
from boost_cli.core import breaker, http, settings
from boost_cli.core.errors import UsageError
from boost_cli.core.text import clip

log = logging.getLogger("boost.llm")

DEFAULT_MODEL = "claude-haiku-5-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
BACKENDS = ("auto", "api", "cli", "none")
MAX_RETRY_AFTER = 2.0
DEFAULT_BACKOFF = 0.5
# Don't start a retry that could not finish: it needs at least this much of the deadline left.
MIN_ATTEMPT_SECONDS = 0.2
MAX_ANSWER_CHARS = 100_000
MAX_ANSWER_BYTES = 4 * 1024 * 1024  # a Messages API body; a rerank answer is kilobytes
MAX_CLI_OUTPUT = 4 * 1024 * 1024  # what `claude -p` may print on stdout
MAX_CLI_ERRORS = 64 * 1024  # what is kept of its stderr (the rest is read and dropped)

NO_LLM = "no LLM available (set ANTHROPIC_API_KEY or install the claude CLI)"


@dataclass(frozen=True)
class LLMFailure:
    """Why there is no answer; ``backend`` is the one that failed, if one was chosen."""

    reason: str
    backend: Optional[str]
    # Whether it says the backend is down (trips the `breaker`): not for one answer's
    # content (a refusal, no text, malformed JSON), which the next prompt may not repeat.
    trips: bool = field(default=True, compare=False)


class Client(Protocol):
    """Something that answers one prompt: a transport (`AnthropicAPI`, `ClaudeCLI`) or a
    stand-in (recorded answers for evaluation)."""

    backend: str
    model: str
    endpoint: str  # where prompts go: a URL without credentials, or "claude CLI"
    local: bool  # True only for an HTTP endpoint on 127.0.0.1, ::1 or localhost

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        """The answer text, or why there is none, before ``deadline`` (`time.monotonic`)."""
        ...


def find_claude(env: Mapping[str, str]) -> Optional[str]:
    """The `claude` executable on ``env``'s PATH (absolute, so the child needs no lookup)."""
    return shutil.which("claude", path=env.get("PATH", os.defpath))


def auto_backend(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """What ``backend="auto"`` resolves to: "api" when ANTHROPIC_API_KEY is set, else "cli"
    when `claude` is on PATH, else None (no LLM).

    Cheap (an environment look-up and a PATH search), so callers can size their work
    first: the search pipeline retrieves a reranking pool only when a reranker will run.
    """
    env = os.environ if env is None else env
    return None if blocked(env) else _configured(env)


def _configured(env: Mapping[str, str]) -> Optional[str]:
    if env.get("ANTHROPIC_API_KEY", "").strip():
        return "api"
    return "cli" if find_claude(env) else None


def blocked(env: Mapping[str, str], backend: Optional[str] = None) -> Optional[str]:
    """Why no LLM may be asked (``backend``, default: the one auto would pick): switched off
    (`settings.llm_off`) or cooling down after a failure (`breaker`); None when it may."""
    off = settings.llm_off(env)
    if off:
        return off
    backend = backend or _configured(env)
    rec = breaker.tripped(backend) if backend else None
    return breaker.describe(backend, rec) if backend and rec else None


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


def choose(
    backend: str,
    *,
    model: Optional[str] = None,
    model_var: str = "BOOST_RERANK_MODEL",
    env: Optional[Mapping[str, str]] = None,
) -> Union[Client, LLMFailure]:
    """The transport for ``backend`` ("auto", "api", "cli"; "none" is a failure saying it
    is off), with ``model``, else ``$model_var``, else `DEFAULT_MODEL`. ``env`` replaces
    os.environ for all configuration. An unknown backend is a caller error."""
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
        why = blocked(env, backend)
        if why:
            return LLMFailure(why, backend)
    client = _transport(backend, model, model_var, env)
    return client if isinstance(client, LLMFailure) else _Guarded(client)


class _Guarded:
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


def _transport(
    backend: str, model: Optional[str], model_var: str, env: Mapping[str, str]
) -> Union[Client, LLMFailure]:
    model = model or env.get(model_var, "").strip() or DEFAULT_MODEL
    if backend == "api":
        key = env.get("ANTHROPIC_API_KEY", "").strip()
        if not key:
            return LLMFailure(
                "ANTHROPIC_API_KEY is not set — set it, or use the claude CLI backend", "api"
            )
        base = env.get("ANTHROPIC_BASE_URL", "").strip() or DEFAULT_BASE_URL
        return AnthropicAPI(model, key, base, model_var)
    claude = find_claude(env)
    if not claude:
        return LLMFailure(
            "the claude CLI is not on PATH — install Claude Code, or set ANTHROPIC_API_KEY",
            "cli",
        )
    return ClaudeCLI(model, claude, env)


def answer_secrets(env: Mapping[str, str]) -> Tuple[str, ...]:
    """The secrets a model's answer must never carry on: the configured API key (the CLI
    backend reads it too)."""
    key = env.get("ANTHROPIC_API_KEY", "").strip()
    return (key,) if key else ()


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


def strip_trailing_commas(text: str) -> str:
    """Drop commas that directly precede ``]`` or ``}`` (outside strings), a common LLM slip."""
    out: List[str] = []
    in_string = False
    escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j >= len(text) or text[j] not in "]}":
                out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def json_values(text: str) -> Iterator[Any]:
    """Every JSON object or array that starts somewhere in ``text``, outermost first.

    Prose, code fences and garbage around the JSON are skipped; values nested in an
    earlier one are yielded too (a wrapper object may hold the picks).
    """
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        pos = start + 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        yield value


def is_loopback(url: str) -> bool:
    """Whether ``url`` is http(s) on this machine (127.0.0.1, ::1, localhost)."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host in ("127.0.0.1", "::1", "localhost")


# --------------------------------------------------------------------------- Messages API


class AnthropicAPI:
    """The Messages API at ``base_url`` (``ANTHROPIC_BASE_URL``)."""

    backend = "api"

    def __init__(self, model: str, api_key: str, base_url: str, model_var: str) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.model_var = model_var
        self.endpoint = http.redact(base_url.rstrip("/"))
        self.local = is_loopback(base_url)

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        answer = _call_api(
            system,
            user,
            self.model,
            self.api_key,
            self.base_url,
            deadline,
            max_tokens,
            self.model_var,
        )
        if isinstance(answer, LLMFailure):
            return LLMFailure(http.redact(answer.reason, self.api_key), "api", answer.trips)
        # A 2xx answer can echo the key too (a proxy, a hostile endpoint): never pass it on.
        return redact_secrets(answer, (self.api_key,))


def _http_failure(status: int, body: bytes, model_var: str) -> str:
    """One line for a non-2xx answer, from the API's ``{"type": "error", "error": …}`` body."""
    etype, message = "", ""
    try:
        payload = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        etype = as_text(payload["error"].get("type"))
        message = as_text(payload["error"].get("message"))
    reason = f"Messages API HTTP {status}"
    if etype:
        reason += f" {etype}"
    if message:
        reason += f": {clip(message, 200)}"
    if status in (401, 403):
        reason += " — check ANTHROPIC_API_KEY"
    elif status == 404 and "model" in message.lower():
        reason += f" — check {model_var}"
    return reason


def _call_api(
    system: str,
    user: str,
    model: str,
    api_key: str,
    base_url: str,
    deadline: float,
    max_tokens: int,
    model_var: str,
) -> Union[str, LLMFailure]:
    """The answer text from the Messages API, or why there is none. One retry on 429/5xx
    (`http.post_json` does the retrying), none on a timeout or a connection error."""
    import urllib.parse

    base_url = base_url.rstrip("/")
    if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
        return LLMFailure("ANTHROPIC_BASE_URL must be an http(s) URL", "api")
    url = f"{base_url}/v1/messages"
    payload: Dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": user}],
    }
    if "haiku" in model:
        # Haiku-class models may think by default; a rerank wants the fast answer. Larger
        # models (some cannot disable thinking) get the API's default instead.
        payload["thinking"] = {"type": "disabled"}
    headers = {
        "x-api-key": api_key,
        "anthropic-version": ANTHROPIC_VERSION,
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": f"boost/{__version__}",
    }
    retry = http.Retry(
        tries=2,
        backoff=DEFAULT_BACKOFF,
        max_retry_after=MAX_RETRY_AFTER,
        unreachable=False,
        deadline=deadline,
        min_attempt=MIN_ATTEMPT_SECONDS,
    )
    outcome = http.post_json(
        url,
        payload,
        headers,
        timeout=max(deadline - time.monotonic(), 0.0),
        retry=retry,
        secrets=(api_key,),
        max_body=MAX_ANSWER_BYTES,
    )
    if isinstance(outcome, http.Unreachable):
        if outcome.timed_out:
            after = f" after {outcome.seconds:.1f} s" if outcome.seconds > 0 else ""
            return LLMFailure(f"Messages API timed out{after}", "api")
        shown = http.redact(url)
        return LLMFailure(f"could not reach {shown}: {clip(outcome.detail, 200)}", "api")
    if outcome.ok and outcome.too_large:
        return LLMFailure(
            f"the Messages API answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MB", "api"
        )
    if outcome.ok:
        return _answer_text(outcome.body)
    return LLMFailure(
        http.redact(_http_failure(outcome.status, outcome.body, model_var), api_key), "api"
    )


def _answer_text(data: bytes) -> Union[str, LLMFailure]:
    """The text blocks of a 200 Messages API response, joined."""
    try:
        message = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        return LLMFailure("the Messages API returned malformed JSON", "api", trips=False)
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return LLMFailure("the Messages API returned an unexpected response", "api", trips=False)
    stop_reason = as_text(message.get("stop_reason"))
    if stop_reason == "refusal":
        return LLMFailure("the model declined to answer (stop_reason refusal)", "api", trips=False)
    # Select by type: a thinking model's answer may start with thinking blocks.
    text = "".join(
        as_text(block.get("text"))
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "text"
    )
    if not text.strip():
        return LLMFailure(
            f"the Messages API returned no text (stop_reason {stop_reason})", "api", trips=False
        )
    return text


# --------------------------------------------------------------------------- claude CLI


class ClaudeCLI:
    """The `claude` executable in print mode (``claude -p``)."""

    backend = "cli"

    def __init__(self, model: str, claude: str, env: Mapping[str, str]) -> None:
        self.model = model
        self.claude = claude
        self.env = env
        self.endpoint = "claude CLI"
        self.local = False

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        answer = _call_cli(system, user, self.model, self.claude, self.env, deadline)
        if isinstance(answer, LLMFailure):
            # The CLI may quote the environment's key back (it reads ANTHROPIC_API_KEY too).
            key = self.env.get("ANTHROPIC_API_KEY", "").strip()
            return LLMFailure(http.redact(answer.reason, key or None), "cli", answer.trips)
        return redact_secrets(answer, answer_secrets(self.env))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return clip(line, 200)
    return ""


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the CLI and anything it started (its own session on POSIX)."""
    import signal

    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except ProcessLookupError:
            return
        except PermissionError:
            pass
    proc.kill()


def _communicate(
    proc: subprocess.Popen[bytes], data: bytes, deadline: float
) -> Tuple[bytes, bytes, Optional[str]]:
    """Feed ``data`` to ``proc`` and read its output until it exits, within ``deadline``:
    (stdout, stderr, problem). ``problem`` is "timeout" or "too large" (stdout passed
    `MAX_CLI_OUTPUT`; stderr is only ever kept up to `MAX_CLI_ERRORS`), and then the
    process and its group are killed. Readers are threads, so no pipe can block another."""
    import subprocess
    import threading

    out: List[bytes] = []
    err: List[bytes] = []
    too_large = threading.Event()

    def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # it may exit (or close stdin) without reading
            proc.stdin.write(data)
        with contextlib.suppress(OSError):
            proc.stdin.close()

    def drain(stream: Any, into: List[bytes], limit: int, fatal: bool) -> None:
        kept = 0
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: stream.read1(65536), b""):
                if kept < limit:
                    into.append(chunk[: limit - kept])
                kept += len(chunk)
                if kept > limit and fatal:
                    too_large.set()
                    _kill(proc)
                    return

    threads = [
        threading.Thread(target=feed, daemon=True),
        threading.Thread(target=drain, args=(proc.stdout, out, MAX_CLI_OUTPUT, True), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr, err, MAX_CLI_ERRORS, False), daemon=True),
    ]
    for thread in threads:
        thread.start()
    problem: Optional[str] = None
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        problem = "timeout"
        _kill(proc)
        proc.wait()
    for thread in threads[1:]:  # what a surviving grandchild still holds open is not waited on
        thread.join(timeout=max(deadline - time.monotonic(), 0.1))
    if too_large.is_set():
        problem = "too large"
    return b"".join(out), b"".join(err), problem


def _call_cli(
    system: str, user: str, model: str, claude: str, env: Mapping[str, str], deadline: float
) -> Union[str, LLMFailure]:
    """The answer text from ``claude -p --output-format json``, or why there is none.

    The prompt goes on stdin (no argv length limit, not visible in ``ps``); built-in tools
    and the user's MCP servers are switched off, since candidate text is untrusted.
    """
    import subprocess

    argv = [
        claude,
        "-p",
        "--output-format",
        "json",
        "--model",
        model,
        "--system-prompt",
        system,
        "--tools",
        "",
        "--strict-mcp-config",
        "--max-turns",
        "1",
    ]
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return LLMFailure("claude CLI timed out", "cli")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            start_new_session=os.name == "posix",
        )
    except OSError as err:
        return LLMFailure(f"could not run the claude CLI: {clip(str(err), 200)}", "cli")
    out, err_bytes, problem = _communicate(proc, user.encode("utf-8"), deadline)
    if problem == "timeout":
        return LLMFailure(f"claude CLI timed out after {remaining:.1f} s", "cli")
    if problem == "too large":
        return LLMFailure(
            f"the claude CLI printed more than {MAX_CLI_OUTPUT // (1024 * 1024)} MB", "cli"
        )
    stdout = out.decode("utf-8", errors="replace")
    stderr = err_bytes.decode("utf-8", errors="replace")
    log.debug("claude CLI exited %d (%d bytes out)", proc.returncode, len(out))

    envelope: Any = None
    with contextlib.suppress(ValueError):
        envelope = json.loads(stdout)
    if proc.returncode != 0:
        detail = _first_line(stderr)
        if not detail and isinstance(envelope, dict):
            detail = _first_line(as_text(envelope.get("result")))
        return LLMFailure(f"claude CLI exited {proc.returncode}: {detail or 'no message'}", "cli")
    if isinstance(envelope, dict) and "result" in envelope:
        result = as_text(envelope.get("result"))
        if envelope.get("is_error") is True:
            detail = _first_line(result) or as_text(envelope.get("subtype")) or "no message"
            return LLMFailure(f"claude CLI reported an error: {detail}", "cli")
        return result
    # Not the documented envelope (an older CLI?): the answer may be the raw output itself.
    return stdout
