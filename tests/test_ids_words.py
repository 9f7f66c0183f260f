"""Issue 33 item 8: ids safe to paste and to split on white space, everywhere printed.

A registry whose names hold spaces, quotes, ``%`` and a name that repeats (a path id with a
space in the path), tapped and indexed through the real CLI: every id `search --json` and
`--format '{id}'` print is one word, and `show` of that word opens the hit's own file (the
ids bar). Mistyped skill and tap names get a did-you-mean; `uninstall NAME` finds a
command installed as ``NAME.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from tests.helpers import make_repo, run_boost, skill

D = "idword fixture helper"
FILES: Dict[str, str] = {
    "skills/my skill/SKILL.md": skill("My Skill", f"{D} one"),
    "skills/a b/SKILL.md": skill("Code Helper", f"{D} two"),
    "skills/c/SKILL.md": skill("Code Helper", f"{D} three"),
    "skills/pct/SKILL.md": skill("100% done", f"{D} four"),
    "skills/lit/SKILL.md": skill("x%20y", f"{D} five"),
    "skills/sp/SKILL.md": skill("x y", f"{D} six"),
    "skills/q/SKILL.md": skill("it's (fun)", f"{D} seven"),
    "skills/plain/SKILL.md": skill("plain-name", f"{D} eight"),
    "commands/code-explain.md": "---\ndescription: explain code, idword fixture\n---\nExplain.\n",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("idwords")
    home = base / "home"
    for args in (["tap", str(make_repo(base / "src", FILES)), "--name", "t"], ["reindex"]):
        r = run_boost(args, home)
        assert r.returncode == 0, r.stderr
    return home


def test_every_id_is_one_word_and_show_opens_the_hits_file(home: Path) -> None:
    r = run_boost(["search", D, "--json", "-n", "50", "--no-llm"], home)
    hits = json.loads(r.stdout)
    assert len(hits) == 9
    ids = {h["path"]: h["id"] for h in hits}
    assert ids["skills/my skill/SKILL.md"] == "t:My%20Skill"
    assert ids["skills/a b/SKILL.md"] == "t:skills/a%20b/SKILL.md"  # the name repeats
    assert ids["skills/pct/SKILL.md"] == "t:100%25%20done"
    assert ids["skills/lit/SKILL.md"] == "t:x%2520y"  # a literal %20 is not a space
    assert ids["skills/sp/SKILL.md"] == "t:x%20y"
    assert ids["skills/q/SKILL.md"] == "t:it%27s%20%28fun%29"
    assert ids["skills/plain/SKILL.md"] == "t:plain-name"
    assert ids["commands/code-explain.md"] == "t:code-explain"
    for path, ident in ids.items():
        assert ident.split() == [ident]
        shown = run_boost(["show", ident, "--json"], home)
        assert shown.returncode == 0, shown.stderr
        d = json.loads(shown.stdout)
        assert (d["path"], d["id"]) == (path, ident)
    # the README's fzf line: `--format '{id}\t{why}'`, then `boost show {1}`
    fmt = run_boost(["search", D, "-n", "50", "--no-llm", "--format", "{id}\t{why}"], home)
    firsts = [line.split()[0] for line in fmt.stdout.splitlines()]
    assert sorted(firsts) == sorted(ids.values())
    text = run_boost(["show", "t:My%20Skill"], home).stdout
    assert text.splitlines()[0] == "# t:My%20Skill [skill]"


def test_a_name_as_typed_still_resolves(home: Path) -> None:
    for typed, path in (
        ("My Skill", "skills/my skill/SKILL.md"),
        ("100% done", "skills/pct/SKILL.md"),
    ):
        r = run_boost(["show", typed, "--json"], home)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["path"] == path


def test_show_and_untap_say_did_you_mean(home: Path) -> None:
    r = run_boost(["show", "plain-nme"], home)
    assert r.returncode == 3
    assert r.stderr == (
        "boost: error: no skill, rule or workflow named 'plain-nme' — did you mean "
        "'t:plain-name'? (or find one with 'boost search QUERY')\n"
    )
    r = run_boost(["show", "T:plain-name"], home)
    assert r.returncode == 3 and "no tap named 'T' — did you mean 't'?" in r.stderr
    r = run_boost(["untap", "T"], home)
    assert r.returncode == 3
    assert (
        r.stderr == "boost: error: no tap named 'T' — did you mean 't'? ('boost taps' lists them)\n"
    )
    r = run_boost(["show", "zzzzqqq"], home)
    assert "did you mean" not in r.stderr and "find one with 'boost search QUERY'" in r.stderr


def test_uninstall_by_name_finds_a_command_file(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    for ident in ("t:code-explain", "t:plain-name"):
        r = run_boost(["install", ident, "--project", str(project)], home)
        assert r.returncode == 0, r.stderr
    for name in ("code-explain", "plain-name"):
        r = run_boost(["uninstall", name, "--project", str(project)], home)
        assert r.returncode == 0, r.stderr
    assert json.loads((project / ".boost" / "installed.json").read_text())["items"] == {}
