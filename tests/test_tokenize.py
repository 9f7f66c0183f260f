"""The tokenizer: splitting rules, stopwords, stemming, Unicode, and query/doc symmetry."""

from __future__ import annotations

import pytest

from boost_cli.core import tokenize as tokmod
from boost_cli.core.tokenize import (
    MAX_TOKEN_LEN,
    QUERY_STOPWORDS,
    STOPWORDS,
    query_weights,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("jest-runner", ["jest", "runner"]),
        ("snake_case", ["snake", "case"]),
        ("foo.bar/baz", ["foo", "bar", "baz"]),
        ("path\\to\\file", ["path", "file"]),
        ("key:value,extra;thing", ["kei", "valu", "extra", "thing"]),
        ("  spaced \t out \n lines  ", ["space", "line"]),
        ("(parens) [brackets] {braces} <angle>", ["paren", "bracket", "brace", "angl"]),
    ],
)
def test_splits_on_non_alphanumerics(text: str, expected: list) -> None:
    assert tokenize(text) == expected


def test_lowercases_before_everything() -> None:
    assert tokenize("TESTING Tested tests") == ["test", "test", "test"]


def test_camel_case_is_one_token() -> None:
    assert tokenize("useEffect getServerSideProps") == ["useeffect", "getserversideprop"]


def test_stopwords_dropped() -> None:
    assert tokenize("the tests of the app and how to use it") == ["test", "app", "us"]


@pytest.mark.parametrize("word", ["test", "use", "file", "app", "code", "run", "react", "api"])
def test_domain_words_are_not_stopwords(word: str) -> None:
    assert word not in STOPWORDS
    assert tokenize(word) != []


def test_stopword_list_is_small_english() -> None:
    assert 100 <= len(STOPWORDS) <= 180
    assert {"the", "a", "an", "is", "of", "to", "you", "with"} <= STOPWORDS
    assert all(w == w.lower() and w.isalpha() for w in STOPWORDS)


def test_contraction_fragments_dropped() -> None:
    assert tokenize("don't, isn't, you'll, we've") == []


def test_one_character_tokens_dropped() -> None:
    assert tokenize("a b c 1 2 x") == []
    assert tokenize("v8 es6 c99") == ["v8", "es6", "c99"]


def test_overlong_tokens_dropped() -> None:
    ok = "x" * MAX_TOKEN_LEN
    blob = "y" * (MAX_TOKEN_LEN + 1)
    assert tokenize(f"{ok} {blob} tail") == [ok, "tail"]
    assert tokenize("x" * 40 + " " + "y" * 41) == ["x" * 40]  # 40 characters at most


def test_digit_tokens_not_stemmed() -> None:
    assert tokenize("es2015 modules 404s") == ["es2015", "modul", "404s"]


def test_same_output_for_query_and_document() -> None:
    doc = "## Testing React components\n\nUse `jest-runner` to test React components."
    query = "testing react component jest runner"
    assert set(tokenize(query)) <= set(tokenize(doc))


def test_stemming_applied() -> None:
    assert tokenize("connections connecting connected") == ["connect"] * 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("café résumé naïve", ["café", "résumé", "naïve"]),
        ("Über straße", ["über", "straße"]),
        ("日本語 テスト", ["日本語", "テスト"]),
        ("emoji 🚀 rocket", ["emoji", "rocket"]),
        ("Ελληνικά κείμενα", ["ελληνικά", "κείμενα"]),
    ],
)
def test_unicode_letters_do_not_crash(text: str, expected: list) -> None:
    assert tokenize(text) == expected


def test_empty_and_punctuation_only() -> None:
    assert tokenize("") == []
    assert tokenize("   \n\t ") == []
    assert tokenize("--- *** ``` ### ___ ...") == []


def test_returns_duplicates_in_order() -> None:
    assert tokenize("mock mocks mocking server mock") == ["mock", "mock", "mock", "server", "mock"]


def test_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokmod, "_CACHE_LIMIT", 3)
    tokmod._CACHE.clear()
    for word in ("alpha", "beta", "gamma", "delta", "epsilon"):
        tokenize(word)
        assert len(tokmod._CACHE) <= 3
    assert tokenize("alpha beta") == ["alpha", "beta"]
    tokmod._CACHE.clear()


def test_long_text_in_pieces_matches_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokmod, "_PIECE", 50)
    text = (
        "Testing jest-runner mocks\n" * 5
        + "x" * 120  # a run with no separator across several pieces
        + " connection_pool " * 10
        + "y" * 30
        + "-z" * 40
    )
    assert tokenize(text) == tokmod._tokenize_piece(text)
    assert tokenize(text[:49]) == tokmod._tokenize_piece(text[:49])
    # The text ends in a run longer than a piece with no separator after it.
    tail = "Testing mocks " + "z" * 30 + "x" * 100
    assert tokenize(tail) == tokmod._tokenize_piece(tail) == ["test", "mock"]


def test_query_weights() -> None:
    # Task words: 1 each, 0.25 on the query stoplist (unless all are); keywords: 0.7 each,
    # 1 when the task holds the term too.
    assert query_weights("help me test the app", ["jest"]) == {
        "help": 0.25,
        "test": 1.0,
        "app": 1.0,
        "jest": 0.7,
    }
    assert query_weights("what is it") == {}
    assert query_weights("help me", ["help", "test test"]) == {"help": 2.0, "test": 1.4}
    assert query_weights("", ["kafka"]) == {"kafka": 0.7}
    # "really" and "keeps" are filler (0.25 each); "failing" and "builds" count 1.
    assert query_weights("really keeps failing builds") == {
        "realli": 0.25,
        "keep": 0.25,
        "fail": 1.0,
        "build": 1.0,
    }
    # The query stoplist never touches the index: "help" is a term of documents.
    assert "help" in QUERY_STOPWORDS and tokenize("help") == ["help"]
    assert len(QUERY_STOPWORDS) == 496
