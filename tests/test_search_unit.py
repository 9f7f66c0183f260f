"""Pure parts of the search pipeline and the lexical fallback."""

from __future__ import annotations

import pytest

from boost_cli.core import lexical, search
from boost_cli.core.errors import UsageError
from boost_cli.core.models import Entry, Hit


def _entry(
    name: str, desc: str = "", tap: str = "t", kind: str = "skill", meta: dict | None = None
) -> Entry:
    return Entry(
        name=name,
        kind=kind,
        description=desc,
        tap=tap,
        rel_dir=f"skills/{name}",
        path=f"skills/{name}/SKILL.md",
        meta=meta or {},
    )


def test_why_prefers_a_prose_sentence_with_more_query_terms() -> None:
    hit = Hit(
        entry=_entry("jest-runner", "Unit testing for JavaScript."),
        score=1.0,
        snippet='import { render } from "@testing-library/react";\nUse it to test a React app component by component.',
    )
    assert (
        search.why_from_snippet("test my React app", hit)
        == "Use it to test a React app component by component."
    )


def test_why_never_picks_code_and_falls_back_to_description() -> None:
    hit = Hit(
        entry=_entry("x", "Fill PDF forms with pypdf."),
        score=1.0,
        snippet="for page in writer.pages:\n  x = 1;",
    )
    assert search.why_from_snippet("pdf page writer", hit) == "Fill PDF forms with pypdf."


def test_why_is_one_bounded_line() -> None:
    hit = Hit(entry=_entry("x", "word " * 100), score=1.0)
    why = search.why_from_snippet("word", hit)
    assert len(why) <= search.WHY_CHARS and "\n" not in why and why.endswith("…")


@pytest.mark.parametrize(
    "opts,msg",
    [
        (search.SearchOptions(query="  "), "the query is empty"),
        (search.SearchOptions(query="x", kind="plugin"), "unknown kind"),
        (search.SearchOptions(query="x", limit=0), "limit must be between 1 and 100"),
    ],
)
def test_validate(opts: search.SearchOptions, msg: str) -> None:
    with pytest.raises(UsageError, match=msg):
        search.validate(opts)


def test_lexical_weights_name_over_description_over_meta() -> None:
    entries = [
        _entry("other", "nothing here", meta={"tags": ["docker"]}),
        _entry("docker-build", "build images"),
        _entry("images", "a docker guide"),
    ]
    hits = lexical.search(entries, "docker")
    assert [h.entry.name for h in hits] == ["docker-build", "images", "other"]
    assert hits[0].ranks == {"lexical": 1}
    assert lexical.search(entries, "docker", kind="rule") == []
    assert lexical.search(entries, "the and of") == []


def test_lexical_rare_terms_count_more() -> None:
    entries = [_entry(f"tests-{i}", "testing helper") for i in range(5)] + [
        _entry("kafka", "testing kafka consumers")
    ]
    hits = lexical.search(entries, "kafka testing")
    assert hits[0].entry.name == "kafka"


def test_why_prefers_the_passage_on_a_tie_and_needs_one_shared_term() -> None:
    hit = Hit(
        entry=_entry("pdf", "Fill PDF forms."),
        score=1.0,
        snippet="Intro text that says nothing useful here.\nYou can fill forms in any PDF reader app.",
    )
    # description and the second sentence share {pdf, form, fill}: the passage wins the tie
    assert (
        search.why_from_snippet("fill pdf form", hit) == "You can fill forms in any PDF reader app."
    )
    # nothing in the passage shares a term: the description stays
    assert search.why_from_snippet("spreadsheet", hit) == "Fill PDF forms."


def test_mcp_record_drops_a_why_that_repeats_the_description() -> None:
    from boost_cli.core import records

    entry = _entry("pdf", "Fill PDF forms.")
    same = records.mcp_record(Hit(entry, 1.0, why="Fill  PDF forms."), {})
    other = records.mcp_record(Hit(entry, 1.0, why="Flatten the form afterwards."), {})
    assert "why" not in same and other["why"] == "Flatten the form afterwards."
    assert list(other)[:3] == ["id", "name", "tap"]


def test_interleave_takes_turns_and_keeps_one_hit_per_group() -> None:
    def hit(name: str, group: str = "", sha: str = "") -> Hit:
        return Hit(_entry(name), 1.0, content_hash=sha or None, group=group or None)

    first = [hit("a", "g1"), hit("b", sha="h2"), hit("c")]
    second = [hit("a2", "g1"), hit("d", sha="h2"), hit("e"), hit("f")]
    got = search.interleave(first, second, 4)
    assert [h.entry.name for h in got] == ["a", "b", "c", "e"]


def test_why_never_picks_a_code_comment() -> None:
    hit = Hit(
        entry=_entry("bitcoin", "Bitcoin scripting."),
        score=1.0,
        snippet="// Key path: Schnorr signature with internal pubkey\nx",
    )
    assert search.why_from_snippet("bitcoin signature", hit) == "Bitcoin scripting."
