"""The stdlib WordPiece tokenizer equals Hugging Face ``tokenizers`` (0.23.3, all-MiniLM-L6-v2's
tokenizer.json with truncation 256): ids recorded from it for tricky texts, its normaliser and
pre-tokenizer on every Unicode code point (a digest of its whole table), and literal cases.
The references were recorded with ``scripts/wordpiece_tables.py reference``."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from boost_cli.core.embed import wordpiece as wp
from tests.helpers import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "local"
VOCAB = ROOT / "boost_cli" / "data" / "minilm" / "vocab.txt.gz"
# sentence-transformers/all-MiniLM-L6-v2's vocab.txt (revision 1110a243…), unmodified
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"


@pytest.fixture(scope="module")
def tok() -> wp.WordPieceTokenizer:
    return wp.WordPieceTokenizer.from_vocab_txt(VOCAB)


def test_the_shipped_vocabulary_is_the_models(tok: wp.WordPieceTokenizer) -> None:
    raw = gzip.decompress(VOCAB.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == VOCAB_SHA256
    assert len(tok.vocab) == 30522 and tok.vocab["[MASK]"] == 103 and tok.pad_id == 0
    assert (ROOT / "boost_cli" / "data" / "minilm" / "LICENSE").read_text().count("Apache") >= 2


def test_ids_equal_the_recorded_tokenizers_ids(tok: wp.WordPieceTokenizer) -> None:
    ref = json.loads((FIXTURES / "wordpiece_ids.json").read_text(encoding="utf-8"))
    assert ref["truncation"] == 256 and len(ref["texts"]) >= 70
    for text, ids in zip(ref["texts"], ref["ids"]):
        assert tok.encode(text) == ids, text


def test_literal_cases(tok: wp.WordPieceTokenizer) -> None:
    assert wp.normalize("Café") == "cafe"
    assert wp.normalize("ΣΑΣ") == "σασ"  # no final sigma: Rust lowercases per character
    assert wp.normalize("İ") == "i"
    assert wp.pre_tokenize(wp.normalize("中文")) == ["中", "文"]
    assert wp.pre_tokenize("don't") == ["don", "'", "t"]
    assert tok.encode("a[MASK]b") == [tok.cls_id, tok.vocab["a"], 103, tok.vocab["b"], tok.sep_id]
    assert tok.encode("x" * 101) == [tok.cls_id, tok.unk_id, tok.sep_id]
    long = tok.encode("word " * 1000)
    assert len(long) == 256 and long[-1] == tok.sep_id
    assert tok.encode("word " * 1000, max_length=8)[1:-1] == [tok.vocab["word"]] * 6
    assert tok.encode("") == [tok.cls_id, tok.sep_id]


def test_vocabulary_files(tmp_path: Path) -> None:
    plain = tmp_path / "vocab.txt"
    plain.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nab\n##c", encoding="utf-8")  # no final newline
    tok = wp.WordPieceTokenizer.from_vocab_txt(plain)
    assert tok.vocab["##c"] == 5 and tok.encode("abc") == [2, 4, 5, 3]
    assert tok.encode("abd") == [2, 1, 3]  # a part that matches nothing: the word is [UNK]
    with pytest.raises(ValueError, match="room for"):
        wp.WordPieceTokenizer(tok.vocab, max_length=1)


def test_code_points_that_a_unicodedata_port_gets_wrong() -> None:
    """The ~600 code points whose class or case differs between Python's unicodedata and
    tokenizers' tables, every code point below U+0250, and a seeded 2,000 more."""
    ref = json.loads((FIXTURES / "wordpiece_codepoints.json").read_text(encoding="utf-8"))
    wrong = []
    for cp, want, splits in ref["cases"]:
        got = wp.normalize(chr(cp))
        if got != want or (len(wp.pre_tokenize(f"a{got}b")) != 1) != splits:
            wrong.append(hex(cp))
    assert wrong == [] and len(ref["cases"]) > 3000


def test_every_code_point_matches_the_reference_digest() -> None:
    """All 1,112,064 code points, normalised and split: the digest of the whole table
    `scripts/wordpiece_tables.py check` prints, recorded from tokenizers itself."""
    ref = json.loads((FIXTURES / "wordpiece_codepoints.json").read_text(encoding="utf-8"))
    h = hashlib.sha256()
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        n = wp.normalize(c)
        if n != c:
            h.update(f"{cp:x}:{n}\n".encode())
        if len(wp.pre_tokenize(f"a{n}b")) != 1:
            h.update(f"s{cp:x}\n".encode())
    assert h.hexdigest() == ref["digest"]
