"""The MCP tool ``boost_install``: `boost install` for an agent, inside the client's workspace.

It writes (``readOnlyHint`` false) but never destroys what it did not write (``destructiveHint``
false: a file the user edited, or one boost did not install, is refused, and there is no
``force`` over MCP), and installing twice changes nothing more (``idempotentHint`` true).
Where it may write: a folder inside one of the client's roots (MCP ``roots/list``, which the
user confirms in the client), else inside ``BOOST_MCP_ROOT`` (set in the server's
configuration by the user), else, for an absolute ``project`` (protocol 2026-07-28 has no
roots: paths come in tool arguments), inside the folder the host started the server in
(`cwd_root`: never ``/`` or a folder holding the home folder); otherwise it refuses. Only the project scope: an agent does
not write user-wide folders.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

from boost_cli.core.errors import UsageError
from boost_cli.core.install import apply, plan
from boost_cli.core.mcp import Registry, ToolResult
from boost_cli.core.text import printable as shown

INSTALL_INPUT = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "the item's id as boost_search returns it (TAP:NAME or TAP:PATH)",
        },
        "agent": {
            "type": "string",
            "enum": [*plan.AGENTS, *plan.ALIASES],
            "description": "the agent layout: claude (.claude/skills|commands|agents|rules), "
            "agents (.agents/skills: Codex and others), gemini (.gemini/skills), copilot "
            "(.github/skills|instructions|prompts|agents), cursor (.cursor/rules|skills|"
            "commands), windsurf (.windsurf/rules|skills|workflows), cline (.clinerules); "
            "default: by kind",
        },
        "project": {
            "type": "string",
            "minLength": 1,
            "description": "the project folder (absolute; inside a workspace root); default: "
            "the workspace root when there is one",
        },
        "dry_run": {
            "type": "boolean",
            "default": False,
            "description": "only say what would be written",
        },
        "upgrade": {
            "type": "boolean",
            "default": False,
            "description": "replace an earlier install of the item with its tap's current files",
        },
    },
    "required": ["id"],
    "additionalProperties": False,
}

ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def allowed_roots(roots: Optional[List[str]]) -> List[str]:
    """The real paths boost_install may write under: the client's roots, else BOOST_MCP_ROOT."""
    chosen = roots or ([os.environ["BOOST_MCP_ROOT"]] if os.environ.get("BOOST_MCP_ROOT") else [])
    return [os.path.realpath(os.path.expanduser(r)) for r in chosen if r]


def cwd_root() -> Optional[str]:
    """The folder the server runs in, as a bound for an explicit ``project`` when the
    client shares no roots (protocol 2026-07-28 has none): the host starts its servers in
    the workspace it opened. Not when it is the file system's root or holds the user's home
    folder (a desktop app starts servers in ``/`` or ``~``): that would bound nothing."""
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return None
    home = os.path.realpath(os.path.expanduser("~"))
    if (
        os.path.dirname(here) == here
        or home == here
        or home.startswith(here.rstrip(os.sep) + os.sep)
    ):
        return None
    return here


def project_for(requested: Optional[str], roots: List[str]) -> str:
    """The project folder to install into: ``requested`` when it is inside a root (the
    client's, else BOOST_MCP_ROOT, else, for an absolute ``requested``, `cwd_root`)."""
    fix = (
        "give project as an absolute path inside the folder the server runs in, ask the "
        "user to run 'boost install ID' in a terminal, or to set BOOST_MCP_ROOT to the "
        "project folder in the MCP server's configuration ('boost mcp register HOST --root DIR')"
    )
    if not roots:
        here = cwd_root() if requested and os.path.isabs(requested) else None
        real = os.path.realpath(requested) if here and requested else ""
        if here and (real == here or real.startswith(here.rstrip(os.sep) + os.sep)):
            return real
        raise UsageError(
            "the client shared no workspace root to install into"
            + (
                f", and {requested!r} is outside the folder the server runs in ({here})"
                if here
                else ""
            ),
            fix,
        )
    if not requested:
        if len(roots) == 1:
            return roots[0]
        raise UsageError(
            "the client has several workspace roots", f"give project, one of: {', '.join(roots)}"
        )
    if not os.path.isabs(requested):
        raise UsageError(f"project {requested!r} is not an absolute path", "give a full path")
    real = os.path.realpath(requested)
    if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
        raise UsageError(
            f"project {requested!r} is outside the workspace roots",
            f"give a folder inside {', '.join(roots)}",
        )
    return real


def register(
    reg: Registry,
    roots: Callable[[], Optional[List[str]]],
    wrap: Callable[[Callable[[Dict[str, Any]], ToolResult]], Any],
) -> None:
    @reg.tool(
        "boost_install",
        "Install a skill, rule or workflow found with boost_search into the user's project, "
        "where the agent loads it (a skill's folder into .claude/skills/ or .agents/skills/, a "
        "rule into .cursor/rules/ or .windsurf/rules/, a command or subagent into "
        ".claude/commands/ or .claude/agents/). Writes only inside the workspace; never "
        "overwrites a file the user edited. Use dry_run first to show the user what it writes.",
        INSTALL_INPUT,
        title="Install a skill into the project",
        annotations=ANNOTATIONS,
    )
    @wrap
    def boost_install(args: Dict[str, Any]) -> ToolResult:
        project = project_for(args.get("project"), allowed_roots(roots()))
        result = apply.install(
            args["id"],
            project=project,
            agent=args.get("agent"),
            dry_run=bool(args.get("dry_run", False)),
            upgrade=bool(args.get("upgrade", False)),
        )
        record = result.to_dict()
        verb = "would write" if not result.applied else "wrote"
        changed = [a for a in result.plan.actions if a.action != plan.KEEP]
        # Every field is the registry's text or from it: one line each, escaped (`shown`).
        lines = [
            f"{'Dry run: ' if not result.applied else ''}{shown(result.id)} "
            f"({result.plan.target.kind}, {result.plan.target.agent}) → "
            f"{shown(os.path.join(project, result.plan.target.key))}",
            *(
                f"- {a.action}: {shown(a.dest)}" + (f" ({shown(a.why)})" if a.why else "")
                for a in changed
            ),
            *(f"Trust: {shown(f)}" for f in result.plan.findings),
            *(f"Note: {shown(n)}" for n in result.plan.notes),
        ]
        if not changed:
            lines.append("Already installed: nothing to write.")
        elif result.applied:
            lines.append(f"{verb} {len(changed)} file(s); the agent loads it from there.")
        return ToolResult(text="\n".join(lines), structured=record)
