"""Issue 35: the dense path embeds the enrichment too. Through the real CLI: an enriched
entry's vector text holds its enrichment, a changed enrichment re-embeds that entry only
(by `boost reindex --dense` and by the sync an `--enrich` run ends with), and a damaged
store embeds the plain text again.

The enrichment comes from the Messages API stub (tests/enrich_stub.py), the vectors from
the OpenAI-format stub on 127.0.0.1, which records every text sent (tests/embed_stubs.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.anthropic_stub import AnthropicStub
from tests.embed_stubs import StubEmbedServer
from tests.enrich_stub import enrich_reply
from tests.helpers import run_boost

BLIND = "make my page usable for blind people"
KEYBOARD = "the page cannot be used with a keyboard alone"


@pytest.fixture
def tapped(example_repo: Path, boost_home: Path) -> Path:
    for args in (["tap", str(example_repo), "--name", "example"], ["reindex"]):
        r = run_boost(args, boost_home)
        assert r.returncode == 0, r.stderr
    return boost_home


def boost(home: Path, env: Dict[str, str], *args: str) -> Dict[str, Any]:
    r = run_boost([*args, "--json"], home, env=env)
    assert r.returncode == 0, (args, r.stderr)
    out: Dict[str, Any] = json.loads(r.stdout)
    return out


def sent(server: StubEmbedServer) -> List[str]:
    """Every text the embedder was sent, in order."""
    return [t for batch in server.inputs() for t in batch]


def test_the_dense_text_holds_the_enrichment_and_a_changed_one_reembeds_that_entry_only(
    tapped: Path,
) -> None:
    with StubEmbedServer("openai") as embedder, AnthropicStub(responder=enrich_reply()) as llm:
        env = {
            "BOOST_EMBED_BASE_URL": embedder.base_url,
            "BOOST_EMBED_MODEL": "stub-model",
            "ANTHROPIC_API_KEY": "sk-test-enrich",
            "ANTHROPIC_BASE_URL": llm.base_url,
            "BOOST_NO_LLM": "",
        }
        plain = boost(tapped, env, "reindex", "--dense", "--yes")["dense"]
        assert plain["enriched"] == 0 and plain["sent"] > 0
        (a11y_plain,) = [t for t in sent(embedder) if t.startswith("a11y-audit")]
        assert BLIND not in a11y_plain

        # The enrichment run ends by syncing the vector store: the enriched entries only.
        n = len(embedder.requests)
        report = boost(tapped, env, "reindex", "--enrich", "--yes")
        assert report["enrich"]["run"]["enriched"] == 29
        new = [t for r in embedder.requests[n:] for t in r.body["input"]]
        assert report["dense_sync"]["sent"] == len(new) > 0
        (a11y,) = [t for t in new if t.startswith("a11y-audit")]
        # after name and description, before the body: a 128-token model still reads it
        head, words, _body = a11y.split("\n\n", 2)
        assert head == a11y_plain.split("\n\n")[0]
        assert words.startswith("Helps with a11y audit tasks. ") and BLIND in words
        assert a11y.endswith(a11y_plain.split("\n\n", 1)[1])

        # Nothing changed: no tap is redone.
        again = boost(tapped, env, "reindex", "--dense", "--yes")["dense"]
        assert again["sent"] == 0 and again["taps_embedded"] == []

        # Another model answers one item differently: that entry alone is embedded again.
        def edit(answer: Dict[str, Any]) -> Dict[str, Any]:
            if answer["about"].startswith("Helps with a11y audit"):
                return {**answer, "tasks": [KEYBOARD, *answer["tasks"][1:]]}
            return answer

        llm.responder = enrich_reply(edit)
        n = len(embedder.requests)
        env["BOOST_ENRICH_MODEL"] = "another-model"
        report = boost(tapped, env, "reindex", "--enrich", "--yes")
        assert report["dense_sync"]["sent"] == 1
        (changed,) = [t for r in embedder.requests[n:] for t in r.body["input"]]
        assert changed.startswith("a11y-audit") and KEYBOARD in changed and BLIND not in changed

        # A damaged enrichment store embeds the plain texts (all cached: nothing is sent).
        (tapped / "cache" / "enrich.sqlite").write_bytes(b"not a database")
        n = len(embedder.requests)
        damaged = boost(tapped, env, "reindex", "--dense", "--yes")["dense"]
        assert damaged["taps_embedded"] == ["example"]
        assert damaged["enriched"] == 0 and damaged["sent"] == 0
        assert len(embedder.requests) == n


def test_a_bundle_carries_enriched_vectors_a_replica_uses_with_nothing_embedded(
    tapped: Path, tmp_path: Path
) -> None:
    hashed = {"BOOST_EMBED_PROVIDER": "hash"}
    with AnthropicStub(responder=enrich_reply()) as llm:
        env = {**hashed, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": llm.base_url}
        assert boost(tapped, env, "reindex", "--enrich", "--yes")["enrich"]["run"]["enriched"]
    built = boost(tapped, hashed, "reindex", "--dense")["dense"]
    assert built["enriched"] > 0
    out = tmp_path / "team.bundle"
    r = run_boost(["bundle", "export", str(out)], tapped, env=hashed)
    assert r.returncode == 0, r.stderr
    replica = tmp_path / "replica"
    r = run_boost(["bundle", "import", str(out), "--json"], replica, env=hashed)
    assert r.returncode == 0, r.stderr
    (tap,) = json.loads(r.stdout)[0]["taps"]
    # the enrichment is in place before the vectors are matched to this home's texts
    assert tap["enrichments"] == 29 and tap["vectors"] == built["texts"], tap
    again = boost(replica, hashed, "reindex", "--dense")["dense"]
    assert again["sent"] == 0
    query = ["search", "--engine", "hybrid", "--json", "--no-rerank", BLIND]
    want = json.loads(run_boost(query, tapped, env=hashed).stdout)
    got = json.loads(run_boost(query, replica, env=hashed).stdout)
    assert [(h["id"], h["score"]) for h in got] == [(h["id"], h["score"]) for h in want]
