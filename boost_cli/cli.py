"""boost's command line: parse arguments, dispatch to a command, map errors to exit codes.

Each command has a ``_add_<cmd>`` parser builder here and a thin implementation in
``boost_cli.commands``; ``help`` and ``completion`` are about the command line itself and
are answered here. Importing this module touches no files and no network.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import textwrap
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, cast

from boost_cli import __version__, completion, topics
from boost_cli.commands import render
from boost_cli.core.errors import AmbiguousError, BoostError, from_os_error
from boost_cli.core.install import agents as install_agents
from boost_cli.core.models import ENGINES, KINDS
from boost_cli.core.text import printable

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
SEARCH_MAX = 100  # core.search refuses more
DISCOVER_MAX = 100  # gh returns at most this many code hits


class _Formatter(argparse.HelpFormatter):
    """Wraps a paragraph written as one line to the terminal, keeps one already laid out
    in lines (examples, tables) as it is."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            p
            if "\n" in p
            else textwrap.fill(p, width, initial_indent=indent, subsequent_indent=indent)
            for p in paragraphs
        )


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in boost's one-line ``what — fix`` format with
    exit code 2, and suggests the closest command, option or value for a typo."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if " — " not in message:
            message += f" — see '{self.prog} --help'"
        self.exit(EXIT_USAGE, f"boost: error: {message}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        what = "command" if isinstance(action, argparse._SubParsersAction) else "choice"
        message = f"unknown {what} {value!r}"
        import difflib  # only for a mistyped name

        close = difflib.get_close_matches(str(value), names, n=1)
        fix = f"did you mean {close[0]!r}?" if close else f"choose from {', '.join(names)}"
        raise argparse.ArgumentError(action, f"{message} — {fix}")

    def unknown_options(self, extras: Sequence[str]) -> NoReturn:
        """Exit for arguments no option took, suggesting the closest option name."""
        first = next((x for x in extras if x.startswith("-")), extras[0])
        known = [s for a in self._actions for s in a.option_strings]
        import difflib

        close = difflib.get_close_matches(first.split("=", 1)[0], known, n=1)
        message = f"unrecognized arguments: {' '.join(extras)}"
        if close:
            message += f" — did you mean {close[0]!r}? (see '{self.prog} --help')"
        self.error(message)


def _int_range(low: int, high: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (no upper bound: None)."""
    span = f"from {low} to {high}" if high else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number {span} — give e.g. {min(10, high or 10)}"
            )
        return value

    return parse


def _global_options(parser: argparse.ArgumentParser, in_command: bool) -> None:
    """--debug, -q, -v and --color, accepted before and after the command. In a command's
    parser their defaults are suppressed, so they never undo what was given before it."""
    kw: Dict[str, Any] = {"default": argparse.SUPPRESS} if in_command else {}
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors", **kw)
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress and no notes; results and errors only",
        **kw,
    )
    parser.add_argument(
        "-v", "--verbose", action="count", help="more detail on stderr (repeatable)", **kw
    )
    parser.add_argument(
        "--color",
        choices=render.COLOR_MODES,
        help="colour: auto (a terminal without NO_COLOR), always or never (default auto)",
        **kw,
    )


def _sub(sub: argparse._SubParsersAction, name: str, help: str, description: str) -> _Parser:
    epilog = "\n\n".join(
        t for t in (topics.examples_text(name), topics.environment_text(name)) if t
    )
    p = cast(
        _Parser,
        sub.add_parser(
            name, help=help, description=description, epilog=epilog or None, add_help=True
        ),
    )
    _global_options(p, in_command=True)
    return p


def _add_tap(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "tap",
        "add a registry (a git repo of skills, rules and workflows)",
        "Clone a registry and scan it. SOURCE: OWNER/REPO, an https:// or ssh:// URL, "
        "git@host:owner/repo, file://PATH, or a local path to a git repository "
        "(see 'boost help sources').",
    )
    p.add_argument("sources", nargs="*", metavar="SOURCE", help="registries to tap")
    p.add_argument("--name", help="tap name (default: derived from the source)")
    p.add_argument("--catalog", action="store_true", help="tap registries from the bundled catalog")
    p.add_argument(
        "--defaults", action="store_true", help="tap the starter set from the bundled catalog"
    )
    p.add_argument(
        "--list", action="store_true", help="with --catalog: list the catalog, tap nothing"
    )
    p.add_argument(
        "--type", choices=KINDS, help="with --catalog: only registries mostly of this kind"
    )
    p.add_argument(
        "--category", help="with --catalog: only registries of this category (e.g. security)"
    )
    p.add_argument(
        "--limit", type=_int_range(1), metavar="N", help="with --catalog: at most N registries"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add_taps(sub: argparse._SubParsersAction) -> None:
    p = _sub(sub, "taps", "list tapped registries", "List tapped registries.")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument(
        "--warnings",
        action="store_true",
        help="also show scan warnings (broken frontmatter, skipped files)",
    )


def _add_untap(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub, "untap", "remove a tapped registry", "Remove a tap, its clone and its cached data."
    )
    p.add_argument("names", nargs="+", metavar="NAME", help="taps to remove (see 'boost taps')")


def _add_update(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "update",
        "fetch taps to their remote head",
        "Fetch taps and move them to the remote head.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="taps to update (default: all)")


def _add_search(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "search",
        "find skills, rules and workflows for a task",
        "Rank every tapped item for a task described in plain language. Nothing matching is "
        "not an error (exit 0) unless --exit-status is given.",
    )
    p.add_argument("query", nargs="+", help="the task, in plain language")
    p.add_argument("--kind", choices=KINDS, help="only this kind of item")
    p.add_argument(
        "--limit",
        "-n",
        type=_int_range(1, SEARCH_MAX),
        metavar="N",
        help=f"how many results, 1-{SEARCH_MAX} (default 10, or 'boost config set limit N')",
    )
    p.add_argument(
        "--tap", action="append", default=[], metavar="TAP", help="only this tap (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print the hits as a JSON array")
    p.add_argument(
        "--fields",
        metavar="LIST",
        help="with --json (implied): only these keys, comma-separated, in this order "
        "(e.g. id,score,file; 'all' adds meta)",
    )
    p.add_argument(
        "--format",
        metavar="TEMPLATE",
        help="one line per hit from a template of {fields} (those of --fields), \\t for a "
        "tab: e.g. '{id}\\t{why}' for fzf",
    )
    p.add_argument(
        "--min-score",
        type=float,
        metavar="COSINE",
        help="with vectors: the similarity a skill only they found must reach (default: "
        "the model's measured floor, 0.46 for the local model; 0 shows all)",
    )
    p.add_argument(
        "--exit-status",
        action="store_true",
        help="exit 1 when nothing matches, like grep and ripgrep (default: 0)",
    )
    p.add_argument(
        "--explain", action="store_true", help="show engine, timings, ranks and degradations"
    )
    p.add_argument(
        "--keywords",
        action="append",
        default=[],
        metavar="WORDS",
        help="extra words or short phrases a skill's author would use, comma-separated "
        "(e.g. 'jest, vitest, component tests'): they widen the search beyond your wording",
    )
    p.add_argument("--no-rerank", action="store_true", help="skip the LLM rerank (BM25 order)")
    p.add_argument(
        "--no-llm",
        action="store_true",
        help="use no LLM at all: no query expansion, no rerank (nothing leaves the machine)",
    )
    p.add_argument("--engine", choices=ENGINES, help="force one engine")


def _add_show(sub: argparse._SubParsersAction) -> None:
    p = _sub(sub, "show", "print a skill, rule or workflow", "Print an entry's file, path and tap.")
    p.add_argument("name", help="NAME, TAP:NAME or TAP:PATH")
    p.add_argument("--json", action="store_true", help="entry fields and text as JSON")
    p.add_argument(
        "--raw", action="store_true", help="print the file as it is (control characters too)"
    )


def _add_audit(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "audit",
        "list what skills ask of an agent (trust findings)",
        "List every trust finding of the tapped registries (or the named ones) with its "
        "file:line: instructions aimed at the model, remote code piped into a shell, "
        "secrets, hidden text, look-alike names, requested powers, outside links, scripts. "
        "Lists medium severity and worse, with one line counting the rest (--all for every "
        "finding). Exits 1 when any finding is high severity (for a registry's CI).",
    )
    p.add_argument("taps", nargs="*", metavar="TAP", help="taps to audit (default: all)")
    p.add_argument("--json", action="store_true", help="print the findings as a JSON object")
    floor = p.add_mutually_exclusive_group()
    floor.add_argument(
        "--min-severity",
        "--severity",
        dest="severity",
        choices=("info", "low", "medium", "high"),
        default="medium",
        help="list findings of this severity or worse (default medium; one line counts the rest)",
    )
    floor.add_argument(
        "--all",
        dest="severity",
        action="store_const",
        const="info",
        help="list every finding, info and low included (--min-severity info)",
    )


def _scope_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--user", action="store_true", help="the user-wide folders (~/.claude/…) and manifest"
    )
    p.add_argument(
        "--project", metavar="DIR", help="the project folder (default: the current folder)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add_install(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "install",
        "put a found item where an agent loads it",
        "Copy an item (an id as 'boost search' prints it) where an agent loads it: a skill's "
        "folder into .claude/skills/ (--agent agents: .agents/skills/, which Codex and others "
        "read; gemini, copilot, cursor, windsurf: their own), a rule into .cursor/rules/ "
        "(or .claude/rules/, .github/instructions/, .windsurf/rules/, .clinerules/, its "
        "frontmatter in that agent's keys), a command or subagent into .claude/commands/ or "
        ".claude/agents/ (docs/install.md lists every folder). Project scope by default, --user for the home "
        "folder. A manifest (.boost/installed.json) records each file's digest: a file you "
        "edited, or one boost did not write, is never overwritten without --force.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="items to install (TAP:NAME, TAP:PATH)")
    p.add_argument(
        "--agent",
        choices=[*install_agents.AGENTS, *install_agents.ALIASES],
        help="the agent layout (default: by kind)",
    )
    p.add_argument("--name", help="install under this name (default: the item's name)")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would be written, write nothing"
    )
    p.add_argument(
        "--force", action="store_true", help="overwrite files you edited or boost did not write"
    )
    p.add_argument(
        "--upgrade",
        action="store_true",
        help="bring installed items up to their tap (no ID: all outdated)",
    )
    _scope_options(p)


def _add_restore(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "restore",
        "install everything the manifest lists, as recorded",
        "Install every item .boost/installed.json lists (committed by a teammate, say) at the "
        "bytes it recorded, as 'npm ci' does for a lockfile: each file is checked against the "
        "manifest's sha256, from the tap's clone or the recorded commit (fetched when the "
        "clone lacks it). Items already in place are left alone; an item with files you "
        "edited is skipped and named (exit 1) unless --force. The manifest is not changed.",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would be written")
    p.add_argument("--force", action="store_true", help="overwrite files you edited too")
    _scope_options(p)


def _add_installed(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "installed",
        "list items boost installed",
        "List what boost installed here (or with --user, for you), with its state.",
    )
    _scope_options(p)


def _add_outdated(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "outdated",
        "list installed items whose tap moved on",
        "List installed items whose files changed in their tap since they were installed."
        " Exits 1 when there are some (as `npm outdated` does), 0 when none.",
    )
    _scope_options(p)


def _add_uninstall(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "uninstall",
        "remove an item boost installed",
        "Remove an installed item's files (unless you edited them) and its manifest record.",
    )
    p.add_argument(
        "ids",
        nargs="+",
        metavar="ID",
        help="an installed item's id or its path (see 'boost installed')",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would be removed")
    p.add_argument("--force", action="store_true", help="remove files you edited too")
    _scope_options(p)


def _add_config(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "config",
        "get or set boost's settings (llm, limit, engine, advice.*)",
        "Read or change the few settings kept in BOOST_HOME/config.json: llm (on or off; off "
        "is a lasting --no-llm, like BOOST_NO_LLM=1), limit (the default number of search "
        "results), engine (the default search engine: auto, lexical, bm25, dense, hybrid) and "
        "advice.semantic, advice.sqlite (true or false: the hints shown on a terminal once a "
        "day).",
    )
    p.add_argument(
        "action",
        metavar="{get,set,unset,list}",
        help="what to do; or a setting's name, as git config: 'boost config advice.sqlite false'",
    )
    p.add_argument(
        "name",
        nargs="?",
        help="the setting: llm, llm.provider, limit, engine, advice.semantic, advice.sqlite",
    )
    p.add_argument("value", nargs="?", help="with set: the new value")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add_reindex(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "reindex",
        "build the full-content search index",
        "Chunk every entry and (re)build the BM25 index; only changed taps are redone.",
    )
    p.add_argument("--force", action="store_true", help="rebuild everything")
    p.add_argument(
        "--tap",
        action="append",
        default=[],
        metavar="TAP",
        help="only rebuild this tap (repeatable)",
    )
    p.add_argument(
        "--workers",
        type=_int_range(1),
        metavar="N",
        help="worker processes for changed taps (default: one per CPU, as memory allows)",
    )
    p.add_argument(
        "--dense", action="store_true", help="also build the dense vector index (needs a provider)"
    )
    p.add_argument(
        "--unit", choices=("entry", "chunk"), help="with --dense: one vector per entry or per chunk"
    )
    p.add_argument(
        "--enrich",
        action="store_true",
        help="first have the LLM describe each new skill text in users' words (docs/enrich.md)",
    )
    p.add_argument(
        "--allow-egress",
        action="store_true",
        help="with --enrich: consent to send skill text to a remote LLM",
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="with --dense or --enrich: do not ask before sending text",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")


def _add_vectors(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "vectors",
        "export or import one tap's dense vectors (embed once, share with a team)",
        "Write a tap's vectors from the vector store to a file, or import such files: a "
        "team embeds a registry once and everyone imports it. The file records the "
        "embedder; import refuses a file of another embedder than the configured one.",
    )
    actions = p.add_subparsers(
        dest="action", metavar="ACTION", required=True, help="export or import"
    )
    exp = actions.add_parser(
        "export",
        help="write TAP's vectors to FILE",
        description="Write TAP's vectors (from 'boost reindex --dense', at the tap's current "
        "commit) to FILE: deterministic JSON lines, the same bytes for the same vectors.",
    )
    exp.add_argument("tap", metavar="TAP", help="a tapped registry whose vectors are built")
    exp.add_argument("file", metavar="FILE", help="where to write them")
    imp = actions.add_parser(
        "import",
        help="load vectors files into the vector store",
        description="Load each FILE's vectors into the vector store's cache and build its "
        "tap from them, embedding nothing. The tap must be tapped; at another commit, the "
        "texts that changed are left for 'boost reindex --dense'. A file is untrusted: "
        "every row is checked, and only vectors of its own tap's texts that are not here "
        "yet are added.",
    )
    imp.add_argument("files", nargs="+", metavar="FILE", help="files from 'boost vectors export'")
    imp.add_argument(
        "--unit",
        choices=("entry", "chunk"),
        help="the unit of the files' vectors (default: the vector store's, else the "
        "configured one)",
    )
    for action in (exp, imp):
        action.add_argument("--json", action="store_true", help="machine-readable report")
        _global_options(action, in_command=True)


def _add_bundle(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "bundle",
        "export or import taps as one file a replica serves with nothing cloned",
        "Write taps (their catalog, served files, search index segments and vectors, no git "
        "history) to one deterministic file, or import such files: one build job exports, "
        "every replica of a team server imports. An imported tap is updated by importing "
        "a newer bundle.",
    )
    actions = p.add_subparsers(
        dest="action", metavar="ACTION", required=True, help="export or import"
    )
    exp = actions.add_parser(
        "export",
        help="write taps to FILE",
        description="Write every tap (or those named with --tap) to FILE: the same taps at "
        "the same commits make the same bytes.",
    )
    exp.add_argument("file", metavar="FILE", help="where to write the bundle")
    exp.add_argument("--tap", action="append", metavar="NAME", help="only this tap (repeatable)")
    imp = actions.add_parser(
        "import",
        help="import bundles",
        description="Verify each FILE, install its taps (replacing earlier imports of the "
        "same taps; a cloned tap of the same name is refused), and bring the index up "
        "to date from the bundled segments.",
    )
    imp.add_argument("files", nargs="+", metavar="FILE", help="files from 'boost bundle export'")
    for action in (exp, imp):
        action.add_argument("--json", action="store_true", help="machine-readable report")
        _global_options(action, in_command=True)


def _add_mcp(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "mcp",
        "serve boost's tools over MCP (stdio, or HTTP with --http)",
        "Run the MCP server on stdin/stdout, for an MCP client to start "
        "(client set-up: docs/mcp.md). Run by hand, it waits for JSON-RPC on stdin; "
        "Ctrl-D or Ctrl-C stops it. With --http, serve MCP's Streamable HTTP for a team "
        "(docs/team-server.md); SIGTERM or Ctrl-C stops it after the requests in flight.",
    )
    p.add_argument("--stdio", action="store_true", help="stdio transport (the default)")
    p.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead (HOST defaults to "
        "127.0.0.1; any other address needs BOOST_MCP_TOKEN)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="with --http: also accept this Host (and its https:// Origin), e.g. the "
        "name a reverse proxy serves (repeatable)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="with --http: also accept requests from this Origin (repeatable)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --http: answer every request within SECONDS (default 30)",
    )
    p.add_argument(
        "--read-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --http: close a connection that sends nothing for SECONDS (default 10)",
    )
    p.add_argument(
        "--pages",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --http: serve the team page for people at / beside /mcp (default: on "
        "for a loopback bind, off otherwise; with BOOST_MCP_TOKEN people sign in)",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=("register", "unregister"),
        help="register: add boost to an MCP host (HOST); unregister: remove it",
    )
    p.add_argument(
        "host",
        nargs="?",
        metavar="HOST",
        help="claude, codex or gemini (through their CLI), cursor, vscode or windsurf "
        "(their config file)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="with register/unregister: say what, change nothing"
    )
    p.add_argument(
        "--list", action="store_true", help="with register: the hosts boost knows and found"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="with register: replace a registration with other settings",
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        help="with register: the project folder boost_install may write in (BOOST_MCP_ROOT), "
        "for a host that shares no workspace roots",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="start the server as this shell and each registered host would, search with "
        "it, and fail when its home has no taps or is not yours",
    )
    p.add_argument("--json", action="store_true", help="with --check: the report as JSON")


def _add_discover(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "discover",
        "find registries on GitHub (needs the gh CLI)",
        "Search GitHub code for repositories holding SKILL.md files, through the gh CLI.",
    )
    p.add_argument("query", nargs="+", help="what the skills should be about, e.g. 'pdf forms'")
    p.add_argument(
        "--limit",
        type=_int_range(1, DISCOVER_MAX),
        default=10,
        metavar="N",
        help=f"at most N repositories, 1-{DISCOVER_MAX} (default 10)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON array of repositories")


def _add_doctor(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "doctor",
        "check boost's setup",
        "Report versions, home and disk use, taps, index, dense store and LLM status, with "
        "the fix for what does not work. Exits 1 when it printed a fix line.",
    )
    p.add_argument("--json", action="store_true", help="print the report as a JSON object")


def _add_help(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "help",
        "help on a command or a topic",
        "Print a command's --help, or a topic.\n\n" + topics.topics_list(),
    )
    p.add_argument(
        "topic",
        nargs="?",
        choices=[*COMMANDS, "help", "completion", *topics.TOPICS],
        metavar="TOPIC",
        help="a command or a topic (default: the overview)",
    )


def _add_completion(sub: argparse._SubParsersAction) -> None:
    p = _sub(
        sub,
        "completion",
        "print a shell completion script",
        "Print the completion script for a shell; see 'boost help completion'.",
    )
    p.add_argument("shell", choices=completion.SHELLS, help="bash, zsh or fish")


# command → the function that adds its subparser, in the order `boost --help` lists them.
BUILDERS: Dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "tap": _add_tap,
    "taps": _add_taps,
    "untap": _add_untap,
    "update": _add_update,
    "search": _add_search,
    "show": _add_show,
    "audit": _add_audit,
    "install": _add_install,
    "restore": _add_restore,
    "installed": _add_installed,
    "outdated": _add_outdated,
    "uninstall": _add_uninstall,
    "reindex": _add_reindex,
    "vectors": _add_vectors,
    "bundle": _add_bundle,
    "mcp": _add_mcp,
    "discover": _add_discover,
    "doctor": _add_doctor,
    "config": _add_config,
    "help": _add_help,
    "completion": _add_completion,
}


def _epilog() -> str:
    lines = [
        "examples:",
        "  boost tap --defaults",
        "  boost reindex",
        '  boost search "test my React app"',
        "  boost show example:jest-runner",
        "",
        topics.environment_text(),
        "",
        topics.exit_codes_text(),
        "",
        topics.topics_list() + "\n  (boost help TOPIC; boost help COMMAND is COMMAND --help)",
        "",
        f"docs: {topics.DOCS_URL}",
    ]
    return "\n".join(lines)


def build_parser(only: Optional[str] = None) -> _Parser:
    """The command line's parser; with ``only`` (a command's name), with that command's
    subparser alone: the same parser for that command's arguments, for a third of the
    cost (argparse asks gettext for each parser's headings), which a one-shot
    ``boost search`` pays on every run."""
    parser = _Parser(
        prog="boost",
        description="Find the right AI-agent skill for a task written in plain language.",
        epilog=_epilog() if only is None else None,
    )
    parser.add_argument("--version", action="version", version=f"boost {__version__}")
    _global_options(parser, in_command=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in BUILDERS.values() if only is None else [BUILDERS[only]]:
        add(sub)
    return parser


def _named_command(argv: Sequence[str]) -> Optional[str]:
    """The command ``argv`` runs when it names one first (``boost search …``), else None
    (global options first, no command, ``help``, a typo: the whole parser answers)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


# command → (module in boost_cli.commands, function); imported only when run, so a
# one-shot `boost search` never pays for the MCP or dense code.
COMMANDS: Dict[str, Tuple[str, str]] = {
    "tap": ("taps", "cmd_tap"),
    "taps": ("taps", "cmd_taps"),
    "untap": ("taps", "cmd_untap"),
    "update": ("taps", "cmd_update"),
    "search": ("search", "cmd_search"),
    "show": ("show", "cmd_show"),
    "audit": ("audit", "cmd_audit"),
    "install": ("install", "cmd_install"),
    "restore": ("restore", "cmd_restore"),
    "installed": ("install", "cmd_installed"),
    "outdated": ("install", "cmd_outdated"),
    "uninstall": ("install", "cmd_uninstall"),
    "reindex": ("reindex", "cmd_reindex"),
    "vectors": ("vectors", "cmd_vectors"),
    "bundle": ("bundle", "cmd_bundle"),
    "mcp": ("mcp", "cmd_mcp"),
    "discover": ("discover", "cmd_discover"),
    "doctor": ("doctor", "cmd_doctor"),
    "config": ("config", "cmd_config"),
}
# Answered here: they are about the command line itself.
BUILTINS = ("help", "completion")


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    module, func = COMMANDS[name]
    mod = importlib.import_module(f"boost_cli.commands.{module}")
    return cast(Callable[[argparse.Namespace], int], getattr(mod, func))


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    return completion._subparsers(parser)[name]


def _help(parser: argparse.ArgumentParser, topic: Optional[str]) -> int:
    if not topic:
        parser.print_help()
    elif topic in topics.TOPICS:
        render.out(topics.topic_text(topic))
    else:
        _subparser(parser, topic).print_help()
    return 0


def _complete(parser: argparse.ArgumentParser) -> int:
    taps: List[str] = []
    entries: List[str] = []
    try:
        from boost_cli.core import registry

        taps = [t.name for t in registry.list_taps()]
        words = os.environ.get("COMP_WORDS", "").split()
        if any(w in completion.ENTRY_COMMANDS for w in words[1:]):  # read the catalogs
            entries = [e.qualified_name for s in registry.snapshots() for e in s.entries]
    except BoostError:
        pass  # no readable config: complete everything but tap and entry names
    for word in completion.candidates(parser, os.environ, taps, entries):
        render.out(word)
    return 0


MAX_CANDIDATES = 20


def error_text(err: BoostError) -> str:
    """``<what> — <fix>`` on one line; an ambiguous name's candidates one per line below
    it (they made one line of a thousand characters)."""
    head, sep, _ = err.message.partition(" entries: ")
    if not (isinstance(err, AmbiguousError) and err.candidates and sep):
        return printable(err)
    shown = [f"  {printable(c)}" for c in err.candidates[:MAX_CANDIDATES]]
    more = len(err.candidates) - len(shown)
    if more > 0:
        shown.append(f"  … and {more} more")
    fix = f" — {err.fix}" if err.fix else ""
    return "\n".join([printable(f"{head} entries{fix}:"), *shown])


def _quiet_stdout() -> None:
    """After the reader of stdout went away (``boost … | head``): point stdout at the null
    device, so the interpreter's final flush has nowhere to fail (no "Exception ignored")."""
    try:
        if sys.stdout is sys.__stdout__ and sys.stdout is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    except (OSError, ValueError):
        pass  # nothing more to protect


def main(argv: Optional[Sequence[str]] = None) -> int:
    if os.environ.get("BOOST_COMPLETE"):
        return _complete(build_parser())
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_named_command(words))
    args, extras = parser.parse_known_args(words)
    if extras:
        target = _subparser(parser, args.command) if args.command else parser
        cast(_Parser, target).unknown_options(extras)
    verbosity = -1 if args.quiet else (args.verbose or 0)
    render.configure(color=args.color or "auto", verbosity=verbosity)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        try:
            if args.command == "help":
                code = _help(parser, args.topic)
            elif args.command == "completion":
                render.out(completion.script(args.shell).rstrip("\n"))
                code = 0
            else:
                code = _command(args.command)(args)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
            return code
        except BrokenPipeError:
            # ripgrep's convention: the reader has what it wanted; exit 0, say nothing.
            _quiet_stdout()
            return 0
        except OSError as os_err:  # a full disk, a read-only BOOST_HOME: one line and the fix
            raise from_os_error(os_err) from os_err
    except BoostError as err:
        if args.debug:
            import traceback

            traceback.print_exc()
        render.err(f"boost: error: {error_text(err)}")
        return err.exit_code
    except KeyboardInterrupt:
        render.err("boost: interrupted")
        return EXIT_INTERRUPTED
    except Exception as err:  # noqa: BLE001 - last-resort handler: one line, traceback with --debug
        if args.debug:
            raise
        render.err(
            f"boost: internal error: {type(err).__name__}: {printable(err)} — rerun with --debug and report it"
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
