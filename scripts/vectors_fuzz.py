"""Vectors-import fuzz (issue 17; not part of CI): N crafted vectors files against the real
`boost vectors import`, each checked against what must hold whatever the file says.

Set-up: a home with tap ``a`` (``--registry``, default the example registry) and tap ``b``
(three skills of its own), embedded with the ``hash`` provider (local, deterministic), and
each tap's genuine export. Two starting homes are copied for every attempt: one where
only ``b`` is embedded (an import of ``a`` may add vectors), one where both are (an import
must keep every vector embedded here).

Each attempt takes a genuine file and damages it in one of these ways (several at random
per attempt): truncated at a random byte, a huge or lying row count, wrong dimensions (the
header's, or one vector's width), NaN / infinity / zero / non-unit vectors, rows for the
other tap's texts and for texts nobody has, duplicate and reordered rows, random byte
flips, header fields of the wrong type, invalid tap names, an endless line; plus a few
large files (``--big-mb``): hundreds of MB of rows behind an honest count, behind a lying
count, and one endless line.

An inconsistency is any of: an exit code other than 0, 2, 3 or 7; an internal error, a
traceback or more than one stderr line; a refused file that changed the vector store; an
accepted file that replaced a vector already in the cache, added a cache row for a text
tap ``a`` does not have, changed tap ``b``'s vectors, or left a vector that is not finite
or not of unit length; a hybrid search afterwards that fails or prints no JSON.

    python scripts/vectors_fuzz.py --attempts 300 --seed 17
    python scripts/vectors_fuzz.py --attempts 50 --registry ../shared/corpus/obra__superpowers

Prints one line per inconsistency and a JSON summary: attempts, outcomes by exit code,
inconsistencies, and the peak RSS (ru_maxrss of the import process) of the largest import.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "registry"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "fuzz",
    "GIT_AUTHOR_EMAIL": "fuzz@example.invalid",
    "GIT_COMMITTER_NAME": "fuzz",
    "GIT_COMMITTER_EMAIL": "fuzz@example.invalid",
}
SKILL = "---\nname: {0}\ndescription: {0} for the fuzz\n---\n# {0}\n\nSteps for {0}.\n"
Rows = List[List[Any]]


def env_for(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOST_")}
    return {**env, **GIT_ENV, "BOOST_HOME": str(home), "BOOST_EMBED_PROVIDER": "hash"}


def boost(args: List[str], home: Path, timeout: float = 600) -> Tuple[int, str, str, int, float]:
    """Run the real CLI: (exit code, stdout, stderr, 0, seconds)."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "boost_cli", *args],
        env=env_for(home),
        cwd=str(ROOT),
        capture_output=True,
        timeout=timeout,
    )
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    return r.returncode, out, err, 0, time.perf_counter() - t0


def boost_rss(
    args: List[str], home: Path, timeout: float = 600
) -> Tuple[int, str, str, int, float]:
    """`boost`, with the import's own peak RSS (os.wait4 on the child)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", *args],
            env=env_for(home),
            cwd=str(ROOT),
            stdout=out,
            stderr=err,
        )
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            int(usage.ru_maxrss),
            time.perf_counter() - t0,
        )


def git(args: List[str], cwd: Path) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True
    )


def make_repo(path: Path, source: Optional[Path], files: Dict[str, str]) -> Path:
    if source is not None:
        shutil.copytree(source, path, ignore=shutil.ignore_patterns(".git"))
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
    git(["init", "-q", "-b", "main"], path)
    git(["add", "-A"], path)
    git(["commit", "-q", "-m", "init"], path)
    return path


def must(args: List[str], home: Path) -> str:
    code, out, err, _, _ = boost(args, home)
    if code != 0:
        raise SystemExit(f"set-up failed: boost {' '.join(args)}: {err}")
    return out


# --------------------------------------------------------------------------- files


def parse(path: Path) -> Tuple[Dict[str, Any], Rows]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def dump(header: Dict[str, Any], rows: Rows) -> bytes:
    lines = [json.dumps(header, sort_keys=True)] + [json.dumps(r) for r in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def vec(values: List[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def unit(rnd: random.Random, dims: int) -> List[float]:
    v = [rnd.gauss(0, 1) for _ in range(dims)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


class Crafter:
    """Damages genuine files. Each mutation takes (header, rows) and returns them (or
    raw bytes, for damage below the JSON level)."""

    def __init__(self, rnd: random.Random, a: Path, b: Path, dims: int) -> None:
        self.rnd, self.dims = rnd, dims
        self.a, self.b = parse(a), parse(b)

    def craft(self) -> Tuple[str, bytes]:
        header, rows = json.loads(json.dumps(self.a[0])), [list(r) for r in self.a[1]]
        names = []
        raw: Optional[bytes] = None
        for _ in range(self.rnd.choice((1, 1, 1, 2, 3))):
            name, fn = self.rnd.choice(MUTATIONS)
            names.append(name)
            got = fn(self, header, rows)
            if isinstance(got, bytes):
                raw = got
                break
            header, rows = got
        if raw is None:
            if self.rnd.random() < 0.8 and not {"lie", "huge_count"} & set(names):
                header["count"] = len(rows)
            raw = dump(header, rows)
        return "+".join(names), raw

    # Mutations ------------------------------------------------------------------------
    def truncate(self, h: Dict[str, Any], r: Rows) -> bytes:
        data = dump({**h, "count": len(r)}, r)
        return data[: self.rnd.randrange(len(data))]

    def flip(self, h: Dict[str, Any], r: Rows) -> bytes:
        data = bytearray(dump({**h, "count": len(r)}, r))
        for _ in range(self.rnd.randint(1, 8)):
            data[self.rnd.randrange(len(data))] = self.rnd.randrange(256)
        return bytes(data)

    def huge_count(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        h["count"] = self.rnd.choice((10**6, 10**12, 2**63, -1, 1.5, "9", True, None))
        return h, r

    def lie(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        h["count"] = max(0, len(r) + self.rnd.choice((-3, -1, 1, 5)))
        return h, r

    def dims(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        h["parity"]["dimensions"] = self.rnd.choice(
            ("abc", "384.0", "256.0", "0", "-1", "", "1e3", str(self.dims * 2), "16385", " 256")
        )
        return h, r

    def width(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        i = self.rnd.randrange(len(r))
        r[i][1] = vec(unit(self.rnd, self.rnd.choice((self.dims - 1, self.dims + 1, 1))))
        return h, r

    def bad_value(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        i = self.rnd.randrange(len(r))
        v = unit(self.rnd, self.dims)
        kind = self.rnd.choice(("nan", "inf", "-inf", "zero", "scale", "huge", "denormal"))
        if kind == "nan":
            v[self.rnd.randrange(self.dims)] = math.nan
        elif kind in ("inf", "-inf"):
            v[self.rnd.randrange(self.dims)] = float(kind)
        elif kind == "zero":
            v = [0.0] * self.dims
        elif kind == "scale":
            v = [x * self.rnd.choice((0.5, 1.01, 2.0, -3.0)) for x in v]
        elif kind == "huge":
            v = [3.0e38] * self.dims
        else:
            v = [1e-45] * self.dims
        r[i][1] = vec(v)
        return h, r

    def cross_tap(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        forged = [[d, vec(unit(self.rnd, self.dims))] for d, _ in self.b[1]]
        merged = {d: v for d, v in r}
        merged.update({d: v for d, v in forged})
        return h, [[d, merged[d]] for d in sorted(merged)]

    def strangers(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        extra = {
            f"{self.rnd.getrandbits(256):064x}": vec(unit(self.rnd, self.dims)) for _ in range(20)
        }
        merged = {**dict(r), **extra}
        return h, [[d, merged[d]] for d in sorted(merged)]

    def replace_own(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        return h, [[d, vec(unit(self.rnd, self.dims))] for d, _ in r]

    def duplicate(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        i = self.rnd.randrange(len(r))
        return h, r[: i + 1] + [list(r[i])] + r[i + 1 :]

    def reorder(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        self.rnd.shuffle(r)
        return h, r

    def drop(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        return h, [x for x in r if self.rnd.random() < 0.5]

    def header_type(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        key = self.rnd.choice(("tap", "commit", "source", "parity", "version", "format"))
        h[key] = self.rnd.choice((None, 7, [], {}, "", True, "x" * 5000))
        return h, r

    def tap_name(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        h["tap"] = self.rnd.choice(("../../x", "-rf", ".x", "a/b", "a\nb", "x" * 101, "b", "nope"))
        h["source"] = self.rnd.choice(
            ("https://evil.example/o/r", "ext::sh -c x", "--upload-pack=x", "")
        )
        return h, r

    def parity_field(self, h: Dict[str, Any], r: Rows) -> Tuple[Dict[str, Any], Rows]:
        key = self.rnd.choice(("unit", "normalisation", "provider", "model", "served_model"))
        h["parity"][key] = self.rnd.choice(("chunk", "none", "x", "", "\u202e", "hash"))
        return h, r

    def endless(self, h: Dict[str, Any], r: Rows) -> bytes:
        return dump({**h, "count": len(r)}, r[:1]) + b'["' + b"a" * 64 + b'", "' + b"A" * 2_000_000


MUTATIONS: List[Tuple[str, Callable[..., Any]]] = [
    (n, getattr(Crafter, n))
    for n in (
        "truncate",
        "flip",
        "huge_count",
        "lie",
        "dims",
        "width",
        "bad_value",
        "cross_tap",
        "strangers",
        "replace_own",
        "duplicate",
        "reorder",
        "drop",
        "header_type",
        "tap_name",
        "parity_field",
        "endless",
    )
]


# --------------------------------------------------------------------------- state


def state(home: Path) -> Dict[str, Any]:
    """The vector store's cache rows and items (hash → vector), per table."""
    path = home / "cache" / "vectors.sqlite"
    if not path.exists():
        return {"cache": {}, "items": {}}
    conn = sqlite3.connect(str(path))
    try:
        cache = {h: bytes(v) for h, v in conn.execute("SELECT text_hash, vector FROM cache")}
        items = {
            (t, h): bytes(v) for t, h, v in conn.execute("SELECT tap, text_hash, vector FROM items")
        }
        return {"cache": cache, "items": items}
    finally:
        conn.close()


def bad_vector(blob: bytes) -> bool:
    values = struct.unpack(f"<{len(blob) // 4}f", blob)
    total = sum(x * x for x in values)
    return not math.isfinite(total) or abs(math.sqrt(total) - 1) > 1e-3


def check(
    code: int, err: str, before: Dict[str, Any], after: Dict[str, Any], a_texts: set
) -> List[str]:
    problems = []
    if code not in (0, 2, 3, 7):
        problems.append(f"exit {code}")
    if "internal error" in err or "Traceback" in err:
        problems.append("internal error: " + err.strip().splitlines()[-1][:200])
    if err.count("\n") > 1:
        problems.append(f"{err.count(chr(10))} stderr lines")
    if code != 0 and after != before:
        problems.append("a refused file changed the vector store")
    for h, v in before["cache"].items():
        if after["cache"].get(h) != v:
            problems.append(f"cache vector {h[:12]} replaced or lost")
            break
    added = set(after["cache"]) - set(before["cache"])
    if added - a_texts:
        problems.append(f"{len(added - a_texts)} cache rows for texts tap a does not have")
    b_before = {k: v for k, v in before["items"].items() if k[0] == "b"}
    b_after = {k: v for k, v in after["items"].items() if k[0] == "b"}
    if b_before != b_after:
        problems.append("tap b's vectors changed")
    if any(map(bad_vector, list(after["cache"].values()) + list(after["items"].values()))):
        problems.append("a vector that is not finite or not of unit length")
    return problems


# --------------------------------------------------------------------------- large files


def large_files(
    work: Path, rnd: random.Random, a: Path, dims: int, mb: int
) -> List[Tuple[str, Path]]:
    """Files of ``mb`` MB: rows of random texts behind an honest count, behind a lying
    count (the genuine one), and one endless line."""
    header, rows = parse(a)
    body = work / "body.bin"
    with open(body, "wb") as fh:
        n = 0
        line = len(json.dumps(["0" * 64, vec([0.0] * dims)])) + 1
        want = mb * 1_000_000 // line
        block = []
        for i in range(want):
            block.append(
                json.dumps(
                    [f"{i:064x}", vec(unit(rnd, dims) if i < 64 else [1.0] + [0.0] * (dims - 1))]
                )
            )
            if len(block) == 10_000:
                fh.write(("\n".join(block) + "\n").encode())
                block = []
            n += 1
        fh.write(("\n".join(block) + "\n").encode() if block else b"")
    out = []
    for label, count in (("large-honest-count", n), ("large-lying-count", len(rows))):
        path = work / f"{label}.jsonl"
        with open(path, "wb") as fh, open(body, "rb") as src:
            fh.write((json.dumps({**header, "count": count}, sort_keys=True) + "\n").encode())
            shutil.copyfileobj(src, fh, 1 << 20)
        out.append((label, path))
    path = work / "large-endless-line.jsonl"
    with open(path, "wb") as fh:
        fh.write((json.dumps({**header, "count": len(rows)}, sort_keys=True) + "\n").encode())
        fh.write(b'["' + b"a" * 64 + b'", "')
        chunk = b"A" * (1 << 20)
        for _ in range(mb):
            fh.write(chunk)
        fh.write(b'"]\n')
    out.append(("large-endless-line", path))
    body.unlink()
    return out


# --------------------------------------------------------------------------- main


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--registry", type=Path, default=EXAMPLES, help="tap a's files")
    parser.add_argument("--big-mb", type=int, default=360, help="size of the large files (0: none)")
    parser.add_argument("--search-every", type=int, default=10, help="a hybrid search every N")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="boost-vfuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    repo_a = make_repo(work / "reg-a", args.registry, {})
    repo_b = make_repo(
        work / "reg-b",
        None,
        {f"skills/{n}/SKILL.md": SKILL.format(n) for n in ("kafka", "redis", "nginx")},
    )
    alice = work / "alice"
    must(["tap", str(repo_a), "--name", "a"], alice)
    must(["tap", str(repo_b), "--name", "b"], alice)
    must(["reindex", "--dense", "--yes"], alice)
    a_file, b_file = work / "a.jsonl", work / "b.jsonl"
    must(["vectors", "export", "a", str(a_file)], alice)
    must(["vectors", "export", "b", str(b_file)], alice)
    header, a_rows = parse(a_file)
    dims = int(header["parity"]["dimensions"])
    a_texts = {d for d, _ in a_rows}
    # Starting homes: only b embedded (a's vectors may be added), both embedded.
    only_b = work / "start-only-b"
    must(["tap", str(repo_a), "--name", "a"], only_b)
    must(["tap", str(repo_b), "--name", "b"], only_b)
    must(["reindex"], only_b)
    must(["vectors", "import", str(b_file)], only_b)
    starts = [only_b, alice]
    crafter = Crafter(rnd, a_file, b_file, dims)
    outcomes: Dict[str, int] = {}
    problems: List[Dict[str, Any]] = []
    largest = {"label": "", "bytes": 0, "rss_kb": 0, "seconds": 0.0, "exit": 0}
    biggest_accepted = {"label": "", "bytes": 0, "rss_kb": 0, "seconds": 0.0}
    jobs: List[Tuple[str, Optional[bytes], Optional[Path]]] = []
    for _ in range(args.attempts):
        label, data = crafter.craft()
        jobs.append((label, data, None))
    if args.big_mb:
        jobs += [
            (label, None, path) for label, path in large_files(work, rnd, a_file, dims, args.big_mb)
        ]
    for n, (label, data, path) in enumerate(jobs, start=1):
        home = work / "home"
        if home.exists():
            shutil.rmtree(home)
        shutil.copytree(starts[n % 2], home, symlinks=True)
        if path is None:
            path = work / "crafted.jsonl"
            path.write_bytes(data or b"")
        before = state(home)
        code, out, err, rss, seconds = boost_rss(["vectors", "import", str(path), "--json"], home)
        outcomes[str(code)] = outcomes.get(str(code), 0) + 1
        found = check(code, err, before, state(home), a_texts)
        if code == 0 and (n % args.search_every == 0 or label.startswith("large")):
            s_code, s_out, s_err, _, _ = boost(
                ["search", "fill pdf forms", "--engine", "hybrid", "--json", "--no-llm"], home
            )
            try:
                json.loads(s_out)
            except ValueError:
                found.append(f"search after the import: exit {s_code}, {s_err.strip()[:200]}")
        size = path.stat().st_size
        if size > largest["bytes"]:
            largest = {
                "label": label,
                "bytes": size,
                "rss_kb": rss,
                "seconds": round(seconds, 2),
                "exit": code,
            }
        if code == 0 and size > biggest_accepted["bytes"]:
            biggest_accepted = {
                "label": label,
                "bytes": size,
                "rss_kb": rss,
                "seconds": round(seconds, 2),
            }
        if label.startswith("large"):
            print(
                f"{label}: {size / 1e6:.0f} MB, exit {code}, {rss / 1024:.0f} MB RSS, {seconds:.2f} s: {err.strip()[:160]}"
            )
        if found:
            problems.append(
                {
                    "attempt": n,
                    "mutation": label,
                    "exit": code,
                    "problems": found,
                    "stderr": err.strip()[:300],
                }
            )
            print(f"#{n} {label}: exit {code}: {'; '.join(found)}", flush=True)
    summary = {
        "attempts": len(jobs),
        "seed": args.seed,
        "registry": str(args.registry),
        "tap_a_texts": len(a_texts),
        "dimensions": dims,
        "outcomes_by_exit": dict(sorted(outcomes.items())),
        "inconsistencies": len(problems),
        "largest_import": largest,
        "largest_accepted_import": biggest_accepted,
        "seconds": round(time.perf_counter() - t0, 1),
        "problems": problems[:50],
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
