"""What search makes of the enrichment, through the real CLI and `boost mcp`: the hits
and the *why* it supplies, --explain, freshness across update/untap/reindex, a damaged
store, doctor, and the same hits over MCP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from tests.anthropic_stub import AnthropicStub
from tests.enrich_stub import enrich_reply
from tests.helpers import commit_all, run_boost
from tests.test_mcp_server import McpProcess

BLIND = "make my page usable for blind people"


@pytest.fixture
def enriched(example_repo: Path, boost_home: Path) -> Iterator[Dict[str, Any]]:
    """A home with the example registry tapped, indexed and enriched (stub answers)."""
    with AnthropicStub(responder=enrich_reply()) as stub:
        env = {"ANTHROPIC_API_KEY": "sk-test-enrich", "ANTHROPIC_BASE_URL": stub.base_url}
        for args in (
            ["tap", str(example_repo), "--name", "example"],
            ["reindex", "--enrich", "--yes"],
        ):
            r = run_boost(args, boost_home, env=env)
            assert r.returncode == 0, r.stderr
        yield {"home": boost_home, "repo": example_repo, "env": env, "stub": stub}


def hits(home: Path, query: str, *extra: str) -> List[Dict[str, Any]]:
    r = run_boost(["search", query, "--json", "--no-llm", "--limit", "5", *extra], home)
    assert r.returncode == 0, r.stderr
    data: List[Dict[str, Any]] = json.loads(r.stdout)
    return data


def test_a_hit_found_through_enrichment_says_so(enriched: Dict[str, Any]) -> None:
    home = enriched["home"]
    top = hits(home, BLIND)[0]
    assert top["id"] == "example:a11y-audit"
    assert top["why"] == "Helps with a11y audit tasks."
    assert top["why_source"] == "enrichment"
    r = run_boost(["search", BLIND, "--no-llm", "--explain", "--limit", "3"], home)
    assert r.returncode == 0, r.stderr
    assert (
        "enrichment: example:a11y-audit matched through its enrichment on make, usable, blind "
        "(claude-haiku-5-5, prompt v1)" in r.stdout
    )
    # a literal match keeps its own words as the why
    react = hits(home, "jest react component tests")[0]
    assert react["id"] == "example:jest-runner" and react["why_source"] == "skill"


def test_the_same_hits_over_mcp_as_on_the_cli(enriched: Dict[str, Any]) -> None:
    home = enriched["home"]
    cli = hits(home, BLIND)
    server = McpProcess(home, {"BOOST_NO_LLM": "1"})
    try:
        server.initialize()
        result = server.call_result("boost_search", {"query": BLIND, "limit": 5})
        assert server.close() == 0
    finally:
        server.kill()
    assert "structuredContent" in result, result
    mcp = result["structuredContent"]["results"]
    assert [h["id"] for h in mcp] == [h["id"] for h in cli]
    assert mcp[0]["why_source"] == "enrichment" and mcp[0]["why"] == cli[0]["why"]


def test_a_changed_skill_ranks_without_its_old_enrichment(enriched: Dict[str, Any]) -> None:
    home, repo = enriched["home"], enriched["repo"]
    skill = repo / "skills" / "a11y-audit" / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    skill.write_text(
        text.replace("Audit a web page", "Audit a web page or an app", 1), encoding="utf-8"
    )
    commit_all(repo)
    r = run_boost(["update"], home)
    assert r.returncode == 0, r.stderr
    assert "example:a11y-audit" not in [h["id"] for h in hits(home, "blind")]
    # re-asked only with --enrich: one text, one call
    before = len(enriched["stub"].requests)
    r = run_boost(["reindex", "--enrich", "--yes", "--json"], home, env=enriched["env"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["enrich"]["to_send"] == 1
    assert len(enriched["stub"].requests) == before + 1
    assert hits(home, "blind")[0]["id"] == "example:a11y-audit"


def test_an_untapped_registry_never_ranks_through_its_enrichment(
    enriched: Dict[str, Any], tmp_path: Path
) -> None:
    home = enriched["home"]
    copy = Path(shutil.copytree(enriched["repo"], tmp_path / "mirror"))
    r = run_boost(["tap", str(copy), "--name", "mirror"], home)
    assert r.returncode == 0, r.stderr
    r = run_boost(["untap", "example"], home)
    assert r.returncode == 0, r.stderr
    # the mirror's copies share the digests, so they keep the enrichment; the tap is gone
    ids = [h["id"] for h in hits(home, BLIND)]
    assert ids[0] == "mirror:a11y-audit" and not any(i.startswith("example:") for i in ids)
    r = run_boost(["untap", "mirror"], home)
    assert r.returncode == 0, r.stderr


def test_a_damaged_store_is_a_note_a_doctor_fix_and_a_refusal(enriched: Dict[str, Any]) -> None:
    home = enriched["home"]
    db = home / "cache" / "enrich.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    r = run_boost(["search", BLIND, "--no-llm", "--json"], home)
    assert r.returncode == 0, r.stderr
    assert f"the enrichment store {db} is damaged" in r.stderr
    assert "remove it and run 'boost reindex --enrich' again" in r.stderr
    r = run_boost(["doctor", "--json"], home)
    report = json.loads(r.stdout)
    assert report["enrich"]["status"] == "damaged"
    assert any(f.startswith("enrichment store damaged: ") for f in report["fixes"])
    r = run_boost(["reindex", "--enrich", "--yes"], home, env=enriched["env"])
    assert r.returncode == 5
    assert r.stderr.startswith(f"boost: error: the enrichment store {db} is damaged")
    # a plain reindex indexes without it: the hit the enrichment made is gone
    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr
    assert "example:a11y-audit" not in [h["id"] for h in hits(home, "blind")]
    db.unlink()
    r = run_boost(["doctor", "--json"], home)
    assert json.loads(r.stdout)["enrich"] == {"status": "none"}


def test_doctor_names_who_wrote_the_enrichment(enriched: Dict[str, Any]) -> None:
    r = run_boost(["doctor"], enriched["home"])
    assert "enrichment: 29 texts (29 by claude-haiku-5-5, prompt v1)" in r.stdout


def test_a_bundle_carries_the_enrichment_labelled_as_imported(
    enriched: Dict[str, Any], tmp_path: Path
) -> None:
    home = enriched["home"]
    out = tmp_path / "team.bundle"
    r = run_boost(["bundle", "export", str(out)], home)
    assert r.returncode == 0, r.stderr
    replica = tmp_path / "replica"
    r = run_boost(["bundle", "import", str(out), "--json"], replica)
    assert r.returncode == 0, r.stderr
    (tap,) = json.loads(r.stdout)[0]["taps"]
    assert tap["enrichments"] == 29 and tap["notes"] == []
    assert [h["id"] for h in hits(replica, BLIND)] == [h["id"] for h in hits(home, BLIND)]
    r = run_boost(["search", BLIND, "--no-llm", "--explain", "--limit", "1"], replica)
    assert "(claude-haiku-5-5, prompt v1, imported)" in r.stdout
    r = run_boost(["doctor"], replica)
    assert "enrichment: 29 texts (29 by claude-haiku-5-5, prompt v1, imported)" in r.stdout


def test_a_bundles_bad_enrichment_rows_are_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boost_cli.core.enrich import prompt, share, store
    from boost_cli.core.models import Entry, TapSnapshot

    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "home"))
    root = tmp_path / "tap"
    root.mkdir()
    text = "---\nname: a11y\ndescription: Audits pages.\n---\n# Audit\nCheck each page.\n"
    (root / "SKILL.md").write_text(text, encoding="utf-8")
    entry = Entry("a11y", "skill", "Audits pages.", "t", "", "SKILL.md")
    snap = TapSnapshot("t", "c" * 40, root, (entry,))
    own = prompt.item_of("skill", "a11y", "Audits pages.", text).digest
    good = {
        "digest": own,
        "about": "Audits pages.",
        "tasks": ["check a page"],
        "model": "m",
        "prompt_version": 1,
    }
    rows = [
        good,
        {**good, "digest": "../x"},
        {**good, "about": "see https://evil.example.invalid"},
        {**good, "tasks": ["<script>"]},
        {**good, "prompt_version": True},
        "not a row",
        {**good, "digest": "b" * 64},  # well formed, but no item of this tap: another tap's
    ]
    data = "\n".join(json.dumps(r) for r in rows).encode() + b"\n{broken\n"
    assert share.import_rows(data, [snap]) == (1, 6, 1)
    db = store.open_store()
    assert db is not None
    with db:
        assert set(db.chosen([own, "b" * 64])) == {own}
