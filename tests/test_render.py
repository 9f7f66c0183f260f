"""Terminal rendering helpers: query terms marked only on a styled terminal, text made safe."""

from __future__ import annotations

import io

import pytest

from boost_cli.commands.render import BOLD, NORMAL, color_enabled, mark_terms


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_mark_terms_bolds_words_sharing_a_stem_with_the_query() -> None:
    got = mark_terms("Testing React apps with Jest", "test my react app", True)
    assert got == f"{BOLD}Testing{NORMAL} {BOLD}React{NORMAL} {BOLD}apps{NORMAL} with Jest"
    assert mark_terms("Testing React apps", "test", False) == "Testing React apps"


def test_mark_terms_escapes_control_sequences_before_styling() -> None:
    got = mark_terms("evil\x1b[2J test\n 2. fake:result", "test", True)
    assert "\x1b[2J" not in got and "\n" not in got
    assert got == f"evil\\x1b[2J {BOLD}test{NORMAL}\\n 2. fake:result"


def test_color_needs_a_terminal_and_no_NO_COLOR(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert color_enabled(Tty()) and not color_enabled(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color_enabled(Tty())
    monkeypatch.setenv("NO_COLOR", "")
    assert color_enabled(Tty())
