"""Ids are unique: every id `boost search --json` prints for the dev queries on the shared
corpus resolves (`boost show`, `lookup.find`) to exactly the hit's file, and so does every
``also_in`` id. Needs ../shared/corpus (skipped without it); slow (taps and indexes 12
registries): ``pytest -m slow tests/test_ids_corpus.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_boost

SHARED = ROOT.parent / "shared"
pytestmark = [
    pytest.mark.corpus,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (SHARED / "corpus" / "MANIFEST.json").exists(), reason="no ../shared/corpus"
    ),
]


@pytest.fixture(scope="module")
def corpus_home(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("minutes long: run with -m slow")
    sys.path.insert(0, str(ROOT / "scripts"))
    import corpus  # type: ignore[import-not-found]

    home = tmp_path_factory.mktemp("corpus") / "home"
    corpus.tap_all(home)
    r = run_boost(["reindex"], home, timeout=1800)
    assert r.returncode == 0, r.stderr
    return home


def test_every_printed_id_resolves_to_its_hit(
    corpus_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boost_cli.core import lookup, registry

    monkeypatch.setenv("BOOST_HOME", str(corpus_home))
    snaps = registry.snapshots()
    queries = [
        json.loads(line)
        for line in (SHARED / "eval" / "dev.jsonl").read_text().splitlines()
        if line.strip()
    ]
    checked = shown = 0
    problems = []
    for q in queries:
        args = ["search", q["query"], "--json", "--no-llm", "--limit", "20"]
        if q.get("kind"):
            args += ["--kind", q["kind"]]
        r = run_boost(args, corpus_home)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)
        ids = [h["id"] for h in hits]
        assert len(ids) == len(set(ids)), f"{q['query']!r}: one id for two hits: {ids}"
        for h in hits:
            for ident in [h["id"], *h["also_in"]]:
                try:
                    snap, entry = lookup.find(snaps, ident)
                except Exception as exc:  # noqa: BLE001 - collect every failure
                    problems.append(f"{ident}: {exc}")
                    continue
                checked += 1
                if ident == h["id"] and (snap.name, entry.path) != (h["tap"], h["path"]):
                    problems.append(
                        f"{ident} resolves to {snap.name}:{entry.path}, not {h['path']}"
                    )
        # the real `boost show` on the first hit of each query
        if hits:
            s = run_boost(["show", hits[0]["id"], "--json"], corpus_home)
            assert s.returncode == 0, s.stderr
            assert json.loads(s.stdout)["path"] == hits[0]["path"]
            shown += 1
    assert not problems, "\n".join(problems[:20])
    assert checked > 400 and shown == len(queries)


def test_mcp_ids_match_the_cli(corpus_home: Path) -> None:
    q = "write a commit message"
    cli = json.loads(
        run_boost(["search", q, "--json", "--no-llm", "--limit", "20"], corpus_home).stdout
    )
    msgs = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "boost_search", "arguments": {"query": q, "limit": 20}},
        },
    ]
    out = subprocess.run(
        [sys.executable, "-m", "boost_cli", "mcp"],
        input="".join(json.dumps(m) + "\n" for m in msgs),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(ROOT),
        env={"BOOST_HOME": str(corpus_home), "PATH": "/usr/bin:/bin"},
    ).stdout.splitlines()
    result = json.loads(out[-1])["result"]["structuredContent"]["results"]
    ids = [h["id"] for h in result]
    assert len(ids) == len(set(ids))
    assert set(ids) <= {h["id"] for h in cli} | {a for h in cli for a in h["also_in"]}


def test_every_entrys_id_is_one_word_that_resolves_to_it(
    corpus_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 item 8: 966 of the corpus's names hold spaces; every id (not only those a
    dev query prints) is one shell word and `lookup.find` gives back exactly its entry."""
    from boost_cli.core import lookup, registry

    monkeypatch.setenv("BOOST_HOME", str(corpus_home))
    snaps = registry.snapshots()
    entries = [(s.name, e) for s in snaps for e in s.entries]
    assert sum(any(c.isspace() for c in e.name) for _, e in entries) > 900
    problems = []
    for tap, e in entries:
        ident = e.qualified_name
        if ident.split() != [ident] or any(c in ident for c in "'\"()$`;&|<>*?"):
            problems.append(f"{ident!r} is not one plain word")
            continue
        snap, found = lookup.find(snaps, ident)
        if (snap.name, found.path) != (tap, e.path):
            problems.append(f"{ident} resolves to {snap.name}:{found.path}")
    assert not problems, "\n".join(problems[:20])
