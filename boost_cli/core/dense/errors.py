"""How the dense engine says it cannot answer: `DenseUnavailable` and its fixes."""

from __future__ import annotations

from boost_cli.core.errors import IndexError_, ProviderError

REINDEX_FIX = "run 'boost reindex --dense'"


class DenseUnavailable(IndexError_):
    """The dense engine cannot answer: no store, another embedder, or the provider failed.

    ``reason`` is one line for ``--explain`` when auto mode degrades to BM25."""

    @property
    def reason(self) -> str:
        return str(self)


class DenseProviderFailed(DenseUnavailable):
    """The store is fine but the embedding provider could not embed the query (down, slow,
    refusing the key). Exit code 6, like every provider failure."""

    exit_code = ProviderError.exit_code
