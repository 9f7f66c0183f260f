"""The JSON Schema subset validator: each keyword, its message, and the schema check."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from boost_cli.core.schema import (
    check_schema,
    json_equal,
    json_type,
    normalize,
    shown,
    validate,
)

SEARCH: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 10, "description": "the task"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "kind": {"type": "string", "enum": ["skill", "rule", "workflow"]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "score": {"type": ["number", "null"]},
        "strict": {"type": "boolean"},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def test_valid_instance_has_no_errors() -> None:
    args = {
        "query": "react",
        "limit": 5,
        "kind": "rule",
        "tags": ["a"],
        "score": None,
        "strict": True,
    }
    assert validate(args, SEARCH) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"query": 12345}, "query: expected string, got integer"),
        ({}, "query: required property is missing"),
        ({"query": ""}, "query: must be at least 1 character long, got 0"),
        ({"query": "x" * 11}, "query: must be at most 10 characters long, got 11"),
        ({"query": "q", "limit": 0}, "limit: must be >= 1, got 0"),
        ({"query": "q", "limit": 51}, "limit: must be <= 50, got 51"),
        ({"query": "q", "limit": 2.5}, "limit: expected integer, got number"),
        ({"query": "q", "limit": True}, "limit: expected integer, got boolean"),
        ({"query": "q", "limit": "5"}, "limit: expected integer, got string"),
        ({"query": "q", "kind": "x"}, 'kind: expected one of "skill", "rule", "workflow", got "x"'),
        ({"query": "q", "tags": []}, "tags: must have at least 1 item, got 0"),
        ({"query": "q", "tags": ["a", "b", "c"]}, "tags: must have at most 2 items, got 3"),
        ({"query": "q", "tags": ["a", 3]}, "tags[1]: expected string, got integer"),
        ({"query": "q", "score": "high"}, "score: expected number or null, got string"),
        ({"query": "q", "strict": 1}, "strict: expected boolean, got integer"),
        (
            {"query": "q", "bogus": 1},
            "bogus: unexpected property (allowed: query, limit, kind, tags, score, strict)",
        ),
    ],
)
def test_each_keyword_reports_one_clear_line(args: Dict[str, Any], message: str) -> None:
    assert validate(args, SEARCH) == [message]


def test_root_type_mismatch_is_reported_at_dollar() -> None:
    assert validate([1], SEARCH) == ["$: expected object, got array"]


def test_wrong_type_stops_further_checks_on_that_value() -> None:
    # No minLength/enum noise after the type already failed.
    schema = {"type": "string", "minLength": 3, "enum": ["abc"]}
    assert validate(5, schema) == ["$: expected string, got integer"]


def test_several_errors_are_all_reported_in_schema_order() -> None:
    errors = validate({"limit": 0, "extra": 1}, SEARCH)
    assert errors == [
        "query: required property is missing",
        "limit: must be >= 1, got 0",
        "extra: unexpected property (allowed: query, limit, kind, tags, score, strict)",
    ]


def test_nested_objects_use_dotted_paths() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filters": {
                "type": "object",
                "properties": {"kind": {"type": "string"}},
                "required": ["kind"],
                "additionalProperties": False,
            }
        },
    }
    assert validate({"filters": {"kind": 1}}, schema) == [
        "filters.kind: expected string, got integer"
    ]
    assert validate({"filters": {}}, schema) == ["filters.kind: required property is missing"]
    assert validate({"filters": {"x": 1}}, schema) == [
        "filters.kind: required property is missing",
        "filters.x: unexpected property (allowed: kind)",
    ]


def test_additional_properties_schema_applies_to_extras() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert validate({"a": 1, "b": "x"}, schema) == ["b: expected integer, got string"]
    closed = {"type": "object", "additionalProperties": False}
    assert validate({"a": 1}, closed) == ["a: unexpected property (allowed: none)"]


def test_integral_float_is_an_integer_and_normalize_makes_it_int() -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer"}, "w": {"type": "number"}},
    }
    args = {"limit": 3.0, "w": 2.0}
    assert validate(args, schema) == []
    out = normalize(args, schema)
    assert out == {"limit": 3, "w": 2.0}
    assert type(out["limit"]) is int
    assert type(out["w"]) is float  # "number" keeps its float
    # integer or number: a float is a number, so it stays one.
    assert type(normalize(3.0, {"type": ["integer", "number"]})) is float


def test_normalize_walks_items_and_additional_properties_and_copies() -> None:
    schema = {
        "type": "object",
        "properties": {"ks": {"type": "array", "items": {"type": "integer"}}},
        "additionalProperties": {"type": "integer"},
    }
    args = {"ks": [1.0, 2], "other": 4.0, "free": [1.0]}
    assert validate({"ks": [1.0, 2], "other": 4.0}, schema) == []
    out = normalize(args, schema)
    assert out["ks"] == [1, 2] and type(out["ks"][0]) is int
    assert type(out["other"]) is int
    assert out is not args and out["ks"] is not args["ks"]


def test_non_finite_floats_are_not_numbers() -> None:
    schema = {"type": "number"}
    assert validate(float("inf"), schema) == ["$: expected number, got non-finite number"]
    assert validate(float("nan"), {"type": "integer"}) == [
        "$: expected integer, got non-finite number"
    ]


def test_keywords_apply_only_to_their_own_type() -> None:
    # minLength means nothing to a number, minimum nothing to a string (JSON Schema semantics).
    assert validate(5, {"minLength": 10}) == []
    assert validate("abc", {"minimum": 10}) == []
    assert validate(None, {"type": "null"}) == []


def test_enum_uses_json_equality() -> None:
    assert validate(True, {"enum": [1]}) == ["$: expected one of 1, got true"]
    assert validate(1.0, {"enum": [1]}) == []
    assert validate([1, {"a": None}], {"enum": [[1, {"a": None}]]}) == []


def test_long_values_are_shortened_in_messages() -> None:
    (message,) = validate("x" * 500, {"enum": ["a"]})
    assert message == '$: expected one of "a", got "' + "x" * 38 + "…"


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (1, True, False),
        (False, 0, False),
        ("1", 1, False),
        ([1, 2], (1, 2), True),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": 1}, {"b": 1}, False),
        (None, None, True),
        (True, True, True),
        (False, False, True),
        (True, False, False),
        ([1], [1, 2], False),
        ([1, 2], [1, 3], False),
        (["a"], "a", False),
        ([], "", False),
        ({}, "", False),
        ({}, [], False),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (1, "integer"),
        (1.0, "number"),
        ("s", "string"),
        ([], "array"),
        ({}, "object"),
        ({1}, "set"),
    ],
)
def test_json_type_names(value: Any, name: str) -> None:
    assert json_type(value) == name


def test_unknown_type_names_match_nothing_and_odd_values_still_get_a_message() -> None:
    assert validate("x", {"type": "text"}) == ["$: expected text, got string"]
    assert validate({1, 2}, {"enum": ["a"]}) == ['$: expected one of "a", got set']


def test_check_schema_accepts_the_subset_and_annotations() -> None:
    assert check_schema(SEARCH) == []
    annotated = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/search",
        "$comment": "for the search tool",
        "title": "t",
        "description": "d",
        "type": "string",
        "format": "uri",
        "default": "x",
        "examples": ["y"],
        "deprecated": False,
        "readOnly": False,
        "writeOnly": False,
    }
    assert check_schema(annotated) == []
    # Zero is a valid bound for every length and count keyword.
    zeros = {"minLength": 0, "maxLength": 0, "minItems": 0, "maxItems": 0}
    assert check_schema(zeros) == []


def test_bounds_are_inclusive() -> None:
    assert validate(1, {"minimum": 1, "maximum": 1}) == []
    assert validate(1.5, {"minimum": 1.5, "maximum": 1.5}) == []
    assert validate("ab", {"minLength": 2, "maxLength": 2}) == []
    assert validate(["a", "b"], {"minItems": 2, "maxItems": 2}) == []


def test_extra_properties_are_allowed_unless_refused() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert validate({"q": "x", "other": 1}, schema) == []


def test_messages_show_values_as_json() -> None:
    assert validate("x", {"enum": ["café"]}) == ['$: expected one of "café", got "x"']
    assert shown(float("nan")) == "non-finite number"
    assert shown(float("-inf")) == "non-finite number"
    assert shown({"a": [1, None]}) == '{"a": [1, null]}'
    # An enum against values of another shape is a mismatch, not a crash.
    assert validate({}, {"enum": ["x", []]}) == ['$: expected one of "x", [], got {}']


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "string", "pattern": "^a"}, "$: unsupported keyword 'pattern'"),
        ({"oneOf": []}, "$: unsupported keyword 'oneOf'"),
        ({"type": "str"}, "$: unknown type 'str'"),
        ({"type": []}, "$: 'type' must be a type name or a non-empty list of them"),
        ({"enum": []}, "$: 'enum' must be a non-empty list"),
        ({"minimum": "1"}, "$: 'minimum' must be a number"),
        ({"maximum": None}, "$: 'maximum' must be a number"),
        ({"minLength": -1}, "$: 'minLength' must be a non-negative integer"),
        ({"maxLength": 1.5}, "$: 'maxLength' must be a non-negative integer"),
        ({"minItems": "2"}, "$: 'minItems' must be a non-negative integer"),
        ({"maxItems": True}, "$: 'maxItems' must be a non-negative integer"),
        ({"required": "query"}, "$: 'required' must be a list of property names"),
        ({"properties": []}, "$: 'properties' must be an object"),
        (
            {"properties": {"q": {"type": "string", "pattern": "x"}}},
            "q: unsupported keyword 'pattern'",
        ),
        (
            {"additionalProperties": {"const": 1}},
            "additionalProperties: unsupported keyword 'const'",
        ),
        ({"items": {"anyOf": []}}, "$[]: unsupported keyword 'anyOf'"),
        ({"items": [{"type": "string"}]}, "$[]: a schema must be an object, got array"),
    ],
)
def test_check_schema_refuses_what_validate_would_skip(
    schema: Dict[str, Any], problem: str
) -> None:
    assert check_schema(schema) == [problem]
