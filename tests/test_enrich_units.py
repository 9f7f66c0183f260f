"""The enrichment run, store and lookup in process: a fake client, literal items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Union

import pytest

from boost_cli.core import llm
from boost_cli.core.enrich import lookup, prompt, run, store
from boost_cli.core.errors import UsageError
from boost_cli.core.models import Entry, Hit, content_hash

TEXT = "---\nname: {n}\ndescription: Fill PDF forms number {n}.\n---\nFill the PDF form {n}.\n"


def items(n: int) -> List[prompt.Item]:
    return [
        prompt.item_of("skill", f"pdf-{i}", f"Fill PDF forms number {i}.", TEXT.format(n=i))
        for i in range(n)
    ]


class Fake:
    backend = "api"
    model = "claude-haiku-test"
    endpoint = "https://llm.example.invalid"
    local = False

    def __init__(self, bad: int = 0) -> None:
        self.bad = bad  # this many calls answer garbage first
        self.calls = 0

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, llm.LLMFailure]:
        self.calls += 1
        if self.calls <= self.bad:
            return llm.LLMFailure("down", "api") if self.calls % 2 else "no json here"
        lines = [json.loads(x) for x in user.splitlines()[1:]]
        return json.dumps(
            {
                "items": [
                    {
                        "id": it["id"],
                        "about": f"Fills PDF form {it['name']}.",
                        "tasks": ["fill in a pdf form", "pdf form fields by hand"],
                    }
                    for it in lines
                ]
            }
        )


def test_plan_counts_cost_and_skips_what_is_done() -> None:
    its = items(25)
    plan = run.plan(its + its[:3], {its[0].digest})
    assert (plan.distinct, plan.cached, plan.texts, len(plan.batches)) == (25, 1, 24, 2)
    assert plan.output_tokens == 24 * run.OUTPUT_TOKENS_PER_ITEM
    assert plan.price("claude-haiku-x") == pytest.approx(
        (plan.input_tokens * 1.0 + plan.output_tokens * 5.0) / 1e6
    )
    assert plan.price("some-local-model") is None
    text = run.preview(plan, Fake())  # type: ignore[arg-type]
    assert text.startswith("boost will send 24 skill texts in 2 calls to https://llm.example")
    assert "at Messages API list prices. 1 of 25 texts are enriched already." in text


def test_consent_is_refused_for_a_remote_llm_and_given_for_a_local_one() -> None:
    with pytest.raises(UsageError) as exc:
        run.check_consent(Fake(), False)  # type: ignore[arg-type]
    assert "--allow-egress" in str(exc.value) and "enrich.allow_egress" in str(exc.value)
    run.check_consent(Fake(), True)  # type: ignore[arg-type]
    local = Fake()
    local.local = True
    run.check_consent(local, False)  # type: ignore[arg-type]
    assert llm.is_local("http://127.0.0.1:9/x") and llm.is_local("http://[::1]:80")
    assert not llm.is_local("https://api.anthropic.com") and not llm.is_local("ftp://localhost")


def test_run_retries_once_skips_then_resumes(tmp_path: Path) -> None:
    db = store.open_store(tmp_path / "e.sqlite", create=True)
    assert db is not None
    its = items(30)
    batches = run.plan(its, set()).batches
    client = Fake(bad=2)  # the first batch fails twice: skipped
    seen: List[int] = []
    report = run.run(client, db, batches, parallel=1, progress=lambda d, t: seen.append(d))  # type: ignore[arg-type]
    assert (report.skipped, report.answered, report.enriched, report.calls) == (1, 1, 10, 3)
    assert seen == [20, 30] and report.failures[0].startswith("batch 1: malformed answer")
    done = db.done(prompt.PROMPT_VERSION, client.model)
    assert len(done) == 10
    again = run.run(client, db, run.plan(its, done).batches)  # type: ignore[arg-type]
    assert again.enriched == 20 and len(db.done(prompt.PROMPT_VERSION, client.model)) == 30
    assert db.counts() == {("claude-haiku-test", prompt.PROMPT_VERSION, "local"): 30}
    db.close()


def test_the_run_stops_after_three_failed_batches_in_a_row(tmp_path: Path) -> None:
    db = store.open_store(tmp_path / "e.sqlite", create=True)
    assert db is not None
    batches = run.plan(items(100), set(), size=10).batches
    report = run.run(Fake(bad=1000), db, batches, parallel=1)  # type: ignore[arg-type]
    assert report.skipped == 3 and report.not_asked == 7 and "3 batches in a row" in report.stopped
    db.close()


def test_a_damaged_store_says_so_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(store.EnrichDamaged) as exc:
        store.open_store(path)
    assert "remove it and run 'boost reindex --enrich' again" in str(exc.value)
    assert store.remove(path) and not store.remove(path)
    assert store.open_store(path) is None and store.texts(path) == {}
    assert store.fingerprint({}) == "" and len(store.fingerprint({"a": "b"})) == 16


def test_lookup_labels_a_hit_found_through_its_enrichment(tmp_path: Path, boost_home: Path) -> None:
    root = tmp_path / "tap"
    (root / "s").mkdir(parents=True)
    text = TEXT.format(n=1)
    (root / "s" / "SKILL.md").write_text(text, encoding="utf-8")
    item = prompt.item_of("skill", "pdf-1", "Fill PDF forms number 1.", text)
    sha = content_hash(text.encode("utf-8"))
    db = store.open_store(create=True)
    assert db is not None
    with db:
        db.put(
            [
                store.Stored(
                    item.digest, "Fills PDF forms.", ("paperwork for taxes",), "m", 1, "imported"
                )
            ]
        )
        db.put_files([(sha, item.digest)])
    entry = Entry("pdf-1", "skill", "Fill PDF forms number 1.", "t", "s", "s/SKILL.md")
    hit = Hit(entry=entry, score=1.0, content_hash=sha)
    out, matched, notes = lookup.annotate("taxes paperwork pdf", [hit], {"t": root})
    assert notes == [] and out[0].why == "Fills PDF forms." and out[0].why_source == "enrichment"
    assert matched["t:pdf-1"]["words"] == ["taxes", "paperwork"]
    assert matched["t:pdf-1"]["origin"] == "imported"
    # unmapped file: its digest is computed from the text
    plain = Hit(entry=entry, score=1.0, content_hash=None)
    out, matched, _ = lookup.annotate("taxes", [plain], {"t": root})
    assert out[0].why_source == "enrichment"
    # nothing only the enrichment has: left alone
    out, matched, _ = lookup.annotate("fill pdf form", [hit], {"t": root})
    assert matched == {} and out[0].why == ""
    report, fixes = lookup.status(None)
    assert report["status"] == "ok" and report["by"][0]["origin"] == "imported" and fixes == []
    report, fixes = lookup.status("0000")
    assert not report["indexed"] and fixes
