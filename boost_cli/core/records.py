"""The JSON shape of a hit: what `boost search --json` prints and MCP returns as structured
content. One place, so the CLI and the MCP tool never drift apart.

A record of a skill the MCP Skills extension serves carries its ``uri``
(``skill://...``, `skillmap`), left out for everything else.

A record starts with ``id`` (what `boost show` and ``boost_get_skill`` take) and leaves out
the entry's frontmatter (``meta``: it repeats the description and can hold kilobytes of
examples) unless it is asked for by name (`select`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from boost_cli.core import paths, registry, skillmap, trust_scan
from boost_cli.core.errors import UsageError
from boost_cli.core.models import Hit
from boost_cli.core.text import one_line

# `boost search --json` keys, in order; `EXTRA_FIELDS` only when asked for.
HIT_FIELDS = (
    "id",
    "name",
    "tap",
    "kind",
    "description",
    "why",
    "why_source",
    "score",
    "file",
    "url",
    "uri",
    "path",
    "rel_dir",
    "snippet",
    "also_in",
    "similar",
    "ranks",
    "flags",
)
EXTRA_FIELDS = ("meta",)

# What an MCP result keeps of a record: enough to choose and to open; not the passage, the
# per-engine ranks or the frontmatter (the caller pays for every token it reads).
MCP_FIELDS = tuple(f for f in HIT_FIELDS if f not in ("rel_dir", "snippet", "ranks"))


def _full_record(
    hit: Hit, taps: Mapping[str, registry.TapInfo], skills: Optional[skillmap.UriSource]
) -> Dict[str, Any]:
    e = hit.entry
    tap = taps.get(e.tap)
    uri = skills.uri_of(e.tap, e.path) if skills is not None else None
    return {
        "id": e.qualified_name,
        "name": e.name,
        "tap": e.tap,
        "kind": e.kind,
        "description": e.description,
        "why": hit.why,
        "why_source": hit.why_source,
        "score": round(hit.score, 6),
        "file": str(paths.tap_dir(e.tap) / e.path),
        "url": registry.source_url(tap, e.path) if tap else "",
        "uri": uri,
        "path": e.path,
        "rel_dir": e.rel_dir,
        "snippet": hit.snippet,
        "also_in": list(hit.also_in),
        "similar": list(hit.similar),
        "ranks": dict(hit.ranks),
        "meta": dict(e.meta),
    }


def fields(spec: Optional[str]) -> List[str]:
    """The keys a ``--fields`` value asks for, in its order: None gives `HIT_FIELDS`,
    ``all`` every field. Raises UsageError naming the valid keys for an unknown one."""
    if spec is None:
        return list(HIT_FIELDS)
    wanted = [f.strip() for f in spec.split(",") if f.strip()]
    known = (*HIT_FIELDS, *EXTRA_FIELDS)
    if wanted == ["all"]:
        return list(known)
    bad = [f for f in wanted if f not in known]
    if bad or not wanted:
        raise UsageError(
            f"unknown field {bad[0]!r}" if bad else "--fields names no field",
            f"choose from {','.join(known)} (or 'all')",
        )
    return list(dict.fromkeys(wanted))


def hit_record(
    hit: Hit,
    taps: Mapping[str, registry.TapInfo],
    keys: Sequence[str] = HIT_FIELDS,
    skills: Optional[skillmap.UriSource] = None,
    view: Optional[trust_scan.View] = None,
) -> Dict[str, Any]:
    """A hit as the stable JSON object of `boost search --json`: ``keys`` of the entry, its
    score, why and snippet, ``file`` (the path on disk), ``url`` (a browsable link), for a
    skill ``skills`` serves, ``uri``, and ``flags`` (the trust findings, one ``{kind,
    severity, count}`` per kind; ``view`` reads each tap's findings once for a whole list)."""
    record = _full_record(hit, taps, skills)
    if "flags" in keys:  # read only when asked for: the findings live in their own cache
        record["flags"] = (view or trust_scan.View(taps)).flags(hit.entry)
    return {k: record[k] for k in keys if not (k == "uri" and record[k] is None)}


def mcp_record(
    hit: Hit,
    taps: Mapping[str, registry.TapInfo],
    skills: Optional[skillmap.UriSource] = None,
    view: Optional[trust_scan.View] = None,
) -> Dict[str, Any]:
    """`hit_record` cut to `MCP_FIELDS`; ``why`` (and ``why_source``) is left out when it
    only repeats the description (the caller pays for every token it reads)."""
    record = hit_record(hit, taps, MCP_FIELDS, skills, view)
    if one_line(record["why"]) == one_line(record["description"]):
        del record["why"], record["why_source"]
    return record
