"""Safe git: source validation and the few git operations boost needs.

git always runs as an argument list (never a shell) with ``--`` before positional
arguments, no terminal prompts, a protocol allow-list (https, ssh, file only: no
``ext::``/``fd::`` or other remote helpers), no hooks, fsmonitor or background gc, and a
timeout. Sources that look like options, carry control characters or name another
transport are refused before git runs.

A git boost starts dies with boost (on Linux, through the parent-death signal) and can be
handed boost's lock descriptors (``hold``), so a lock stays held while any git boost
started in a clone is still running; only a caller holding that clone's lock may clear
git's own stale ``*.lock`` files (`clear_stale_locks`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from boost_cli.core.errors import GitError, SourceRefused

GIT_TIMEOUT = 300.0
_SHORTHAND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.][A-Za-z0-9_.-]*$")
_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9_.-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>[^:\\]+)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_COMMIT = re.compile(r"[0-9a-f]{40}")

# Only these transports are ever allowed; everything else (ext, fd, git, http...) is off.
_PROTOCOL_CONFIG = (
    "-c", "protocol.allow=never",
    "-c", "protocol.https.allow=always",
    "-c", "protocol.ssh.allow=always",
    "-c", "protocol.file.allow=always",
    "-c", "protocol.ext.allow=never",
    "-c", "protocol.fd.allow=never",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "submodule.recurse=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)  # fmt: skip
LOCAL_TIMEOUT = 120.0  # git work that needs no network (reset, status, rev-parse)
# Git's own lock files in a clone: what a killed git leaves behind.
_GIT_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "shallow.lock", "config.lock",
              "packed-refs.lock", "FETCH_HEAD.lock")  # fmt: skip


@dataclass(frozen=True)
class Source:
    """A validated tap source: what git gets (``url``) and the tap name it suggests."""

    original: str
    url: str
    kind: str  # "github" | "https" | "ssh" | "file" | "local"
    default_name: str


def safe_name(text: str) -> str:
    """A folder-safe tap name: ``[A-Za-z0-9._-]``, no leading dot or dash, <= 100 chars."""
    name = _SAFE_NAME.sub("-", text).strip(".-")[:100]
    return name or "tap"


def _name_from_path(path: str, owner: bool = True) -> str:
    """``owner__repo`` from a URL's path; just the folder's name for a local repository
    (``owner=False``: its parent folder is no owner, only noise in every result)."""
    parts = [p for p in re.split(r"[/\\]+", path.rstrip("/\\")) if p]
    if not parts:
        return "tap"
    last = parts[-1]
    if last.endswith(".git"):
        last = last[:-4]
    if owner and len(parts) >= 2:
        return safe_name(f"{parts[-2]}__{last}")
    return safe_name(last)


def parse_source(source: str, cwd: Optional[Path] = None) -> Source:
    """Validate ``source`` and turn it into something git can clone, or raise SourceRefused.

    Accepted: ``owner/repo`` (GitHub shorthand, unless a local folder of that name
    exists), ``https://…``, ``ssh://…``, ``git@host:owner/repo``, ``file://…`` and a local
    path to a git repository.
    """
    fix = "use OWNER/REPO, an https:// or ssh:// URL, git@host:owner/repo, file:// or a local path"
    if not source or not source.strip():
        raise SourceRefused("empty tap source", fix)
    if source.startswith("-"):
        raise SourceRefused(f"refusing tap source {source!r}: it looks like a git option", fix)
    if _CONTROL.search(source):
        raise SourceRefused("refusing tap source with control characters", fix)
    if "::" in source:
        raise SourceRefused(
            f"refusing tap source {source!r}: remote helpers (ext::, fd::) are not allowed", fix
        )
    lower = source.lower()
    if lower.startswith("https://"):
        path = source.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        if "/" not in path.strip("/"):
            raise SourceRefused(f"refusing tap source {source!r}: no repository path", fix)
        return Source(source, source, "https", _name_from_path(path.split("/", 1)[1]))
    if lower.startswith("ssh://"):
        path = source.split("://", 1)[1]
        return Source(source, source, "ssh", _name_from_path(path.split("/", 1)[-1]))
    if lower.startswith("file://"):
        path = source[len("file://") :]
        return Source(source, source, "file", _name_from_path(path, owner=False))
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", source):
        scheme = source.split("://", 1)[0]
        raise SourceRefused(
            f"refusing tap source {source!r}: the {scheme}:// transport is not allowed", fix
        )
    base = cwd or Path.cwd()
    local = Path(source).expanduser()
    local = local if local.is_absolute() else base / local
    if local.exists():
        if not local.is_dir():
            raise SourceRefused(f"{source!r} is not a folder", "point at a git repository folder")
        if not ((local / ".git").exists() or (local / "HEAD").is_file()):
            raise SourceRefused(
                f"{source!r} is not a git repository",
                f"run 'git init && git add -A && git commit -m init' in {source}",
            )
        resolved = local.resolve()
        return Source(source, str(resolved), "local", _name_from_path(str(resolved), owner=False))
    m = _SCP_LIKE.match(source)
    if m:
        return Source(source, source, "ssh", _name_from_path(m.group("path")))
    if _SHORTHAND.match(source) and ".." not in source:
        owner, repo = source.split("/")
        url = f"https://github.com/{owner}/{repo.removesuffix('.git')}"
        return Source(source, url, "github", safe_name(f"{owner}__{repo.removesuffix('.git')}"))
    raise SourceRefused(
        f"cannot understand tap source {source!r} (no such local folder either)", fix
    )


def _env() -> dict:
    env = dict(os.environ)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GIT_SSH_COMMAND": env.get("GIT_SSH_COMMAND", "ssh -oBatchMode=yes"),
            "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "LC_ALL": "C",
        }
    )
    return env


def _die_with_parent() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` asking Linux to SIGKILL the child when boost dies (``kill -9``
    included), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # boost died before the signal was armed
            os._exit(1)

    return preexec


def run_git(
    args: Sequence[str],
    cwd: Optional[Path] = None,
    timeout: float = GIT_TIMEOUT,
    hold: Sequence[int] = (),
) -> str:
    """Run ``git <safety config> <args>`` and return stdout; raise GitError with git's message.

    ``hold``: lock descriptors git inherits, so each lock stays held until git has exited
    even if boost is killed first."""
    return run_git_bytes(args, cwd, timeout, hold).decode("utf-8", "replace")


def run_git_bytes(
    args: Sequence[str],
    cwd: Optional[Path] = None,
    timeout: float = GIT_TIMEOUT,
    hold: Sequence[int] = (),
) -> bytes:
    """`run_git`, with stdout as git wrote it (a blob's bytes)."""
    cmd: List[str] = ["git", *_PROTOCOL_CONFIG, *args]
    try:
        proc = subprocess.run(
            cmd,
            cwd=str(cwd) if cwd else None,
            env=_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            pass_fds=tuple(hold) if os.name == "posix" else (),  # Windows cannot pass fds
            preexec_fn=_die_with_parent(),
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed", "install git and try again") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(
            f"git {_verb(args)} timed out after {timeout:.0f} s", "check the network and retry"
        ) from exc
    if proc.returncode != 0:
        lines = [
            ln.strip() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()
        ]
        msg = next(
            (ln for ln in lines if ln.lower().startswith(("fatal", "error"))),
            lines[-1] if lines else "",
        )
        raise GitError(f"git {_verb(args)} failed: {msg or f'exit {proc.returncode}'}")
    return proc.stdout


def _verb(args: Sequence[str]) -> str:
    return next((a for a in args if not a.startswith("-")), "")


def clone(url: str, dest: Path, timeout: float = GIT_TIMEOUT, hold: Sequence[int] = ()) -> None:
    """Shallow-clone ``url`` into ``dest`` (which must not exist)."""
    run_git(
        ["clone", "--depth", "1", "--no-tags", "--quiet", "--", url, str(dest)],
        timeout=timeout,
        hold=hold,
    )


def head_commit(repo: Path, hold: Sequence[int] = ()) -> str:
    """The commit checked out in ``repo``."""
    return run_git(
        ["rev-parse", "--verify", "HEAD^{commit}"], cwd=repo, timeout=30, hold=hold
    ).strip()


def uncommitted(url: str) -> int:
    """How many files of the local repository ``url`` (a path or ``file://`` URL) have
    changes no commit holds (a tap clones commits, so these are not in it); 0 for a remote
    URL or a folder git cannot read. Read-only."""
    path = Path(url[len("file://") :] if url.lower().startswith("file://") else url)
    if not path.is_absolute() or not path.is_dir():
        return 0
    try:
        status = run_git(["--no-optional-locks", "status", "--porcelain"], cwd=path, timeout=30)
    except GitError:
        return 0
    return sum(1 for line in status.splitlines() if line.strip())


def fetch(repo: Path, timeout: float = GIT_TIMEOUT, hold: Sequence[int] = ()) -> str:
    """Fetch the remote head into ``repo`` (its files do not change); its commit."""
    run_git(
        ["fetch", "--depth", "1", "--no-tags", "--quiet", "origin", "HEAD"],
        cwd=repo,
        timeout=timeout,
        hold=hold,
    )
    return run_git(
        ["rev-parse", "--verify", "FETCH_HEAD^{commit}"], cwd=repo, timeout=30, hold=hold
    ).strip()


def blob(repo: Path, commit: str, path: str, hold: Sequence[int] = ()) -> Optional[bytes]:
    """The bytes of ``path`` at ``commit`` (40 hex digits) in ``repo``, or None when the
    clone does not hold that commit or the commit has no such file."""
    if not _COMMIT.fullmatch(commit):
        return None
    try:
        run_git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo, timeout=30, hold=hold)
    except GitError:
        return None
    try:
        return run_git_bytes(
            ["cat-file", "blob", f"{commit}:{path}"], cwd=repo, timeout=LOCAL_TIMEOUT, hold=hold
        )
    except GitError:
        return None


def fetch_commit(
    repo: Path, commit: str, timeout: float = GIT_TIMEOUT, hold: Sequence[int] = ()
) -> None:
    """Fetch the one commit ``commit`` (40 hex digits) from ``repo``'s origin (a shallow
    clone holds only its head); the files checked out do not change. GitError when the
    remote does not have it (a force-push dropped it) or refuses to send it."""
    if not _COMMIT.fullmatch(commit):
        raise GitError(f"{commit!r} is not a commit id")
    run_git(
        ["fetch", "--depth", "1", "--no-tags", "--quiet", "origin", commit],
        cwd=repo,
        timeout=timeout,
        hold=hold,
    )


def checkout(repo: Path, commit: str, hold: Sequence[int] = ()) -> None:
    """Make ``repo``'s files exactly ``commit``: reset, then remove every file git does not
    track (ignored ones too: a fresh clone has none)."""
    run_git(
        ["reset", "--hard", "--quiet", commit, "--"], cwd=repo, timeout=LOCAL_TIMEOUT, hold=hold
    )
    run_git(["clean", "-ffdxq"], cwd=repo, timeout=LOCAL_TIMEOUT, hold=hold)


def checkout_problem(repo: Path, commit: str, hold: Sequence[int] = ()) -> Optional[str]:
    """Why ``repo``'s files are not exactly ``commit`` (HEAD elsewhere, changed, extra or
    missing files), or None when they are. Takes no git lock, so it may run beside git."""
    try:
        head = head_commit(repo, hold)
    except GitError as exc:
        return f"its HEAD cannot be read ({exc.message})"
    if head != commit:
        return f"it is at {head[:10]}, not {commit[:10]}"
    status = run_git(
        [
            "--no-optional-locks",
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--ignored",
        ],
        cwd=repo,
        timeout=LOCAL_TIMEOUT,
        hold=hold,
    )
    changed = [p for p in status.split("\0") if p]
    if changed:
        return f"{len(changed)} file{'' if len(changed) == 1 else 's'} differ from that commit"
    return None


def clear_stale_locks(repo: Path) -> List[str]:
    """Delete git's lock files in ``repo`` (what a killed git leaves); their paths.

    Only for a caller holding the clone's boost lock: every git boost runs in a clone
    inherits that lock, so holding it means no git of boost's is running there."""
    git_dir = repo / ".git"
    found = [git_dir / name for name in _GIT_LOCKS]
    for sub in ("refs", "logs"):
        if (git_dir / sub).is_dir():
            found.extend(git_dir.joinpath(sub).rglob("*.lock"))
    removed = []
    for path in found:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(str(path.relative_to(repo)))
    return removed
