"""manifest.json, the one switch point of the index: loaded and checked here, for
readers and for the build that starts from the previous one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

from boost_cli.core.errors import IndexUnavailable
from boost_cli.core.index.layout import ENGINE, FORMAT_VERSION, MANIFEST, damaged, mismatch
from boost_cli.core.paths import index_dir


def load_manifest(root: Path) -> Optional[Dict[str, Any]]:
    """The manifest, None when there is none; IndexUnavailable when unreadable or foreign."""
    try:
        raw = (root / MANIFEST).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise damaged(f"{MANIFEST} cannot be read: {exc.strerror or exc}") from exc
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        raise damaged(f"{MANIFEST} is not valid JSON") from exc
    if not isinstance(manifest, dict):
        raise damaged(f"{MANIFEST} is not a JSON object")
    if manifest.get("version") != FORMAT_VERSION:
        raise mismatch(manifest.get("version"))
    if manifest.get("engine") != ENGINE:
        raise damaged(f"{MANIFEST} is for engine {manifest.get('engine')!r}")
    for k in ("segments", "merge", "params", "stats", "commits"):
        if not isinstance(manifest.get(k), dict):
            raise damaged(f"{MANIFEST} lacks {k!r}")
    if not isinstance(manifest.get("tiers"), list):
        raise damaged(f"{MANIFEST} lacks 'tiers'")
    return manifest


def previous_manifest(root: Path) -> Optional[Dict[str, Any]]:
    """The manifest a build can start from; a damaged or foreign one means: rebuild all."""
    try:
        return load_manifest(root)
    except IndexUnavailable:
        return None


def indexed_commits(root: Optional[Path] = None) -> Dict[str, str]:
    """Tap → commit of the index under ``root`` (default `index_dir()`), from the manifest
    alone; {} when there is none or it cannot be read."""
    manifest = previous_manifest(root or index_dir())
    return {str(k): str(v) for k, v in manifest["commits"].items()} if manifest else {}
