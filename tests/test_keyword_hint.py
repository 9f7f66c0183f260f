"""Issue 19: a search ranked by the task's words alone (no LLM, no vector store) says once,
on stderr, how to get search by meaning; ``-q`` silences it; `boost doctor` says it too.
Issue 33: only to a person at a terminal, once a day per home, and ``boost config set
advice.semantic false`` turns it off; a piped search gets nothing extra on stderr.

Real `boost` subprocesses on an isolated BOOST_HOME with no LLM (no key, no `claude`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from tests.helpers import indexed_example, run_boost, run_boost_tty

HINT = "note: ranked by your words alone (no LLM, no vector store) — for search by meaning "
INSTALL = "pip install '.[local]' (in boost's clone) and run 'boost reindex --dense'"
KEYWORDS = "or add --keywords with words a fitting skill would use"
QUERY = "make my page usable for blind people"
# No LLM: no key, and a PATH without `claude` (git stays reachable for the fixture).
NO_LLM = {"ANTHROPIC_API_KEY": "", "BOOST_EMBED_PROVIDER": "none"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("hint"))


def no_claude_path(tmp: Path) -> str:
    """PATH with only git and the Python running the tests: no `claude` anywhere on it."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("git",):
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            os.symlink(found, bin_dir / tool)
    return str(bin_dir)


def search(
    home: Path, args: List[str], env: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess:
    full = {**NO_LLM, "PATH": no_claude_path(home.parent), **(env or {})}
    proc = run_boost(["search", *args], home, full)
    assert proc.returncode == 0, proc.stderr
    return proc


def tty_search(
    home: Path, args: List[str], env: Optional[Dict[str, str]] = None
) -> Tuple[str, str]:
    """A search at an 80-column terminal: (stdout, stderr with its lines joined)."""
    full = {**NO_LLM, "PATH": no_claude_path(home.parent), **(env or {})}
    code, out, err = run_boost_tty(["search", *args], home, full)
    assert code == 0, err
    return out, " ".join(err.split())


def fresh(home: Path, tmp_path: Path) -> Path:
    """A copy of ``home`` that has shown no hint yet."""
    copy = tmp_path / "home"
    shutil.copytree(home, copy, symlinks=True)
    (copy / "cache" / "advice.json").unlink(missing_ok=True)
    return copy


def test_a_keyword_bound_search_says_how_to_search_by_meaning_once_a_day(
    home: Path, tmp_path: Path
) -> None:
    home = fresh(home, tmp_path)
    out, err = tty_search(home, [QUERY, "-n", "3"])
    assert err.count("note: ranked by your words alone") == 1
    assert f"{HINT}{INSTALL}, {KEYWORDS}" in err
    assert "ranked by your words alone" not in out
    assert "ranked by your words alone" not in tty_search(home, [QUERY, "-n", "3"])[1]
    stamps = home / "cache" / "advice.json"
    seen = json.loads(stamps.read_text())
    stamps.write_text(json.dumps({"semantic": seen["semantic"] - 86_401}))  # a day later
    assert f"{HINT}{INSTALL}, {KEYWORDS}" in tty_search(home, [QUERY, "-n", "3"])[1]
    assert run_boost(["config", "set", "advice.semantic", "false"], home).returncode == 0
    stamps.unlink()
    assert "ranked by your words alone" not in tty_search(home, [QUERY, "-n", "3"])[1]


def test_a_piped_search_that_went_well_says_nothing_on_stderr(home: Path, tmp_path: Path) -> None:
    home = fresh(home, tmp_path)
    for args in ([QUERY, "-n", "3"], [QUERY, "-n", "3", "--json"]):
        proc = search(home, args)
        assert proc.stdout and proc.stderr == ""
    assert not (home / "cache" / "advice.json").exists()  # a pipe used up no hint


def test_with_an_embedder_there_the_hint_is_reindex_dense_alone(home: Path, tmp_path: Path) -> None:
    _, err = tty_search(fresh(home, tmp_path), [QUERY, "-n", "3"], {"BOOST_EMBED_PROVIDER": "hash"})
    assert f"{HINT}run 'boost reindex --dense', {KEYWORDS}" in err


@pytest.mark.parametrize(
    "extra",
    [
        ["-q"],  # quiet
        ["--keywords", "accessibility, screen reader, WCAG"],  # the caller widened it
        ["--engine", "bm25"],  # the caller chose the keyword engine
    ],
)
def test_no_hint_when_quiet_widened_or_the_engine_was_chosen(
    home: Path, tmp_path: Path, extra: List[str]
) -> None:
    _, err = tty_search(fresh(home, tmp_path), [QUERY, "-n", "3", *extra])
    assert "ranked by your words alone" not in err


def test_no_hint_with_a_vector_store(home: Path, tmp_path: Path) -> None:
    dense = tmp_path / "home"
    shutil.copytree(home, dense, symlinks=True)
    built = run_boost(["reindex", "--dense"], dense, {"BOOST_EMBED_PROVIDER": "hash"})
    assert built.returncode == 0, built.stderr
    proc = search(dense, [QUERY, "-n", "3"], {"BOOST_EMBED_PROVIDER": "hash"})
    assert "ranked by your words alone" not in proc.stderr
    doctor = run_boost(["doctor"], dense, {**NO_LLM, "BOOST_EMBED_PROVIDER": "hash"})
    assert "semantic search: on (the vector store)" in doctor.stdout


def test_doctor_says_it_too_as_a_hint_not_a_fix(home: Path) -> None:
    env = {**NO_LLM, "PATH": no_claude_path(home.parent)}
    doctor = run_boost(["doctor"], home, env)
    assert (
        f"semantic search: off (no LLM, no vector store) — for search by meaning {INSTALL}, "
        f"{KEYWORDS}" in " ".join(doctor.stdout.split())
    )
    assert "fix:" not in doctor.stdout and doctor.returncode == 0
    report = json.loads(run_boost(["doctor", "--json"], home, env).stdout)
    assert report["semantic"]["by"] == [] and INSTALL in report["semantic"]["hint"]


def imported(home: Path, args: List[str], tty: bool = False) -> set:
    """The modules a real `boost search` process imports (`python -X importtime`), piped
    or at a terminal (where the hint is shown)."""
    env = {**os.environ, **NO_LLM, "PATH": no_claude_path(home.parent), "BOOST_HOME": str(home)}
    env.pop("BOOST_EMBED_PROVIDER")  # auto-detection: what a newcomer's search runs
    if tty:
        code, _, err = run_boost_tty(
            ["search", *args],
            home,
            {**env, "PYTHONPROFILEIMPORTTIME": "1", "BOOST_EMBED_PROVIDER": None},
            columns=400,
        )
        assert code == 0, err
    else:
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "boost_cli", "search", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        err = proc.stderr
    lines = [x for x in err.splitlines() if x.startswith("import time:")]
    return {x.rsplit("|", 1)[-1].strip() for x in lines}


def test_the_hint_costs_a_quiet_search_nothing_and_a_shown_one_no_model_code(
    home: Path, tmp_path: Path
) -> None:
    quiet = imported(home, [QUERY, "-n", "3", "-q"])
    assert "boost_cli.core.search" in quiet and "boost_cli.core.embed" not in quiet
    piped = imported(home, [QUERY, "-n", "3"])  # no hint into a pipe: not even composed
    assert "boost_cli.core.search" in piped and "boost_cli.core.embed" not in piped
    shown = imported(fresh(home, tmp_path), [QUERY, "-n", "3"], tty=True)
    assert "boost_cli.core.embed" in shown  # the hint asks which embedder there is
    # ... which needs neither the tokenizer nor the int8 rewriter (they load with a model)
    assert not {"boost_cli.core.embed.wordpiece", "boost_cli.core.embed.onnx_int8"} & shown
    assert "boost_cli.core.install.plan" not in shown and "difflib" not in shown
    assert "boost_cli.core.catalog" not in shown  # the scan's version is a constant
