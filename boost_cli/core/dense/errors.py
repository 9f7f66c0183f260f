"""How the dense engine says it cannot answer: `DenseUnavailable` and its fixes."""

from __future__ import annotations

from typing import Optional, Union

from boost_cli.core.errors import IndexUnavailable, ProviderError

REINDEX_FIX = "run 'boost reindex --dense'"
REEMBED_FIX = "run 'boost reindex --dense --force' to re-embed"


class DenseUnavailable(IndexUnavailable):
    """The dense engine cannot answer: no store, another embedder, or the provider failed.

    ``reason`` is one line for ``--explain`` when auto mode degrades to BM25."""

    @property
    def reason(self) -> str:
        return str(self)


class DenseDamaged(DenseUnavailable):
    """The store's file is damaged in place (SQLite finds a page malformed): it answers
    nothing until `boost reindex --dense --force` makes it anew."""


class DenseProviderFailed(DenseUnavailable):
    """The store is fine but the embedding provider could not embed the query (down, slow,
    refusing the key). Exit code 6, like every provider failure."""

    exit_code = ProviderError.exit_code


def check_dimensions(query: int, store: Optional[Union[int, str]]) -> None:
    """Refuse a query vector whose length is not the store's (``store`` as recorded in
    its meta; "" or None when not known yet, which passes)."""
    if store and str(query) != str(store):
        raise DenseUnavailable(
            f"the query vector has {query} dimensions, the store {store}", REEMBED_FIX
        )
