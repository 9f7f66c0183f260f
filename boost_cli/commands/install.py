"""`boost install`, `boost installed`, `boost outdated`, `boost uninstall`: put a found item
where an agent loads it, and keep track of it (`core/install`)."""

from __future__ import annotations

import argparse
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.commands.render import emit_json, err, id_lines, note, out, short, table, width
from boost_cli.core.errors import BoostError, UsageError
from boost_cli.core.install import apply, plan
from boost_cli.core.text import printable

_VERB = {
    plan.WRITE: "write",
    plan.UPDATE: "update",
    plan.KEEP: "same",
    plan.REMOVE: "remove",
    plan.CONFLICT: "REFUSE",
}


def _show_plan(r: apply.Result) -> None:
    p = r.plan
    where = "~" if r.scope.user else str(r.scope.base)
    head = "would install" if not r.applied else "installed"
    if r.applied and not p.changes:
        head = "already installed"
    # Names and file names come from the registry: every line goes through `printable`.
    out(printable(f"{head} {r.id} @ {short(r.commit)} ({p.target.kind}, {p.target.agent})"))
    out(printable(f"  into {where}/{p.target.key}"))
    if not r.applied:
        for a in p.actions:
            why = f"  ({a.why})" if a.why else ""
            out(printable(f"  {_VERB[a.action]:<7} {a.dest}{why}"))
    else:
        counts = plan.summary(p)
        done = ", ".join(f"{n} {_VERB[k]}" for k, n in sorted(counts.items()) if k != plan.KEEP)
        if done:
            out(f"  {done}")
    for f in p.findings:
        note(printable(f"trust: {f}"))
    for n in p.notes:
        note(printable(n))


def cmd_install(args: argparse.Namespace) -> int:
    ids: List[str] = list(args.ids)
    if args.name is not None and len(ids) > 1:
        raise UsageError("--name takes one item", "install the others one at a time")
    if not ids:
        if not args.upgrade:
            raise UsageError("name an item to install", "find one with 'boost search QUERY'")
        return _upgrade_all(args)
    jobs = [(ident, _installer(args, ident, args.agent, args.name, args.upgrade)) for ident in ids]
    if len(jobs) == 1:  # one item: its error is the command's error, exit code and all
        results = [jobs[0][1]()]
        if args.json:
            emit_json([r.to_dict() for r in results])
        else:
            _show_plan(results[0])
        return 0
    return _each(args, jobs)


Job = Tuple[str, Callable[[], apply.Result]]  # the id to report, and the install to run


def _installer(
    args: argparse.Namespace, ident: str, agent: Optional[str], name: Optional[str], upgrade: bool
) -> Callable[[], apply.Result]:
    def run() -> apply.Result:
        return apply.install(
            ident,
            user=args.user,
            project=args.project,
            agent=agent,
            as_name=name,
            dry_run=args.dry_run,
            force=args.force,
            upgrade=upgrade,
        )

    return run


def _each(args: argparse.Namespace, jobs: List[Job]) -> int:
    """Install several items: one refused (an edited file, a trust finding) does not stop
    the others; each is reported as it is done, the refusals on stderr, and the exit code is
    the first refusal's (like ``npm``/``pip`` over several packages, nothing done silently)."""
    rows: List[Dict[str, Any]] = []
    failed: List[Tuple[str, BoostError]] = []
    done = 0
    for ident, run in jobs:
        try:
            r = run()
        except BoostError as exc:
            failed.append((ident, exc))
            rows.append({"id": ident, "applied": False, "error": str(exc)})
            if not args.json:
                err(f"boost: error: {printable(str(exc))}")
            continue
        done += 1
        rows.append(r.to_dict())
        if not args.json:
            _show_plan(r)
    if args.json:
        emit_json(rows)
    if not failed:
        return 0
    verb = "checked" if args.dry_run else "done"
    err(
        f"boost: {done} of {len(jobs)} {verb}; {len(failed)} refused: "
        + ", ".join(printable(i) for i, _ in failed)
    )
    return failed[0][1].exit_code


def _upgrade_all(args: argparse.Namespace) -> int:
    sc, items = apply.statuses(args.user, args.project)
    jobs: List[Job] = []
    for st in items:
        if st.state != "outdated":
            continue
        name = st.key.rsplit("/", 1)[-1]
        ident = f"{st.record['tap']}:{st.record['path']}"
        as_name = name.rsplit(".", 1)[0] if st.record.get("kind") != "skill" else name
        shown = str(st.record.get("id") or ident)
        jobs.append((shown, _installer(args, ident, st.record.get("agent"), as_name, True)))
    if not jobs:
        if args.json:
            emit_json([])
        else:
            err("nothing to upgrade: every installed item matches its tap")
        return 0
    return _each(args, jobs)


def cmd_uninstall(args: argparse.Namespace) -> int:
    done = []
    for ident in args.ids:
        key, p, sc = apply.uninstall(
            ident, user=args.user, project=args.project, dry_run=args.dry_run, force=args.force
        )
        done.append({"target": key, "applied": not args.dry_run, "removed": len(p.changes)})
        if not args.json:
            verb = "would remove" if args.dry_run else "removed"
            n = len(p.changes)
            out(printable(f"{verb} {key} ({n} file{'' if n == 1 else 's'})"))
    if args.json:
        emit_json(done)
    return 0


def _records(args: argparse.Namespace, only_outdated: bool) -> int:
    sc, items = apply.statuses(args.user, args.project)
    shown = [s for s in items if s.state == "outdated" or not only_outdated]
    if args.json:
        emit_json(
            [
                {
                    "target": s.key,
                    "id": s.record.get("id"),
                    "tap": s.record.get("tap"),
                    "path": s.record.get("path"),
                    "agent": s.record.get("agent"),
                    "kind": s.record.get("kind"),
                    "commit": s.record.get("commit"),
                    "state": s.state,
                    "tap_commit": s.new_commit,
                    "files": s.record.get("files"),
                }
                for s in shown
            ]
        )
        return _outdated_code(shown, only_outdated)
    if not shown:
        where = "for you" if args.user else f"in {sc.base}"
        what = "outdated" if only_outdated else "installed"
        err(printable(f"nothing {what} {where}"))
        return 0
    rows = [
        [
            s.key,
            s.record.get("id", ""),
            short(str(s.record.get("commit", "")))
            + (f" → {short(s.new_commit)}" if s.state == "outdated" else ""),
            s.state,
        ]
        for s in shown
    ]
    out(installed_table(rows, width()))
    if any(s.state == "outdated" for s in shown):
        note("upgrade with 'boost install --upgrade' (all) or 'boost install --upgrade ID'")
    return _outdated_code(shown, only_outdated)


def _outdated_code(shown: List[apply.Status], only_outdated: bool) -> int:
    """`boost outdated` exits 1 when something is outdated, as `npm outdated` does, so a
    script or CI step can test it; `boost installed` lists and exits 0."""
    return 1 if only_outdated and shown else 0


def cmd_installed(args: argparse.Namespace) -> int:
    return _records(args, only_outdated=False)


def cmd_outdated(args: argparse.Namespace) -> int:
    return _records(args, only_outdated=True)


def installed_table(rows: Sequence[Sequence[str]], columns: Optional[int]) -> str:
    """INSTALLED AS, ID, COMMIT, STATE; when that does not fit ``columns``, each id goes
    whole under its row (an id squeezed into a narrow column took a line per ten
    characters, cut mid-word); when even the row without its id does not fit, each item
    is a block: where, then commit and state, then the id."""
    headers = ["INSTALLED AS", "ID", "COMMIT", "STATE"]
    full = table(rows, headers)
    if columns is None or max(len(line) for line in full.split("\n")) <= columns:
        return full
    narrow = table([[r[0], r[2], r[3]] for r in rows], ["INSTALLED AS", "COMMIT", "STATE"])
    lines = narrow.split("\n")
    out_lines: List[str] = []
    if max(len(line) for line in lines) <= columns:
        out_lines += [lines[0], "    ID"]
        for line, row in zip(lines[1:], rows):
            out_lines += [line, *id_lines(printable(row[1]), columns)]
        return "\n".join(out_lines)
    out_lines += ["INSTALLED AS", "    COMMIT  STATE", "    ID"]
    for row in rows:
        out_lines += [
            *id_lines(printable(row[0]), columns, ""),
            f"    {printable(row[2])}  {printable(row[3])}",
            *id_lines(printable(row[1]), columns),
        ]
    return "\n".join(out_lines)
