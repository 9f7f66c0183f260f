#!/usr/bin/env python3
"""Turn ../shared/corpus into local git repos and tap them all into a BOOST_HOME.

Reusable by the benchmarks: `prepare_repos()` makes (once, cached under
$BOOST_CORPUS_REPOS or /tmp/boost-corpus-repos) one git repo per registry folder;
`tap_all(home)` taps every one through the real CLI and reports counts and time.

    python scripts/corpus.py [--home DIR] [--json]

Prints entries per registry and kind next to MANIFEST.json's counts, and the wall
time of tapping + scanning all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
REPOS = Path(
    os.environ.get("BOOST_CORPUS_REPOS", Path(tempfile.gettempdir()) / "boost-corpus-repos")
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "corpus",
    "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
    "GIT_COMMITTER_NAME": "corpus",
    "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def manifest() -> Dict[str, Any]:
    return json.loads((CORPUS / "MANIFEST.json").read_text())


def _git(args: List[str], cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def prepare_repos(dest: Path = REPOS) -> List[Path]:
    """One git repo per registry folder (cached: rebuilt when the manifest changes)."""
    m = manifest()
    stamp = dest / ".manifest-generated"
    if stamp.exists() and stamp.read_text() == m["generated"]:
        return [dest / r["dir"] for r in m["registries"]]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    out = []
    for reg in m["registries"]:
        repo = dest / reg["dir"]
        shutil.copytree(CORPUS / reg["dir"], repo, symlinks=True)
        for p in repo.rglob("*"):  # the shared copy is read-only; git needs to write
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o200)
        repo.chmod(repo.stat().st_mode | 0o200)
        _git(["init", "-q", "-b", "main"], repo)
        _git(["add", "-A"], repo)
        _git(["commit", "-q", "-m", f"snapshot of {reg['name']} at {reg['commit']}"], repo)
        out.append(repo)
    stamp.write_text(m["generated"])
    return out


def boost_cmd() -> List[str]:
    exe = shutil.which("boost", path=str(Path(sys.executable).parent)) or shutil.which("boost")
    return [exe] if exe else [sys.executable, "-m", "boost_cli"]


def tap_all(home: Path, repos: Optional[List[Path]] = None) -> Dict[str, Any]:
    """Tap every corpus repo into ``home`` through the real CLI; returns counts and seconds."""
    repos = repos or prepare_repos()
    env = {**os.environ, "BOOST_HOME": str(home)}
    t0 = time.perf_counter()
    for repo in repos:
        subprocess.run(
            [*boost_cmd(), "tap", str(repo), "--name", repo.name],
            env=env,
            check=True,
            capture_output=True,
        )
    seconds = time.perf_counter() - t0
    taps = json.loads(
        subprocess.run(
            [*boost_cmd(), "taps", "--json"], env=env, check=True, capture_output=True
        ).stdout
    )
    return {"seconds": seconds, "taps": taps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--home", type=Path, help="BOOST_HOME to tap into (default: a temporary folder)"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}; nothing to do", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    repos = prepare_repos()
    prep = time.perf_counter() - t0
    home = args.home or Path(tempfile.mkdtemp(prefix="boost-corpus-home-"))
    result = tap_all(home, repos)
    by_dir = {r["dir"]: r for r in manifest()["registries"]}
    rows = []
    for t in result["taps"]:
        m = by_dir.get(t["name"], {})
        c = t["counts"]
        rows.append(
            {
                "registry": t["name"],
                "skill": c["skill"],
                "rule": c["rule"],
                "workflow": c["workflow"],
                "manifest": [m.get("skills"), m.get("rules"), m.get("workflows")],
                "warnings": t.get("warnings", 0),
            }
        )
    if args.json:
        print(
            json.dumps(
                {
                    "home": str(home),
                    "prepare_seconds": prep,
                    "tap_seconds": result["seconds"],
                    "rows": rows,
                },
                indent=2,
            )
        )
        return 0
    print(f"{'registry':44} {'skill':>6} {'rule':>6} {'wflow':>6}   manifest (s/r/w)   warnings")
    tot = [0, 0, 0]
    mtot = [0, 0, 0]
    for r in rows:
        ms = r["manifest"]
        flag = "" if [r["skill"], r["rule"], r["workflow"]] == ms else "  <- differs"
        print(
            f"{r['registry']:44} {r['skill']:6d} {r['rule']:6d} {r['workflow']:6d}   {ms[0]}/{ms[1]}/{ms[2]}  {r['warnings']:8d}{flag}"
        )
        for i, k in enumerate(("skill", "rule", "workflow")):
            tot[i] += r[k]
            mtot[i] += ms[i] or 0
    print(f"{'TOTAL':44} {tot[0]:6d} {tot[1]:6d} {tot[2]:6d}   {mtot[0]}/{mtot[1]}/{mtot[2]}")
    print(
        f"prepared repos in {prep:.1f} s (cached); tapped + scanned {len(rows)} registries in {result['seconds']:.2f} s"
    )
    print(f"BOOST_HOME={home}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
