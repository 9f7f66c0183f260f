"""The command line's affordances and traps: help topics, examples, the environment table,
did-you-mean, global options anywhere, --fields, --exit-status, the catalog's hints, local
tap names, uncommitted-change warnings and reindex progress."""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Callable, Set

import pytest

from boost_cli import topics
from boost_cli.cli import BUILTINS, COMMANDS, build_parser, main
from tests.helpers import ROOT, skill

VARIABLE = re.compile(r"(BOOST|ANTHROPIC|OPENAI|VOYAGE|GEMINI|GOOGLE)_[A-Z0-9_]+")


def _variables_read() -> Set[str]:
    """Every string literal in boost_cli that is a whole BOOST_/ANTHROPIC_/... name."""
    found = set()
    for path in (ROOT / "boost_cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and VARIABLE.fullmatch(value):
                found.add(value)
    return found


def test_every_variable_the_code_reads_is_documented() -> None:
    documented = {name for name, _, _ in topics.ENVIRONMENT}
    read = _variables_read()
    assert "BOOST_RERANK_TIMEOUT" in read and "VOYAGE_API_KEY" in read
    assert read <= documented, sorted(read - documented)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [n for n in documented if f"`{n}`" not in readme] == []
    help_text = topics.environment_text()
    assert all(n in help_text for n in documented)


def test_every_exit_code_is_documented() -> None:
    from boost_cli.core import errors

    codes = {
        c.exit_code
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.BoostError)
    }
    assert codes | {0, 2, 130} <= {code for code, _ in topics.EXIT_CODES}


@pytest.mark.parametrize("command", sorted([*COMMANDS, *BUILTINS]))
def test_examples_parse_as_typed(command: str) -> None:
    rows = topics.EXAMPLES[command]
    assert rows
    for line, _ in rows:
        words = shlex.split(line)
        if words[0] != "boost":  # e.g. eval "$(boost completion bash)", claude mcp add
            words = shlex.split(re.search(r"boost [a-z]+[^)\"]*", line).group(0))  # type: ignore[union-attr]
        build_parser().parse_args(words[1:])


@pytest.mark.parametrize("topic", sorted(topics.TOPICS))
def test_help_topics(topic: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["help", topic]) == 0
    assert capsys.readouterr().out.strip() == topics.topic_text(topic).strip()


def test_help_command_is_its_help(capsys: pytest.CaptureFixture) -> None:
    assert main(["help", "search"]) == 0
    via_help = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert capsys.readouterr().out == via_help
    assert "examples:" in via_help and "BOOST_RERANK_TIMEOUT" in via_help
    assert main(["help"]) == 0
    overview = capsys.readouterr().out
    assert "help topics:" in overview and topics.DOCS_URL in overview and "exit codes:" in overview


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["serch", "x"],
            "boost: error: argument COMMAND: unknown command 'serch' — did you mean 'search'?",
        ),
        (
            ["search", "x", "--kind", "skil"],
            "boost: error: argument --kind: unknown choice 'skil' — did you mean 'skill'?",
        ),
        (
            ["help", "exit-code"],
            "boost: error: argument TOPIC: unknown choice 'exit-code' — did you mean 'exit-codes'?",
        ),
        (
            ["search", "x", "--lmit", "3"],
            "boost: error: unrecognized arguments: --lmit 3 — did you mean '--limit'? (see 'boost search --help')",
        ),
        (
            ["search", "x", "-n", "500"],
            "boost: error: argument --limit/-n: '500' is not a whole number from 1 to 100 — give e.g. 10",
        ),
        (
            ["discover", "x", "--limit", "0"],
            "boost: error: argument --limit: '0' is not a whole number from 1 to 100 — give e.g. 10",
        ),
    ],
)
def test_usage_errors_name_the_fix(argv: list, message: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err == message + "\n"


def test_every_option_has_help() -> None:
    parser = build_parser()
    from boost_cli.completion import _subparsers

    for name, sub in _subparsers(parser).items():
        for action in sub._actions:
            assert action.help, f"boost {name} {action.option_strings or action.dest} has no help"


def test_a_command_named_first_gets_the_same_parser_built_alone() -> None:
    """`main` builds only the named command's subparser (cheaper on every one-shot run): the
    same help, the same options, the same parse as the whole parser's."""
    from boost_cli.cli import BUILDERS
    from boost_cli.completion import _subparsers

    full = _subparsers(build_parser())
    assert list(full) == list(BUILDERS) and set(COMMANDS) <= set(BUILDERS)
    argv = {
        "search": ["search", "test my React app", "-n", "3", "--kind", "skill", "-q"],
        "tap": ["tap", "/tmp/r", "--name", "x", "--color", "never"],
        "install": ["install", "ex:jest-runner", "--agent", "codex"],
    }
    for name in COMMANDS:
        alone = _subparsers(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == full[name].format_help(), name
        assert alone[name].prog == full[name].prog == f"boost {name}"
        if name in argv:
            got = build_parser(name).parse_known_args(argv[name])
            assert got == build_parser().parse_known_args(argv[name])


def test_global_options_go_before_or_after_the_command(
    example_repo: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    capsys.readouterr()
    assert main(["show", "nope", "-q"]) == 3
    assert main(["show", "nope", "--color", "never"]) == 3
    assert main(["-v", "search", "jest", "--no-llm", "--color", "never"]) == 0
    captured = capsys.readouterr()
    assert "engine " in captured.err  # -v: the one-line summary on stderr
    assert main(["search", "jest", "--no-llm", "-q"]) == 0
    assert "note:" not in capsys.readouterr().err  # -q: the "no index" note is dropped


def test_debug_after_the_command_shows_the_traceback(example_repo: Path, boost_home: Path) -> None:
    from tests.helpers import run_boost

    run_boost(["tap", str(example_repo), "--name", "example"], boost_home)
    r = run_boost(["show", "nope", "--debug"], boost_home)
    assert r.returncode == 3 and "Traceback" in r.stderr
    r = run_boost(["show", "nope"], boost_home)
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------- search output


@pytest.fixture
def tapped(example_repo: Path, capsys: pytest.CaptureFixture) -> Path:
    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    assert main(["reindex"]) == 0
    capsys.readouterr()
    return example_repo


def test_json_hits_start_with_id_and_leave_meta_out(
    tapped: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["search", "test my React app", "--no-llm", "--json", "-n", "2"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert list(hits[0])[0] == "id" and "meta" not in hits[0]
    assert main(["search", "test my React app", "--no-llm", "--fields", "score,id", "-n", "2"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert [list(h) for h in hits] == [["score", "id"], ["score", "id"]]
    assert main(["search", "test my React app", "--no-llm", "--fields", "id,meta", "-n", "1"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["meta"]["name"] == "jest-runner"
    assert main(["search", "test my React app", "--no-llm", "--fields", "all", "-n", "1"]) == 0
    assert "meta" in json.loads(capsys.readouterr().out)[0]
    assert main(["search", "x", "--no-llm", "--fields", "id,nope"]) == 2
    assert "unknown field 'nope' — choose from id,name," in capsys.readouterr().err


def test_exit_status_flag_makes_no_match_exit_1(
    tapped: Path, capsys: pytest.CaptureFixture
) -> None:
    query = ["search", "zzqxv wbbbq", "--no-llm"]
    assert main(query) == 0
    assert "No matches for" in capsys.readouterr().err
    assert main([*query, "--exit-status"]) == 1
    assert main(["search", "jest", "--no-llm", "--exit-status"]) == 0


def test_copies_are_counted(repo_factory: Callable, capsys: pytest.CaptureFixture) -> None:
    text = skill("pdf-forms", "Fill PDF forms with pypdf.", "Fill the fields of a PDF form.")
    for name in ("a", "b", "c"):
        src = repo_factory(name, {"skills/pdf-forms/SKILL.md": text})
        assert main(["tap", str(src), "--name", name]) == 0
    assert main(["reindex"]) == 0
    capsys.readouterr()
    assert main(["search", "fill a pdf form", "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert "same file also in 2 other places: b:pdf-forms, c:pdf-forms" in out


# --------------------------------------------------------------------------- taps


def test_catalog_hint_repeats_the_filters(capsys: pytest.CaptureFixture) -> None:
    argv = ["tap", "--catalog", "--type", "rule", "--category", "meta", "--limit", "2", "--list"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        "2 registries; tap them with 'boost tap --catalog --type rule --category meta --limit 2'"
    )
    assert main(["tap", "--catalog", "--list"]) == 0
    out = capsys.readouterr().out
    assert "(narrow it down first with --type, --category or --limit)" in out


def test_unknown_category_is_an_error_with_a_suggestion(capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", "--catalog", "--category", "securty", "--list"]) == 2
    assert capsys.readouterr().err == (
        "boost: error: no catalog category 'securty' — did you mean 'security'?\n"
    )


def test_a_bulk_tap_with_no_success_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", str(tmp_path / "nope1"), str(tmp_path / "nope2")]) == 1
    out = capsys.readouterr().out
    assert "0 of 2 sources tapped — see the errors above" in out and "reindex" not in out


def test_local_taps_are_named_after_their_folder(
    repo_factory: Callable, capsys: pytest.CaptureFixture
) -> None:
    src = repo_factory("team-skills", {"skills/a/SKILL.md": skill("a", "first")})
    assert main(["tap", str(src)]) == 0
    assert capsys.readouterr().out.startswith("Tapped team-skills at ")


def test_uncommitted_changes_in_a_local_source_are_flagged(
    repo_factory: Callable, capsys: pytest.CaptureFixture
) -> None:
    src = repo_factory("reg", {"skills/a/SKILL.md": skill("a", "first")})
    (src / "skills" / "a" / "SKILL.md").write_text(skill("a", "edited"))
    assert main(["tap", str(src)]) == 0
    err = capsys.readouterr().err
    assert (
        f"note: {src} has 1 uncommitted change, which the tap does not see — commit them, then run 'boost update reg'"
        in err
    )
    assert main(["update", "reg"]) == 0
    captured = capsys.readouterr()
    assert "reg: up to date" in captured.out and "1 uncommitted change" in captured.err


# --------------------------------------------------------------------------- progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_reindex_progress_starts_at_once_and_names_what_is_left(
    repo_factory: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("alpha", "beta"):
        src = repo_factory(name, {"skills/a/SKILL.md": skill("a", "first")})
        assert main(["tap", str(src)]) == 0
    monkeypatch.setenv("COLUMNS", "100")
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["reindex"]) == 0
    frames = [f for f in tty.getvalue().split("\r") if f]
    assert frames[0] == "  indexing · reading 2 taps\x1b[K"
    assert frames[1] == "  indexing 0/2 · left: alpha, beta\x1b[K"
    assert "  indexing 2/2 · merging\x1b[K" in frames
    assert all("· alpha" not in f for f in frames[2:])  # never a finished tap's name
    assert frames[-1] == "\x1b[K" and frames.count("\x1b[K") == 1  # cleared once, at the end


def test_tap_shows_the_source_before_the_clone(
    repo_factory: Callable, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    src = repo_factory("reg", {"skills/a/SKILL.md": skill("a", "first")})
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setenv("COLUMNS", "500")
    assert main(["tap", str(src)]) == 0
    assert tty.getvalue() == f"\r  tapping · cloning {src}\x1b[K\r\x1b[K"


def test_mcp_by_hand_says_what_it_is(boost_home: Path) -> None:
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp"],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "BOOST_HOME": str(boost_home)},
            cwd=str(ROOT),
        )
        os.write(master, b"\x04")  # Ctrl-D: end of input
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0 and out == b""
    assert err.decode().splitlines() == [
        "boost mcp: an MCP server on stdin/stdout, for an MCP client to start "
        "(set-up: boost mcp --help); Ctrl-D or Ctrl-C stops it"
    ]


def test_an_ambiguous_name_lists_its_candidates_one_per_line() -> None:
    from boost_cli.cli import error_text
    from boost_cli.core.errors import AmbiguousError, NotFoundError

    names = [f"tap{i}:dup" for i in range(25)]
    err = AmbiguousError(
        "'dup' matches 25 entries: " + ", ".join(names[:10]) + " …", names, "pick one"
    )
    lines = error_text(err).splitlines()
    assert lines[0] == "'dup' matches 25 entries — pick one:"
    assert lines[1:3] == ["  tap0:dup", "  tap1:dup"] and lines[-1] == "  … and 5 more"
    assert len(lines) == 22
    assert error_text(NotFoundError("no tap \x1b[2J", "fix")) == "no tap \\x1b[2J — fix"


@pytest.mark.parametrize("provider, engine, commands", [("none", "bm25", 5), ("hash", "hybrid", 7)])
def test_the_demo_echoes_commands_that_work_when_typed(
    tmp_path: Path, provider: str, engine: str, commands: int
) -> None:
    """`make demo` with no embedder (keyword search, saying how to get more) and with one
    (vectors built, the meaning query shown by both engines); each search names its engine."""
    import os
    import subprocess

    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "boost"
    exe.write_text(f'#!/bin/sh\ncd "{ROOT}" && exec "{sys.executable}" -m boost_cli "$@"\n')
    exe.chmod(0o755)
    home = tmp_path / "demo home"  # a space, so quoting matters
    env = {k: v for k, v in os.environ.items() if k != "BOOST_HOME"}
    env["BOOST_EMBED_PROVIDER"] = provider  # never the real model: the suite's hash embedder
    demo = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), str(exe), str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    typed = [ln[2:] for ln in demo.stdout.splitlines() if ln.startswith("$ ")]
    assert typed[0].startswith("export BOOST_HOME=") and len(typed) == commands
    assert f"engine {engine}, 3 candidates" in demo.stderr
    if provider == "none":
        assert "# no embedder installed: these searches rank by keywords (BM25)" in demo.stdout
    else:
        assert "$ boost reindex --dense" in demo.stdout and "engine bm25, 3" in demo.stderr
    assert demo.stdout.rstrip().splitlines()[-2] == "  " + typed[0]  # how to stay in the demo home
    # Typed again in a fresh shell, after the export line (the tap itself is done already).
    script = "\n".join([typed[0], "boost taps", *typed[2:]])
    again = subprocess.run(
        ["bash", "-ec", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert "example:jest-runner" in again.stdout and "example:a11y-audit" in again.stdout
