"""Checks on the data boost ships: the catalog of real registries and the example registry.

Both are hand-maintained files, so these tests guard their shape rather than code:
the catalog must stay loadable, consistent and deterministic, and the example registry
must keep exercising every layout and frontmatter form the scanner recognises.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from boost_cli.core.models import KINDS

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "boost_cli" / "data" / "registries.json"
EXAMPLE = ROOT / "examples" / "registry"

REQUIRED_KEYS = {"name", "url", "type", "category", "est_items", "index_only"}
OPTIONAL_KEYS = {"default", "description"}
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")

# Layout globs the scanner recognises, by kind (relative to a tap root).
LAYOUT: Dict[str, Tuple[str, ...]] = {
    "skill": ("skills/*/SKILL.md",),
    "rule": (".cursor/rules/*.mdc", "rules/*.md"),
    "workflow": ("commands/*.md", "agents/*.md"),
}
# Frontmatter keys each layout's tool expects.
REQUIRED_FRONTMATTER: Dict[str, Tuple[str, ...]] = {
    "skills": ("name", "description"),
    ".cursor": ("description", "globs", "alwaysApply"),
    "rules": ("description",),
    "commands": ("description", "argument-hint", "allowed-tools"),
    "agents": ("name", "description", "tools", "model"),
}

_KEY_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*)$")


# --- helpers -------------------------------------------------------------------------


def load_catalog() -> Dict[str, Any]:
    with open(CATALOG, encoding="utf-8") as fh:
        data = json.load(fh)
    assert isinstance(data, dict)
    return data


def split_frontmatter(text: str) -> Tuple[List[str], str]:
    """Return (frontmatter lines, body) for a file that opens with a ``---`` block."""
    lines = text.split("\n")
    assert lines[0] == "---", "file must open with a '---' frontmatter fence"
    end = lines.index("---", 1)
    return lines[1:end], "\n".join(lines[end + 1 :])


def top_level_keys(fm_lines: List[str]) -> Dict[str, str]:
    """Top-level ``key: value`` pairs; a block scalar (``>``/``|``) gets its folded text.

    Deliberately tiny: enough to check the example files, not a YAML parser.
    """
    keys: Dict[str, str] = {}
    current = ""
    for line in fm_lines:
        m = _KEY_LINE.match(line)
        if m:
            current = m.group(1)
            keys[current] = m.group(2).strip()
        elif current and line.startswith((" ", "\t")) and keys[current][:1] in (">", "|"):
            keys[current] = (keys[current] + " " + line.strip()).strip()
    return keys


def description_text(raw: str) -> str:
    """The description's words: block indicators and surrounding quotes removed."""
    text = raw
    if text[:1] in (">", "|"):
        text = text.lstrip(">|-+").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
    return text.strip()


def example_items() -> Dict[str, List[Path]]:
    return {
        kind: sorted(p for pattern in patterns for p in EXAMPLE.glob(pattern))
        for kind, patterns in LAYOUT.items()
    }


def all_example_items() -> List[Path]:
    return [p for paths in example_items().values() for p in paths]


def item_name(path: Path, keys: Dict[str, str]) -> str:
    """A skill is named by its folder, other items by their file stem; ``name:`` wins."""
    fallback = path.parent.name if path.name == "SKILL.md" else path.stem
    return description_text(keys.get("name", "")) or fallback


# --- the catalog ---------------------------------------------------------------------


def test_catalog_top_level_shape() -> None:
    data = load_catalog()
    assert set(data) == {"version", "about", "registries"}
    assert data["version"] == 1
    assert isinstance(data["about"], str) and data["about"].strip()
    assert isinstance(data["registries"], list) and len(data["registries"]) > 100


def test_every_catalog_registry_is_well_formed() -> None:
    problems: List[str] = []
    for reg in load_catalog()["registries"]:
        name = reg.get("name", "?")
        missing = REQUIRED_KEYS - set(reg)
        extra = set(reg) - REQUIRED_KEYS - OPTIONAL_KEYS
        if missing or extra:
            problems.append(f"{name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
            continue
        if not REPO_NAME.match(name):
            problems.append(f"{name}: name is not owner/repo")
        if reg["url"] != f"https://github.com/{name}":
            problems.append(f"{name}: url {reg['url']!r} does not match the name")
        if reg["type"] not in KINDS:
            problems.append(f"{name}: type {reg['type']!r} not in {KINDS}")
        if not isinstance(reg["category"], str) or not reg["category"]:
            problems.append(f"{name}: empty category")
        est = reg["est_items"]
        if isinstance(est, bool) or not isinstance(est, int) or est < 0:
            problems.append(f"{name}: est_items {est!r} is not a non-negative int")
        if not isinstance(reg["index_only"], bool):
            problems.append(f"{name}: index_only {reg['index_only']!r} is not a boolean")
        if "default" in reg and not isinstance(reg["default"], bool):
            problems.append(f"{name}: default {reg['default']!r} is not a boolean")
        if "description" in reg and "\n" in str(reg["description"]):
            problems.append(f"{name}: description spans several lines")
    assert problems == []


def test_catalog_names_are_unique_ignoring_case() -> None:
    names = [r["name"].lower() for r in load_catalog()["registries"]]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert dupes == []


def test_catalog_is_sorted_and_canonically_formatted() -> None:
    data = load_catalog()
    names = [r["name"] for r in data["registries"]]
    assert names == sorted(names, key=lambda n: (n.lower(), n))
    canonical = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    assert CATALOG.read_text(encoding="utf-8") == canonical


def test_default_set_is_small_tappable_and_spans_all_kinds() -> None:
    defaults = [r for r in load_catalog()["registries"] if r.get("default") is True]
    assert 4 <= len(defaults) <= 6
    assert [r["name"] for r in defaults if r["index_only"]] == []
    assert {r["type"] for r in defaults} == set(KINDS)
    assert "anthropics/skills" in {r["name"] for r in defaults}


# --- the example registry ------------------------------------------------------------


def test_example_registry_has_enough_items_of_every_kind() -> None:
    items = example_items()
    assert sum(len(paths) for paths in items.values()) >= 20
    for kind, paths in items.items():
        assert len(paths) >= 3, f"only {len(paths)} {kind} items"


@pytest.mark.parametrize(
    "path", all_example_items(), ids=lambda p: p.relative_to(EXAMPLE).as_posix()
)
def test_example_item_has_frontmatter_and_a_substantial_body(path: Path) -> None:
    fm_lines, body = split_frontmatter(path.read_text(encoding="utf-8"))
    keys = top_level_keys(fm_lines)
    layout = path.relative_to(EXAMPLE).parts[0]
    missing = [k for k in REQUIRED_FRONTMATTER[layout] if k not in keys]
    assert missing == []
    assert len(description_text(keys["description"])) >= 40
    if path.name == "SKILL.md":
        assert keys["name"] == path.parent.name
    elif layout == "agents":
        assert keys["name"] == path.stem
    body_lines = body.strip("\n").split("\n")
    assert 40 <= len(body_lines) <= 150
    assert re.search(r"^#{1,3} ", body, re.MULTILINE), "body needs headings"


def test_example_item_names_are_unique() -> None:
    names = []
    for path in all_example_items():
        fm_lines, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        names.append(item_name(path, top_level_keys(fm_lines)))
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_example_registry_covers_the_frontmatter_forms_the_scanner_handles() -> None:
    raw_descriptions = []
    frontmatters = []
    for path in example_items()["skill"]:
        fm_lines, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        raw_descriptions.append(top_level_keys(fm_lines)["description"])
        frontmatters.append("\n".join(fm_lines))
    assert any(d.startswith(">") for d in raw_descriptions), "a folded > description"
    assert any(d.startswith("|") for d in raw_descriptions), "a literal | description"
    assert any(d.startswith('"') and ":" in d for d in raw_descriptions), "quoted with a colon"
    assert any(re.search(r"^allowed-tools: \[", fm, re.MULTILINE) for fm in frontmatters)
    assert any(re.search(r"^metadata:\n  \w", fm, re.MULTILINE) for fm in frontmatters)
    assert any(re.search(r"^license: ", fm, re.MULTILINE) for fm in frontmatters)


def test_example_supporting_files_sit_beside_skills_without_being_entries() -> None:
    supporting = [p for p in EXAMPLE.glob("skills/*/**/*") if p.is_file() and p.name != "SKILL.md"]
    assert supporting, "at least one skill should ship a supporting file"
    entries = set(all_example_items())
    assert not entries.intersection(supporting)
    assert (EXAMPLE / "README.md").is_file()
    assert EXAMPLE / "README.md" not in entries


def test_example_has_a_js_unit_testing_skill_whose_name_avoids_the_framework() -> None:
    # The vocabulary-gap demo: "test my React app" should find a skill that is named
    # and described as JavaScript unit testing.
    path = EXAMPLE / "skills" / "jest-runner" / "SKILL.md"
    fm_lines, _ = split_frontmatter(path.read_text(encoding="utf-8"))
    description = description_text(top_level_keys(fm_lines)["description"]).lower()
    assert "unit testing for javascript" in description
    assert "react" not in description
    names = []
    for item in all_example_items():
        item_fm, _ = split_frontmatter(item.read_text(encoding="utf-8"))
        names.append(item_name(item, top_level_keys(item_fm)).lower())
    assert not [n for n in names if "react" in n]
