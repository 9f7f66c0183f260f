"""Running an agent CLI headless: one argument list (never a shell), the prompt on stdin,
killed with everything it started at the deadline or once it prints too much.

What the `claude`, `codex` and `gemini` transports share; each builds its own argv and
reads its own output format.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from boost_cli.core import http
from boost_cli.core.llm.base import MAX_CLI_ERRORS, MAX_CLI_OUTPUT, LLMFailure, redact_secrets
from boost_cli.core.text import clip

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

log = logging.getLogger("boost.llm")


@dataclass(frozen=True)
class Ran:
    """A CLI that ran to its end: exit code and its (capped) output, decoded."""

    returncode: int
    stdout: str
    stderr: str


def find(name: str, env: Mapping[str, str]) -> Optional[str]:
    """The ``name`` executable on ``env``'s PATH (absolute, so the child needs no lookup)."""
    return shutil.which(name, path=env.get("PATH", os.defpath))


@contextlib.contextmanager
def scratch() -> Iterator[str]:
    """An empty folder to run an agent CLI in, removed afterwards: an agent's tools find
    nothing of the user's project there, and it reads no project settings from it."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="boost-llm-") as folder:
        yield folder


def first_line(text: str) -> str:
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


def run(
    argv: Sequence[str],
    stdin: str,
    env: Mapping[str, str],
    deadline: float,
    name: str,
    backend: str,
    cwd: Optional[str] = None,
) -> Union[Ran, LLMFailure]:
    """Run ``argv`` (``argv[0]`` absolute) with ``stdin``, within ``deadline``, in ``cwd``
    (default: boost's own); ``name`` ("claude CLI") words the failures, ``backend`` owns
    them."""
    import subprocess

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return LLMFailure(f"{name} timed out", backend)
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=os.name == "posix",
        )
    except OSError as err:
        return LLMFailure(f"could not run the {name}: {clip(str(err), 200)}", backend)
    out, err_bytes, problem = _communicate(proc, stdin.encode("utf-8"), deadline)
    if problem == "timeout":
        return LLMFailure(f"{name} timed out after {remaining:.1f} s", backend)
    if problem == "too large":
        return LLMFailure(
            f"the {name} printed more than {MAX_CLI_OUTPUT // (1024 * 1024)} MB", backend
        )
    log.debug("%s exited %d (%d bytes out)", name, proc.returncode, len(out))
    return Ran(
        proc.returncode,
        out.decode("utf-8", errors="replace"),
        err_bytes.decode("utf-8", errors="replace"),
    )


class ScratchCLI:
    """An agent CLI asked headless: the prompt on stdin, run in an empty `scratch` folder,
    its answer read from its output by `read`, every secret masked in the answer and the
    failure. A subclass names its ``backend`` and ``endpoint`` and says its `argv` and
    `read`; ``local`` is False (an agent CLI sends the prompt to its vendor)."""

    backend = ""
    endpoint = ""
    local = False

    def __init__(self, model: str, exe: str, env: Mapping[str, str], secrets: List[str]) -> None:
        self.model = model
        self.exe = exe
        self.env = env
        self.secrets = secrets

    def argv(self) -> List[str]:
        raise NotImplementedError

    def read(self, ran: Ran) -> Union[str, LLMFailure]:
        raise NotImplementedError

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        prompt = f"{system}\n\n{user}"
        with scratch() as cwd:
            ran = run(self.argv(), prompt, self.env, deadline, self.endpoint, self.backend, cwd)
        answer = ran if isinstance(ran, LLMFailure) else self.read(ran)
        if isinstance(answer, LLMFailure):
            reason = http.redact(answer.reason, *self.secrets)
            return LLMFailure(reason, self.backend, answer.trips)
        return redact_secrets(answer, self.secrets)
