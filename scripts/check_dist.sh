#!/usr/bin/env bash
# Packaging check (needs PyPI: `build` and setuptools come from it; not part of `make check`).
#   1. `python -m build` makes the sdist and the wheel with no warning;
#   2. each installs into a fresh venv, and its `boost` runs (version, help, a catalog list);
#   3. the test suite runs from the unpacked sdist (it ships conftest, helpers, fixtures,
#      fakebin: see MANIFEST.in).
# Usage: bash scripts/check_dist.sh [PYTHON]   (default python3)
set -euo pipefail
py=${1:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "${KEEP:-}" ] && trap - EXIT && echo "work: $work"

echo "== build ($("$py" --version))"
"$py" -m venv "$work/build-env"
"$work/build-env/bin/python" -m pip install -q --upgrade pip build
# A copy, so nothing the build writes (build/, *.egg-info) lands in the checkout.
mkdir "$work/src"
git -C "$here" ls-files -z | (cd "$here" && xargs -0 cp --parents -t "$work/src")
# PYTHONDONTWRITEBYTECODE (set on some machines) makes setuptools warn that it skips
# byte-compiling: a property of the shell, not of the package.
if ! env -u PYTHONDONTWRITEBYTECODE "$work/build-env/bin/python" -m build \
        --outdir "$work/dist" "$work/src" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    exit 1
fi
# pip's notes about index locations in this machine's pip config are not the package's.
if grep -Ei "warn" "$work/build.log" | grep -v "^WARNING: Location '.*' is ignored"; then
    echo "FAIL: the build printed warnings (above)"
    exit 1
fi
ls -1 "$work/dist"

for kind in whl tar.gz; do
    echo "== install the ${kind} into a fresh venv"
    "$py" -m venv "$work/venv-$kind"
    "$work/venv-$kind/bin/python" -m pip install -q "$work"/dist/*."$kind"
    "$work/venv-$kind/bin/boost" --version
    "$work/venv-$kind/bin/boost" help exit-codes >/dev/null
    BOOST_HOME="$work/home-$kind" "$work/venv-$kind/bin/boost" tap --catalog --list --limit 2
done

echo "== the test suite from the unpacked sdist"
tar -xzf "$work"/dist/*.tar.gz -C "$work"
unpacked=$(find "$work" -maxdepth 1 -type d -name 'boost_agent_skills-*' | head -1)
for f in tests/conftest.py tests/helpers.py tests/fixtures tests/fakebin/gh LICENSE; do
    test -e "$unpacked/$f" || { echo "FAIL: the sdist lacks $f"; exit 1; }
done
"$work/venv-tar.gz/bin/python" -m pip install -q pytest hypothesis
(cd "$unpacked" && "$work/venv-tar.gz/bin/python" -m pytest -q -p no:cacheprovider -x)
echo "OK: build clean, sdist and wheel install, tests pass from the sdist"
