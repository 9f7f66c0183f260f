#!/usr/bin/env python3
"""The dense store at N times the corpus: how long a k-NN takes on the flat index (pure
Python and numpy) and on sqlite-vec, without embedding N times the corpus.

    python scripts/dense_scale.py build --home DIR --times 10 --out STORE [--sigma 0.002]
    python scripts/dense_scale.py time  --store STORE [--qcache FILE] [--rounds 3]

``build`` makes STORE from the vector store of a home built with the local provider
(``DIR/cache/vectors.sqlite``, read only) through the store's own write API
(`Store.replace_tap`, then `sync_flat` and, where sqlite-vec loads, `sync_vec`): copy 0 of
every tap is the store's rows as they are; copies 1..N-1 are taps named ``TAP__vC`` (as
``../shared/tools/scale_corpus.py`` names them) whose entries are the originals with the
tap renamed, a file hash of their own (``scale_corpus.py`` makes every copy's files
unique), and each vector perturbed by Gaussian noise of ``--sigma`` per component, then
renormalised (cosine ~0.999 to the original at the default: copies of one file sit
close together, as the real N-times corpus's near-identical texts do). Embedding the
10x corpus with the model would take ~50 minutes here; the k-NN's cost depends on the
number and length of the vectors, not on where they came from.

``time`` runs the 40 dev queries' vectors (embedded once by the configured embedder and
kept in --qcache, as ``dense_eval.py`` does) through `Store.knn` at the hybrid search's
depth (160 vectors: 80 files, `COPIES_PER_HIT` 2) and through a whole
`DenseIndex.search_vector` (80 files), for every backend this Python can run: ``flat``
without numpy, ``flat`` with numpy, and ``sqlite-vec`` when its extension loads (run it
again with a Python whose sqlite3 can load extensions for that one). It also times
loading the flat index (what a cold process pays) and prints medians with the load
average. Not part of CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boost_cli.core.dense import store as dstore  # noqa: E402
from boost_cli.core.dense.flat import FlatIndex, loaded_numpy  # noqa: E402
from boost_cli.core.dense.query import COPIES_PER_HIT, DenseIndex  # noqa: E402
from boost_cli.core.dense.units import Unit  # noqa: E402
from boost_cli.core.embed import EmbedConfig, unpack  # noqa: E402
from boost_cli.core.models import Entry  # noqa: E402

SHARED = Path(os.environ.get("BOOST_SHARED", ROOT.parent / "shared"))
DEPTH = 80  # fusion.DEPTH: what a hybrid search asks the dense engine for


def load_avg() -> str:
    with open("/proc/loadavg", encoding="ascii") as fh:
        return " ".join(fh.read().split()[:3])


def perturbed(vector: Sequence[float], rng: random.Random, sigma: float) -> List[float]:
    v = [x + rng.gauss(0.0, sigma) for x in vector]
    norm = math.sqrt(math.fsum(x * x for x in v))
    return [x / norm for x in v]


def cmd_build(args: argparse.Namespace) -> int:
    source = dstore.open_existing(args.home / "cache" / "vectors.sqlite", "flat")
    meta = source.meta()
    taps = source.taps()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists: pick a new path")
    out = dstore.open_for_build(args.out, "auto")
    # The embedder's identity and parity block, not the bookkeeping of the source's builds.
    out.set_meta(
        **{
            k: v
            for k, v in meta.items()
            if k not in ("format_version", "generation") and not k.startswith(("flat_", "vec_"))
        }
    )
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    for copy in range(args.times):
        for tap, commit in sorted(taps.items()):
            rows = source.conn.execute(
                "SELECT i.chunk, i.text_hash, i.snippet, i.vector, e.entry_json, e.file_sha256"
                " FROM items i JOIN entries e ON e.entry_id = i.entry_id"
                " WHERE i.tap = ? ORDER BY i.id",
                (tap,),
            ).fetchall()
            name = tap if copy == 0 else f"{tap}__v{copy}"
            units: List[Unit] = []
            vectors: List[List[float]] = []
            hashes: Dict[str, Optional[str]] = {}
            for chunk, text_hash, snippet, blob, entry_json, sha in rows:
                entry = Entry.from_dict({**json.loads(entry_json), "tap": name})
                units.append(Unit(entry, int(chunk), f"{text_hash}\x1f{copy}", snippet))
                vector = list(unpack(blob))
                vectors.append(vector if copy == 0 else perturbed(vector, rng, args.sigma))
                if sha and copy:
                    sha = hashlib.sha256(f"{sha}\x1f{copy}".encode()).hexdigest()
                hashes[entry.id] = sha
            out.replace_tap(name, commit, units, vectors, hashes)
        print(f"copy {copy + 1}/{args.times}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    out.sync_flat()
    out.sync_vec()
    entries, items = out.counts()
    print(
        json.dumps(
            {
                "store": str(args.out),
                "entries": entries,
                "vectors": items,
                "backend": out.backend,
                "bytes": dstore.store_bytes(args.out),
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
    )
    out.close()
    source.close()
    return 0


def query_vectors(qcache: Path) -> List[List[float]]:
    """The dev queries embedded by the configured embedder (cached in ``qcache``)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from dense_eval import QueryVectors, embed_config

    with open(SHARED / "eval" / "dev.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["query"] for line in fh if line.strip()]
    found = QueryVectors(qcache).get(embed_config(), texts)
    return [found[t] for t in texts]


def _median_ms(run: Any, vectors: Sequence[Sequence[float]], rounds: int) -> Dict[str, float]:
    for v in vectors:  # a warm-up round
        run(v)
    times: List[float] = []
    for _ in range(rounds):
        for v in vectors:
            t0 = time.perf_counter()
            run(v)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 2),
        "p90_ms": round(times[int(0.9 * (len(times) - 1))], 2),
    }


def cmd_time(args: argparse.Namespace) -> int:
    vectors = query_vectors(args.qcache)
    report: Dict[str, Any] = {"store": str(args.store), "python": sys.version.split()[0]}
    store = dstore.open_existing(args.store, "auto")
    report["entries"], report["vectors"] = store.counts()
    report["load_before"] = load_avg()
    blobs = dict(store.conn.execute("SELECT name, data FROM flat"))
    t0 = time.perf_counter()
    flat = FlatIndex.decode(blobs)
    report["flat_decode_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    assert flat is not None, "the store has no flat index"
    k = DEPTH * COPIES_PER_HIT
    conn = store.conn
    runs = {"flat, pure Python": False, "flat, numpy": True}
    if not args.no_pure:
        t0 = time.perf_counter()
        flat._big_columns()
        report["flat_big_integer_columns_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    for label, use_numpy in runs.items():
        if use_numpy is False and args.no_pure:
            continue
        if use_numpy:
            try:
                import numpy  # noqa: F401
            except ImportError:
                continue

        def knn(v: Sequence[float], use_numpy: bool = use_numpy) -> Any:
            return flat.knn(conn, v, k, None, use_numpy=use_numpy)

        report[f"knn {k}, {label}"] = _median_ms(knn, vectors, args.rounds)
    if store.vec_in_sync():
        report[f"knn {k}, sqlite-vec"] = _median_ms(
            lambda v: store.knn(v, k, None), vectors, args.rounds
        )
    store.close()
    config = EmbedConfig("local", "all-MiniLM-L6-v2-int8")  # search_vector embeds nothing
    for backend in ("flat", "sqlite-vec"):
        index = DenseIndex(config, path=args.store, backend=backend)
        if index.status().info.get("backend") != backend:
            continue  # sqlite-vec does not load in this Python
        label = backend
        if backend == "flat":
            label += ", numpy" if loaded_numpy() is not None else ", pure Python"
        report[f"search_vector {DEPTH}, {label}"] = _median_ms(
            lambda v, index=index: index.search_vector(v, k=DEPTH), vectors, args.rounds
        )
    report["load_after"] = load_avg()
    print(json.dumps(report, indent=2))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="an N-times store from a home's store")
    b.add_argument("--home", type=Path, required=True)
    b.add_argument("--times", type=int, default=10)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--sigma", type=float, default=0.002)
    b.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("time", help="k-NN latency per backend on a store")
    t.add_argument("--store", type=Path, required=True)
    t.add_argument("--qcache", type=Path, default=Path("/tmp/boost-dense-scale-qvectors.json"))
    t.add_argument("--rounds", type=int, default=3)
    t.add_argument("--no-pure", action="store_true", help="skip the pure-Python flat path")
    args = ap.parse_args(argv)
    return cmd_build(args) if args.cmd == "build" else cmd_time(args)


if __name__ == "__main__":
    sys.exit(main())
