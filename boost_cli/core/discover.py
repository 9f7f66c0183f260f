"""Find public GitHub repositories that hold SKILL.md files, through the ``gh`` CLI.

boost does not talk to the GitHub API itself: ``gh`` already owns the user's
login, tokens and rate-limit handling. `discover_github` runs one
``gh search code`` (one API request: code search allows 10 a minute), groups
the hits by repository and ranks repositories by how many SKILL.md files
matched. Nothing is cached or written; the caller decides what to tap.

The JSON shape read here is what ``gh search code --json repository,path,url``
prints (gh's ``pkg/search`` ``Code.ExportData``): a list of
``{"path", "url", "repository": {"nameWithOwner", "url", ...}}``.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.errors import BoostError, UsageError

SKILL_FILENAME = "SKILL.md"
#: One page of GitHub code search results, so one API request per discovery.
MAX_HITS = 100
#: How many matching paths a `DiscoveredRepo` keeps as examples.
EXAMPLE_PATHS = 3
INSTALL_HINT = "install the GitHub CLI from https://cli.github.com and run 'gh auth login'"
RETRY_HINT = (
    "retry in a minute (GitHub allows 10 code searches a minute); "
    "'gh auth status' shows whether gh is logged in"
)
AUTH_HINT = "run 'gh auth login', then retry"
UPGRADE_HINT = "retry; if it keeps happening, update gh from https://cli.github.com"


class GhError(BoostError):
    """``gh`` failed, timed out, or printed something boost cannot read."""


class GhMissingError(GhError):
    """The GitHub CLI is not installed (not on PATH)."""


@dataclass(frozen=True)
class DiscoveredRepo:
    """A repository with SKILL.md files that matched the query.

    ``hits`` counts distinct matching SKILL.md paths among the search results
    (not in the whole repository); ``paths`` keeps the first few, in search order.
    """

    repo: str
    url: str
    hits: int
    paths: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {"repo": self.repo, "url": self.url, "hits": self.hits, "paths": list(self.paths)}


def gh_command(gh: str, terms: Sequence[str], max_hits: int = MAX_HITS) -> List[str]:
    """The ``gh search code`` argument list for ``terms`` (no shell ever sees it).

    Each word is its own argument: gh quotes an argument holding spaces, which
    would turn "react testing" into an exact-phrase search. ``--`` keeps a word
    starting with "-" from being read as a flag.
    """
    return [
        gh,
        "search",
        "code",
        "--filename",
        SKILL_FILENAME,
        "--limit",
        str(max_hits),
        "--json",
        "repository,path,url",
        "--",
        *terms,
    ]


def discover_github(
    query: str,
    limit: int = 10,
    gh: str = "gh",
    timeout: float = 30,
    max_hits: int = MAX_HITS,
) -> List[DiscoveredRepo]:
    """Up to ``limit`` GitHub repositories with SKILL.md files matching ``query``, most hits first.

    Raises `UsageError` for an empty query or a limit below 1, `GhMissingError`
    when ``gh`` is not installed, and `GhError` when it fails, times out or
    prints unreadable output.
    """
    terms = query.split()
    if not terms:
        raise UsageError("discovery needs words to search for", "e.g. 'react testing'")
    if limit < 1 or max_hits < 1:
        raise UsageError(f"limit must be at least 1, got {min(limit, max_hits)}")
    exe = shutil.which(gh)
    if exe is None:
        raise GhMissingError(f"the GitHub CLI ({gh}) is not on PATH", INSTALL_HINT)
    stdout, stderr = _run(gh_command(exe, terms, max_hits), timeout)
    return group_hits(parse_gh_json(stdout, stderr), limit)


def _run(argv: List[str], timeout: float) -> Tuple[str, str]:
    env = dict(os.environ, GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1")
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise GhError(
            f"'gh search code' did not answer within {timeout:g}s", "check your network, then retry"
        ) from err
    except OSError as err:
        raise GhMissingError(f"cannot run {argv[0]}: {err.strerror or err}", INSTALL_HINT) from err
    stdout = proc.stdout.decode("utf-8", errors="replace")
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        first = first_line(stderr) or "no error message"
        auth = "gh auth login" in stderr or "authentication" in stderr.lower()
        raise GhError(
            f"'gh search code' failed (exit {proc.returncode}): {first}",
            AUTH_HINT if auth else RETRY_HINT,
        )
    return stdout, stderr


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped ("" when there is none)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def parse_gh_json(stdout: str, stderr: str = "") -> List[Mapping[str, Any]]:
    """The result items gh printed; `GhError` when it is not a JSON list."""
    detail: Optional[str] = None
    try:
        data = json.loads(stdout)
    except ValueError as err:
        detail = f"not JSON: {err}"
    else:
        if not isinstance(data, list):
            detail = f"expected a JSON list, got {type(data).__name__}"
    if detail is not None:
        said = first_line(stderr)
        raise GhError(
            f"'gh search code' printed output boost cannot read ({detail})"
            + (f"; gh said: {said}" if said else ""),
            UPGRADE_HINT,
        )
    return [item for item in data if isinstance(item, Mapping)]


def _repo_name(repository: Any) -> Optional[str]:
    if not isinstance(repository, Mapping):
        return None
    for key in ("nameWithOwner", "fullName", "full_name"):
        name = repository.get(key)
        if isinstance(name, str) and name.count("/") == 1 and all(name.split("/")):
            return name
    return None


def group_hits(items: Sequence[Any], limit: int) -> List[DiscoveredRepo]:
    """Code search hits grouped by repository: most SKILL.md hits first, then search order.

    Only files named exactly ``SKILL.md`` count (gh's filename filter ignores
    case; boost's catalog does not). A path seen twice counts once; items
    that are not objects or lack a repository name or path are skipped.
    """
    urls: Dict[str, str] = {}
    paths: Dict[str, List[str]] = {}  # insertion order is search order
    for item in items:
        if not isinstance(item, Mapping):
            continue
        name = _repo_name(item.get("repository"))
        path = item.get("path")
        if name is None or not isinstance(path, str) or posixpath.basename(path) != SKILL_FILENAME:
            continue
        if name not in paths:
            paths[name] = []
            url = item["repository"].get("url")
            ok = isinstance(url, str) and url.startswith("https://")
            urls[name] = url if ok else f"https://github.com/{name}"
        if path not in paths[name]:
            paths[name].append(path)
    ranked = sorted(paths, key=lambda name: -len(paths[name]))  # stable: ties keep search order
    return [
        DiscoveredRepo(
            repo=name,
            url=urls[name],
            hits=len(paths[name]),
            paths=tuple(paths[name][:EXAMPLE_PATHS]),
        )
        for name in ranked[:limit]
    ]
