"""The trust check of `boost install`: the item's findings from the trust scan (issue 23,
`trust_scan`), printed with the plan; a high-severity one refuses the item unless
``--force`` (over MCP, where there is no force, always)."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from boost_cli.core import lookup, registry, trust, trust_scan


def findings(found: lookup.Found) -> List[trust.Finding]:
    """Every finding of the item about to be installed (its file and its folder's), worst
    first: from the tap's cached scan, else scanned now."""
    view = registry.trust_view()
    return list(view.findings(found.entry))


def shown(found: Sequence[trust.Finding]) -> Tuple[str, ...]:
    """The lines the plan prints: each finding of low severity or worse, one line each
    (escaped and clipped by `trust_scan.finding_line`)."""
    return tuple(trust_scan.finding_line(f) for f in found if f.severity != "info")


def high_findings(found: Sequence[trust.Finding]) -> List[str]:
    """The findings that refuse an install without ``--force``."""
    return [trust_scan.finding_line(f) for f in found if f.severity == "high"]
