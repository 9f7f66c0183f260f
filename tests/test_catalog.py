"""The catalog scan: kinds, names, descriptions, and a malicious registry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from boost_cli.core import catalog
from tests.helpers import skill


@pytest.mark.parametrize(
    "rel,kind",
    [
        ("skills/pdf/SKILL.md", "skill"),
        ("SKILL.md", "skill"),
        (".opencode/commands/skill.md", "workflow"),
        ("docs/skill.md", None),
        (".cursorrules", "rule"),
        (".windsurfrules", "rule"),
        (".clinerules", "rule"),
        (".clinerules/testing.md", "rule"),
        ("rules/python.mdc", "rule"),
        ("anything/react.mdc", "rule"),
        (".cursor/rules/style.md", "rule"),
        ("rules/testing.md", "rule"),
        ("commands/review.md", "workflow"),
        ("agents/debugger.md", "workflow"),
        ("plugins/x/commands/deploy.md", "workflow"),
        ("plugins/x/agents/sub/reviewer.md", "workflow"),
        ("commands/rules/a.md", "rule"),
        ("README.md", None),
        ("commands/README.md", None),
        ("docs/guide.md", None),
        ("commands/script.py", None),
    ],
)
def test_classify(rel: str, kind: str) -> None:
    assert catalog.classify(rel) == kind


def test_files_inside_a_skill_folder_are_not_entries() -> None:
    dirs = {"skills/pdf"}
    assert catalog.classify("skills/pdf/reference.md", dirs) is None
    assert catalog.classify("skills/pdf/rules/x.md", dirs) is None
    assert catalog.classify("skills/pdf/agents/a.md", dirs) is None
    assert catalog.classify("skills/pdf/nested/SKILL.md", dirs) == "skill"
    assert catalog.classify("skills/pdfx/agents/a.md", dirs) == "workflow"


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def test_names_and_descriptions(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    _write(root, "skills/pdf/SKILL.md", skill("pdf-tools", "Fill PDF forms"))
    _write(root, "skills/nameless/SKILL.md", "---\ndescription: x\n---\nbody\n")
    _write(
        root,
        "skills/bare/SKILL.md",
        "# Bare\n\nFirst **paragraph** here.\nStill first.\n\nSecond.\n",
    )
    _write(root, "commands/review.md", "---\ndescription: Review a PR\n---\nDo it.\n")
    _write(root, ".cursorrules", "Always write tests.\n")
    res = catalog.scan_tap("t", root)
    by_path = {e.path: e for e in res.entries}
    assert by_path["skills/pdf/SKILL.md"].name == "pdf-tools"
    assert by_path["skills/pdf/SKILL.md"].rel_dir == "skills/pdf"
    assert by_path["skills/nameless/SKILL.md"].name == "nameless"
    assert by_path["skills/bare/SKILL.md"].description == "First paragraph here. Still first."
    assert by_path["commands/review.md"].name == "review"
    assert by_path["commands/review.md"].kind == "workflow"
    assert by_path[".cursorrules"].name == "cursorrules"
    assert res.counts() == {"skill": 3, "rule": 1, "workflow": 1}


def test_malicious_registry(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE KEY MATERIAL\n")
    root = tmp_path / "evil"
    _write(root, "skills/ok/SKILL.md", skill("ok", "a fine skill"))
    # a symlink to a file outside the tap, named like a skill and a rule
    (root / "skills" / "leak").mkdir()
    os.symlink(outside / "id_rsa", root / "skills" / "leak" / "SKILL.md")
    os.symlink(outside / "id_rsa", root / "stolen.mdc")
    # a symlinked folder pointing outside, and a loop
    os.symlink(outside, root / "commands")
    os.symlink(root, root / "skills" / "loop")
    # a 5 MB rule, a binary rule, invalid UTF-8, broken frontmatter, a hostile name
    _write(root, "rules/huge.md", "x" * (5 * 1024 * 1024))
    (root / "rules" / "binary.md").write_bytes(b"\x00\x01\x02binary" * 100)
    (root / "rules" / "latin.md").write_bytes(b"---\ndescription: caf\xe9\n---\nna\xefve text\n")
    _write(
        root,
        "skills/broken/SKILL.md",
        '---\nname: "unterminated\ndescription: [a, b\n---\nThe body survives.\n',
    )
    _write(root, "skills/evil/SKILL.md", skill("../../etc", "path traversal attempt"))
    # an in-tap symlink to a real file is allowed
    os.symlink(root / "skills" / "ok" / "SKILL.md", root / "rules" / "alias.md")

    res = catalog.scan_tap("evil", root)
    paths = {e.path for e in res.entries}
    assert "skills/leak/SKILL.md" not in paths
    assert "stolen.mdc" not in paths
    assert not any(p.startswith("commands/") for p in paths)
    assert not any("loop" in p for p in paths)
    assert "rules/huge.md" not in paths and "rules/binary.md" not in paths
    assert "rules/latin.md" in paths and "rules/alias.md" in paths
    broken = next(e for e in res.entries if e.path == "skills/broken/SKILL.md")
    assert broken.name == "broken"  # falls back to the folder name
    assert any("skills/broken/SKILL.md: frontmatter" in w for w in res.warnings)
    assert any("huge.md" in w and "1 MB" in w for w in res.warnings)
    evil = next(e for e in res.entries if e.path == "skills/evil/SKILL.md")
    assert evil.name == "../../etc"  # only a label: never used as a path
    for e in res.entries:
        text = (root / e.path).read_text(errors="replace")
        assert "PRIVATE KEY" not in text
        assert os.path.realpath(root / e.path).startswith(os.path.realpath(root))


def test_scan_cache_keyed_by_commit(tmp_path: Path, boost_home: Path) -> None:
    root = tmp_path / "reg"
    _write(root, "skills/a/SKILL.md", skill("a", "first"))
    first = catalog.load_tap("t", root, "c1")
    _write(root, "skills/b/SKILL.md", skill("b", "second"))
    assert catalog.load_tap("t", root, "c1") == first  # cached
    assert len(catalog.load_tap("t", root, "c2").entries) == 2
    (boost_home / "cache" / "catalog" / "t.json").write_text("{broken")
    assert len(catalog.load_tap("t", root, "c2").entries) == 2
