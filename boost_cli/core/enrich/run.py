"""The enrichment run: which items still need an answer, what asking will cost, and the
batch runner that asks (`run`).

Items are the distinct entry texts of the tapped skills (`prompt.item_of`), less those
the store already holds for this prompt version and model, cut into batches from their
sorted digests (`prompt.batches`), so a rerun after a Ctrl-C or a failure asks only for
what is missing and the same home makes byte-identical prompts anywhere.

`run` keeps at most ``parallel`` calls in flight (daemon threads: the calls wait on the
network).
The transport retries a 429/5xx once, honouring ``retry-after``; a batch whose answer
fails or is malformed is asked once more, then skipped and counted. After
`BREAKER_BATCHES` batches in a row fail, the run stops asking (the backend is down or
refusing) and says so. Each answered batch is written to the store in one transaction,
by the calling thread, as it arrives: a Ctrl-C cancels what has not started and keeps
every batch already written.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import (
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from boost_cli.core import llm, settings
from boost_cli.core.enrich import answer, prompt
from boost_cli.core.enrich.store import LOCAL, Store, Stored
from boost_cli.core.errors import ProviderError, UsageError
from boost_cli.core.models import MAX_FILE_BYTES, TapSnapshot, content_hash

DEFAULT_PARALLEL = 4
CALL_SECONDS = 120.0  # one batch's answer: ~20 items × ~120 tokens
BREAKER_BATCHES = 3
CHARS_PER_TOKEN = 4  # the usual estimate for English text and JSON
OUTPUT_TOKENS_PER_ITEM = 150  # a sentence and 6-10 phrases, in JSON

# USD per million input and output tokens, by model family (the Messages API's list
# prices; the preview says it is an estimate).
PRICES: Tuple[Tuple[str, float, float], ...] = (
    ("haiku", 1.0, 5.0),
    ("sonnet", 3.0, 15.0),
    ("opus", 5.0, 25.0),
)

Progress = Optional[Callable[[int, int], None]]


def items_of(snaps: Iterable[TapSnapshot]) -> List[prompt.Item]:
    """Every entry of ``snaps`` as a prompt item (mirrored copies share a digest)."""
    return [it for it, _ in items_and_files(snaps)]


def items_and_files(snaps: Iterable[TapSnapshot]) -> List[Tuple[prompt.Item, str]]:
    """Every readable entry of ``snaps`` as (its prompt item, the sha256 of its file: the
    ``content_hash`` its hits carry)."""
    out = []
    for snap in snaps:
        for entry in snap.entries:
            try:
                data = (snap.root / entry.path).read_bytes()
            except OSError:
                continue  # not indexed either
            text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
            item = prompt.item_of(entry.kind, entry.name, entry.description, text)
            out.append((item, content_hash(data)))
    return out


@dataclass(frozen=True)
class Plan:
    """What a run would ask: the batches still to do, and what that costs."""

    distinct: int  # distinct texts in the taps
    cached: int  # of those, already enriched for this prompt version and model
    batches: List[List[prompt.Item]]
    input_tokens: int
    output_tokens: int

    @property
    def texts(self) -> int:
        return sum(len(b) for b in self.batches)

    def price(self, model: str) -> Optional[float]:
        """The estimated USD price on the Messages API, or None for an unknown model."""
        for family, per_in, per_out in PRICES:
            if family in model.lower():
                return (self.input_tokens * per_in + self.output_tokens * per_out) / 1e6
        return None


def plan(items: Sequence[prompt.Item], done: Set[str], size: int = prompt.BATCH_SIZE) -> Plan:
    """The batches for the ``items`` whose digest is not in ``done``, and their cost."""
    unique = prompt.distinct(items)
    pending = [it for it in unique if it.digest not in done]
    cut = prompt.batches(pending, size)
    chars = sum(len(prompt.SYSTEM_PROMPT) + len(prompt.build_prompt(b)) for b in cut)
    return Plan(
        distinct=len(unique),
        cached=len(unique) - len(pending),
        batches=cut,
        input_tokens=chars // CHARS_PER_TOKEN,
        output_tokens=len(pending) * OUTPUT_TOKENS_PER_ITEM,
    )


@dataclass
class Report:
    """What a run did."""

    batches: int = 0  # asked (answered or skipped)
    answered: int = 0  # batches written to the store
    skipped: int = 0  # batches that failed twice
    not_asked: int = 0  # batches left when the breaker stopped the run
    enriched: int = 0  # items with an enrichment kept
    calls: int = 0
    dropped: Counter = field(default_factory=Counter)
    failures: List[str] = field(default_factory=list)  # one line per skipped batch
    stopped: str = ""  # why the run stopped early
    seconds: float = 0.0

    def to_dict(self) -> Dict[str, object]:
        return {
            "batches": self.batches,
            "answered": self.answered,
            "skipped": self.skipped,
            "not_asked": self.not_asked,
            "enriched": self.enriched,
            "calls": self.calls,
            "dropped": dict(sorted(self.dropped.items())),
            "failures": list(self.failures),
            "stopped": self.stopped,
            "seconds": round(self.seconds, 3),
        }


Outcome = Tuple[int, Union[answer.Parsed, str]]  # (calls made, parsed answer or why not)


def ask(client: llm.Client, batch: Sequence[prompt.Item], seconds: float) -> Outcome:
    """One batch asked, and asked once more if the answer fails or is malformed."""
    user = prompt.build_prompt(batch)
    why = ""
    for attempt in (1, 2):
        text = client.complete(
            prompt.SYSTEM_PROMPT,
            user,
            max_tokens=prompt.MAX_TOKENS,
            deadline=time.monotonic() + seconds,
        )
        if isinstance(text, llm.LLMFailure):
            why = text.reason
            continue
        parsed = answer.parse(text, batch)
        if not parsed.malformed:
            return attempt, parsed
        why = f"malformed answer: {parsed.malformed}"
    return 2, why


def rows_of(batch: Sequence[prompt.Item], parsed: answer.Parsed, model: str) -> List[Stored]:
    """The rows a parsed batch writes: each item answered (an empty row when every part of
    its answer was dropped, so it is not asked again); items the model left out are not
    written and are asked again next run."""
    answered = parsed.answered
    out = []
    for it in batch:
        if it.digest not in answered:
            continue
        kept = parsed.by_digest.get(it.digest)
        about, tasks = (kept.about, kept.tasks) if kept else ("", ())
        out.append(Stored(it.digest, about, tasks, model, prompt.PROMPT_VERSION, LOCAL))
    return out


def run(
    client: llm.Client,
    store: Store,
    batches: Sequence[Sequence[prompt.Item]],
    *,
    parallel: int = DEFAULT_PARALLEL,
    seconds: float = CALL_SECONDS,
    progress: Progress = None,
) -> Report:
    """Ask every batch (see the module docstring); returns what happened. A
    KeyboardInterrupt stops it, every finished batch kept, and propagates.

    The calls run in daemon threads, so an interrupted run exits at once rather than
    wait for the answers in flight (they are asked again by the next run)."""
    report = Report()
    t0 = time.monotonic()
    total = sum(len(b) for b in batches)
    done_items = 0
    todo = list(range(len(batches)))
    results: queue.Queue = queue.Queue()
    running = 0
    failed_in_row = 0

    def work(n: int) -> None:
        try:
            results.put((n, ask(client, batches[n], seconds)))
        except BaseException as exc:  # handed to the calling thread, which raises it
            results.put((n, exc))

    try:
        while todo or running:
            while todo and running < max(1, parallel):
                threading.Thread(target=work, args=(todo.pop(0),), daemon=True).start()
                running += 1
            n, got = results.get()
            running -= 1
            if isinstance(got, BaseException):
                raise got
            calls, outcome = got
            batch = batches[n]
            report.calls += calls
            report.batches += 1
            done_items += len(batch)
            if isinstance(outcome, str):
                report.skipped += 1
                report.failures.append(f"batch {n + 1}: {outcome}")
                failed_in_row += 1
                if failed_in_row >= BREAKER_BATCHES and todo:
                    report.stopped = f"{BREAKER_BATCHES} batches in a row failed (last: {outcome})"
                    report.not_asked = len(todo)
                    todo.clear()
            else:
                failed_in_row = 0
                store.put(rows_of(batch, outcome, client.model))
                report.answered += 1
                report.enriched += len(outcome.by_digest)
                report.dropped.update(outcome.dropped)
            if progress is not None:
                progress(done_items, total)
    finally:
        report.seconds = time.monotonic() - t0
    return report


def client_for_enrichment(env: Optional[Mapping[str, str]] = None) -> llm.Client:
    """The configured LLM (`llm.choose` auto, model ``$BOOST_ENRICH_MODEL``), or
    `ProviderError` naming the fix."""
    client = llm.choose("auto", model=None, model_var="BOOST_ENRICH_MODEL", env=env)
    if isinstance(client, llm.LLMFailure):
        fix = (
            "set ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for a server on 127.0.0.1) or "
            "install the claude CLI"
            if client.backend is None
            else "rerun once the cause is fixed and the cool-down is over ('boost doctor')"
        )
        raise ProviderError(f"no LLM to enrich with: {client.reason}", fix)
    return client


def check_consent(client: llm.Client, allow_egress: bool) -> None:
    """Refuse (`UsageError`) to send registry text to a remote LLM without consent: the
    flag or the saved setting. An LLM on this machine (127.0.0.1) needs none."""
    if client.local or allow_egress or settings.get("enrich.allow_egress"):
        return
    raise UsageError(
        f"--enrich sends the text of every tapped skill to {client.endpoint}",
        "pass --allow-egress, or save it once with 'boost config set enrich.allow_egress true'",
    )


def preview(plan_: Plan, client: llm.Client) -> str:
    """One paragraph: what will be sent where, in how many calls, at what estimated cost."""
    calls = len(plan_.batches)
    text = (
        f"boost will send {plan_.texts} skill texts in {calls} call{'' if calls == 1 else 's'} "
        f"to {client.endpoint} (model {client.model}): about {plan_.input_tokens:,} input "
        f"and {plan_.output_tokens:,} output tokens"
    )
    price = plan_.price(client.model) if client.backend == "api" else None
    if price is not None:
        text += f", about ${price:.2f} at Messages API list prices"
    text += "."
    if plan_.cached:
        text += f" {plan_.cached} of {plan_.distinct} texts are enriched already."
    return text
