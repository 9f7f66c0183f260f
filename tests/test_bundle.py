"""`boost bundle export|import`: the real CLI between two homes, and the file format.

A bundle must let a home with nothing cloned search and show exactly what the exporting
home does, be the same bytes for the same taps at the same commits, and be refused whole
(nothing written) when it is damaged, truncated, foreign or hostile.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any, Dict, List

import pytest

from boost_cli.core import bundlefile
from boost_cli.core.bundlefile import BundleReader, BundleWriter, canonical
from boost_cli.core.errors import UsageError
from tests.helpers import commit_all, make_repo, run_boost, skill

QUERIES = [
    "test my React app",
    "review a pull request",
    "make my web page usable with a screen reader",
]


def _hits(home: Path, query: str) -> List[Dict[str, Any]]:
    r = run_boost(["search", query, "--json", "--no-rerank", "--limit", "10"], home)
    assert r.returncode == 0, r.stderr
    return [{k: h[k] for k in ("id", "score", "path", "why")} for h in json.loads(r.stdout)]


@pytest.fixture
def exported(tmp_path: Path, example_repo: Path) -> Dict[str, Path]:
    src = tmp_path / "src-home"
    assert run_boost(["tap", str(example_repo), "--name", "example"], src).returncode == 0
    other = make_repo(
        tmp_path / "other",
        {
            "skills/pdf-forms/SKILL.md": skill(
                "pdf-forms", "Fill PDF forms", "Use pdftk to fill forms."
            ),
            "skills/pdf-forms/fill.py": "print('fill')\n",
        },
    )
    assert run_boost(["tap", str(other), "--name", "other"], src).returncode == 0
    assert run_boost(["reindex"], src).returncode == 0
    out = tmp_path / "team.bundle"
    r = run_boost(["bundle", "export", str(out)], src)
    assert r.returncode == 0, r.stderr
    return {"src": src, "bundle": out, "other": other}


def test_a_home_with_nothing_cloned_answers_as_the_exporter(
    exported: Dict[str, Path], tmp_path: Path
) -> None:
    replica = tmp_path / "replica"
    r = run_boost(["bundle", "import", str(exported["bundle"]), "--json"], replica)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [t["name"] for t in report[0]["taps"]] == ["example", "other"]
    # The bundled segments are taken as they are: nothing is chunked again on import.
    assert report[0]["index"]["built"] == []
    assert sorted(report[0]["index"]["reused"]) == ["example", "other"]
    assert not (replica / "repos" / "example" / ".git").exists()
    for query in QUERIES:
        want = _hits(exported["src"], query)
        got = _hits(replica, query)
        assert [(h["id"], h["score"], h["path"], h["why"]) for h in got] == [
            (h["id"], h["score"], h["path"], h["why"]) for h in want
        ]
    shown = run_boost(["show", "other:pdf-forms"], replica)
    assert shown.returncode == 0 and "Use pdftk to fill forms." in shown.stdout
    assert (
        replica / "repos" / "other" / "skills" / "pdf-forms" / "fill.py"
    ).read_text() == "print('fill')\n"
    taps = json.loads(run_boost(["taps", "--json"], replica).stdout)
    digest = report[0]["digest"]
    assert {t["name"]: t["bundle"] for t in taps} == {"example": digest, "other": digest}
    table = run_boost(["taps"], replica, env={"COLUMNS": "200"}).stdout
    assert f"imported from bundle {digest[:12]}" in table


def test_two_exports_of_the_same_state_are_the_same_bytes(
    exported: Dict[str, Path], tmp_path: Path
) -> None:
    again = tmp_path / "again.bundle"
    assert run_boost(["bundle", "export", str(again)], exported["src"]).returncode == 0
    assert again.read_bytes() == exported["bundle"].read_bytes()
    # And a replica's re-export of what it imported is the same bundle too.
    replica = tmp_path / "replica"
    assert run_boost(["bundle", "import", str(exported["bundle"])], replica).returncode == 0
    third = tmp_path / "third.bundle"
    assert run_boost(["bundle", "export", str(third)], replica).returncode == 0
    assert (
        json.loads(_header(third))["members"] == json.loads(_header(exported["bundle"]))["members"]
    )


def _header(path: Path) -> bytes:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[16:24])
    return data[24 : 24 + n]


def test_export_of_named_taps_only(exported: Dict[str, Path], tmp_path: Path) -> None:
    one = tmp_path / "one.bundle"
    r = run_boost(["bundle", "export", str(one), "--tap", "other", "--json"], exported["src"])
    assert r.returncode == 0, r.stderr
    assert [t["name"] for t in json.loads(r.stdout)["taps"]] == ["other"]
    bad = run_boost(
        ["bundle", "export", str(tmp_path / "x.bundle"), "--tap", "nope"], exported["src"]
    )
    assert bad.returncode != 0 and "no tap named 'nope'" in bad.stderr


def test_update_of_an_imported_tap_says_import_a_newer_bundle(
    exported: Dict[str, Path], tmp_path: Path
) -> None:
    replica = tmp_path / "replica"
    run_boost(["bundle", "import", str(exported["bundle"])], replica)
    r = run_boost(["update", "other"], replica)
    assert r.returncode != 0
    assert "imported from a bundle" in r.stdout + r.stderr
    assert "boost bundle import" in r.stdout + r.stderr


def test_a_newer_bundle_replaces_the_import(exported: Dict[str, Path], tmp_path: Path) -> None:
    replica = tmp_path / "replica"
    run_boost(["bundle", "import", str(exported["bundle"])], replica)
    other = exported["other"]
    (other / "skills" / "csv-clean").mkdir(parents=True)
    (other / "skills" / "csv-clean" / "SKILL.md").write_text(
        skill("csv-clean", "Clean CSV files", "Deduplicate rows of a spreadsheet export.")
    )
    (other / "skills" / "pdf-forms" / "fill.py").unlink()
    commit_all(other)
    assert run_boost(["update", "other"], exported["src"]).returncode == 0
    newer = tmp_path / "newer.bundle"
    assert (
        run_boost(["bundle", "export", str(newer), "--tap", "other"], exported["src"]).returncode
        == 0
    )
    r = run_boost(["bundle", "import", str(newer), "--json"], replica)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["taps"][0]["replaced"] is True
    hits = _hits(replica, "deduplicate spreadsheet rows")
    assert hits and hits[0]["id"] == "other:csv-clean"
    assert not (replica / "repos" / "other" / "skills" / "pdf-forms" / "fill.py").exists()
    assert not [p for p in (replica / "repos").iterdir() if p.name.startswith(".clone-")]


def test_a_cloned_tap_of_the_same_name_is_not_replaced(
    exported: Dict[str, Path], tmp_path: Path
) -> None:
    r = run_boost(["bundle", "import", str(exported["bundle"])], exported["src"])
    assert r.returncode == 2
    assert "already exists, cloned from" in r.stderr
    assert (exported["src"] / "repos" / "example" / ".git").is_dir()


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "empty", "tail"])
def test_a_damaged_bundle_is_refused_and_nothing_is_written(
    exported: Dict[str, Path], tmp_path: Path, damage: str
) -> None:
    data = bytearray(exported["bundle"].read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "foreign":
        data = bytearray(b"PK\x03\x04 not a bundle at all")
    elif damage == "empty":
        data = bytearray()
    else:
        data[-1] ^= 1
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(bytes(data))
    replica = tmp_path / "replica"
    r = run_boost(["bundle", "import", str(bad)], replica)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "bundle" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (replica / "repos").exists() or not any((replica / "repos").iterdir())
    assert (
        not (replica / "config.json").exists()
        or json.loads((replica / "config.json").read_text())["taps"] == {}
    )


def _forge(path: Path, members: Dict[str, bytes], meta: Dict[str, Any]) -> None:
    """A well-formed bundle (valid digests) with whatever members and meta: what a hostile
    exporter could write."""
    with BundleWriter(path) as w:
        for name, data in members.items():
            w.add(name, data)
        w.finish(meta)


def _row(name: str = "evil") -> Dict[str, Any]:
    return {
        "name": name,
        "source": "x",
        "url": "x",
        "commit": "a" * 40,
        "counts": {"skill": 1},
        "warnings": 0,
        "files": 1,
        "vectors": False,
    }


def _catalog(commit: str = "a" * 40) -> bytes:
    return canonical({"version": 2, "commit": commit, "entries": [], "warnings": [], "skipped": {}})


@pytest.mark.parametrize(
    "members,meta,expect",
    [
        ({"evil/catalog.json": _catalog()}, {"taps": [_row("../x")]}, "refuses or repeats"),
        ({"evil/catalog.json": _catalog()}, {"taps": [_row(), _row()]}, "refuses or repeats"),
        (
            {"evil/catalog.json": _catalog(), "other/files/a.md": b"x"},
            {"taps": [_row()]},
            "of no tap it lists",
        ),
        ({"evil/catalog.json": _catalog("b" * 40)}, {"taps": [_row()]}, "of another commit"),
        (
            {"evil/catalog.json": _catalog(), "evil/index/../../x.seg": b"x"},
            {"taps": [_row()]},
            None,
        ),
        (
            {"evil/catalog.json": _catalog(), "evil/index/segments/x.bin": b"x"},
            {"taps": [_row()]},
            "not a member a tap carries",
        ),
        (
            {"evil/catalog.json": _catalog(), "evil/files/.boost-bundle": b"{}"},
            {"taps": [_row()]},
            "keeps for itself",
        ),
        ({"evil/catalog.json": b"not json"}, {"taps": [_row()]}, "not JSON"),
        ({}, {"taps": []}, "tap list is malformed"),
    ],
)
def test_a_hostile_bundle_is_refused(
    tmp_path: Path, members: Dict[str, bytes], meta: Dict[str, Any], expect: Any
) -> None:
    path = tmp_path / "evil.bundle"
    try:
        _forge(path, members, meta)
    except UsageError:
        assert expect is None  # the writer itself refuses a name that escapes
        return
    home = tmp_path / "home"
    r = run_boost(["bundle", "import", str(path)], home)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert expect in r.stderr
    assert not (home / "repos").exists() or not [
        p for p in (home / "repos").iterdir() if not p.name.endswith(".lock")
    ]


def test_a_member_escaping_the_tap_is_refused_by_the_reader(tmp_path: Path) -> None:
    """A file written by hand (not by BundleWriter) with a '..' member name."""
    path = tmp_path / "raw.bundle"
    _forge(path, {"evil/catalog.json": _catalog(), "evil/files/ok.md": b"x"}, {"taps": [_row()]})
    data = path.read_bytes().replace(b"evil/files/ok.md", b"evil/files/../ab")
    import hashlib

    body = data[:-32]
    path.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(UsageError, match="'\\.\\.' path part"):
        BundleReader(path)


def test_member_names_are_checked() -> None:
    ok = ["a/b.md", "tap/files/skills/x/SKILL.md", "a b/c"]
    bad = ["", "/abs", "a/../b", "a/./b", "a//b", "a/.git/config", "a\\b", "a\nb", "a/", "x" * 2000]
    assert [bundlefile.check_member_name(n) for n in ok] == [None] * len(ok)
    assert all(bundlefile.check_member_name(n) for n in bad)


def test_a_member_larger_than_recorded_is_refused(tmp_path: Path) -> None:
    """A lying size must not decompress past it (a zip bomb stops at the stated size)."""
    path = tmp_path / "bomb.bundle"
    with BundleWriter(path) as w:
        w.add("t/files/a", b"\0" * 100_000)
        w.finish({})
    data = bytearray(path.read_bytes())
    header = _header(path)
    forged = header.replace(b'"size":100000', b'"size":000010')
    assert len(forged) == len(header)
    data[24 : 24 + len(header)] = forged
    import hashlib

    body = bytes(data[:-32])
    path.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(UsageError), BundleReader(path) as r:
        r.read("t/files/a")


def test_round_trip_of_the_file_format(tmp_path: Path) -> None:
    path = tmp_path / "x.bundle"
    with BundleWriter(path) as w:
        w.add("a/one", b"1" * 5000)
        w.add("a/two", b"")
        size, digest = w.finish({"k": "v"})
    assert path.stat().st_size == size
    with BundleReader(path) as r:
        assert r.meta == {"k": "v"}
        assert r.order == ["a/one", "a/two"]
        assert r.read("a/one") == b"1" * 5000 and r.read("a/two") == b""
        assert r.digest == digest
        dest = tmp_path / "out"
        r.extract("a/one", dest)
        assert dest.read_bytes() == b"1" * 5000
        with pytest.raises(FileExistsError):
            r.extract("a/one", dest)


def test_vectors_travel_in_the_bundle(exported: Dict[str, Path], tmp_path: Path) -> None:
    """With a vector store at the taps' commits, the bundle carries it and a replica with the
    same embedder searches hybrid with nothing embedded."""
    env = {"BOOST_EMBED_PROVIDER": "hash"}
    src = exported["src"]
    assert run_boost(["reindex", "--dense"], src, env=env).returncode == 0
    out = tmp_path / "dense.bundle"
    r = run_boost(["bundle", "export", str(out), "--json"], src, env=env)
    assert r.returncode == 0, r.stderr
    assert all(t["vectors"] for t in json.loads(r.stdout)["taps"])
    replica = tmp_path / "replica"
    r = run_boost(["bundle", "import", str(out), "--json"], replica, env=env)
    assert r.returncode == 0, r.stderr
    taps = json.loads(r.stdout)[0]["taps"]
    assert all(t["vectors"] and t["vectors"] > 0 for t in taps), taps
    query = ["search", "--engine", "hybrid", "--json", "--no-rerank", "fill in a pdf form"]
    want = json.loads(run_boost(query, src, env=env).stdout)
    got = json.loads(run_boost(query, replica, env=env).stdout)
    assert [(h["id"], h["score"]) for h in got] == [(h["id"], h["score"]) for h in want]
    # Without that embedder the taps still import, and say why the vectors were left out.
    bare = tmp_path / "bare"
    r = run_boost(
        ["bundle", "import", str(out), "--json"], bare, env={"BOOST_EMBED_PROVIDER": "none"}
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)[0]["taps"]
    assert all(t["vectors"] is None and t["notes"] for t in rows)
    assert all(n.startswith("vectors left out: ") for t in rows for n in t["notes"])
    assert run_boost(["search", "pdf form", "--no-rerank"], bare).returncode == 0
