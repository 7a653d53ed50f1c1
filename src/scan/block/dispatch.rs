//! One table of entry points per kernel, and the choice among them: made
//! once, at the first use, and cached (as memchr caches its choice in an
//! atomic function pointer), so that a call costs one indirect jump and no
//! test of the CPU.

use std::sync::OnceLock;

use super::kernel::Portable;
use super::select::{SelectArgs, Selected};
use super::select::{MODE_COLS, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
use crate::scan::{Fields, Scanner};

/// [`Scanner::block_record_with`] compiled for one kernel.
pub(super) type RecordFn = unsafe fn(&mut Scanner, &[u8], usize, &mut Fields) -> Option<usize>;
/// [`Scanner::block_count_with`] compiled for one kernel.
pub(super) type CountFn =
    unsafe fn(&mut Scanner, &[u8], &mut usize, &mut Option<usize>, bool) -> u64;
/// [`Scanner::block_select_with`] or [`Scanner::block_records_with`]
/// compiled for one kernel.
pub(super) type SelectFn = unsafe fn(
    &mut Scanner,
    &[u8],
    &mut usize,
    &mut Option<usize>,
    &SelectArgs<'_>,
    &mut Selected,
) -> u64;

/// The entry points of one kernel, each compiled with its instruction set
/// enabled.
///
/// Invariant: calling the functions is sound only on a CPU with the
/// kernel's instruction set. The only tables handed out are
/// [`PORTABLE`] (no requirement) and those [`dispatch`] chose after
/// detecting their instruction set; every caller gets its table from
/// there.
#[derive(Debug)]
pub(super) struct Dispatch {
    /// The kernel's name, as [`super::simd_level`] reports it.
    pub(super) name: &'static str,
    /// The kernel has the AVX-512 VBMI2 byte compress (and BMI2 and
    /// PCLMULQDQ), for [`super::append_without`], [`super::append_kept`]
    /// and the copy of records with doubled quotes.
    pub(super) byte_compress: bool,
    pub(super) record: RecordFn,
    pub(super) count: CountFn,
    pub(super) select: SelectFn,
    pub(super) records: SelectFn,
}

/// The portable kernel's table: it needs no CPU feature.
pub(super) static PORTABLE: Dispatch = Dispatch {
    name: "portable",
    byte_compress: false,
    record: portable_record,
    count: portable_count,
    select: portable_select,
    records: portable_records,
};

fn portable_record(s: &mut Scanner, input: &[u8], r: usize, out: &mut Fields) -> Option<usize> {
    // SAFETY: the portable kernel needs no CPU feature.
    unsafe { s.block_record_with::<Portable, false>(input, r, out) }
}

fn portable_count(
    s: &mut Scanner,
    input: &[u8],
    pos: &mut usize,
    expect: &mut Option<usize>,
    check: bool,
) -> u64 {
    // SAFETY: the portable kernel needs no CPU feature.
    unsafe { s.block_count_with::<Portable, false>(input, pos, expect, check) }
}

fn portable_select(
    s: &mut Scanner,
    input: &[u8],
    pos: &mut usize,
    expect: &mut Option<usize>,
    sel: &SelectArgs<'_>,
    out: &mut Selected,
) -> u64 {
    // SAFETY: the portable kernel needs no CPU feature.
    unsafe { s.block_select_with::<Portable, false>(input, pos, expect, sel, out) }
}

fn portable_records(
    s: &mut Scanner,
    input: &[u8],
    pos: &mut usize,
    expect: &mut Option<usize>,
    sel: &SelectArgs<'_>,
    out: &mut Selected,
) -> u64 {
    let (i, p, e, o) = (input, pos, expect, out);
    // SAFETY: the portable kernel needs no CPU feature.
    unsafe {
        match sel.mode() {
            MODE_RECORDS => s.block_records_mode::<Portable, MODE_RECORDS>(i, p, e, sel, o),
            MODE_FIELDS => s.block_records_mode::<Portable, MODE_FIELDS>(i, p, e, sel, o),
            MODE_RAW => s.block_records_mode::<Portable, MODE_RAW>(i, p, e, sel, o),
            MODE_COLS => s.block_records_mode::<Portable, MODE_COLS>(i, p, e, sel, o),
            _ => s.block_records_mode::<Portable, MODE_CSV>(i, p, e, sel, o),
        }
    }
}

/// The table of the best kernel for this CPU, detected once. The
/// environment variable `FASTCSV_SIMD` (read once, at the first detection)
/// can lower the choice to `avx512+pclmulqdq`, `avx2+pclmulqdq`,
/// `sse2+pclmulqdq`, `sse2` or `portable` on x86-64, and to `neon` or
/// `portable` on aarch64, to test and measure those paths; it never selects
/// an instruction set the CPU lacks.
pub(super) fn dispatch() -> &'static Dispatch {
    static CHOSEN: OnceLock<&'static Dispatch> = OnceLock::new();
    CHOSEN.get_or_init(detect)
}

fn detect() -> &'static Dispatch {
    let want = std::env::var("FASTCSV_SIMD").unwrap_or_default();
    if want == "portable" {
        return &PORTABLE;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use super::x86_64 as k;
        let clmul = std::arch::is_x86_feature_detected!("pclmulqdq");
        // Every AVX2 CPU has these too, but check: popcnt and tzcnt count
        // the structural bits.
        let avx2 = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1");
        if want == "sse2" || !clmul {
            // SSE2 is part of x86-64.
            return &k::SSE2;
        }
        if want == "sse2+pclmulqdq" || !avx2 {
            return &k::SSE2_CLMUL;
        }
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("bmi2");
        if want == "avx2+pclmulqdq" || !avx512 {
            return &k::AVX2_CLMUL;
        }
        if want == "avx512+pclmulqdq" || !std::arch::is_x86_feature_detected!("avx512vbmi2") {
            return &k::AVX512_CLMUL;
        }
        &k::AVX512_VBMI2
    }
    #[cfg(target_arch = "aarch64")]
    {
        use super::aarch64 as k;
        // NEON is in the aarch64 baseline of the usual targets, but not of
        // all (`-softfloat` ones), so it is checked too. PMULL comes with
        // the `aes` feature.
        if !std::arch::is_aarch64_feature_detected!("neon") {
            return &PORTABLE;
        }
        if want == "neon" || !std::arch::is_aarch64_feature_detected!("aes") {
            return &k::NEON;
        }
        &k::NEON_PMULL
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        &PORTABLE
    }
}
