"""The vector store end to end: build with the hash embedder, incremental per commit, resume
after a provider failure, parity refusals, the chunk unit, and flat vs sqlite-vec ranking."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from boost_cli.core import catalog, http
from boost_cli.core import embed as E
from boost_cli.core.dense import (
    DenseIndex,
    DenseUnavailable,
    FlatIndex,
    backend_status,
    build_dense,
    egress_summary,
    entry_text,
    open_status,
)
from boost_cli.core.dense import store as dense_store
from boost_cli.core.embed import NO_PROVIDER_FIX, EmbedConfig
from boost_cli.core.errors import ProviderError, UsageError
from boost_cli.core.models import TapSnapshot
from tests.embed_stubs import StubEmbedServer
from tests.helpers import EXAMPLES, ROOT, SKILL

HASH = EmbedConfig("hash", "hash-v1")


def skill(name: str, description: str, body: str) -> str:
    return SKILL.format(name=name, description=description, body=body)


ALPHA = {
    "skills/jest/SKILL.md": skill(
        "jest-runner",
        "Unit testing for React components with Jest and Testing Library",
        "Write tests for React components: render, fire events, mock modules, snapshots.",
    ),
    "skills/pdf/SKILL.md": skill(
        "pdf-forms",
        "Fill in PDF forms programmatically",
        "List the fields of an AcroForm PDF, fill them from JSON and flatten the result.",
    ),
    ".cursor/rules/k8s.mdc": "---\ndescription: Kubernetes manifest standards\n---\n"
    "Set resource requests and limits on every Kubernetes container; liveness probes.\n",
}
BETA = {
    "skills/terraform/SKILL.md": skill(
        "terraform-modules",
        "Terraform module layout and variables",
        "Structure Terraform modules, pin providers, validate variables, plan before apply.",
    ),
    "skills/sql/SKILL.md": skill(
        "postgres-migrations",
        "Ship PostgreSQL schema migrations without downtime",
        "Add columns nullable first, backfill in batches, then add constraints.",
    ),
}


def make_tap(base: Path, name: str, files: Dict[str, str], commit: str) -> TapSnapshot:
    root = base / name
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return TapSnapshot(name, commit, root, catalog.scan_tap(name, root).entries)


@pytest.fixture
def taps(tmp_path: Path) -> List[TapSnapshot]:
    return [make_tap(tmp_path, "alpha", ALPHA, "a1"), make_tap(tmp_path, "beta", BETA, "b1")]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "vectors.sqlite"


def names(hits: list) -> List[str]:
    return [h.entry.qualified_name for h in hits]


# --------------------------------------------------------------------------- end to end


def test_build_and_query_with_the_hash_embedder(taps: List[TapSnapshot], store: Path) -> None:
    report = build_dense(taps, config=HASH, path=store, backend="flat")
    assert report.taps_embedded == ("alpha", "beta") and report.taps_reused == ()
    assert (report.entries, report.texts, report.texts_sent) == (5, 5, 5)
    assert report.backend == "flat" and report.unit == "entry" and report.reset is None
    index = DenseIndex(HASH, path=store, backend="flat")
    hits = index.query("write tests for my react components with jest", k=3)
    assert names(hits)[0] == "alpha:jest-runner"
    top = hits[0]
    assert dict(top.ranks) == {"dense": 1} and [dict(h.ranks)["dense"] for h in hits] == [1, 2, 3]
    assert top.entry.description.startswith("Unit testing for React")
    assert top.snippet.startswith("# jest-runner Write tests for React components")
    raw = (taps[0].root / "skills/jest/SKILL.md").read_bytes()
    assert top.content_hash == hashlib.sha256(raw).hexdigest()
    assert 0 < top.score <= 1 and hits[0].score >= hits[1].score >= hits[2].score
    assert names(index.query("kubernetes containers", k=5, kind="rule")) == ["alpha:k8s"]
    assert index.query("   ") == [] and index.query("x", k=0) == []
    status = index.status()
    assert status.ready and status.info["entries"] == 5 and status.info["dimensions"] == 256
    assert status.info["taps"] == {"alpha": "a1", "beta": "b1"}


def test_entry_text_is_name_description_and_body_start(taps: List[TapSnapshot]) -> None:
    entry = taps[0].entries[0]
    body = "Intro paragraph.\n\n| a | b |\n|---|---|\n" + "word " * 400
    text = entry_text(entry, body)
    head, excerpt = text.split("\n\n", 1)
    assert head == f"{entry.name}. {entry.description}".replace("..", ".")
    assert excerpt.startswith("Intro paragraph. | a | b |") and "---" not in excerpt
    assert len(excerpt) <= 800 and excerpt.endswith("word")


def test_an_index_is_ready_once_built(taps: List[TapSnapshot], store: Path) -> None:
    index = DenseIndex(HASH, path=store, backend="flat")
    assert index.name == "dense" and not index.ready()
    assert build_dense(taps, config=HASH, path=store).entries == 5 and index.ready()
    assert names(index.query("terraform module variables", k=1)) == ["beta:terraform-modules"]


def test_a_tap_filter_applies_before_ranking(
    taps: List[TapSnapshot], store: Path, tmp_path: Path
) -> None:
    copy = make_tap(
        tmp_path, "gamma", {"skills/jest/SKILL.md": ALPHA["skills/jest/SKILL.md"]}, "g1"
    )
    build_dense([*taps, copy], config=HASH, path=store)
    index = DenseIndex(HASH, path=store)
    query = "write tests for react components with terraform"
    everything = index.query(query, k=10)
    assert index.query(query, k=10, taps=()) == everything
    assert index.query(query, k=10, taps=None) == everything
    top = everything[0]  # one hit for the file and its copy
    assert names(everything)[0] == "alpha:jest-runner" and top.also_in == ("gamma:jest-runner",)
    only_gamma = index.query(query, k=10, taps=["gamma"])
    assert names(only_gamma) == ["gamma:jest-runner"] and only_gamma[0].also_in == ()
    beta = index.query(query, k=10, taps=["beta"])
    assert names(beta) == [n for n in names(everything) if n.startswith("beta:")]
    assert [h.score for h in beta] == [h.score for h in everything if h.entry.tap == "beta"]
    assert index.query(query, k=10, kind="rule", taps=["alpha", "beta"]) == [
        h for h in everything if h.entry.kind == "rule"
    ]
    assert index.query(query, taps=["nope"]) == []
    # Without the flat index the plain scan filters the same way.
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'flat_generation'")
    conn.close()
    scanned = DenseIndex(HASH, path=store)
    assert scanned.query(query, k=10, taps=["beta"]) == beta
    assert scanned.query(query, k=10, taps=["nope"]) == []


def test_one_index_keeps_the_flat_index_warm(
    taps: List[TapSnapshot], store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loads: List[int] = []
    real_decode = FlatIndex.decode.__func__  # type: ignore[attr-defined]

    def counting(cls: type, blobs: Dict[str, bytes]) -> Optional[FlatIndex]:
        index = real_decode(cls, blobs)
        loads.append(index.n if index is not None else -1)
        return index

    monkeypatch.setattr(FlatIndex, "decode", classmethod(counting))
    build_dense(taps, config=HASH, path=store)
    index = DenseIndex(HASH, path=store, backend="flat")
    first = index.query("jest react tests")
    assert index.query("jest react tests") == first and index.query("pdf", taps=["alpha"])
    assert loads == [5]  # loaded once for three queries
    assert DenseIndex(HASH, path=store).query("jest react tests") == first
    assert loads == [5, 5]  # a new DenseIndex starts cold
    beta2 = make_tap(tmp_path / "v2", "beta", {"x/SKILL.md": BETA["skills/sql/SKILL.md"]}, "b2")
    build_dense([taps[0], beta2], config=HASH, path=store)
    index.query("jest react tests")
    assert loads == [5, 5, 4]  # a rebuilt store is reloaded by the same DenseIndex


# --------------------------------------------------------------------------- incremental


def test_incremental_by_commit_and_removed_taps(
    tmp_path: Path, taps: List[TapSnapshot], store: Path
) -> None:
    build_dense(taps, config=HASH, path=store)
    again = build_dense(taps, config=HASH, path=store)
    assert again.taps_embedded == () and again.taps_reused == ("alpha", "beta")
    assert again.texts_sent == 0
    changed = dict(BETA)
    changed["skills/sql/SKILL.md"] = skill(
        "postgres-migrations", "Zero-downtime PostgreSQL migrations", "Backfill in batches."
    )
    beta2 = make_tap(tmp_path, "beta", changed, "b2")
    report = build_dense([taps[0], beta2], config=HASH, path=store)
    assert report.taps_embedded == ("beta",) and report.taps_reused == ("alpha",)
    assert report.texts == 2 and report.texts_sent == 1  # the unchanged skill came from the cache
    assert _counted(store) == (5, 5)
    only_alpha = build_dense([taps[0]], config=HASH, path=store)
    assert only_alpha.taps_removed == ("beta",) and only_alpha.entries == 3
    index = DenseIndex(HASH, path=store)
    assert all(h.entry.tap == "alpha" for h in index.query("postgres migrations terraform"))
    assert _counted(store) == (3, 3)


def _counted(path: Path) -> Tuple[int, int]:
    """The store's (entries, vectors) as `Store.counts` reports them (from the per-tap
    counts), checked against counting the rows themselves."""
    store = dense_store.open_existing(path)
    try:
        rows = tuple(
            store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("entries", "items")
        )
        assert store.counts() == rows
        return store.counts()
    finally:
        store.close()


def test_progress_counts_what_the_whole_build_sends(
    tmp_path: Path, taps: List[TapSnapshot], store: Path
) -> None:
    calls: List[tuple] = []
    build_dense(taps, config=HASH, path=store, progress=lambda *a: calls.append(a))
    assert calls[-1] == (5, 5, "beta") and (3, 5, "alpha") in calls
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)  # one count for all taps
    twin = make_tap(tmp_path, "twin", ALPHA, "t1")  # alpha's files again: all cached
    calls.clear()
    build_dense([*taps, twin], config=HASH, path=store, progress=lambda *a: calls.append(a))
    assert calls == []  # nothing to send, nothing to report
    calls.clear()
    build_dense(
        [*taps, twin], config=HASH, path=store, force=True, progress=lambda *a: calls.append(a)
    )
    assert calls == []  # a forced rebuild from the cache sends nothing either


def test_interrupted_build_resumes_without_resending(
    taps: List[TapSnapshot], store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "_sleep", lambda s: None)
    monkeypatch.setitem(E.LIMITS, "openai-compatible", E.Limits(2, 10**6, 10_000))
    with StubEmbedServer("openai") as server:
        config = EmbedConfig("openai-compatible", "m", base_url=server.base_url)
        server.script = ["ok", "500"]  # alpha's 3 texts: the first batch of 2 lands, then 500
        with pytest.raises(ProviderError) as err:
            build_dense(taps, config=config, path=store, max_retries=1)
        assert str(err.value).startswith(
            f"dense index not finished: openai-compatible at {config.endpoint}: HTTP 500"
        )
        assert "cached and will not be sent again" in (err.value.fix or "")
        conn = sqlite3.connect(store)
        assert conn.execute("SELECT COUNT(*) FROM cache").fetchone() == (2,)
        assert conn.execute("SELECT COUNT(*) FROM items").fetchone() == (0,)  # no half tap
        assert conn.execute("SELECT COUNT(*) FROM taps").fetchone() == (0,)
        conn.close()
        sent_before = sum(len(batch) for batch in server.inputs())
        report = build_dense(taps, config=config, path=store)
        assert report.texts == 5 and report.texts_sent == 3
        assert sum(len(batch) for batch in server.inputs()) - sent_before == 3
        hits = DenseIndex(config, path=store).query("jest react tests")
        assert len(hits) == 5
        assert server.requests[-1].body["input"] == ["jest react tests"]


# --------------------------------------------------------------------------- parity


def test_query_with_another_model_is_refused_and_a_rebuild_re_embeds(
    taps: List[TapSnapshot], store: Path
) -> None:
    build_dense(taps, config=HASH, path=store)
    other = EmbedConfig("hash", "hash-v1", dimensions=64)
    index = DenseIndex(other, path=store)
    with pytest.raises(DenseUnavailable) as err:
        index.query("jest")
    assert err.value.reason.startswith(
        "the vector store was embedded with hash hash-v1+"
    ) and err.value.reason.endswith(", 64 dimensions — run 'boost reindex --dense' to re-embed")
    status = index.status()
    assert not status.ready and "configured embedder is hash" in (status.reason or "")
    report = build_dense(taps, config=other, path=store)
    assert report.reset is not None and "was embedded with" in report.reset
    assert report.taps_embedded == ("alpha", "beta") and report.texts_sent == 5
    assert DenseIndex(other, path=store).status().info["dimensions"] == 64
    assert len(index.query("jest")) == 5
    with pytest.raises(DenseUnavailable, match="was embedded with"):
        DenseIndex(HASH, path=store).query("jest")


def test_a_unit_change_or_force_resets(taps: List[TapSnapshot], store: Path) -> None:
    build_dense(taps, config=HASH, path=store)
    forced = build_dense(taps, config=HASH, path=store, force=True)
    assert forced.reset == "forced" and forced.taps_embedded == ("alpha", "beta")
    assert forced.texts_sent == 0  # reset keeps the cache
    chunked = build_dense(taps, config=HASH, path=store, unit="chunk")
    assert chunked.reset == "the vector store holds entry vectors, chunk vectors were asked for"
    with pytest.raises(UsageError, match="unknown dense unit"):
        build_dense(taps, config=HASH, path=store, unit="page")


def test_served_model_change_is_refused(
    taps: List[TapSnapshot], store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubEmbedServer("openai") as server:
        config = EmbedConfig("openai-compatible", "m", base_url=server.base_url)
        build_dense(taps, config=config, path=store)
        server.model = "another-model"
        with pytest.raises(DenseUnavailable, match="now serves 'another-model'"):
            DenseIndex(config, path=store).query("jest")
        server.dims = 4
        with pytest.raises(DenseUnavailable, match="query vector has 4 dimensions"):
            DenseIndex(config, path=store).query("jest")


def test_provider_failure_at_query_time_is_a_reason(
    taps: List[TapSnapshot], store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "_sleep", lambda s: None)
    with StubEmbedServer("openai") as server:
        config = EmbedConfig("openai-compatible", "m", base_url=server.base_url)
        build_dense(taps, config=config, path=store)
        server.default = "500"
        with pytest.raises(DenseUnavailable) as err:
            DenseIndex(config, path=store).query("jest")
    assert err.value.reason == (
        f"openai-compatible at {config.endpoint}: HTTP 500 after 2 tries — check the "
        "embedding provider, or use --engine bm25"
    )


def test_not_built_and_not_configured(store: Path, taps: List[TapSnapshot]) -> None:
    with pytest.raises(DenseUnavailable, match="no dense index yet — run 'boost reindex --dense'"):
        DenseIndex(HASH, path=store).query("jest")
    assert not store.exists()  # a query never creates the store
    status = open_status(HASH, path=store)
    assert (status.exists, status.ready, status.reason) == (False, False, "no dense index yet")
    build_dense(taps, config=HASH, path=store)
    unconfigured = DenseIndex(path=store)  # conftest clears every BOOST_EMBED_* variable
    assert unconfigured.config is None
    status = unconfigured.status()
    assert (status.reason, status.fix) == ("no embedding provider is configured", NO_PROVIDER_FIX)
    with pytest.raises(DenseUnavailable, match="no embedding provider"):
        unconfigured.query("jest")
    voyage = DenseIndex(EmbedConfig("voyage", "v"), path=store)
    assert not voyage.ready()


def test_default_path_follows_boost_home(boost_home: Path, taps: List[TapSnapshot]) -> None:
    build_dense(taps, config=HASH)
    assert (boost_home / "cache" / "vectors.sqlite").exists()
    assert DenseIndex(HASH).ready()


def test_a_corrupt_store_is_refused_then_rebuilt(store: Path, taps: List[TapSnapshot]) -> None:
    store.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DenseUnavailable, match="unreadable"):
        DenseIndex(HASH, path=store).query("jest")
    assert build_dense(taps, config=HASH, path=store).entries == 5
    assert DenseIndex(HASH, path=store).ready()


def test_another_format_version_is_rebuilt(store: Path, taps: List[TapSnapshot]) -> None:
    build_dense(taps, config=HASH, path=store)
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("UPDATE meta SET value='999' WHERE key='format_version'")
    conn.close()
    with pytest.raises(DenseUnavailable, match="format '999'"):
        DenseIndex(HASH, path=store).query("jest")
    assert build_dense(taps, config=HASH, path=store).taps_embedded == ("alpha", "beta")


# --------------------------------------------------------------------------- chunk unit


def test_chunk_unit_one_vector_per_chunk_hits_per_entry(tmp_path: Path, store: Path) -> None:
    sections = "\n\n".join(
        f"## Section {i}\n\n" + (f"topic{i} " * 120) for i in ("alpha", "beta", "gamma")
    )
    long_skill = skill("long-guide", "A long guide with several sections", sections)
    tap = make_tap(tmp_path, "gamma", {**BETA, "skills/long/SKILL.md": long_skill}, "g1")
    report = build_dense([tap], config=HASH, path=store, unit="chunk")
    assert report.texts > report.entries == 3
    hits = DenseIndex(HASH, path=store).query("topicbeta section beta", k=10)
    assert names(hits)[0] == "gamma:long-guide"
    assert len(names(hits)) == len(set(names(hits))) == 3  # one hit per entry
    assert "topicbeta" in hits[0].snippet


def test_chunk_unit_widens_when_one_entry_crowds_the_nearest(tmp_path: Path, store: Path) -> None:
    sections = "\n\n".join(f"## Part {i}\n\n" + "kubernetes pods " * 80 for i in range(12))
    crowd = skill("k8s-guide", "Kubernetes", sections)
    tap = make_tap(tmp_path, "gamma", {**BETA, "skills/k8s/SKILL.md": crowd}, "g1")
    report = build_dense([tap], config=HASH, path=store, unit="chunk")
    assert report.texts >= 12
    hits = DenseIndex(HASH, path=store).query("kubernetes pods", k=2)
    assert len(hits) == 2 and names(hits)[0] == "gamma:k8s-guide"


# --------------------------------------------------------------------------- egress


def test_egress_summary_counts_only_what_would_be_sent(
    taps: List[TapSnapshot], store: Path
) -> None:
    where, n, chars = egress_summary(taps, HASH, path=store)
    assert (where, n) == ("hash (local)", 5) and chars > 200
    assert not store.exists()
    build_dense(taps[:1], config=HASH, path=store)
    _, n2, chars2 = egress_summary(taps, HASH, path=store)
    assert n2 == 2 and chars2 < chars
    build_dense(taps, config=HASH, path=store)
    assert egress_summary(taps, HASH, path=store)[1:] == (0, 0)
    voyage = EmbedConfig("voyage", "voyage-3.5-lite")
    assert egress_summary(taps, voyage, path=store) == ("voyage (api.voyageai.com)", 5, chars)


# --------------------------------------------------------------------------- backends


def test_backend_status_explains_itself() -> None:
    name, note = backend_status()
    if name == "flat":
        assert note.startswith("exact flat scan (")
        assert "'.[rag]'" in note
    else:
        assert name == "sqlite-vec" and note.startswith("sqlite-vec v")


def test_flat_backend_without_numpy_ranks_like_numpy(
    taps: List[TapSnapshot], store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    build_dense(taps, config=HASH, path=store)
    with_default = DenseIndex(HASH, path=store, backend="flat").query("react jest pdf terraform")
    real_import = builtins.__import__

    def no_numpy(name: str, *args: object, **kwargs: object) -> object:
        if name == "numpy":
            raise ImportError("no numpy")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    pure = DenseIndex(HASH, path=store, backend="flat").query("react jest pdf terraform")
    assert names(pure) == names(with_default)
    assert [h.score for h in pure] == pytest.approx([h.score for h in with_default], abs=1e-6)


VEC_VENV = Path(os.environ.get("BOOST_VEC_VENV", "/tmp/boost-vec-venv"))
_PROBE = (
    "import sqlite3, sqlite_vec; c = sqlite3.connect(':memory:'); "
    "c.enable_load_extension(True); sqlite_vec.load(c)"
)


def _vec_python() -> Optional[Path]:
    """A Python whose sqlite3 loads sqlite-vec: a venv under /tmp made once from Debian's
    /usr/bin/python3 (which can load extensions) and reused; None when it cannot be made."""
    py = VEC_VENV / "bin" / "python"

    def works() -> bool:
        try:
            return (
                subprocess.run([str(py), "-c", _PROBE], capture_output=True, timeout=60).returncode
                == 0
            )
        except (OSError, subprocess.TimeoutExpired):
            return False

    if py.exists() and works():
        return py
    base = Path("/usr/bin/python3")
    if not base.exists():
        return None
    try:
        subprocess.run(
            [str(base), "-m", "venv", str(VEC_VENV)], capture_output=True, timeout=120, check=True
        )
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "sqlite-vec>=0.1.6"],
            capture_output=True,
            timeout=300,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return py if works() else None


_VEC_SCRIPT = """
import json, sys
from pathlib import Path
from boost_cli.core import catalog
from boost_cli.core.dense import DenseIndex, build_dense
from boost_cli.core.embed import EmbedConfig
from boost_cli.core.models import TapSnapshot
root, store, queries = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
snap = TapSnapshot("ex", "c1", root, catalog.scan_tap("ex", root).entries)
config = EmbedConfig("hash", "hash-v1")
report = build_dense([snap], config=config, path=store, backend="sqlite-vec")
out = {"backend": report.backend, "vec": {}, "flat": {}}
for backend in ("vec", "flat"):
    index = DenseIndex(config, path=store, backend="sqlite-vec" if backend == "vec" else "flat")
    for q, kind in queries:
        hits = index.query(q, k=5, kind=kind)
        out[backend][q] = [[h.entry.qualified_name, h.score] for h in hits]
print(json.dumps(out))
"""

QUERIES = [
    ["test my react app", None],
    ["fill a pdf form", None],
    ["kubernetes pods crash", None],
    ["security review of dependencies", "skill"],
    ["commit message conventions", "rule"],
]


@pytest.mark.slow
def test_flat_and_sqlite_vec_return_the_same_top_hits(tmp_path: Path) -> None:
    py = _vec_python()
    if py is None:
        pytest.skip("no Python with a sqlite3 that loads sqlite-vec could be made here")
    store = tmp_path / "vectors.sqlite"
    proc = subprocess.run(
        [str(py), "-c", _VEC_SCRIPT, str(EXAMPLES), str(store), json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["backend"] == "sqlite-vec"
    # This process cannot load extensions: it reads the same store with the flat scan.
    here = DenseIndex(HASH, path=store)
    assert here.status().info["backend"] == "flat"
    for q, kind in QUERIES:
        vec, flat = out["vec"][q], out["flat"][q]
        local = [[h.entry.qualified_name, h.score] for h in here.query(q, k=5, kind=kind)]
        assert [n for n, _ in vec] == [n for n, _ in flat] == [n for n, _ in local], q
        assert [s for _, s in vec] == pytest.approx([s for _, s in local], abs=1e-5)
    assert out["vec"]["fill a pdf form"][0][0] == "ex:pdf-forms"
