#!/usr/bin/env bash
# Builds the Python extension for the other CPython versions the package
# supports (3.12 and 3.13, besides the 3.11 of the main test run) and runs
# the reader's tests with each, so that a change that only breaks a newer
# interpreter's build or csv semantics fails CI.
#
# Looks for python3.12 / python3.13 on PATH and under pyenv; a version that
# is not installed is skipped (printed "skipped: ..."), as is everything
# when the venv module or the package index is unavailable. Each version
# gets a venv under target/pyversions/ with maturin, pytest, hypothesis and
# greenlet (a reader test switches greenlets inside `__next__`),
# and the package installed from this tree. Set PYVERSIONS_TESTS to choose
# the test files (default: the reader, text-path, string, span and
# decoding tests, and those of the strings made from copied headers and
# the short-string cache: the ASCII, UCS1 and UCS2 `str` headers and the
# list item arrays are made one way up to 3.12 and another from 3.13).
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=${PYVERSIONS_TESTS:-tests/python/test_reader.py tests/python/test_text_path.py tests/python/test_reader_strings.py tests/python/test_reader_spans.py tests/python/test_reader_decode.py tests/python/test_reader_wide_strs.py tests/python/test_reader_quoted.py tests/python/test_reader_cache_growth.py}
start=$SECONDS
for v in 3.12 3.13; do
    # (A pyenv shim on PATH fails when its version is not selected.)
    py=$(command -v "python$v" 2>/dev/null || true)
    if [ -z "$py" ] || ! "$py" -c 'import venv' 2>/dev/null; then
        py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python3 2>/dev/null | sort -V | tail -1 || true)
    fi
    if [ -z "$py" ] || ! "$py" -c 'import venv' 2>/dev/null; then
        echo "skipped: python$v is not installed"
        continue
    fi
    venv=target/pyversions/$v
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    vpy=$venv/bin/python
    if ! "$vpy" -c 'import maturin, pytest, hypothesis, greenlet' 2>/dev/null; then
        if ! "$vpy" -m pip install -q maturin pytest hypothesis greenlet; then
            echo "skipped: cannot install maturin, pytest, hypothesis and greenlet for python$v"
            continue
        fi
    fi
    echo "== python$v ($("$vpy" -c 'import sys; print(sys.version.split()[0])'))"
    "$vpy" -m pip install -q --force-reinstall --no-deps .
    # From outside the tree, so that `import fastcsv` is the installed one.
    (cd tests/python && "../../$vpy" -m pytest -q -p no:cacheprovider $(for t in $TESTS; do echo "../../$t"; done))
done
echo "python versions: $((SECONDS - start)) s"
