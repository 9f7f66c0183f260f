"""`boost reindex` and `boost search` through the real CLI, with every degradation path."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest

from boost_cli.cli import main
from tests.anthropic_stub import AnthropicStub, RecordedRequest, StubReply
from tests.helpers import HIT_KEYS, ROOT, run_boost

FAKE_CLAUDE = ROOT / "tests" / "fakebin_claude"


@pytest.fixture
def tapped(example_repo: Path, boost_home: Path) -> Path:
    r = run_boost(["tap", str(example_repo), "--name", "example"], boost_home)
    assert r.returncode == 0, r.stderr
    return boost_home


def _env_no_llm(tmp_path: Path) -> Dict[str, str]:
    """PATH without any `claude`, so 'auto' rerank finds no LLM."""
    return {"PATH": os.path.dirname(os.sys.executable) + os.pathsep + "/usr/bin:/bin"}


def _ids(stdout: str) -> List[str]:
    return [h["id"] for h in json.loads(stdout)]


def test_no_index_degrades_to_lexical(tapped: Path, tmp_path: Path) -> None:
    r = run_boost(
        ["search", "unit testing javascript", "--explain"], tapped, env=_env_no_llm(tmp_path)
    )
    assert r.returncode == 0, r.stderr
    assert "note: no search index yet" in r.stderr and "boost reindex" in r.stderr
    assert "engine: lexical" in r.stdout
    assert re.search(r"^ 1\. example:jest-runner  \[skill\]", r.stdout, re.M)


def test_reindex_then_search(tapped: Path, tmp_path: Path) -> None:
    r = run_boost(["reindex"], tapped)
    assert r.returncode == 0, r.stderr
    assert re.match(
        r"Indexed 1 taps \(1 rebuilt, 0 unchanged\): 29 entries, \d+ chunks, \d+ terms, [\d.]+ MB in [\d.]+ s",
        r.stdout,
    )
    again = run_boost(["reindex"], tapped)
    assert "(0 rebuilt, 1 unchanged)" in again.stdout
    env = _env_no_llm(tmp_path)
    # the body decides: "React" is in jest-runner's body only, never its name or description
    r = run_boost(["search", "test my React app"], tapped, env=env)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(" 1. example:jest-runner  [skill]")
    assert r.stdout.splitlines()[1].strip()  # a why line
    r = run_boost(["search", "test my React app", "--json", "--limit", "3"], tapped, env=env)
    hits = json.loads(r.stdout)
    assert len(hits) == 3 and hits[0]["id"] == "example:jest-runner"
    h = hits[0]
    assert set(h) == HIT_KEYS | {"uri"}  # a skill served under the MCP Skills extension
    assert h["uri"] == "skill://example/skills/jest-runner/SKILL.md"
    assert Path(h["file"]).is_file() and h["url"].startswith("file://")
    assert h["ranks"] == {"bm25": 1} and h["score"] > 0 and h["snippet"]
    r = run_boost(
        ["search", "review a pull request", "--kind", "workflow", "--json"], tapped, env=env
    )
    assert {x["kind"] for x in json.loads(r.stdout)} == {"workflow"}


def test_explain_reports_every_stage(tapped: Path, tmp_path: Path) -> None:
    run_boost(["reindex"], tapped)
    r = run_boost(["search", "fill a pdf form", "--explain"], tapped, env=_env_no_llm(tmp_path))
    out = r.stdout
    assert "engine: bm25" in out
    assert re.search(r"index: generated \S+, 1 taps", out) and "example @ " in out
    assert re.search(r"candidates: \d+ distinct files retrieved", out)
    assert "rerank: unavailable: no LLM available" in out
    assert re.search(
        r"timings: open [\d.]+ ms, expand [\d.]+ ms, retrieve [\d.]+ ms, rerank [\d.]+ ms, total",
        out,
    )
    assert "ranks: bm25 #1" in out


@pytest.mark.parametrize("mode", ["exit1", "garbage"])
def test_failing_claude_keeps_bm25_order(tapped: Path, mode: str) -> None:
    run_boost(["reindex"], tapped)
    base = run_boost(["search", "test my React app", "--json", "--no-rerank"], tapped)
    env = {"PATH": f"{FAKE_CLAUDE}{os.pathsep}{os.environ['PATH']}", "FAKE_CLAUDE_MODE": mode}
    r = run_boost(["search", "test my React app", "--json"], tapped, env=env)
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == _ids(base.stdout)
    if mode == "garbage":  # an unreadable answer: the next prompt may do better
        assert "note: rerank skipped:" in r.stderr and "showing bm25 order" in r.stderr
    else:  # a failing CLI is asked once (the expansion), then passed over (the breaker)
        assert "query expansion skipped: claude CLI exited 1" in r.stderr
        assert "rerank skipped" not in r.stderr


def test_claude_cli_reranks(tapped: Path) -> None:
    run_boost(["reindex"], tapped)
    base = _ids(
        run_boost(
            ["search", "test my React app", "--json", "--no-rerank", "--limit", "5"], tapped
        ).stdout
    )
    env = {"PATH": f"{FAKE_CLAUDE}{os.pathsep}{os.environ['PATH']}", "FAKE_CLAUDE_MODE": "good"}
    picks = {"picks": [{"id": base[3], "why": "fits"}, {"id": base[1], "why": "also"}]}
    r = run_boost(
        ["search", "test my React app", "--json", "--limit", "5", "--explain"],
        tapped,
        env={**env, "FAKE_CLAUDE_RESULT": json.dumps(picks)},
    )
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == [base[3], base[1], base[0], base[2], base[4]]
    hits = json.loads(r.stdout)
    assert hits[0]["ranks"]["rerank"] == 1 and hits[0]["why_source"] == "llm"
    assert hits[2]["why_source"] == "skill"  # not picked: its why is the skill's own text
    # The fake's own answer reverses the candidates: the last five, each scored under a
    # fifth of the best, so the bound on lifting keeps the retrieval's order.
    r = run_boost(["search", "test my React app", "--json", "--limit", "5"], tapped, env=env)
    assert _ids(r.stdout) == base


def _is_expansion(req: RecordedRequest) -> bool:
    return '{"keywords": [' in str(req.body.get("system", ""))


def test_messages_api_expands_then_reranks(tapped: Path) -> None:
    run_boost(["reindex"], tapped)

    picked: Dict[str, str] = {}

    def answer(req: RecordedRequest) -> StubReply:
        if _is_expansion(req):
            assert req.body["messages"][0]["content"] == "Task: test my React app"
            assert req.body["max_tokens"] == 200
            return StubReply(text='{"keywords": ["jest", "component tests"]}')
        prompt = json.dumps(req.body)
        assert 'Task (JSON string): \\"test my React app\\"' in prompt and "keywords" not in prompt
        ids = list(dict.fromkeys(re.findall(r"example:[a-z0-9-]+", prompt)))
        assert len(ids) > 3 and ids[0] == "example:jest-runner"
        picked["id"] = ids[2]  # the reranker promotes the third candidate
        picks = [{"id": ids[2], "why": "the closest to this task"}]
        picks += [{"id": i, "why": "related"} for i in ids[:2]]
        return StubReply(text=json.dumps({"picks": picks}))

    with AnthropicStub(responder=answer) as stub:
        env = {"ANTHROPIC_API_KEY": "sk-test-secret", "ANTHROPIC_BASE_URL": stub.base_url}
        argv = ["search", "test my React app", "--json", "--limit", "3"]
        r = run_boost(argv, tapped, env=env)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)
        assert hits[0]["id"] == picked["id"] != "example:jest-runner"
        assert hits[0]["why"] == "the closest to this task"
        assert hits[1]["id"] == "example:jest-runner"
        assert [_is_expansion(q) for q in stub.requests] == [True, False]
        assert stub.requests[0].headers["x-api-key"] == "sk-test-secret"
        assert "sk-test-secret" not in r.stdout + r.stderr
        # a repeated search takes the expansion from the cache: one call, the rerank
        r = run_boost(["search", "test my React app", "--limit", "3", "--explain"], tapped, env=env)
        assert len(stub.requests) == 3 and not _is_expansion(stub.requests[2])
        assert "keywords (from the LLM): jest, component tests" in r.stdout
        assert re.search(
            r"expansion: ok \(api, [^,]+, http://127\.0\.0\.1:\d+, on this machine, cached\)",
            r.stdout,
        )
        assert re.search(r"rerank: ok \(api, http://127\.0\.0\.1:\d+, on this machine\)", r.stdout)
        # --no-llm: nothing is sent
        r = run_boost([*argv, "--no-llm"], tapped, env=env)
        assert r.returncode == 0 and len(stub.requests) == 3
        # the API failing → BM25 order and both reasons, never a traceback
        stub.responder = lambda req: StubReply(status=500)
        r = run_boost(
            ["search", "write tests for my app", "--json", "--limit", "3"], tapped, env=env
        )
        assert r.returncode == 0 and json.loads(r.stdout)[0]["id"] == "example:jest-runner"
        assert "query expansion skipped: Messages API HTTP 500" in r.stderr
        # the breaker: the failing API is not asked again for the rerank
        assert "rerank skipped" not in r.stderr and "Traceback" not in r.stderr
        assert all(_is_expansion(q) for q in stub.requests[3:])


def test_corrupt_index_is_rebuilt_or_reported(tapped: Path, tmp_path: Path) -> None:
    run_boost(["reindex"], tapped)
    env = _env_no_llm(tmp_path)
    segs = list((tapped / "cache" / "index" / "segments").glob("*.seg"))
    assert segs
    data = segs[0].read_bytes()
    segs[0].write_bytes(data[: len(data) // 2])  # truncated
    r = run_boost(["search", "test my React app"], tapped, env=env)
    assert "Traceback" not in r.stderr
    if r.returncode == 0:
        assert "example:" in r.stdout
    else:
        assert r.returncode == 5 and "boost reindex --force" in r.stderr
    r = run_boost(["reindex"], tapped)
    assert r.returncode == 0, r.stderr
    r = run_boost(["search", "test my React app"], tapped, env=env)
    assert r.returncode == 0 and r.stdout.startswith(" 1. example:jest-runner")
    (tapped / "cache" / "index" / "manifest.json").write_text("{not json")
    r = run_boost(["search", "test my React app"], tapped, env=env)
    assert "Traceback" not in r.stderr and r.returncode in (0, 5)
    r = run_boost(["reindex"], tapped)
    assert r.returncode == 0, r.stderr


def test_update_refreshes_the_index_and_search_never_writes_it(
    tapped: Path, example_repo: Path, tmp_path: Path
) -> None:
    from tests.helpers import commit_all

    run_boost(["reindex"], tapped)
    skill = example_repo / "skills" / "zebra-care" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text(
        "---\nname: zebra-care\ndescription: Look after zebras in a zoo\n---\nFeed the zebras hay.\n"
    )
    commit_all(example_repo)
    up = run_boost(["update"], tapped)
    assert up.returncode == 0 and "Search index refreshed (1 tap redone in" in up.stdout
    index_dir = tapped / "cache" / "index"
    before = {p: p.stat().st_mtime_ns for p in index_dir.rglob("*")}
    r = run_boost(["search", "zebras hay", "--explain"], tapped, env=_env_no_llm(tmp_path))
    assert r.stdout.startswith(" 1. example:zebra-care")
    assert "out of date" not in r.stderr
    assert {p: p.stat().st_mtime_ns for p in index_dir.rglob("*")} == before


def test_a_stale_index_is_searched_as_it_is_and_named(
    tapped: Path, example_repo: Path, tmp_path: Path
) -> None:
    from tests.helpers import commit_all

    run_boost(["reindex"], tapped)
    (example_repo / "NOTES.md").write_text("a commit that changes no entry\n")
    commit_all(example_repo)
    config = json.loads((tapped / "config.json").read_text())
    config["taps"]["example"]["commit"] = "0" * 40  # as if updated without refreshing the index
    (tapped / "config.json").write_text(json.dumps(config))
    r = run_boost(["search", "fill a pdf form"], tapped, env=_env_no_llm(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith(" 1. example:pdf-forms")
    assert (
        "note: the search index is out of date for 1 tap (example) — run 'boost reindex'"
        in r.stderr
    )


def test_search_in_process(
    tapped: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert main(["reindex", "--json"]) == 0
    report: Dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["bm25"]["entries"] == 29
    assert main(["search", "write a database migration", "--explain", "--tap", "example"]) == 0
    out = capsys.readouterr().out
    assert "example:postgres-migrations" in out.split("\n")[0] or "postgres" in out
    assert main(["search", "x", "--tap", "nope"]) == 3
    assert main(["search", "kubernetes", "--json", "--engine", "lexical"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert main(["search", "zzzzqqq"]) == 0
    assert "No matches" in capsys.readouterr().err


def test_keywords_widen_the_search_and_are_named_in_explain(
    tapped: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert main(["reindex"]) == 0
    capsys.readouterr()
    task = "the page must work for folks who cannot see"
    assert main(["search", task, "--json", "-n", "1"]) == 0
    plain = _ids(capsys.readouterr().out)
    argv = ["search", task, "--keywords", "accessibility, screen reader", "--keywords", "WCAG"]
    assert main([*argv, "--json", "-n", "1"]) == 0
    assert _ids(capsys.readouterr().out) == ["example:a11y-audit"] != plain
    assert main([*argv, "--explain", "-n", "1"]) == 0
    assert "keywords (given): accessibility, screen reader, WCAG" in capsys.readouterr().out
    assert main(["search", task, "--keywords", ",".join(str(i) for i in range(13))]) == 2
    assert "at most 12 keywords, not 13" in capsys.readouterr().err


def test_keyword_list_splits_commas_and_drops_repeats() -> None:
    from boost_cli.core.search import keyword_list

    assert keyword_list(["jest, vitest", " Jest ", "component\n tests", ","]) == (
        "jest",
        "vitest",
        "component tests",
    )
