"""Tap management through the real CLI: `main(argv)` in process, and a few subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from boost_cli.cli import main
from tests.helpers import HIT_KEYS, commit_all, run_boost, skill


def test_tap_taps_show_untap(
    example_repo: Path, boost_home: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    line = capsys.readouterr().out.strip()
    assert (
        line.startswith("Tapped example at ")
        and "skills" in line
        and "rules" in line
        and "workflows" in line
    )
    assert (boost_home / "repos" / "example" / ".git").is_dir()
    assert main(["taps", "--json"]) == 0
    taps = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in taps] == ["example"]
    assert set(taps[0]) >= {"name", "source", "commit", "counts"}
    assert set(taps[0]["counts"]) == {"skill", "rule", "workflow"}
    assert sum(taps[0]["counts"].values()) >= 20
    assert main(["show", "example:jest-runner"]) == 0
    shown = capsys.readouterr().out
    assert "# example:jest-runner [skill]" in shown and "name: jest-runner" in shown
    assert main(["untap", "example"]) == 0
    assert capsys.readouterr().out == "Untapped example\n"
    assert not (boost_home / "repos" / "example").exists()
    assert main(["taps", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_tap_twice_is_refused(example_repo: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", str(example_repo), "--name", "ex"]) == 0
    assert main(["tap", str(example_repo), "--name", "ex"]) == 2
    assert "a tap named 'ex' already exists" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["../../etc", "a/b", "..", ".hidden/x"])
def test_hostile_tap_names_refused(
    example_repo: Path, bad: str, boost_home: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["tap", str(example_repo), "--name", bad]) == 2
    assert "invalid tap name" in capsys.readouterr().err
    assert not (boost_home.parent / "etc").exists()


def test_refused_source_exit_code(capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", "--", "--upload-pack=touch /tmp/x"]) == 4
    assert "looks like a git option" in capsys.readouterr().err
    assert main(["tap", "ext::sh -c touch% /tmp/boost-pwned"]) == 4
    assert not Path("/tmp/boost-pwned").exists()


def test_bulk_tap_carries_on(
    example_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code = main(["tap", str(tmp_path / "missing"), str(example_repo), "ext::x"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.count("fail  ") == 2
    assert "Tapped example-registry" in captured.out or "Tapped" in captured.out
    assert "1 of 3 sources tapped" in captured.out


def test_update_moves_to_remote_head(repo_factory: Callable, capsys: pytest.CaptureFixture) -> None:
    src = repo_factory("reg", {"skills/a/SKILL.md": skill("a", "first skill")})
    assert main(["tap", str(src), "--name", "reg"]) == 0
    capsys.readouterr()
    assert main(["update"]) == 0
    assert "reg: up to date at" in capsys.readouterr().out
    (src / "skills" / "b").mkdir()
    (src / "skills" / "b" / "SKILL.md").write_text(skill("b", "second skill"))
    (src / "rules").mkdir()
    (src / "rules" / "r.md").write_text("a rule\n")
    new = commit_all(src)
    assert main(["update", "reg"]) == 0
    out = capsys.readouterr().out
    assert f"→ {new[:10]}" in out and "+1 skill, +1 rule" in out
    assert main(["show", "reg:b"]) == 0


def test_update_failure_is_reported(repo_factory: Callable, capsys: pytest.CaptureFixture) -> None:
    import shutil

    src = repo_factory("gone", {"skills/a/SKILL.md": skill("a", "x")})
    assert main(["tap", str(src), "--name", "gone"]) == 0
    shutil.rmtree(src)
    assert main(["update", "gone"]) == 1
    assert "fail  gone: git fetch failed" in capsys.readouterr().err


def test_catalog_list(capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", "--catalog", "--list", "--type", "rule", "--limit", "3", "--json"]) == 0
    regs = json.loads(capsys.readouterr().out)
    assert 0 < len(regs) <= 3 and all(r["type"] == "rule" and not r["index_only"] for r in regs)
    assert main(["tap", "--catalog", "--list"]) == 0
    assert "REGISTRY" in capsys.readouterr().out


def test_defaults_bulk_without_network(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boost_cli.core import gitutil
    from boost_cli.core.errors import GitError

    def offline(url: str, dest: Path, timeout: float = 1, hold: object = ()) -> None:
        raise GitError("git clone failed: unable to access (network down)")

    monkeypatch.setattr(gitutil, "clone", offline)
    assert main(["tap", "--defaults"]) == 1
    err = capsys.readouterr().err
    assert err.count("fail  ") >= 3 and "network down" in err


def test_show_ambiguous_and_missing(repo_factory: Callable, capsys: pytest.CaptureFixture) -> None:
    a = repo_factory("a", {"skills/x/SKILL.md": skill("dup", "one")})
    b = repo_factory("b", {"skills/x/SKILL.md": skill("dup", "two")})
    assert main(["tap", str(a), "--name", "a"]) == 0
    assert main(["tap", str(b), "--name", "b"]) == 0
    capsys.readouterr()
    assert main(["show", "dup"]) == 3
    assert capsys.readouterr().err == (
        "boost: error: 'dup' matches 2 entries — ask for one of them as TAP:NAME (or TAP:PATH):\n"
        "  a:dup\n"
        "  b:dup\n"
    )
    assert main(["show", "b:dup"]) == 0
    assert "two" in capsys.readouterr().out
    assert main(["show", "nope"]) == 3
    assert "no skill, rule or workflow named 'nope'" in capsys.readouterr().err


def test_no_taps_exit_10(capsys: pytest.CaptureFixture) -> None:
    assert main(["search", "anything"]) == 10
    assert "boost tap --defaults" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["search"])
    assert exc.value.code == 2
    assert main(["tap"]) == 2
    assert main(["tap", "--list"]) == 2


def test_subprocess_roundtrip(example_repo: Path, boost_home: Path) -> None:
    r = run_boost(["tap", str(example_repo), "--name", "example"], boost_home)
    assert r.returncode == 0, r.stderr
    r = run_boost(
        ["search", "--engine", "lexical", "--json", "--no-rerank", "unit testing javascript"],
        boost_home,
    )
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)
    assert hits and hits[0]["id"].startswith("example:")
    assert set(hits[0]) - {"uri"} == HIT_KEYS  # uri: a skill the MCP Skills extension serves
    r = run_boost(["--debug", "show", "nope"], boost_home)
    assert r.returncode == 3 and "Traceback" in r.stderr


def test_tap_and_untap_keep_an_existing_index_in_step(
    example_repo: Path, repo_factory: Callable, capsys: pytest.CaptureFixture
) -> None:
    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    assert "refreshed" not in capsys.readouterr().out  # no index yet: nothing to refresh
    assert main(["reindex"]) == 0
    capsys.readouterr()
    extra = repo_factory(
        "extra", {"skills/zebra/SKILL.md": skill("zebra-care", "Look after zebras in a zoo")}
    )
    assert main(["tap", str(extra), "--name", "extra"]) == 0
    out = capsys.readouterr().out
    assert "Search index refreshed (1 tap redone in" in out
    assert main(["search", "zebras zoo", "--json", "--no-rerank"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["id"] == "extra:zebra-care"
    assert "out of date" not in captured.err
    assert main(["untap", "extra"]) == 0
    assert "Search index refreshed (1 tap redone in" in capsys.readouterr().out
    assert main(["search", "zebras zoo", "--json", "--no-rerank"]) == 0
    captured = capsys.readouterr()
    assert all(h["tap"] == "example" for h in json.loads(captured.out))
    assert "out of date" not in captured.err
