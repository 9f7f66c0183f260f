"""Taps: registries cloned under ``repos/`` and recorded in the config.

`add`, `remove` and `update` change the clones and the config; `snapshots()` gives the
engines every tap at its current commit with its scanned entries.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from boost_cli.core import config, paths
from boost_cli.core.errors import BoostError, NoTapsError, NotFoundError, UsageError
from boost_cli.core.models import TapSnapshot

if TYPE_CHECKING:  # pragma: no cover
    from boost_cli.core import catalog


@dataclass(frozen=True)
class TapInfo:
    """One tap as recorded in the config."""

    name: str
    source: str
    url: str
    commit: str
    counts: Dict[str, int] = field(default_factory=dict, compare=False, hash=False)
    added: str = ""
    updated: str = ""
    warnings: int = 0

    @property
    def root(self) -> Path:
        return paths.tap_dir(self.name)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "url": self.url,
            "commit": self.commit,
            "counts": dict(self.counts),
            "added": self.added,
            "updated": self.updated,
            "warnings": self.warnings,
        }


@dataclass(frozen=True)
class UpdateResult:
    name: str
    old_commit: str
    new_commit: str
    old_counts: Dict[str, int]
    new_counts: Dict[str, int]
    error: Optional[str] = None


def _now() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )


def _info(name: str, d: Dict[str, Any]) -> TapInfo:
    return TapInfo(
        name=name,
        source=str(d.get("source", "")),
        url=str(d.get("url", "")),
        commit=str(d.get("commit", "")),
        counts={k: int(v) for k, v in dict(d.get("counts", {})).items()},
        added=str(d.get("added", "")),
        updated=str(d.get("updated", "")),
        warnings=int(d.get("warnings", 0)),
    )


def list_taps() -> List[TapInfo]:
    """Every tap, sorted by name."""
    cfg = config.load()
    return [_info(n, d) for n, d in sorted(cfg["taps"].items())]


def require_taps(names: Sequence[str] = ()) -> List[TapInfo]:
    """Every tap; raises NoTapsError when there is none and NotFoundError for an unknown name."""
    taps = list_taps()
    if not taps:
        raise NoTapsError()
    known = {t.name for t in taps}
    for name in names:
        if name not in known:
            raise NotFoundError(
                f"no tap named {name!r}", "see 'boost taps' for the tapped registries"
            )
    return taps


def get_tap(name: str) -> TapInfo:
    cfg = config.load()
    if name not in cfg["taps"]:
        raise NotFoundError(f"no tap named {name!r}", "see 'boost taps' for the tapped registries")
    return _info(name, cfg["taps"][name])


def add(
    source: str, name: Optional[str] = None, cwd: Optional[Path] = None
) -> Tuple[TapInfo, catalog.ScanResult]:
    """Clone ``source`` as a new tap, scan it and record it. Raises on any failure, leaving nothing behind."""
    from boost_cli.core import catalog, gitutil

    src = gitutil.parse_source(source, cwd)
    tap_name = gitutil.safe_name(name) if name else src.default_name
    if name and tap_name != name:
        raise UsageError(f"invalid tap name {name!r}", "use letters, digits, '.', '_' and '-' only")
    dest = paths.tap_dir(tap_name)
    cfg = config.load()
    if tap_name in cfg["taps"] or dest.exists():
        raise UsageError(
            f"a tap named {tap_name!r} already exists",
            f"run 'boost update {tap_name}', or pass --name to tap it under another name",
        )
    paths.repos_dir().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".clone-{tap_name}-", dir=str(paths.repos_dir())))
    try:
        gitutil.clone(src.url, tmp / "repo")
        commit = gitutil.head_commit(tmp / "repo")
        (tmp / "repo").rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        scan = catalog.load_tap(tap_name, dest, commit)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    now = _now()
    cfg = config.load()
    cfg["taps"][tap_name] = {
        "source": source,
        "url": src.url,
        "commit": commit,
        "counts": scan.counts(),
        "added": now,
        "updated": now,
        "warnings": len(scan.warnings),
    }
    config.save(cfg)
    return _info(tap_name, cfg["taps"][tap_name]), scan


def remove(name: str) -> TapInfo:
    """Forget a tap: its clone, its cached scan and its config record."""
    from boost_cli.core import catalog

    info = get_tap(name)
    shutil.rmtree(paths.tap_dir(name), ignore_errors=True)
    catalog.drop_cache(name)
    cfg = config.load()
    cfg["taps"].pop(name, None)
    config.save(cfg)
    return info


def update(names: Sequence[str] = ()) -> List[UpdateResult]:
    """Move each named tap (default: all) to its remote head; one failure does not stop the rest."""
    from boost_cli.core import catalog, gitutil

    taps = [get_tap(n) for n in names] if names else list_taps()
    results: List[UpdateResult] = []
    for tap in taps:
        try:
            new = gitutil.update(tap.root)
            scan = catalog.load_tap(tap.name, tap.root, new)
        except BoostError as exc:
            results.append(
                UpdateResult(tap.name, tap.commit, tap.commit, tap.counts, tap.counts, str(exc))
            )
            continue
        cfg = config.load()
        rec = cfg["taps"].setdefault(tap.name, tap.to_dict())
        rec.update(
            {
                "commit": new,
                "counts": scan.counts(),
                "updated": _now(),
                "warnings": len(scan.warnings),
            }
        )
        config.save(cfg)
        results.append(UpdateResult(tap.name, tap.commit, new, tap.counts, scan.counts()))
    return results


def scan(tap: TapInfo) -> catalog.ScanResult:
    """The (cached) catalog scan of ``tap`` at its recorded commit."""
    from boost_cli.core import catalog

    return catalog.load_tap(tap.name, tap.root, tap.commit)


def snapshots(names: Iterable[str] = ()) -> List[TapSnapshot]:
    """Every tap (or the named ones) at its commit with its entries, for the engines."""
    return [TapSnapshot(t.name, t.commit, root, scan(t).entries) for t, root in present(names)]


def present(names: Iterable[str] = ()) -> List[Tuple[TapInfo, Path]]:
    """Every tap (or the named ones) whose clone is there, with its folder: the config
    alone, no catalog. A vanished clone is left out ('boost doctor' reports it)."""
    wanted = set(names)
    out = []
    for tap in list_taps():
        if wanted and tap.name not in wanted:
            continue
        root = tap.root  # resolved once: it checks the name against repos/
        if root.is_dir():
            out.append((tap, root))
    return out


def scan_version() -> str:
    """What makes a tap's entries from its files at a commit: the catalog scan's version
    (its cache is keyed by commit and this version, on the same assumption)."""
    from boost_cli.core import catalog

    return f"catalog/{catalog.CACHE_VERSION}"


def load_snapshot(name: str, commit: str, root: str) -> TapSnapshot:
    """One tap at ``commit`` with its (cached) entries. Module-level, so an index build can
    hand it to a worker process to call there (`index.TapSource.load`)."""
    from boost_cli.core import catalog

    folder = Path(root)
    return TapSnapshot(name, commit, folder, catalog.load_tap(name, folder, commit).entries)


# --------------------------------------------------------------------------- bundled catalog


def bundled_registries() -> List[Dict[str, Any]]:
    """The curated list of public registries shipped in ``boost_cli/data/registries.json``."""
    from importlib import resources

    text = resources.files("boost_cli").joinpath("data/registries.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return list(data.get("registries", []))


def select_registries(
    *,
    kind: Optional[str] = None,
    category: Optional[str] = None,
    limit: Optional[int] = None,
    defaults: bool = False,
) -> List[Dict[str, Any]]:
    """Bundled registries worth tapping: never index-only ones; filtered; largest first."""
    regs = [r for r in bundled_registries() if not r.get("index_only")]
    if defaults:
        regs = [r for r in regs if r.get("default")]
    if kind:
        regs = [r for r in regs if r.get("type") == kind]
    if category:
        regs = [r for r in regs if str(r.get("category", "")).lower() == category.lower()]
    regs.sort(key=lambda r: (-int(r.get("est_items", 0)), r["name"]))
    return regs[:limit] if limit else regs


def source_url(tap: TapInfo, path: str) -> str:
    """A browsable URL for ``path`` in ``tap`` (GitHub blob at the commit), else the file:// path."""
    url = tap.url
    gh = None
    if url.startswith("https://github.com/"):
        gh = url[len("https://github.com/") :]
    elif url.startswith("git@github.com:"):
        gh = url[len("git@github.com:") :]
    if gh:
        gh = gh.rstrip("/")
        gh = gh[:-4] if gh.endswith(".git") else gh
        return f"https://github.com/{gh}/blob/{tap.commit or 'HEAD'}/{path}"
    return (tap.root / path).resolve().as_uri()
