"""The help that does not fit on an option's line: examples per command, the environment
variables boost reads, exit codes, output conventions and shell completion.

`cli` puts the examples and the variables into ``--help``; ``boost help TOPIC`` prints a
topic. One table per fact, so ``--help``, ``boost help`` and the tests never disagree.
Importing this module touches no files.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import Dict, List, Sequence, Tuple

# Where `boost --help` sends readers: boost has no public web home yet (the PyPI name
# boost-skill-cli is another product's), so the docs are the ones that ship.
DOCS_URL = "README.md and docs/ in boost's source tree; 'boost help TOPIC' here"

# (variable, what it does, the commands it changes). Every variable the code reads is here
# (tests/test_topics.py greps the source for them).
ENVIRONMENT: Sequence[Tuple[str, str, Tuple[str, ...]]] = (
    ("BOOST_HOME", "where taps, indexes and config live (default ~/.boost)", ()),
    (
        "BOOST_LLM_PROVIDER",
        "the LLM for expansion and rerank: auto (the first configured, docs/llm.md), "
        "openai-compatible, api, openai, gemini, cli, codex, gemini-cli or ollama "
        "(also 'boost config set llm.provider')",
        ("search", "mcp", "doctor"),
    ),
    (
        "BOOST_LLM_BASE_URL",
        "an OpenAI-compatible chat server (Ollama, LM Studio, llama.cpp, vLLM, OpenRouter), "
        "e.g. http://127.0.0.1:11434/v1; tried first by auto",
        ("search", "mcp", "doctor"),
    ),
    (
        "BOOST_LLM_MODEL",
        "the LLM's model for every use (default: the provider's)",
        ("search", "mcp"),
    ),
    (
        "BOOST_LLM_API_KEY",
        "key for the BOOST_LLM_BASE_URL server, if it wants one",
        ("search", "mcp"),
    ),
    (
        "ANTHROPIC_API_KEY",
        "LLM query expansion and rerank through the Messages API",
        ("search", "mcp", "doctor"),
    ),
    ("ANTHROPIC_BASE_URL", "another Messages API endpoint (a proxy or gateway)", ("search", "mcp")),
    (
        "OPENAI_API_KEY",
        "LLM expansion and rerank through OpenAI's Chat Completions; OpenAI embeddings only "
        "when BOOST_EMBED_PROVIDER=openai (a key alone sends no registry text)",
        ("search", "mcp", "doctor", "reindex"),
    ),
    (
        "OPENAI_BASE_URL",
        "another OpenAI API endpoint, for the openai LLM and the named openai embedder",
        ("search", "mcp", "reindex"),
    ),
    (
        "GEMINI_API_KEY",
        "LLM expansion and rerank through the Gemini API",
        ("search", "mcp", "doctor"),
    ),
    ("GOOGLE_API_KEY", "the Gemini API's key when GEMINI_API_KEY is unset", ("search", "mcp")),
    (
        "GOOGLE_GEMINI_BASE_URL",
        "another Gemini API endpoint (a proxy or gateway)",
        ("search", "mcp"),
    ),
    ("BOOST_RERANK_MODEL", "the model that reranks the shortlist", ("search", "mcp")),
    ("BOOST_RERANK_TIMEOUT", "seconds the whole rerank may take", ("search", "mcp")),
    ("BOOST_EXPAND_MODEL", "the model that adds keywords to a query", ("search",)),
    ("BOOST_EXPAND_TIMEOUT", "seconds query expansion may take", ("search",)),
    ("BOOST_ENRICH_MODEL", "the model 'boost reindex --enrich' asks", ("reindex",)),
    (
        "BOOST_EMBED_PROVIDER",
        "embedding provider: local, voyage, openai, openai-compatible, hash or none "
        "(default: openai-compatible with BOOST_EMBED_BASE_URL, else local when its extra is "
        "installed; a remote API only when named)",
        ("reindex", "search", "mcp", "doctor", "vectors"),
    ),
    (
        "BOOST_EMBED_MODEL",
        "embedding model (default: the provider's)",
        ("reindex", "search", "vectors"),
    ),
    (
        "BOOST_EMBED_BASE_URL",
        "an OpenAI-compatible embeddings server, e.g. http://127.0.0.1:8765/v1",
        ("reindex", "search"),
    ),
    ("BOOST_EMBED_API_KEY", "key for an openai-compatible server", ("reindex", "search")),
    ("BOOST_EMBED_DIMENSIONS", "vector size, for models that can shorten", ("reindex", "search")),
    ("BOOST_EMBED_TIMEOUT", "seconds per embedding request", ("reindex", "search")),
    (
        "VOYAGE_API_KEY",
        "the key of Voyage AI embeddings (BOOST_EMBED_PROVIDER=voyage)",
        ("reindex", "search"),
    ),
    (
        "BOOST_NO_LLM",
        "1 turns the LLM off (no expansion, no rerank; also 'boost config set llm off')",
        ("search", "mcp", "doctor"),
    ),
    (
        "BOOST_MCP_ROOT",
        "the folder boost_install may write into when the MCP client shares no roots",
        ("mcp",),
    ),
    (
        "BOOST_NUMPY_RANKING",
        "0 ranks BM25 in pure Python even where numpy is loaded (the same results)",
        ("mcp", "search"),
    ),
    (
        "BOOST_MCP_TOKEN",
        "mcp --http: the bearer token clients must send (needed to bind beyond loopback)",
        ("mcp",),
    ),
    ("NO_COLOR", "any non-empty value turns colour off (--color always wins)", ()),
    ("COLUMNS", "the width to wrap and fit tables to (default: the terminal's)", ()),
    ("BOOST_COMPLETE", "set by the completion scripts: print completions and exit", ()),
)

EXIT_CODES: Sequence[Tuple[int, str]] = (
    (0, "success (also: nothing matched, unless --exit-status; output pipe closed early)"),
    (
        1,
        "an error; boost doctor: it printed fix lines; search --exit-status: no match; "
        "boost audit: a high-severity finding",
    ),
    (2, "usage: a bad option, argument or value"),
    (3, "not found, or a name that matches several entries"),
    (4, "git failed, or a tap source was refused before git ran"),
    (5, "the search index is damaged, missing or of another version"),
    (6, "an LLM or embedding provider failed or is not configured"),
    (7, "the config file cannot be read"),
    (10, "nothing is tapped yet"),
    (130, "interrupted (Ctrl-C)"),
)

# Typed as shown, each example works (tests/test_topics.py parses every one).
EXAMPLES: Dict[str, List[Tuple[str, str]]] = {
    "tap": [
        ("boost tap anthropics/skills", "a GitHub registry"),
        ("boost tap ~/work/team-skills --name team", "a local git repository"),
        ("boost tap --defaults", "the starter set from the bundled catalog"),
        ("boost tap --catalog --list --type rule", "browse the catalog, tap nothing"),
    ],
    "taps": [("boost taps", ""), ("boost taps --json", "for scripts")],
    "untap": [("boost untap example", "")],
    "update": [("boost update", "every tap"), ("boost update example", "one tap")],
    "search": [
        ('boost search "test my React app"', ""),
        ('boost search "migrate a postgres schema" --kind skill -n 5', ""),
        ('boost search "review a pull request" --json --fields id,score,file', "for scripts"),
        ('boost search "write release notes" --explain', "how the ranking was made"),
    ],
    "show": [("boost show example:jest-runner", ""), ("boost show jest-runner --json", "")],
    "audit": [
        ("boost audit", "every tap"),
        ("boost audit example --severity medium", "one tap, medium and high only"),
        ("boost audit --json", "for CI: exits 1 on a high-severity finding"),
    ],
    "install": [
        ("boost install example:jest-runner", "a skill into ./.claude/skills/"),
        ("boost install example:jest-runner --agent agents --user", "into ~/.agents/skills/"),
        ("boost install example:typescript-strict --dry-run", "a rule into .cursor/rules/"),
        ("boost install --upgrade", "every installed item whose tap moved on"),
    ],
    "installed": [("boost installed", "in this project"), ("boost installed --user", "")],
    "outdated": [("boost outdated", ""), ("boost outdated --json", "")],
    "uninstall": [("boost uninstall example:jest-runner", "")],
    "restore": [
        ("boost restore", "what .boost/installed.json lists, at its recorded bytes"),
        ("boost restore --dry-run", ""),
    ],
    "config": [
        ("boost config list", ""),
        ("boost config set llm off", "no LLM, ever (like --no-llm)"),
        ("boost config set limit 5", "the default number of results"),
    ],
    "reindex": [
        ("boost reindex", "only changed taps"),
        ("boost reindex --force", "everything"),
        ("boost reindex --dense", "and the vector store (pip install '.[local]' in boost's clone)"),
    ],
    "vectors": [
        ("boost vectors export example example.vectors.jsonl", "share a tap's vectors"),
        ("boost vectors import example.vectors.jsonl", "use them: nothing is embedded"),
    ],
    "bundle": [
        ("boost bundle export team.bundle", "every tap, for replicas"),
        ("boost bundle export one.bundle --tap example", "one tap"),
        ("boost bundle import team.bundle", "on a replica: nothing is cloned or rebuilt"),
    ],
    "mcp": [
        ("boost mcp register claude", "register it with Claude Code (claude mcp add)"),
        ("boost mcp --http 8765", "a team server on http://127.0.0.1:8765/mcp"),
        ("boost mcp register --list", "the MCP hosts boost knows and found"),
        ("boost mcp register cursor --dry-run", "what it would write, changing nothing"),
        ("boost mcp --check", "start it as a host would and list its tools"),
    ],
    "discover": [('boost discover "pdf forms"', "needs gh, logged in")],
    "doctor": [("boost doctor", ""), ("boost doctor --json", "")],
    "help": [("boost help environment", ""), ("boost help search", "same as boost search --help")],
    "completion": [('eval "$(boost completion bash)"', "in ~/.bashrc")],
}


def _rows(title: str, rows: Sequence[Tuple[str, str]]) -> str:
    """``title:`` then one ``name  text`` row each, the text wrapped under itself to the
    width argparse uses for --help (the terminal's, or COLUMNS, less 2)."""
    pad = max(len(name) for name, _ in rows) + 4
    columns = max(shutil.get_terminal_size().columns - 2, pad + 30)
    lines = [f"{title}:"]
    for name, text in rows:
        lines += textwrap.wrap(
            text,
            width=columns,
            initial_indent=f"  {name}".ljust(pad),
            subsequent_indent=" " * pad,
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def examples_text(command: str) -> str:
    """The examples block of ``command``'s --help (empty when it has none): each command
    under its comment, so a long one never shares a line with its explanation."""
    rows = EXAMPLES.get(command, [])
    if not rows:
        return ""
    lines = ["examples:"]
    for cmd, why in rows:
        lines += [f"  # {why}", f"  {cmd}"] if why else [f"  {cmd}"]
    return "\n".join(lines)


def environment_text(command: str = "") -> str:
    """The variables that change ``command`` (all of them when empty), one per line."""
    rows = [(n, w) for n, w, cmds in ENVIRONMENT if not command or command in cmds]
    return _rows("environment", rows) if rows else ""


def exit_codes_text() -> str:
    return _rows("exit codes", [(str(code), what) for code, what in EXIT_CODES])


OUTPUT = """\
output:
  Results go to stdout, everything else (notes, progress, errors) to stderr.
  On a terminal, text wraps at the terminal's width (or COLUMNS) and tables are
  fitted to it; into a pipe or a file lines are never wrapped or cut.
  --color auto|always|never: auto colours a terminal only, and not when NO_COLOR
  is set (https://no-color.org) or TERM=dumb.
  -q/--quiet drops progress and notes; -v/--verbose adds detail on stderr.
  --json prints machine-readable output (search hits: id first; --fields picks
  the keys, e.g. --fields id,score,file; 'meta' only when asked for).
  search shows 'match NN%': the retrieval score as a share of the best score in
  the list (--explain and --json show the raw score).
  Errors are one line: 'boost: error: <what happened> — <how to fix it>'.
  Global options (--debug, -q, -v, --color) go before or after the command."""

COMPLETION = """\
completion:
  boost completes commands, options, their values and tap names in bash, zsh
  and fish, with no extra package. Add one line to your shell's start-up file:
    bash   ~/.bashrc    eval "$(boost completion bash)"
    zsh    ~/.zshrc     eval "$(boost completion zsh)"      (after compinit)
    fish   run once:    boost completion fish > ~/.config/fish/completions/boost.fish"""

SOURCES = """\
sources:
  boost tap SOURCE accepts:
    OWNER/REPO                  a GitHub repository (unless a local folder has that name)
    https://host/owner/repo     any git host over https
    ssh://host/path, git@host:owner/repo
    file:///path, /path, ./path a local git repository (it is cloned: commit your
                                edits, boost warns when the source has uncommitted changes)
  A local repository's tap is named after its folder; a remote one OWNER__REPO;
  --name picks another. Sources that look like git options or name other
  transports (ext::, fd::, git://, http://) are refused before git runs."""

TOPICS: Dict[str, Tuple[str, str]] = {
    "environment": ("the environment variables boost reads", ""),
    "exit-codes": ("what each exit code means", ""),
    "output": ("width, colour, quiet/verbose, --json and --fields", OUTPUT),
    "completion": ("shell completion for bash, zsh and fish", COMPLETION),
    "sources": ("what boost tap accepts and how taps are named", SOURCES),
}


def topic_text(name: str) -> str:
    """The text of topic ``name`` (a key of `TOPICS`)."""
    if name == "environment":
        return environment_text()
    if name == "exit-codes":
        return exit_codes_text()
    return TOPICS[name][1]


def topics_list() -> str:
    return _rows("help topics", [(name, what) for name, (what, _) in TOPICS.items()])
