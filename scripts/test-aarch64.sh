#!/usr/bin/env bash
# Cross-builds fastcsv for aarch64 and runs its tests under qemu user-mode
# emulation, so that the NEON block-scanner kernel is linted and tested on
# an x86-64 machine:
#
#   * clippy for aarch64 (all targets, with the CLI): the x86-only code must
#     stay cfg-gated;
#   * the unit tests (NEON kernels against the portable one), the block
#     scanner's differential tests, the engine table, the property tests and
#     the parallel reader's tests (worker threads, the SWAR quote count),
#     with the kernel chosen at run time (NEON with PMULL under qemu);
#   * the non-proptest block tests and the engine table again with
#     FASTCSV_SIMD=neon (NEON without PMULL);
#   * the CLI tests only where aarch64 binaries can be executed directly
#     (binfmt_misc): they spawn the binary, which plain qemu-user cannot.
#
# Needs the rust target aarch64-unknown-linux-gnu, the cross linker
# aarch64-linux-gnu-gcc with its sysroot, and qemu-aarch64(-static). When one
# is missing it prints "skipped: ..." and exits 0. Timings under qemu say
# nothing about speed on real hardware.
#
# Environment: AARCH64_SYSROOT (default /usr/aarch64-linux-gnu),
# PROPTEST_CASES (passed through: tests/prop.rs honours it).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
SYSROOT=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
LINKER=${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER:-aarch64-linux-gnu-gcc}
start=$SECONDS

skip() {
    echo "skipped: aarch64 tests: $1"
    exit 0
}

command -v cargo >/dev/null || skip "cargo not found"
[ -d "$(rustc --print sysroot)/lib/rustlib/$TARGET/lib" ] \
    || skip "rust target $TARGET not installed (rustup target add $TARGET)"
command -v "$LINKER" >/dev/null || skip "cross linker $LINKER not found"
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
[ -n "$QEMU" ] || skip "qemu-aarch64-static / qemu-aarch64 not found"
[ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] \
    || skip "no aarch64 sysroot at $SYSROOT (set AARCH64_SYSROOT)"

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$LINKER"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$QEMU -L $SYSROOT"
# For aarch64 programs started by the tests themselves (binfmt_misc case).
export QEMU_LD_PREFIX="$SYSROOT"

echo "== clippy ($TARGET)"
cargo clippy --target "$TARGET" --all-targets --features cli -- -D warnings

echo "== tests under $(basename "$QEMU") ($TARGET, kernel chosen at run time)"
cargo test --target "$TARGET" --lib --test block --test engines --test prop --test parallel

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Runs a command quietly, showing only the lines matching $1 (all of the
# output when it fails).
filtered() {
    local pattern=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log"
        echo "FAILED: $*" >&2
        exit 1
    fi
    grep -E "$pattern" "$log" || true
}

echo "== the kernel those tests ran with"
filtered '^simd_level:' cargo test --target "$TARGET" --test block \
    simd_level_is_the_expected_kernel -- --nocapture

echo "== FASTCSV_SIMD=neon (NEON without PMULL): block tests without proptest, engines"
filtered '^simd_level:|^test result:' env FASTCSV_SIMD=neon cargo test --target "$TARGET" \
    --test engines --test block -- --skip _equals_ --nocapture

echo "== CLI tests"
# Only where the kernel hands aarch64 executables to qemu itself; the probe
# (building and running the binary) is skipped otherwise, as clap is slow to
# build.
if grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 \
    && cargo build -q --target "$TARGET" --features cli --bin fastcsv \
    && "${CARGO_TARGET_DIR:-target}/$TARGET/debug/fastcsv" --version >/dev/null 2>&1; then
    cargo test --target "$TARGET" --features cli --test cli
else
    echo "skipped: CLI tests (they spawn the aarch64 binary, which needs qemu registered with binfmt_misc)"
fi

echo "== aarch64 step took $((SECONDS - start)) s"
