#!/usr/bin/env bash
# Runs every test of the project: Rust (unit, integration, property and doc
# tests, with the CLI) and Python (pytest against the installed package).
# Installs what it needs when missing: maturin, pytest, hypothesis, mypy,
# psutil, greenlet, and the packages of the interop tests (pyarrow, polars,
# duckdb, pandas, dask[dataframe], distributed). No Python test may skip itself
# here: a skipped test fails the run (FASTCSV_NO_SKIP, tests/python/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
need() { "$PY" -c "import $1" 2>/dev/null || "$PY" -m pip install -q "$2"; }
need maturin maturin
need pytest pytest
need hypothesis hypothesis
need mypy mypy
need psutil psutil
# Readers inside greenlets that switch stacks (tests/python/test_reader.py).
need greenlet greenlet
# The interop tests (tests/python/test_arrow.py, test_dask.py).
need pyarrow pyarrow
need polars polars
need duckdb duckdb
need pandas pandas
need dask.dataframe "dask[dataframe]"
# At least 2024.1: with both asked for at once, pip can pair the newest
# dask with an old distributed (2021.4) that no longer imports with it;
# the bound makes pip take a distributed and the dask it pins instead.
need distributed "distributed>=2024.1"

echo "== Rust tests"
cargo test --features cli

# The binding's own unit tests (its UTF-8 decoders against the standard
# library, the short-string keys, the string heads): the test binary
# links libpython, which a Python built without a shared library lacks.
if [ "$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('Py_ENABLE_SHARED'))")" = 1 ]; then
    echo "== The Python binding's unit tests"
    PYO3_PYTHON="$(command -v "$PY")" cargo test -p fastcsv-python --lib
else
    echo "== NOT RUN: the Python binding's unit tests ($PY has no shared libpython to link)" >&2
fi

# The block scanner's tests and the every-engine property tests
# (tests/common/oracle.rs) once more with each kernel the default run skips
# on this CPU (the choice can only be lowered): AVX2 where AVX-512 is
# chosen, AVX-512 without VBMI2 (its own offsets writer, no byte compress)
# where the VBMI2 kernel is, and the portable kernel everywhere.
if grep -q avx512bw /proc/cpuinfo 2>/dev/null; then
    echo "== Block scanner tests with FASTCSV_SIMD=avx2+pclmulqdq"
    FASTCSV_SIMD=avx2+pclmulqdq cargo test --features cli --test block --test prop
fi
if grep -q avx512_vbmi2 /proc/cpuinfo 2>/dev/null; then
    echo "== Block scanner tests with FASTCSV_SIMD=avx512+pclmulqdq"
    FASTCSV_SIMD=avx512+pclmulqdq cargo test --features cli --test block --test prop
fi
echo "== Block scanner tests with FASTCSV_SIMD=portable"
FASTCSV_SIMD=portable cargo test --features cli --test block --test prop

echo "== Python package"
"$PY" -m pip install -q --force-reinstall --no-deps .

echo "== Python tests (a skipped test fails the run)"
FASTCSV_NO_SKIP=1 "$PY" -m pytest tests/python -q -rs

# The reader's decoding tests once more with the vector kernels off (the
# AVX2 scanner, and the byte-at-a-time UTF-8 decoders the binding uses
# where a CPU has no AVX-512 with VBMI2).
if grep -q avx512_vbmi2 /proc/cpuinfo 2>/dev/null; then
    echo "== Python decoding tests with FASTCSV_SIMD=avx2+pclmulqdq"
    FASTCSV_SIMD=avx2+pclmulqdq FASTCSV_NO_SKIP=1 "$PY" -m pytest -q -rs \
        tests/python/test_reader_decode.py tests/python/test_reader_strings.py \
        tests/python/test_reader_wide_strs.py tests/python/test_differential.py \
        tests/python/test_short_strings.py
fi
