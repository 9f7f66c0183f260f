"""Which agents boost installs into, and where each loads each kind of item from.

Constants only (no imports beyond typing): the CLI's ``--agent`` choices are read from
here at start, so a search does not import the install planner (`plan`) to build its
argument parser."""

from __future__ import annotations

from typing import Mapping

# agent → kind → the folder (relative to the project or the home folder) the agent loads
# items of that kind from. A skill is a folder; every other kind is one file.
LAYOUTS: Mapping[str, Mapping[str, str]] = {
    "claude": {
        "skill": ".claude/skills",
        "command": ".claude/commands",
        "agent": ".claude/agents",
        "rule": ".claude/rules",
    },
    # The shared folder Codex and other agents read skills from.
    "agents": {"skill": ".agents/skills"},
    "cursor": {"rule": ".cursor/rules"},
    "windsurf": {"rule": ".windsurf/rules"},
}
AGENTS = tuple(LAYOUTS)
ALIASES = {"codex": "agents", "claude-code": "claude"}
