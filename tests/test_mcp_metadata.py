"""What an MCP client sees before it calls anything (titles, annotations, a description for
every property, declared defaults), and boost_get_skill reading the files of a skill's folder
without ever leaving it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from boost_cli.core import registry
from tests.helpers import make_repo, skill
from tests.test_mcp_tools import Session, text_of


@pytest.fixture
def session() -> Session:
    return Session()


def _properties(schema: Dict[str, Any], path: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Every property of ``schema``, nested objects and array items included."""
    for name, prop in (schema.get("properties") or {}).items():
        yield f"{path}.{name}", prop
        yield from _properties(prop, f"{path}.{name}")
        items = prop.get("items")
        if isinstance(items, dict):
            yield from _properties(items, f"{path}.{name}[]")


def test_every_tool_has_a_title_annotations_and_described_properties(session: Session) -> None:
    tools: List[Dict[str, Any]] = session.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == [
        "boost_search",
        "boost_get_skill",
        "boost_list_taps",
        "boost_discover_github",
        "boost_install",
    ]
    for tool in tools:
        assert tool["title"] and tool["description"]
        hints = tool["annotations"]
        # Every tool but boost_install only reads; boost_install writes, never destroys.
        assert hints["readOnlyHint"] is (tool["name"] != "boost_install")
        assert hints["destructiveHint"] is False and hints["idempotentHint"] is True
        for which in ("inputSchema", "outputSchema"):
            for path, prop in _properties(tool.get(which, {}), f"{tool['name']}.{which}"):
                assert prop.get("description"), f"{path} has no description"
    world = {t["name"]: t["annotations"]["openWorldHint"] for t in tools}
    assert world == {
        "boost_search": False,
        "boost_get_skill": False,
        "boost_list_taps": False,
        "boost_discover_github": True,
        "boost_install": False,
    }


def test_defaults_are_declared_and_kind_is_an_enum(session: Session) -> None:
    tools = {t["name"]: t for t in session.request("tools/list")["result"]["tools"]}
    search = tools["boost_search"]
    assert search["inputSchema"]["properties"]["limit"]["default"] == 8
    assert search["inputSchema"]["properties"]["rerank"]["default"] is False
    hit = search["outputSchema"]["properties"]["results"]["items"]
    assert hit["properties"]["kind"]["enum"] == ["skill", "rule", "workflow"]
    discover = tools["boost_discover_github"]["inputSchema"]["properties"]
    assert discover["limit"]["default"] == 10


# --------------------------------------------------------------------------- a skill's folder


@pytest.fixture
def pptx(tmp_path: Path) -> Path:
    """A registry whose pptx skill links to sibling files, plus traps around it."""
    repo = make_repo(
        tmp_path / "reg",
        {
            "skills/pptx/SKILL.md": skill(
                "pptx", "Edit PowerPoint decks.", "Read editing.md; run scripts/thumbnail.py."
            ),
            "skills/pptx/editing.md": "# Editing\nUnpack the deck, edit the XML, pack it.\n",
            "skills/pptx/scripts/thumbnail.py": "print('thumbnails')\n",
            "skills/other/SKILL.md": skill("other", "Another skill.", "Secret sibling."),
            "rules/style.md": "# Style\nUse tabs.\n",
            "rules/other.md": "# Other rule\n",
            "secret.txt": "outside the skill\n",
        },
    )
    registry.add(str(repo), name="reg")
    clone = registry.get_tap("reg").root
    folder = clone / "skills" / "pptx"
    os.symlink(clone / "secret.txt", folder / "leak.txt")
    os.symlink(clone / "skills" / "other", folder / "linked-dir")
    os.symlink(folder / "editing.md", folder / "alias.md")
    (folder / "blob.bin").write_bytes(b"\x00\x01binary")
    return clone


def test_get_skill_lists_the_folder(pptx: Path, session: Session) -> None:
    result = session.call("boost_get_skill", {"name": "reg:pptx"})
    text = text_of(result)
    assert result["isError"] is False and "Read editing.md" in text
    listed = text.split("file PATH):\n", 1)[1].splitlines()
    # symlinks out of the folder and symlinked folders are not listed; one inside it is
    assert listed == [
        "- SKILL.md",
        "- alias.md",
        "- blob.bin",
        "- editing.md",
        "- scripts/thumbnail.py",
    ]


def test_get_skill_reads_a_sibling_file(pptx: Path, session: Session) -> None:
    result = session.call("boost_get_skill", {"name": "reg:pptx", "file": "editing.md"})
    assert result["isError"] is False
    text = text_of(result)
    assert text.startswith("# reg:pptx [skill] — file: ") and text.endswith("pack it.\n")
    nested = session.call("boost_get_skill", {"name": "reg:pptx", "file": "scripts/thumbnail.py"})
    assert "print('thumbnails')" in text_of(nested)
    inside = session.call("boost_get_skill", {"name": "reg:pptx", "file": "alias.md"})
    assert "Unpack the deck" in text_of(inside)


@pytest.mark.parametrize(
    "file, why",
    [
        ("../other/SKILL.md", "it is not a plain path inside the folder"),
        ("scripts/../../other/SKILL.md", "it is not a plain path inside the folder"),
        ("/etc/passwd", "it is not a plain path inside the folder"),
        (".git/config", "it is not a plain path inside the folder"),
        ("leak.txt", "it is a symlink out of the folder"),
        ("linked-dir/SKILL.md", "it goes through a symlinked folder"),
        ("blob.bin", "a binary file"),
    ],
)
def test_get_skill_refuses_paths_out_of_the_folder(
    pptx: Path, session: Session, file: str, why: str
) -> None:
    result = session.call("boost_get_skill", {"name": "reg:pptx", "file": file})
    assert result["isError"] is True
    assert text_of(result).startswith(f"refusing file {file!r}: {why} — ")
    assert "outside the skill" not in text_of(result) and "Secret" not in text_of(result)


def test_get_skill_missing_file_and_rules(pptx: Path, session: Session) -> None:
    result = session.call("boost_get_skill", {"name": "reg:pptx", "file": "nope.md"})
    assert result["isError"] is True and "no file 'nope.md' in the folder of reg:pptx" in text_of(
        result
    )
    rule = session.call("boost_get_skill", {"name": "reg:style"})
    assert "Files in this skill's folder" not in text_of(rule)  # a rule's folder is other rules
    refused = session.call("boost_get_skill", {"name": "reg:style", "file": "other.md"})
    assert refused["isError"] is True and "a rule has no other files to read" in text_of(refused)
    own = session.call("boost_get_skill", {"name": "reg:style", "file": "style.md"})
    assert "Use tabs." in text_of(own)
