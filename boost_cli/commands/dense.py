"""`boost reindex --dense`: embed the taps into the vector store, saying first what leaves the machine."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional, Sequence

from boost_cli.commands.render import err, progress
from boost_cli.core import config, dense, embed
from boost_cli.core.errors import ProviderError, UsageError
from boost_cli.core.models import TapSnapshot

DEFAULT_UNIT = "entry"
NO_PROVIDER_FIX = (
    "set BOOST_EMBED_PROVIDER=voyage (with VOYAGE_API_KEY), openai (with OPENAI_API_KEY), "
    "or BOOST_EMBED_BASE_URL=http://host:port/v1 for an OpenAI-compatible server; 'hash' works offline"
)


def build_dense(
    snaps: Sequence[TapSnapshot], *, unit: Optional[str], force: bool, assume_yes: bool
) -> Dict[str, Any]:
    cfg = embed.resolve_config(config.load(), os.environ)
    if cfg is None:
        raise ProviderError("no embedding provider is configured", NO_PROVIDER_FIX)
    settings = config.load().get("settings", {})
    chosen = unit or str(settings.get("embed", {}).get("unit") or DEFAULT_UNIT)
    if cfg.is_remote:
        where, n_texts, n_chars = dense.egress_summary(snaps, cfg, chosen)
        if n_texts:
            err(
                f"boost will send {n_texts} texts ({n_chars:,} characters of tapped skill files) to {where} to embed them."
            )
            if not assume_yes and sys.stdin.isatty():
                answer = input("Continue? [y/N] ").strip().lower()
                if answer not in ("y", "yes"):
                    raise UsageError(
                        "dense indexing cancelled", "rerun with --yes to skip the question"
                    )
    report = dense.build_dense(
        snaps, config=cfg, unit=chosen, force=force, progress=progress("embedding")
    )
    d = report.to_dict()
    backend, note = dense.backend_status()
    if backend != "sqlite-vec":
        d["backend_note"] = note
    return d
