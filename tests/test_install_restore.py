"""`boost restore`: a teammate's committed `.boost/installed.json` brought back, through the
real CLI, at the recorded bytes (checked by digest), never over the user's edits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Dict

import pytest

from tests.helpers import commit_all, make_repo, run_boost, skill

FILES: Dict[str, str] = {
    "skills/pdf-forms/SKILL.md": skill("pdf-forms", "Fill PDF forms."),
    "skills/pdf-forms/reference.md": "# Reference\nField names.\n",
    "rules/python-style.md": "---\ndescription: Python style\n---\nUse ruff.\n",
}


@pytest.fixture
def teammate(tmp_path: Path) -> Dict[str, Path]:
    """A project where one user installed two items, then the registry moved on, and a
    second user (own BOOST_HOME, tapped after the move) with a clone of the project."""
    repo = make_repo(tmp_path / "reg", FILES)
    first, mine = tmp_path / "home1", tmp_path / "project1"
    mine.mkdir()
    assert run_boost(["tap", str(repo), "--name", "ex"], first).returncode == 0
    for ident in ("ex:pdf-forms", "ex:python-style"):
        r = run_boost(["install", ident, "--project", str(mine)], first)
        assert r.returncode == 0, r.stderr
    (repo / "skills/pdf-forms/reference.md").write_text("# Reference\nNEW names.\n")
    (repo / "rules/python-style.md").write_text("---\ndescription: Python style\n---\nNEW.\n")
    commit_all(repo)
    second, theirs = tmp_path / "home2", tmp_path / "project2"
    theirs.mkdir()
    shutil.copytree(mine / ".boost", theirs / ".boost")  # what a git clone brings
    assert run_boost(["tap", str(repo), "--name", "ex"], second).returncode == 0
    return {"mine": mine, "theirs": theirs, "home": second}


def test_restore_brings_back_the_recorded_bytes_from_an_older_commit(teammate):
    theirs, home = teammate["theirs"], teammate["home"]
    before = (theirs / ".boost/installed.json").read_bytes()
    dry = run_boost(["restore", "--dry-run", "--project", str(theirs)], home)
    assert dry.returncode == 0, dry.stderr
    assert "would restore" in dry.stdout and not (theirs / ".claude").exists()
    r = run_boost(["restore", "--project", str(theirs), "--json"], home)
    assert r.returncode == 0, r.stderr
    states = {o["target"]: o["state"] for o in json.loads(r.stdout)}
    assert states == {
        ".claude/skills/pdf-forms": "restored",
        ".cursor/rules/python-style.mdc": "restored",
    }
    # The old bytes (the tap's clone holds only the new ones): fetched at the recorded commit.
    for rel in (".claude/skills/pdf-forms/reference.md", ".cursor/rules/python-style.mdc"):
        assert (theirs / rel).read_bytes() == (teammate["mine"] / rel).read_bytes()
    assert b"NEW" not in (theirs / ".cursor/rules/python-style.mdc").read_bytes()
    assert (theirs / ".boost/installed.json").read_bytes() == before
    again = run_boost(["restore", "--project", str(theirs)], home)
    assert again.returncode == 0 and again.stdout.count("in place") == 2, again.stdout


def test_restore_skips_an_edited_item_and_restores_the_rest(teammate):
    theirs, home = teammate["theirs"], teammate["home"]
    rule = theirs / ".cursor/rules/python-style.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text("my own edit\n")
    r = run_boost(["restore", "--project", str(theirs)], home)
    assert r.returncode == 1
    assert rule.read_text() == "my own edit\n"
    assert (theirs / ".claude/skills/pdf-forms/SKILL.md").is_file()
    assert "edited        .cursor/rules/python-style.mdc" in r.stdout
    assert r.stderr.strip().splitlines()[-1] == (
        "boost: error: 1 of 2 items not restored: .cursor/rules/python-style.mdc — "
        "see the reasons above; give --force to overwrite your edits"
    )
    forced = run_boost(["restore", "--force", "--project", str(theirs)], home)
    assert forced.returncode == 0, forced.stderr
    assert rule.read_bytes() == (teammate["mine"] / ".cursor/rules/python-style.mdc").read_bytes()


def test_restore_refuses_bytes_that_do_not_match_the_digest(teammate):
    theirs, home = teammate["theirs"], teammate["home"]
    book = theirs / ".boost/installed.json"
    data = json.loads(book.read_text())
    rec = data["items"][".cursor/rules/python-style.mdc"]
    rec["files"][".cursor/rules/python-style.mdc"] = "0" * 64
    book.write_text(json.dumps(data))
    r = run_boost(["restore", "--project", str(theirs)], home)
    assert r.returncode == 1
    assert not (theirs / ".cursor/rules/python-style.mdc").exists()
    assert "does not match the manifest's digest" in r.stderr


def test_restore_without_a_manifest_or_a_tap_names_the_fix(tmp_path: Path, teammate):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_boost(["restore", "--project", str(empty)], teammate["home"])
    assert r.returncode == 3
    assert r.stderr.strip() == (
        f"boost: error: no install manifest at {empty.resolve()}/.boost/installed.json — "
        "install items with 'boost install ID' (it writes the manifest), "
        "or run this where one was committed"
    )
    r = run_boost(["restore", "--project", str(teammate["theirs"])], tmp_path / "fresh-home")
    assert r.returncode == 1
    assert "the tap 'ex' is not tapped here — tap it first: boost tap SOURCE --name ex" in r.stderr
