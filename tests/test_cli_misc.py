"""`boost doctor` and `boost discover` through `main(argv)`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from boost_cli.cli import main
from tests.helpers import ROOT

FAKE_GH = ROOT / "tests" / "fakebin"


def test_doctor_empty_home(capsys: pytest.CaptureFixture) -> None:
    assert main(["doctor"]) == 1  # it printed a fix line
    out = capsys.readouterr().out
    assert "taps: 0" in out and "fix: no taps: run 'boost tap --defaults'" in out
    assert out.startswith("boost: 0.") and " on Python 3." in out
    assert "(not created yet)" in out


def test_doctor_reports_index_state(example_repo: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["index"]["status"] == "missing"
    assert "no search index: run 'boost reindex'" in report["fixes"]
    assert report["dense"]["ready"] is False and report["dense"]["backend"] in (
        "flat",
        "sqlite-vec",
    )
    assert main(["reindex"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "index: fresh" in out and "fix:" not in out
    assert report["disk"]["total"] > 0 and report["disk"]["repos"] > 0
    assert re.search(r"^home: .* \([\d.]+ MB on disk", out, re.M)


def test_doctor_checks_every_byte_of_the_index(
    example_repo: Path, capsys: pytest.CaptureFixture
) -> None:
    """A query reads only the posting lists it needs and does not checksum them, so bytes
    flipped inside a tier file can go unnoticed there; `boost doctor` reads the whole
    index and checks each file against the manifest's CRC32."""
    from boost_cli.core import paths

    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    assert main(["reindex"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 0
    assert "index: fresh" in capsys.readouterr().out
    tier = next((paths.index_dir() / "tiers").iterdir())
    data = bytearray(tier.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0x5A for b in data[middle : middle + 64])
    tier.write_bytes(bytes(data))
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["index"]["status"] == "damaged"
    assert "checksum mismatch" in report["index"]["reason"]
    assert "index damaged: run 'boost reindex --force'" in report["fixes"]
    assert main(["reindex", "--force"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 0
    assert "index: fresh" in capsys.readouterr().out


def test_doctor_names_a_damaged_related_terms_table_and_reindex_mends_it(
    example_repo: Path, capsys: pytest.CaptureFixture
) -> None:
    """A search skips a damaged table without a word (it only widens the task's words), so
    the plain path ranks worse until `boost reindex` rebuilds it: doctor says so."""
    from boost_cli.core import paths

    assert main(["tap", str(example_repo), "--name", "example"]) == 0
    assert main(["reindex"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["index"]["related_terms"] is True
    table = paths.related_path()
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0x5A
    table.write_bytes(bytes(data))
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["index"]["related_terms"] is False
    assert any(f.startswith("related-terms table missing or damaged") for f in report["fixes"])
    assert main(["reindex"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 0
    assert "fix:" not in capsys.readouterr().out


def test_doctor_reports_a_corrupt_config_instead_of_failing(
    boost_home: Path, capsys: pytest.CaptureFixture
) -> None:
    boost_home.mkdir(parents=True)
    (boost_home / "config.json").write_text("{not json")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "config: unreadable — " in out and "is not valid JSON" in out
    assert "fix: config unreadable: " in out and "taps: 0" in out
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["status"] == "unreadable" and report["taps"] == []


def test_discover_with_fake_gh(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_GH}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_FIXTURE", "search_code_skills.json")
    assert main(["discover", "pdf", "forms"]) == 0
    out = capsys.readouterr().out
    assert "REPOSITORY" in out and "boost tap OWNER/REPO" in out
    assert main(["discover", "pdf", "--json", "--limit", "2"]) == 0
    repos = json.loads(capsys.readouterr().out)
    assert 0 < len(repos) <= 2 and {"repo", "url", "hits"} <= set(repos[0])


def test_discover_without_gh(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["discover", "pdf"]) == 1
    assert "https://cli.github.com" in capsys.readouterr().err


def test_discover_failure(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_GH}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_MODE", "fail")
    assert main(["discover", "pdf"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("boost: error:") and err.count("\n") == 1


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from boost_cli.commands.render import Status, configure, progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress("indexing") is None
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with Status() as status:
        report = progress("indexing", status)
        assert report is not None
        report(1, 2, "tapA")
        report(2, 2)
    # the line stays up until the work is over (no blank line while the merge runs)
    assert tty.getvalue() == "\r  indexing 1/2 · tapA\x1b[K\r  indexing 2/2\x1b[K\r\x1b[K"
    configure(verbosity=-1)  # -q: no progress at all
    try:
        assert progress("indexing", Status()) is None
    finally:
        configure()


def test_progress_shows_the_time_left_from_the_rate_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from boost_cli.commands.render import duration, progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "80")
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    now = [100.0]
    report = progress("embedding", clock=lambda: now[0])
    assert report is not None
    report(10, 1000, "a")  # the first report sets the pace's origin
    now[0] = 101.0
    report(20, 1000, "a")  # 1 s: too early to guess
    now[0] = 104.0
    report(70, 1000, "b")  # 60 texts in 4 s: 930 left take 62 s
    assert tty.getvalue().split("\r")[-1] == "  embedding 70/1000 · 1 min 02 s left · b\x1b[K"
    now[0] = 108.0  # a label too long for 80 columns is cut; the estimate stays
    report(130, 1000, "x" * 200)
    frame = tty.getvalue().split("\r")[-1]
    assert frame.startswith("  embedding 130/1000 · 58 s left · xxx") and len(frame) <= 79 + 3
    report(5, 7)  # another total: a new count, no estimate yet
    assert tty.getvalue().split("\r")[-1] == "  embedding 5/7\x1b[K"
    assert [duration(s) for s in (0.4, 59.6, 61, 3599, 3600, 7322)] == [
        "0 s",
        "1 min 00 s",
        "1 min 01 s",
        "59 min 59 s",
        "1 h 00 min",
        "2 h 02 min",
    ]
