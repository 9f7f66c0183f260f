"""The steps of a segment build, each on literals: contents (dedupe, chunk, byte spans),
invert, the hash-bucketed term dictionary and its look-up."""

from __future__ import annotations

import zlib
from array import array

import pytest

from boost_cli.core.index.contents import ChunkTable, ContentTable, byte_spans, chunk_file
from boost_cli.core.index.layout import KIND_BITS, NO_SPAN
from boost_cli.core.index.params import IndexParams
from boost_cli.core.index.postings import bucket_count, find_term, invert, term_dictionary
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
    words = [f"term{i}" for i in range(40)] + ["ünïcödé", "x" * 256]
    postings = {w: [i << 8 | 1, (i + 50) << 8 | 3] for i, w in enumerate(words)}
    fields = {"term3": [7 << 8 | 1], "only-field": [2 << 8 | 2]}
    d = term_dictionary(postings, fields)
    assert d.n_terms == 41 and d.n_buckets == 32  # the 256-byte term is left out
    assert d.n_field_terms == 2
    assert d.vocab.split(b"\n") == sorted(w.encode() for w in words[:-1])  # chunk terms
    offsets = array("I")
    offsets.frombytes(d.buckets)
    assert len(offsets) == d.n_buckets + 1 and offsets[-1] == len(d.rows)
    for w in words[:-1] + ["only-field"]:
        tb = w.encode("utf-8")
        b = zlib.crc32(tb) & (d.n_buckets - 1)
        found = find_term(d.rows[offsets[b] : offsets[b + 1]], tb)
        assert found is not None
        start, count, fstart, fcount = found
        assert d.postings[start : start + count] == postings.get(w, [])
        assert d.field_postings[fstart : fstart + fcount] == fields.get(w, [])
    b = zlib.crc32(b"absent") & (d.n_buckets - 1)
    assert find_term(d.rows[offsets[b] : offsets[b + 1]], b"absent") is None


def test_find_term_refuses_a_row_that_runs_past_its_bucket() -> None:
    with pytest.raises(ValueError, match="bad dictionary row"):
        find_term(b"\x05abc", b"abc")
