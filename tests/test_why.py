"""The *why* without an LLM is a reason: a whole prose sentence with query terms, markup out,
never cut mid-sentence without an ellipsis at a word boundary; else the description."""

from __future__ import annotations

from boost_cli.core import why
from boost_cli.core.text import ELLIPSIS

LIMIT = 200


def r(query: str, passage: str, desc: str = "") -> str:
    return why.reason(query, passage, desc, LIMIT)


def test_a_link_is_its_text() -> None:
    got = r(
        "review a pull request",
        "See [the review guide](https://x.io/g) before you review a pull request.",
    )
    assert got == "See the review guide before you review a pull request."


def test_a_checkbox_yaml_and_heading_are_not_reasons() -> None:
    passage = "---\nname: pr-review\ndescription: review pull requests\n---\n## Review a pull request\n- [ ] review pull request title\n"
    assert (
        r("review pull request", passage, "Reviews pull requests for bugs.")
        == "Reviews pull requests for bugs."
    )
    got = r(
        "review pull request",
        "- [x] Review the pull request diff line by line before approving it.",
    )
    assert got == "Review the pull request diff line by line before approving it."


def test_a_sentence_wrapped_over_lines_stays_whole() -> None:
    passage = "When you review a pull request, read the tests first,\nthen the code they cover.\n"
    assert r("review pull request", passage) == (
        "When you review a pull request, read the tests first, then the code they cover."
    )


def test_a_sentence_cut_by_the_passage_gets_an_ellipsis() -> None:
    passage = "Update the changelog in the same pull request as the change, so release day is"
    got = r("pull request changelog", passage)
    assert got.endswith(" " + ELLIPSIS) and got.startswith("Update the changelog")
    # a whole sentence beats a cut one with as many terms
    passage2 = "Keep one pull request per change and its changelog line.\n" + passage
    assert (
        r("pull request changelog", passage2)
        == "Keep one pull request per change and its changelog line."
    )


def test_a_long_sentence_is_cut_at_a_word_boundary() -> None:
    long = "Review the pull request " + " ".join(["carefully and then"] * 30) + "."
    got = r("review pull request", long)
    assert len(got) <= LIMIT and got.endswith(" " + ELLIPSIS)
    assert got[:-2].split(" ")[-1] in long.split(" ")  # the last word is a whole word


def test_code_and_tables_are_skipped() -> None:
    passage = "| review | pull request |\n|---|---|\n```\ngit review pull request\n```\nconst review = pullRequest();"
    assert r("review pull request", passage, "PR reviews.") == "PR reviews."


def test_folding_says_similar_when_copies_differ(tmp_path) -> None:
    """A byte-identical copy is "same file"; a copy with a small edit is "similar"."""
    import json

    from tests.helpers import make_repo, run_boost, skill

    body = "\n".join(
        f"Step {w}: fill the pdf form field named {w} and check the value it holds."
        for w in [
            "alpha",
            "beta",
            "gamma",
            "delta",
            "epsilon",
            "zeta",
            "eta",
            "theta",
            "iota",
            "kappa",
            "lambda",
            "mu",
        ]
    )
    text = skill("pdf-forms", "Fill PDF forms field by field.", body)
    edited = text.replace("check the value it holds.", "check the value.", 1)
    home = tmp_path / "home"
    for name, content in (("a", text), ("b", text), ("c", edited)):
        repo = make_repo(tmp_path / name, {"skills/pdf-forms/SKILL.md": content})
        assert run_boost(["tap", str(repo), "--name", name], home).returncode == 0
    assert run_boost(["reindex"], home).returncode == 0
    hits = json.loads(run_boost(["search", "fill pdf form", "--json", "--no-llm"], home).stdout)
    assert len(hits) == 1, hits
    top = hits[0]
    assert sorted([top["id"], *top["also_in"]]) == ["a:pdf-forms", "b:pdf-forms", "c:pdf-forms"]
    identical = {"a:pdf-forms", "b:pdf-forms"}
    if top["id"] in identical:
        assert top["similar"] == ["c:pdf-forms"]
    else:
        assert sorted(top["similar"]) == sorted(identical)
    r = run_boost(["search", "fill pdf form", "--no-llm"], home, env={"COLUMNS": "80"})
    assert "similar copies in" in r.stdout
