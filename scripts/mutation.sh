#!/usr/bin/env bash
# `make mutation`: mutmut over the pure core modules, then the score. Slow; not part of CI.
# Usage: scripts/mutation.sh [VENV_BIN] [module paths...]
set -uo pipefail
bin=${1:-.venv/bin}
shift || true
targets=${*:-boost_cli/core/bm25.py,boost_cli/core/tokenize.py,boost_cli/core/stem.py,boost_cli/core/chunker.py,boost_cli/core/frontmatter.py,boost_cli/core/fusion.py,boost_cli/core/schema.py,boost_cli/core/lexical.py,boost_cli/core/catalog.py}
rm -rf .mutmut-cache
"$bin/mutmut" run --paths-to-mutate "$targets" \
  --runner "$bin/python -m pytest -x -q -p no:cacheprovider tests/test_bm25.py tests/test_tokenize.py tests/test_stem.py tests/test_chunker.py tests/test_frontmatter.py tests/test_fusion.py tests/test_schema.py tests/test_lexical.py tests/test_catalog.py" \
  --simple-output >/dev/null 2>&1
"$bin/mutmut" results | tail -n 40
"$bin/python" - <<'PY'
import re, subprocess, sys
out = subprocess.run([sys.argv[0] if False else ".venv/bin/mutmut", "results"], capture_output=True, text=True).stdout
def count(label):
    m = re.search(label + r" \((\d+)\)", out)
    return int(m.group(1)) if m else 0
survived, timeout, suspicious = count("Survived"), count("Timed out"), count("Suspicious")
killed_line = subprocess.run([".venv/bin/mutmut", "result-ids", "killed"], capture_output=True, text=True).stdout.split()
killed = len(killed_line)
total = killed + survived + timeout + suspicious
print(f"mutation score: {killed}/{total} killed = {100 * killed / max(total, 1):.1f}% (survived {survived}, timeout {timeout}, suspicious {suspicious})")
PY
