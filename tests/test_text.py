from array import array

from boost_cli.core.binio import from_le, to_le
from boost_cli.core.text import clip, clip_words, one_line


def test_one_line_folds_all_white_space():
    assert one_line("  a\n\tb   c \r\n") == "a b c"
    assert one_line(12) == "12"


def test_clip_keeps_short_text_and_cuts_long_text_with_ellipsis():
    assert clip("a  b", 3) == "a b"
    assert clip("abcdef", 4) == "abc…"
    assert clip("ab   cdef", 4) == "ab…"  # trailing space before the ellipsis is dropped
    assert len(clip("x" * 500, 160)) == 160
    assert clip("abc", 0) == "…"


def test_clip_words_cuts_at_a_word_boundary_without_ellipsis():
    assert clip_words("alpha beta gamma", 12) == "alpha beta"
    assert clip_words("alpha beta", 10) == "alpha beta"
    assert clip_words("a bcdefghijklmnop", 10) == "a bcdefghi"  # boundary too early: mid-word


def test_little_endian_round_trip():
    values = array("I", [0, 1, 2**32 - 1])
    blob = to_le(values)
    assert blob[:8] == b"\x00\x00\x00\x00\x01\x00\x00\x00"
    assert from_le("I", blob) == values


def test_printable_escapes_every_control_sequence() -> None:
    from boost_cli.core.text import printable

    assert printable("ok\ttab") == "ok\ttab"
    assert printable("\x1b[2J\x1b]52;c;ZXZpbA==\x07") == "\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07"
    assert printable("a\nb\r") == "a\\nb\\r"
    assert printable("a\nb\r\nc", keep_newlines=True) == "a\nb\nc"
    assert printable("\x9b31m \x7f \u202eevil") == "\\x9b31m \\x7f \\u202eevil"
    assert printable("naïve — ok ✓") == "naïve — ok ✓"
