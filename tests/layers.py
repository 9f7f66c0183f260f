"""The import-layer checker behind tests/test_layers.py (stdlib `ast` only).

A module may import only from its own layer or a lower one. An import inside a function
(lazy, to keep start-up fast) must also be on an allow-list, so each one is a decision.
Imports under ``if TYPE_CHECKING:`` are checked for direction only. Any import cycle
among the package's modules fails, whatever the layers. Every problem names its edge.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: Sequence[Tuple[str, Sequence[str]]] = (
    (
        "base",
        (
            "boost_cli.core.errors",
            "boost_cli.core.paths",
            "boost_cli.core.atomic",
            "boost_cli.core.lock",
            "boost_cli.core.config",
            "boost_cli.core.models",
            "boost_cli.core.text",
            "boost_cli.core.binio",
            "boost_cli.core.http",
            "boost_cli.core.http_wire",
            "boost_cli.core.http_serve",
            "boost_cli.core.bundlefile",
            "boost_cli.core.settings",
            "boost_cli.core.advice",
            "boost_cli.core.web_assets",
            "boost_cli.core.websession",
        ),
    ),
    (
        "pure",
        (
            "boost_cli.core.frontmatter",
            "boost_cli.core.chunker",
            "boost_cli.core.tokenize",
            "boost_cli.core.stem",
            "boost_cli.core.bm25",
            "boost_cli.core.related",
            "boost_cli.core.fusion",
            "boost_cli.core.origin",
            "boost_cli.core.trust",
            "boost_cli.core.trust_names",
            "boost_cli.core.trust_reading",
            "boost_cli.core.enrich.prompt",
            "boost_cli.core.enrich.answer",
            "boost_cli.core.webpage",
        ),
    ),
    (
        "taps",
        (
            "boost_cli.core.gitutil",
            "boost_cli.core.catalog",
            "boost_cli.core.registry",
            "boost_cli.core.lookup",
            "boost_cli.core.skillmap",
            "boost_cli.core.discover",
            "boost_cli.core.trust_scan",
        ),
    ),
    (
        "engines",
        (
            "boost_cli.core.index",
            "boost_cli.core.embed",
            "boost_cli.core.dense",
            "boost_cli.core.lexical",
            "boost_cli.core.enrich.store",
        ),
    ),
    ("seam", ("boost_cli.core.retrieval",)),
    (
        "services",
        (
            "boost_cli.core.search",
            "boost_cli.core.indexing",
            "boost_cli.core.llm",
            "boost_cli.core.status",
            "boost_cli.core.records",
            "boost_cli.core.bundle",
            "boost_cli.core.skillserve",
            "boost_cli.core.hosts",
            "boost_cli.core.install",
            "boost_cli.core.why",
            "boost_cli.core.enrich",
            "boost_cli.core.webapp",
        ),
    ),
    ("commands", ("boost_cli.commands",)),
    ("entry", ("boost_cli.cli", "boost_cli.__main__", "boost_cli.completion", "boost_cli.topics")),
)

# The MCP protocol knows nothing of boost's domain: base only, whatever its rank.
PROTOCOL = (
    "boost_cli.core.mcp",
    "boost_cli.core.mcp_http",
    "boost_cli.core.mcp_log",
    "boost_cli.core.protocol",
    "boost_cli.core.schema",
)

# Layers a layer may not import although they rank below it.
FORBIDDEN: Mapping[str, Set[str]] = {"engines": {"taps"}}


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    lazy: bool
    type_only: bool

    def __str__(self) -> str:
        how = "type-only " if self.type_only else "lazy " if self.lazy else ""
        return f"{self.importer} -> {self.imported} ({how}import, line {self.line})"


# Package roots: base, but they lend their layer to no module below them.
ROOTS = ("boost_cli", "boost_cli.core")


def layer_of(module: str) -> Optional[str]:
    """The layer of ``module``: "protocol", a name from `LAYERS`, or None if unknown."""
    if module in ROOTS:
        return "base"
    if any(module == p or module.startswith(p + ".") for p in PROTOCOL):
        return "protocol"
    best, best_len = None, -1
    for layer, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = layer, len(p)
    return best


def rank(layer: str) -> int:
    if layer == "protocol":
        return 0  # may import base only; anything above may import it
    return [name for name, _ in LAYERS].index(layer)


def modules(package_dir: Path, package: str) -> Dict[str, Path]:
    """Every module under ``package_dir`` (the folder of ``package``) by dotted name."""
    out: Dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        out[".".join([package, *parts])] = path
    return out


def _resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _walk(
    node: ast.AST, in_function: bool, type_only: bool
) -> Iterator[Tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk(child, True, type_only)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, in_function, True
                yield from _walk(stmt, in_function, True)
            for stmt in child.orelse:
                yield stmt, in_function, type_only
                yield from _walk(stmt, in_function, type_only)
        else:
            yield child, in_function, type_only
            yield from _walk(child, in_function, type_only)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def edges(mods: Mapping[str, Path], package: str) -> List[Edge]:
    """Every import of one of ``mods`` by another, resolved to the imported module."""
    out: List[Edge] = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node, lazy, type_only in _walk(tree, False, False):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = _resolve(node, name, is_package)
                # `from pkg import sub` imports the submodule when there is one.
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in mods]
                targets = subs or [mod]
            for target in targets:
                while target and target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in mods and target != name and target.startswith(package):
                    out.append(Edge(name, target, getattr(node, "lineno", 0), lazy, type_only))
    return out


def _ancestors(module: str) -> Set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def check(
    mods: Mapping[str, Path],
    package: str,
    lazy_allowed: Iterable[Tuple[str, str]] = (),
) -> List[str]:
    """Every layering problem in ``mods``, one line each naming the edge."""
    allowed = set(lazy_allowed)
    problems: List[str] = []
    all_edges = edges(mods, package)
    for name in mods:
        if layer_of(name) is None:
            problems.append(f"{name} is in no layer: add it to tests/layers.py LAYERS")
    for e in all_edges:
        if e.imported in _ancestors(e.importer):
            continue  # a package's __init__ runs first anyway: importing it adds no edge
        src, dst = layer_of(e.importer), layer_of(e.imported)
        if src is None or dst is None:
            continue
        if src == "protocol" and dst not in ("base", "protocol"):
            problems.append(f"upward import: {e} — the protocol layer may import base only")
        elif dst in FORBIDDEN.get(src, set()):
            problems.append(f"forbidden import: {e} — {src} never imports {dst}")
        elif rank(dst) > rank(src) and not (dst == "protocol" and rank(src) > 0):
            problems.append(f"upward import: {e} — {src} may not import {dst}")
        elif e.lazy and not e.type_only and (e.importer, e.imported) not in allowed:
            problems.append(f"lazy import not on the allow-list: {e}")
    problems.extend(f"import cycle: {c}" for c in cycles(all_edges))
    return problems


def cycles(all_edges: Sequence[Edge]) -> List[str]:
    """Each strongly connected group of modules (runtime imports), as ``a -> b -> a``."""
    graph: Dict[str, Set[str]] = {}
    for e in all_edges:
        if e.type_only or e.imported in _ancestors(e.importer):
            continue
        graph.setdefault(e.importer, set()).add(e.imported)
        graph.setdefault(e.imported, set())
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[str] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                order = sorted(group)
                found.append(" -> ".join([*order, order[0]]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found
