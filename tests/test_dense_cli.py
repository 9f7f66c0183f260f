"""Dense and hybrid search through the real `boost` CLI, against embedding servers on 127.0.0.1
speaking the OpenAI and Voyage wire formats (tests/embed_stubs.py).

One tapped home (the example registry, BM25 index) and one dense store built from it are
made once per module; each test works on a copy. Every run is checked for leaked API keys.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import sqlite3
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from tests.embed_stubs import StubEmbedServer
from tests.helpers import indexed_example, run_boost

SECRET = "sk-test-0123456789abcdefSECRET"
VOYAGE_SECRET = "pa-test-voyage-9876543210SECRET"
QUERY = "write unit tests for my react components"
MODEL_A = "model-a"


def boost(args: List[str], home: Path, env: Optional[Dict[str, str]] = None) -> Any:
    """Run the CLI with no provider configured except what ``env`` sets; never leak a key."""
    base = {
        "BOOST_EMBED_PROVIDER": "",
        "BOOST_EMBED_MODEL": "",
        "BOOST_EMBED_BASE_URL": "",
        "BOOST_EMBED_API_KEY": "",
        "BOOST_EMBED_TIMEOUT": "",
        "OPENAI_API_KEY": "",
        "VOYAGE_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
    }
    proc = run_boost(args, home, {**base, **(env or {})}, timeout=60)
    for secret in (SECRET, VOYAGE_SECRET):
        assert secret not in proc.stdout and secret not in proc.stderr, args
    return proc


def openai_env(server: StubEmbedServer, model: str = MODEL_A) -> Dict[str, str]:
    return {
        "BOOST_EMBED_BASE_URL": server.base_url,
        "BOOST_EMBED_MODEL": model,
        "BOOST_EMBED_API_KEY": SECRET,
    }


def copy_home(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def store_state(home: Path) -> Tuple[Dict[str, str], Dict[str, str], str]:
    """(meta, taps, sha256 over every vector row) of the home's dense store."""
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        taps = dict(conn.execute("SELECT name, commit_id FROM taps"))
        digest = hashlib.sha256()
        for row in conn.execute("SELECT id, entry_id, chunk, vector FROM items ORDER BY id"):
            digest.update(repr(row[:3]).encode() + row[3])
        return meta, taps, digest.hexdigest()
    finally:
        conn.close()


def error_lines(stderr: str) -> List[str]:
    return [line for line in stderr.splitlines() if line.startswith("boost: error:")]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def tapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the example registry tapped and the BM25 index built."""
    return indexed_example(tmp_path_factory.mktemp("dense-cli"))


@pytest.fixture(scope="module")
def dense_home(tapped: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    """A copy of `tapped` with a dense store built by an OpenAI-compatible server (model-a)."""
    home = copy_home(tapped, tmp_path_factory.mktemp("dense") / "home")
    with StubEmbedServer("openai") as server:
        proc = boost(["reindex", "--dense", "--json"], home, openai_env(server))
    assert proc.returncode == 0, proc.stderr
    yield {
        "home": home,
        "report": json.loads(proc.stdout),
        "requests": list(server.requests),
        "stderr": proc.stderr,
    }


@pytest.fixture
def home(dense_home: Dict[str, Any], tmp_path: Path) -> Path:
    return copy_home(dense_home["home"], tmp_path / "home")


# --------------------------------------------------------------------------- happy paths


def test_reindex_dense_with_an_openai_compatible_server(dense_home: Dict[str, Any]) -> None:
    dense = dense_home["report"]["dense"]
    assert dense["provider"] == "openai-compatible" and dense["model"] == MODEL_A
    assert dense["unit"] == "entry" and dense["backend"] in ("flat", "sqlite-vec")
    assert dense["entries"] == dense["texts"] == dense_home["report"]["bm25"]["entries"] > 20
    assert 0 < dense["sent"] <= dense["texts"]  # identical texts are sent once
    requests = dense_home["requests"]
    assert requests and all(r.path == "/v1/embeddings" for r in requests)
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in requests)
    bodies = [r.body for r in requests]
    assert all(b["model"] == MODEL_A and b["encoding_format"] == "float" for b in bodies)
    assert all("input_type" not in b for b in bodies)
    assert sum(len(b["input"]) for b in bodies) == dense["sent"]
    assert "boost will send" not in dense_home["stderr"]  # a loopback server is local


def test_hybrid_explain_shows_each_engines_rank_for_every_hit(home: Path) -> None:
    with StubEmbedServer("openai") as server:
        proc = boost(
            ["search", "--engine", "hybrid", "--explain", "--no-rerank", QUERY],
            home,
            openai_env(server),
        )
    assert proc.returncode == 0, proc.stderr
    assert [r.body["input"] for r in server.requests] == [[QUERY]]  # one query embedding
    out = proc.stdout
    assert "engine: hybrid" in out
    hits = re.findall(r"^\s*\d+\. (\S+)  \[", out, re.M)
    ranks = re.findall(r"^    ranks: (.*?)  path: ", out, re.M)
    assert hits and len(ranks) == len(hits)
    parsed = [dict(part.split(" #") for part in line.split(", ")) for line in ranks]
    assert all(set(r) <= {"bm25", "dense", "feedback", "widened"} and r for r in parsed)
    assert hits[0] == "example:jest-runner" and {"bm25", "dense"} <= set(parsed[0])
    assert re.search(r"^dense: .*model-a", out, re.M)  # the store's identity


def test_voyage_wire_format_document_then_query(tapped: Path, tmp_path: Path) -> None:
    home = copy_home(tapped, tmp_path / "home")
    env = {"BOOST_EMBED_PROVIDER": "voyage", "VOYAGE_API_KEY": VOYAGE_SECRET}
    with StubEmbedServer("voyage", model="voyage-3.5-lite") as server:
        env["BOOST_EMBED_BASE_URL"] = server.base_url
        built = boost(["reindex", "--dense"], home, env)
        assert built.returncode == 0, built.stderr
        assert "Dense index (voyage/voyage-3.5-lite, entry vectors" in built.stdout
        documents = list(server.requests)
        found = boost(
            ["search", "--engine", "dense", "--no-rerank", "fill in a pdf form"], home, env
        )
    assert found.returncode == 0, found.stderr
    assert documents and all(r.body["input_type"] == "document" for r in documents)
    assert all(r.body["truncation"] is True and "encoding_format" not in r.body for r in documents)
    assert all(r.headers["authorization"] == f"Bearer {VOYAGE_SECRET}" for r in documents)
    query = server.requests[len(documents) :]
    assert [(r.body["input"], r.body["input_type"]) for r in query] == [
        (["fill in a pdf form"], "query")
    ]
    assert found.stdout.splitlines()[0].startswith(" 1. example:")


def test_429_is_retried_then_the_build_succeeds(tapped: Path, tmp_path: Path) -> None:
    home = copy_home(tapped, tmp_path / "home")
    with StubEmbedServer("openai") as server:
        server.script = ["429"]
        proc = boost(["reindex", "--dense", "--json"], home, openai_env(server))
    assert proc.returncode == 0, proc.stderr
    first, retry = server.requests[0], server.requests[1]
    assert first.body == retry.body
    assert json.loads(proc.stdout)["dense"]["entries"] > 20


def test_hash_provider_end_to_end_offline(tapped: Path, tmp_path: Path) -> None:
    home = copy_home(tapped, tmp_path / "home")
    env = {"BOOST_EMBED_PROVIDER": "hash"}
    built = boost(["reindex", "--dense"], home, env)
    assert built.returncode == 0, built.stderr
    assert re.search(r"Dense index \(hash/hash-v1\+[0-9a-f]{8}, entry vectors", built.stdout)
    assert "boost will send" not in built.stderr  # nothing leaves the machine
    found = boost(["search", "--explain", "--no-rerank", "kubernetes manifests"], home, env)
    assert found.returncode == 0, found.stderr
    assert "engine: hybrid" in found.stdout and "degraded" not in found.stdout
    assert "kubernetes" in found.stdout.splitlines()[0]


# --------------------------------------------------------------------------- failures


FAILURES = {
    "500": r"openai-compatible at \S+: HTTP 500 after 4 tries",
    "hang": r"openai-compatible at \S+: timed out after 0\.3 s \(4 tries\)",
    "malformed": r"malformed JSON from openai-compatible at \S+",
    "short": r"openai-compatible at \S+ returned (\d+) vectors for (\d+) inputs",
}


def test_provider_failures_during_reindex_keep_the_previous_store(
    dense_home: Dict[str, Any], tmp_path: Path
) -> None:
    """Re-embedding with another model must pay for every vector first: a server that fails
    (500, too slow, broken JSON, wrong vector count) leaves the model-a store untouched."""
    before = store_state(dense_home["home"])
    assert before[0]["model"] == MODEL_A

    def attempt(mode: str) -> Tuple[str, Any, Path]:
        home = copy_home(dense_home["home"], tmp_path / mode)
        with StubEmbedServer("openai", default=mode, hang_seconds=2) as server:
            env = {**openai_env(server, "model-b"), "BOOST_EMBED_TIMEOUT": "0.3"}
            return mode, boost(["reindex", "--dense"], home, env), home

    with ThreadPoolExecutor(len(FAILURES)) as pool:
        outcomes = list(pool.map(attempt, FAILURES))
    for mode, proc, home in outcomes:
        assert proc.returncode == 6, (mode, proc.stderr)
        assert proc.stdout == "", mode
        (line,) = error_lines(proc.stderr)
        assert line.startswith("boost: error: dense index not finished: "), line
        assert re.search(FAILURES[mode], line), line
        assert line.endswith(
            "— fix the provider and run 'boost reindex --dense' again — what was embedded "
            "so far is cached and will not be sent again"
        )
        assert store_state(home) == before, mode


def test_dead_server_at_search_time(home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    env = {
        "BOOST_EMBED_BASE_URL": dead,
        "BOOST_EMBED_MODEL": MODEL_A,
        "BOOST_EMBED_API_KEY": SECRET,
    }
    reason = (
        f"openai-compatible at {dead}: cannot connect ([Errno 111] Connection refused) after "
        "2 tries — check the embedding provider, or use --engine bm25"
    )
    explicit = boost(["search", "--engine", "dense", "--no-rerank", QUERY], home, env)
    assert explicit.returncode == 6
    assert error_lines(explicit.stderr) == [f"boost: error: {reason}"]
    auto = boost(["search", "--explain", "--no-rerank", QUERY], home, env)
    assert auto.returncode == 0, auto.stderr
    assert auto.stdout.splitlines()[0].startswith(" 1. example:jest-runner")
    ranks = re.findall(r"^    ranks: (.*?)  path: ", auto.stdout, re.M)
    assert ranks and all(r.startswith("bm25 #") and "dense" not in r for r in ranks)
    assert f"note: dense skipped: {reason}" in auto.stderr.splitlines()
    assert f"  degraded/hint: dense skipped: {reason}" in auto.stdout.splitlines()


def test_model_mismatch_degrades_to_bm25_with_the_reason(home: Path) -> None:
    with StubEmbedServer("openai") as server:
        env = openai_env(server, "model-b")
        auto = boost(["search", "--explain", "--no-rerank", QUERY], home, env)
        forced = boost(["search", "--engine", "hybrid", "--no-rerank", QUERY], home, env)
    assert server.requests == []  # parity is checked before anything is sent
    reason = (
        "the vector store was embedded with openai-compatible model-a, "
        "but the configured embedder is openai-compatible model-b"
    )
    assert auto.returncode == 0, auto.stderr
    assert f"note: dense retrieval skipped: {reason}" in auto.stderr.splitlines()
    assert "engine: bm25" in auto.stdout
    assert f"degraded/hint: dense retrieval skipped: {reason}" in auto.stdout
    assert forced.returncode == 6
    assert error_lines(forced.stderr) == [
        f"boost: error: dense retrieval is not ready: {reason} — run 'boost reindex --dense' "
        "to re-embed with the configured embedder"
    ]


def test_a_refused_key_is_never_echoed(tapped: Path, tmp_path: Path) -> None:
    home = copy_home(tapped, tmp_path / "home")
    with StubEmbedServer("openai", default="401") as server:
        proc = boost(["reindex", "--dense"], home, openai_env(server))
        url = server.base_url
    assert proc.returncode == 6
    assert error_lines(proc.stderr) == [
        f"boost: error: dense index not finished: openai-compatible at {url}: HTTP 401 — the "
        "API key was refused; check the key in your environment — fix the provider and run "
        "'boost reindex --dense' again — what was embedded so far is cached and will not be "
        "sent again"
    ]


# --------------------------------------------------------------------------- egress


class _OtherLoopback(ThreadingHTTPServer):
    """Binds 127.0.0.2: loopback to the kernel, but not one of the names `EmbedConfig`
    counts as local, so the CLI treats the server as remote (what this test needs)."""

    def __init__(self, address: Tuple[str, int], handler: Any) -> None:
        super().__init__(("127.0.0.2", address[1]), handler)


def test_egress_notice_is_printed_before_a_remote_run(
    tapped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = copy_home(tapped, tmp_path / "home")
    monkeypatch.setattr(StubEmbedServer, "server_class", _OtherLoopback)
    try:
        server = StubEmbedServer("openai").start()
    except OSError:
        pytest.skip("127.0.0.2 is not bindable here")
    try:
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        url = f"http://127.0.0.2:{port}/v1"
        env = {"BOOST_EMBED_BASE_URL": url, "BOOST_EMBED_MODEL": MODEL_A}
        env["BOOST_EMBED_API_KEY"] = SECRET
        first = boost(["reindex", "--dense", "--json"], home, env)
        again = boost(["reindex", "--dense", "--json"], home, env)
    finally:
        server.stop()
    assert first.returncode == 0, first.stderr
    dense = json.loads(first.stdout)["dense"]
    assert first.stderr.splitlines()[0] == (
        f"boost will send {dense['sent']} texts ({dense['chars_sent']:,} characters of tapped "
        f"skill files) to openai-compatible (127.0.0.2:{port}) to embed them."
    )
    assert dense["sent"] > 20 and server.requests
    assert again.returncode == 0 and "boost will send" not in again.stderr  # nothing new to send
    assert json.loads(again.stdout)["dense"]["sent"] == 0


# --------------------------------------------------------------------------- the flat index


def _random_store(n: int, dims: int, seed: int) -> sqlite3.Connection:
    """An in-memory ``items`` table of ``n`` random unit vectors, with exact duplicates and
    near-ties mixed in (the cases where a quantised ranking would go wrong)."""
    import math
    import random

    from boost_cli.core.embed import pack

    rng = random.Random(seed)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, kind TEXT, vector BLOB)")
    vectors: List[List[float]] = []
    for i in range(n):
        if vectors and i % 7 == 0:
            v = list(vectors[rng.randrange(len(vectors))])  # an exact copy: a tie
        elif vectors and i % 5 == 0:
            v = [x + rng.gauss(0, 1e-4) for x in vectors[-1]]  # a near-tie
        else:
            v = [rng.gauss(0, 1) for _ in range(dims)]
        norm = math.sqrt(sum(x * x for x in v))
        v = [x / norm for x in v]
        vectors.append(v)
        kind = ("skill", "rule", "workflow")[i % 3]
        conn.execute("INSERT INTO items VALUES (?, ?, ?)", (i * 3 + 1, kind, pack(v)))
    return conn


def _needs_numpy(use_numpy: bool) -> None:
    if use_numpy:
        pytest.importorskip("numpy", reason="the numpy path needs numpy (the [local] extra)")


@pytest.mark.parametrize("use_numpy", [False, True], ids=["pure", "numpy"])
@pytest.mark.parametrize("dims", [8, 96])
def test_flat_index_ranks_exactly_like_the_scan(dims: int, use_numpy: bool) -> None:
    import random

    from boost_cli.core.dense.flat import FlatIndex, scan_knn
    from boost_cli.core.embed import unpack

    _needs_numpy(use_numpy)
    conn = _random_store(700, dims, seed=dims)
    rows = conn.execute("SELECT id, kind, vector FROM items ORDER BY id").fetchall()
    index = FlatIndex.decode(FlatIndex.encode(rows))
    assert index is not None and index.n == 700 and index.dims == dims
    rng = random.Random(1)
    for trial in range(30):
        if trial % 3 == 0:  # a stored vector as the query: its copies tie at the top
            query = list(unpack(rows[rng.randrange(len(rows))][2]))
        else:
            query = [rng.gauss(0, 1) for _ in range(dims)]
            norm = sum(x * x for x in query) ** 0.5
            query = [x / norm for x in query]
        k = rng.choice([1, 5, 60, 699, 2000])
        kind = rng.choice([None, "skill", "rule", "workflow", "nonexistent"])
        got = index.knn(conn, query, k, kind, use_numpy=use_numpy)
        assert got == scan_knn(conn, query, k, kind), (trial, k, kind)


@pytest.mark.parametrize("use_numpy", [False, True], ids=["pure", "numpy"])
def test_flat_index_among_some_items_ranks_like_the_scan_of_those(use_numpy: bool) -> None:
    """The tap filter's path: only ``among`` item ids compete (the scan filters by tap;
    here both see the same ids)."""
    import random

    from boost_cli.core.dense.flat import FlatIndex, ranked
    from boost_cli.core.embed import unpack

    _needs_numpy(use_numpy)
    conn = _random_store(500, 24, seed=7)
    rows = conn.execute("SELECT id, kind, vector FROM items ORDER BY id").fetchall()
    index = FlatIndex.decode(FlatIndex.encode(rows))
    assert index is not None
    rng = random.Random(2)
    for trial in range(20):
        among = {r[0] for r in rows if rng.random() < 0.3}
        query = list(unpack(rows[rng.randrange(len(rows))][2]))
        k = rng.choice([1, 10, 100, 400])
        kind = rng.choice([None, "skill", "rule"])
        scored = [
            (i, sum(a * b for a, b in zip(query, unpack(blob))))
            for i, kd, blob in rows
            if i in among and kind in (None, kd)
        ]
        got = index.knn(conn, query, k, kind, among, use_numpy=use_numpy)
        assert got == ranked(scored)[:k], (trial, k, kind)
    assert index.knn(conn, query, 5, None, {10**9}, use_numpy=use_numpy) == []


def test_flat_index_takes_the_numpy_path_only_when_numpy_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The default path follows whether this process imported numpy already: the flat
    search never imports it (a search without the [local] extra stays stdlib-only)."""
    from boost_cli.core.dense import flat
    from boost_cli.core.embed import unpack

    conn = _random_store(50, 8, seed=5)
    rows = conn.execute("SELECT id, kind, vector FROM items ORDER BY id").fetchall()
    index = flat.FlatIndex.decode(flat.FlatIndex.encode(rows))
    assert index is not None
    taken: List[str] = []
    real = (index._candidates, index._candidates_numpy)
    monkeypatch.setattr(index, "_candidates", lambda *a: taken.append("pure") or real[0](*a))
    monkeypatch.setattr(index, "_candidates_numpy", lambda *a: taken.append("numpy") or real[1](*a))
    query = list(unpack(rows[3][2]))
    np: Any = sys.modules.get("numpy") or flat._import_numpy()
    monkeypatch.setitem(sys.modules, "numpy", None)  # as if never imported
    assert flat.loaded_numpy() is None
    expected = index.knn(conn, query, 5, None)
    assert taken == ["pure"]
    if np is None:
        pytest.skip("numpy is not installed: the pure path was checked, not the numpy one")
    monkeypatch.setitem(sys.modules, "numpy", np)
    assert flat.loaded_numpy() is np
    assert index.knn(conn, query, 5, None) == expected
    assert taken == ["pure", "numpy"]


def test_flat_index_blobs_of_another_layout_are_ignored() -> None:
    from boost_cli.core.dense import FlatIndex

    conn = _random_store(20, 4, seed=3)
    blobs = FlatIndex.encode(conn.execute("SELECT id, kind, vector FROM items").fetchall())
    assert FlatIndex.decode(blobs) is not None
    other = dict(blobs, head=blobs["head"].replace(b'"layout": "1"', b'"layout": "2"'))
    assert FlatIndex.decode(other) is None
    assert FlatIndex.decode(dict(blobs, codes=blobs["codes"][:-1])) is None
    assert FlatIndex.decode({k: v for k, v in blobs.items() if k != "errors"}) is None


def test_embed_timeout_setting() -> None:
    from boost_cli.core.embed import resolve_config
    from boost_cli.core.errors import ConfigError

    env = {"BOOST_EMBED_PROVIDER": "hash", "BOOST_EMBED_TIMEOUT": "2.5"}
    assert resolve_config({}, env).timeout == 2.5
    file = {"settings": {"embed": {"provider": "hash", "timeout": 7}}}
    assert resolve_config(file, {}).timeout == 7.0
    assert resolve_config(file, {"BOOST_EMBED_PROVIDER": "hash"}).timeout == 7.0
    assert resolve_config({}, {"BOOST_EMBED_PROVIDER": "hash"}).timeout is None
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(ConfigError) as caught:
            resolve_config({}, {"BOOST_EMBED_PROVIDER": "hash", "BOOST_EMBED_TIMEOUT": bad})
        assert str(caught.value) == (
            f"embedding timeout {bad!r} is not a positive number of seconds — "
            "set BOOST_EMBED_TIMEOUT to e.g. 60, or unset it"
        )


# --------------------------------------------------------------------------- fusion by content


def test_hybrid_fuses_copies_of_one_file_as_one_candidate() -> None:
    """BM25 names copy ``x/a`` of a file, the dense engine ranks both copies of it first:
    the fused hit carries both engines' votes, and dense's next file counts as its #2."""
    from boost_cli.core.models import Entry, Hit
    from boost_cli.core.retrieval import HybridRetriever

    def hit(tap: str, name: str, engine: str, score: float, sha: str) -> Hit:
        entry = Entry(name, "skill", f"{name} description", tap, name, f"{name}/SKILL.md")
        return Hit(entry, score, snippet=f"{name} via {engine}", content_hash=sha)

    bm25 = [hit("x", "a", "bm25", 9.0, "H1"), hit("x", "b", "bm25", 5.0, "H2")]
    bm25[0] = replace(bm25[0], also_in=("y:a",))  # BM25 lists the other copy
    dense = [
        hit("y", "a", "dense", 0.9, "H1"),
        hit("x", "a", "dense", 0.9, "H1"),
        hit("z", "c", "dense", 0.8, "H3"),
    ]
    fused = (
        HybridRetriever(Fixed("bm25", {"q": bm25}), Fixed("dense", {"q": dense}), method="rrf")
        .query("q")
        .hits
    )
    assert [h.entry.qualified_name for h in fused] == ["x:a", "x:b", "z:c"]
    top = fused[0]
    assert dict(top.ranks) == {"bm25": 1, "dense": 1} and top.also_in == ("y:a",)
    assert top.snippet == "a via bm25" and top.content_hash == "H1"
    assert top.score == pytest.approx(2 / 61)
    assert dict(fused[2].ranks) == {"dense": 2}  # the copy did not push it to #3
    assert fused[1].score == fused[2].score == pytest.approx(1 / 62)


class Fixed:
    """A retriever replaying fixed hits per query text."""

    def __init__(self, name: str, hits: Dict[str, List[Any]]) -> None:
        self.name = name
        self.hits = hits

    def query(
        self,
        text: str,
        k: int = 60,
        kind: Optional[str] = None,
        taps: Optional[Any] = None,
        keywords: Any = (),
    ) -> Any:
        from boost_cli.core.retrieval import Retrieved

        return Retrieved(list(self.hits[text][:k]))


def test_a_store_behind_the_taps_is_used_and_named_in_notes_and_doctor(
    tapped: Path, tmp_path: Path
) -> None:
    home = copy_home(tapped, tmp_path / "home")
    env = {"BOOST_EMBED_PROVIDER": "hash"}
    assert boost(["reindex", "--dense"], home, env).returncode == 0
    fresh = boost(["search", "--no-rerank", "kubernetes manifests"], home, env)
    assert "vector store" not in fresh.stderr
    assert boost(["doctor"], home, env).returncode == 0
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    with conn:
        conn.execute("UPDATE taps SET commit_id='0000000'")
    conn.close()
    found = boost(["search", "--explain", "--no-rerank", "kubernetes manifests"], home, env)
    assert found.returncode == 0 and "engine: hybrid" in found.stdout  # still used
    assert (
        "the vector store is out of date for 1 tap (example) — run 'boost reindex --dense'"
        in found.stderr
    )
    doctor = boost(["doctor", "--json"], home, env)
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 1 and report["dense"]["stale_taps"] == ["example"]
    assert "vector store out of date: run 'boost reindex --dense'" in report["fixes"]
    assert boost(["reindex", "--dense"], home, env).returncode == 0
    assert "vector store" not in boost(["search", "kubernetes", "--no-rerank"], home, env).stderr
