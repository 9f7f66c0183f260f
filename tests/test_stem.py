"""The Porter stemmer against the paper's examples and Porter's published sample output."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from boost_cli.core.stem import stem

FIXTURE = Path(__file__).parent / "fixtures" / "stem" / "porter_sample.txt"

# Every worked example in the 1980 paper, step by step.
PAPER = [
    # step 1a
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "ti"),
    ("caress", "caress"),
    ("cats", "cat"),
    # step 1b
    ("feed", "feed"),
    ("agreed", "agre"),
    ("plastered", "plaster"),
    ("bled", "bled"),
    ("motoring", "motor"),
    ("sing", "sing"),
    ("conflated", "conflat"),
    ("troubled", "troubl"),
    ("sized", "size"),
    ("hopping", "hop"),
    ("tanned", "tan"),
    ("falling", "fall"),
    ("hissing", "hiss"),
    ("fizzed", "fizz"),
    ("failing", "fail"),
    ("filing", "file"),
    # step 1c
    ("happy", "happi"),
    ("sky", "sky"),
    # step 2
    ("relational", "relat"),
    ("conditional", "condit"),
    ("rational", "ration"),
    ("valenci", "valenc"),
    ("hesitanci", "hesit"),
    ("digitizer", "digit"),
    ("conformabli", "conform"),
    ("radicalli", "radic"),
    ("differentli", "differ"),
    ("vileli", "vile"),
    ("analogousli", "analog"),
    ("vietnamization", "vietnam"),
    ("predication", "predic"),
    ("operator", "oper"),
    ("feudalism", "feudal"),
    ("decisiveness", "decis"),
    ("hopefulness", "hope"),
    ("callousness", "callous"),
    ("formaliti", "formal"),
    ("sensitiviti", "sensit"),
    ("sensibiliti", "sensibl"),
    # step 3
    ("triplicate", "triplic"),
    ("formative", "form"),
    ("formalize", "formal"),
    ("electriciti", "electr"),
    ("electrical", "electr"),
    ("hopeful", "hope"),
    ("goodness", "good"),
    # step 4
    ("revival", "reviv"),
    ("allowance", "allow"),
    ("inference", "infer"),
    ("airliner", "airlin"),
    ("gyroscopic", "gyroscop"),
    ("adjustable", "adjust"),
    ("defensible", "defens"),
    ("irritant", "irrit"),
    ("replacement", "replac"),
    ("adjustment", "adjust"),
    ("dependent", "depend"),
    ("adoption", "adopt"),
    ("homologou", "homolog"),
    ("communism", "commun"),
    ("activate", "activ"),
    ("angulariti", "angular"),
    ("homologous", "homolog"),
    ("effective", "effect"),
    ("bowdlerize", "bowdler"),
    # step 5
    ("probate", "probat"),
    ("rate", "rate"),
    ("cease", "ceas"),
    ("controll", "control"),
    ("roll", "roll"),
    # multi-step examples from the paper's discussion
    ("generalizations", "gener"),
    ("oscillators", "oscil"),
]


def _load_fixture() -> List[Tuple[str, str]]:
    pairs = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            word, expected = line.split()
            pairs.append((word, expected))
    return pairs


SAMPLE = _load_fixture()


def test_fixture_is_big_enough() -> None:
    assert len(SAMPLE) + len(PAPER) >= 300


@pytest.mark.parametrize(("word", "expected"), PAPER)
def test_paper_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_porter_sample_vocabulary() -> None:
    wrong = [(w, e, stem(w)) for w, e in SAMPLE if stem(w) != e]
    assert wrong == []


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["test", "tests", "testing", "tested"], "test"),
        (["connect", "connected", "connecting", "connection", "connections"], "connect"),
    ],
)
def test_families_conflate(words: List[str], expected: str) -> None:
    assert {stem(w) for w in words} == {expected}


@pytest.mark.parametrize("word", ["", "a", "is", "as", "xy"])
def test_short_words_untouched(word: str) -> None:
    assert stem(word) == word


def test_reference_departures_from_paper() -> None:
    # The reference implementation maps -bli to -ble and -logi to -log in step 2.
    assert stem("sensibli") == "sensibl"
    assert stem("archaeologi") == "archaeolog"
    assert stem("analogi") == "analog"


def test_y_is_a_consonant_after_a_vowel() -> None:
    # y after a vowel is a consonant, after a consonant a vowel (so "syzygy" has one).
    assert stem("toys") == "toi"
    assert stem("syzygy") == "syzygi"
    assert stem("yes") == "ye"


def test_ion_only_after_s_or_t() -> None:
    assert stem("adoption") == "adopt"
    assert stem("decision") == "decis"
    assert stem("opinion") == "opinion"


def test_memoized() -> None:
    stem.cache_clear()
    stem("relational")
    stem("relational")
    info = stem.cache_info()
    assert info.hits == 1 and info.misses == 1
