"""The trust hook of `boost install`: findings that refuse an item unless ``--force``.

A trust scan of registry content (issue 23's ``findings``) plugs in here: `high_findings`
returns one line per high-severity finding of the item about to be installed, and
`apply.install` refuses a non-empty answer without ``--force``. Until that scan lands,
no item has findings.
"""

from __future__ import annotations

from typing import Callable, List, Optional

from boost_cli.core import lookup

# Set by the trust scan: Found → [(severity, text)]. None: no scan installed.
SCANNER: Optional[Callable[[lookup.Found], List[tuple]]] = None


def high_findings(found: lookup.Found) -> List[str]:
    """The item's high-severity findings, as one-line texts."""
    if SCANNER is None:
        return []
    return [str(text) for severity, text in SCANNER(found) if severity == "high"]
