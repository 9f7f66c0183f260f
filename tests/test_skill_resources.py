"""The Skills extension's methods in process (`commands.mcp.build_server`, `skillserve`,
`skillmap`): shapes, pagination, errors, and a clone changed under the server."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from boost_cli.commands.mcp import build_server
from boost_cli.core import registry, skillmap
from boost_cli.core.mcp import Server
from tests.helpers import commit_all, make_repo, skill

ENV = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}


@pytest.fixture
def tapped(tmp_path: Path) -> Path:
    files = {
        "skills/alpha/SKILL.md": skill("alpha", "First skill."),
        "skills/alpha/notes/a.md": "note a\n",
        "skills/beta/SKILL.md": skill("beta", "Second skill."),
        "my skills/bad-folder/SKILL.md": skill("bad-folder", "A folder with a space on its path."),
    }
    repo = make_repo(tmp_path / "src", files)
    (repo / "skills/alpha/bin.dat").write_bytes(b"\x00\x01\x02")
    commit_all(repo)
    registry.add(str(repo), name="t")
    return registry.get_tap("t").root


def call(server: Server, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    got = server.handle(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**ENV, **(params or {})}}
    )
    assert got is not None
    return got


def test_the_methods_answer_in_the_extensions_shapes(tapped: Path) -> None:
    server = build_server()
    listed = call(server, "skills/list")["result"]
    assert [s["uri"] for s in listed["skills"]] == [
        "skill://t/skills/alpha/SKILL.md",
        "skill://t/skills/beta/SKILL.md",
    ]
    assert listed["resultType"] == "complete" and "nextCursor" not in listed
    alpha = listed["skills"][0]
    files = {r["uri"]: r for r in alpha["resources"]}
    assert set(files) == {
        "skill://t/skills/alpha/SKILL.md",
        "skill://t/skills/alpha/bin.dat",
        "skill://t/skills/alpha/notes/a.md",
    }
    blob = call(server, "resources/read", {"uri": "skill://t/skills/alpha/bin.dat"})["result"]
    item = blob["contents"][0]
    assert base64.b64decode(item["blob"]) == b"\x00\x01\x02" and "text" not in item
    digest = "sha256:" + hashlib.sha256(b"\x00\x01\x02").hexdigest()
    assert files["skill://t/skills/alpha/bin.dat"] == {
        "uri": "skill://t/skills/alpha/bin.dat",
        "digest": digest,
        "size": 3,
    }
    resources = call(server, "resources/list")["result"]["resources"]
    assert [r["name"] for r in resources] == ["alpha", "beta"]
    assert resources[0]["description"] == "First skill."
    templates = call(server, "resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "skill://{tap}/{+path}"
    root = call(server, "resources/directory/read", {"uri": "skill://t/skills/alpha"})["result"]
    assert {r["name"]: r["mimeType"] for r in root["resources"]} == {
        "SKILL.md": "text/markdown",
        "bin.dat": "application/octet-stream",
        "notes": "inode/directory",
    }


def test_errors_are_invalid_params_with_the_reason(tapped: Path) -> None:
    server = build_server()
    refused = call(server, "skills/get", {"uri": "skill://t/my skills/bad-folder/SKILL.md"})
    assert refused["error"]["code"] == -32602
    message = refused["error"]["message"]
    assert "not a plain URI segment" in message and "boost_get_skill t:my skills/" in message
    for method, params in (
        ("skills/get", {}),
        ("skills/get", {"uri": 3}),
        ("resources/read", {"uri": "skill://t/skills/alpha"}),  # a directory
        ("resources/read", {"uri": "skill://t/skills/gamma/SKILL.md"}),
        ("resources/directory/read", {"uri": "skill://t/skills"}),  # above any skill
        ("skills/list", {"cursor": "bm90LWEtY3Vyc29y"}),
        ("resources/templates/list", {"cursor": "x"}),
    ):
        got = call(server, method, params)
        assert got["error"]["code"] == -32602, (method, params, got)


def test_a_file_changed_after_the_scan_is_refused_not_served(tapped: Path) -> None:
    server = build_server()
    call(server, "skills/list")  # the manifests are built and held
    (tapped / "skills/alpha/notes/a.md").write_text("swapped\n")
    got = call(server, "resources/read", {"uri": "skill://t/skills/alpha/notes/a.md"})
    assert got["error"]["code"] == -32602
    assert "no longer matches its digest" in got["error"]["message"]
    assert "swapped" not in str(got)


def test_a_symlink_swapped_in_after_the_scan_is_refused(tapped: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("note a\n")  # the same bytes: only the path check can catch it
    server = build_server()
    call(server, "skills/list")
    target = tapped / "skills/alpha/notes/a.md"
    target.unlink()
    os.symlink(secret, target)
    got = call(server, "resources/read", {"uri": "skill://t/skills/alpha/notes/a.md"})
    assert got["error"]["code"] == -32602 and "symlink out of the skill" in got["error"]["message"]
    notes = tapped / "skills/alpha/notes"
    target.unlink()
    os.rename(notes, tapped / "skills/alpha/elsewhere")
    os.symlink(tapped / "skills/alpha/elsewhere", notes)
    got = call(server, "resources/read", {"uri": "skill://t/skills/alpha/notes/a.md"})
    assert got["error"]["code"] == -32602 and "not real" in got["error"]["message"]


def test_the_cache_is_used_and_a_broken_one_rebuilt(tapped: Path) -> None:
    first = skillmap.for_taps()
    cache = skillmap._cache_path("t")
    assert cache.exists() and skillmap._status_path("t").exists()
    assert skillmap.cached("t", registry.get_tap("t").commit, tapped) is not None
    cache.write_text("{broken")
    again = skillmap.for_taps()
    assert [s.uri for s in again.ordered] == [s.uri for s in first.ordered]
    counts = again.counts()
    assert counts == {"served": 2, "bad-path": 1}
    statuses = skillmap.for_entries(e for t in registry.snapshots() for e in t.entries)
    assert statuses.uri_of("t", "skills/beta/SKILL.md") == "skill://t/skills/beta/SKILL.md"
    refused = statuses.refused_of("t", "my skills/bad-folder/SKILL.md")
    assert refused is not None and refused.reason == "bad-path"
    skillmap.drop_cache("t")
    assert not cache.exists()
