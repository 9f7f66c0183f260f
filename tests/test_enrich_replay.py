"""scripts/enrich_replay.py: recorded enrichment answers served over the Messages API on
127.0.0.1, so `boost reindex --enrich` replays a recording offline and counts the prompts
it lacks."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

from tests.enrich_stub import answer_for
from tests.helpers import ROOT, run_boost


def _prompts(home: Path) -> List[Dict[str, object]]:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "enrich_prompts.py")],
        env={"BOOST_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in r.stdout.splitlines()]


def _replay(answers: Path, tmp_path: Path) -> Tuple[subprocess.Popen, int]:
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "scripts" / "enrich_replay.py"),
            "--answers",
            str(answers),
            "--port-file",
            str(port_file),
            "--until-eof",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def test_a_recording_replays_with_no_unrecorded_prompt(
    example_repo: Path, boost_home: Path, tmp_path: Path
) -> None:
    assert run_boost(["tap", str(example_repo), "--name", "example"], boost_home).returncode == 0
    prompts = _prompts(boost_home)
    assert len(prompts) == 2
    answers = tmp_path / "answers.jsonl"
    rows = []
    for p in prompts:
        items = [json.loads(line) for line in str(p["user"]).splitlines()[1:]]
        rows.append(
            {"key": p["key"], "answer": json.dumps({"items": [answer_for(i) for i in items]})}
        )
    answers.write_text("\n".join(json.dumps(r) for r in rows[:1]) + "\n", encoding="utf-8")
    proc, port = _replay(answers, tmp_path)
    env = {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "recorded",
        "BOOST_ENRICH_MODEL": "recorded",
    }
    r = run_boost(["reindex", "--enrich", "--yes", "--json"], boost_home, env=env)
    out, _ = proc.communicate("", timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.splitlines()[-1]) == {"requests": 3, "answered": 1, "unrecorded": 1}
    # the whole recording: the batch left over is asked and answered, nothing unrecorded
    (tmp_path / "port").unlink()
    answers.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (boost_home / "cache" / "llm-breaker.json").unlink(missing_ok=True)
    proc, port = _replay(answers, tmp_path)
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{port}"
    r = run_boost(["reindex", "--enrich", "--yes", "--json"], boost_home, env=env)
    out, _ = proc.communicate("", timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.splitlines()[-1]) == {"requests": 1, "answered": 1, "unrecorded": 0}
    assert json.loads(r.stdout)["enrich"]["run"]["enriched"] == 9  # the 20 of the first run kept
    r = run_boost(["doctor"], boost_home)
    assert "enrichment: 29 texts (29 by recorded, prompt v1)" in r.stdout
