"""The dense engine: a vector store of entry (or chunk) embeddings and cosine search over it.

The modules, bottom up (each imports only those above it in this list, and `core.embed`):

- `errors` — `DenseUnavailable` (the engine cannot answer; auto mode degrades to BM25);
- `flat` — `FlatIndex`, the exact top-k used when sqlite-vec is absent (pure Python, or numpy
  when the process has it loaded);
- `units` — the texts embedded per entry ("entry" or "chunk" unit);
- `store` — the SQLite file, its schema and backends, and the embedder identity it records;
- `build` — `build_dense` and `egress_summary`;
- `query` — `DenseIndex`: status, query, hits;
- `vecfile` — reading a vectors file anyone may have written: header and rows checked,
  rows streamed;
- `share` — one tap's vectors to a deterministic file and back (``boost vectors``);
- `sync` — what a store holds, and dropping removed taps (the write paths keep it in step).

Layout, parity rules and measurements: docs/dense.md. Everything public is re-exported
here: ``from boost_cli.core.dense import DenseIndex``.
"""

from __future__ import annotations

from boost_cli.core.dense.build import (
    BUILD_TIMEOUT,
    BuildProgress,
    DenseBuildReport,
    build_dense,
    egress_summary,
)
from boost_cli.core.dense.errors import DenseProviderFailed, DenseUnavailable
from boost_cli.core.dense.flat import FlatCache, FlatIndex
from boost_cli.core.dense.query import (
    CHUNKS_PER_HIT,
    COPIES_PER_HIT,
    MAX_KNN,
    QUERY_TIMEOUT,
    QUERY_TRIES,
    DenseIndex,
    DenseStatus,
    open_status,
)
from boost_cli.core.dense.share import (
    ImportReport,
    VectorFile,
    export_tap,
    import_vectors,
    load_file,
    stored_unit,
)
from boost_cli.core.dense.store import (
    BACKENDS,
    FORMAT_VERSION,
    backend_status,
    forget_commits,
    mismatch,
    store_bytes,
)
from boost_cli.core.dense.sync import drop_taps, stored_taps
from boost_cli.core.dense.units import (
    ENTRY_BODY_CHARS,
    SNIPPET_CHARS,
    UNITS,
    enrichment_key,
    enrichments,
    entry_text,
    units_for,
)
from boost_cli.core.dense.vecfile import Header, read_header

__all__ = [
    "BACKENDS",
    "BUILD_TIMEOUT",
    "CHUNKS_PER_HIT",
    "COPIES_PER_HIT",
    "ENTRY_BODY_CHARS",
    "FORMAT_VERSION",
    "MAX_KNN",
    "QUERY_TIMEOUT",
    "QUERY_TRIES",
    "SNIPPET_CHARS",
    "UNITS",
    "BuildProgress",
    "DenseBuildReport",
    "DenseIndex",
    "DenseProviderFailed",
    "DenseStatus",
    "DenseUnavailable",
    "FlatCache",
    "FlatIndex",
    "Header",
    "ImportReport",
    "VectorFile",
    "backend_status",
    "build_dense",
    "egress_summary",
    "enrichment_key",
    "enrichments",
    "entry_text",
    "export_tap",
    "forget_commits",
    "import_vectors",
    "drop_taps",
    "load_file",
    "mismatch",
    "open_status",
    "read_header",
    "store_bytes",
    "stored_unit",
    "stored_taps",
    "units_for",
]
