"""Measure what importing a hostile 2 MB bundle costs: peak memory and disk (issue #32,
item 11).

The bundle holds a tap whose index members and served files are each ``--size`` MiB of
zeros (by default 4 and 4 of 255 MiB: about 2 MB compressed in all). It runs ``boost bundle import`` on a fresh home with the
boost at ``--root`` (default: this checkout) and prints the child's peak RSS, the bytes it
wrote to storage (``ru_oublock``), the largest the home grew to (sampled every 50 ms), its
exit code, the time taken and the first line of its stderr.

    python scripts/bundle_bomb.py [--root DIR] [--index N] [--files N] [--size MIB]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any, Dict, List, Tuple

MAGIC = b"BOOSTBUNDLE-v1\n\x00"


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def zeros(size: int) -> Tuple[bytes, str]:
    """``size`` zero bytes compressed, and their digest (never held whole: the child's
    peak memory must not start at this process's)."""
    pack, digest, block = zlib.compressobj(9), hashlib.sha256(), b"\0" * (1 << 20)
    out = []
    for _ in range(size >> 20):
        out.append(pack.compress(block))
        digest.update(block)
    out.append(pack.flush())
    return b"".join(out), digest.hexdigest()


def write_bomb(path: Path, index: int, files: int, size: int) -> None:
    packed, digest = zeros(size)
    commit = "a" * 40
    catalog = canonical({"version": 1, "commit": commit, "entries": []})
    rows: List[Dict[str, Any]] = [
        {
            "name": "evil/catalog.json",
            "size": len(catalog),
            "csize": len(zlib.compress(catalog)),
            "sha256": hashlib.sha256(catalog).hexdigest(),
        }
    ]
    names = [f"evil/index/segments/evil-{i:016x}.seg" for i in range(index)]
    names += [f"evil/files/z{i}" for i in range(files)]
    rows += [{"name": n, "size": size, "csize": len(packed), "sha256": digest} for n in names]
    meta = {
        "taps": [
            {
                "name": "evil",
                "source": "x",
                "url": "x",
                "commit": commit,
                "counts": {},
                "warnings": 0,
            }
        ]
    }
    head = canonical({"format": 1, "kind": "boost-bundle", "meta": meta, "members": rows})
    body = (
        MAGIC + struct.pack("<Q", len(head)) + head + zlib.compress(catalog) + packed * len(names)
    )
    path.write_bytes(body + hashlib.sha256(body).digest())


def tree_size(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for f in files:
            try:
                total += os.lstat(os.path.join(folder, f)).st_size
            except OSError:
                continue
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--index", type=int, default=4, help="index members")
    parser.add_argument("--files", type=int, default=4, help="served files")
    parser.add_argument("--size", type=int, default=255, help="MiB of each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.bundle"
        write_bomb(bomb, args.index, args.files, args.size << 20)
        home = Path(tmp) / "home"
        env = {**os.environ, "BOOST_HOME": str(home)}
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], tree_size(home))
                time.sleep(0.05)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        start = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "bundle", "import", str(bomb)],
            cwd=args.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert child.stderr is not None
        err = child.stderr.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(child.pid, 0)
        took = time.monotonic() - start
        done.set()
        watcher.join()
        print(
            f"bundle: {bomb.stat().st_size / 1e6:.1f} MB, {args.index} index members and "
            f"{args.files} files of {args.size} MiB"
        )
        print(f"exit: {os.waitstatus_to_exitcode(status)} in {took:.1f} s")
        print(f"peak RSS: {usage.ru_maxrss / 1024:.0f} MB")
        print(f"written to storage: {usage.ru_oublock * 512 / 1e6:.0f} MB")
        print(f"home grew to: {peak[0] / 1e6:.0f} MB")
        print(f"stderr: {(err.strip().splitlines() or [''])[-1][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
