"""`boost vectors export|import`: one tap's vectors to a deterministic file and back.

Two homes share one example registry: "alice" embeds it through an OpenAI-compatible stub
server on 127.0.0.1 and exports; "bob" imports, and every request the server sees is
counted, so "nothing was sent" is observed rather than assumed."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from boost_cli.cli import main
from boost_cli.core.dense import load_file
from tests.embed_stubs import StubEmbedServer
from tests.helpers import EXAMPLES, commit_all, make_repo

QUERY = "write unit tests for my react components"


@pytest.fixture
def server() -> Iterator[StubEmbedServer]:
    with StubEmbedServer("openai") as stub:
        yield stub


@pytest.fixture
def setup(
    tmp_path: Path,
    server: StubEmbedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> Dict[str, Any]:
    """Alice's home: the example registry tapped, indexed, embedded (model-a), exported."""
    repo = make_repo(shutil.copytree(EXAMPLES, tmp_path / "registry"))
    monkeypatch.setenv("BOOST_EMBED_BASE_URL", server.base_url)
    monkeypatch.setenv("BOOST_EMBED_MODEL", "model-a")
    alice = tmp_path / "alice"
    monkeypatch.setenv("BOOST_HOME", str(alice))
    assert main(["tap", str(repo), "--name", "example"]) == 0
    assert main(["reindex", "--dense"]) == 0
    exported = tmp_path / "example.vectors.jsonl"
    assert main(["vectors", "export", "example", str(exported)]) == 0
    capsys.readouterr()
    return {"repo": repo, "alice": alice, "file": exported, "sent": len(server.requests)}


def as_bob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path, tap: bool = True) -> Path:
    bob = tmp_path / "bob"
    monkeypatch.setenv("BOOST_HOME", str(bob))
    if tap:
        assert main(["tap", str(repo), "--name", "example"]) == 0
        assert main(["reindex"]) == 0
    return bob


def error(capsys: pytest.CaptureFixture) -> str:
    return capsys.readouterr().err


def test_export_is_deterministic_and_carries_the_parity_block(
    setup: Dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    again = tmp_path / "again.jsonl"
    assert main(["vectors", "export", "example", str(again), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    data = setup["file"].read_bytes()
    assert again.read_bytes() == data
    lines = data.decode("utf-8").splitlines()
    header = json.loads(lines[0])
    assert sorted(header) == ["commit", "count", "format", "parity", "source", "tap", "version"]
    assert header["format"] == "boost-vectors" and header["version"] == 1
    assert header["tap"] == "example" and header["source"] == str(setup["repo"])
    assert header["parity"] == {
        "provider": "openai-compatible",
        "model": "model-a",
        "requested_dimensions": "0",
        "unit": "entry",
        "normalisation": "l2",
        "parity": "",
        "dimensions": "8",
        "served_model": "stub-model",
    }
    hashes = [json.loads(line)[0] for line in lines[1:]]
    assert hashes == sorted(hashes) and len(set(hashes)) == header["count"] == len(hashes) > 20
    assert report["vectors"] == header["count"] and report["commit"] == header["commit"]


def test_import_then_search_sends_only_the_query_and_round_trips_byte_for_byte(
    setup: Dict[str, Any],
    server: StubEmbedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    as_bob(tmp_path, monkeypatch, setup["repo"])
    capsys.readouterr()
    assert main(["vectors", "import", str(setup["file"]), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["built"] and row["sent"] == 0 and row["covered"] == row["texts"] == row["cached"]
    assert len(server.requests) == setup["sent"]  # the import sent nothing
    back = tmp_path / "back.jsonl"
    assert main(["vectors", "export", "example", str(back)]) == 0
    assert back.read_bytes() == setup["file"].read_bytes()
    capsys.readouterr()
    assert main(["search", QUERY, "--engine", "hybrid", "--json", "--no-llm"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and any("dense" in h["ranks"] for h in hits)
    assert server.inputs()[setup["sent"] :] == [[QUERY]]  # one request: the query


def test_import_refuses_vectors_of_another_embedder(
    setup: Dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    bob = as_bob(tmp_path, monkeypatch, setup["repo"])
    monkeypatch.setenv("BOOST_EMBED_MODEL", "model-b")
    capsys.readouterr()
    assert main(["vectors", "import", str(setup["file"])]) == 7
    assert error(capsys) == (
        "boost: error: example.vectors.jsonl was embedded with openai-compatible model-a, "
        "but the configured embedder is openai-compatible model-b — configure the embedder "
        "the file names (docs/dense.md), or embed with yours: 'boost reindex --dense'\n"
    )
    assert not (bob / "cache" / "vectors.sqlite").exists()
    monkeypatch.setenv("BOOST_EMBED_MODEL", "model-a")
    monkeypatch.setenv("BOOST_EMBED_DIMENSIONS", "4")
    assert main(["vectors", "import", str(setup["file"])]) == 7
    assert "example.vectors.jsonl was embedded with openai-compatible model-a, but the " in (
        error(capsys)
    )


def test_import_of_a_tap_that_is_not_tapped_says_how_to_tap_it(
    setup: Dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    as_bob(tmp_path, monkeypatch, setup["repo"], tap=False)
    assert main(["vectors", "import", str(setup["file"])]) == 3
    assert error(capsys) == (
        "boost: error: tap 'example' (the tap example.vectors.jsonl holds) is not tapped — "
        "tap it first, then import again: 'boost tap SOURCE --name example'; the file says "
        f"SOURCE is '{setup['repo']}', but anyone can write a vectors file: check that it is "
        "the registry you mean\n"
    )


def test_import_at_another_commit_caches_and_leaves_the_changed_texts_to_reindex(
    setup: Dict[str, Any],
    server: StubEmbedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    repo: Path = setup["repo"]
    skill = next(repo.rglob("SKILL.md"))
    text = skill.read_text(encoding="utf-8")
    skill.write_text(text + "\nA line past what is embedded.\n" + "x " * 2000, encoding="utf-8")
    commit_all(repo, "a change no embedded text sees")
    as_bob(tmp_path, monkeypatch, repo)
    capsys.readouterr()
    assert main(["vectors", "import", str(setup["file"])]) == 0
    assert "(the file is of commit " in capsys.readouterr().out  # same texts: built anyway
    skill.write_text(text.replace("description: ", "description: Edited. ", 1), encoding="utf-8")
    commit_all(repo, "edit one skill's description")
    shutil.rmtree(tmp_path / "bob")
    bob = as_bob(tmp_path, monkeypatch, repo)
    capsys.readouterr()
    assert main(["vectors", "import", str(setup["file"])]) == 0
    out = capsys.readouterr().out
    assert "still need embedding — run 'boost reindex --dense'" in out
    assert " 1 of its " in out
    assert len(server.requests) == setup["sent"]
    assert not _store_taps(bob)  # nothing half-built
    assert main(["reindex", "--dense"]) == 0
    assert [len(batch) for batch in server.inputs()[setup["sent"] :]] == [1]  # the edited one


def test_export_refusals(
    setup: Dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    out = str(tmp_path / "x.jsonl")
    assert main(["vectors", "export", "nope", out]) == 3
    assert error(capsys).startswith("boost: error: no tap named 'nope'")
    repo: Path = setup["repo"]
    (repo / "new-rule.md").write_text("---\ndescription: a new rule\n---\nBody.\n")
    commit_all(repo, "add a rule")
    assert main(["update", "example"]) == 0
    capsys.readouterr()
    assert main(["vectors", "export", "example", out]) == 2
    assert "the tap is at" in (err := error(capsys))
    assert err.endswith("— run 'boost reindex --dense' first, then export\n")
    assert not Path(out).exists()
    assert main(["tap", str(repo), "--name", "other"]) == 0
    capsys.readouterr()
    assert main(["vectors", "export", "other", out]) == 2
    assert error(capsys) == (
        "boost: error: the vector store holds no vectors for tap 'other' — run 'boost "
        "reindex --dense' first (see 'boost doctor' for the store)\n"
    )


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: ["not json"], "is not a boost vectors file"),
        (lambda lines: lines[:-1], "is truncated or damaged"),
        (lambda lines: [*lines[:2], '["abc", "AAAA"]', *lines[3:]], "line 3 is not a vector"),
        (lambda lines: [lines[0].replace('"version":1', '"version":9')], "version 9 vectors"),
        (lambda lines: [lines[0].replace('"tap":"example"', '"tap":""')], "names no tap"),
    ],
)
def test_damaged_files_are_refused(
    setup: Dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture, damage: Any, message: str
) -> None:
    lines: List[str] = setup["file"].read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    assert main(["vectors", "import", str(bad)]) == 2
    assert message in error(capsys)
    with pytest.raises(Exception, match=message):
        load_file(bad)


def _store_taps(home: Path) -> Dict[str, str]:
    path = home / "cache" / "vectors.sqlite"
    if not path.exists():
        return {}
    conn = sqlite3.connect(str(path))
    try:
        return dict(conn.execute("SELECT name, commit_id FROM taps"))
    finally:
        conn.close()
