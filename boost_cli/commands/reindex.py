"""`boost reindex`: build or refresh the BM25 index and, with --dense, the vector store
(saying first what text leaves the machine)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Sequence

from boost_cli.commands.render import (
    Status,
    advise,
    duration,
    emit_json,
    err,
    note,
    out,
    progress,
    quiet,
    say,
)
from boost_cli.core import indexing, registry
from boost_cli.core.enrich.prompt import PROMPT_VERSION
from boost_cli.core.errors import UsageError
from boost_cli.core.models import TapSnapshot
from boost_cli.core.text import printable

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core.index import TapSource


def cmd_reindex(args: argparse.Namespace) -> int:
    taps = registry.require_taps(args.tap)
    t0 = time.perf_counter()
    enriched = _enrich(args) if args.enrich else None
    with Status() as line, indexing.steady_sources() as sources:  # no catalog read here
        line.show(f"  indexing · reading {len(taps)} tap{'' if len(taps) == 1 else 's'}")
        left = _left_label(args, sources)
        line.show(
            f"  indexing 0/{len(left.names)} · {left(0, 0, '')}"
            if left.names
            else "  indexing · checking for changes"
        )
        report = indexing.reindex(
            sources,
            force=args.force,
            force_taps=args.tap,
            progress=progress("indexing", line, left),
            workers=args.workers,
        )
        result: Dict[str, Any] = {
            "bm25": report.to_dict(),
            "scan_seconds": round(report.seconds, 3),
        }
        if enriched is not None:
            result["enrich"] = enriched
        line.clear()
        synced = None
        if args.dense:
            result["dense"] = _dense(args, registry.snapshots(), line)
        else:
            # An existing vector store follows the taps like the index (`sync_dense`).
            synced = indexing.sync_dense(progress=progress("embedding", line))
            if synced is not None:
                result["dense_sync"] = synced.to_dict()
    total = time.perf_counter() - t0
    result["seconds"] = round(total, 3)
    if args.json:
        emit_json(result)
        return 0
    r = report
    say(  # wrapped at word boundaries to the terminal (a terminal's own wrap cuts words)
        f"Indexed {r.taps_total} taps ({len(r.built)} rebuilt, {len(r.reused)} unchanged"
        f"{', ' + str(len(r.removed)) + ' removed' if r.removed else ''}): "
        f"{r.entries} entries, {r.chunks} chunks, {r.terms} terms, {r.bytes / 1e6:.1f} MB in {total:.2f} s",
        indent="  ",
    )
    if enriched is not None:
        for text in _enrich_lines(enriched):
            say(text, indent="  ")
    if "dense" in result:
        say(_dense_line(result["dense"]), indent="  ")
        why = result["dense"].get("backend_note")
        if why:  # the exact scan gives the same results: a hint, not a problem
            advise("sqlite", lambda: f"note: {why}")
    if synced is not None:
        if synced.changed:
            out(synced.summary())
        pending = synced.pending_note()
        if pending:
            note(f"note: {printable(pending)}")
    return 0


class _Left:
    """The progress label of an index build: the taps still to do, never one that is done.

    The build reports each tap as it finishes; the taps it will redo are those forced or
    whose commit the index does not hold yet, largest first (the order the build starts
    them). Should the build report another count (a format change redoes every tap), the
    label shows the counts alone rather than guess."""

    def __init__(self, names: List[str]) -> None:
        self.names = names
        self.finished: set = set()

    def __call__(self, done: int, total: int, name: str) -> str:
        if name:
            self.finished.add(name)
        if total and total != len(self.names):
            return "merging" if done >= total else ""
        left = [n for n in self.names if n not in self.finished]
        if not left:
            return "merging"
        more = f", +{len(left) - 2} more" if len(left) > 2 else ""
        return "left: " + ", ".join(left[:2]) + more


def _left_label(args: argparse.Namespace, sources: Sequence[TapSource]) -> _Left:
    commits = {} if args.force else indexing.indexed_commits()
    order = sorted(sources, key=lambda s: (-s.entries, s.name))
    return _Left(
        [
            s.name
            for s in order
            if args.force or s.name in args.tap or commits.get(s.name) != s.commit
        ]
    )


def _dense(args: argparse.Namespace, snaps: Sequence[TapSnapshot], line: Status) -> Dict[str, Any]:
    from boost_cli.core import dense

    embedder, unit = indexing.dense_settings(args.unit)
    if embedder.is_remote:
        where, n_texts, n_chars = dense.egress_summary(snaps, embedder, unit)
        if n_texts:
            err(
                f"boost will send {n_texts} texts ({n_chars:,} characters of tapped skill files) to {where} to embed them."
            )
            if not args.yes and sys.stdin.isatty():
                answer = input("Continue? [y/N] ").strip().lower()
                if answer not in ("y", "yes"):
                    raise UsageError(
                        "dense indexing cancelled", "rerun with --yes to skip the question"
                    )
    report = indexing.build_dense(
        snaps, embedder, unit, force=args.force, progress=progress("embedding", line)
    )
    d: Dict[str, Any] = report.to_dict()
    # Where the texts went, for the report's words: a model in this process, a server on
    # this machine, or a provider elsewhere.
    d["where"] = (
        "in process" if embedder.spec.in_process else "remote" if embedder.is_remote else "local"
    )
    backend, note = dense.backend_status()
    if backend != "sqlite-vec":
        d["backend_note"] = note
    return d


def _dense_line(d: Dict[str, Any]) -> str:
    if d.get("error"):
        return f"Dense index not built: {d['error']}"
    went = {
        "in process": "embedded in process",
        "local": f"sent to {d.get('provider')} on this machine",
    }.get(str(d.get("where")), "sent to the provider")
    return (
        f"Dense index ({d.get('provider')}/{d.get('model')}, {d.get('unit')} vectors, {d.get('backend')} store): "
        f"{d.get('texts')} texts, {d.get('sent')} {went} (the rest from the cache), "
        f"{d.get('seconds', 0):.1f} s"
    )


def _enrich(args: argparse.Namespace) -> Dict[str, Any]:
    """`--enrich`: ask the LLM for what the store lacks (consent, preview, question
    first), writing each answered batch as it arrives; the index build that follows
    picks the new enrichments up."""
    from boost_cli.core.enrich import run, store  # an LLM client: only with --enrich

    client = run.client_for_enrichment()
    with indexing.steady_snapshots() as snaps:
        pairs = run.items_and_files(snaps)
    db = store.open_store(create=True)
    assert db is not None
    with db:
        db.put_files((sha, it.digest) for it, sha in pairs)
        todo = run.plan([it for it, _ in pairs], db.done(PROMPT_VERSION, client.model))
        summary: Dict[str, Any] = {
            "model": client.model,
            "endpoint": client.endpoint,
            "prompt_version": PROMPT_VERSION,
            "texts": todo.distinct,
            "cached": todo.cached,
            "to_send": todo.texts,
            "calls_planned": len(todo.batches),
            "input_tokens_est": todo.input_tokens,
            "output_tokens_est": todo.output_tokens,
        }
        if not todo.batches:
            return {**summary, "run": run.Report().to_dict()}
        run.check_consent(client, args.allow_egress)
        err(printable(run.preview(todo, client)))
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    "enrichment not confirmed (no terminal to ask on)",
                    "rerun with --yes to send without the question",
                )
            if input("Continue? [y/N] ").strip().lower() not in ("y", "yes"):
                raise UsageError("enrichment cancelled", "rerun with --yes to skip the question")
        try:
            report = run.run(client, db, todo.batches, progress=_enrich_progress(todo.texts))
        except KeyboardInterrupt:
            err(
                "interrupted: every finished batch is kept — rerun 'boost reindex --enrich' to go on"
            )
            raise
    return {**summary, "run": report.to_dict()}


def _enrich_progress(total: int) -> Callable[[int, int], None]:
    """Progress on stderr: texts done, texts/s and the time left; redrawn on a terminal,
    a line per tenth of the work otherwise (none with -q)."""
    line = Status()
    t0 = time.monotonic()
    shown = [0]

    def report(done: int, total: int) -> None:
        spent = max(time.monotonic() - t0, 1e-6)
        rate = done / spent
        left = f" · {duration((total - done) / rate)} left" if rate > 0 and done < total else ""
        text = f"  enriching {done}/{total} texts · {rate:.1f} texts/s{left}"
        if line.active:
            line.show(text)
            if done >= total:
                line.clear()
        elif not quiet() and (done >= total or done - shown[0] >= max(total // 10, 1)):
            shown[0] = done
            err(text)

    return report


def _enrich_lines(d: Dict[str, Any]) -> List[str]:
    r = d["run"]
    lines = [
        f"Enrichment ({d['model']}, prompt v{d['prompt_version']}): {d['texts']} texts, "
        f"{d['cached']} already enriched, {r['enriched']} enriched now in {r['answered']} "
        f"batches ({r['calls']} calls, {r['seconds']:.1f} s)"
    ]
    if r["skipped"]:
        lines.append(
            f"{r['skipped']} batch{'' if r['skipped'] == 1 else 'es'} skipped after a retry "
            "— rerun 'boost reindex --enrich' to ask again: "
            + "; ".join(printable(f) for f in r["failures"][:3])
        )
    if r["stopped"]:
        lines.append(
            f"stopped early, {r['not_asked']} batches not asked: {printable(r['stopped'])}"
        )
    if r["dropped"]:
        lines.append(
            "dropped from the answers: "
            + ", ".join(f"{n} {printable(why)}" for why, n in r["dropped"].items())
        )
    return lines
