#!/usr/bin/env bash
# The Python package's tests: a fresh venv with the pinned maturin, numpy, pytest and jax from PyPI
# (python/requirements-package.txt), `pip install ./python` (builds the Rust extension), pytest.
#   scripts/python-tests.sh            venv in target/python-venv (WT_VENV=DIR to choose)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(realpath -m "${WT_VENV:-target/python-venv}")
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "python3 with venv is needed (Debian: apt-get install python3-venv)" >&2
    exit 2
fi
[ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r python/requirements-package.txt
# The extension shares the repository's target directory: the library's dependencies build once.
PATH="$VENV/bin:$PATH" CARGO_TARGET_DIR="$PWD/target" "$VENV/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
    --force-reinstall --no-deps ./python
# jax is in the environment, so its docs snippets must run (test_docs.py fails rather than skip).
WT_REQUIRE_JAX=1 "$VENV/bin/pytest" -q -p no:cacheprovider python/tests
# The wheel a machine without Rust installs: one abi3 wheel for every CPython >= 3.9. Built (the
# extension is already compiled in target/) and installed into a second venv, where it imports.
rm -rf target/wheels
(cd python && PATH="$VENV/bin:$PATH" CARGO_TARGET_DIR="$PWD/../target" "$VENV/bin/maturin" build --quiet --release \
    --out ../target/wheels)
wheel=$(ls target/wheels/windtunnel-*-cp39-abi3-*.whl)
WHEEL_VENV="$VENV-wheel"
[ -x "$WHEEL_VENV/bin/pip" ] || python3 -m venv "$WHEEL_VENV"
"$WHEEL_VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall "$wheel"
"$WHEEL_VENV/bin/python" -c 'import windtunnel as wt; d = wt.data(overrides={"data.k": 3, "data.n_b": 5}); assert d.k == 3' && echo "abi3 wheel OK: $wheel"
