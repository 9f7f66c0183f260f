"""A stdlib-only BERT WordPiece tokenizer, equal to Hugging Face ``tokenizers`` for BERT models.

It reproduces what ``Tokenizer.from_file("tokenizer.json").encode(text)`` returns for an
uncased BERT vocabulary such as all-MiniLM-L6-v2's, with truncation to ``max_length`` tokens
(special tokens included), and nothing else: no offsets, no pairs, no padding (the caller pads
a batch). The pipeline, step by step as ``tokenizers`` runs it:

1. **Special tokens** (``[CLS]``, ``[SEP]``, ``[PAD]``, ``[UNK]``, ``[MASK]``) written in the raw
   text are matched case-sensitively before anything else and kept as their ids.
2. **BertNormalizer**: drop NUL, U+FFFD and control characters (categories Cc, Cf, Co, except
   tab, newline and carriage return); turn whitespace (Rust's ``char::is_whitespace``) into a
   space; put spaces around CJK ideographs; strip accents (NFD, then drop category Mn); lowercase
   character by character (no final-sigma rule, as Rust's ``char::to_lowercase``).
3. **BertPreTokenizer**: split on whitespace, and isolate every punctuation character (ASCII
   punctuation, which includes ``$+<=>^`|~``, and Unicode categories Pc Pd Pe Pf Pi Po Ps).
4. **WordPiece**: greedy longest match from the left, continuation pieces prefixed ``##``; a word
   longer than ``max_input_chars_per_word`` characters, or with a part that matches nothing,
   becomes one ``[UNK]``.
5. ``[CLS] ... [SEP]`` around the pieces, which are cut to ``max_length - 2`` first.

Unicode: ``tokenizers`` takes its character classes from Rust tables of Unicode 8-9 vintage
(crate ``unicode_categories``), its NFD from an equally old table, and its lowercasing from
Rust's standard library (Unicode 16). Python's ``unicodedata`` is 13.0 on 3.9-3.10, 14.0 on
3.11 and 15.x on 3.12-3.13, so a plain ``unicodedata`` port would differ on ~550 code points,
and differently per Python. Hence the three classes (control, nonspacing mark, punctuation)
are frozen as code-point ranges in `wordpiece_tables` (generated from ``tokenizers`` itself
by ``scripts/wordpiece_tables.py``), with the 95 case pairs Rust knows and Python 3.9 does
not, and the one character whose NFD Python has and ``tokenizers`` lacks. With these, every
one of the 1,112,064 code points normalises and splits exactly as in ``tokenizers`` 0.23.3 on
Python 3.9, 3.10, 3.11, 3.12 and 3.13, and the ids equal ``tokenizers``' on every text of the
shared corpus (docs/dense.md, "The local provider").

Pure ASCII text (most of a skill corpus) takes a fast path through ``str.translate``,
``str.lower`` and one regular expression; words are looked up in a per-tokenizer cache.
"""

from __future__ import annotations

import bisect
import gzip
import re
import unicodedata
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Union

from boost_cli.core.embed.wordpiece_tables import (
    CONTROL_RANGES,
    LOWER_EXTRA_PAIRS,
    MARK_RANGES,
    NFD_KEEP,
    PUNCT_RANGES,
)

PathLike = Union[str, Path]

SPECIAL_TOKENS: Tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
DEFAULT_MAX_LENGTH = 256  # all-MiniLM-L6-v2: sentence_bert_config.json max_seq_length
MAX_INPUT_CHARS_PER_WORD = 100
WORD_CACHE_SIZE = 200_000  # distinct words kept; the cache is cleared when it is full

# Rust's char::is_whitespace (the Unicode White_Space property). Of these, U+0085 and
# U+000B/U+000C/U+001C-U+001F are Cc and are dropped as control characters before whitespace
# is looked at; tab, newline and carriage return are the three controls kept as whitespace.
_WHITESPACE: FrozenSet[str] = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_KEPT_CONTROLS = frozenset("\t\n\r")
_NFD_KEEP_RE = re.compile(f"([{NFD_KEEP}])")

_CONTROL, _MARK, _PUNCT, _CJK, _SPACE = 1, 2, 4, 8, 16

# ASCII: delete NUL and the controls, turn tab/newline/CR into a space.
_ASCII_CLEAN: Dict[int, Optional[int]] = {c: None for c in [*range(0x00, 0x20), 0x7F]}
_ASCII_CLEAN.update({0x09: 0x20, 0x0A: 0x20, 0x0D: 0x20})
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
_ASCII_WORDS = re.compile(rf"[^ {_ASCII_PUNCT}]+|[{_ASCII_PUNCT}]")


def _parse_ranges(spec: str) -> Tuple[List[int], List[int]]:
    """Parse ``"300-33f,342,..."`` (hex, inclusive ranges) into sorted (starts, ends)."""
    starts: List[int] = []
    ends: List[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        starts.append(int(lo, 16))
        ends.append(int(hi or lo, 16))
    return starts, ends


_TABLES: List[Tuple[int, List[int], List[int]]] = []
_CLASS_CACHE: Dict[str, int] = {}
_LOWER_EXTRA: Dict[int, int] = {}


def _lower(text: str) -> str:
    """Lowercase like Rust's ``char::to_lowercase`` applied to each character: no final-sigma
    rule (which ``str.lower`` applies), and the case pairs newer than this Python's Unicode."""
    text = "".join(c.lower() for c in text) if "\u03a3" in text else text.lower()
    if not _LOWER_EXTRA:
        for pair in LOWER_EXTRA_PAIRS.split(","):
            upper, _, lower = pair.partition(":")
            _LOWER_EXTRA[int(upper, 16)] = int(lower, 16)
    return text.translate(_LOWER_EXTRA)


def _nfd(text: str) -> str:
    if not any(c in text for c in NFD_KEEP):
        return unicodedata.normalize("NFD", text)
    parts = _NFD_KEEP_RE.split(text)  # odd indexes are the kept characters
    return "".join(p if i % 2 else unicodedata.normalize("NFD", p) for i, p in enumerate(parts))


def _in(cp: int, starts: List[int], ends: List[int]) -> bool:
    i = bisect.bisect_right(starts, cp) - 1
    return i >= 0 and cp <= ends[i]


def _is_cjk(cp: int) -> bool:
    """The CJK ideograph blocks BERT spaces out (tokenizers' ``is_chinese_char``)."""
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B920 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _char_class(c: str) -> int:
    """Bit set of _CONTROL, _MARK, _PUNCT, _CJK, _SPACE for one character (cached)."""
    hit = _CLASS_CACHE.get(c)
    if hit is not None:
        return hit
    if not _TABLES:
        for bit, spec in (
            (_CONTROL, CONTROL_RANGES),
            (_MARK, MARK_RANGES),
            (_PUNCT, PUNCT_RANGES),
        ):
            _TABLES.append((bit, *_parse_ranges(spec)))
    cp = ord(c)
    cls = 0
    if c.isascii():
        if cp < 0x20 and c not in _KEPT_CONTROLS or cp == 0x7F:
            cls |= _CONTROL
        elif " " < c < "\x7f" and not c.isalnum():
            cls |= _PUNCT
    else:
        for bit, starts, ends in _TABLES:
            if _in(cp, starts, ends):
                cls |= bit
        if _is_cjk(cp):
            cls |= _CJK
    if c in _WHITESPACE:
        cls |= _SPACE
    _CLASS_CACHE[c] = cls
    return cls


def normalize(text: str, lowercase: bool = True, strip_accents: Optional[bool] = None) -> str:
    """BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase).

    ``strip_accents=None`` follows ``lowercase``, as in ``tokenizers`` and BERT."""
    if strip_accents is None:
        strip_accents = lowercase
    if text.isascii():
        text = text.translate(_ASCII_CLEAN)
        return text.lower() if lowercase else text
    out: List[str] = []
    for c in text:
        cls = _char_class(c)
        if cls & _CONTROL or c == "\x00" or c == "\ufffd":
            continue
        if cls & _SPACE:
            out.append(" ")
        elif cls & _CJK:
            out.append(f" {c} ")
        else:
            out.append(c)
    text = "".join(out)
    if strip_accents:
        text = _nfd(text)
        if not text.isascii():
            text = "".join(c for c in text if not _char_class(c) & _MARK)
    return _lower(text) if lowercase else text


def pre_tokenize(text: str) -> List[str]:
    """BertPreTokenizer: split on whitespace, each punctuation character its own word."""
    if text.isascii():
        return _ASCII_WORDS.findall(text)
    words: List[str] = []
    for chunk in text.split(" "):
        if not chunk:
            continue
        if chunk.isascii():
            words.extend(_ASCII_WORDS.findall(chunk))
            continue
        start = 0
        for i, c in enumerate(chunk):
            cls = _char_class(c)
            if cls & _SPACE:  # whitespace other than the space left by the normalizer
                if start < i:
                    words.append(chunk[start:i])
                start = i + 1
            elif cls & _PUNCT:
                if start < i:
                    words.append(chunk[start:i])
                words.append(c)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


def read_vocab(path: PathLike) -> bytes:
    """The bytes of a BERT ``vocab.txt``, gunzipped when the name ends in ``.gz``."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if str(path).endswith(".gz") else data


def parse_vocab(data: bytes) -> Dict[str, int]:
    """Token → id from a ``vocab.txt``'s bytes: one token a line, the line number its id."""
    lines = data.decode("utf-8").split("\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline that ends the last line
    return {token: i for i, token in enumerate(lines)}


class WordPieceTokenizer:
    """Text -> input ids for a BERT WordPiece vocabulary (``[CLS] pieces [SEP]``, truncated).

    ``encode`` returns the same ids as ``tokenizers`` with ``enable_truncation(max_length)``.
    Build one with `from_vocab_txt`; it is safe to share between threads (the word cache is
    a plain dict: a lost race only recomputes a word).
    """

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        max_length: int = DEFAULT_MAX_LENGTH,
        lowercase: bool = True,
        strip_accents: Optional[bool] = None,
        continuing_prefix: str = "##",
        max_input_chars_per_word: int = MAX_INPUT_CHARS_PER_WORD,
        unk_token: str = "[UNK]",
        cls_token: str = "[CLS]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        special_tokens: Sequence[str] = SPECIAL_TOKENS,
    ) -> None:
        if max_length < 2:
            raise ValueError("max_length must leave room for [CLS] and [SEP]")
        self.vocab: Dict[str, int] = dict(vocab)
        self.max_length = max_length
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.prefix = continuing_prefix
        self.max_chars = max_input_chars_per_word
        self.unk_id = self.vocab[unk_token]
        self.cls_id = self.vocab[cls_token]
        self.sep_id = self.vocab[sep_token]
        self.pad_id = self.vocab[pad_token]
        self._special = {t: self.vocab[t] for t in special_tokens if t in self.vocab}
        self._special_re = (
            re.compile("|".join(re.escape(t) for t in sorted(self._special, key=len, reverse=True)))
            if self._special
            else None
        )
        self._longest = max(len(t) for t in self.vocab)
        self._cache: Dict[str, Tuple[int, ...]] = {}

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_vocab_txt(
        cls, path: PathLike, *, max_length: int = DEFAULT_MAX_LENGTH, lowercase: bool = True
    ) -> WordPieceTokenizer:
        """Read a BERT ``vocab.txt`` (one token a line, the line number is its id; gzipped
        when the name ends in ``.gz``)."""
        return cls(parse_vocab(read_vocab(path)), max_length=max_length, lowercase=lowercase)

    # ------------------------------------------------------------------ encoding

    def word_ids(self, word: str) -> Tuple[int, ...]:
        """WordPiece ids of one pre-tokenized word (greedy longest match from the left)."""
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        ids = self._wordpiece(word)
        if len(self._cache) >= WORD_CACHE_SIZE:
            self._cache.clear()
        self._cache[word] = ids
        return ids

    def _wordpiece(self, word: str) -> Tuple[int, ...]:
        n = len(word)
        if n > self.max_chars:
            return (self.unk_id,)
        vocab = self.vocab
        out: List[int] = []
        start = 0
        while start < n:
            end = min(n, start + self._longest)
            piece_id = None
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                piece_id = vocab.get(piece)
                if piece_id is not None:
                    break
                end -= 1
            if piece_id is None:
                return (self.unk_id,)
            out.append(piece_id)
            start = end
        return tuple(out)

    def _text_ids(self, text: str, out: List[int], limit: int) -> None:
        norm = normalize(text, self.lowercase, self.strip_accents)
        for word in pre_tokenize(norm):
            out.extend(self.word_ids(word))
            if len(out) >= limit:
                return

    def tokens(self, text: str, limit: Optional[int] = None) -> List[int]:
        """The piece ids of ``text`` without [CLS]/[SEP]; stops early once ``limit`` is passed."""
        limit = limit if limit is not None else 1 << 62
        out: List[int] = []
        if self._special_re is None or "[" not in text:
            self._text_ids(text, out, limit)
            return out
        pos = 0
        for m in self._special_re.finditer(text):
            self._text_ids(text[pos : m.start()], out, limit)
            out.append(self._special[m.group()])
            pos = m.end()
            if len(out) >= limit:
                return out
        self._text_ids(text[pos:], out, limit)
        return out

    def encode(self, text: str, max_length: Optional[int] = None) -> List[int]:
        """``[CLS]`` + the first ``max_length - 2`` piece ids + ``[SEP]``."""
        keep = (max_length or self.max_length) - 2
        return [self.cls_id, *self.tokens(text, keep)[:keep], self.sep_id]
