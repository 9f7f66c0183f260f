"""`indexing.sync_dense` in process: when it embeds, and why it leaves a tap behind (issue 19).

The functional cases (real CLI subprocesses) are in tests/test_dense_fresh.py; these cover
the reasons a changed tap stays pending, each with its fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from boost_cli.cli import main
from boost_cli.core import indexing, paths
from boost_cli.core.embed import EmbedConfig
from tests.embed_stubs import StubEmbedServer
from tests.helpers import EXAMPLES, commit_all, make_repo, skill


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example registry tapped as ``ex``, indexed and embedded with `hash`."""
    src = make_repo(Path(shutil.copytree(EXAMPLES, tmp_path / "registry")))
    monkeypatch.setenv("BOOST_EMBED_PROVIDER", "hash")
    assert main(["tap", str(src), "--name", "ex"]) == 0
    assert main(["reindex", "--dense"]) == 0
    return src


def change(src: Path) -> None:
    (src / "skills" / "new-one").mkdir()
    (src / "skills" / "new-one" / "SKILL.md").write_text(skill("new-one", "a new skill"))
    commit_all(src, "add a skill")
    # The registry moves on without the write path that would sync (as an older boost did).
    from boost_cli.core import registry

    registry.update(["ex"])


def test_nothing_to_do_and_no_store(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = indexing.sync_dense()
    assert synced is not None and not synced.changed and not synced.pending
    paths.vectors_path().unlink()
    assert indexing.sync_dense() is None  # no store: none is made


def test_a_remote_embedder_is_never_sent_text_by_a_sync(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change(repo)
    monkeypatch.setattr(EmbedConfig, "is_remote", property(lambda self: True))
    synced = indexing.sync_dense()
    assert synced is not None and synced.pending == ("ex",) and not synced.embedded
    assert synced.reason is not None and "run 'boost reindex --dense' to send them" in synced.reason
    assert synced.pending_note() == (
        "the vector store was not updated for ex, so searches rank with BM25 until it is: "
        f"{synced.reason}"
    )


def test_another_embedder_than_the_stores_leaves_the_tap_behind(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change(repo)
    with StubEmbedServer("openai") as server:
        monkeypatch.setenv("BOOST_EMBED_PROVIDER", "")
        monkeypatch.setenv("BOOST_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("BOOST_EMBED_MODEL", "model-a")
        synced = indexing.sync_dense()
        assert not server.requests  # nothing sent: a reset is reindex --dense's to make
    assert synced is not None and synced.pending == ("ex",)
    assert synced.reason is not None and "the vector store was embedded with hash" in synced.reason


def test_a_failing_provider_leaves_the_tap_behind_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = make_repo(Path(shutil.copytree(EXAMPLES, tmp_path / "registry")))
    with StubEmbedServer("openai") as server:
        monkeypatch.setenv("BOOST_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("BOOST_EMBED_MODEL", "model-a")
        assert main(["tap", str(src), "--name", "ex"]) == 0
        assert main(["reindex", "--dense"]) == 0
        change(src)
        server.default = "400"
        synced = indexing.sync_dense()
    assert synced is not None and synced.pending == ("ex",) and not synced.embedded
    assert synced.reason is not None and "dense index not finished" in synced.reason
    assert "what was embedded so far is cached" in synced.reason


def test_summary_names_what_changed() -> None:
    synced = indexing.DenseSync(embedded=("a", "b"), removed=("c",), texts_sent=1, seconds=0.31)
    assert synced.summary() == (
        "Vector store refreshed (2 taps embedded, 1 tap removed; 1 new text embedded in 0.3 s)"
    )
    many = indexing.DenseSync(pending=tuple("abcdefg"), reason="why")
    assert many.pending_note() == (
        "the vector store was not updated for a, b, c, d, e and more, so searches rank with "
        "BM25 until it is: why"
    )
    assert indexing.DenseSync().pending_note() is None
    assert many.to_dict()["pending"] == list("abcdefg")
