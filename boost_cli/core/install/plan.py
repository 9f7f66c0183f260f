"""Pure install planning: where an item goes for an agent, and what to do with each file.

No I/O here: the caller (`apply`) hands in the item's files with their digests, the
manifest's record of an earlier install and the digests of what is on disk now; `plan`
answers with one `Action` per file and the conflicts that block it. Every decision the
install makes about a user's files is made here, so it is tested without a disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from boost_cli.core.errors import UsageError
from boost_cli.core.install import rulefm
from boost_cli.core.install.agents import AGENTS, ALIASES, LAYOUTS, SUFFIX, folder
from boost_cli.core.models import Entry

# Which agent an item goes to when --agent is not given.
DEFAULT_AGENT = {"skill": "claude", "command": "claude", "agent": "claude", "rule": "cursor"}

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

# Actions on one file.
WRITE, UPDATE, KEEP, REMOVE, CONFLICT = "write", "update", "keep", "remove", "conflict"


def install_kind(entry: Entry) -> str:
    """skill | rule | command | agent: a workflow is a Claude Code slash command or a
    subagent, told apart by the nearest ``commands/`` or ``agents/`` folder of its path."""
    if entry.kind != "workflow":
        return entry.kind
    for part in reversed(PurePosixPath(entry.path).parts[:-1]):
        if part.lower() in ("commands", "agents"):
            return "command" if part.lower() == "commands" else "agent"
    return "command"


def resolve_agent(kind: str, agent: Optional[str], user: bool) -> str:
    """The agent layout to install a ``kind`` into; UsageError naming the ones that take it."""
    name = ALIASES.get(agent or "", agent) if agent else DEFAULT_AGENT[kind]
    takers = [a for a in AGENTS if folder(a, kind, user)]
    if name not in LAYOUTS:
        raise UsageError(
            f"unknown agent {agent!r}", f"choose from {', '.join([*AGENTS, *ALIASES])}"
        )
    if kind not in LAYOUTS[name]:
        raise UsageError(
            f"{name} has no place for a {kind}",
            f"install it with --agent {' or --agent '.join(takers)}"
            if takers
            else "no agent layout takes it",
        )
    if user and folder(name, kind, user) is None:
        raise UsageError(
            f"{name} keeps user-wide {kind}s in its settings, not in files",
            "install into the project (leave out --user)"
            + (f", or use --agent {' or --agent '.join(takers)}" if takers else ""),
        )
    return name


def safe_name(text: str) -> str:
    """``text`` as one safe path component (letters, digits, '.', '_', '-'; 64 at most),
    or UsageError when nothing of it is left."""
    cand = _UNSAFE.sub("-", text).strip("-.")[:64].strip("-.")
    if not _NAME.fullmatch(cand) or cand in (".", ".."):
        raise UsageError(
            f"cannot make a file name of {text!r}", "give one with --name NAME (letters, digits)"
        )
    return cand


def check_name(text: str) -> str:
    """A name the user chose (--name): refused unless it already is a safe component."""
    if not _NAME.fullmatch(text) or text.strip(".") == "":
        raise UsageError(
            f"invalid install name {text!r}",
            "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    return text


def check_rel(rel: str) -> str:
    """A file path inside an item's folder: relative, POSIX, no ``.``/``..``/empty parts,
    UTF-8 (a name that is not would be copied, then break the manifest)."""
    parts = rel.split("/")
    if (
        not rel
        or "\x00" in rel
        or "\\" in rel
        or rel.startswith("/")
        or any(p in ("", ".", "..") for p in parts)
    ):
        raise UsageError(f"refusing file {rel!r}: not a plain relative path", None)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"refusing file {ascii(rel)}: its name is not UTF-8", "rename it in the registry"
        ) from None
    return rel


@dataclass(frozen=True)
class Target:
    """Where one item goes: ``folder`` (relative to the scope's base) holds the item's files;
    ``single`` is the file name when the item is one file (then ``folder`` is the agent's
    folder itself, shared with other items), else None (a skill: its own folder)."""

    agent: str
    kind: str
    folder: str
    single: Optional[str]

    @property
    def key(self) -> str:
        """The manifest key: what the item occupies, relative to the base."""
        return f"{self.folder}/{self.single}" if self.single else self.folder

    def dest(self, rel: str) -> str:
        """The path (relative to the base) of the item's file ``rel``."""
        return f"{self.folder}/{self.single}" if self.single else f"{self.folder}/{rel}"


def target(entry: Entry, agent: Optional[str], user: bool, name: Optional[str] = None) -> Target:
    """Where ``entry`` goes for ``agent`` (default: by kind) in the user or project scope."""
    kind = install_kind(entry)
    chosen = resolve_agent(kind, agent, user)
    base = folder(chosen, kind, user) or ""
    stem = check_name(name) if name is not None else safe_name(entry.name)
    if kind == "skill":
        return Target(chosen, kind, f"{base}/{stem}", None)
    suffix = SUFFIX.get(chosen, {}).get(kind, ".md")
    for end in (".instructions.md", ".prompt.md", ".agent.md", ".md", ".mdc"):
        if stem.lower().endswith(end) and len(stem) > len(end):
            stem = stem[: -len(end)]
            break
    return Target(chosen, kind, base, stem + suffix)


@dataclass(frozen=True)
class Action:
    dest: str  # relative to the base
    action: str  # WRITE | UPDATE | KEEP | REMOVE | CONFLICT
    rel: str = ""  # the item's file (for WRITE/UPDATE/KEEP)
    why: str = ""  # for CONFLICT: what is wrong


@dataclass(frozen=True)
class Plan:
    target: Target
    actions: Tuple[Action, ...]
    findings: Tuple[str, ...] = ()  # the trust check's high-severity findings
    notes: Tuple[str, ...] = field(default=())

    @property
    def conflicts(self) -> List[Action]:
        return [a for a in self.actions if a.action == CONFLICT]

    @property
    def changes(self) -> List[Action]:
        return [a for a in self.actions if a.action in (WRITE, UPDATE, REMOVE)]


def plan(
    tgt: Target,
    files: Mapping[str, str],
    on_disk: Mapping[str, Optional[str]],
    recorded: Optional[Mapping[str, str]],
    force: bool = False,
) -> Plan:
    """What installing ``files`` (item rel path → sha256) at ``tgt`` does.

    ``on_disk`` maps each destination (relative to the base) of interest to the sha256 of
    the regular file there, None when nothing is there, or ``"!"`` for something that is
    not a plain file (a symlink, a folder). ``recorded`` is the manifest's dest → sha256 of
    an earlier install of this target (None: boost never installed here).

    A file is replaced only when boost wrote what is there now (its digest is the recorded
    one) or it already holds the new bytes; anything else there is the user's: a CONFLICT,
    unless ``force``. A recorded file the item no longer has is removed, when unedited.
    """
    actions: List[Action] = []
    rec = dict(recorded or {})
    for rel in sorted(files):
        new = files[rel]
        dest = tgt.dest(check_rel(rel))
        have = on_disk.get(dest)
        if have is None:
            actions.append(Action(dest, WRITE, rel))
        elif have == new:
            actions.append(Action(dest, KEEP, rel))
        elif have != "!" and rec.get(dest) == have:
            actions.append(Action(dest, UPDATE, rel))
        elif force:
            actions.append(Action(dest, UPDATE, rel, "overwrites your changes (--force)"))
        else:
            actions.append(Action(dest, CONFLICT, rel, _conflict_why(have, dest in rec)))
    wanted = {tgt.dest(r) for r in files}
    for dest in sorted(set(rec) - wanted):
        have = on_disk.get(dest)
        if have is None:
            continue
        if have == rec[dest] or force:
            actions.append(Action(dest, REMOVE))
        else:
            actions.append(Action(dest, CONFLICT, "", _conflict_why(have, True)))
    return Plan(tgt, tuple(actions))


def removal(recorded: Mapping[str, str], on_disk: Mapping[str, Optional[str]], force: bool) -> Plan:
    """What uninstalling does: remove each recorded file still as boost wrote it."""
    actions: List[Action] = []
    for dest in sorted(recorded):
        have = on_disk.get(dest)
        if have is None:
            continue
        if have == recorded[dest] or force:
            actions.append(Action(dest, REMOVE))
        else:
            actions.append(Action(dest, CONFLICT, "", _conflict_why(have, True)))
    return Plan(Target("", "", "", None), tuple(actions))


def _conflict_why(have: str, recorded: bool) -> str:
    if have == "!":
        return "something other than a plain file is there"
    if recorded:
        return "you edited it since boost installed it"
    return "a file boost did not install is there"


def adapt(tgt: Target, files: Mapping[str, bytes]) -> Dict[str, bytes]:
    """The item's files as ``tgt``'s agent reads them: a rule's frontmatter says where it
    applies in that agent's own keys (`rulefm.convert`); everything else as it is."""
    if tgt.kind != "rule":
        return dict(files)
    return {rel: rulefm.convert(data, tgt.agent) for rel, data in files.items()}


def dests_of(tgt: Target, files: Sequence[str]) -> List[str]:
    return [tgt.dest(r) for r in files]


def summary(p: Plan) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for a in p.actions:
        out[a.action] = out.get(a.action, 0) + 1
    return out
