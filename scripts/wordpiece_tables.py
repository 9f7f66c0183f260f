"""Regenerate or re-check boost_cli/core/embed/wordpiece_tables.py against Hugging Face
``tokenizers`` (not a boost dependency: install it in a scratch venv to run this).

    python scripts/wordpiece_tables.py reference TOKENIZER_JSON REF.json   # needs tokenizers
    python scripts/wordpiece_tables.py classes                             # needs tokenizers
    python3.9 scripts/wordpiece_tables.py lower-pairs REF.json             # the oldest Python
    python scripts/wordpiece_tables.py check REF.json                      # any Python

``reference`` records what ``tokenizers`` does with every code point (its normalizer's output
and whether its pre-tokenizer splits ``"a" + output + "b"``). ``classes`` prints the three
character classes (control, nonspacing mark, punctuation) as ranges, derived from
``tokenizers``' own normalizers. ``lower-pairs`` prints the case pairs ``tokenizers``
lowercases and this Python does not (run it under 3.9, whose Unicode is the oldest boost
supports). Paste both into the tables module. ``check`` compares boost's `wordpiece` with the
reference on every code point and prints the digest tests/test_wordpiece.py pins.
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Sequence, Set

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WHITESPACE = set(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def code_points() -> Iterator[int]:
    for cp in range(0x110000):
        if not 0xD800 <= cp <= 0xDFFF:
            yield cp


def digest(normalize: Callable[[str], str], splits: Callable[[int, str], bool]) -> str:
    """sha256 over every code point whose normalisation is not itself ("cp:output") and
    every one the pre-tokenizer splits off ("s cp"): what tests/test_wordpiece.py pins."""
    h = hashlib.sha256()
    for cp in code_points():
        c = chr(cp)
        n = normalize(c)
        if n != c:
            h.update(f"{cp:x}:{n}\n".encode())
        if splits(cp, n):
            h.update(f"s{cp:x}\n".encode())
    return h.hexdigest()


def emit(name: str, body: Sequence[str], note: str) -> None:
    lines: List[str] = []
    cur = ""
    for part in body:
        if len(cur) + len(part) + 1 > 86:
            lines.append(cur)
            cur = ""
        cur += part + ","
    lines.append(cur.rstrip(","))
    print(f"# {note}\n{name} = (")
    for line in lines:
        print(f'    "{line}"')
    print(")")


def ranges(cps: Sequence[int]) -> List[str]:
    spans: List[List[int]] = []
    for cp in cps:
        if spans and spans[-1][1] == cp - 1:
            spans[-1][1] = cp
        else:
            spans.append([cp, cp])
    return [f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in spans]


def reference(tokenizer_json: str, out: str) -> None:
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(tokenizer_json)
    norm, pre = tok.normalizer, tok.pre_tokenizer
    record: Dict[str, object] = {"tokenizers": tokenizers.__version__}
    changed: Dict[int, str] = {}
    split: List[int] = []
    for cp in code_points():
        c = chr(cp)
        n = norm.normalize_str(c)
        if n != c:
            changed[cp] = n
        if len(pre.pre_tokenize_str("a" + n + "b")) != 1:
            split.append(cp)
    record.update(norm=changed, split=split)
    Path(out).write_text(json.dumps(record), encoding="utf-8")


def classes() -> None:
    import tokenizers
    from tokenizers import normalizers, pre_tokenizers

    clean = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False
    )
    strip = normalizers.BertNormalizer(
        clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False
    )
    nfd = normalizers.NFD()
    pre = pre_tokenizers.BertPreTokenizer()
    control: List[int] = []
    mark: List[int] = []
    punct: List[int] = []
    for cp in code_points():
        c = chr(cp)
        if c not in "\t\n\r" and clean.normalize_str(c) == "" and c not in ("\x00", "\ufffd"):
            control.append(cp)
        if nfd.normalize_str(c) == c and strip.normalize_str(c) == "":
            mark.append(cp)  # "x" + c keeps only "x" once accents are stripped
        if cp > 0x7F and c not in WHITESPACE and len(pre.pre_tokenize_str(f"a{c}b")) == 3:
            punct.append(cp)
    print(f"TOKENIZERS_VERSION = {tokenizers.__version__!r}")
    for name, cps in (("CONTROL", control), ("MARK", mark), ("PUNCT", punct)):
        body = ranges(cps)
        emit(f"{name}_RANGES", body, f"{len(cps)} code points in {len(body)} ranges")


def lower_pairs(ref_path: str) -> None:
    ref = json.loads(Path(ref_path).read_text(encoding="utf-8"))
    pairs = []
    for key, value in ref["norm"].items():
        c = chr(int(key))
        if (
            len(value) == 1
            and value not in (c, " ")
            and unicodedata.normalize("NFD", c) == c
            and c.lower() == c
        ):
            pairs.append((int(key), ord(value)))
    body = [f"{a:x}:{b:x}" for a, b in sorted(pairs)]
    note = (
        f"{len(body)} pairs (Python {sys.version.split()[0]}, unicodedata "
        f"{unicodedata.unidata_version}, tokenizers {ref['tokenizers']})."
    )
    emit("LOWER_EXTRA_PAIRS", body, note)


def check(ref_path: str) -> None:
    from boost_cli.core.embed import wordpiece as wp

    ref = json.loads(Path(ref_path).read_text(encoding="utf-8"))
    norm = {int(k): v for k, v in ref["norm"].items()}
    split: Set[int] = set(ref["split"])
    bad = [cp for cp in code_points() if wp.normalize(chr(cp)) != norm.get(cp, chr(cp))]
    want = digest(lambda c: norm.get(ord(c), c), lambda cp, n: cp in split)
    got = digest(wp.normalize, lambda cp, n: len(wp.pre_tokenize(f"a{n}b")) != 1)
    print(f"python {sys.version.split()[0]} (unicodedata {unicodedata.unidata_version})")
    print(f"normalize differs on {len(bad)} code points: {[hex(cp) for cp in bad[:20]]}")
    print(f"reference digest {want}\nwordpiece digest {got}\nequal: {want == got}")


if __name__ == "__main__":
    commands: Dict[str, Callable[..., None]] = {
        "reference": reference,
        "classes": classes,
        "lower-pairs": lower_pairs,
        "check": check,
    }
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
