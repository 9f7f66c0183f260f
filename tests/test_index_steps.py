"""The steps of a build, each on literals: contents (dedupe, chunk, byte spans), invert,
a tap's postings sections, the hash-bucketed term dictionary and its look-up, and the
tier plan, frontier and block maxima."""

from __future__ import annotations

import zlib
from array import array

import pytest

from boost_cli.core.index import tier
from boost_cli.core.index.contents import ChunkTable, ContentTable, byte_spans, chunk_file
from boost_cli.core.index.layout import KIND_BITS, NO_SPAN
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.postings import (
    Row,
    bucket_count,
    dictionary,
    find_row,
    invert,
    rows,
    tap_sections,
)
from boost_cli.core.models import Entry
from boost_cli.core.tokenize import tokenize

PARAMS = IndexParams()


def entry(path: str, kind: str = "skill", name: str = "n", description: str = "") -> Entry:
    return Entry(
        name=name,
        kind=kind,
        description=description,
        tap="t",
        rel_dir=path.rsplit("/", 1)[0],
        path=path,
    )


# --------------------------------------------------------------------------- contents


def test_byte_spans_of_ascii_and_non_ascii_text() -> None:
    assert byte_spans("abc def", [(0, 3), (4, 7)]) == [(0, 3), (4, 7)]
    text = "é a ü b"  # é and ü are two bytes each in UTF-8
    assert byte_spans(text, [(0, 1), (2, 3), (4, 5)]) == [(0, 2), (3, 4), (5, 7)]
    encoded = text.encode("utf-8")
    assert encoded[5:7].decode("utf-8") == "ü"


def test_content_table_indexes_each_distinct_file_once() -> None:
    table = ContentTable()
    assert table.add(entry("a/SKILL.md"), b"same") == 0
    assert table.add(entry("b/x.md", kind="workflow"), b"other") == 1
    assert table.add(entry("c/y.md", kind="workflow"), b"same") is None  # a copy of content 0
    assert len(table) == 2
    assert [e["path"] for e in table.entries[0]] == ["a/SKILL.md", "c/y.md"]
    assert table.kinds[0] == KIND_BITS["skill"] | KIND_BITS["workflow"]
    assert table.records[1] == {"size": 5, "crc32": zlib.crc32(b"other")}
    assert len(table.hashes[0]) == 32


def test_chunk_file_spans_point_at_the_chunk_bytes() -> None:
    data = "---\nname: n\n---\n# Título\n\nzebras run fast\n".encode()
    (row,) = chunk_file(entry("a/SKILL.md"), data, "t", PARAMS, prefix=False).rows
    text = data.decode("utf-8")
    assert text[row.start : row.end] == data[row.byte_start : row.byte_end].decode("utf-8")
    assert row.crc32 == zlib.crc32(data[row.byte_start : row.byte_end])
    assert "zebra" in row.terms and "n" not in row.terms  # the frontmatter is not indexed
    (prefixed,) = chunk_file(entry("a/SKILL.md"), data, "t", PARAMS, prefix=True).rows
    assert prefixed.terms == tokenize("n. Título") + row.terms  # name and heading path


def test_chunk_file_with_prefix_scores_name_and_description_too() -> None:
    e = entry("pdf/SKILL.md", name="pdf-tools", description="Work with PDF documents")
    (row,) = chunk_file(e, b"Fill forms.\n", "t", PARAMS, prefix=True).rows
    assert row.terms[: row.terms.index("fill")] == ["pdf", "tool", "work", "pdf", "document"]
    # An empty body: one empty chunk under prefix (found by name), none without it.
    assert chunk_file(e, b"", "t", PARAMS, prefix=False).rows == []
    (empty,) = chunk_file(e, b"", "t", PARAMS, prefix=True).rows
    assert (empty.start, empty.end, empty.byte_start, empty.byte_end) == (0, 0, 0, 0)
    assert "pdf" in empty.terms


def test_chunk_file_of_a_file_that_is_not_utf8_has_no_byte_span() -> None:
    (row,) = chunk_file(
        entry("l/SKILL.md"), "café zebras\n".encode("latin-1"), "t", PARAMS, False
    ).rows
    assert (row.byte_start, row.byte_end, row.crc32) == (NO_SPAN, NO_SPAN, 0)


def test_chunk_table_keeps_each_contents_first_chunk() -> None:
    chunks = ChunkTable()
    rows = chunk_file(entry("a/SKILL.md"), b"one two\n", "t", PARAMS, prefix=False).rows
    chunks.add(0, rows)
    chunks.add(1, [])  # a content without chunks
    chunks.add(2, rows + rows)
    assert len(chunks) == 3
    assert list(chunks.content_first) == [0, 1, 1, 3]
    assert list(chunks.content) == [0, 2, 2]
    assert list(chunks.dl) == [2, 2, 2]
    assert len(chunks.span) == 5 * 3


# --------------------------------------------------------------------------- postings


def test_invert_codes_chunk_id_and_capped_tf() -> None:
    postings: dict = {}
    invert(postings, 0, [["a", "b", "a"], ["b"]])
    invert(postings, 2, [["a"] * 300])
    assert postings == {"a": [0 << 8 | 2, 2 << 8 | 255], "b": [0 << 8 | 1, 1 << 8 | 1]}


def test_bucket_count_is_a_power_of_two_near_half_the_terms() -> None:
    assert [bucket_count(n) for n in (0, 1, 2, 3, 4, 5, 9, 1000)] == [1, 1, 1, 2, 2, 4, 8, 512]


def test_every_term_is_found_in_its_bucket() -> None:
    words = sorted(f"term{i}".encode() for i in range(40)) + ["ünïcödé".encode()]
    table = [Row(i, i + 1, i, 2 * i, 3 * i, i % 7) for i in range(40)]
    table.append(Row(7, 0, 0, 0, 0, 0, 11, 2, 1, 5, 1))  # field postings only
    buckets, data, n = dictionary(words, table)
    assert n == 32  # 41 terms: the power of two near half
    offsets = array("I")
    offsets.frombytes(buckets)
    assert len(offsets) == n + 1 and offsets[-1] == len(data)
    for word, row in zip(words, table):
        b = zlib.crc32(word) & (n - 1)
        assert find_row(data[offsets[b] : offsets[b + 1]], word) == row
    b = zlib.crc32(b"absent") & (n - 1)
    assert find_row(data[offsets[b] : offsets[b + 1]], b"absent") is None
    assert sorted(rows(data)) == sorted(zip(words, table))


def test_find_row_refuses_a_row_that_runs_past_its_bucket() -> None:
    with pytest.raises(ValueError, match="bad dictionary row"):
        find_row(b"\x05abc", b"abc")
    good = Row(1, 2, 2, 0, 0, 1, 3, 4, 4, 0, 1).pack(b"abc")
    with pytest.raises(ValueError, match="bad dictionary row"):
        find_row(good[:-3], b"abc")  # the field part is cut short


def test_tap_sections_keep_terms_in_byte_order() -> None:
    postings = {"b": [1 << 8 | 2], "a": [0 << 8 | 1, 3 << 8 | 4], "x" * 256: [0 << 8 | 1]}
    fields = {"c": [2 << 8 | 1]}
    got = dict(tap_sections(postings, fields, "H", "H"))
    assert got["terms"] == b"a\nb\nc"  # the 256-byte term is left out
    counts, fcounts, ids = array("I"), array("I"), array("H")
    counts.frombytes(got["counts"])
    fcounts.frombytes(got["field_counts"])
    ids.frombytes(got["post_ids"])
    assert list(counts) == [2, 1, 0] and list(fcounts) == [0, 0, 1]
    assert list(ids) == [0, 3, 1] and got["post_tfs"] == bytes([1, 4, 2])
    assert got["field_tfs"] == b"\x01"


# --------------------------------------------------------------------------- tiers


def test_tier_plan_cuts_after_marked_names_and_before_a_full_tier() -> None:
    import zlib as z

    marked = next(f"t{i}" for i in range(100) if z.crc32(f"t{i}".encode()) % tier.CUT_EVERY == 0)
    plain = [f"u{i}" for i in range(100) if z.crc32(f"u{i}".encode()) % tier.CUT_EVERY][:4]
    taps = [(plain[0], 10), (marked, 10), (plain[1], 10), (plain[2], 10)]
    assert tier.plan(taps) == [(0, 2), (2, 4)]
    big = tier.TIER_CHUNKS - 10
    assert tier.plan([(plain[0], 10), (plain[1], big), (plain[2], 10)]) == [(0, 2), (2, 3)]
    assert tier.plan([(plain[0], 2 * big), (plain[1], 1)]) == [(0, 1), (1, 2)]  # alone
    assert tier.plan([]) == []


def test_frontier_keeps_the_points_no_other_beats_in_both() -> None:
    points = [(1, 50), (3, 40), (2, 10), (3, 60), (5, 90), (1, 5)]
    assert tier._frontier(points) == [(5, 90), (3, 40), (2, 10), (1, 5)]
    assert tier._frontier([]) == []
