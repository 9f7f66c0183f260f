"""The JSON config under BOOST_HOME: tapped registries and user settings.

Shape: ``{"version": 1, "taps": {name: {...}}, "settings": {...}}``. Written atomically.
"""

from __future__ import annotations

import json
from typing import Any, Dict

from boost_cli.core import atomic, paths
from boost_cli.core.errors import ConfigError

CONFIG_VERSION = 1


def load() -> Dict[str, Any]:
    """The config, or an empty one when none exists yet."""
    path = paths.config_path()
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"version": CONFIG_VERSION, "taps": {}, "settings": {}}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {exc.lineno})",
            f"fix or delete {path}; then re-add taps with 'boost tap'",
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("taps", {}), dict):
        raise ConfigError(f"{path} has an unexpected shape", f"fix or delete {path}")
    data.setdefault("version", CONFIG_VERSION)
    data.setdefault("taps", {})
    data.setdefault("settings", {})
    return data


def save(data: Dict[str, Any]) -> None:
    """Write the config atomically."""
    atomic.write_json(paths.config_path(), data)
