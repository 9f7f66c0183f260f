"""Issue 33 item 2: with vectors, a skill only they found must reach a similarity floor, so a
nonsense query finds nothing (`--exit-status` exits 1 with every engine) and `--min-score`
sets the floor. The hash embedder (no model, no measured floor) for the fast test; the real
local model, whose floor is measured (docs/dense.md, "A floor"), in the slow one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

from boost_cli.core.embed import local
from tests.helpers import make_repo, run_boost, skill

REAL_INSTALLED = local.installed  # conftest hides the extra from auto-detection
FILES = {
    "skills/a/SKILL.md": skill("qwik-routing", "Qwik city routing", "Routes and layouts."),
    "skills/b/SKILL.md": skill("pasta-cook", "Cook pasta al dente", "Boil water, add salt."),
    "skills/c/SKILL.md": skill("garden-care", "Water the garden plants", "Prune roses."),
}


def tapped(tmp_path: Path, env: Dict[str, str]) -> Path:
    repo = make_repo(tmp_path / "src", FILES)
    home = tmp_path / "home"
    for args in (["tap", str(repo), "--name", "t"], ["reindex", "--dense"]):
        proc = run_boost(args, home, env)
        assert proc.returncode == 0, proc.stderr
    return home


def ids(home: Path, env: Dict[str, str], *args: str) -> tuple[int, List[str]]:
    proc = run_boost(["search", *args, "--json", "--no-llm", "--exit-status"], home, env)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, [h["id"] for h in json.loads(proc.stdout or "[]")]


def test_min_score_cuts_what_only_the_vectors_found(tmp_path: Path) -> None:
    env = {"BOOST_EMBED_PROVIDER": "hash"}
    home = tapped(tmp_path, env)
    for engine in ("dense", "hybrid"):
        code, found = ids(home, env, "qwzxvplk", "--engine", engine)
        assert code == 0 and found  # the hash embedder has no measured floor: all shown
        code, found = ids(home, env, "qwzxvplk", "--engine", engine, "--min-score", "0.99")
        assert (code, found) == (1, []), engine
    # A file BM25 found stays, whatever its cosine: the floor is for the vectors' own finds.
    code, found = ids(home, env, "pasta", "--engine", "hybrid", "--min-score", "0.99")
    assert (code, found) == (0, ["t:pasta-cook"])
    proc = run_boost(["search", "pasta", "--min-score", "2"], home, env)
    assert proc.returncode == 2 and "--min-score must be between 0 and 1" in proc.stderr


@pytest.mark.slow
def test_a_nonsense_query_finds_nothing_with_the_real_model(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the [local] extra is not installed")
    if not REAL_INSTALLED():
        pytest.skip("the [local] extra's model is not installed")
    env = {"BOOST_EMBED_PROVIDER": "local"}
    home = tapped(tmp_path, env)
    for engine in ("bm25", "dense", "hybrid"):
        assert ids(home, env, "qwzxvplk", "--engine", engine) == (1, []), engine
    code, found = ids(home, env, "qwzxvplk", "--engine", "dense", "--min-score", "0")
    assert code == 0 and found
    code, found = ids(home, env, "routing for a qwik city app", "--engine", "dense")
    assert code == 0 and found[0] == "t:qwik-routing"
