#!/usr/bin/env bash
# `make demo`: turn the bundled example registry into a local git repo, tap it into a
# demo BOOST_HOME, index it, and run two example searches.
set -euo pipefail
boost=${1:-boost}
home=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
repo="$home/example-registry"
rm -rf "$home"
mkdir -p "$home"
cp -R "$here/examples/registry" "$repo"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=boost -c user.email=demo@example.invalid commit -q -m "example registry"
export BOOST_HOME="$home"
echo "\$ boost tap examples/registry   (BOOST_HOME=$home)"
"$boost" tap "$repo" --name example
echo
echo "\$ boost reindex"
"$boost" reindex
echo
echo "\$ boost search \"test my React app\""
"$boost" search --no-rerank "test my React app" --limit 5
echo
echo "\$ boost search \"make my web page usable with a screen reader\""
"$boost" search --no-rerank "make my web page usable with a screen reader" --limit 5
