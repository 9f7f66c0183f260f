"""The JSON Schema subset boost's MCP tools declare, and a validator for it.

MCP clients send tool arguments the server must check against the tool's
``inputSchema``; boost is stdlib-only, so it cannot lean on ``jsonschema``. The
subset is what tool schemas need and nothing more:

* ``type`` — ``string``, ``integer``, ``number``, ``boolean``, ``object``,
  ``array``, ``null``, or a list of them;
* ``enum``; ``minimum``/``maximum``; ``minLength``/``maxLength``;
  ``minItems``/``maxItems``/``items``; ``required``/``properties``/
  ``additionalProperties`` (``false`` or a schema);
* annotations that never reject anything (``title``, ``description``,
  ``default``, ``examples``, ``format``, ``$schema``...).

`check_schema` refuses every other keyword, so a tool cannot declare a
constraint (``pattern``, ``oneOf``...) that `validate` would silently skip.

Integers follow JSON Schema: ``3.0`` *is* an integer (booleans are not), and
`normalize` turns such values into ``int`` before a handler sees them, so
handlers never get a float where their schema promised an integer. Non-finite
floats are not JSON numbers and are refused everywhere.

Messages are ``"<path>: <what is wrong>"``: ``query: expected string, got
integer``, ``filters.kind: expected one of "skill", "rule", got "x"``,
``tags[2]: ...``; the root itself is ``$``.
"""

from __future__ import annotations

import json
import math
from typing import Any, List, Mapping, Sequence

from boost_cli.core.text import clip

TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")

#: Keywords `validate` enforces.
ASSERTIONS = frozenset(
    {
        "type",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "items",
        "required",
        "properties",
        "additionalProperties",
    }
)

#: Keywords that describe and never reject (JSON Schema 2020-12 annotations).
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "format",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)

_MAX_SHOWN = 40


def json_type(value: Any) -> str:
    """The JSON type name of a parsed JSON value (``3.0`` is a "number")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else "non-finite number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def is_type(value: Any, name: str) -> bool:
    """Whether ``value`` is of JSON Schema type ``name`` (``True`` is no integer)."""
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if name == "integer":
        if isinstance(value, int):
            return True
        return isinstance(value, float) and math.isfinite(value) and value.is_integer()
    if name == "number":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, (list, tuple))
    if name == "object":
        return isinstance(value, Mapping)
    return False


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``1 == 1.0`` but ``1 != true``; containers compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def shown(value: Any) -> str:
    """A short JSON rendering of ``value`` for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = json_type(value)
    return clip(text, _MAX_SHOWN)


def _child(path: str, key: str) -> str:
    return key if not path else f"{path}.{key}"


def _label(path: str) -> str:
    return path or "$"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _types_of(schema: Mapping[str, Any]) -> List[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def validate(instance: Any, schema: Mapping[str, Any]) -> List[str]:
    """Every way ``instance`` breaks ``schema``, as ``"path: message"`` lines (empty when valid).

    A value of the wrong type gets one message and no further checks (its
    ``minLength`` or ``required`` would only add noise).
    """
    errors: List[str] = []
    _validate(instance, schema, "", errors)
    return errors


def _validate(value: Any, schema: Mapping[str, Any], path: str, errors: List[str]) -> None:
    where = _label(path)
    types = _types_of(schema)
    if types and not any(is_type(value, t) for t in types):
        errors.append(f"{where}: expected {' or '.join(types)}, got {json_type(value)}")
        return
    if "enum" in schema and not any(json_equal(value, option) for option in schema["enum"]):
        options = ", ".join(shown(option) for option in schema["enum"])
        errors.append(f"{where}: expected one of {options}, got {shown(value)}")
    if isinstance(value, str):
        _check_length(value, schema, where, errors)
    elif is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: must be >= {schema['minimum']}, got {shown(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: must be <= {schema['maximum']}, got {shown(value)}")
    elif isinstance(value, (list, tuple)):
        _check_array(value, schema, path, errors)
    elif isinstance(value, Mapping):
        _check_object(value, schema, path, errors)


def _check_length(value: str, schema: Mapping[str, Any], where: str, errors: List[str]) -> None:
    # JSON Schema counts characters (code points), which is what len() counts on a str.
    if "minLength" in schema and len(value) < schema["minLength"]:
        want = _plural(schema["minLength"], "character")
        errors.append(f"{where}: must be at least {want} long, got {len(value)}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        want = _plural(schema["maxLength"], "character")
        errors.append(f"{where}: must be at most {want} long, got {len(value)}")


def _check_array(
    value: Sequence[Any], schema: Mapping[str, Any], path: str, errors: List[str]
) -> None:
    where = _label(path)
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(
            f"{where}: must have at least {_plural(schema['minItems'], 'item')}, got {len(value)}"
        )
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(
            f"{where}: must have at most {_plural(schema['maxItems'], 'item')}, got {len(value)}"
        )
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            _validate(item, items, f"{where}[{i}]", errors)


def _check_object(
    value: Mapping[Any, Any], schema: Mapping[str, Any], path: str, errors: List[str]
) -> None:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            errors.append(f"{_child(path, name)}: required property is missing")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        name = str(key)
        if name in properties:
            _validate(item, properties[name], _child(path, name), errors)
        elif extra is False:
            allowed = ", ".join(properties) if properties else "none"
            errors.append(f"{_child(path, name)}: unexpected property (allowed: {allowed})")
        elif isinstance(extra, Mapping):
            _validate(item, extra, _child(path, name), errors)


def normalize(instance: Any, schema: Mapping[str, Any]) -> Any:
    """A copy of a *valid* ``instance`` with integral floats turned into ``int``
    wherever ``schema`` says ``integer`` (and not also ``number``)."""
    types = _types_of(schema)
    if (
        isinstance(instance, float)
        and "integer" in types
        and "number" not in types
        and math.isfinite(instance)
        and instance.is_integer()
    ):
        return int(instance)
    if isinstance(instance, (list, tuple)):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [normalize(item, items) for item in instance]
        return list(instance)
    if isinstance(instance, Mapping):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        out = {}
        for key, item in instance.items():
            sub = properties.get(key, extra)
            out[key] = normalize(item, sub) if isinstance(sub, Mapping) else item
        return out
    return instance


def check_schema(schema: Any, path: str = "") -> List[str]:
    """Problems that make ``schema`` unusable with `validate` (empty when fine).

    Unknown keywords are problems: a constraint `validate` does not enforce
    must not be declared, or clients would trust a check that never runs.
    """
    where = _label(path)
    if not isinstance(schema, Mapping):
        return [f"{where}: a schema must be an object, got {json_type(schema)}"]
    problems: List[str] = []
    for key in schema:
        if key not in ASSERTIONS and key not in ANNOTATIONS:
            problems.append(f"{where}: unsupported keyword {key!r}")
    declared = schema.get("type")
    if declared is not None:
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not names:
            problems.append(f"{where}: 'type' must be a type name or a non-empty list of them")
        else:
            for name in names:
                if name not in TYPES:
                    problems.append(f"{where}: unknown type {name!r}")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        problems.append(f"{where}: 'enum' must be a non-empty list")
    for key in ("minimum", "maximum"):
        if key in schema and not is_type(schema[key], "number"):
            problems.append(f"{where}: {key!r} must be a number")
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if key in schema and not (
            isinstance(schema[key], int) and not isinstance(schema[key], bool) and schema[key] >= 0
        ):
            problems.append(f"{where}: {key!r} must be a non-negative integer")
    required = schema.get("required")
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(r, str) for r in required)
    ):
        problems.append(f"{where}: 'required' must be a list of property names")
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, Mapping):
            problems.append(f"{where}: 'properties' must be an object")
        else:
            for name, sub in properties.items():
                problems.extend(check_schema(sub, _child(path, str(name))))
    extra = schema.get("additionalProperties")
    if extra is not None and not isinstance(extra, bool):
        problems.extend(check_schema(extra, _child(path, "additionalProperties")))
    if "items" in schema:
        problems.extend(check_schema(schema["items"], f"{where}[]"))
    return problems
