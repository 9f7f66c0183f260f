#!/usr/bin/env bash
# `make mutation`: mutmut over the pure core modules, then the mutation score.
# Slow (minutes per module); not part of CI. mutmut edits files in place while it runs:
# don't run other work in this checkout meanwhile.
# Usage: scripts/mutation.sh [VENV_BIN] [comma-separated module paths]
set -uo pipefail
bin=${1:-.venv/bin}
targets=${2:-boost_cli/core/bm25.py,boost_cli/core/tokenize.py,boost_cli/core/stem.py,boost_cli/core/chunker.py,boost_cli/core/frontmatter.py,boost_cli/core/fusion.py,boost_cli/core/schema.py}
tests=""
for t in bm25 tokenize stem chunker frontmatter fusion schema index; do
  [ -f "tests/test_$t.py" ] && tests="$tests tests/test_$t.py"
done
rm -f .mutmut-cache
echo "mutating: $targets"
echo "tests:   $tests"
"$bin/mutmut" run --paths-to-mutate "$targets" \
  --runner "$bin/python -m pytest -x -q -p no:cacheprovider -p no:randomly $tests" \
  --simple-output > .mutmut-run.log 2>&1
status=$?
count() { "$bin/mutmut" result-ids "$1" 2>/dev/null | wc -w; }
killed=$(count killed); survived=$(count survived); timeout=$(count timeout); suspicious=$(count suspicious)
total=$((killed + survived + timeout + suspicious))
if [ "$total" -eq 0 ]; then
  echo "mutmut produced no results (exit $status); see .mutmut-run.log"
  tail -n 20 .mutmut-run.log
  exit 1
fi
"$bin/python" -c "k,s,t,u,n=$killed,$survived,$timeout,$suspicious,$total; print(f'mutation score: {k+t}/{n} = {100*(k+t)/n:.1f}% (killed {k}, timeout {t}, suspicious {u}, survived {s}); survivors: mutmut results')"
