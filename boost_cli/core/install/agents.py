"""Which agents boost installs into, and where each loads each kind of item from.

Constants only (no imports beyond typing): the CLI's ``--agent`` choices are read from
here at start, so a search does not import the install planner (`plan`) to build its
argument parser. Each folder is the one the host's own documentation names; the table
with its sources is in docs/install.md ("Where each agent loads items")."""

from __future__ import annotations

from typing import Mapping, Optional

# agent → kind → the folder (relative to the project) the agent loads items of that kind
# from. A skill is a folder; every other kind is one file.
LAYOUTS: Mapping[str, Mapping[str, str]] = {
    "claude": {
        "skill": ".claude/skills",
        "command": ".claude/commands",
        "agent": ".claude/agents",
        "rule": ".claude/rules",
    },
    # The shared folder Codex, Gemini CLI, Copilot, Cursor, OpenCode and others read.
    "agents": {"skill": ".agents/skills"},
    "gemini": {"skill": ".gemini/skills"},
    "copilot": {
        "skill": ".github/skills",
        "rule": ".github/instructions",
        "command": ".github/prompts",
        "agent": ".github/agents",
    },
    "cursor": {"rule": ".cursor/rules", "skill": ".cursor/skills", "command": ".cursor/commands"},
    "windsurf": {
        "rule": ".windsurf/rules",
        "skill": ".windsurf/skills",
        "command": ".windsurf/workflows",
    },
    "cline": {"rule": ".clinerules"},
}
# Where the user-wide folder (relative to the home folder) is not the project's: another
# folder, or None when the host keeps user-wide items of that kind in its settings.
USER_LAYOUTS: Mapping[str, Mapping[str, Optional[str]]] = {
    "copilot": {"skill": ".copilot/skills", "rule": None, "command": None, "agent": None},
    "cursor": {"rule": None},
    "windsurf": {"skill": ".codeium/windsurf/skills", "rule": None, "command": None},
    "cline": {"rule": None},
}
AGENTS = tuple(LAYOUTS)
ALIASES = {
    "codex": "agents",
    "claude-code": "claude",
    "gemini-cli": "gemini",
    "vscode": "copilot",
    "github-copilot": "copilot",
}
# The file name ending an agent wants for a one-file item of a kind (default ".md").
SUFFIX: Mapping[str, Mapping[str, str]] = {
    "cursor": {"rule": ".mdc"},
    "copilot": {"rule": ".instructions.md", "command": ".prompt.md", "agent": ".agent.md"},
}


def folder(agent: str, kind: str, user: bool) -> Optional[str]:
    """The folder ``agent`` loads a ``kind`` from in the user or the project scope, None
    when it has none there."""
    if kind not in LAYOUTS.get(agent, {}):
        return None
    if user and kind in USER_LAYOUTS.get(agent, {}):
        return USER_LAYOUTS[agent][kind]
    return LAYOUTS[agent][kind]
