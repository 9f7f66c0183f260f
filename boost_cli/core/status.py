"""What boost can do on this machine right now: the state `boost doctor` reports (versions,
home and disk use, config, taps, index, dense store, LLM, gh) and the per-tap index freshness
`boost_list_taps` shows, collected once for both."""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from boost_cli import __version__
from boost_cli.core import dense, embed, index, llm, paths, registry, retrieval, search, settings
from boost_cli.core.enrich import lookup
from boost_cli.core.errors import BoostError, ConfigError, IndexUnavailable, UsageError, os_fix
from boost_cli.core.llm import breaker, providers


@dataclass(frozen=True)
class IndexState:
    """The BM25 index as the taps see it: which commit each tap is indexed at, or why the
    index cannot be read."""

    exists: bool
    commits: Dict[str, str]
    generated: str = ""
    damaged: Optional[IndexUnavailable] = None


def index_state(engines: Optional[retrieval.Engines] = None, verify: bool = False) -> IndexState:
    """The index's state; a damaged index is reported, never raised. ``verify``: every
    file's size and CRC32 checked against the manifest too (reads the whole index: a
    query checks only what it reads, and not the CRC of a posting list it slices)."""
    try:
        reader = (engines or retrieval.Engines()).index_reader()
        if reader is not None and verify:
            reader.verify()
    except IndexUnavailable as exc:
        return IndexState(True, {}, damaged=exc)
    if reader is None:
        return IndexState(False, {})
    return IndexState(True, dict(reader.commits), reader.generated)


def tap_rows(taps: Sequence[registry.TapInfo], state: IndexState) -> List[Dict[str, Any]]:
    """Each tap's record plus ``index`` (indexed, stale index, not indexed or unreadable)
    and ``clone`` (whether its clone is there)."""
    rows = []
    for t in taps:
        if state.damaged is not None:
            fresh = "unreadable index"
        else:
            fresh = retrieval.tap_state(t.commit, state.commits.get(t.name))
        rows.append({**t.to_dict(), "index": fresh, "clone": t.root.is_dir()})
    return rows


def doctor(engines: Optional[retrieval.Engines] = None) -> Dict[str, Any]:
    """Everything `boost doctor` reports, with a ``fixes`` list of what to do about it.
    An unreadable config is reported (``config``) and a fix given, never raised."""
    home = paths.boost_home()
    report: Dict[str, Any] = {
        "boost": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "home": str(home),
        "disk": disk_use(home),
    }
    fixes: List[str] = []
    problem = unwritable(home)
    report["writable"] = problem is None
    if problem is not None:
        report["write_problem"] = str(problem)
        fixes.append(f"home not writable, so tap, update, reindex and untap fail: {problem}")
    try:
        taps = registry.list_taps()
        report["config"] = {"status": "ok"}
    except ConfigError as exc:
        taps = []
        report["config"] = {"status": "unreadable", "reason": str(exc)}
        fixes.append(f"config unreadable: {exc}")
    report["taps"] = [
        {"name": t.name, "commit": t.commit, "counts": t.counts, "clone": t.root.is_dir()}
        for t in taps
    ]
    if not taps and report["config"]["status"] == "ok":
        fixes.append("no taps: run 'boost tap --defaults'")
    missing = [t.name for t in taps if not t.root.is_dir()]
    if missing:
        fixes.append(
            f"clones missing for {', '.join(missing)}: 'boost untap NAME' then 'boost tap SOURCE'"
        )
    left = registry.leftovers() if report["config"]["status"] == "ok" else []
    report["leftovers"] = left
    fixes.extend(left)
    engines = engines or retrieval.Engines()
    state = index_state(engines, verify=True)
    if state.damaged is not None:
        report["index"] = {"status": "damaged", "reason": str(state.damaged)}
        fixes.append("index damaged: run 'boost reindex --force'")
    elif not state.exists:
        report["index"] = {"status": "missing"}
        if taps:
            fixes.append("no search index: run 'boost reindex'")
    else:
        stale = sorted(t.name for t in taps if state.commits.get(t.name) != t.commit)
        report["index"] = {
            "status": "stale" if stale else "fresh",
            "generated": state.generated,
            "stale_taps": stale,
        }
        if stale:
            fixes.append("index out of date: run 'boost reindex'")
        # The plain path's widening (`related`): a table missing, damaged or of another
        # index is skipped by a search without a word, and `boost reindex` rebuilds it.
        reader = engines.index_reader()
        related_ok = reader is not None and engines.related_terms(reader) is not None
        report["index"]["related_terms"] = related_ok
        if not related_ok and taps:
            fixes.append(
                "related-terms table missing or damaged (searches are not widened with "
                "terms learnt from the taps): run 'boost reindex'"
            )
    manifest = index.previous_manifest(paths.index_dir()) if state.exists else None
    indexed_key = (manifest or {}).get("params", {}).get("enrich_key") if manifest else None
    report["enrich"], enrich_fixes = lookup.status(indexed_key)
    fixes.extend(enrich_fixes)
    report["dense"] = _dense(engines)
    if report["dense"].get("damaged"):
        fixes.append(f"vector store damaged: {report['dense']['fix']}")
    if report["dense"]["info"].get("read_only"):
        fixes.append(retrieval.READ_ONLY_NOTE.format(path=paths.vectors_path()))
    held = report["dense"]["info"].get("taps")
    if report["dense"]["ready"] and held is not None:
        dense_stale = retrieval.stale_taps({t.name: t.commit for t in taps}, held)
        report["dense"]["stale_taps"] = dense_stale
        if dense_stale:
            fixes.append("vector store out of date: run 'boost reindex --dense'")
    try:
        provider = llm.describe()
    except UsageError as exc:  # an unknown name in BOOST_LLM_PROVIDER or llm.provider
        provider = {"backend": None, "problem": str(exc)}
        fixes.append(str(exc))
    report["llm"] = {
        "anthropic_api_key": bool(os.environ.get("ANTHROPIC_API_KEY")),
        "claude_cli": shutil.which("claude") is not None,
        "provider": provider,
        "off": settings.llm_off(),
        "failing": {
            b: {**rec, "text": breaker.describe(b, rec)} for b, rec in breaker.state().items()
        },
    }
    for backend in report["llm"]["failing"]:
        found = providers.BY_NAME.get(backend)
        if found is not None:
            fixes.append(found.fix)
    if provider.get("backend") and provider.get("problem") and not report["llm"]["off"]:
        fixes.append(f"the LLM cannot be used: {provider['problem']}")
    report["gh_cli"] = shutil.which("gh") is not None
    # Search by meaning needs an LLM (expansion, rerank) or a vector store; without either
    # a search ranks by the task's words alone. A hint, not a fix: keywords work.
    by_meaning = [
        *(["llm"] if provider.get("backend") and not provider.get("problem") else []),
        *(["dense"] if report["dense"]["ready"] else []),
    ]
    report["semantic"] = {
        "by": by_meaning,
        "hint": None if by_meaning or report["dense"]["exists"] else search.semantic_fix(),
    }
    report["fixes"] = fixes
    return report


def unwritable(home: Path) -> Optional[BoostError]:
    """Why boost could not write under ``home``, or None. Tried, not inferred from the mode
    bits (root, ACLs, a read-only mount): a file is created and removed in the home and in
    each of its folders boost writes into (the nearest existing parent when the home is not
    created yet); the files boost writes in place (locks, the vector store) are checked
    for write access."""
    folders = [
        home,
        paths.cache_dir(),
        paths.catalog_cache_dir(),
        paths.index_dir(),
        paths.cache_dir() / "expansions",
        paths.repos_dir(),
        paths.locks_dir(),
    ]
    there = [f for f in folders if f.is_dir()]
    if not there:
        parent = home
        while not parent.is_dir() and parent != parent.parent:
            parent = parent.parent
        there = [parent]
    for folder in there:
        try:
            fd, probe = tempfile.mkstemp(prefix=".boost-doctor-", dir=folder)
        except OSError as exc:
            return BoostError(f"cannot write in {folder}: {exc.strerror or exc}", os_fix(exc))
        os.close(fd)
        os.unlink(probe)
    in_place = [paths.vectors_path(), *sorted(paths.locks_dir().glob("*.lock"))]
    for path in in_place:
        if path.is_file() and not os.access(path, os.W_OK):
            return BoostError(
                f"cannot write {path}: it is read-only",
                "make it writable for you, or point BOOST_HOME at a folder you own",
            )
    return None


def _dense(engines: Optional[retrieval.Engines]) -> Dict[str, Any]:
    backend, note = dense.backend_status()
    try:
        index = (engines or retrieval.Engines()).dense_index()
        st = index.status(verify=True)
    except ConfigError as exc:  # the embed settings live in the unreadable config
        return {
            "ready": False,
            "exists": False,
            "reason": str(exc),
            "fix": None,
            "info": {},
            "backend": backend,
            "backend_note": note,
        }
    return {
        "ready": st.ready,
        "exists": st.exists,
        "reason": st.reason,
        "fix": st.fix,
        "info": st.info,
        "damaged": st.damaged,
        "backend": backend,
        "backend_note": note,
        "embedder": embed.describe(index.config) if index.config else None,
        "store_bytes": dense.store_bytes(index.path),
    }


def disk_use(home: Path) -> Dict[str, int]:
    """Bytes under ``home`` in total and per top-level folder or file (symlinks not
    followed; files that vanish meanwhile are skipped); empty when there is no home yet."""
    parts: Dict[str, int] = {}
    if not home.is_dir():
        return {}
    for child in sorted(home.iterdir()):
        parts[child.name] = _size(child)
    return {"total": sum(parts.values()), **parts}


def _size(path: Path) -> int:
    try:
        if path.is_symlink() or not path.is_dir():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue  # removed while we walked
    return total
