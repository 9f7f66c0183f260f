"""`boost mcp`: boost's tools on the MCP registry, served over stdio.

Each tool is a thin handler over the same core calls as the CLI; adding a tool is one
more `@registry.tool(...)` here — the protocol code in `core.mcp` never changes.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any, Dict, List, Optional

from boost_cli.core import discover, lookup, records, registry, retrieval, search, status
from boost_cli.core.mcp import Registry, Server, ToolResult, log_to_stderr
from boost_cli.core.models import KINDS

SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 2000,
            "description": "the task, in plain language",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "description": "how many results (default 8)",
        },
        "kind": {
            "type": "string",
            "enum": list(KINDS),
            "description": "only this kind",
        },
        "keywords": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": search.MAX_KEYWORD_CHARS},
            "minItems": 1,
            "maxItems": search.MAX_KEYWORDS,
            "description": "3-8 words or short phrases a skill author would use for this task: "
            "technical terms, tool names, synonyms. They widen the search beyond the user's "
            "wording, e.g. for 'make my site work for blind users': "
            '["accessibility", "a11y", "screen reader", "WCAG", "aria"]',
        },
        "tap": {"type": "string", "minLength": 1, "description": "only this tap (registry)"},
        "rerank": {
            "type": "boolean",
            "description": "rerank with an LLM when one is configured (slower: seconds); default false, BM25/hybrid order",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

_HIT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "tap": {"type": "string"},
        "kind": {"type": "string"},
        "description": {"type": "string"},
        "why": {"type": "string"},
        "score": {"type": "number"},
        "file": {"type": "string"},
        "url": {"type": "string"},
        "also_in": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "name", "tap", "kind", "description", "score", "file", "url"],
}

SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "engine": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "results": {"type": "array", "items": _HIT_SCHEMA},
    },
    "required": ["query", "engine", "results"],
}


def build_registry(engines: Optional[retrieval.Engines] = None) -> Registry:
    """boost's tools. ``engines`` keeps the indexes open between calls (one per server)."""
    reg = Registry()
    engines = engines or retrieval.Engines()

    @reg.tool(
        "boost_search",
        "Find the best AI-agent skills, rules and workflows for a task described in plain language. "
        "Pass the user's task as `query` and, in `keywords`, 3-8 words or short phrases a skill "
        "author would use (technical terms, tool names, synonyms): skills are often written in "
        "other words than the user's, and keywords find them. Example: query 'test my React app', "
        'keywords ["jest", "react testing library", "component tests", "vitest"]. '
        "Returns a ranked shortlist with a one-line reason per pick; read one with boost_get_skill.",
        SEARCH_INPUT,
        output_schema=SEARCH_OUTPUT,
    )
    def boost_search(args: Dict[str, Any]) -> ToolResult:
        opts = search.SearchOptions(
            query=args["query"],
            limit=int(args.get("limit", 8)),
            kind=args.get("kind"),
            taps=(args["tap"],) if args.get("tap") else (),
            # The caller is an LLM already: reranking (a `claude -p` process or an API call)
            # costs seconds per call, so it is opt-in here.
            rerank="auto" if args.get("rerank") else "none",
            keywords=search.keyword_list(args.get("keywords") or ()),
        )
        result = search.run(opts, engines=engines)
        taps = {t.name: t for t in registry.list_taps()}
        results = [records.mcp_record(h, taps) for h in result.hits]
        lines: List[str] = []
        for i, r in enumerate(results, start=1):
            lines.append(f"{i}. {r['id']} [{r['kind']}] — {r.get('why') or r['description']}")
            lines.append(f"   file: {r['file']}")
        if not results:
            lines.append(f"No matches for {opts.query!r}.")
        if opts.keywords:
            lines.append(f"keywords used: {', '.join(opts.keywords)}")
        for note in result.notes:
            lines.append(f"note: {note}")
        structured = {
            "query": opts.query,
            "engine": result.engine,
            "keywords": list(opts.keywords),
            "notes": result.notes,
            "results": results,
        }
        return ToolResult(text="\n".join(lines), structured=structured)

    @reg.tool(
        "boost_get_skill",
        "Return the full text of a skill, rule or workflow by NAME, TAP:NAME or TAP:PATH, to apply it.",
        {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "description": "NAME, TAP:NAME or TAP:PATH",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    )
    def boost_get_skill(args: Dict[str, Any]) -> ToolResult:
        found = lookup.read(args["name"])
        entry = found.entry
        head = f"# {entry.qualified_name} [{entry.kind}] — file: {found.file}\n\n"
        return ToolResult(text=head + found.text)

    @reg.tool(
        "boost_list_taps",
        "List the tapped registries with their commit, item counts and search-index freshness.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    )
    def boost_list_taps(args: Dict[str, Any]) -> ToolResult:
        taps = registry.list_taps()
        # A damaged index must not hide the taps: list them and say what is wrong.
        state = status.index_state(engines) if taps else status.IndexState(False, {})
        rows = status.tap_rows(taps, state)
        lines = [
            f"{r['name']} @ {r['commit'][:10]}: {r['counts'].get('skill', 0)} skills, {r['counts'].get('rule', 0)} rules, "
            f"{r['counts'].get('workflow', 0)} workflows ({r['index']})"
            for r in rows
        ] or ["No taps yet: run 'boost tap --defaults' in a terminal."]
        if state.damaged is not None:
            lines.append(f"note: the search index cannot be read ({state.damaged})")
        return ToolResult(text="\n".join(lines), structured={"taps": rows})

    @reg.tool(
        "boost_discover_github",
        "Search GitHub for repositories holding SKILL.md files (needs the gh CLI, logged in).",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 500},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    )
    def boost_discover_github(args: Dict[str, Any]) -> ToolResult:
        repos = discover.discover_github(args["query"], limit=int(args.get("limit", 10)))
        lines = [f"{r.repo} ({r.hits} SKILL.md) {r.url}" for r in repos] or [
            "No repositories matched."
        ]
        lines.append("Tap one with: boost tap OWNER/REPO")
        return ToolResult(
            text="\n".join(lines), structured={"repositories": [r.to_dict() for r in repos]}
        )

    return reg


INSTRUCTIONS = (
    "boost finds AI-agent skills, rules and workflows for a task. Call boost_search with the task "
    "in plain language as `query`, plus `keywords`: 3-8 words or short phrases the author of a "
    "matching skill would likely use (technical terms, tool names, synonyms) — this widens the "
    "search beyond the user's wording. Then call boost_get_skill with the chosen id (TAP:NAME) "
    "to read and apply it."
)


def cmd_mcp(args: argparse.Namespace) -> int:
    log = log_to_stderr(logging.WARNING)  # never blocks on a client that ignores stderr
    Server(build_registry(), instructions=INSTRUCTIONS).serve_stdio()
    if log is not None:
        log.flush_for(0.5)
    return 0
