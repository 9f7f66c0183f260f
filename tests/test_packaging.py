"""Packaging metadata and the sdist's contents, offline. The full build-and-install check
needs PyPI: scripts/check_dist.sh (make dist-check)."""

from __future__ import annotations

import fnmatch
import re
import subprocess

import pytest

from tests.helpers import ROOT


def _pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_license_is_spdx_with_its_file() -> None:
    text = _pyproject()
    assert re.search(r'^license = "MIT"$', text, re.M)
    assert re.search(r'^license-files = \["LICENSE"\]$', text, re.M)
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert re.search(r'requires = \["setuptools>=(7[7-9]|[89]\d)', text)  # PEP 639 support
    assert "License ::" not in text  # SPDX expressions replace license classifiers


def test_classifiers_name_every_supported_python() -> None:
    text = _pyproject()
    assert 'requires-python = ">=3.9"' in text
    for minor in range(9, 14):
        assert f'"Programming Language :: Python :: 3.{minor}"' in text
    assert "[project.urls]" in text


def _manifest_patterns() -> list:
    patterns = []
    for line in (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "include":
            patterns += words[1:]
        elif words[0] == "recursive-include":
            patterns += [
                f"{words[1]}/*{p}" if p.startswith("*") else f"{words[1]}/*/{p}" for p in words[2:]
            ]
            patterns += [f"{words[1]}/{p}" for p in words[2:]]
    return patterns


def test_the_sdist_ships_every_file_the_tests_need() -> None:
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "tests", "examples", "docs", "scripts"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an unpacked sdist)")
    if not tracked:
        pytest.skip("not a git checkout (an unpacked sdist)")
    patterns = _manifest_patterns()
    missing = [f for f in tracked if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert missing == []
    assert {"tests/conftest.py", "tests/helpers.py", "tests/fakebin/gh"} <= set(tracked)
