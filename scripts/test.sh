#!/usr/bin/env bash
# Runs every test of the project: Rust (unit, integration, property and doc
# tests, with the CLI) and Python (pytest against the installed package).
# Installs what it needs (maturin, pytest, hypothesis, mypy) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
need() { "$PY" -c "import $1" 2>/dev/null || "$PY" -m pip install -q "$2"; }
need maturin maturin
need pytest pytest
need hypothesis hypothesis
need mypy mypy
need psutil psutil

echo "== Rust tests"
cargo test --features cli

# The block scanner's tests once more with each kernel the default run
# skips on this CPU (the choice can only be lowered): AVX2 where AVX-512 is
# chosen, and AVX-512 without VBMI2 (its own offsets writer, no byte
# compress) where the VBMI2 kernel is.
if grep -q avx512bw /proc/cpuinfo 2>/dev/null; then
    echo "== Block scanner tests with FASTCSV_SIMD=avx2+pclmulqdq"
    FASTCSV_SIMD=avx2+pclmulqdq cargo test --features cli --test block
fi
if grep -q avx512_vbmi2 /proc/cpuinfo 2>/dev/null; then
    echo "== Block scanner tests with FASTCSV_SIMD=avx512+pclmulqdq"
    FASTCSV_SIMD=avx512+pclmulqdq cargo test --features cli --test block
fi

echo "== Python package"
"$PY" -m pip install -q --force-reinstall --no-deps .

echo "== Python tests"
"$PY" -m pytest tests/python -q
