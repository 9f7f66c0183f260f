"""boost's command line: parse arguments, dispatch to a command, map errors to exit codes.

Each command has a ``_add_<cmd>`` parser builder here and a thin implementation in
``boost_cli.commands``. Importing this module touches no files and no network.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, cast

from boost_cli import __version__
from boost_cli.core.errors import BoostError
from boost_cli.core.models import ENGINES, KINDS

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in boost's one-line format with exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"boost: error: {message} — see '{self.prog} --help'\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _add_tap(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tap",
        help="add a registry (a git repo of skills, rules and workflows)",
        description="Clone a registry and scan it. SOURCE: OWNER/REPO, an https:// or ssh:// URL, "
        "git@host:owner/repo, file://PATH, or a local path to a git repository.",
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
    p.add_argument("--category", help="with --catalog: only registries of this category")
    p.add_argument("--limit", type=_positive, help="with --catalog: at most this many registries")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add_taps(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("taps", help="list tapped registries", description="List tapped registries.")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument(
        "--warnings",
        action="store_true",
        help="also show scan warnings (broken frontmatter, skipped files)",
    )


def _add_untap(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "untap",
        help="remove a tapped registry",
        description="Remove a tap, its clone and its cached data.",
    )
    p.add_argument("names", nargs="+", metavar="NAME")


def _add_update(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "update",
        help="fetch taps to their remote head",
        description="Fetch taps and move them to the remote head.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="taps to update (default: all)")


def _add_search(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "search",
        help="find skills, rules and workflows for a task",
        description="Rank every tapped item for a task described in plain language.",
    )
    p.add_argument("query", nargs="+", help="the task, in plain language")
    p.add_argument("--kind", choices=KINDS, help="only this kind of item")
    p.add_argument(
        "--limit", "-n", type=_positive, default=10, help="how many results (default 10)"
    )
    p.add_argument(
        "--tap", action="append", default=[], metavar="TAP", help="only this tap (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print the full hits as JSON")
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
    p = sub.add_parser(
        "show",
        help="print a skill, rule or workflow",
        description="Print an entry's file, path and tap.",
    )
    p.add_argument("name", help="NAME, TAP:NAME or TAP:PATH")
    p.add_argument("--json", action="store_true", help="entry fields and text as JSON")


def _add_reindex(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reindex",
        help="build the full-content search index",
        description="Chunk every entry and (re)build the BM25 index; only changed taps are redone.",
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
        type=_positive,
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
        "--yes",
        action="store_true",
        help="with --dense: do not ask before sending text to a remote provider",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")


def _add_mcp(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve boost's tools over MCP (stdio)",
        description="Run the MCP server on stdin/stdout.",
    )
    p.add_argument(
        "--stdio", action="store_true", help="stdio transport (the default and only one)"
    )


def _add_discover(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "discover",
        help="find registries on GitHub (needs the gh CLI)",
        description="Search GitHub code for repositories holding SKILL.md files, through the gh CLI.",
    )
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=_positive, default=10)
    p.add_argument("--json", action="store_true")


def _add_doctor(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check boost's setup",
        description="Report home, taps, index, dense store and LLM status.",
    )
    p.add_argument("--json", action="store_true")


BUILDERS: List[Callable[[argparse._SubParsersAction], None]] = [
    _add_tap,
    _add_taps,
    _add_untap,
    _add_update,
    _add_search,
    _add_show,
    _add_reindex,
    _add_mcp,
    _add_discover,
    _add_doctor,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="boost",
        description="Find the right AI-agent skill for a task written in plain language.",
    )
    parser.add_argument("--version", action="version", version=f"boost {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in BUILDERS:
        add(sub)
    return parser


# command → (module in boost_cli.commands, function); imported only when run, so a
# one-shot `boost search` never pays for the MCP or dense code.
COMMANDS: Dict[str, Tuple[str, str]] = {
    "tap": ("taps", "cmd_tap"),
    "taps": ("taps", "cmd_taps"),
    "untap": ("taps", "cmd_untap"),
    "update": ("taps", "cmd_update"),
    "search": ("search", "cmd_search"),
    "show": ("show", "cmd_show"),
    "reindex": ("reindex", "cmd_reindex"),
    "mcp": ("mcp", "cmd_mcp"),
    "discover": ("discover", "cmd_discover"),
    "doctor": ("doctor", "cmd_doctor"),
}


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    module, func = COMMANDS[name]
    mod = importlib.import_module(f"boost_cli.commands.{module}")
    return cast(Callable[[argparse.Namespace], int], getattr(mod, func))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        return _command(args.command)(args)
    except BoostError as err:
        if args.debug:
            import traceback

            traceback.print_exc()
        print(f"boost: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("boost: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as err:  # noqa: BLE001 - last-resort handler: one line, traceback with --debug
        if args.debug:
            raise
        print(
            f"boost: internal error: {type(err).__name__}: {err} — rerun with --debug and report it",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
