"""The JSON shape of a hit: what `boost search --json` prints and MCP returns as structured
content. One place, so the CLI and the MCP tool never drift apart."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from boost_cli.core import paths, registry
from boost_cli.core.models import Hit
from boost_cli.core.text import one_line

# What an MCP result keeps of a record: enough to choose and to open, not the frontmatter.
MCP_FIELDS = (
    "id",
    "name",
    "tap",
    "kind",
    "description",
    "why",
    "score",
    "file",
    "url",
    "also_in",
    "path",
)


def hit_record(hit: Hit, taps: Mapping[str, registry.TapInfo]) -> Dict[str, Any]:
    """A hit as the stable JSON object of `boost search --json`: the entry, its score,
    snippet and why, plus ``file`` (the path on disk) and ``url`` (a browsable link)."""
    d: Dict[str, Any] = hit.to_dict()
    tap = taps.get(hit.entry.tap)
    d["file"] = str(paths.tap_dir(hit.entry.tap) / hit.entry.path)
    d["url"] = registry.source_url(tap, hit.entry.path) if tap else ""
    return d


def mcp_record(hit: Hit, taps: Mapping[str, registry.TapInfo]) -> Dict[str, Any]:
    """`hit_record` cut to `MCP_FIELDS`; ``why`` is left out when it only repeats the
    description (the caller pays for every token it reads)."""
    record = hit_record(hit, taps)
    if one_line(record["why"]) == one_line(record["description"]):
        del record["why"]
    return {k: record[k] for k in MCP_FIELDS if k in record}
