//! The aarch64 kernels: NEON, and NEON with PMULL for the prefix XOR.
//!
//! Every function here is an `unsafe fn` whose caller must ensure the CPU
//! has NEON (and `aes` for PMULL): the scanning loops are reached only
//! through the tables [`super::dispatch::dispatch`] chose after detecting
//! those features.

use super::dispatch::Dispatch;
use super::kernel::{prefix_xor, Kernel};
use super::select::{SelectArgs, Selected};
use super::select::{MODE_COLS, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
use super::{Masks, Needles};
use crate::scan::{Fields, Scanner};
use std::arch::aarch64::*;

/// Byte `i` holds bit `i % 8`: ANDed with a comparison result (0x00 or
/// 0xff per byte), it leaves each matching byte's own bit, ready to be
/// summed into a bitmask by [`movemask4`].
const BIT_WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// Prefix XOR by polynomial (carry-less) multiplication with all ones.
///
/// # Safety
///
/// The CPU must support PMULL (the `aes` feature).
// Not `inline(always)` like the rest: `vmull_p64` needs `aes` enabled
// in the function it is inlined into, and `target_feature` excludes
// `inline(always)`. Plain `inline` still inlines into the entry points,
// which enable the same features.
#[inline]
#[target_feature(enable = "neon,aes")]
// Recent Rust makes the intrinsic safe to call where `aes` is enabled,
// but older releases (down to our minimum, 1.80) need the `unsafe`.
#[allow(unused_unsafe)]
unsafe fn prefix_xor_pmull(x: u64) -> u64 {
    // SAFETY: the caller guarantees the `aes` feature, which provides
    // the 64-bit PMULL that `vmull_p64` compiles to.
    unsafe { vmull_p64(x, !0) as u64 }
}

/// The 64-bit mask of four 16-byte comparison results (bit `i` = byte
/// `i` of `a`, then `b`, `c`, `d`), NEON having no `movemask`.
///
/// Of the usual ways to do this, this one (simdjson's) is the cheapest
/// when all 64 bits are wanted in order: one AND per vector with the
/// bit weights, then three rounds of pairwise adds (`ADDP`), which sum
/// neighbouring bytes, halving the number of bytes per round. The
/// weights are distinct bits, so the sums are ORs and cannot carry.
/// After the rounds byte `j` holds the bits of input bytes
/// `8j..8j + 8`, and the low 64 bits of the vector are the mask:
/// 4 ANDs, 4 ADDPs and one move per needle. The "nibble mask" trick
/// (`vshrn_n_u16`) is one instruction per vector but gives 4 bits per
/// byte, which is made for finding the *first* match; squeezing it to
/// one bit per byte costs more than the adds.
///
/// Note: LLVM (as of the Rust release this was written with) proves the summed bits disjoint and emits
/// each ADDP as `UZP1`, `UZP2` and `ORR` (same result, more
/// instructions). Whether that costs anything has not been measured on
/// aarch64 hardware; check there before reworking it.
///
/// # Safety
///
/// The CPU must support NEON.
#[inline(always)]
unsafe fn movemask4(
    a: uint8x16_t,
    b: uint8x16_t,
    c: uint8x16_t,
    d: uint8x16_t,
    w: uint8x16_t,
) -> u64 {
    // SAFETY: register-only NEON operations; the caller guarantees
    // NEON.
    unsafe {
        let ab = vpaddq_u8(vandq_u8(a, w), vandq_u8(b, w));
        let cd = vpaddq_u8(vandq_u8(c, w), vandq_u8(d, w));
        let abcd = vpaddq_u8(ab, cd);
        let sum = vpaddq_u8(abcd, abcd);
        vgetq_lane_u64::<0>(vreinterpretq_u64_u8(sum))
    }
}

/// NEON comparisons, 16 bytes at a time.
///
/// # Safety
///
/// `p` must be valid for reads of 64 bytes, and the CPU must support
/// NEON.
#[inline(always)]
unsafe fn neon_masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
    // SAFETY: the caller guarantees 64 readable bytes at `p` and NEON;
    // `vld1q_u8` has no alignment requirement beyond a byte's, and
    // `BIT_WEIGHTS` is 16 bytes.
    unsafe {
        let v = [vld1q_u8(p), vld1q_u8(p.add(16)), vld1q_u8(p.add(32)), vld1q_u8(p.add(48))];
        let w = vld1q_u8(BIT_WEIGHTS.as_ptr());
        // A macro, not a closure: closures are separate functions that
        // would not inherit the caller's target features.
        macro_rules! eq {
            ($b:expr) => {{
                let needle = vdupq_n_u8($b);
                movemask4(
                    vceqq_u8(v[0], needle),
                    vceqq_u8(v[1], needle),
                    vceqq_u8(v[2], needle),
                    vceqq_u8(v[3], needle),
                    w,
                )
            }};
        }
        needle_masks!(eq, n, STD)
    }
}

/// NEON compares, portable prefix XOR.
pub(super) struct Neon;
impl Kernel for Neon {
    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: forwarded from the caller.
        let mut m = unsafe { neon_masks::<STD>(p, n) };
        m.quote_prefix = prefix_xor(m.quote);
        m
    }
}

/// NEON compares, PMULL prefix XOR.
pub(super) struct NeonPmull;
impl Kernel for NeonPmull {
    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: forwarded from the caller (who guarantees `aes`).
        unsafe {
            let mut m = neon_masks::<STD>(p, n);
            m.quote_prefix = prefix_xor_pmull(m.quote);
            m
        }
    }
}

entry_points!(
    NEON_PMULL,
    "neon+pmull",
    false,
    NeonPmull,
    "neon,aes",
    record_neon_pmull,
    count_neon_pmull,
    select_neon_pmull,
    records_neon_pmull,
    masks_neon_pmull
);
entry_points!(
    NEON,
    "neon",
    false,
    Neon,
    "neon",
    record_neon,
    count_neon,
    select_neon,
    records_neon,
    masks_neon
);
