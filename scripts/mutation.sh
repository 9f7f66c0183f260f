#!/usr/bin/env bash
# `make mutation`: mutmut over each core module against the tests that exercise it, then one
# score line per module and the overall. Slow (minutes per module); not part of CI. mutmut
# edits the module in place while it runs: don't run other work in this checkout meanwhile.
#
# Usage: scripts/mutation.sh [VENV_BIN] [MODULE ...]    (or: make mutation MODULES="fusion bm25")
# A module's results stay in mutants/<module>.cache; its survivors, each with its line:
#   scripts/mutation.sh --survivors fusion
# REUSE=1 starts from those results for a quick look after adding tests: a killed mutant stays
# killed, the others run again. Only a full run gives the score: mutmut 2.5 looks cached
# results up by a line's text, so a mutant on a line repeating an earlier one's text keeps
# whatever the earlier line's mutant had (not retested).
# score: killed (suspicious ones too: killed, slowly) out of all mutants; +timeout: with the
# timed-out ones, which on a loaded machine may include survivors. Exits 1 when a module's
# score is below $MIN %.
set -uo pipefail
if [ "${1:-}" = --survivors ]; then
  bin=${BIN:-.venv/bin}
  for m in "${@:2}"; do
    [ -f "mutants/$m.cache" ] || { echo "mutation: no mutants/$m.cache: run it first" >&2; exit 2; }
    cp "mutants/$m.cache" .mutmut-cache
    # "id line" for each survivor (mutmut's cache numbers lines from 0).
    "$bin/python" -c 'import sqlite3
for i, n in sqlite3.connect(".mutmut-cache").execute("select m.id, l.line_number from Mutant m join Line l on m.line = l.id where m.status = ? order by l.line_number, m.id", ("bad_survived",)):
    print(i, n + 1)' | while read -r id line; do
      echo "== $m.py:$line (mutant $id)"
      "$bin/mutmut" show "$id" | tail -n +3
    done
    rm -f .mutmut-cache
  done
  exit 0
fi
bin=${1:-.venv/bin}
shift $(($# > 0 ? 1 : 0))
modules=${*:-${MODULES:-bm25 fusion retrieval mcp schema tokenize stem chunker frontmatter}}
MIN=80

# The tests that exercise each module, fastest first (-x stops at the first failure).
tests_for() {
  case $1 in
    mcp) echo tests/test_mcp_protocol.py tests/test_mcp_fuzz.py ;;
    *) echo "tests/test_$1.py" ;;
  esac
}

# mutmut 2 counts any exit status but 1 as "tests pass": a mutant that breaks the module's
# import (pytest exits 2) would survive. Any failure exits 1 here. A fixed hypothesis seed: a
# mutant is killed or not the same way on every run.
pytest_cmd="$bin/python -c 'import sys,pytest; sys.exit(1 if pytest.main(sys.argv[1:]) else 0)'"
pytest_cmd="$pytest_cmd -x -q -p no:cacheprovider -p no:randomly --hypothesis-seed=0"
# No .pyc: a mutant of the same size written in the same second as the last one could
# otherwise be served the last one's bytecode.
export PYTHONDONTWRITEBYTECODE=1
# Subprocesses the tests start (`boost mcp` end to end) import this checkout's mutant too.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# tests/test_mcp_fuzz.py runs once per mutant of mcp.py: 100 examples, not 300, per property.
export MCP_FUZZ_EXAMPLES=${MCP_FUZZ_EXAMPLES:-100}
mkdir -p mutants
row() { printf '%-12s %7s %8s %11s %9s %6s %7s %9s\n' "$@"; }
percent() { echo "$(($1 / 10)).$(($1 % 10))%"; }
row module killed timeout suspicious survived total score +timeout
all_k=0 all_t=0 all_u=0 all_s=0 below=""
for m in $modules; do
  src=boost_cli/core/$m.py
  tests=$(tests_for "$m")
  for f in "$src" $tests; do
    [ -f "$f" ] || { echo "mutation: no $f" >&2; exit 2; }
  done
  # mutmut keeps the original in <module>.py.bak while a mutant is in place; a run killed
  # with the script left it there.
  if [ -f "$src.bak" ]; then mv "$src.bak" "$src"; fi
  if [ -n "${REUSE:-}" ] && [ -f "mutants/$m.cache" ]; then
    cp "mutants/$m.cache" .mutmut-cache
  else
    rm -f .mutmut-cache
  fi
  start=$SECONDS
  "$bin/mutmut" run --paths-to-mutate "$src" --runner "$pytest_cmd $tests" --simple-output --no-progress \
    > "mutants/$m.log" 2>&1
  status=$?
  if [ -f "$src.bak" ]; then mv "$src.bak" "$src"; fi # an interrupted run leaves the mutant in place
  count() { "$bin/mutmut" result-ids "$1" 2>/dev/null | wc -w; }
  k=$(count killed) t=$(count timeout) u=$(count suspicious) s=$(count survived)
  n=$((k + t + u + s))
  mv .mutmut-cache "mutants/$m.cache" 2>/dev/null
  if [ "$n" -eq 0 ]; then
    echo "$m: mutmut produced no results (exit $status); see mutants/$m.log" >&2
    tail -n 20 "mutants/$m.log" >&2
    exit 1
  fi
  pct=$((1000 * (k + u) / n))
  row "$m" "$k" "$t" "$u" "$s" "$n" "$(percent "$pct")" "$(percent $((1000 * (k + t + u) / n)))"
  echo "             tests: $tests ($((SECONDS - start)) s)"
  [ "$pct" -lt $((MIN * 10)) ] && below="$below $m"
  all_k=$((all_k + k)) all_t=$((all_t + t)) all_u=$((all_u + u)) all_s=$((all_s + s))
done
n=$((all_k + all_t + all_u + all_s))
row overall "$all_k" "$all_t" "$all_u" "$all_s" "$n" "$(percent $((1000 * (all_k + all_u) / n)))" \
  "$(percent $((1000 * (all_k + all_t + all_u) / n)))"
if [ -n "$below" ]; then
  echo "below $MIN %:$below (survivors: scripts/mutation.sh --survivors <module>)"
  exit 1
fi
