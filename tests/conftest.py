"""Shared fixtures: every test gets its own BOOST_HOME and no network beyond 127.0.0.1."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Callable, Dict, Optional

import pytest

from tests.helpers import EXAMPLES, make_repo


@pytest.fixture(autouse=True)
def boost_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point BOOST_HOME at a fresh folder; every other BOOST_* setting and every provider
    key is cleared, and the [local] extra is not auto-detected even where it is installed,
    so LLM and embedding providers are unconfigured unless a test says so."""
    from boost_cli.core.embed import local

    monkeypatch.setattr(local, "installed", lambda: False)
    home = tmp_path / "boost-home"
    monkeypatch.setenv("BOOST_HOME", str(home))
    for var in list(os.environ):
        if var.startswith("BOOST_") and var != "BOOST_HOME":
            monkeypatch.delenv(var)
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "VOYAGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


_real_connect = socket.socket.connect


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback connections are allowed from inside the test process."""

    def guarded(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and not (host.startswith("127.") or host in ("localhost", "::1"))
            and self.family != socket.AF_UNIX
        ):
            raise OSError(f"network access blocked in tests: {address!r}")
        return _real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def repo_factory(tmp_path: Path) -> Callable[..., Path]:
    def factory(name: str, files: Optional[Dict[str, str]] = None) -> Path:
        return make_repo(tmp_path / "repos-src" / name, files)

    return factory


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """The bundled example registry as a local git repo."""
    import shutil

    dest = tmp_path / "example-registry"
    shutil.copytree(EXAMPLES, dest)
    return make_repo(dest)
