"""Helpers shared by the tests: git repos, the real CLI as a subprocess, skill text."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "registry"
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))

# The keys every `boost search --json` hit carries (README: "--json prints an array of hits").
HIT_KEYS = frozenset(
    {
        "id",
        "name",
        "kind",
        "description",
        "tap",
        "rel_dir",
        "path",
        "score",
        "snippet",
        "why",
        "why_source",
        "also_in",
        "similar",
        "ranks",
        "file",
        "url",
        "flags",
    }
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(args: List[str], cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path, files: Optional[Dict[str, str]] = None) -> Path:
    """A git repo at ``path`` with ``files`` committed (path → text)."""
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {}).items():
        f = path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    git(["init", "-q", "-b", "main"], path)
    git(["add", "-A"], path)
    git(["commit", "-q", "--allow-empty", "-m", "init"], path)
    return path


def commit_all(path: Path, message: str = "change") -> str:
    git(["add", "-A"], path)
    git(["commit", "-q", "-m", message], path)
    return git(["rev-parse", "HEAD"], path).strip()


def run_boost(
    args: List[str],
    home: Path,
    env: Optional[Dict[str, str]] = None,
    timeout: float = 120,
    stdin: Optional[str] = None,
) -> subprocess.CompletedProcess:
    """Run the real CLI as a subprocess against ``home``."""
    full_env = {**os.environ, "BOOST_HOME": str(home), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        cwd=str(ROOT),
    )


def indexed_example(base: Path, name: str = "example") -> Path:
    """A home under ``base`` with a git copy of the example registry tapped as ``name`` and
    its BM25 index built; returns the home."""
    repo = make_repo(Path(shutil.copytree(EXAMPLES, base / "example-registry")))
    home = base / "home"
    for args in (["tap", str(repo), "--name", name], ["reindex"]):
        r = run_boost(args, home)
        assert r.returncode == 0, r.stderr
    return home


SKILL = """---
name: {name}
description: {description}
---
# {name}

{body}
"""


def skill(name: str, description: str, body: str = "Steps go here.") -> str:
    return SKILL.format(name=name, description=description, body=body)


def run_boost_tty(
    args: List[str],
    home: Path,
    env: Optional[Dict[str, Optional[str]]] = None,
    columns: int = 80,
    timeout: float = 120,
) -> Tuple[int, str, str]:
    """Run the real CLI with stdout and stderr each on its own pseudo-terminal ``columns``
    wide (what a person at a terminal sees): (exit code, stdout, stderr), ``\\r\\n`` as
    ``\\n``. A variable set to None in ``env`` is removed."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    pairs = [pty.openpty(), pty.openpty()]
    for _, slave in pairs:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    full_env = {
        **os.environ,
        "BOOST_HOME": str(home),
        "COLUMNS": str(columns),
        "TERM": "xterm",
    }
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    proc = subprocess.Popen(
        [sys.executable, "-m", "boost_cli", *args],
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=pairs[0][1],
        stderr=pairs[1][1],
        cwd=str(ROOT),
    )
    for _, slave in pairs:
        os.close(slave)
    chunks: Dict[int, List[bytes]] = {master: [] for master, _ in pairs}
    open_fds = set(chunks)
    deadline = time.monotonic() + timeout
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_fds), [], [], 0.2)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed its end
                data = b""
            if data:
                chunks[fd].append(data)
            else:
                open_fds.discard(fd)
    code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    for master, _ in pairs:
        os.close(master)
    out, err = (b"".join(chunks[m]).decode().replace("\r\n", "\n") for m, _ in pairs)
    return code, out, err
