"""Issue 33 item 10: hints (git's ``advice.*``). The sqlite-vec hint (the exact scan stands
in: same results) and the search-by-meaning hint are for a person at a terminal, once a day
per home, and ``boost config set advice.<name> false`` turns one off; a piped command that
went well writes nothing to stderr. Item 12: the dense build's words fit where the texts
went (a model in process is not "sent to the provider").

Real `boost` subprocesses, on pseudo-terminals (`run_boost_tty`) or pipes; this venv's
sqlite3 loads no extensions, so its store is the flat scan and the hint applies (skipped
where it does load)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boost_cli.core import dense
from tests.helpers import indexed_example, run_boost, run_boost_tty

HASH = {"BOOST_EMBED_PROVIDER": "hash", "ANTHROPIC_API_KEY": "", "BOOST_NO_LLM": "1"}
SQLITE_HINT = "sqlite3 cannot load extensions"

pytestmark = pytest.mark.skipif(
    dense.backend_status()[0] != "flat", reason="sqlite-vec loads here: no hint to show"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = indexed_example(tmp_path_factory.mktemp("advice"))
    r = run_boost(["reindex", "--dense"], home, HASH)
    assert r.returncode == 0, r.stderr
    return home


@pytest.fixture
def home(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(built, copy, symlinks=True)
    (copy / "cache" / "advice.json").unlink(missing_ok=True)
    return copy


def test_a_piped_dense_build_says_embedded_in_process_and_nothing_on_stderr(home: Path) -> None:
    r = run_boost(["reindex", "--dense", "--force"], home, HASH)
    assert r.returncode == 0 and r.stderr == ""
    line = next(x for x in r.stdout.splitlines() if x.startswith("Dense index"))
    assert "embedded in process (the rest from the cache)" in line
    assert "sent to the provider" not in r.stdout and "note:" not in r.stdout
    report = json.loads(run_boost(["reindex", "--dense", "--json"], home, HASH).stdout)
    assert report["dense"]["where"] == "in process" and report["dense"]["backend_note"]


def test_the_sqlite_hint_shows_on_a_terminal_once_a_day_then_never_when_off(home: Path) -> None:
    code, out, err = run_boost_tty(["reindex", "--dense", "--force"], home, HASH)
    assert code == 0, err
    assert " ".join(err.split()).count(SQLITE_HINT) == 1 and SQLITE_HINT not in out
    assert "embedded in process" in " ".join(out.split())
    # the same day, neither the build nor --explain repeats it
    code, out, err = run_boost_tty(["reindex", "--dense", "--force"], home, HASH)
    assert code == 0 and SQLITE_HINT not in " ".join(err.split())
    code, out, err = run_boost_tty(["search", "fill a pdf form", "--explain"], home, HASH)
    assert code == 0 and SQLITE_HINT not in " ".join((out + err).split())
    assert "store" in out  # the explain block still names the store's backend
    stamps = home / "cache" / "advice.json"
    when = json.loads(stamps.read_text())["sqlite"]
    stamps.write_text(json.dumps({"sqlite": when - 86_401}))  # a day later
    code, out, err = run_boost_tty(["search", "fill a pdf form", "--explain"], home, HASH)
    assert code == 0 and " ".join(err.split()).count(SQLITE_HINT) == 1
    assert run_boost(["config", "set", "advice.sqlite", "false"], home).returncode == 0
    stamps.unlink()
    code, out, err = run_boost_tty(["reindex", "--dense", "--force"], home, HASH)
    assert code == 0 and SQLITE_HINT not in " ".join(err.split())


def test_q_hides_the_hint_and_the_progress(home: Path) -> None:
    code, out, err = run_boost_tty(["reindex", "--dense", "--force", "-q"], home, HASH)
    assert code == 0 and err == "", err


def test_advice_settings_are_listed_and_checked(home: Path) -> None:
    r = run_boost(["config", "list", "--json"], home)
    rows = {x["name"]: x for x in json.loads(r.stdout)}
    assert rows["advice.semantic"]["value"] is True and rows["advice.sqlite"]["default"] is True
    bad = run_boost(["config", "set", "advice.sqlite", "maybe"], home)
    assert bad.returncode == 2
    assert (
        bad.stderr == "boost: error: invalid value 'maybe' for advice.sqlite — give true or false\n"
    )


def test_git_style_config_name_value(home: Path) -> None:
    r = run_boost(["config", "advice.semantic", "false"], home)
    assert (r.returncode, r.stdout) == (0, "advice.semantic = false\n")
    assert run_boost(["config", "advice.semantic"], home).stdout == "false\n"
    assert run_boost(["config", "get", "advice.semantic"], home).stdout == "false\n"
    bad = run_boost(["config", "advise.semantic", "false"], home)
    assert bad.returncode == 2 and bad.stderr == (
        "boost: error: unknown action or setting 'advise.semantic' — did you mean "
        "'advice.semantic'?\n"
    )
