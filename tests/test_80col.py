"""Issue 33 item 9: at 80 columns (a real pseudo-terminal), `boost installed` keeps each id
whole under its row instead of squeezing it into a 10-character column, a search id too
long for its rank line gets a line of its own, whole, and `audit` lines wrap at words, never
mid-word. Piped, each stays one line per row or finding."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

import pytest

from tests.helpers import make_repo, run_boost, run_boost_tty, skill

TAP = "a-rather-long-team-registry-name"
LONG = "configure-the-deployment-pipeline-for-staging"  # tap:LONG is 78 characters
NESTED = "commands/platform/deployment/pipelines/release-candidates/promote-build.md"
FILES = {
    f"skills/{LONG}/SKILL.md": skill(LONG, "colfixture deployment pipeline staging"),
    "skills/short/SKILL.md": skill("short", "colfixture deployment short one"),
    NESTED: "---\ndescription: colfixture promote a build\nallowed-tools: Bash\n---\nPromote.\n",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("col80")
    home = base / "home"
    for args in (["tap", str(make_repo(base / "src", FILES)), "--name", TAP], ["reindex"]):
        r = run_boost(args, home)
        assert r.returncode == 0, r.stderr
    return home


def _fits(text: str) -> List[str]:
    lines = [re.sub("\x1b\\[[0-9;]*m", "", x) for x in text.splitlines()]
    assert all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    return lines


def test_installed_keeps_each_id_whole_under_its_row(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    ids = [f"{TAP}:{LONG}", f"{TAP}:short", f"{TAP}:promote-build"]
    for ident in ids:
        r = run_boost(["install", ident, "--project", str(project)], home)
        assert r.returncode == 0, r.stderr
    code, out, err = run_boost_tty(["installed", "--project", str(project)], home)
    assert code == 0, err
    lines = _fits(out)
    # a path too long for a row with its commit: a block per item, the id whole in it
    assert lines[:3] == ["INSTALLED AS", "    COMMIT  STATE", "    ID"]
    assert len(lines) == 3 + 3 * len(ids)
    assert sorted(x.strip() for x in lines[5::3]) == sorted(ids)
    assert ".claude/skills/configure-the-deployment-pipeline-for-staging" in lines
    r = run_boost(["uninstall", LONG, "--project", str(project)], home)
    assert r.returncode == 0, r.stderr
    code, out, err = run_boost_tty(["installed", "--project", str(project)], home)
    lines = _fits(out)  # the rest fit a row each, the id whole under it
    assert len(lines) == 2 + 2 * 2 and lines[1] == "    ID"
    assert sorted(x.strip() for x in lines[3::2]) == sorted(ids[1:])
    piped = run_boost(["installed", "--project", str(project)], home).stdout.splitlines()
    assert len(piped) == 1 + 2 and all(i in "\n".join(piped) for i in ids[1:])  # a row each


def test_a_long_search_id_gets_a_whole_line(home: Path) -> None:
    code, out, err = run_boost_tty(["search", "colfixture deployment pipeline", "--no-llm"], home)
    assert code == 0, err
    lines = _fits(out)
    assert f"{TAP}:{LONG}" in lines  # whole, from the first column
    i = lines.index(f"{TAP}:{LONG}")
    assert re.match(r" 1\. \[skill\]  match 100%$", lines[i - 1])


def test_audit_lines_wrap_at_words(home: Path) -> None:
    code, out, err = run_boost_tty(["audit"], home)
    assert code == 0, err
    lines = _fits(out)
    piped = run_boost(["audit"], home).stdout.splitlines()
    finding = next(x for x in piped if "promote-build.md" in x)
    assert len(finding) > 80
    words = {w for x in lines for w in x.split()}
    # every word of the finding is whole on some line, bar a path cut after a '/'
    assert all(w in words or "/" in w for w in finding.split()), (finding, lines)
    assert (
        " ".join(x.strip() for x in lines[: len(lines) - 1]).replace("/ ", "/").startswith(finding)
    )
