"""80 columns: long ids stay whole on the rank's line, `taps` puts a long source under its
row instead of squeezing it, local sources are stored absolute, `--format` for pipelines,
and the no-match hint goes to stderr."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_repo, run_boost, skill

LONG = "a-very-long-skill-name-that-fills-most-of-an-eighty-column-terminal-line"


def test_long_id_stays_whole_and_the_rank_keeps_its_line(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "reg",
        {f"skills/{LONG}/SKILL.md": skill(LONG, "Review pull requests with care.")},
    )
    home = tmp_path / "home"
    assert (
        run_boost(["tap", str(repo), "--name", "some-owner__some-registry"], home).returncode == 0
    )
    r = run_boost(["search", "review pull requests", "--no-llm"], home, env={"COLUMNS": "80"})
    lines = r.stdout.splitlines()
    # the id is cut after its ':' (never inside a word), the kind and match under it
    assert lines[0] == " 1. some-owner__some-registry:"
    assert lines[1] == f"    {LONG}"
    assert lines[2].startswith("    [skill]  match 100%")
    assert all(len(x) <= 80 for x in lines)


def test_taps_at_80_columns_keep_the_source_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    deep = tmp_path / "a-rather-deep" / "folder-of-registries" / "Microck__ordinary-claude-skills"
    make_repo(deep, {"skills/x/SKILL.md": skill("x", "x")})
    assert run_boost(["tap", str(deep)], home).returncode == 0
    out = run_boost(["taps"], home, env={"COLUMNS": "80"}).stdout.splitlines()
    assert all(len(line) <= 80 or line.strip() == str(deep) for line in out), out
    assert out[2].strip() == str(deep)  # the source under its row, whole
    assert len(out) == 3


def test_a_relative_local_source_is_stored_absolute(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.helpers import ROOT

    repo = make_repo(tmp_path / "reg", {"skills/x/SKILL.md": skill("x", "x")})
    home = tmp_path / "home"
    env = {"BOOST_HOME": str(home), "PYTHONPATH": str(ROOT)}
    import os

    subprocess.run(
        [sys.executable, "-m", "boost_cli", "tap", "./reg"],
        cwd=tmp_path,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
    )
    taps = json.loads(run_boost(["taps", "--json"], home).stdout)
    assert taps[0]["source"] == str(repo.resolve())


def test_format_template_and_no_match_hint(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "reg",
        {
            "skills/pr/SKILL.md": skill("pr", "Review pull requests.\tTabbed"),
            "skills/other/SKILL.md": skill("other", "Nothing related."),
        },
    )
    home = tmp_path / "home"
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    r = run_boost(
        ["search", "review pull requests", "--no-llm", "--format", r"{id}\t{description}"], home
    )
    assert r.stdout.splitlines()[0] == "ex:pr\tReview pull requests. Tabbed"
    assert all(line.count("\t") == 1 for line in r.stdout.splitlines())
    bad = run_boost(["search", "x", "--format", "{nope}"], home)
    assert bad.returncode == 2 and "unknown field {nope}" in bad.stderr
    none = run_boost(["search", "zzqxv", "--no-llm"], home)
    assert none.stdout == "" and "No matches for" in none.stderr


def test_fold_cuts_long_ids_only_after_separators() -> None:
    from boost_cli.commands.render import fold, wrap

    idt = "davila7__claude-code-templates:cli-tool/components/skills/sentry/commit/SKILL.md"
    lines = fold(" 4. " + idt, 60, "    ")
    assert lines == [
        " 4. davila7__claude-code-templates:cli-tool/components/",
        "    skills/sentry/commit/SKILL.md",
    ]
    assert "".join(x.strip() for x in lines) == "4. " + idt
    assert fold("x" * 90, 80, "  ") == ["x" * 90]  # nothing to cut at: whole
    assert all(len(x) <= 40 for x in wrap("see " + idt, "  ", 40))


def test_show_and_install_complete_entry_ids(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "reg",
        {
            "skills/pdf-forms/SKILL.md": skill("pdf-forms", "x"),
            "skills/other/SKILL.md": skill("other", "y"),
        },
    )
    home = tmp_path / "home"
    assert run_boost(["tap", str(repo), "--name", "ex"], home).returncode == 0
    for cmd in ("show", "install"):
        env = {"BOOST_COMPLETE": "1", "COMP_WORDS": f"boost {cmd} ex:p", "COMP_CWORD": "2"}
        assert run_boost([], home, env=env).stdout.split() == ["ex:pdf-forms"]
