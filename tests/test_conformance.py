"""The official MCP conformance suite against `boost mcp --http` (slow: installs Node 22 and
the suite from the npm registry the first time). Run with `pytest -m slow tests/test_conformance.py`."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow


def test_the_scenarios_that_apply_to_any_server_pass() -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "conformance.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        env={**__import__("os").environ, "PYTHON": sys.executable},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for scenario in (
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "dns-rebinding-protection",
    ):
        assert f"{scenario}: Passed" in r.stdout and ", 0 failed" in r.stdout
