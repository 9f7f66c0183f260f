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


def test_a_note_wraps_at_words_on_a_terminal_and_stays_one_line_in_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from boost_cli.commands import render

    text = (
        "note: ranked by your words alone (no LLM, no vector store) — for search by meaning "
        "run 'boost reindex --dense', or add --keywords with words a fitting skill would use"
    )
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(render.settings, "verbosity", 0)
    tty = Tty()
    monkeypatch.setattr(render.sys, "stderr", tty)
    render.note(text)
    lines = tty.getvalue().splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("note: ") and all(line.startswith("  ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == text  # no word cut, none lost
    pipe = io.StringIO()
    monkeypatch.setattr(render.sys, "stderr", pipe)
    render.note(text)
    assert pipe.getvalue() == text + "\n"  # a script reading stderr sees one line
    quiet = Tty()
    monkeypatch.setattr(render.sys, "stderr", quiet)
    monkeypatch.setattr(render.settings, "verbosity", -1)
    render.note(text)
    assert quiet.getvalue() == ""
