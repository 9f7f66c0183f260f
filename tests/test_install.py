"""`boost install` / `installed` / `outdated` / `uninstall`: the real CLI against a tapped
local registry, into temporary project and home folders, for every agent layout."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

import pytest

from boost_cli.core.errors import UsageError
from boost_cli.core.install import plan
from boost_cli.core.models import Entry
from tests.helpers import commit_all, make_repo, run_boost, skill

FILES: Dict[str, str] = {
    "skills/pdf-forms/SKILL.md": skill("pdf-forms", "Fill PDF forms."),
    "skills/pdf-forms/reference.md": "# Reference\nField names.\n",
    "skills/pdf-forms/scripts/fill.py": "print('fill')\n",
    "rules/python-style.md": "---\ndescription: Python style\n---\nUse ruff.\n",
    ".cursor/rules/ts-strict.mdc": "---\ndescription: strict TS\n---\nNo any.\n",
    "commands/review-pr.md": "---\ndescription: Review a PR\n---\nReview it.\n",
    "agents/code-reviewer.md": "---\nname: code-reviewer\ndescription: Reviews code\n---\nBe kind.\n",
}


@pytest.fixture
def world(tmp_path: Path) -> Dict[str, Path]:
    repo = make_repo(tmp_path / "reg", FILES)
    home = tmp_path / "bh"
    user_home = tmp_path / "user"
    project = tmp_path / "project"
    user_home.mkdir()
    project.mkdir()
    r = run_boost(["tap", str(repo), "--name", "ex"], home)
    assert r.returncode == 0, r.stderr
    return {"repo": repo, "home": home, "user": user_home, "project": project}


def boost(world: Dict[str, Path], *args: str, user: bool = False):
    scope = ["--user"] if user else ["--project", str(world["project"])]
    return run_boost([*args, *scope], world["home"], env={"HOME": str(world["user"])})


def manifest(base: Path) -> Dict:
    return json.loads((base / ".boost" / "installed.json").read_text())["items"]


LAYOUTS = [
    # id, agent, user, the files it makes (relative to the scope's base)
    (
        "ex:pdf-forms",
        None,
        False,
        [
            ".claude/skills/pdf-forms/SKILL.md",
            ".claude/skills/pdf-forms/reference.md",
            ".claude/skills/pdf-forms/scripts/fill.py",
        ],
    ),
    (
        "ex:pdf-forms",
        None,
        True,
        [".claude/skills/pdf-forms/SKILL.md", ".claude/skills/pdf-forms/scripts/fill.py"],
    ),
    ("ex:pdf-forms", "agents", False, [".agents/skills/pdf-forms/SKILL.md"]),
    ("ex:pdf-forms", "codex", True, [".agents/skills/pdf-forms/reference.md"]),
    ("ex:ts-strict", None, False, [".cursor/rules/ts-strict.mdc"]),
    ("ex:python-style", "cursor", False, [".cursor/rules/python-style.mdc"]),
    ("ex:python-style", "windsurf", False, [".windsurf/rules/python-style.md"]),
    ("ex:python-style", "claude", True, [".claude/rules/python-style.md"]),
    ("ex:review-pr", None, False, [".claude/commands/review-pr.md"]),
    ("ex:review-pr", None, True, [".claude/commands/review-pr.md"]),
    ("ex:code-reviewer", None, False, [".claude/agents/code-reviewer.md"]),
    ("ex:code-reviewer", None, True, [".claude/agents/code-reviewer.md"]),
]


@pytest.mark.parametrize("ident,agent,user,made", LAYOUTS)
def test_install_each_layout_and_uninstall(world, ident, agent, user, made) -> None:
    base = world["user"] if user else world["project"]
    extra = ["--agent", agent] if agent else []
    dry = boost(world, "install", ident, *extra, "--dry-run", user=user)
    assert dry.returncode == 0, dry.stderr
    assert "would install" in dry.stdout and made[0] in dry.stdout
    assert not any((base / m).exists() for m in made), "a dry run wrote"
    r = boost(world, "install", ident, *extra, user=user)
    assert r.returncode == 0, r.stderr
    for m in made:
        assert (base / m).is_file(), m
    src = FILES.get(ident.split(":")[1]) or None
    if ident == "ex:ts-strict":
        assert (base / made[0]).read_text() == FILES[".cursor/rules/ts-strict.mdc"]
    del src
    listed = boost(world, "installed", "--json", user=user)
    rows = json.loads(listed.stdout)
    assert [x["id"] for x in rows] == [ident] and rows[0]["state"] == "current"
    book = (world["home"] / "installed.json") if user else (base / ".boost" / "installed.json")
    rec = next(iter(json.loads(book.read_text())["items"].values()))
    assert rec["tap"] == "ex" and len(rec["commit"]) == 40
    assert all(len(d) == 64 for d in rec["files"].values())
    again = boost(world, "install", ident, *extra, user=user)
    assert again.returncode == 0 and "already installed" in again.stdout
    gone = boost(world, "uninstall", ident, user=user)
    assert gone.returncode == 0, gone.stderr
    assert not any((base / m).exists() for m in made)
    assert json.loads(book.read_text())["items"] == {}


def test_edited_file_is_refused_unless_force(world) -> None:
    p = world["project"]
    assert boost(world, "install", "ex:pdf-forms").returncode == 0
    f = p / ".claude/skills/pdf-forms/SKILL.md"
    f.write_text(f.read_text() + "my notes\n")
    for cmd in (["uninstall", "ex:pdf-forms"], ["install", "ex:pdf-forms", "--upgrade"]):
        r = boost(world, *cmd)
        assert r.returncode == 1 and "you edited it" in r.stderr, r.stderr
        assert "my notes" in f.read_text()
    assert json.loads(boost(world, "installed", "--json").stdout)[0]["state"] == "edited"
    assert boost(world, "uninstall", "ex:pdf-forms", "--force").returncode == 0
    assert not f.exists()


def test_a_file_boost_did_not_write_is_refused(world) -> None:
    p = world["project"]
    mine = p / ".claude/commands/review-pr.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own command\n")
    r = boost(world, "install", "ex:review-pr")
    assert r.returncode == 1 and "did not install" in r.stderr
    assert mine.read_text() == "my own command\n"
    assert boost(world, "install", "ex:review-pr", "--force").returncode == 0
    assert mine.read_text() == FILES["commands/review-pr.md"]


def test_outdated_and_upgrade(world) -> None:
    p = world["project"]
    assert boost(world, "install", "ex:pdf-forms", "ex:review-pr").returncode == 0
    repo = world["repo"]
    (repo / "skills/pdf-forms/reference.md").write_text("# Reference\nNew fields.\n")
    (repo / "skills/pdf-forms/scripts/fill.py").unlink()
    (repo / "skills/pdf-forms/extra.md").write_text("extra\n")
    new = commit_all(repo)
    assert run_boost(["update", "ex"], world["home"]).returncode == 0
    r = boost(world, "outdated", "--json")
    assert r.returncode == 1  # something is outdated: exit 1, as `npm outdated` does
    assert [(x["id"], x["state"], x["tap_commit"]) for x in json.loads(r.stdout)] == [
        ("ex:pdf-forms", "outdated", new)
    ]
    r = boost(world, "outdated")
    assert r.returncode == 1 and "ex:pdf-forms" in r.stdout
    r = boost(world, "install", "ex:pdf-forms")
    assert r.returncode == 2 and "--upgrade" in r.stderr  # not silently replaced
    r = boost(world, "install", "--upgrade")
    assert r.returncode == 0, r.stderr
    skill_dir = p / ".claude/skills/pdf-forms"
    assert (skill_dir / "reference.md").read_text() == "# Reference\nNew fields.\n"
    assert (skill_dir / "extra.md").is_file() and not (skill_dir / "scripts").exists()
    r = boost(world, "outdated", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == []
    assert manifest(p)[".claude/skills/pdf-forms"]["commit"] == new


def test_upgrade_all_carries_on_past_an_edited_item(world) -> None:
    """Issue 33 item 4: an edited item is refused and named, the others are upgraded and
    reported (not silently), and the command exits non-zero."""
    p = world["project"]
    ids = ["ex:pdf-forms", "ex:review-pr", "ex:code-reviewer"]
    assert boost(world, "install", *ids).returncode == 0
    repo = world["repo"]
    (repo / "skills/pdf-forms/reference.md").write_text("# Reference\nNew fields.\n")
    (repo / "commands/review-pr.md").write_text("---\ndescription: Review a PR\n---\nv2\n")
    (repo / "agents/code-reviewer.md").write_text(
        "---\nname: code-reviewer\ndescription: Reviews code\n---\nBe kinder.\n"
    )
    commit_all(repo)
    assert run_boost(["update", "ex"], world["home"]).returncode == 0
    mine = p / ".claude/commands/review-pr.md"
    mine.write_text(mine.read_text() + "my notes\n")  # sorted between the other two
    r = boost(world, "install", "--upgrade")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "installed ex:pdf-forms" in r.stdout and "installed ex:code-reviewer" in r.stdout
    assert "ex:review-pr" not in r.stdout
    assert "you edited it" in r.stderr and "1 refused: ex:review-pr" in r.stderr
    assert "2 of 3 done" in r.stderr
    assert "my notes" in mine.read_text()
    assert (p / ".claude/skills/pdf-forms/reference.md").read_text().endswith("New fields.\n")
    assert "kinder" in (p / ".claude/agents/code-reviewer.md").read_text()
    r = boost(world, "outdated", "--json")
    assert r.returncode == 1 and [x["id"] for x in json.loads(r.stdout)] == ["ex:review-pr"]
    r = boost(world, "install", "--upgrade", "--json")
    assert r.returncode == 1
    assert [(x["id"], x["applied"], "error" in x) for x in json.loads(r.stdout)] == [
        ("ex:review-pr", False, True)
    ]


def test_escape_attempts_are_refused(world, tmp_path: Path) -> None:
    p = world["project"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (p / ".claude").mkdir()
    os.symlink(outside, p / ".claude" / "skills")  # a cloned repo could carry this
    r = boost(world, "install", "ex:pdf-forms")
    assert r.returncode == 2 and "symlink" in r.stderr, r.stderr
    assert list(outside.iterdir()) == []
    for bad in ("../evil", "a/b", ".hidden", ""):
        r = boost(world, "install", "ex:review-pr", "--name", bad)
        assert r.returncode == 2, (bad, r.stderr)
    assert not (tmp_path / "evil.md").exists()
    # A symlinked file in the user's skill folder is not written through.
    u = world["user"]
    target = tmp_path / "victim.md"
    target.write_text("victim\n")
    d = u / ".claude/skills/pdf-forms"
    d.mkdir(parents=True)
    os.symlink(target, d / "SKILL.md")
    r = boost(world, "install", "ex:pdf-forms", "--user", "--force")
    assert r.returncode == 2 and "symlink" in r.stderr, r.stderr
    assert target.read_text() == "victim\n"


def test_agent_without_a_place_for_the_kind(world) -> None:
    r = boost(world, "install", "ex:review-pr", "--agent", "gemini")
    assert r.returncode == 2 and "gemini has no place for a command" in r.stderr
    r = boost(world, "install", "ex:ts-strict", "--agent", "cursor", user=True)
    assert r.returncode == 2 and "settings" in r.stderr


def _entry(path: str, kind: str, name: str = "x") -> Entry:
    return Entry(name, kind, "", "t", path.rpartition("/")[0], path)


def test_plan_pure_decisions() -> None:
    tgt = plan.target(_entry("s/x/SKILL.md", "skill"), None, False)
    assert tgt.key == ".claude/skills/x"
    files = {"SKILL.md": "n1", "a.md": "n2"}
    d1, d2 = ".claude/skills/x/SKILL.md", ".claude/skills/x/a.md"
    fresh = plan.plan(tgt, files, {d1: None, d2: None}, None)
    assert [a.action for a in fresh.actions] == ["write", "write"]
    # boost wrote o1 before; the user has not touched it: update. a.md holds the new bytes.
    up = plan.plan(tgt, files, {d1: "o1", d2: "n2"}, {d1: "o1", d2: "n2"})
    assert [a.action for a in up.actions] == ["update", "keep"]
    edited = plan.plan(tgt, files, {d1: "mine", d2: None}, {d1: "o1"})
    assert [a.action for a in edited.actions] == ["conflict", "write"]
    assert plan.plan(tgt, files, {d1: "mine"}, {d1: "o1"}, force=True).conflicts == []
    link = plan.plan(tgt, files, {d1: "!"}, {d1: "!"})
    assert link.conflicts  # a symlink is never "as boost wrote it"
    old = ".claude/skills/x/old.md"
    gone = plan.plan(tgt, files, {old: "o3"}, {old: "o3"})
    assert ("remove", old) in [(a.action, a.dest) for a in gone.actions]
    assert plan.install_kind(_entry("plugins/p/agents/r.md", "workflow")) == "agent"
    assert plan.install_kind(_entry("agents/commands/r.md", "workflow")) == "command"
    assert plan.safe_name("git:commit helper") == "git-commit-helper"
    with pytest.raises(UsageError):
        plan.safe_name("::")
    with pytest.raises(UsageError):
        plan.check_rel("../x")


def test_ids_of_a_repeated_name_resolve_to_their_own_item(tmp_path: Path) -> None:
    """Two items named 'commit' in one tap (a command and a subagent) and a skill folder
    named 'commit': search prints tap:path for them, and show resolves each id."""
    files = {
        "commands/commit.md": "---\ndescription: commit changes with a good message\n---\nCommit.\n",
        "agents/commit.md": "---\nname: commit\ndescription: an agent that writes commit messages\n---\nWrite.\n",
        "commit/SKILL.md": skill("commit-skill", "commit message conventions"),
        "skills/unique/SKILL.md": skill("unique", "commit hooks, unique name"),
    }
    repo = make_repo(tmp_path / "reg", files)
    home = tmp_path / "bh"
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    for engine in ([], ["reindex"]):
        if engine:
            assert run_boost(engine, home).returncode == 0
        r = run_boost(["search", "commit", "--json", "--no-llm", "--fields", "id,path"], home)
        hits = json.loads(r.stdout)
        ids = [h["id"] for h in hits]
        assert len(ids) == len(set(ids)) == 4, ids
        assert "ex:commands/commit.md" in ids and "ex:agents/commit.md" in ids
        assert "ex:unique" in ids  # a name used once keeps tap:name
        for h in hits:
            s = run_boost(["show", h["id"], "--json"], home)
            assert s.returncode == 0 and json.loads(s.stdout)["path"] == h["path"], s.stderr
            assert json.loads(s.stdout)["id"] == h["id"]
    amb = run_boost(["show", "commit"], home)
    assert amb.returncode == 3
    assert "ex:commands/commit.md" in amb.stderr and "ex:agents/commit.md" in amb.stderr
