"""What a long-lived process keeps between calls (issue 21), unit by unit: the parsed
config (`config.current`), the tap list, a trust summary (`trust_scan._parsed`), and the
why's markup stripping, whose guards must change no result."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

from boost_cli.core import config, paths, registry, trust_scan, why
from boost_cli.core.errors import ConfigError
from boost_cli.core.text import one_line


def _write_config(taps: dict) -> Path:
    path = paths.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "taps": taps, "settings": {}}), encoding="utf-8")
    return path


def _tap(commit: str) -> dict:
    return {"source": "/src", "url": "/src", "commit": commit, "counts": {"skill": 1}}


def test_current_is_shared_while_the_bytes_stay_and_new_when_they_change() -> None:
    assert config.current()["taps"] == {}  # no file yet: the empty config
    path = _write_config({"a": _tap("1" * 40)})
    first = config.current()
    assert config.current() is first and first == config.load()
    assert config.load() is not config.load()  # load stays a fresh dict for edit()
    stat = path.stat()
    _write_config({"a": _tap("2" * 40)})  # same size, same mtime
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    second = config.current()
    assert second is not first and second["taps"]["a"]["commit"] == "2" * 40


def test_current_reads_crlf_like_load_and_refuses_what_load_refuses() -> None:
    path = paths.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"taps": {"a": {"commit": "c"}},\r\n"settings": {}}\r\n')
    assert config.current() == config.load()
    path.write_bytes(b'{"taps": [}\r\n\r\n')
    with pytest.raises(ConfigError) as got:
        config.current()
    with pytest.raises(ConfigError) as want:
        config.load()
    assert str(got.value) == str(want.value)
    path.write_bytes(b'{"taps": "x"}')
    with pytest.raises(ConfigError, match="unexpected shape"):
        config.current()
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8"):
        config.current()


def test_current_follows_a_moved_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_config({"a": _tap("1" * 40)})
    assert list(config.current()["taps"]) == ["a"]
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "other"))
    assert config.current()["taps"] == {}
    _write_config({"a": _tap("1" * 40)})  # the same bytes under another path
    assert list(config.current()["taps"]) == ["a"]


def test_list_taps_follows_the_config() -> None:
    _write_config({"b": _tap("1" * 40), "a": _tap("2" * 40), "..": _tap("3" * 40)})
    taps = registry.list_taps()
    assert [t.name for t in taps] == ["a", "b"]
    taps.clear()  # a caller's list is its own
    assert [t.name for t in registry.list_taps()] == ["a", "b"]
    _write_config({"a": _tap("4" * 40)})
    assert [(t.name, t.commit) for t in registry.list_taps()] == [("a", "4" * 40)]


def test_a_summary_is_parsed_once_per_file(tmp_path: Path) -> None:
    path = tmp_path / "t@c.v1.flags.json"
    path.write_text('{"n": 1}', encoding="utf-8")
    first = trust_scan._parsed(path, memo=True)
    assert trust_scan._parsed(path, memo=True) is first
    assert trust_scan._parsed(path, memo=False) is not first
    stat = path.stat()
    tmp = tmp_path / "tmp"
    tmp.write_text('{"n": 2}', encoding="utf-8")  # same size, same mtime, a new inode
    os.utime(tmp, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(tmp, path)
    assert trust_scan._parsed(path, memo=True) == {"n": 2}
    path.unlink()
    with pytest.raises(OSError):
        trust_scan._parsed(path, memo=True)


def _strip_reference(text: str) -> str:
    """`why.strip_inline` as it was: every pattern on every line."""
    text = why._IMAGE.sub("", text)
    text = why._LINK.sub(r"\1", text)
    text = why._REF_LINK.sub(r"\1", text)
    text = why._AUTOLINK.sub("", text)
    text = why._URL.sub("", text)
    text = why._HTML.sub("", text)
    text = why._EMPHASIS.sub("", text)
    text = why._UNDERSCORE_EMPHASIS.sub(r"\1", text)
    return one_line(text)


PIECES = [
    "word",
    " ",
    "![",
    "](",
    "][",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "http",
    "://",
    "s",
    "*",
    "**",
    "_",
    "__",
    "`",
    "!",
    "<!--",
    "-->",
    "<a href='x'>",
    "</a>",
    "mailto:",
    "x.y/z",
    "\t",
    "é",
]


def test_strip_inline_guards_change_no_result() -> None:
    rng = random.Random(21)
    lines = [
        "See [the docs](https://x.io/a_b) and ![img](p.png) for **bold** _it_ `code`.",
        "<https://auto.link> and <b>html</b> <!-- note --> ref [text][1] __u__ *e*",
        "plain prose with no markup at all",
    ]
    lines += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    for line in lines:
        assert why.strip_inline(line) == _strip_reference(line), line


def test_reason_with_terms_given_is_reason_without() -> None:
    passage = "# Title\n\nKnit the scarf with cable stitches in wool. Block it after.\n"
    query = "knit a woollen scarf cable"
    terms = why.query_terms(query)
    assert why.reason(query, passage, "A scarf.", 200, terms) == why.reason(
        query, passage, "A scarf.", 200
    )
    assert re.search("cable", why.reason(query, passage, "A scarf.", 200))


def test_boost_home_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "a"))
    assert paths.boost_home() == tmp_path / "a" and paths.boost_home() is paths.boost_home()
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "b"))
    assert paths.tap_dir("t") == tmp_path / "b" / "repos" / "t"
    monkeypatch.delenv("BOOST_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "u1"))
    assert paths.boost_home() == tmp_path / "u1" / ".boost"
    monkeypatch.setenv("HOME", str(tmp_path / "u2"))
    assert paths.config_path() == tmp_path / "u2" / ".boost" / "config.json"
    monkeypatch.setenv("BOOST_HOME", "~/x")
    assert paths.boost_home() == tmp_path / "u2" / "x"
    monkeypatch.setenv("HOME", str(tmp_path / "u3"))
    assert paths.boost_home() == tmp_path / "u3" / "x"


def test_not_prose_counts_what_the_pattern_matches() -> None:
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0, 128)] + ["é", "ß", "٣", "\u00a0", "中", "_", " "]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.5:
            text = text.encode("ascii", "ignore").decode("ascii")
        assert why._not_prose(text) == len(why._NOT_PROSE.findall(text)), repr(text)
