"""Related terms through the real CLI: `boost reindex` writes the table, `boost search`
widens a plain query with it, `tap` and `untap` keep it in step with the index."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List

from boost_cli.core import related
from tests.helpers import ROOT, make_repo, run_boost, skill

QUERY = "make my page usable for blind people"
TARGET = "a11y:wcag-audit"


def _env() -> Dict[str, str]:
    """No `claude` on PATH: the search is the plain path (no LLM)."""
    return {"PATH": os.path.dirname(os.sys.executable) + os.pathsep + "/usr/bin:/bin"}


def _registry(root: Path) -> Path:
    """Skills where "blind", "people" and "page" keep company with "screen reader" in four
    descriptions, a target that says "screen reader" but none of the query's words (a query
    needs three terms with neighbours to be widened), and enough unrelated skills that those terms are rare (the table leaves out terms in > 5 % of the fields)."""
    files = {
        "skills/wcag-audit/SKILL.md": skill(
            "wcag-audit",
            "Check a site against WCAG with a screen reader and fix what it cannot announce.",
        ),
    }
    sources = [
        ("alt-text", "Alt text, so blind people on a page with a screen reader know each image."),
        ("aria-labels", "Label controls for blind people who hear a page through a screen reader."),
        ("voiceover", "VoiceOver: the screen reader blind people on iPhones hear a page with."),
        ("nvda-guide", "Drive NVDA, a free screen reader, over a page as blind people would."),
    ]
    for name, desc in sources:
        files[f"skills/{name}/SKILL.md"] = skill(name, desc)
    for i in range(150):
        files[f"skills/chore-{i}/SKILL.md"] = skill(f"chore-{i}", f"Handles routine chore q{i}x.")
    return make_repo(root, files)


def _ids(stdout: str) -> List[str]:
    return [h["id"] for h in json.loads(stdout)]


def test_reindex_writes_the_table_and_search_uses_it(tmp_path: Path, boost_home: Path) -> None:
    repo = _registry(tmp_path / "a11y-src")
    assert run_boost(["tap", str(repo), "--name", "a11y"], boost_home).returncode == 0
    r = run_boost(["reindex"], boost_home)
    assert r.returncode == 0, r.stderr
    table = boost_home / "cache" / "related.bin"
    rel = related.unpack(table.read_bytes())
    assert {t for t, _ in rel.neighbours("blind")} == {"screen", "reader", "page", "peopl"}
    args = ["search", QUERY, "--json", "--limit", "10", "--no-llm"]
    hits = _ids(run_boost(args, boost_home, env=_env()).stdout)
    assert TARGET in hits  # found through "screen reader", a word the query never says
    assert hits.index(TARGET) > 0  # ... below the skills that say "blind" themselves
    r = run_boost(["search", QUERY, "--explain", "--no-llm"], boost_home, env=_env())
    assert "related terms (learnt from the taps): " in r.stdout + r.stderr
    line = next(x for x in (r.stdout + r.stderr).splitlines() if x.startswith("related terms"))
    assert set(line.split(": ", 1)[1].split(", ")) == {"screen", "reader"}
    # Keywords from the caller replace the widening: the target is found by them or not.
    r = run_boost([*args, "--keywords", "image"], boost_home, env=_env())
    assert TARGET not in _ids(r.stdout)
    # Without the table the same search never finds it: the table is what did.
    table.unlink()
    assert TARGET not in _ids(run_boost(args, boost_home, env=_env()).stdout)
    # A reindex with nothing changed puts it back (the index's key, not the build, decides).
    r = run_boost(["reindex"], boost_home)
    assert r.returncode == 0 and table.is_file()
    assert TARGET in _ids(run_boost(args, boost_home, env=_env()).stdout)


def test_tap_and_untap_keep_the_table_in_step(tmp_path: Path, boost_home: Path) -> None:
    repo = _registry(tmp_path / "a11y-src")
    assert run_boost(["tap", str(repo), "--name", "a11y"], boost_home).returncode == 0
    assert run_boost(["reindex"], boost_home).returncode == 0
    table = boost_home / "cache" / "related.bin"
    first = related.unpack(table.read_bytes()).key
    other = make_repo(tmp_path / "other-src", {"skills/x/SKILL.md": skill("x", "Other things.")})
    r = run_boost(["tap", str(other), "--name", "other"], boost_home)
    assert r.returncode == 0, r.stderr
    second = related.unpack(table.read_bytes()).key
    assert second != first  # the index changed, so did the table
    assert run_boost(["untap", "other"], boost_home).returncode == 0
    assert related.unpack(table.read_bytes()).key == first
    assert run_boost(["untap", "a11y"], boost_home).returncode == 0
    assert not table.exists()  # no tap indexed: no table


def test_a_damaged_table_is_not_used(tmp_path: Path, boost_home: Path) -> None:
    repo = _registry(tmp_path / "a11y-src")
    assert run_boost(["tap", str(repo), "--name", "a11y"], boost_home).returncode == 0
    assert run_boost(["reindex"], boost_home).returncode == 0
    table = boost_home / "cache" / "related.bin"
    data = bytearray(table.read_bytes())
    data[-1] ^= 0xFF
    table.write_bytes(bytes(data))
    r = run_boost(["search", QUERY, "--json", "--no-llm"], boost_home, env=_env())
    assert r.returncode == 0, r.stderr
    assert TARGET not in _ids(r.stdout)
    # The next reindex sees a key it can read but a file that fails its check: rebuilt.
    assert run_boost(["reindex"], boost_home).returncode == 0
    assert related.unpack(table.read_bytes()).key


def test_a_reranking_llm_sees_the_candidates_of_the_users_words(
    tmp_path: Path, boost_home: Path
) -> None:
    repo = _registry(tmp_path / "a11y-src")
    assert run_boost(["tap", str(repo), "--name", "a11y"], boost_home).returncode == 0
    assert run_boost(["reindex"], boost_home).returncode == 0
    log = tmp_path / "claude.json"
    fake = ROOT / "tests" / "fakebin_claude"
    env = {
        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
        "FAKE_CLAUDE_MODE": "good",
        "FAKE_CLAUDE_LOG": str(log),
    }
    r = run_boost(["search", QUERY, "--json", "--explain"], boost_home, env=env)
    assert r.returncode == 0, r.stderr
    prompt = json.loads(log.read_text())["stdin"]  # the last prompt: the rerank's
    assert "alt-text" in prompt  # the candidates are there ...
    assert "wcag-audit" not in prompt  # ... but not what only the widening finds
    assert '"related": []' in r.stderr
