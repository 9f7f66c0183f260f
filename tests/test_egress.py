"""One egress rule for the LLM and the embedder: a key merely present in the environment
never makes boost send registry text to a remote embedding API; the in-process model wins
when installed; a named provider honours an explicit base URL (OPENAI_BASE_URL)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

import pytest

from boost_cli.core.embed import local
from boost_cli.core.embed.base import EmbedConfig
from boost_cli.core.embed.config import resolve_config
from tests.embed_stubs import StubEmbedServer
from tests.helpers import indexed_example, run_boost

KEY = "sk-egress-TESTKEY-0123456789"


def test_a_key_alone_picks_no_remote_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_config({}, {"OPENAI_API_KEY": KEY, "VOYAGE_API_KEY": KEY}) is None
    monkeypatch.setattr(local, "installed", lambda: True)
    env = {"OPENAI_API_KEY": KEY, "VOYAGE_API_KEY": KEY, "OPENAI_BASE_URL": "http://x:1/v1"}
    assert resolve_config({}, env).provider == "local"  # the in-process model wins
    named = resolve_config({}, {**env, "BOOST_EMBED_PROVIDER": "openai"})
    assert named == EmbedConfig("openai", "text-embedding-3-small", "http://x:1/v1")
    url = "http://127.0.0.1:9/v1"  # BOOST_EMBED_BASE_URL: the user named that server
    assert resolve_config({}, {**env, "BOOST_EMBED_BASE_URL": url}).provider == (
        "openai-compatible"
    )
    both = {**env, "BOOST_EMBED_PROVIDER": "openai", "BOOST_EMBED_BASE_URL": url}
    assert resolve_config({}, both).base_url == url  # boost's own variable first


def _env(server: StubEmbedServer, **extra: str) -> Dict[str, str]:
    return {
        "PATH": os.path.dirname(os.sys.executable) + os.pathsep + "/usr/bin:/bin",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": server.base_url,
        "BOOST_NO_LLM": "1",
        **extra,
    }


def test_reindex_dense_sends_nothing_for_a_key_and_honours_openai_base_url(
    tmp_path: Path,
) -> None:
    home = indexed_example(tmp_path)
    with StubEmbedServer("openai") as server:
        doc = json.loads(run_boost(["doctor", "--json"], home, env=_env(server)).stdout)
        embedder = doc["dense"].get("embedder") or {}
        assert embedder.get("provider") != "openai" and server.requests == []
        named = _env(server, BOOST_EMBED_PROVIDER="openai", BOOST_EMBED_MODEL="stub-model")
        doc = json.loads(run_boost(["doctor", "--json"], home, env=named).stdout)
        assert doc["dense"]["embedder"]["host"] == server.base_url.split("/")[2]
        r = run_boost(["reindex", "--dense"], home, env=named, timeout=120)
        assert r.returncode == 0, r.stderr
        assert server.requests, "the named provider sends to OPENAI_BASE_URL"
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert KEY not in r.stdout + r.stderr
