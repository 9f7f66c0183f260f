"""The one error family boost raises; `cli.main` maps each class to an exit code.

Every error carries *what happened* and, where there is one, *how to fix it*;
`str(err)` renders both as ``<what> — <fix>`` so the CLI can print one line.
"""

from __future__ import annotations

from typing import Optional, Sequence


class BoostError(Exception):
    """Base class: a problem the user can act on. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, fix: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} — {self.fix}" if self.fix else self.message


class UsageError(BoostError):
    """The command line or a tool call's arguments are wrong. Exit code 2."""

    exit_code = 2


class NotFoundError(BoostError):
    """A tap, skill or file that was asked for does not exist. Exit code 3."""

    exit_code = 3


class AmbiguousError(NotFoundError):
    """A name matches several entries; `candidates` lists their `tap:name`s."""

    def __init__(self, message: str, candidates: Sequence[str], fix: Optional[str] = None) -> None:
        super().__init__(message, fix)
        self.candidates = list(candidates)


class GitError(BoostError):
    """git failed, timed out, or a source was refused before git ran. Exit code 4."""

    exit_code = 4


class SourceRefused(GitError):
    """A tap source that boost will not hand to git (unsafe transport, option-like)."""


class IndexUnavailable(BoostError):
    """The search index is missing, corrupt, or of another format version. Exit code 5."""

    exit_code = 5


class ProviderError(BoostError):
    """An LLM or embedding provider failed or is not configured. Exit code 6."""

    exit_code = 6


class ConfigError(BoostError):
    """The config file under BOOST_HOME cannot be read. Exit code 7."""

    exit_code = 7


class NoTapsError(BoostError):
    """Nothing is tapped yet, so there is nothing to search. Exit code 10."""

    exit_code = 10

    def __init__(self) -> None:
        super().__init__(
            "no registries are tapped yet",
            "run 'boost tap --defaults' for a starter set, or 'boost tap OWNER/REPO'",
        )
