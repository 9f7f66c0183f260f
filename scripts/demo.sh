#!/usr/bin/env bash
# `make demo`: turn the bundled example registry into a local git repo, tap it into a
# demo BOOST_HOME, index it, and run two example searches. Every command is echoed as it
# can be typed (after the export line), then run exactly as echoed.
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
say_and_run boost search --no-rerank "test my React app" --limit 5
say_and_run boost search --no-rerank "make my web page usable with a screen reader" --limit 5
echo "The demo home stays in $home. To keep using it in this shell:"
echo "  export BOOST_HOME=$(q "$home") PATH=$(q "$bindir"):\$PATH"
echo "  boost search \"review a pull request\""
