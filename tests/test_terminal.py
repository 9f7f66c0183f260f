"""boost in a terminal and in a pipe, through the real CLI as a subprocess: a reader that
stops early, widths of 80 and 200 columns, colour, and the shell completion scripts."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from boost_cli import completion
from tests.helpers import ROOT, run_boost

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture
def indexed_home(example_repo: Path, boost_home: Path) -> Path:
    r = run_boost(["tap", str(example_repo), "--name", "example"], boost_home)
    assert r.returncode == 0, r.stderr
    r = run_boost(["reindex"], boost_home)
    assert r.returncode == 0, r.stderr
    return boost_home


def _env(home: Path, **extra: str) -> Dict[str, str]:
    env = {**os.environ, "BOOST_HOME": str(home), **extra}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


BOOST = [sys.executable, "-m", "boost_cli"]

# --------------------------------------------------------------------------- closed pipes


@pytest.mark.parametrize(
    "args, lines",
    [
        (["tap", "--catalog", "--list"], 2),
        # --engine bm25: the engine asked for, so no keyword-bound hint on stderr either
        (["search", "--no-llm", "--engine", "bm25", "test my React app", "-n", "50"], 1),
    ],
)
def test_a_pipe_closed_early_exits_quietly(indexed_home: Path, args: List[str], lines: int) -> None:
    """`boost ... | head -N`: exit 0 (or 141 from SIGPIPE) and nothing on stderr."""
    command = " ".join(f"'{a}'" for a in [*BOOST, *args])
    script = f'{command} | head -{lines} > /dev/null; echo "exit=${{PIPESTATUS[0]}}" >&2'
    r = subprocess.run(
        ["bash", "-c", script],
        env=_env(indexed_home),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ROOT),
    )
    status = r.stderr.strip().splitlines()[-1]
    assert status in ("exit=0", "exit=141"), r.stderr
    assert r.stderr.strip() == status  # nothing but our own status line


@pytest.mark.parametrize(
    "args",
    [
        ["tap", "--catalog", "--list"],
        ["search", "--no-llm", "--engine", "bm25", "test my React app"],
    ],
)
def test_a_reader_gone_before_the_first_write(indexed_home: Path, args: List[str]) -> None:
    """The reader closes the pipe before boost writes at all: the hardest case, every time."""
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run(
            [*BOOST, *args],
            env=_env(indexed_home),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=str(ROOT),
        )
    finally:
        os.close(write)
    assert r.returncode in (0, 141) and r.stderr == ""


# --------------------------------------------------------------------------- width


def _too_long(text: str, columns: int) -> List[str]:
    """Lines longer than ``columns`` that are not one unbreakable token."""
    return [ln for ln in text.splitlines() if len(ln) > columns and " " in ln.strip()]


WIDE_RUNS = [
    ["search", "--no-llm", "test my React app"],
    ["search", "--no-llm", "make my web page usable with a screen reader", "--explain"],
    ["taps"],
    ["tap", "--catalog", "--list"],
    ["doctor"],
    ["help", "output"],
    ["--help"],
    ["search", "--help"],
    ["tap", "--help"],
]


@pytest.mark.parametrize("columns", [80, 200])
def test_output_fits_the_width(indexed_home: Path, columns: int) -> None:
    for args in WIDE_RUNS:
        r = run_boost(args, indexed_home, env={"COLUMNS": str(columns)})
        assert r.returncode in (0, 1), (args, r.stderr)
        assert _too_long(r.stdout, columns) == [], args


def test_search_wraps_the_reason_under_the_name(indexed_home: Path) -> None:
    r = run_boost(["search", "--no-llm", "test my React app"], indexed_home, env={"COLUMNS": "80"})
    lines = r.stdout.splitlines()
    assert re.fullmatch(r" 1\. example:jest-runner  \[skill\]  match 100%", lines[0])
    assert lines[1].startswith("    Unit testing") and len(lines[1]) <= 80
    assert lines[2].startswith("    ") and not lines[2].startswith("     ")  # wrapped, indented
    shares = [int(m) for m in re.findall(r"match (\d+)%", r.stdout)]
    assert shares == sorted(shares, reverse=True) and shares[0] == 100
    wide = run_boost(
        ["search", "--no-llm", "test my React app"], indexed_home, env={"COLUMNS": "200"}
    )
    assert len(wide.stdout.splitlines()) < len(lines)


def test_a_pipe_gets_whole_lines(indexed_home: Path) -> None:
    """Without COLUMNS and without a terminal nothing is wrapped or cut (gh's convention)."""
    r = run_boost(["search", "--no-llm", "test my React app"], indexed_home)
    assert max(len(ln) for ln in r.stdout.splitlines()) > 120
    table = run_boost(["tap", "--catalog", "--list"], indexed_home)
    assert "DEFAULT" in table.stdout.splitlines()[0]


def test_tables_drop_then_wrap_columns_to_fit(indexed_home: Path) -> None:
    wide = run_boost(["taps"], indexed_home, env={"COLUMNS": "200"}).stdout.splitlines()
    assert wide[0].split() == ["TAP", "SKILLS", "RULES", "WORKFLOWS", "COMMIT", "UPDATED", "SOURCE"]
    narrow = run_boost(["taps"], indexed_home, env={"COLUMNS": "60"}).stdout.splitlines()
    # a source that does not fit goes whole under its row (not squeezed into a column)
    assert "SOURCE" not in narrow[0] and narrow[0].startswith("TAP")
    assert all(len(ln) <= 60 or (ln.startswith("    ") and " " not in ln.strip()) for ln in narrow)
    catalog = run_boost(["tap", "--catalog", "--list"], indexed_home, env={"COLUMNS": "80"})
    assert "DEFAULT" not in catalog.stdout.splitlines()[0]


# --------------------------------------------------------------------------- colour


def _styled(home: Path, *args: str, **env: str) -> bool:
    r = run_boost(["search", "--no-llm", "test my React app", *args], home, env=env)
    assert r.returncode == 0, r.stderr
    return bool(ANSI.search(r.stdout))


def test_color_follows_the_flag_then_NO_COLOR(indexed_home: Path) -> None:
    assert not _styled(indexed_home)  # a pipe: auto is off
    assert _styled(indexed_home, "--color", "always")
    assert _styled(indexed_home, "--color=always", NO_COLOR="1")  # the flag wins
    assert not _styled(indexed_home, "--color", "never")


def _on_a_terminal(args: List[str], env: Dict[str, str]) -> str:
    """stdout of ``boost args`` run on a pseudo-terminal."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*BOOST, *args], env=env, stdout=slave, stderr=subprocess.DEVNULL, cwd=str(ROOT)
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
    finally:
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_colour_unless_NO_COLOR(indexed_home: Path) -> None:
    args = ["search", "--no-llm", "test my React app", "-n", "3"]
    shown = _on_a_terminal(args, _env(indexed_home, COLUMNS="80"))
    assert "\x1b[1mexample:jest-runner" in shown and "\x1b[1mtesting" in shown
    plain = _on_a_terminal(args, _env(indexed_home, COLUMNS="80", NO_COLOR="1"))
    assert "example:jest-runner" in plain and not ANSI.search(plain)
    dumb = _on_a_terminal(args, _env(indexed_home, COLUMNS="80", TERM="dumb"))
    assert not ANSI.search(dumb)


# --------------------------------------------------------------------------- completion


@pytest.fixture
def boost_on_path(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose `boost` runs this checkout (what the completion scripts call back)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "boost"
    exe.write_text(f'#!/bin/sh\ncd "{ROOT}" && exec "{sys.executable}" -m boost_cli "$@"\n')
    exe.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}


def _shell(shell: str, script: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [shell, "-c", script],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bash_accepts_the_script_and_completes(
    tmp_path: Path, boost_on_path: Dict[str, str], indexed_home: Path
) -> None:
    path = tmp_path / "boost.bash"
    path.write_text(completion.script("bash"))
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0
    env = {**boost_on_path, "BOOST_HOME": str(indexed_home)}

    def complete(*words: str) -> List[str]:
        line = " ".join(f"'{w}'" for w in words)
        script = (
            f"source {path}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
            'complete -p boost >/dev/null && _boost_complete boost; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        r = _shell("bash", script, env)
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    assert complete("boost", "se") == ["search"]
    assert complete("boost", "search", "--li") == ["--limit"]
    assert complete("boost", "search", "--kind", "") == ["rule", "skill", "workflow"]
    assert complete("boost", "untap", "") == ["example"]
    assert complete("boost", "--color", "a") == ["always", "auto"]
    assert complete("boost", "help", "ex") == ["exit-codes"]


def test_zsh_accepts_the_script_and_completes(
    tmp_path: Path, boost_on_path: Dict[str, str], indexed_home: Path
) -> None:
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    path = tmp_path / "boost.zsh"
    path.write_text(completion.script("zsh"))
    assert subprocess.run([zsh, "-n", str(path)], capture_output=True).returncode == 0
    # compdef and compadd exist only under compinit: stand-ins record what the script does.
    script = (
        'compdef() { print -r -- "compdef $*" }; '
        'compadd() { print -rl -- "${(@P)2}" }; '
        f"source {path}; words=(boost taps --j); CURRENT=3; _boost_complete"
    )
    r = _shell(zsh, script, {**boost_on_path, "BOOST_HOME": str(indexed_home)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["compdef _boost_complete boost", "--json"]


def test_fish_accepts_the_script_and_completes(
    tmp_path: Path, boost_on_path: Dict[str, str], indexed_home: Path
) -> None:
    fish: Optional[str] = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    path = tmp_path / "boost.fish"
    path.write_text(completion.script("fish"))
    assert subprocess.run([fish, "-n", str(path)], capture_output=True).returncode == 0
    env = {**boost_on_path, "BOOST_HOME": str(indexed_home)}
    script = f"source {path}; complete -C 'boost se'; complete -C 'boost untap '"
    r = _shell(fish, script, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["search", "example"]


def test_completion_command_prints_each_script(indexed_home: Path) -> None:
    for shell in completion.SHELLS:
        r = run_boost(["completion", shell], indexed_home)
        assert r.returncode == 0 and r.stdout.strip() == completion.script(shell).strip()
    r = run_boost(["completion", "tcsh"], indexed_home)
    assert r.returncode == 2 and "unknown choice 'tcsh'" in r.stderr
