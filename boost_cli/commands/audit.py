"""`boost audit`: every trust finding of the tapped registries, one per line with its
``file:line``, for people and for the CI of a team's own registry (exit 1 when any finding
is high severity). Beyond the cached findings, it checks names across every tapped
registry (`trust_names.across_taps`): a name posing as one in another tap."""

from __future__ import annotations

import argparse
from typing import List, Tuple

from boost_cli.commands.render import detail, emit_json, say
from boost_cli.core import registry, trust, trust_names, trust_scan


def cmd_audit(args: argparse.Namespace) -> int:
    taps = {t.name: t for t in registry.require_taps(args.taps)}
    floor = trust.rank(args.severity)
    shown: List[Tuple[str, str, trust.Finding]] = []
    counts = {s: 0 for s in reversed(trust.SEVERITIES)}
    audited = []
    snaps = registry.snapshots()  # every tap: a look-alike of any tapped name counts
    across = trust_names.across_taps((s.name, e.path, e.name) for s in snaps for e in s.entries)
    for snap in snaps:
        if args.taps and snap.name not in args.taps:
            continue
        tap = taps[snap.name]
        audited.append(tap.name)
        names = {e.path: e.qualified_name for e in snap.entries}
        found = dict(trust_scan.audit_tap(tap, snap.entries))
        for (tap_name, path), f in across.items():
            own = found.get(path, ())
            if tap_name == tap.name and not any(x.kind == "lookalike" for x in own):
                found[path] = (f, *own)
        for path in sorted(found):
            for f in found[path]:
                counts[f.severity] += 1
                if trust.rank(f.severity) >= floor:
                    shown.append((tap.name, names.get(path, path), f))
    high = counts["high"] > 0
    if args.json:
        findings = [{"tap": t, "entry": e, **f.to_dict()} for t, e, f in shown]
        emit_json({"taps": audited, "counts": counts, "high": high, "findings": findings})
        return 1 if high else 0
    for tap_name, _, f in sorted(shown, key=lambda x: (trust.sort_key(x[2]), x[0])):
        # one line per finding into a pipe (grep); on a terminal wrapped at words, later
        # lines indented (the terminal's own wrap cut words and paths)
        say(trust_scan.audit_line(tap_name, f), indent="    ")
    total = sum(counts.values())
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    hidden = total - len(shown)
    line = (
        f"{total} finding{'' if total == 1 else 's'} in {len(audited)} "
        f"tap{'' if len(audited) == 1 else 's'}: {summary}"
        + (f" ({hidden} below {args.severity} not listed: --all lists them)" if hidden else "")
    )
    if total:
        say(line, indent="  ")  # the count of what is not listed is part of the answer
    else:
        detail(line)
    return 1 if high else 0
