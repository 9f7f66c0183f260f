"""Docs parity: every command is in the README and has --help text."""

from __future__ import annotations

import pytest

from boost_cli.cli import BUILTINS, COMMANDS, build_parser
from tests.helpers import ROOT


@pytest.mark.parametrize("command", sorted([*COMMANDS, *BUILTINS]))
def test_command_documented(command: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"boost {command}" in readme


@pytest.mark.parametrize("command", sorted([*COMMANDS, *BUILTINS]))
def test_command_has_help(command: str, capsys: pytest.CaptureFixture) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit) as exc:
        parser.parse_args([command, "--help"])
    assert exc.value.code == 0
    assert len(capsys.readouterr().out) > 80


def test_parser_commands_match_dispatch() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == {*COMMANDS, *BUILTINS}  # type: ignore[attr-defined]
