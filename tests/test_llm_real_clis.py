"""The agent CLIs boost runs headless, for real: each one's `--version` runs, and every
flag boost passes it is in its `--help` (the packages from npm, installed into a
temporary prefix, or the prefix BOOST_AGENT_CLIS names; skipped where npm cannot install
them). Slow: `pytest -m slow tests/test_llm_real_clis.py`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

from boost_cli.core.llm import claude_cli, codex_cli, gemini_cli

pytestmark = pytest.mark.slow

NPM = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("BOOST_AGENT_CLIS")
    if given:
        return Path(given)
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm")
    prefix = tmp_path_factory.mktemp("npm")
    done = subprocess.run(
        ["npm", "install", "--no-fund", "--no-audit", "--prefix", str(prefix), *NPM.values()],
        capture_output=True,
        text=True,
        timeout=900,
    )
    found = prefix / "node_modules" / ".bin"
    if done.returncode != 0 or not all((found / name).exists() for name in NPM):
        pytest.skip(f"npm cannot install the agent CLIs here: {done.stderr[-200:]}")
    return found


def run(bin_dir: Path, argv: List[str], home: Path, check: bool = True) -> str:
    exe = bin_dir / argv[0]
    if not exe.exists():
        pytest.skip(f"{argv[0]} is not installed in {bin_dir}")
    env = {
        "PATH": os.pathsep.join([str(bin_dir), os.path.dirname(shutil.which("node") or "")]),
        "HOME": str(home),
    }
    done = subprocess.run(
        [str(exe), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(home),
        input="Reply with OK.",
    )
    assert done.returncode == 0 or not check, done.stderr[-500:]
    return done.stdout + done.stderr


def flags(argv: List[str]) -> List[str]:
    return [a for a in argv[1:] if a.startswith("-") and a != "-"]


CASES = {
    "claude": (["claude", "--help"], claude_cli.argv("claude", "m", "s")),
    "codex": (["codex", "exec", "--help"], codex_cli.argv("codex", "gpt-5-mini")),
    "gemini": (["gemini", "--help"], gemini_cli.argv("gemini", "gemini-2.5-flash")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_flag_boost_passes_is_in_the_real_help(
    name: str, bin_dir: Path, tmp_path: Path
) -> None:
    assert run(bin_dir, [name, "--version"], tmp_path).strip()
    help_argv, boost_argv = CASES[name]
    text = run(bin_dir, help_argv, tmp_path)
    missing = [f for f in flags(boost_argv) if f not in text]
    if missing:
        # A flag the help does not list (claude's --max-turns is hidden) must still be
        # accepted: boost's whole argv, run with no login, is refused for the login only.
        said = run(bin_dir, [name, *boost_argv[1:]], tmp_path, check=False)
        assert not re.search(r"unknown option|Unknown argument|unexpected argument", said), (
            f"{name} refuses {missing}: {said[-300:]}"
        )
        assert name == "claude" and "Not logged in" in said, said[-300:]
