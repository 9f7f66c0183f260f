"""Issue 19: an existing vector store follows the taps, and a search never answers from
vectors of a tap that is gone or of another commit.

Real `boost` subprocesses on an isolated BOOST_HOME. Vectors come from the offline `hash`
provider, or from the OpenAI-format stub server on 127.0.0.1 where a test counts the
texts sent (tests/embed_stubs.py); never from the real model.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from tests.embed_stubs import StubEmbedServer
from tests.helpers import EXAMPLES, commit_all, make_repo, run_boost, skill

HASH = {"BOOST_EMBED_PROVIDER": "hash"}
PDF_SIGNER = skill(
    "pdf-signer",
    "Sign PDF documents digitally with certificates and verify PDF signatures",
    "Sign a PDF with an X.509 certificate, then verify every signature in it.",
)
SIGN_QUERY = "sign a pdf with a certificate"


def boost(args: List[str], home: Path, env: Optional[Dict[str, str]] = None) -> Any:
    proc = run_boost(args, home, {**HASH, **(env or {})}, timeout=90)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc


def ids(home: Path, query: str, *extra: str, env: Optional[Dict[str, str]] = None) -> List[str]:
    proc = boost(["search", query, "--json", "--no-llm", "-n", "10", *extra], home, env)
    return [h["id"] for h in json.loads(proc.stdout)]


def store_taps(home: Path) -> Dict[str, str]:
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    try:
        return dict(conn.execute("SELECT name, commit_id FROM taps"))
    finally:
        conn.close()


def store_items(home: Path) -> Set[Tuple[str, str, str]]:
    """(tap, entry id, text hash) of every vector in the home's store."""
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    try:
        return set(conn.execute("SELECT tap, entry_id, text_hash FROM items"))
    finally:
        conn.close()


def config_commits(home: Path) -> Dict[str, str]:
    taps = json.loads((home / "config.json").read_text())["taps"]
    return {n: t["commit"] for n, t in taps.items()}


def example(tmp_path: Path, name: str = "example-registry") -> Path:
    return make_repo(Path(shutil.copytree(EXAMPLES, tmp_path / name)))


def other_registry(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "other",
        {
            "skills/zeppelin/SKILL.md": skill(
                "zeppelin-pilot", "Fly a zeppelin airship", "Ballast, helium and mooring masts."
            )
        },
    )


@pytest.fixture
def dense_home(tmp_path: Path) -> Tuple[Path, Path]:
    """(home, source repo): the example registry tapped as ``ex``, BM25 and dense built."""
    src = example(tmp_path)
    home = tmp_path / "home"
    boost(["tap", str(src), "--name", "ex"], home)
    boost(["reindex", "--dense"], home)
    return home, src


def test_tap_embeds_the_new_tap_into_an_existing_store(
    dense_home: Tuple[Path, Path], tmp_path: Path
) -> None:
    home, _ = dense_home
    proc = boost(["tap", str(other_registry(tmp_path)), "--name", "other"], home)
    assert "Vector store refreshed (1 tap embedded; 1 new text embedded in" in proc.stdout
    assert store_taps(home) == config_commits(home)
    assert ids(home, "zeppelin airship", "--engine", "dense")[0] == "other:zeppelin-pilot"
    found = boost(["search", "zeppelin airship", "--no-llm", "--explain"], home)
    assert "engine: hybrid" in found.stdout and "dense skipped" not in found.stderr


def test_tap_without_a_store_makes_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = boost(["tap", str(example(tmp_path)), "--name", "ex"], home)
    assert "Vector store" not in proc.stdout + proc.stderr
    assert not (home / "cache" / "vectors.sqlite").exists()


def add_pdf_signer(src: Path) -> None:
    (src / "skills" / "pdf-signer").mkdir()
    (src / "skills" / "pdf-signer" / "SKILL.md").write_text(PDF_SIGNER)
    commit_all(src, "add pdf-signer")


def test_update_with_a_new_skill_ranks_it_where_bm25_does(dense_home: Tuple[Path, Path]) -> None:
    """The issue's case: after an update added a matching skill, hybrid had it 6th where
    BM25 had it 1st (the store still held the old commit)."""
    home, src = dense_home
    add_pdf_signer(src)
    proc = boost(["update"], home)
    assert "Vector store refreshed (1 tap embedded; 1 new text embedded" in proc.stdout
    assert store_taps(home) == config_commits(home)
    bm25 = ids(home, SIGN_QUERY, "--engine", "bm25")
    assert bm25[0] == "ex:pdf-signer"
    assert ids(home, SIGN_QUERY, "--engine", "hybrid")[0] == "ex:pdf-signer"
    assert ids(home, SIGN_QUERY, "--engine", "dense")[0] == "ex:pdf-signer"


def test_update_sends_only_the_new_text_to_the_embedder(tmp_path: Path) -> None:
    src = example(tmp_path)
    home = tmp_path / "home"
    with StubEmbedServer("openai") as server:
        env = {
            "BOOST_EMBED_PROVIDER": "",
            "BOOST_EMBED_BASE_URL": server.base_url,
            "BOOST_EMBED_MODEL": "model-a",
        }
        boost(["tap", str(src), "--name", "ex"], home, env)
        boost(["reindex", "--dense"], home, env)
        before = len(server.requests)
        add_pdf_signer(src)
        boost(["update"], home, env)
        sent = [t for r in server.requests[before:] for t in r.body["input"]]
        assert len(sent) == 1 and sent[0].startswith("pdf-signer. Sign PDF documents")
        assert store_taps(home) == config_commits(home)
        # The stub's vectors are a hash of the text: the text itself is its own nearest.
        assert ids(home, sent[0], "--engine", "dense", env=env)[0] == "ex:pdf-signer"


def test_untap_drops_the_tap_from_the_store_at_once(
    dense_home: Tuple[Path, Path], tmp_path: Path
) -> None:
    home, _ = dense_home
    boost(["tap", str(example(tmp_path, "copy")), "--name", "twin"], home)
    assert set(store_taps(home)) == {"ex", "twin"}
    # No embedder is needed to drop a tap: none is configured here.
    proc = boost(["untap", "ex"], home, {"BOOST_EMBED_PROVIDER": "none"})
    assert "Vector store refreshed (1 tap removed; 0 new texts embedded" in proc.stdout
    assert set(store_taps(home)) == {"twin"}
    assert {tap for tap, _, _ in store_items(home)} == {"twin"}
    for engine in ("dense", "hybrid"):
        found = ids(home, "kubernetes manifests", "--engine", engine)
        assert found and all(i.startswith("twin:") for i in found), engine


def test_a_store_holding_a_tap_no_longer_tapped_never_answers_with_it(
    dense_home: Tuple[Path, Path], tmp_path: Path
) -> None:
    """Query side: a store that still holds a tap (copied in, or written by an older boost)
    does not return its entries: their files are gone."""
    home, _ = dense_home
    wider = tmp_path / "wider"
    shutil.copytree(home, wider, symlinks=True)
    boost(["tap", str(other_registry(tmp_path)), "--name", "other"], wider)
    assert set(store_taps(wider)) == {"ex", "other"}
    shutil.copy(wider / "cache" / "vectors.sqlite", home / "cache" / "vectors.sqlite")
    for engine in ("dense", "hybrid"):
        found = ids(home, "zeppelin airship", "--engine", engine)
        assert found and not any(i.startswith("other:") for i in found), engine
    assert ids(home, "zeppelin airship", "--engine", "dense", env={})  # no error either


def test_a_tap_the_store_lacks_at_its_commit_leaves_the_query_to_bm25(
    dense_home: Tuple[Path, Path],
) -> None:
    """When the update could not embed (no embedder then), the store holds the old commit:
    the update says so, dense never answers with the old vectors, and hybrid ranks exactly
    as BM25 does, with a note, rather than fuse a ranking that cannot see the new skill."""
    home, src = dense_home
    old = store_taps(home)["ex"]
    add_pdf_signer(src)
    proc = boost(["update"], home, {"BOOST_EMBED_PROVIDER": "none"})
    assert "note: the vector store was not updated for ex, so searches rank with BM25" in (
        proc.stderr
    )
    assert "no embedding provider is configured" in proc.stderr
    assert store_taps(home)["ex"] == old != config_commits(home)["ex"]
    hybrid = boost(["search", SIGN_QUERY, "--json", "--no-llm", "-n", "10"], home)
    assert (
        "note: dense skipped: the vector store is out of date for 1 tap (ex) — run "
        "'boost reindex --dense'" in hybrid.stderr
    )
    assert [h["id"] for h in json.loads(hybrid.stdout)] == ids(home, SIGN_QUERY, "--engine", "bm25")
    assert ids(home, SIGN_QUERY, "--engine", "dense") == []  # only vectors of the old commit
    quiet = run_boost(["search", SIGN_QUERY, "--no-llm", "-q"], home, HASH)
    assert quiet.returncode == 0 and quiet.stderr == ""
    # The next write path with the embedder back catches up: only the new text is new.
    proc = boost(["reindex"], home)
    assert "Vector store refreshed (1 tap embedded; 1 new text embedded" in proc.stdout
    assert ids(home, SIGN_QUERY, "--engine", "hybrid")[0] == "ex:pdf-signer"


def test_a_repaired_tap_is_re_embedded_from_its_real_files(tmp_path: Path) -> None:
    """A store filled from a damaged clone under the tap's own commit (an older boost killed
    mid-update): the update that repairs the clone re-embeds the tap, and the store then
    holds exactly what a fresh home's does."""
    src = example(tmp_path)
    home = tmp_path / "home"
    boost(["tap", str(src), "--name", "ex"], home)
    clone = home / "repos" / "ex" / "skills" / "jest-runner" / "SKILL.md"
    clone.write_text(skill("jest-runner", "zeta zeta", "Zeta zeta zeta."))
    boost(["reindex", "--dense"], home)
    assert ids(home, "zeta", "--engine", "dense")[0] == "ex:jest-runner"
    damaged = store_items(home)
    proc = boost(["update"], home)
    assert "up to date at" in proc.stdout
    fresh = tmp_path / "fresh"
    boost(["tap", str(src), "--name", "ex"], fresh)
    boost(["reindex", "--dense"], fresh)
    assert store_items(home) == store_items(fresh) != damaged
    assert ids(home, "zeta", "--engine", "hybrid") == ids(fresh, "zeta", "--engine", "hybrid")


def test_a_moved_home_keeps_its_store_in_step(
    dense_home: Tuple[Path, Path], tmp_path: Path
) -> None:
    """BOOST_HOME copied elsewhere: its store answers, and the write paths there keep it
    in step (tap, update, untap)."""
    home, src = dense_home
    moved = tmp_path / "elsewhere" / "boost"
    shutil.copytree(home, moved, symlinks=True)
    shutil.rmtree(home)
    assert ids(moved, "kubernetes manifests", "--engine", "dense")[0].startswith("ex:")
    boost(["tap", str(other_registry(tmp_path)), "--name", "other"], moved)
    add_pdf_signer(src)
    boost(["update"], moved)
    assert store_taps(moved) == config_commits(moved)
    assert ids(moved, SIGN_QUERY, "--engine", "hybrid")[0] == "ex:pdf-signer"
    assert ids(moved, "zeppelin airship", "--engine", "hybrid")[0] == "other:zeppelin-pilot"
    boost(["untap", "other"], moved)
    assert set(store_taps(moved)) == {"ex"}
