#!/usr/bin/env bash
# Runs every install line of README.md's "Install" section from a fresh clone, each in a fresh
# venv (pipx and uv: a fresh tool home), on each Python given, and prints what each printed
# (the tail) and what `boost --version` then says. Needs PyPI (setuptools, the extras, pipx, uv).
# Usage: bash scripts/check_install_lines.sh PYTHON...   (default: python3)
# The record of a run is docs/install.md.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pythons=("$@")
[ ${#pythons[@]} -eq 0 ] && pythons=(python3)
git clone -q "$here" "$work/clone"
echo "clone: $(git -C "$work/clone" log -1 --format='%h %s' | cut -c1-70)"
fail=0
show() {  # label, log file, rc, boost binary
    echo "\$ $1   → exit $3"
    grep -v "^WARNING: Location 'file:" "$2" | tail -n 3 | sed 's/^/    /'
    if [ "$3" = 0 ]; then
        echo "    boost --version: $("$4" --version 2>&1)"
        echo "    boost search (nothing tapped): $(BOOST_HOME="$work/home" "$4" search x 2>&1 | head -1 | cut -c1-60)"
    else
        fail=1
    fi
}
for py in "${pythons[@]}"; do
    echo "== $("$py" --version 2>&1) ($py)"
    for line in "pip install ." "pip install '.[local]'" "pip install '.[rag]'" "pip install -e ."; do
        v="$work/venv-$RANDOM"
        "$py" -m venv "$v"
        (cd "$work/clone" && PATH="$v/bin:$PATH" eval "$line") >"$v.log" 2>&1
        rc=$?
        show "$line" "$v.log" "$rc" "$v/bin/boost"
        if [ "$line" = "pip install '.[local]'" ] && [ "$rc" = 0 ]; then
            echo "    embeds: $("$v/bin/python" -c 'import onnxruntime, numpy; from boost_cli.core.embed import local; print("model installed:", local.installed(), "onnxruntime", onnxruntime.__version__)' 2>&1 | tail -1)"
        fi
        rm -rf "$v"
    done
    tools="$work/tools-$RANDOM"
    "$py" -m venv "$tools" && "$tools/bin/python" -m pip install -q pipx uv >"$tools.log" 2>&1
    export PIPX_HOME="$work/pipx-$RANDOM" PIPX_BIN_DIR="$work/pipx-bin-$RANDOM"
    (cd "$work/clone" && "$tools/bin/pipx" install --python "$py" .) >"$tools.pipx.log" 2>&1
    show "pipx install ." "$tools.pipx.log" $? "$PIPX_BIN_DIR/boost"
    export UV_TOOL_DIR="$work/uv-$RANDOM" UV_TOOL_BIN_DIR="$work/uv-bin-$RANDOM"
    (cd "$work/clone" && "$tools/bin/uv" tool install --python "$py" .) >"$tools.uv.log" 2>&1
    show "uv tool install ." "$tools.uv.log" $? "$UV_TOOL_BIN_DIR/boost"
    rm -rf "$tools"
done
exit $fail
