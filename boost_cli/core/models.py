"""Typed domain objects shared by the catalog, the engines, the CLI's --json and MCP.

They stay frozen dataclasses until the edge, where `to_dict()` turns them into JSON.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

KINDS = ("skill", "rule", "workflow")
_NON_WORD = re.compile(r"[^\w]+")
ENGINES = ("lexical", "bm25", "dense", "hybrid")  # the retrievers `retrieval.get_retriever` offers


# ASCII punctuation an id keeps as it is: safe unquoted in a shell word, in a URL path, and
# as one whitespace-separated field (`fzf {1}`, `awk '{print $1}'`).
_ID_PUNCT = frozenset("-_.:/@+,=")


def _id_char(ch: str) -> str:
    if ch.isascii():
        keep = ch.isalnum() or ch in _ID_PUNCT
    else:  # letters of any script stay readable; spaces, controls and invisibles do not
        keep = unicodedata.category(ch)[0] not in "CZ"
    return ch if keep else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))


def id_part(text: str) -> str:
    """``text`` (an entry's name or path) as an id shows it: every space, control or
    invisible character, ``%`` and shell-special punctuation percent-escaped as its UTF-8
    bytes (``My Skill`` → ``My%20Skill``), so an id is one word that pastes into a shell and
    splits on white space. `unescape_id` reads it back exactly."""
    return "".join(map(_id_char, text))


def unescape_id(text: str) -> Optional[str]:
    """What the escaped id ``text`` stands for, or None when ``text`` is not one (it holds
    no ``%``, or it is not what `id_part` writes: ``100%`` is a plain name)."""
    if "%" not in text:
        return None
    try:
        plain = urllib.parse.unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None
    head, colon, rest = plain.partition(":")
    return plain if f"{head}{colon}{id_part(rest)}" == text else None


@dataclass(frozen=True)
class Entry:
    """One catalog item: a skill, a rule or a workflow defined by one file in a tap.

    ``path`` is the defining file relative to the tap root (POSIX separators);
    ``rel_dir`` is its folder, relative to the tap root ("" for the root).
    """

    name: str
    kind: str
    description: str
    tap: str
    rel_dir: str
    path: str
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # Set by the catalog scan when ``tap:name`` would name more than this entry (another
    # entry of the tap has this name, or this name is another's path or folder).
    by_path: bool = field(default=False, compare=False, hash=False)

    @property
    def id(self) -> str:
        """Unique within a home: ``tap:path``."""
        return f"{self.tap}:{self.path}"

    @property
    def qualified_name(self) -> str:
        """The id search prints and `lookup.find` resolves to exactly this entry:
        ``tap:name``, or ``tap:path`` when the name repeats within the tap, escaped by
        `id_part` (one shell word, no white space)."""
        return f"{self.tap}:{id_part(self.path if self.by_path else self.name)}"

    @property
    def listing_key(self) -> str:
        """The entry as a list shows it, normalised (case, punctuation and white space
        folded): ``name|description``. Entries with one key look like one skill, so a
        shortlist shows at most one of them (the index groups them)."""
        return f"{_normalised(self.name)}|{_normalised(self.description)}"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "tap": self.tap,
            "rel_dir": self.rel_dir,
            "path": self.path,
            "meta": dict(self.meta),
            **({"by_path": True} if self.by_path else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Entry:
        return cls(
            name=str(d["name"]),
            kind=str(d["kind"]),
            description=str(d.get("description", "")),
            tap=str(d["tap"]),
            rel_dir=str(d.get("rel_dir", "")),
            path=str(d["path"]),
            meta=dict(d.get("meta") or {}),
            by_path=d.get("by_path") is True,
        )


def _normalised(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


@dataclass(frozen=True)
class Chunk:
    """A passage of an entry's body, the unit BM25 and dense retrieval score.

    ``text`` is what is shown as a snippet (code fences kept); ``score_text`` is what
    is tokenized (code-fence noise dropped). ``start``/``end`` are character offsets of
    ``text`` in the entry's body (frontmatter stripped). ``heading`` is the heading path
    (outermost first) the chunk sits under.
    """

    entry_id: str
    tap: str
    kind: str
    index: int
    heading: Tuple[str, ...]
    text: str
    score_text: str
    start: int
    end: int


@dataclass(frozen=True)
class Hit:
    """One search result: an entry, its score, and why it was picked.

    ``snippet`` is the best-matching passage; ``why`` a one-line justification (from
    the reranker, else derived from the snippet), ``why_source`` who wrote it: "llm" (a
    model's words, unverified), "skill" (the skill's own description or passage) or ""
    (no why yet); ``also_in`` lists the ``tap:name``s of
    the copies collapsed into this hit (byte-identical files, and near-duplicates: the
    same skill copied with small edits); ``ranks`` maps engine name to the 1-based rank
    that engine gave (for --explain). ``group`` names the near-duplicate group the index
    put the file in (the SHA-256 of the group's first file; a file alone: its own hash),
    so engines and fusion count a group once; None when unknown.
    """

    entry: Entry
    score: float
    snippet: str = ""
    why: str = ""
    also_in: Tuple[str, ...] = ()
    why_source: str = ""
    ranks: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)
    content_hash: Optional[str] = None
    group: Optional[str] = None
    # The names in ``also_in`` whose file differs from this hit's (near-duplicates): the
    # rest of ``also_in`` are byte-identical copies.
    similar: Tuple[str, ...] = field(default=(), compare=False, hash=False)

    def to_dict(self) -> Dict[str, Any]:
        d = self.entry.to_dict()
        d.update(
            {
                "id": self.entry.qualified_name,
                "score": round(self.score, 6),
                "snippet": self.snippet,
                "why": self.why,
                "why_source": self.why_source,
                "also_in": list(self.also_in),
                "similar": list(self.similar),
                "ranks": dict(self.ranks),
            }
        )
        return d


MAX_FILE_BYTES = 1_000_000
# The catalog scan's version: its cache, and every cache keyed by what the scan makes
# (`registry.scan_version`), is keyed by it. Here, not in `catalog`, so a search can read
# it without importing the scanner. 3: entries whose name repeats in the tap carry by_path.
CATALOG_VERSION = 3


def content_hash(data: bytes) -> str:
    """The identity of a file's content (sha256, hex): copies of one file share it, so the
    index, the vector store and the search pipeline count them as one."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class TapSnapshot:
    """A tap at one commit, as the engines see it: its scanned entries and its folder.

    Engines key everything they persist by ``(name, commit)`` and read an entry's
    text through `text()`; the catalog scan already guaranteed every ``entry.path``
    is a regular file inside ``root`` (no symlink leaves the tap).
    """

    name: str
    commit: str
    root: Path
    entries: Tuple[Entry, ...]

    def text(self, entry: Entry) -> str:
        """The entry's whole defining file (frontmatter included), UTF-8 with replacement."""
        with open(self.root / entry.path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES)
        return data.decode("utf-8", errors="replace")
