"""Shared fixtures: every test gets its own BOOST_HOME and no network beyond 127.0.0.1."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Callable, Dict, List, Optional

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
    # The pure-Python ranking (`index/bounds.py`) unless a test asks for numpy's
    # (`index/vectorized.py`): whether numpy is imported depends on which tests ran before.
    monkeypatch.setenv("BOOST_NUMPY_RANKING", "0")
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "VOYAGE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
    ):
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


# The slowest variants of tests that CI also runs in a faster form (each took 1.9 s or more
# at load 1-2): marked `slow` here, so `make check` stays within ten minutes on a busy
# machine and `make test-slow` still runs them. Whole slow files mark themselves.
SLOW_VARIANTS = frozenset(
    {
        "tests/test_affordances.py::test_the_demo_echoes_commands_that_work_when_typed[hash-hybrid-7]",
        "tests/test_affordances.py::test_the_demo_echoes_commands_that_work_when_typed[none-bm25-5]",
        "tests/test_bundle.py::test_vectors_travel_in_the_bundle",
        "tests/test_cli_search.py::test_claude_cli_reranks",
        "tests/test_crash_race.py::test_kill_between_checkout_and_record_rolls_back",
        "tests/test_crash_race.py::test_kill_during_update_mid_checkout_is_repaired",
        "tests/test_crash_race.py::test_reindex_after_update_repaired_a_clone_matches_a_fresh_build",
        "tests/test_crash_race.py::test_untap_during_update_leaves_no_orphan",
        "tests/test_dense_cli.py::test_a_store_behind_the_taps_is_used_and_named_in_notes_and_doctor",
        "tests/test_dense_cli.py::test_provider_failures_during_reindex_keep_the_previous_store",
        "tests/test_dense_fresh.py::test_a_moved_home_keeps_its_store_in_step",
        "tests/test_dense_fresh.py::test_a_repaired_tap_is_re_embedded_from_its_real_files",
        "tests/test_dense_fresh.py::test_a_tap_the_store_lacks_at_its_commit_leaves_the_query_to_bm25",
        "tests/test_hostile_registry.py::test_a_tampered_catalog_cache_never_leaves_the_tap[.git/config]",
        "tests/test_hostile_registry.py::test_a_tampered_catalog_cache_never_leaves_the_tap[skills/link/SKILL.md]",
        "tests/test_index_build.py::test_worker_processes_build_the_same_index_as_one_process",
        "tests/test_index_damage.py::test_a_damaged_segment_is_rebuilt_by_the_next_build_and_named_by_search",
        "tests/test_index_damage.py::test_an_update_of_one_tap_rebuilds_the_other_taps_damaged_segment",
        "tests/test_mcp_register.py::test_a_config_file_gains_and_loses_only_boost[vscode]",
        "tests/test_untrusted_servers.py::test_a_dripping_embedding_api_cannot_hang_search[drip-headers]",
        "tests/test_untrusted_servers.py::test_a_dripping_embedding_api_cannot_hang_search[drip]",
        "tests/test_untrusted_servers.py::test_a_password_in_the_embedding_url_is_never_printed",
        "tests/test_vectors_hostile.py::test_a_chunk_unit_export_imports_into_its_own_home_and_elsewhere_with_unit",
        "tests/test_vectors_hostile.py::test_non_finite_and_non_unit_vectors_are_refused[huge-numpy]",
        "tests/test_vectors_hostile.py::test_non_finite_and_non_unit_vectors_are_refused[inf-inf-no-numpy]",
        "tests/test_vectors_hostile.py::test_non_finite_and_non_unit_vectors_are_refused[inf-no-numpy]",
        "tests/test_vectors_hostile.py::test_non_finite_and_non_unit_vectors_are_refused[norm-2-numpy]",
        "tests/test_wordpiece.py::test_every_code_point_matches_the_reference_digest",
    }
)


@pytest.hookimpl(tryfirst=True)  # before -m 'not slow' deselects
def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    for item in items:
        if item.nodeid in SLOW_VARIANTS:
            item.add_marker(pytest.mark.slow)
