"""`boost restore`: install every item a project's manifest lists, at its recorded bytes
(`core/install/restore`), as ``npm ci`` installs what a lockfile lists."""

from __future__ import annotations

import argparse

from boost_cli.commands.render import emit_json, err, out, short
from boost_cli.core.errors import BoostError
from boost_cli.core.install import restore
from boost_cli.core.text import printable


class NotRestored(BoostError):
    """Some items were left as they are (edited, or their bytes could not be had). Exit 1."""


def cmd_restore(args: argparse.Namespace) -> int:
    sc, outcomes = restore.restore(
        user=args.user, project=args.project, dry_run=args.dry_run, force=args.force
    )
    if args.json:
        emit_json([o.to_dict() for o in outcomes])
    else:
        for o in outcomes:
            n = len(o.files)
            files = f" ({n} file{'' if n == 1 else 's'})" if n else ""
            # Ids, paths and reasons come from a manifest a clone brought: data, escaped.
            out(printable(f"{o.state:<13} {o.key}  {o.id} @ {short(o.commit)}{files}"))
            if o.why:
                err(printable(f"  {o.why}"))
    bad = [o for o in outcomes if o.state in (restore.EDITED, restore.FAILED)]
    if bad:
        raise NotRestored(
            f"{len(bad)} of {len(outcomes)} items not restored: {', '.join(o.key for o in bad[:5])}",
            "see the reasons above; give --force to overwrite your edits",
        )
    if not outcomes:
        err(printable(f"the manifest in {sc.base} lists nothing"))
    return 0
