"""The package keeps its layers: every import goes to its own layer or a lower one, lazy
imports are deliberate (allow-listed), and no module imports itself in a circle."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from tests import layers

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "boost_cli"

# Imports inside functions: each keeps start-up fast (or breaks no cycle) and goes no higher.
LAZY_ALLOWED = {
    ("boost_cli.core.paths", "boost_cli.core.errors"),
    # `boost search` and `boost taps` never clone or scan: git and the scanner load on use.
    ("boost_cli.core.registry", "boost_cli.core.catalog"),
    ("boost_cli.core.registry", "boost_cli.core.gitutil"),
    # ... and the trust scan runs with the catalog scan (tap, update), and only then.
    ("boost_cli.core.registry", "boost_cli.core.trust_scan"),
    # A search reads cached findings; the scan's walking rules load only for a live scan.
    ("boost_cli.core.trust_scan", "boost_cli.core.catalog"),
    # ... and the Skills extension's map counts a skill's files when it is built.
    ("boost_cli.core.skillmap", "boost_cli.core.catalog"),
    # A reindex fills in the findings of a tap that has none (a stat when it has).
    ("boost_cli.core.indexing", "boost_cli.core.trust_scan"),
    # The embedding stack loads only when a vector store exists.
    ("boost_cli.core.retrieval", "boost_cli.core.dense"),
    ("boost_cli.core.retrieval", "boost_cli.core.embed"),
    # A bundle export reads the vector store only when there is one.
    ("boost_cli.core.bundle", "boost_cli.core.dense"),
    # `boost mcp` over stdio never loads the HTTP transport.
    ("boost_cli.commands.mcp", "boost_cli.core.mcp_http"),
    # A query never chunks: the index and dense text code loads its parsers only to build.
    ("boost_cli.core.index.contents", "boost_cli.core.chunker"),
    ("boost_cli.core.index.contents", "boost_cli.core.frontmatter"),
    # ... nor reads the enrichment store: only a segment build adds its chunk.
    ("boost_cli.core.index.segment", "boost_cli.core.enrich.store"),
    ("boost_cli.core.index.segment", "boost_cli.core.enrich.prompt"),
    ("boost_cli.core.index.segment", "boost_cli.core.chunker"),
    # A search reads the prompt version and stored digests; only an item is parsed.
    ("boost_cli.core.enrich.prompt", "boost_cli.core.chunker"),
    ("boost_cli.core.enrich.prompt", "boost_cli.core.frontmatter"),
    # A dense query never chunks: the text-unit code loads its parsers only to build.
    ("boost_cli.core.dense.units", "boost_cli.core.chunker"),
    ("boost_cli.core.dense.units", "boost_cli.core.frontmatter"),
    # The LLM client loads only when a search may rerank or expand.
    ("boost_cli.core.search", "boost_cli.core.llm"),
    ("boost_cli.core.search", "boost_cli.core.llm.expand"),
    # A search process never loads the build side (workers, subprocesses, the chunker).
    ("boost_cli.core.index", "boost_cli.core.index.builder"),
    ("boost_cli.core.search", "boost_cli.core.llm.rerank"),
    # ... nor the enrichment store unless the home has one.
    ("boost_cli.core.search", "boost_cli.core.enrich.lookup"),
    # Only a keyword-bound search asks whether an embedder is there, for its hint.
    ("boost_cli.core.search", "boost_cli.core.embed"),
    # ... and that question needs neither the tokenizer nor the int8 rewriter: they load
    # with a model, as numpy and onnxruntime do.
    ("boost_cli.core.embed.local", "boost_cli.core.embed.wordpiece"),
    ("boost_cli.core.embed.local", "boost_cli.core.embed.onnx_int8"),
    # tap/update/untap import the write paths; the engines load only when an index exists.
    ("boost_cli.core.indexing", "boost_cli.core.index"),
    ("boost_cli.core.indexing", "boost_cli.core.embed"),
    ("boost_cli.core.indexing", "boost_cli.core.dense"),
    # `boost reindex` without --dense, a no-op in the common case, loads no vector code.
    ("boost_cli.commands.reindex", "boost_cli.core.dense"),
    # ... nor any enrichment code (an LLM client, the store) without --enrich.
    ("boost_cli.commands.reindex", "boost_cli.core.enrich.run"),
    ("boost_cli.commands.reindex", "boost_cli.core.enrich.store"),
    # Tap names are read only when a shell asks for completions.
    ("boost_cli.cli", "boost_cli.core.registry"),
    # Only boost_get_skill's folder reads need the scan's rules (and its parsers).
    ("boost_cli.core.lookup", "boost_cli.core.catalog"),
    # `boost search --json` reads the skill map from its cache; only a build parses.
    ("boost_cli.core.skillmap", "boost_cli.core.frontmatter"),
}


def test_package_keeps_its_layers() -> None:
    problems = layers.check(layers.modules(PACKAGE, "boost_cli"), "boost_cli", LAZY_ALLOWED)
    assert problems == [], "\n".join(problems)


def _package(tmp_path: Path, files: Dict[str, str]) -> Dict[str, Path]:
    for rel, text in files.items():
        path = tmp_path / "boost_cli" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return layers.modules(tmp_path / "boost_cli", "boost_cli")


CLEAN = {
    "__init__.py": "",
    "core/__init__.py": "",
    "core/errors.py": "",
    "core/models.py": "from boost_cli.core import errors\n",
    "core/registry.py": "from boost_cli.core.models import x\n",
    "core/search.py": "from boost_cli.core import registry, models\n",
}


def test_checker_accepts_downward_imports(tmp_path: Path) -> None:
    assert layers.check(_package(tmp_path, CLEAN), "boost_cli") == []


def test_checker_names_an_upward_import(tmp_path: Path) -> None:
    mods = _package(tmp_path, {**CLEAN, "core/models.py": "from boost_cli.core import search\n"})
    problems = layers.check(mods, "boost_cli")
    assert any(
        p.startswith("upward import: boost_cli.core.models -> boost_cli.core.search")
        and "base may not import services" in p
        for p in problems
    ), problems


def test_checker_names_an_engine_importing_the_taps_layer(tmp_path: Path) -> None:
    mods = _package(
        tmp_path,
        {
            **CLEAN,
            "core/index/__init__.py": "",
            "core/index/build.py": "import boost_cli.core.registry\n",
        },
    )
    assert layers.check(mods, "boost_cli") == [
        "forbidden import: boost_cli.core.index.build -> boost_cli.core.registry "
        "(import, line 1) — engines never imports taps"
    ]


def test_checker_requires_lazy_imports_on_the_allow_list(tmp_path: Path) -> None:
    lazy = "def f():\n    from boost_cli.core import models\n"
    mods = _package(tmp_path, {**CLEAN, "core/search.py": lazy})
    assert layers.check(mods, "boost_cli") == [
        "lazy import not on the allow-list: boost_cli.core.search -> boost_cli.core.models "
        "(lazy import, line 2)"
    ]
    allowed = {("boost_cli.core.search", "boost_cli.core.models")}
    assert layers.check(mods, "boost_cli", allowed) == []


def test_checker_finds_cycles_and_unknown_modules(tmp_path: Path) -> None:
    mods = _package(
        tmp_path,
        {
            **CLEAN,
            "core/fusion.py": "from boost_cli.core.chunker import a\n",
            "core/chunker.py": "def f():\n    from boost_cli.core import fusion\n",
            "core/mystery.py": "",
        },
    )
    problems = layers.check(
        mods, "boost_cli", {("boost_cli.core.chunker", "boost_cli.core.fusion")}
    )
    assert "boost_cli.core.mystery is in no layer: add it to tests/layers.py LAYERS" in problems
    assert (
        "import cycle: boost_cli.core.chunker -> boost_cli.core.fusion -> boost_cli.core.chunker"
        in problems
    )


def test_protocol_layer_imports_base_only(tmp_path: Path) -> None:
    mods = _package(tmp_path, {**CLEAN, "core/mcp.py": "from boost_cli.core import registry\n"})
    problems = layers.check(mods, "boost_cli")
    assert problems and "the protocol layer may import base only" in problems[0]


@pytest.mark.parametrize(
    "module, layer",
    [
        ("boost_cli.core.index.reader", "engines"),
        ("boost_cli.core.errors", "base"),
        ("boost_cli.core", "base"),
        ("boost_cli.core.nothing", None),
        ("boost_cli.commands.search", "commands"),
        ("boost_cli.core.schema", "protocol"),
    ],
)
def test_layer_of(module: str, layer: str) -> None:
    assert layers.layer_of(module) == layer
