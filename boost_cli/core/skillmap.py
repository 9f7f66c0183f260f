"""The taps as the MCP Skills extension (``io.modelcontextprotocol/skills``) sees them:
which Agent Skills boost serves under ``skill://`` URIs, the manifest of each (every file
with its ``sha256:`` digest and byte size), and the safe way back from a URI to bytes.

A skill ``<tap>/<folder>/SKILL.md`` is served as ``skill://<tap>/<folder>/SKILL.md`` and
its files under the same prefix, when the extension's rules hold (`REASONS` names each
refusal): the folder's last segment equals the frontmatter ``name``, which follows the
Agent Skills naming rules; ``description`` is there; the frontmatter parses strictly (a
host re-parses it and compares field by field); every folder segment is a plain URI
segment; and the skill stays within 512 files and 16 MiB. A refused skill stays
searchable and readable through ``boost_get_skill``; it only gets no URI. A skill's files
are its SKILL.md and exactly the files beside it the trust scan reads
(`trust_scan.coverage`): not a nested skill's, not one past the scan's limits, not one in
a folder the scan skips, so what a host loads is what the findings cover.

Safety by construction: a URI is looked up, never parsed into a path. Only the URIs of
the manifests exist, so ``..``, ``%2e%2e``, absolute paths, ``.git`` and symlinks out of
the folder are simply unknown. A read re-checks the file on disk (no symlinked folder on
the way, a symlinked file only into the skill's own folder) and its size and digest
against the manifest, so a clone changed since the scan is refused, not served.

Digests and sizes are computed once per tap commit and cached beside the catalog scan
(``cache/skills/<tap>.json``); `SkillMap` holds the served taps in memory for a server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence, Tuple
from urllib.parse import quote

from boost_cli.core import atomic, paths, registry, trust_scan
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.models import Entry, TapSnapshot
from boost_cli.core.text import printable

log = logging.getLogger(__name__)

SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
MAX_RESOURCES = 512  # the extension's per-skill limits
MAX_TOTAL_BYTES = 16 * 1024 * 1024
NAME_MAX = 64  # Agent Skills: name 1-64 of a-z, 0-9 and '-', description 1-1024 characters
DESCRIPTION_MAX = 1024
DIRECTORY_MIME = "inode/directory"
CACHE_VERSION = 4

#: Why a skill is not served under the extension, by code (`Refused.reason`).
REASONS: Mapping[str, str] = {
    "name-mismatch": "its folder is not named after its frontmatter name",
    "bad-name": "its name breaks the Agent Skills naming rules (1-64 of a-z, 0-9, '-')",
    "no-name": "its frontmatter has no name",
    "no-description": "its frontmatter has no description (or more than 1024 characters)",
    "frontmatter": "its frontmatter does not parse as strict YAML",
    "bad-path": "a folder on its path is not a plain URI segment",
    "too-many-files": f"it has more than {MAX_RESOURCES} files",
    "too-large": "its files add up to more than 16 MiB",
    "unscanned": "the trust scan does not read all its files (at most 200 beside SKILL.md, "
    "1 MB each, 8 MB in all)",
}

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# `key: value` with a plain (unquoted, not block or flow) value, for `yaml_rejects`.
_ENTRY = re.compile(r"^( *)(?:-\s+)?[A-Za-z0-9_][\w.\-/]*:(?:\s+(.*))?$")
_NOT_PLAIN = tuple("'\"|>[{&*!%@`")
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
_SKIP_DIRS = frozenset({".git", "node_modules", ".hg", ".svn", "__pycache__"})
_MIME = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".js": "text/javascript",
    ".ts": "text/typescript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".html": "text/html",
    ".css": "text/css",
    ".csv": "text/csv",
    ".xml": "application/xml",
    ".toml": "application/toml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
}


def name_problem(name: Any) -> Optional[str]:
    """The refusal code a frontmatter ``name`` earns, or None when it is a valid name."""
    if not isinstance(name, str) or not name:
        return "no-name"
    if len(name) > NAME_MAX or not _NAME.fullmatch(name):
        return "bad-name"
    return None


def mime_type(rel: str) -> str:
    """The MIME type a file is served with, by its extension."""
    return _MIME.get(PurePosixPath(rel).suffix.lower(), "application/octet-stream")


def file_uri(tap: str, folder: str, rel: str) -> str:
    """The URI of file ``rel`` (relative to the skill folder ``folder`` of ``tap``); file
    names are percent-encoded, so every URI is plain ASCII."""
    prefix = f"{SCHEME}{tap}/{folder}" if folder else f"{SCHEME}{tap}"
    return f"{prefix}/{quote(rel, safe='/-._~')}"


def skill_dir_uri(tap: str, folder: str) -> str:
    return f"{SCHEME}{tap}/{folder}" if folder else f"{SCHEME}{tap}"


@dataclass(frozen=True)
class SkillFile:
    """One file of a served skill: its URI, its path in the tap, digest and size."""

    uri: str
    rel: str  # relative to the tap root
    digest: str  # "sha256:<64 hex>"
    size: int

    @property
    def name(self) -> str:
        return PurePosixPath(self.rel).name

    @property
    def mime(self) -> str:
        return mime_type(self.rel)


@dataclass(frozen=True)
class Served:
    """A skill served under the extension: its ``SKILL.md`` URI, where it is, its
    frontmatter (as parsed, verbatim) and its complete manifest."""

    uri: str
    tap: str
    path: str  # the SKILL.md, relative to the tap root
    folder: str  # the skill's folder, relative to the tap root
    frontmatter: Mapping[str, Any]
    files: Tuple[SkillFile, ...]

    def entry(self) -> Dict[str, Any]:
        """The extension's ``Skill`` entry (`skillserve` adds the trust flags' ``_meta``)."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.frontmatter),
            "resources": [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in self.files],
        }

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def skill_file(self) -> SkillFile:
        """The manifest entry of the SKILL.md itself."""
        return next(f for f in self.files if f.uri == self.uri)


@dataclass(frozen=True)
class Refused:
    """A skill boost does not serve under the extension, and why (a `REASONS` code)."""

    tap: str
    path: str
    reason: str
    detail: str = ""

    def message(self) -> str:
        """The reason in words, on one line with every control character escaped: the
        detail may quote the registry's own text."""
        why = REASONS.get(self.reason, self.reason)
        return printable(f"{why}{f' ({self.detail})' if self.detail else ''}")


@dataclass(frozen=True)
class TapSkills:
    """The skills of one tap at one commit, served and refused."""

    tap: str
    commit: str
    root: Path
    served: Tuple[Served, ...]
    refused: Tuple[Refused, ...]


# --------------------------------------------------------------------------- building


def _inside_file(folder_real: str, path: str) -> bool:
    """Whether ``path`` resolves to a regular file inside ``folder_real`` (not in a .git)."""
    real = os.path.realpath(path)
    if not real.startswith(folder_real + os.sep) or not os.path.isfile(real):
        return False
    return not any(p.casefold() == ".git" for p in Path(real[len(folder_real) + 1 :]).parts)


def _digest(path: Path) -> Tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return f"sha256:{h.hexdigest()}", size


def yaml_rejects(raw: str) -> Optional[str]:
    """A line of frontmatter ``raw`` that YAML parsers refuse although boost's lenient
    reader takes it: a plain value holding ': ' (``description: Use when: x``). A host
    verifying the skill parses it with a YAML library, so such a skill cannot pass."""
    block: Optional[int] = None  # the indent of a key whose block scalar is being read
    for number, line in enumerate(raw.splitlines(), start=2):
        indent = len(line) - len(line.lstrip(" "))
        if block is not None:
            if not line.strip() or indent > block:
                continue  # inside a block scalar: any text goes
            block = None
        m = _ENTRY.match(line)
        if m is None or not m.group(2):
            continue
        value = m.group(2).strip()
        if value.startswith(("|", ">")):
            block = len(m.group(1))
            continue
        if value.startswith(_NOT_PLAIN):
            continue
        value = value.split(" #", 1)[0].rstrip()
        if ": " in value or value.endswith(":"):
            return f"line {number}: a plain value holds ': ' (quote it)"
    return None


def judge(entry: Entry, text: str) -> Tuple[Optional[str], str, Dict[str, Any]]:
    """Whether a skill's name, description, path and frontmatter allow it under the
    extension: (refusal code or None, detail, the strict frontmatter)."""
    from boost_cli.core import frontmatter

    try:
        meta, _body = frontmatter.parse(text)
    except BoostError as exc:
        return "frontmatter", str(exc).split(" — ")[0][:200], {}
    rejected = yaml_rejects(frontmatter.split(text)[0] or "")
    if rejected:
        return "frontmatter", rejected, meta
    name = meta.get("name")
    problem = name_problem(name)
    if problem:
        return problem, "" if problem == "no-name" else repr(name)[:80], meta
    desc = meta.get("description")
    if not isinstance(desc, str) or not desc.strip() or len(desc) > DESCRIPTION_MAX:
        return "no-description", "", meta
    parts = entry.rel_dir.split("/") if entry.rel_dir else []
    last = parts[-1] if parts else entry.tap
    if last != name:
        return "name-mismatch", f"folder {last!r}, name {name!r}", meta
    if not all(_SEGMENT.fullmatch(p) for p in parts):
        return "bad-path", entry.rel_dir[:120], meta
    return None, "", meta


def build(snapshot: TapSnapshot) -> TapSkills:
    """The served and refused skills of one tap (reads and hashes every served file)."""
    from boost_cli.core import catalog  # only when a map is built: a search needs no walk

    served: List[Served] = []
    refused: List[Refused] = []
    for entry in snapshot.entries:
        if entry.kind != "skill" or PurePosixPath(entry.path).name != SKILL_FILE:
            continue
        reason, detail, meta = judge(entry, snapshot.text(entry))
        if reason:
            refused.append(Refused(entry.tap, entry.path, reason, detail))
            continue
        folder = snapshot.root / entry.rel_dir if entry.rel_dir else snapshot.root
        lead = len(entry.rel_dir) + 1 if entry.rel_dir else 0
        every = catalog.tap_files(folder)
        if len(every) > MAX_RESOURCES:
            refused.append(Refused(entry.tap, entry.path, "too-many-files", f"{len(every)} files"))
            continue
        sizes = [(folder / r).stat().st_size for r in every]
        if sum(sizes) > MAX_TOTAL_BYTES:
            mib = sum(sizes) / (1024 * 1024)
            refused.append(Refused(entry.tap, entry.path, "too-large", f"{mib:.1f} MiB"))
            continue
        covered = trust_scan.coverage(snapshot.root, entry)
        if covered.unread:
            rel, why = covered.unread[0]
            detail = f"{rel[lead:]}: {why}" + (
                f" (+{len(covered.unread) - 1} more)" if len(covered.unread) > 1 else ""
            )
            refused.append(Refused(entry.tap, entry.path, "unscanned", detail[:200]))
            continue
        rels = sorted([SKILL_FILE, *(r[lead:] for r in covered.read)])
        files = []
        for rel in rels:
            digest, size = _digest(folder / rel)
            tap_rel = f"{entry.rel_dir}/{rel}" if entry.rel_dir else rel
            files.append(SkillFile(file_uri(entry.tap, entry.rel_dir, rel), tap_rel, digest, size))
        uri = file_uri(entry.tap, entry.rel_dir, SKILL_FILE)
        served.append(Served(uri, entry.tap, entry.path, entry.rel_dir, meta, tuple(files)))
    return TapSkills(snapshot.name, snapshot.commit, snapshot.root, tuple(served), tuple(refused))


# --------------------------------------------------------------------------- cache


def _cache_path(tap: str) -> Path:
    return paths.cache_dir() / "skills" / f"{tap}.json"


def _status_path(tap: str) -> Path:
    """Which skills are served and why the others are not, without the manifests: what
    `boost search --json` reads (a tenth of the size)."""
    return paths.cache_dir() / "skills" / f"{tap}.status.json"


def _key() -> str:
    return f"{CACHE_VERSION}/{registry.scan_version()}"


def store(skills: TapSkills) -> None:
    atomic.write_json(
        _status_path(skills.tap),
        {
            "version": _key(),
            "commit": skills.commit,
            "served": {s.path: s.uri for s in skills.served},
            "refused": [[r.path, r.reason, r.detail] for r in skills.refused],
        },
    )
    atomic.write_json(
        _cache_path(skills.tap),
        {
            "version": _key(),
            "commit": skills.commit,
            "served": [
                {
                    "uri": s.uri,
                    "path": s.path,
                    "folder": s.folder,
                    "frontmatter": dict(s.frontmatter),
                    "files": [[f.uri, f.rel, f.digest, f.size] for f in s.files],
                }
                for s in skills.served
            ],
            "refused": [[r.path, r.reason, r.detail] for r in skills.refused],
        },
    )


def cached(tap: str, commit: str, root: Path) -> Optional[TapSkills]:
    """The cached skills of ``tap`` at ``commit``, or None (no cache, another commit, or
    anything of the wrong shape). What a cache says is checked again at every read."""
    try:
        data = json.loads(_cache_path(tap).read_text(encoding="utf-8"))
        if data.get("version") != _key() or data.get("commit") != commit:
            return None
        served = tuple(
            Served(
                str(s["uri"]),
                tap,
                str(s["path"]),
                str(s["folder"]),
                dict(s["frontmatter"]),
                tuple(SkillFile(str(u), str(r), str(d), int(n)) for u, r, d, n in s["files"]),
            )
            for s in data["served"]
        )
        refused = tuple(Refused(tap, str(p), str(r), str(d)) for p, r, d in data["refused"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return TapSkills(tap, commit, root, served, refused)


def drop_cache(tap: str) -> None:
    """Forget the cached skills of ``tap`` (when it is untapped)."""
    for path in (_cache_path(tap), _status_path(tap)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class Statuses:
    """Served URIs and refusals of some taps, without manifests (`for_entries`)."""

    def __init__(self) -> None:
        self.uris: Dict[Tuple[str, str], str] = {}
        self.refusals: Dict[Tuple[str, str], Refused] = {}

    def add(self, tap: str, data: Mapping[str, Any]) -> None:
        for path, uri in data["served"].items():
            self.uris[(tap, str(path))] = str(uri)
        for path, reason, detail in data["refused"]:
            self.refusals[(tap, str(path))] = Refused(tap, str(path), str(reason), str(detail))

    def uri_of(self, tap: str, path: str) -> Optional[str]:
        return self.uris.get((tap, path))

    def refused_of(self, tap: str, path: str) -> Optional[Refused]:
        return self.refusals.get((tap, path))


def _statuses(tap: registry.TapInfo, root: Path, into: Statuses) -> None:
    try:
        data = json.loads(_status_path(tap.name).read_text(encoding="utf-8"))
        if data.get("version") == _key() and data.get("commit") == tap.commit:
            into.add(tap.name, data)
            return
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # no status file, or a broken one: from the full map (built when missing)
    skills = _tap_skills(tap, root)
    into.add(
        tap.name,
        {
            "served": {s.path: s.uri for s in skills.served},
            "refused": [[r.path, r.reason, r.detail] for r in skills.refused],
        },
    )


def load(snapshot: TapSnapshot) -> TapSkills:
    """The skills of one tap: from the cache for its commit, else built and cached."""
    hit = cached(snapshot.name, snapshot.commit, snapshot.root)
    if hit is not None:
        return hit
    skills = build(snapshot)
    try:
        store(skills)
    except OSError as exc:  # a read-only or full home: the map is still right
        log.debug("cannot cache the skills of %s: %s", snapshot.name, exc)
    return skills


# --------------------------------------------------------------------------- the map


class UriSource(Protocol):
    """What a hit record needs: the URI of a served entry (`SkillMap`, `Statuses`)."""

    def uri_of(self, tap: str, path: str) -> Optional[str]: ...


class SkillMap:
    """Every served skill of some taps, by URI, with their files and folders."""

    def __init__(self, taps: Sequence[TapSkills]) -> None:
        self.taps: Dict[str, TapSkills] = {t.tap: t for t in taps}
        self.skills: Dict[str, Served] = {}
        self.files: Dict[str, Tuple[Served, SkillFile]] = {}
        self.dirs: Dict[str, Dict[str, Optional[SkillFile]]] = {}  # dir uri -> child uri
        self.by_path: Dict[Tuple[str, str], Any] = {}
        self.refused: Dict[str, Refused] = {}  # the URI a refused skill would have had
        for t in taps:
            for r in t.refused:
                self.by_path[(t.tap, r.path)] = r
                folder = r.path.rpartition("/")[0]
                self.refused[file_uri(t.tap, folder, SKILL_FILE)] = r
            for s in t.served:
                self.skills[s.uri] = s
                self.by_path[(t.tap, s.path)] = s
                self._add_files(s)
        self.ordered: List[Served] = sorted(self.skills.values(), key=lambda s: s.uri)

    def _add_files(self, skill: Served) -> None:
        root = skill_dir_uri(skill.tap, skill.folder)
        self.dirs.setdefault(root, {})
        for f in skill.files:
            self.files.setdefault(f.uri, (skill, f))
            parent, _, _ = f.uri.rpartition("/")
            self.dirs.setdefault(parent, {})[f.uri] = f
            while parent != root:  # each folder is a child of the one above it
                above, _, _ = parent.rpartition("/")
                self.dirs.setdefault(above, {})[parent] = None
                parent = above

    def refused_at(self, uri: str) -> Optional[Refused]:
        """The refused skill whose SKILL.md would be at ``uri``, if any."""
        return self.refused.get(uri)

    def uri_of(self, tap: str, path: str) -> Optional[str]:
        """The ``skill://`` URI of the entry at ``path`` in ``tap`` when it is served."""
        found = self.by_path.get((tap, path))
        return found.uri if isinstance(found, Served) else None

    def refused_of(self, tap: str, path: str) -> Optional[Refused]:
        """Why the skill at ``path`` in ``tap`` is not served, when it is not."""
        found = self.by_path.get((tap, path))
        return found if isinstance(found, Refused) else None

    def status(self, tap: str, path: str) -> Any:
        """The `Served` or `Refused` record of the skill at ``path`` in ``tap``; None for
        anything else (a rule, a workflow, a skill not named SKILL.md)."""
        return self.by_path.get((tap, path))

    def counts(self) -> Dict[str, int]:
        """How many skills are served, and refused by reason."""
        out = {"served": len(self.skills)}
        for t in self.taps.values():
            for r in t.refused:
                out[r.reason] = out.get(r.reason, 0) + 1
        return out

    def read(self, uri: str) -> Tuple[SkillFile, bytes]:
        """The bytes of the served file ``uri``, checked against its manifest entry.

        Raises NotFoundError for a URI boost does not serve (whatever it spells: ``..``,
        an encoded dot, an absolute path, ``.git``), UsageError when the file on disk is
        no longer what the manifest says (a symlink on the way, another size or digest)."""
        found = self.files.get(uri)
        if found is None:
            raise NotFoundError(f"no skill file is served at {uri[:300]}", _FIX)
        skill, ref = found
        tap = self.taps[skill.tap]
        data = _read_checked(tap.root, skill.folder, ref)
        return ref, data


_FIX = "take a URI from skills/list, skills/get or a boost_search result"


def _read_checked(root: Path, folder: str, ref: SkillFile) -> bytes:
    fix = "the tap changed on disk since it was scanned: run 'boost update'"
    prefix = f"{folder}/" if folder else ""
    rel = ref.rel
    parts = rel.split("/")
    if (
        not rel.startswith(prefix)
        or rel.startswith("/")
        or any(p in ("", ".", "..") or p.casefold() in _SKIP_DIRS for p in parts)
    ):
        raise UsageError(f"refusing {ref.uri[:300]}: not a plain path in the skill", fix)
    base = str(root)
    for depth in range(1, len(parts)):
        try:
            mode = os.lstat(os.path.join(base, *parts[:depth])).st_mode
        except OSError:
            mode = 0
        if not stat.S_ISDIR(mode):
            raise UsageError(f"refusing {ref.uri[:300]}: a folder on its path is not real", fix)
    full = os.path.join(base, *parts)
    skill_real = os.path.realpath(os.path.join(base, folder) if folder else base)
    try:
        mode = os.lstat(full).st_mode
    except OSError:
        raise NotFoundError(f"{ref.uri[:300]} is gone from the tap", fix) from None
    if stat.S_ISLNK(mode) and not _inside_file(skill_real, full):
        raise UsageError(f"refusing {ref.uri[:300]}: a symlink out of the skill's folder", fix)
    with open(full, "rb") as fh:
        data = fh.read(ref.size + 1)
    digest = f"sha256:{hashlib.sha256(data).hexdigest()}"
    if len(data) != ref.size or digest != ref.digest:
        raise UsageError(f"refusing {ref.uri[:300]}: it no longer matches its digest", fix)
    return data


def _tap_skills(tap: registry.TapInfo, root: Path) -> TapSkills:
    """One tap's skills at its commit: the cache alone when it has them (no catalog is
    read), else the catalog scan and a build."""
    hit = cached(tap.name, tap.commit, root)
    if hit is not None:
        return hit
    return load(registry.load_snapshot(tap.name, tap.commit, str(root)))


def for_taps(names: Iterable[str] = ()) -> SkillMap:
    """The skill map of every tap (or the named ones) at its current commit."""
    return SkillMap([_tap_skills(t, root) for t, root in registry.present(names)])


def for_entries(entries: Iterable[Entry]) -> Statuses:
    """Which skills are served, and why not, in the taps holding ``entries``."""
    out = Statuses()
    names = sorted({e.tap for e in entries})
    for tap, root in registry.present(names) if names else []:
        _statuses(tap, root, out)
    return out


class Holder:
    """A server's skill map, rebuilt for the taps whose commit changed (checked on each
    use against the config: one small file), so a ``boost update`` shows at once."""

    def __init__(self) -> None:
        self._key: Tuple[Tuple[str, str], ...] = ()
        self._map: Optional[SkillMap] = None

    def get(self) -> SkillMap:
        taps = registry.present()
        # By content, not commit: a bundle imported again at the same commit may hold
        # other files.
        key = tuple((t.name, t.content_key) for t, _ in taps)
        if self._map is None or key != self._key:
            old = self._map.taps if self._map else {}
            kept = dict(self._key)
            self._map = SkillMap(
                [
                    old[t.name]
                    if t.name in old and kept.get(t.name) == t.content_key
                    else _tap_skills(t, root)
                    for t, root in taps
                ]
            )
            self._key = key
        return self._map
