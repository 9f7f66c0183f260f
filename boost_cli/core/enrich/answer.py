"""A model's enrichment answer, read as data: parsed, validated per entry, capped.

Pure. `parse` takes the answer text and the batch it answers and returns the enrichment
of every item whose entry passed, with a count of what was dropped and why. Nothing in
an answer is trusted: an entry for an id that was not asked, a second entry for one id,
a missing entry, a field that is not text, over-long text, control or invisible
characters, a URL, markup, or text that talks to a model rather than describing a task
is dropped (the phrase, or the whole entry when its sentence is bad), and what is kept
is capped (`MAX_TASKS` phrases, `MAX_ABOUT_CHARS` / `MAX_TASK_CHARS`).

The hostile-skill guard (docs/enrich.md, "A skill that asks for tasks"): a skill whose
own text addresses the describing model (`trust.instructions` finds medium or high
severity text aimed at a model) gets no enrichment at all, and every phrase that is kept
must share a term with the item's own text (kind, name, description, body head) or its accepted sentence (which must
itself share one), or else a specific term (not one of `GENERIC`) with such an anchored
phrase: "make my site work for blind users" stays beside "test my site with a screen
reader" for an accessibility skill, while "deploy to Kubernetes" claimed for a PDF skill
shares nothing and goes. A plain rewording is kept through its link ("the build is red
and I don't know why" beside "my CI build keeps failing" for a CI skill). Measured with
planted skills: docs/enrich.md. (Letting even two unlinked phrases through put a planted
PDF skill second on two popular tasks.)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from boost_cli.core import trust
from boost_cli.core.enrich.prompt import Item, item_id
from boost_cli.core.tokenize import tokenize

MAX_TASKS = 10
MAX_ABOUT_CHARS = 300  # the prompt asks for at most 30 words (~200 characters)
MAX_TASK_CHARS = 120  # 3-12 words asked
MAX_TASK_WORDS = 16
MIN_TASK_WORDS = 2
MAX_ANSWER_CHARS = 200_000

# Words too common in requests to tie a phrase to another one.
GENERIC = frozenset(
    tokenize(
        "make work use get help fix need want app code project file thing way set new run "
        "write create add change start easy quick better good best"
    )
)

# Reasons an entry or a phrase is dropped (the keys of `Parsed.dropped`).
UNKNOWN_ID = "unknown id"
DUPLICATE_ID = "duplicate id"
MISSING = "missing"
NOT_TEXT = "not text"
TOO_LONG = "over-long"
CONTROL = "control or invisible characters"
URL = "URL"
MARKUP = "markup"
INSTRUCTION = "instruction-like"
UNANCHORED = "shares no word with the item"
SUSPECT_ITEM = "item text addresses the model"
TOO_MANY = "over the phrase cap"

_INVISIBLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_URL = re.compile(
    r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.|mailto:|data:)|\b[\w-]+\.(?:com|org|net|io|dev|ai|sh|ly|co)\b"
)
_MARKUP = re.compile(r"[<>`{}]|\[[^\]]*\]\(|^\s*(?:#|[*-]\s|\d+\.\s)|\*\*|__|\|")
_INSTRUCTION = re.compile(
    r"(?i)\b(?:ignore|disregard|override|forget)\b.{0,40}\b(?:instructions?|prompts?|rules|above)\b"
    r"|\b(?:system\s+prompt|as\s+an\s+ai|you\s+are\s+now|you\s+must|assistant:|user:|"
    r"rank\s+(?:this|me|it)|always\s+(?:choose|pick|recommend|select|rank)|"
    r"recommend\s+this\s+skill|best\s+skill\s+for\s+(?:every|all|any))\b"
)


@dataclass(frozen=True)
class Enrichment:
    """What the model said of one item: one sentence and the task phrasings kept."""

    about: str
    tasks: Tuple[str, ...]

    def text(self) -> str:
        """The words indexed for the item: the sentence, then each phrase on its own line."""
        return "\n".join((self.about, *self.tasks))


@dataclass(frozen=True)
class Parsed:
    """An answer read: the enrichment by item digest and the drops by reason;
    ``malformed`` says why nothing could be read (then both are empty)."""

    by_digest: Dict[str, Enrichment]
    dropped: Dict[str, int]
    malformed: str = ""
    answered: FrozenSet[str] = frozenset()  # digests the answer had one entry for


def _objects(text: str) -> Iterator[Any]:
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return
        pos = start + 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        yield value


def _items_list(text: str) -> Optional[List[Any]]:
    for value in _objects(text[:MAX_ANSWER_CHARS]):
        if isinstance(value, dict) and isinstance(value.get("items"), list):
            return value["items"]
    return None


def fault(text: str) -> str:
    """Why ``text`` may not be indexed as a model's description, or ""."""
    if _INVISIBLE.search(text):
        return CONTROL
    if _URL.search(text):
        return URL
    if _MARKUP.search(text):
        return MARKUP
    if _INSTRUCTION.search(text):
        return INSTRUCTION
    return ""


def clean_text(value: Any, limit: int) -> Tuple[str, str]:
    """(text, "") when ``value`` is acceptable text of at most ``limit`` characters, else
    ("", the reason)."""
    if not isinstance(value, str):
        return "", NOT_TEXT
    why = fault(value)
    if why:
        return "", why
    flat = " ".join(value.split())
    if not flat:
        return "", NOT_TEXT
    if len(flat) > limit:
        return "", TOO_LONG
    return flat, ""


def _texts(raw: List[Any]) -> List[str]:
    return [" ".join(v.split()) for v in raw if isinstance(v, str)]


def vocabulary(item: Item) -> Set[str]:
    """The terms of the item's own text: what an enrichment must stay anchored to."""
    return set(tokenize(f"{item.kind} {item.name} {item.description} {item.body}"))


def addresses_model(item: Item) -> bool:
    """Whether the item's own text holds instructions aimed at a model (medium or high)."""
    text = f"{item.name}\n{item.description}\n{item.body}"
    return any(f.severity in ("medium", "high") for f in trust.instructions(text, "item"))


def check_entry(item: Item, entry: Any, dropped: Counter) -> Optional[Enrichment]:
    """One answer entry validated against ``item``: the enrichment kept, or None."""
    if addresses_model(item):
        dropped[SUSPECT_ITEM] += 1
        return None
    about, why = clean_text(entry.get("about"), MAX_ABOUT_CHARS)
    own = vocabulary(item)
    if why:
        dropped[f"about: {why}"] += 1
        return None
    about_terms = set(tokenize(about))
    if not about_terms & own - GENERIC:
        dropped[f"about: {UNANCHORED}"] += 1
        return None
    anchors = own | about_terms
    raw = entry.get("tasks")
    if not isinstance(raw, list):
        dropped[f"tasks: {NOT_TEXT}"] += 1
        raw = []
    anchored: List[Tuple[str, Set[str]]] = []
    loose: List[Tuple[str, Set[str]]] = []
    seen: Set[str] = set()
    for value in raw:
        phrase, why = clean_text(value, MAX_TASK_CHARS)
        if not why and not MIN_TASK_WORDS <= len(phrase.split()) <= MAX_TASK_WORDS:
            why = TOO_LONG if len(phrase.split()) > MAX_TASK_WORDS else NOT_TEXT
        if why:
            dropped[f"task: {why}"] += 1
            continue
        if phrase.lower() in seen:
            continue
        seen.add(phrase.lower())
        terms = set(tokenize(phrase))
        (anchored if terms & anchors - GENERIC else loose).append((phrase, terms))
    linked = {t for _, terms in anchored for t in terms} - GENERIC
    tasks = [p for p, _ in anchored]
    for phrase, terms in loose:
        if terms & linked:
            tasks.append(phrase)
        else:
            dropped[f"task: {UNANCHORED}"] += 1
    order = {p.lower(): n for n, p in enumerate(_texts(raw))}
    tasks.sort(key=lambda p: order.get(p.lower(), 0))
    if len(tasks) > MAX_TASKS:
        dropped[f"task: {TOO_MANY}"] += len(tasks) - MAX_TASKS
        tasks = tasks[:MAX_TASKS]
    return Enrichment(about, tuple(tasks))


def parse(text: str, batch: Sequence[Item]) -> Parsed:
    """The enrichment of each item of ``batch`` that ``text`` (the model's answer) gives
    acceptably, by digest; every drop counted by its reason."""
    entries = _items_list(text)
    if entries is None:
        return Parsed({}, {}, 'no JSON object with an "items" list')
    by_id = {item_id(i): item for i, item in enumerate(batch)}
    dropped: Counter = Counter()
    out: Dict[str, Enrichment] = {}
    answered: Set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            dropped[NOT_TEXT] += 1
            continue
        raw_id = entry.get("id")
        key = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else ""
        item = by_id.get(key.strip())
        if item is None:
            dropped[UNKNOWN_ID] += 1
            continue
        if key.strip() in answered:
            dropped[DUPLICATE_ID] += 1
            out.pop(item.digest, None)  # two answers for one id: trust neither
            continue
        answered.add(key.strip())
        kept = check_entry(item, entry, dropped)
        if kept is not None:
            out[item.digest] = kept
    missing = len(by_id.keys() - answered)
    if missing:
        dropped[MISSING] += missing
    return Parsed(out, dict(dropped), "", frozenset(by_id[k].digest for k in answered))
