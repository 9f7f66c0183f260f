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
