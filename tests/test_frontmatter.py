"""Frontmatter: fixture tables (tomli style) plus unit tests of the pure parts.

``fixtures/frontmatter/valid/<case>.md`` parses to ``<case>.json`` (meta and body);
``fixtures/frontmatter/invalid/<case>.md`` raises in ``parse`` at the line in
``<case>.json`` and degrades to a warning, with the keys that did parse, in
``parse_lenient``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boost_cli.core.errors import BoostError
from boost_cli.core.frontmatter import (
    FrontmatterError,
    parse,
    parse_lenient,
    parse_yaml,
    split,
)

FIXTURES = Path(__file__).parent / "fixtures" / "frontmatter"
VALID = sorted((FIXTURES / "valid").glob("*.md"))
INVALID = sorted((FIXTURES / "invalid").glob("*.md"))
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _read(path: Path) -> str:
    """The fixture's exact text: no newline translation, BOM kept."""
    return path.read_bytes().decode("utf-8")


def _expected(path: Path) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    return data


# --------------------------------------------------------------------------- fixture tables


def test_fixture_folders_are_populated() -> None:
    assert len(VALID) >= 30 and len(INVALID) >= 15
    for path in VALID + INVALID:
        assert path.with_suffix(".json").is_file(), f"{path.name} has no expected .json"


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_fixture(path: Path) -> None:
    text = _read(path)
    want = _expected(path)
    assert parse(text) == (want["meta"], want["body"])
    assert parse_lenient(text) == (want["meta"], want["body"], None)


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_fixture_with_crlf_and_bom(path: Path) -> None:
    """Line endings and a BOM never change the metadata."""
    want = _expected(path)
    lf = _read(path).lstrip("\ufeff").replace("\r\n", "\n")
    for variant in (lf.replace("\n", "\r\n"), "\ufeff" + lf, "\ufeff" + lf.replace("\n", "\r\n")):
        meta, body = parse(variant)
        assert meta == want["meta"]
        assert body.replace("\r\n", "\n") == want["body"].replace("\r\n", "\n")


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_fixture(path: Path) -> None:
    text = _read(path)
    want = _expected(path)
    with pytest.raises(FrontmatterError) as info:
        parse(text)
    err = info.value
    assert err.line == want["line"]
    assert err.message == f"line {want['line']}: {want['message']}"
    assert err.fix  # every error says how to fix it
    meta, body, warning = parse_lenient(text)
    assert warning == err.message
    assert meta == want["lenient_meta"]
    assert isinstance(body, str)


# --------------------------------------------------------------------------- split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\na: 1\n---\nbody", ("a: 1\n", "body", 13)),
        ("---\r\na: 1\r\n---\r\nbody", ("a: 1\r\n", "body", 16)),
        ("\ufeff---\na: 1\n---\nbody", ("a: 1\n", "body", 14)),
        ("---\na: 1\n...\nbody", ("a: 1\n", "body", 13)),
        ("---\na: 1\n---", ("a: 1\n", "", 12)),
        ("---\n---\n", ("", "", 8)),
        ("--- \na: 1\n---\t\nx", ("a: 1\n", "x", 15)),
        ("# title\n---\na: 1\n---\n", (None, "# title\n---\na: 1\n---\n", 0)),
        ("\ufeffplain", (None, "plain", 1)),
        ("---\na: 1\n", (None, "---\na: 1\n", 0)),
        ("---", (None, "---", 0)),
        ("----\na: 1\n----\n", (None, "----\na: 1\n----\n", 0)),
        ("", (None, "", 0)),
        ("---\na: 1\n---\nx\n---\ny", ("a: 1\n", "x\n---\ny", 13)),
    ],
)
def test_split(text: str, expected: Tuple[Optional[str], str, int]) -> None:
    assert split(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["---", "...", "\n", "\r\n", "\ufeff", "a: 1", " "])).map("".join))
def test_split_body_is_the_text_from_the_offset(text: str) -> None:
    raw, body, offset = split(text)
    assert body == text[offset:]
    if raw is not None:
        assert text.lstrip("\ufeff").startswith("---")


# --------------------------------------------------------------------------- parse / parse_lenient


def test_no_frontmatter_is_empty_meta_and_whole_body() -> None:
    assert parse("# Title\n\ntext\n") == ({}, "# Title\n\ntext\n")
    assert parse_lenient("# Title\n") == ({}, "# Title\n", None)


def test_unterminated_block_is_body_with_a_warning() -> None:
    text = "---\nname: x\n\nno closing fence\n"
    assert split(text) == (None, text, 0)
    assert parse_lenient(text) == (
        {},
        text,
        "line 1: the frontmatter opened by '---' is never closed",
    )
    with pytest.raises(FrontmatterError) as info:
        parse(text)
    assert str(info.value) == (
        "line 1: the frontmatter opened by '---' is never closed"
        " — add a line '---' after the frontmatter, or remove the first line"
    )


def test_parse_reports_file_lines_and_parse_yaml_reports_source_lines() -> None:
    with pytest.raises(FrontmatterError) as in_file:
        parse("---\nname: x\ntags: [a\n---\n")
    assert in_file.value.line == 3
    with pytest.raises(FrontmatterError) as in_src:
        parse_yaml("name: x\ntags: [a\n")
    assert in_src.value.line == 2


def test_frontmatter_error_is_a_boost_error() -> None:
    err = FrontmatterError("unterminated flow list", 4, "close it")
    assert isinstance(err, BoostError)
    assert err.exit_code == 1
    assert str(err) == "line 4: unterminated flow list — close it"
    assert FrontmatterError("no line").line is None


def test_lenient_keeps_every_good_top_level_key() -> None:
    text = "---\na: 1\nb: [x\nc: 3\nd: 'open\n---\n"
    meta, _, warning = parse_lenient(text)
    assert meta == {"a": 1, "c": 3}
    assert warning == "line 3: unterminated flow list (no closing ']')"


# --------------------------------------------------------------------------- parse_yaml units


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("Yes", True),
        ("no", False),
        ("False", False),
        ("on", "on"),
        ("off", "off"),
        ("null", None),
        ("Null", None),
        ("~", None),
        ("", None),
        ("0", 0),
        ("-12", -12),
        ("+5", 5),
        ("007", "007"),
        ("1.5", 1.5),
        ("-.5", -0.5),
        ("1e3", 1000.0),
        ("1.", 1.0),
        ("1e999", "1e999"),
        (".inf", ".inf"),
        (".", "."),
        ("-", "-"),
        ("1.0.0", "1.0.0"),
        ("2025-01-31", "2025-01-31"),
        ("0x1F", "0x1F"),
        ("1_000", "1_000"),
        ("sonnet", "sonnet"),
    ],
)
def test_plain_scalar_types(value: str, expected: Any) -> None:
    got = parse_yaml(f"k: {value}\n")["k"]
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ('k: "a\\"b\\\\c"', 'a"b\\c'),
        ('k: "\\n\\t\\r\\0\\e\\/\\ "', "\n\t\r\0\x1b/ "),
        ('k: "\\u00e9\\x41\\U0001F600"', "éA\U0001f600"),
        ('k: "\\ud83d\\ude00"', "\U0001f600"),
        ('k: "\\ud83d alone"', "\ufffd alone"),
        ('k: "\\udc00"', "\ufffd"),
        ('k: "\\U00110000"', "\\U00110000"),
        ('k: "\\uZZZZ \\q"', "\\uZZZZ \\q"),
        ('k: "trailing backslash \\\\"', "trailing backslash \\"),
        ("k: 'it''s'", "it's"),
        ("k: 'a \\n b'", "a \\n b"),
        ("k: ''''", "'"),
    ],
)
def test_quoted_scalars(src: str, expected: str) -> None:
    assert parse_yaml(src) == {"k": expected}


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("k: |\n  a\n  b\n", "a\nb\n"),
        ("k: |-\n  a\n  b\n", "a\nb"),
        ("k: |+\n  a\n\n\n", "a\n\n\n"),
        ("k: >\n  a\n  b\n\n  c\n", "a b\nc\n"),
        ("k: >\n  a\n    b\n  c\n", "a\n  b\nc\n"),
        ("k: >-\n\n  a\n", "\na"),
        ("k: |1\n  a\n", " a\n"),
        ("k: |\n  a\n  b", "a\nb"),  # no line break after the last line
        ("k: |\nnext: 1\n", ""),
        ("k: |+\n\n", "\n"),
        ("k: |\n  a\n   \n  b\n", "a\n \nb\n"),
    ],
)
def test_block_scalars(src: str, expected: str) -> None:
    assert parse_yaml(src)["k"] == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("k: a\n  b\n\n  c\n", "a b\nc"),
        ("k: a # comment\n", "a"),
        ("k: a#b\n", "a#b"),
        ("k: 'a\n\n\n  b'\n", "a\n\nb"),
        ('k: "a  \n   b"\n', "a b"),
        ('k: "a\\\n   b"\n', "ab"),
        ("k: [a, [b, {c: d}], {e: [f]}]\n", ["a", ["b", {"c": "d"}], {"e": ["f"]}]),
        ("k: {a, b: }\n", {"a": None, "b": None}),
        ("k: {a:1}\n", {"a:1": None}),
        ('k: {"a":1}\n', {"a": 1}),
        ("k: [a: 1, 'b': [2]]\n", [{"a": 1}, {"b": [2]}]),
        ("k: [#x, y]\n", ["#x", "y"]),
        ("k: [a, # comment\n  b]\n", ["a", "b"]),
        ("k: [a]  # comment\n", ["a"]),
        ("k:\n  some text\n  more text\n", "some text more text"),
        ("k:\n  - a\n  -\n", ["a", None]),
        ("k:\n- a\n- b\n", ["a", "b"]),
        ("k:\n  - x: 1\n    y: 2\n  - z\n", [{"x": 1, "y": 2}, "z"]),
        ("k:\n  - - a\n    - b\n", [["a", "b"]]),
    ],
)
def test_values(src: str, expected: Any) -> None:
    assert parse_yaml(src)["k"] == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("", {}),
        ("\n\n", {}),
        ("# only a comment\n", {}),
        ("{a: 1, b: [x]}\n", {"a": 1, "b": ["x"]}),
        ("a: 1\na: 2\n", {"a": 2}),
        ("'1': x\ntrue: y\n", {"1": "x", "true": "y"}),
        ("a b: 1\nc-d: 2\n", {"a b": 1, "c-d": 2}),
        ("a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", {"a": {"b": {"c": 1}, "d": 2}, "e": 3}),
        ("a:  # comment\n  b: 1\n", {"a": {"b": 1}}),
        ("a: x\r\nb: y\r\n", {"a": "x", "b": "y"}),
    ],
)
def test_documents(src: str, expected: Dict[str, Any]) -> None:
    assert parse_yaml(src) == expected


@pytest.mark.parametrize(
    ("src", "line", "message"),
    [
        ("a: 1\n  b: 2\n", None, None),  # a continuation, not an error (see below)
        ('a:\n  b: "1"\n   c: 2\n', 3, "bad indentation: expected 2 spaces, found 3"),
        ("a: 1\n\tb: 2\n", 2, "a tab is used for indentation"),
        ('a: "x\n', 1, "unterminated double-quoted string"),
        ("a: 'x\n", 1, "unterminated single-quoted string"),
        ("a: [x,\n  y\n", 1, "unterminated flow list (no closing ']')"),
        ("a: {x: 1\nb: 2\n", 1, "unterminated flow map (no closing '}')"),
        ("a: [x}\n", 1, "expected ',' or ']' in a flow list, found '}'"),
        ("a: {x y]\n", 1, "expected ',' or '}' in a flow map, found ']'"),
        ("a: {[x]: 1}\n", 1, "a list or map used as a key"),
        ("a: [a,,b]\n", 1, "empty entry at column 7"),
        ("- a\n", 1, "a list item where a key was expected"),
        ("just words\n", 1, "expected 'key: value', found 'just words'"),
        ("a: 1\nwords\n", 2, "expected 'key: value', found 'words'"),
        ("a:\n  b: 1\n  - c\n", 3, "a list item where a key was expected"),
        ("{a: 1} extra\n", 1, "unexpected text after the frontmatter's closing '}'"),
        ("a: " + "[" * 100 + "]" * 100 + "\n", 1, "nested too deeply"),
        (
            "a:" + "".join("\n" + " " * d + "k:" for d in range(1, 100)) + "\n",
            67,
            "nested too deeply",
        ),
    ],
)
def test_errors(src: str, line: Optional[int], message: Optional[str]) -> None:
    if line is None:
        assert parse_yaml(src) == {"a": "1 b: 2"}
        return
    with pytest.raises(FrontmatterError) as info:
        parse_yaml(src)
    assert info.value.line == line
    assert info.value.message == f"line {line}: {message}"


def test_lenient_shapes_from_real_registries() -> None:
    """Values strict YAML rejects but whose meaning is plain (see the module docstring)."""
    src = (
        "globs: **/*.ts, *.tsx\n"
        "argument-hint: [file] | --all\n"
        "description: Use when: the user asks. Example: x\n"
        "quoted: 'a' or 'b'\n"
        "range: > 5 years\n"
    )
    assert parse_yaml(src) == {
        "globs": "**/*.ts, *.tsx",
        "argument-hint": "[file] | --all",
        "description": "Use when: the user asks. Example: x",
        "quoted": "'a' or 'b'",
        "range": "> 5 years",
    }


# --------------------------------------------------------------------------- robustness

_YAMLISH = st.lists(
    st.sampled_from(
        list(" \t\n\r:-#[]{}\"'|>,.~?*&!\\ab1") + ["---", "\ufeff", "- ", ": ", "\n  "]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=200), _YAMLISH, _YAMLISH.map(lambda s: f"---\n{s}\n---\nbody")))
def test_parse_lenient_never_raises(text: str) -> None:
    meta, body, warning = parse_lenient(text)
    assert isinstance(meta, dict) and isinstance(body, str)
    assert warning is None or warning.startswith("line ")
    try:
        strict_meta, strict_body = parse(text)
    except FrontmatterError as err:  # strict and lenient agree on what is wrong
        assert warning == err.message
    else:
        assert (strict_meta, strict_body, warning) == (meta, body, None)


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not available")
def test_corpus_parses_with_few_warnings() -> None:
    """Nearly every real registry file's frontmatter parses without a warning."""
    with_frontmatter = 0
    warnings: List[str] = []
    for root, _, files in os.walk(CORPUS):
        for name in files:
            if not name.endswith((".md", ".mdc")):
                continue
            path = Path(root, name)
            text = path.read_bytes().decode("utf-8", errors="replace")
            meta, _, warning = parse_lenient(text)
            if split(text)[0] is not None or warning:
                with_frontmatter += 1
            if warning:
                warnings.append(f"{path}: {warning}")
    assert with_frontmatter > 1000
    assert len(warnings) <= with_frontmatter // 200, "\n".join(warnings[:20])
