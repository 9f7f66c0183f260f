"""Near-duplicate skills: the same skill copied across registries or folders with small
edits, found at index time so a query shows it once.

Two distinct files (contents) are one *group* when

- their entries have the same listing key (`Entry.listing_key`: normalised name and
  description), or
- their bodies overlap: the Jaccard similarity of their sets of 3-term shingles (index
  terms, `tokenize`), estimated from one-permutation MinHash sketches, is at least
  `JACCARD_MIN`, **and** they are called alike: the words of the name (or of the file
  name) of one are a subset of the other's.

The name condition is there because template-generated collections share whole bodies
between different skills (measured on the shared corpus: "LLM Output Testing" and "LLM
Security Testing" share 97 % of their shingles; the real copies rename at most by adding
words, e.g. "fastapi-pro" and "api-scaffolding-fastapi-pro"). The threshold and what
lies just above and below it: docs/index-format.md.

Segments store per content its sketch, its name and the hashes of its listing keys;
`groups` (run by the merge) joins them across taps with a union-find over LSH buckets
and the exact keys, so groups are global and deterministic.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from bisect import bisect_left
from itertools import combinations, repeat
from operator import and_, eq, rshift, xor
from typing import Dict, List, Sequence, Set, Tuple

from boost_cli.core.binio import from_le, to_le

SHINGLE = 3  # terms per shingle
BINS = 128  # sketch length: one minimum per bin of the 32-bit shingle hash space
BAND = 4  # u16 sketch values per LSH band, one u64 (32 bands: J = 0.75 shares one w.p. > 0.9999)
MIN_SHINGLES = 8  # a body with fewer shingles is too short to compare (only its key counts)
MAX_TERMS = 1000  # a body's sketch is of its first terms (all of 2/3 of the corpus's bodies)
JACCARD_MIN = 0.75  # estimated body overlap that, with related names, makes one group
KEY_BYTES = 8  # listing keys are stored as the first 8 bytes of their SHA-256
_BIN_SHIFT = 32 - (BINS.bit_length() - 1)  # a hash's bin: its top bits
_ROTATE = 0x9E37  # densification: added per bin of distance to the bin a value is borrowed from
_WORD = re.compile(r"[^\W_]+")
_GENERIC_STEMS = {"skill", "readme", "index", "agent", "agents", "claude", "rule", "rules"}
NO_SKETCH = b"\xff" * (2 * BINS)  # the sketch of a body too short to compare


class _TermHashes(Dict[str, int]):
    """term → three independent 32-bit hashes of it, packed in one int (bits 0-31, 32-63,
    64-95); filled on first sight."""

    def __missing__(self, term: str) -> int:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        digest = hashlib.blake2b(term.encode("utf-8"), digest_size=12).digest()
        value = self[term] = int.from_bytes(digest, "little")
        return value


_CACHE_LIMIT = 1_000_000
_HASHES = _TermHashes()
_MASK = 0xFFFFFFFF


def shingle_hashes(terms: Sequence[str]) -> List[int]:
    """The distinct 32-bit hashes of the ``SHINGLE``-term windows of the first
    `MAX_TERMS` of ``terms``, ascending.

    A window's hash is the XOR of its terms' hashes, each term hashed by the function of
    its position in the window (three independent hashes), so the work is C-level."""
    packed = list(map(_HASHES.__getitem__, terms[:MAX_TERMS]))
    second = map(rshift, packed[1:], repeat(32))
    third = map(rshift, packed[2:], repeat(64))
    return sorted(set(map(and_, map(xor, map(xor, packed, second), third), repeat(_MASK))))


def sketch(terms: Sequence[str]) -> bytes:
    """One-permutation MinHash of the body ``terms`` (`BINS` little-endian u16): per bin of
    the hash space, the low 16 bits of the smallest shingle hash in it; an empty bin takes
    the value of the next filled one (circularly) plus its distance times a constant
    (rotation densification), so every bin counts. `NO_SKETCH` when the body has fewer
    than `MIN_SHINGLES` shingles."""
    hashes = shingle_hashes(terms)
    if len(hashes) < MIN_SHINGLES:
        return NO_SKETCH
    # Hashes ascend, so the last write per bin (walking them backwards) is its minimum.
    low = dict(zip(map(rshift, reversed(hashes), repeat(_BIN_SHIFT)), reversed(hashes)))
    if len(low) == BINS:
        return to_le(array("H", (low[b] & 0xFFFF for b in range(BINS))))
    filled = sorted(low)
    out = array("H", [0] * BINS)
    for b in range(BINS):
        # the next filled bin at or after b, circularly, and how far it is
        nxt = filled[bisect_left(filled, b) % len(filled)]
        out[b] = (low[nxt] + ((nxt - b) % BINS) * _ROTATE) & 0xFFFF
    return to_le(out)


def similarity(x: bytes, y: bytes) -> float:
    """Estimated Jaccard similarity of two sketches: the share of equal bins."""
    return sum(map(eq, from_le("H", x), from_le("H", y))) / BINS


def key_hash(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()[:KEY_BYTES]


def names_of(name: str, path: str) -> str:
    """What a content is called, for `related`: its entry's name and its file's stem (the
    folder's name for a generic file name such as SKILL.md), tab-separated on one line."""
    parts = path.split("/")
    stem = parts[-1].split(".")[0]
    if stem.lower() in _GENERIC_STEMS and len(parts) > 1:
        stem = parts[-2]
    return f"{' '.join(name.split())}\t{stem}"


def _words(names: str) -> Tuple[frozenset[str], ...]:
    """The word sets of tab-separated names: lowercased, a plural "s" dropped."""
    return tuple(
        frozenset(w[:-1] if len(w) > 3 and w[-1] == "s" else w for w in _WORD.findall(part))
        for part in names.lower().split("\t")
    )


def related(x: Tuple[frozenset[str], ...], y: Tuple[frozenset[str], ...]) -> bool:
    """Whether some name of one and some name of the other are non-empty word sets, one a
    subset of the other ("fastapi-pro" ⊂ "api-scaffolding-fastapi-pro"; two copies of
    ``agents/mobile-developer.md`` in two plugins)."""
    return any(a and b and (a <= b or b <= a) for a in x for b in y)


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, x: int, y: int) -> None:
        rx, ry = self.find(x), self.find(y)
        if rx != ry:  # the smaller id is the root: a group is named by its first content
            self.parent[max(rx, ry)] = min(rx, ry)


def groups(
    live: Sequence[int],
    keys: Dict[int, List[bytes]],
    names: Dict[int, str],
    sketches: Dict[int, bytes],
    n_contents: int,
) -> Tuple[array[int], array[int]]:
    """Per global content id the id of its group (the group's smallest live content id),
    twice: grouped by listing key only, and by key or body overlap (`COLLAPSE` levels
    "key" and "near").

    ``live`` are the live content ids (ascending); ``keys`` their listing-key hashes (a dead
    copy's keys already added to its live content's); ``names`` (`names_of`) and
    ``sketches`` theirs.
    Dead ids keep their own id here (the caller maps them to their live copy's group).
    Candidate pairs share one LSH band (`BAND` sketch values); each is checked exactly.
    """
    uf = _UnionFind(n_contents)
    first: Dict[bytes, int] = {}
    for j in live:
        for h in keys.get(j, ()):
            other = first.setdefault(h, j)
            if other != j:
                uf.union(other, j)
    by_key = array("I", (uf.find(j) for j in range(n_contents)))
    # One band is 4 sketch values, 8 bytes: one integer of one array holding every sketch
    # (a band is a strided slice of it). A bucket is the contents sharing a band's value.
    # Members of a bucket in the same group with the same names are one class (`related`
    # depends on the names alone): a bucket of one class adds nothing, and classes, not
    # members, are paired, so copies across many taps (one key group) cost one check. A
    # pair already in one group adds nothing either: the groups are the connected
    # components whatever the order pairs are looked at.
    ids = [j for j in live if sketches.get(j, NO_SKETCH) != NO_SKETCH]
    flat = array("Q")
    flat.frombytes(b"".join(sketches[j] for j in ids))
    bands = len(flat) // max(len(ids), 1)
    find = uf.find
    interned: Dict[Tuple[int, str], int] = {}
    cls = [interned.setdefault((find(j), names.get(j, "")), len(interned)) for j in ids]
    buckets: List[List[int]] = []
    for b in range(bands):
        runs: Dict[int, List[int]] = {}
        for i, v in enumerate(flat[b::bands]):
            runs.setdefault(v, []).append(i)
        for run in runs.values():
            if len(run) > 1 and len(set(map(cls.__getitem__, run))) > 1:
                buckets.append([ids[x] for x in run])
    words: Dict[str, Tuple[frozenset[str], ...]] = {}
    relation: Dict[Tuple[str, str], bool] = {}
    apart: Set[Tuple[int, int]] = set()  # content pairs whose sketches differ too much
    for members in buckets:
        classes: Dict[Tuple[int, str], List[int]] = {}
        for j in members:
            classes.setdefault((find(j), names.get(j, "")), []).append(j)
        for x, y in combinations(list(classes), 2):
            xs, ys = classes[x], classes[y]
            if find(xs[0]) == find(ys[0]):
                continue
            pair = (x[1], y[1])
            ok = relation.get(pair)
            if ok is None:
                wx = words.get(x[1])
                if wx is None:
                    wx = words[x[1]] = _words(x[1])
                wy = words.get(y[1])
                if wy is None:
                    wy = words[y[1]] = _words(y[1])
                ok = relation[pair] = related(wx, wy)
            if not ok:
                continue
            joined = False
            for a in xs:
                for b in ys:
                    if (a, b) in apart:
                        continue
                    if similarity(sketches[a], sketches[b]) >= JACCARD_MIN:
                        uf.union(a, b)
                        joined = True
                        break
                    apart.add((a, b))
                if joined:
                    break
    return by_key, array("I", (uf.find(j) for j in range(n_contents)))
