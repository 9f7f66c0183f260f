"""Crash-and-race soak for taps and the index (issue 10; not part of CI).

N iterations, each: change the "remote" registry (a local git repo), start one real
`boost tap`, `boost update`, `boost untap` or `boost reindex` and `kill -9` it at a random
moment of its measured run time; then check:

1. right after the kill: `boost doctor --json` and `boost search` work (the index is
   usable whatever the kill hit);
2. recovery is the ordinary commands: `boost update` (and the killed `tap`/`untap` run
   again) exit 0 — no stale git lock, no stuck name;
3. the home is consistent: every folder under repos/ is a recorded tap and the reverse,
   each clone is exactly its recorded commit (HEAD and a clean tree), no git lock, no
   interrupted-update marker, no leftover `doctor` reports, and after `boost reindex`
   the index is fresh;
4. search answers exactly what a from-scratch home (the same taps, the same commits,
   tapped and indexed anew) answers, for every query: ids, scores and snippets.

Then R rounds of M parallel `boost tap`s (distinct names and one name several times),
each followed by the same checks. Every failed check is counted as an inconsistency
with its detail; the run goes on.

    python scripts/soak.py --iterations 100 --parallel 6 --rounds 10
    python scripts/soak.py --registry ../shared/corpus/wshobson__agents --iterations 10

Prints one line per iteration and a JSON summary (``--json FILE`` writes it too).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "registry"
QUERIES = (
    "write unit tests for a react component",
    "review a pull request",
    "python style rules",
    "fill pdf forms",
    "accessibility audit",
    "deploy to production",
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "soak",
    "GIT_AUTHOR_EMAIL": "soak@example.invalid",
    "GIT_COMMITTER_NAME": "soak",
    "GIT_COMMITTER_EMAIL": "soak@example.invalid",
}
WORDS = ("alpha", "render", "testing", "deploy", "review", "pdf", "style", "audit", "omega")
MAX_TAPS = 4


def git(args: Sequence[str], cwd: Path) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


@dataclass
class Soak:
    work: Path
    remote: Path
    rng: random.Random
    timings: Dict[str, float] = field(default_factory=dict)
    problems: List[Dict[str, Any]] = field(default_factory=list)
    kills: Dict[str, int] = field(default_factory=dict)
    landed: Dict[str, int] = field(default_factory=dict)
    checks: int = 0
    iteration: int = 0
    fresh_builds: int = 0

    @property
    def home(self) -> Path:
        return self.work / "home"

    # ------------------------------------------------------------------ running boost

    def boost(self, args: Sequence[str], home: Optional[Path] = None, timeout: float = 600) -> Run:
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "boost_cli", *args],
            env={**os.environ, "BOOST_HOME": str(home or self.home)},
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(ROOT),
        )
        return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def killed(self, op: str, args: Sequence[str]) -> None:
        """Start ``boost args`` and kill -9 it at a random moment of its usual run time."""
        expected = self.timings.get(op, 1.0)
        delay = self.rng.uniform(0.0, expected * 1.1)
        proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", *args],
            env={**os.environ, "BOOST_HOME": str(self.home)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(ROOT),
        )
        start = time.monotonic()
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            self.landed[op] = self.landed.get(op, 0) + 1
        else:  # finished first: learn how long the operation takes
            self.timings[op] = 0.5 * expected + 0.5 * (time.monotonic() - start)
        proc.wait()
        self.kills[op] = self.kills.get(op, 0) + 1

    def problem(self, kind: str, detail: str) -> None:
        self.problems.append({"iteration": self.iteration, "kind": kind, "detail": detail[:2000]})
        print(f"  INCONSISTENCY {kind}: {detail[:300]}", flush=True)

    def expect(self, run: Run, what: str, codes: Tuple[int, ...] = (0,)) -> bool:
        self.checks += 1
        if run.code in codes:
            return True
        self.problem(what, f"exit {run.code}: {run.err.strip() or run.out.strip()}")
        return False

    # ------------------------------------------------------------------ the remote

    def mutate_remote(self) -> str:
        """Change, delete and add a few entry files in the remote and commit."""
        files = [
            p
            for p in self.remote.rglob("*.md")
            if ".git" not in p.parts and p.stat().st_size < 200_000
        ]
        for path in self.rng.sample(files, min(len(files), self.rng.randint(1, 6))):
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\n{' '.join(self.rng.choices(WORDS, k=12))}\n")
        skills = [p for p in files if p.name == "SKILL.md"]
        if len(skills) > 20 and self.rng.random() < 0.5:
            self.rng.choice(skills).unlink()
        new = self.remote / "skills" / f"soak-{self.rng.getrandbits(32):08x}" / "SKILL.md"
        new.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(self.rng.choices(WORDS, k=30))
        new.write_text(f"---\nname: {new.parent.name}\ndescription: {words}\n---\n{words}\n")
        git(["add", "-A"], self.remote)
        git(["commit", "-q", "-m", f"soak {self.iteration}"], self.remote)
        return git(["rev-parse", "HEAD"], self.remote).strip()

    # ------------------------------------------------------------------ checks

    def recorded(self) -> Dict[str, Dict[str, Any]]:
        path = self.home / "config.json"
        return json.loads(path.read_text())["taps"] if path.exists() else {}

    def check_after_kill(self) -> None:
        doctor = self.boost(["doctor", "--json"])
        # doctor exits 1 when it lists a fix (a leftover of the kill, a stale index)
        if self.expect(doctor, "doctor failed after a kill", (0, 1)):
            try:
                json.loads(doctor.out)
            except ValueError:
                self.problem("doctor printed no JSON", doctor.out[:500])
        if self.recorded():
            found = self.boost(["search", "review", "--no-llm", "--json"])
            if self.expect(found, "search failed after a kill") and "damaged" in found.err:
                self.problem("index damaged after a kill", found.err)

    def check_consistent(self) -> None:
        self.checks += 1
        taps = self.recorded()
        repos = self.home / "repos"
        names = sorted(p.name for p in repos.iterdir()) if repos.is_dir() else []
        if names != sorted(taps):
            self.problem("repos/ and config.json differ", f"repos {names}, config {sorted(taps)}")
        for name, rec in taps.items():
            clone = repos / name
            if not clone.is_dir():
                continue
            head = git(["rev-parse", "HEAD"], clone).strip()
            if head != rec["commit"]:
                self.problem("clone not at its commit", f"{name}: {head} != {rec['commit']}")
            status = git(["status", "--porcelain", "--untracked-files=all", "--ignored"], clone)
            if status:
                self.problem("clone not clean", f"{name}: {status[:300]}")
            for leftover in (".git/index.lock", ".git/boost-update", ".git/shallow.lock"):
                if (clone / leftover).exists():
                    self.problem("git leftover", f"{name}: {leftover}")
        doctor = self.boost(["doctor", "--json"])
        if self.expect(doctor, "doctor failed"):
            report = json.loads(doctor.out)
            if report.get("leftovers"):
                self.problem("doctor reports leftovers", "; ".join(report["leftovers"]))
            if taps and report["index"]["status"] != "fresh":
                self.problem("index not fresh after reindex", json.dumps(report["index"]))

    def hits(self, home: Path) -> Dict[str, List[Tuple[str, float, str]]]:
        out = {}
        for query in QUERIES:
            run = self.boost(["search", query, "--json", "--no-llm", "-n", "10"], home)
            if run.code != 0:
                out[query] = [("exit", float(run.code), run.err.strip())]
                continue
            out[query] = [
                (h["id"], round(h["score"], 5), h["snippet"]) for h in json.loads(run.out)
            ]
        return out

    def check_against_fresh(self) -> None:
        taps = self.recorded()
        if not taps:
            return
        self.checks += 1
        fresh = self.work / f"fresh-{self.iteration}"
        for name, rec in sorted(taps.items()):
            pinned = self.work / f"pin-{self.iteration}-{name}"
            git(["clone", "-q", "--no-checkout", str(self.remote), str(pinned)], self.work)
            git(["checkout", "-q", rec["commit"]], pinned)
            tapped = self.boost(["tap", str(pinned), "--name", name], fresh)
            if not self.expect(tapped, "a fresh tap failed"):
                return
        if not self.expect(self.boost(["reindex"], fresh), "a fresh reindex failed"):
            return
        self.fresh_builds += 1
        ours, theirs = self.hits(self.home), self.hits(fresh)
        for query in QUERIES:
            if ours[query] != theirs[query]:
                self.problem(
                    "search differs from a fresh build",
                    f"{query!r}: {ours[query][:3]} vs {theirs[query][:3]}",
                )
        shutil.rmtree(fresh, ignore_errors=True)
        for pinned in self.work.glob(f"pin-{self.iteration}-*"):
            shutil.rmtree(pinned, ignore_errors=True)

    def recover_and_check(self, retap: Optional[str] = None, untap: Optional[str] = None) -> None:
        self.check_after_kill()
        if retap:
            self.expect(
                self.boost(["tap", str(self.remote), "--name", retap]), "re-tap failed", (0, 2)
            )
        if untap:
            self.expect(self.boost(["untap", untap]), "re-untap failed", (0, 3))
        self.expect(self.boost(["update"]), "update after a kill failed")
        self.expect(self.boost(["reindex"]), "reindex after a kill failed")
        self.check_consistent()
        self.check_against_fresh()

    # ------------------------------------------------------------------ iterations

    def calibrate(self) -> None:
        for op, args in (
            ("tap", ["tap", str(self.remote), "--name", "calibrate"]),
            ("reindex", ["reindex", "--force"]),
            ("update", ["update"]),
            ("untap", ["untap", "calibrate"]),
        ):
            if op == "update":
                self.mutate_remote()
            self.timings[op] = self.boost(args).seconds
        self.expect(self.boost(["reindex"]), "reindex failed")
        print("calibrated: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.timings.items()))

    def iterate(self) -> None:
        taps = sorted(self.recorded())
        ops = ["update", "update", "reindex", "tap"]
        if len(taps) > 1:
            ops.append("untap")
        if len(taps) >= MAX_TAPS:
            ops.remove("tap")
        op = self.rng.choice(ops)
        retap = untap = None
        if op == "update":
            self.mutate_remote()
            self.killed(op, ["update"])
        elif op == "reindex":
            force = self.rng.random() < 0.5
            self.killed(op, ["reindex", "--force"] if force else ["reindex"])
        elif op == "tap":
            retap = next(f"t{i}" for i in range(100) if f"t{i}" not in taps)
            if self.rng.random() < 0.3:
                self.mutate_remote()
            self.killed(op, ["tap", str(self.remote), "--name", retap])
        else:
            untap = self.rng.choice(taps)
            self.killed(op, ["untap", untap])
        print(f"{self.iteration:4d} kill -9 during {op}", flush=True)
        self.recover_and_check(retap=retap, untap=untap)

    def parallel_round(self, m: int) -> None:
        """``m`` taps at once: distinct new names, and one name three times."""
        for name in sorted(self.recorded()):
            if name.startswith("p"):
                self.boost(["untap", name])
        names = [f"p{i}" for i in range(m)] + ["pdup"] * 3
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "boost_cli", "tap", str(self.remote), "--name", n],
                env={**os.environ, "BOOST_HOME": str(self.home)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=str(ROOT),
            )
            for n in names
        ]
        results = [(n, p.wait(), p.communicate()[1]) for n, p in zip(names, procs)]
        self.checks += 1
        for name, code, err in results:
            if name != "pdup" and code != 0:
                self.problem("a parallel tap failed", f"{name}: {err.strip()}")
        dup_codes = sorted(code for name, code, _ in results if name == "pdup")
        if dup_codes != [0, 2, 2]:
            self.problem("same-name parallel taps", f"exit codes {dup_codes}")
        missing = [n for n in set(names) if n not in self.recorded()]
        if missing:
            self.problem("parallel taps lost records", ", ".join(sorted(missing)))
        print(f"{self.iteration:4d} {m} parallel taps + 3 of one name", flush=True)
        self.expect(self.boost(["reindex"]), "reindex after parallel taps failed")
        self.check_consistent()
        self.check_against_fresh()
        for name in names[:m] + ["pdup"]:
            self.boost(["untap", name])


def make_remote(source: Path, dest: Path) -> Path:
    """A git repo at ``dest`` holding a copy of ``source``'s files (its .git left out)."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git"))
    for path in dest.rglob("*"):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    git(["init", "-q", "-b", "main"], dest)
    git(["add", "-A"], dest)
    git(["commit", "-q", "-m", "start"], dest)
    return dest


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", type=Path, default=EXAMPLES, help="a folder of skills")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of parallel taps")
    parser.add_argument("--parallel", type=int, default=6, help="taps per parallel round")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="boost-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    soak = Soak(work, make_remote(args.registry, work / "remote"), random.Random(args.seed))
    start = time.monotonic()
    soak.expect(soak.boost(["tap", str(soak.remote), "--name", "t0"]), "the first tap failed")
    soak.calibrate()
    for i in range(1, args.iterations + 1):
        soak.iteration = i
        soak.iterate()
    for r in range(args.rounds):
        soak.iteration = args.iterations + r + 1
        soak.parallel_round(args.parallel)
    summary = {
        "registry": str(args.registry),
        "iterations": args.iterations,
        "kills": soak.kills,
        "kills_landed": soak.landed,
        "parallel_rounds": args.rounds,
        "parallel_taps_per_round": args.parallel + 3,
        "checks": soak.checks,
        "fresh_builds_compared": soak.fresh_builds,
        "inconsistencies": len(soak.problems),
        "problems": soak.problems,
        "seconds": round(time.monotonic() - start, 1),
        "work": str(work),
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    if not args.work and not soak.problems:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if soak.problems else 0


if __name__ == "__main__":
    sys.exit(main())
