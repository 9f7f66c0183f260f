"""Issue 33 item 5: every host with a documented folder (docs/install.md, "Where each agent
loads items"), skills included, and a rule's "where it applies" in each host's own
frontmatter keys: through the real CLI, plus the pure conversion over literals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from boost_cli.core.install import rulefm
from tests.helpers import make_repo, run_boost, skill

CURSOR_RULE = (
    "---\ndescription: React components\nglobs: src/**/*.tsx,src/**/*.{ts,js}\n"
    "alwaysApply: false\n---\nUse function components.\n"
)
FILES: Dict[str, str] = {
    "skills/pdf-forms/SKILL.md": skill("pdf-forms", "Fill PDF forms."),
    "skills/pdf-forms/reference.md": "# Reference\n",
    "rules/react-style.mdc": CURSOR_RULE,
    "rules/python-style.md": "---\ndescription: Python style\n---\nUse ruff.\n",
    "commands/review-pr.md": "---\ndescription: Review a PR\n---\nReview it.\n",
    "agents/code-reviewer.md": "---\nname: code-reviewer\ndescription: Reviews\n---\nBe kind.\n",
}


@pytest.fixture
def world(tmp_path: Path) -> Dict[str, Path]:
    repo = make_repo(tmp_path / "reg", FILES)
    home, user, project = tmp_path / "bh", tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    return {"home": home, "user": user, "project": project}


def boost(world: Dict[str, Path], *args: str, user: bool = False):
    scope = ["--user"] if user else ["--project", str(world["project"])]
    return run_boost([*args, *scope], world["home"], env={"HOME": str(world["user"])})


NEW_LAYOUTS = [
    ("ex:pdf-forms", "gemini", False, ".gemini/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "gemini-cli", True, ".gemini/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "copilot", False, ".github/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "vscode", True, ".copilot/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "cursor", False, ".cursor/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "cursor", True, ".cursor/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "windsurf", False, ".windsurf/skills/pdf-forms/SKILL.md"),
    ("ex:pdf-forms", "windsurf", True, ".codeium/windsurf/skills/pdf-forms/SKILL.md"),
    ("ex:python-style", "vscode", False, ".github/instructions/python-style.instructions.md"),
    ("ex:review-pr", "copilot", False, ".github/prompts/review-pr.prompt.md"),
    ("ex:code-reviewer", "copilot", False, ".github/agents/code-reviewer.agent.md"),
    ("ex:review-pr", "cursor", False, ".cursor/commands/review-pr.md"),
    ("ex:review-pr", "windsurf", False, ".windsurf/workflows/review-pr.md"),
    ("ex:python-style", "cline", False, ".clinerules/python-style.md"),
]


@pytest.mark.parametrize("ident,agent,user,made", NEW_LAYOUTS)
def test_every_documented_folder(world, ident, agent, user, made) -> None:
    r = boost(world, "install", ident, "--agent", agent, user=user)
    assert r.returncode == 0, r.stderr
    base = world["user"] if user else world["project"]
    assert (base / made).is_file()
    listed = json.loads(boost(world, "installed", "--json", user=user).stdout)
    assert [x["state"] for x in listed] == ["current"]
    gone = boost(world, "uninstall", ident, user=user)
    assert gone.returncode == 0, gone.stderr
    assert not (base / made).exists()


def test_a_cursor_rule_for_claude_uses_claude_keys_and_stays_current(world) -> None:
    r = boost(world, "install", "ex:react-style", "--agent", "claude")
    assert r.returncode == 0, r.stderr
    text = (world["project"] / ".claude/rules/react-style.md").read_text()
    assert text == (
        "---\ndescription: React components\npaths:\n"
        '  - "src/**/*.tsx"\n  - "src/**/*.{ts,js}"\n---\nUse function components.\n'
    )
    listed = json.loads(boost(world, "installed", "--json").stdout)
    assert [x["state"] for x in listed] == ["current"]  # the converted bytes are "as boost wrote"
    r = boost(world, "install", "ex:react-style", "--agent", "vscode")
    assert r.returncode == 0, r.stderr
    text = (world["project"] / ".github/instructions/react-style.instructions.md").read_text()
    assert 'applyTo: "src/**/*.tsx,src/**/*.{ts,js}"' in text and "globs" not in text
    # A teammate's restore converts the same way, so the digests match.
    for rel in (".claude/rules/react-style.md", ".github/instructions/react-style.instructions.md"):
        (world["project"] / rel).unlink()
    r = boost(world, "restore")
    assert r.returncode == 0 and r.stdout.count("restored") == 2, r.stdout + r.stderr


def test_agent_choices_and_refusals_name_the_fix(world) -> None:
    r = boost(world, "install", "ex:python-style", "--agent", "copilot", user=True)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "boost: error: copilot keeps user-wide rules in its settings, not in files — "
        "install into the project (leave out --user), or use --agent claude"
    )
    r = boost(world, "install", "ex:pdf-forms", "--agent", "cline")
    assert r.returncode == 2 and "cline has no place for a skill" in r.stderr
    assert "--agent gemini" in r.stderr and "--agent copilot" in r.stderr


def test_rulefm_literals() -> None:
    cursor_always = b"---\ndescription: d\nalwaysApply: true\n---\nBody\n"
    assert rulefm.convert(cursor_always, "claude") == b"---\ndescription: d\n---\nBody\n"
    assert rulefm.convert(cursor_always, "copilot").startswith(
        b'---\ndescription: d\napplyTo: "**"'
    )
    assert b"trigger: always_on" in rulefm.convert(cursor_always, "windsurf")
    claude = b'---\npaths:\n  - "a/**"\n  - "b/*.py"\n---\nX\n'
    assert (
        rulefm.convert(claude, "cursor") == b"---\nglobs: a/**,b/*.py\nalwaysApply: false\n---\nX\n"
    )
    assert rulefm.convert(claude, "claude") == claude
    only = b"---\nglobs: *.ts\n---\nY\n"
    assert rulefm.convert(only, "claude") == b'---\npaths:\n  - "*.ts"\n---\nY\n'
    for untouched in (
        b"no frontmatter\n",
        b"---\ndescription: d\n---\nZ\n",
        b"\xff\xfe",
        b"---\r\nglobs: a\r\n---\r\n",
    ):
        assert rulefm.convert(untouched, "claude") == untouched
    windsurf = b"---\ntrigger: glob\nglobs: **/*.go\n---\nGo\n"
    assert rulefm.convert(windsurf, "claude") == b'---\npaths:\n  - "**/*.go"\n---\nGo\n'
