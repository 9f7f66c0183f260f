"""Source validation and safe git invocation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from boost_cli.core import gitutil
from boost_cli.core.errors import GitError, SourceRefused


@pytest.fixture
def no_git(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []

    def fake_run(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise AssertionError("git must not run for a refused source")

    monkeypatch.setattr(subprocess, "run", fake_run)
    return calls


@pytest.mark.parametrize(
    "source",
    [
        "--upload-pack=touch /tmp/pwned",
        "-u touch",
        "ext::sh -c touch% /tmp/pwned",
        "fd::17",
        "https::example",
        "git://github.com/a/b",
        "http://github.com/a/b",
        "ftp://example.com/a/b",
        "a/b\nc",
        "owner/repo\x00",
        "",
        "   ",
        "../../etc",
        "https://github.com",
    ],
)
def test_refused_sources_never_reach_git(source: str, no_git: list, tmp_path: Path) -> None:
    with pytest.raises(SourceRefused):
        gitutil.parse_source(source, cwd=tmp_path)
    assert no_git == []


def test_shorthand_becomes_github_https(tmp_path: Path) -> None:
    src = gitutil.parse_source("anthropics/skills", cwd=tmp_path)
    assert src.url == "https://github.com/anthropics/skills"
    assert src.default_name == "anthropics__skills"
    assert gitutil.parse_source("a/b.git", cwd=tmp_path).url == "https://github.com/a/b"


@pytest.mark.parametrize(
    "source,kind,name",
    [
        ("https://github.com/obra/superpowers.git", "https", "obra__superpowers"),
        ("ssh://git@example.com/team/skills.git", "ssh", "team__skills"),
        ("git@github.com:acme/rules.git", "ssh", "acme__rules"),
        # a local repository is named after its folder: its parent is no owner
        ("file:///srv/git/acme/registry", "file", "registry"),
    ],
)
def test_urls(source: str, kind: str, name: str, tmp_path: Path) -> None:
    src = gitutil.parse_source(source, cwd=tmp_path)
    assert (src.kind, src.default_name, src.url) == (kind, name, source)


def test_local_path_must_be_a_git_repo(tmp_path: Path) -> None:
    plain = tmp_path / "owner" / "plain"
    plain.mkdir(parents=True)
    with pytest.raises(SourceRefused, match="not a git repository"):
        gitutil.parse_source("owner/plain", cwd=tmp_path)
    (plain / ".git").mkdir()
    src = gitutil.parse_source("owner/plain", cwd=tmp_path)
    assert src.kind == "local" and src.url == str(plain.resolve())
    assert src.default_name == "plain"  # not owner__plain: a folder's parent is no owner


def test_uncommitted_counts_changes_a_clone_would_miss(tmp_path: Path) -> None:
    from tests.helpers import commit_all, make_repo

    repo = make_repo(tmp_path / "skills", {"a/SKILL.md": "one"})
    assert gitutil.uncommitted(str(repo)) == 0
    (repo / "a" / "SKILL.md").write_text("two")
    (repo / "b.md").write_text("new")
    assert gitutil.uncommitted(str(repo)) == 2
    assert gitutil.uncommitted(repo.as_uri()) == 2
    commit_all(repo)
    assert gitutil.uncommitted(str(repo)) == 0
    # remote sources and folders git cannot read count nothing, and never raise
    assert gitutil.uncommitted("https://github.com/a/b") == 0
    assert gitutil.uncommitted(str(tmp_path)) == 0


def test_safe_name() -> None:
    assert gitutil.safe_name("../../etc") == "etc"
    assert gitutil.safe_name("a b/c") == "a-b-c"
    assert gitutil.safe_name("...") == "tap"


def test_git_failure_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="git clone failed"):
        gitutil.clone(str(tmp_path / "missing"), tmp_path / "dest")


def test_git_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*a: object, **k: object) -> None:
        raise subprocess.TimeoutExpired(cmd="git", timeout=1)

    monkeypatch.setattr(subprocess, "run", slow)
    with pytest.raises(GitError, match="timed out"):
        gitutil.run_git(["fetch"], timeout=1)


def test_safety_config_is_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    def fake(cmd: list, **kw: object) -> subprocess.CompletedProcess:
        seen["cmd"] = cmd
        seen["env"] = kw["env"]
        return subprocess.CompletedProcess(cmd, 0, b"abc\n", b"")

    monkeypatch.setattr(subprocess, "run", fake)
    gitutil.clone("https://github.com/a/b", Path("/tmp/x"))
    cmd = seen["cmd"]
    assert "protocol.ext.allow=never" in cmd and "protocol.allow=never" in cmd
    assert cmd[cmd.index("--") + 1] == "https://github.com/a/b"
    assert seen["env"]["GIT_TERMINAL_PROMPT"] == "0"
