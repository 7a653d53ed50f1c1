//! The x86-64 kernels: SSE2 (the baseline), SSE2 with PCLMULQDQ, AVX2,
//! AVX-512 BW and AVX-512 VBMI2, and the AVX-512 byte-compress copies.
//!
//! Every function here that uses an instruction past SSE2 is an `unsafe fn`
//! whose caller must ensure the CPU has it: the scanning loops are reached
//! only through the tables [`super::dispatch::dispatch`] chose after
//! detecting their features.

use super::dispatch::Dispatch;
use super::kernel::{prefix_xor, Kernel};
use super::select::{SelectArgs, Selected};
use super::select::{MODE_COLS, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
use super::{Masks, Needles};
use crate::scan::{Fields, Scanner};
use std::arch::x86_64::*;

/// How far ahead of the block being classified the AVX2 kernel
/// prefetches.
const PREFETCH_AHEAD: usize = 1024;

/// Prefix XOR by carry-less multiplication with all ones.
///
/// # Safety
///
/// The CPU must support `pclmulqdq`.
#[inline(always)]
unsafe fn prefix_xor_clmul(x: u64) -> u64 {
    // SAFETY: the caller guarantees pclmulqdq (SSE2 is baseline).
    unsafe {
        let a = _mm_set_epi64x(0, x as i64);
        let ones = _mm_set1_epi8(-1);
        _mm_cvtsi128_si64(_mm_clmulepi64_si128(a, ones, 0)) as u64
    }
}

/// SSE2 comparisons, 16 bytes at a time.
///
/// # Safety
///
/// `p` must be valid for reads of 64 bytes.
#[inline(always)]
unsafe fn sse2_masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
    // SAFETY: the caller guarantees 64 readable bytes at `p`; unaligned
    // loads have no alignment requirement; SSE2 is part of x86-64.
    unsafe {
        let v = [
            _mm_loadu_si128(p as *const __m128i),
            _mm_loadu_si128(p.add(16) as *const __m128i),
            _mm_loadu_si128(p.add(32) as *const __m128i),
            _mm_loadu_si128(p.add(48) as *const __m128i),
        ];
        // A macro, not a closure: closures are separate functions that
        // would not inherit the caller's target features.
        macro_rules! eq {
            ($b:expr) => {{
                let needle = _mm_set1_epi8($b as i8);
                let m0 = _mm_movemask_epi8(_mm_cmpeq_epi8(v[0], needle)) as u32 as u64;
                let m1 = _mm_movemask_epi8(_mm_cmpeq_epi8(v[1], needle)) as u32 as u64;
                let m2 = _mm_movemask_epi8(_mm_cmpeq_epi8(v[2], needle)) as u32 as u64;
                let m3 = _mm_movemask_epi8(_mm_cmpeq_epi8(v[3], needle)) as u32 as u64;
                m0 | (m1 << 16) | (m2 << 32) | (m3 << 48)
            }};
        }
        needle_masks!(eq, n, STD)
    }
}

/// SSE2 compares, portable prefix XOR.
pub(super) struct Sse2;
impl Kernel for Sse2 {
    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: forwarded from the caller.
        let mut m = unsafe { sse2_masks::<STD>(p, n) };
        m.quote_prefix = prefix_xor(m.quote);
        m
    }
}

/// SSE2 compares, carry-less-multiply prefix XOR.
pub(super) struct Sse2Clmul;
impl Kernel for Sse2Clmul {
    #[inline(always)]
    unsafe fn prefix_xor(x: u64) -> u64 {
        // SAFETY: the caller guarantees pclmulqdq.
        unsafe { prefix_xor_clmul(x) }
    }

    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: forwarded from the caller (who guarantees pclmulqdq).
        unsafe {
            let mut m = sse2_masks::<STD>(p, n);
            m.quote_prefix = prefix_xor_clmul(m.quote);
            m
        }
    }
}

/// AVX2 compares, 32 bytes at a time; carry-less-multiply prefix XOR.
pub(super) struct Avx2Clmul;
impl Kernel for Avx2Clmul {
    #[inline(always)]
    unsafe fn prefix_xor(x: u64) -> u64 {
        // SAFETY: the caller guarantees pclmulqdq.
        unsafe { prefix_xor_clmul(x) }
    }

    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p` and
        // AVX2 and pclmulqdq; unaligned loads need no alignment.
        unsafe {
            // Ask for the bytes a few blocks ahead: page-cache pages
            // are scattered in physical memory, and the hardware
            // prefetcher stops at each 4 KiB page boundary. A prefetch
            // never faults, and `wrapping_add` keeps the address
            // computation defined past the end of the input.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(PREFETCH_AHEAD) as *const i8);
            let lo = _mm256_loadu_si256(p as *const __m256i);
            let hi = _mm256_loadu_si256(p.add(32) as *const __m256i);
            // A macro, not a closure: closures are separate functions
            // that would not inherit the caller's target features.
            macro_rules! eq {
                ($b:expr) => {{
                    let needle = _mm256_set1_epi8($b as i8);
                    let a = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, needle)) as u32 as u64;
                    let b = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, needle)) as u32 as u64;
                    a | (b << 32)
                }};
            }
            let mut m = needle_masks!(eq, n, STD);
            m.quote_prefix = prefix_xor_clmul(m.quote);
            m
        }
    }
}

/// AVX-512 (BW) compares, 64 bytes at a time straight into bit masks;
/// carry-less-multiply prefix XOR; offsets written 16 at a time with
/// the AVX-512 compress instruction.
pub(super) struct Avx512Clmul;
impl Kernel for Avx512Clmul {
    #[inline(always)]
    unsafe fn prefix_xor(x: u64) -> u64 {
        // SAFETY: the caller guarantees pclmulqdq.
        unsafe { prefix_xor_clmul(x) }
    }

    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p` and
        // AVX-512 BW and pclmulqdq; an unaligned load needs no
        // alignment.
        unsafe {
            // See `Avx2Clmul::masks`.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(PREFETCH_AHEAD) as *const i8);
            let x = _mm512_loadu_si512(p as *const __m512i);
            macro_rules! eq {
                ($b:expr) => {
                    _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8($b as i8))
                };
            }
            let mut m = needle_masks!(eq, n, STD);
            m.quote_prefix = prefix_xor_clmul(m.quote);
            m
        }
    }

    #[inline(always)]
    unsafe fn flatten(out: &mut Vec<u32>, bits: u64, base: u32) {
        let n = bits.count_ones() as usize;
        out.reserve(64);
        let len = out.len();
        // SAFETY: the caller guarantees AVX-512 F. Each store writes 16
        // lanes at `dst`, which stays inside the 64 slots reserved past
        // the length: it starts at most at slot 48 (the bits below it
        // number at most 48) and the lanes past the compressed ones are
        // spare capacity, not kept. The first `n` slots are all
        // written before the length covers them.
        unsafe {
            let mut dst = out.as_mut_ptr().add(len);
            let lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            let mut at = _mm512_add_epi32(lanes, _mm512_set1_epi32(base as i32));
            let sixteen = _mm512_set1_epi32(16);
            for i in 0..4 {
                let m = (bits >> (16 * i)) as u16;
                let v = _mm512_maskz_compress_epi32(m, at);
                _mm512_storeu_si512(dst as *mut __m512i, v);
                dst = dst.add(m.count_ones() as usize);
                at = _mm512_add_epi32(at, sixteen);
            }
            out.set_len(len + n);
        }
    }

    const DEPOSIT: bool = true;

    #[inline(always)]
    unsafe fn clean_opens(open: u64, close: u64, clean: u64, in_field: u64) -> (u64, u64) {
        // SAFETY: the caller guarantees BMI2 (every AVX-512 CPU has it,
        // and `dispatch::detect` checks). Bit `i` of `which` tells whether
        // the `i`-th closing quote is clean; with the block starting
        // inside a field, the first closes that field and the `i`-th
        // opening quote pairs with the `i + 1`-th closing one.
        unsafe {
            let which = _pext_u64(clean, close);
            (_pdep_u64(which >> in_field, open), which & in_field)
        }
    }

    #[inline(always)]
    unsafe fn deposit(src: u64, mask: u64) -> u64 {
        // SAFETY: the caller guarantees BMI2, as above.
        unsafe { _pdep_u64(src, mask) }
    }
}

/// [`Avx512Clmul`] with the AVX-512 VBMI2 byte compress for
/// [`Kernel::flatten`]: one compress of the 64 bit positions as bytes,
/// widened to offsets 16 at a time, instead of four compresses of 16
/// offsets (the byte compress is as costly as one of those, and the
/// widening is cheap).
pub(super) struct Avx512Vbmi2;
impl Kernel for Avx512Vbmi2 {
    #[inline(always)]
    unsafe fn prefix_xor(x: u64) -> u64 {
        // SAFETY: forwarded from the caller.
        unsafe { Avx512Clmul::prefix_xor(x) }
    }

    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: forwarded from the caller (this kernel's instruction
        // set includes `Avx512Clmul`'s).
        unsafe { Avx512Clmul::masks::<STD>(p, n) }
    }

    #[inline(always)]
    unsafe fn flatten(out: &mut Vec<u32>, bits: u64, base: u32) {
        let n = bits.count_ones() as usize;
        out.reserve(64);
        let len = out.len();
        // SAFETY: the caller guarantees AVX-512 F, BW and VBMI2. The
        // stores write 16 lanes each at slots 0, 16 and, when more than
        // 32 bits are set, 32 and 48 past the length: all inside the 64
        // slots reserved. Lanes past the `n` offsets are spare
        // capacity, not kept; the first `n` slots are all written
        // before the length covers them.
        unsafe {
            let dst = out.as_mut_ptr().add(len);
            let iota = _mm512_set_epi8(
                63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
                42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22,
                21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
            );
            // The positions of the set bits, one byte each, in order.
            let idx = _mm512_maskz_compress_epi8(bits, iota);
            let at = _mm512_set1_epi32(base as i32);
            macro_rules! put {
                ($k:literal) => {{
                    let i = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<$k>(idx));
                    _mm512_storeu_si512(dst.add(16 * $k) as *mut __m512i, _mm512_add_epi32(i, at));
                }};
            }
            // Two stores whatever the count (more than 16 is common
            // in short fields, more than 32 rare): no branch to
            // mispredict in either.
            put!(0);
            put!(1);
            if n > 32 {
                put!(2);
                put!(3);
            }
            out.set_len(len + n);
        }
    }

    const DEPOSIT: bool = true;

    #[inline(always)]
    unsafe fn clean_opens(open: u64, close: u64, clean: u64, in_field: u64) -> (u64, u64) {
        // SAFETY: forwarded from the caller.
        unsafe { Avx512Clmul::clean_opens(open, close, clean, in_field) }
    }

    #[inline(always)]
    unsafe fn deposit(src: u64, mask: u64) -> u64 {
        // SAFETY: forwarded from the caller.
        unsafe { Avx512Clmul::deposit(src, mask) }
    }
}

/// Appends `src` to `out` without the bytes at offsets
/// `drops[i] - shift` (as in [`super::append_without`]), 64
/// bytes at a time with the AVX-512 VBMI2 byte compress: see
/// [`super::append_without`].
///
/// # Safety
///
/// The CPU must support AVX-512 F, BW and VBMI2.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
pub(super) unsafe fn compress_avx512(src: &[u8], drops: &[u32], shift: usize, out: &mut Vec<u8>) {
    /// Bytes per segment: the drops of a segment are cleared in a
    /// bitmap of the bytes kept first (a loop that exits once per
    /// segment), then the segment goes through
    /// [`compress_kept_avx512`], with no branch on its content.
    const SEG: usize = 64 * 64;
    let (mut c, mut di) = (0usize, 0usize);
    while c < src.len() {
        let seg = &src[c..src.len().min(c + SEG)];
        let mut map = [!0u64; SEG / 64];
        while let Some(&d) = drops.get(di) {
            let k = (d as usize).wrapping_sub(shift).wrapping_sub(c);
            if k >= seg.len() {
                break;
            }
            map[k / 64] &= !(1 << (k % 64));
            di += 1;
        }
        // SAFETY: forwarded from the caller.
        unsafe { compress_kept_avx512(seg, &map, 0, out) };
        c += seg.len();
    }
}

/// Appends the bytes of `src` whose bits are set in `keep` (byte `i`
/// at bit `shift + i`) to `out`, 64 at a time with the AVX-512 VBMI2
/// byte compress: see [`super::append_kept`].
///
/// # Safety
///
/// The CPU must support AVX-512 F, BW and VBMI2.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
pub(super) unsafe fn compress_kept_avx512(
    src: &[u8],
    keep: &[u64],
    shift: usize,
    out: &mut Vec<u8>,
) {
    let n = src.len();
    // Each store writes 64 bytes at the output's end.
    out.reserve(n + 64);
    let len = out.len();
    let (mut c, mut kept) = (0usize, 0usize);
    let s = shift % 64;
    while c < n {
        // The 64 bits from `shift + c`: two words when not aligned (a
        // word past the end of `keep` marks nothing).
        let w = (shift + c) / 64;
        let lo = keep.get(w).copied().unwrap_or(0);
        let hi = keep.get(w + 1).copied().unwrap_or(0);
        let bits = if s == 0 { lo } else { (lo >> s) | (hi << (64 - s)) };
        let valid = if n - c >= 64 { !0 } else { (1u64 << (n - c)) - 1 };
        let mask = bits & valid;
        // SAFETY: AVX-512 F, BW and VBMI2 are guaranteed by the
        // caller. The masked load reads only `src[c..n]` (it
        // suppresses faults on the lanes masked off). The store writes
        // 64 bytes at `len + kept`, where `kept <= c < n`: inside the
        // `n + 64` bytes reserved past `len`. The first `kept` of them
        // are written, in order, before the length covers them.
        unsafe {
            let x = _mm512_maskz_loadu_epi8(valid, src.as_ptr().add(c) as *const i8);
            let v = _mm512_maskz_compress_epi8(mask, x);
            _mm512_storeu_si512(out.as_mut_ptr().add(len + kept) as *mut __m512i, v);
        }
        kept += mask.count_ones() as usize;
        c += 64;
    }
    // SAFETY: the `kept` bytes past `len` were written above.
    unsafe { out.set_len(len + kept) };
}

/// [`super::fields::copy_pending`] with the byte compress: each record's bytes
/// 64 at a time, the second quote of each pair found (from the prefix
/// XOR of the quotes) and left out by the compress, and the
/// structural delimiters' places in the copy from the same step (the
/// delimiters outside quotes, their bits gathered to the bytes kept).
///
/// # Safety
///
/// The CPU must support AVX-512 F, BW and VBMI2, BMI2 and PCLMULQDQ.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt,bmi2,pclmulqdq")]
pub(super) unsafe fn copy_pending_vbmi2(input: &[u8], out: &mut Selected, quote: u8, delim: u8) {
    let Selected { records, pending, copies, scratch, copies_base, ends, ends_base, .. } = out;
    let ends_base = *ends_base;
    let base = *copies_base;
    let qv = _mm512_set1_epi8(quote as i8);
    let dv = _mm512_set1_epi8(delim as i8);
    let iota = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
        40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
    );
    for &k in pending.iter() {
        let rec = &mut records[k as usize];
        rec.copy = copies.len() as u32;
        let record = &input[rec.start..rec.end];
        let n = record.len();
        // The bytes and offsets are written through pointers into room
        // reserved here, with the lengths in locals (a store through a
        // byte pointer would otherwise make the compiler load the
        // vectors' fields again after each one). Each byte store
        // writes 64 bytes at the end; each offsets step writes 32 or
        // 64 slots past the offsets so far, which are at most one per
        // byte before the step, plus the start.
        scratch.reserve(n + 64);
        copies.reserve(n + 1 + 64);
        let (old, c0) = (scratch.len(), copies.len());
        let (mut len, mut cl) = (old, c0);
        let sdst = scratch.as_mut_ptr();
        let cdst = copies.as_mut_ptr();
        // SAFETY: `c0 < c0 + n + 1 + 64`, reserved above.
        unsafe { cdst.add(cl).write((old - base) as u32) };
        cl += 1;
        // From one step to the next: all ones inside quotes, and 1 when
        // the last byte was a closing quote. A record starts outside
        // quotes.
        let (mut inq, mut close_in) = (0u64, 0u64);
        let mut c = 0;
        while c < n {
            let valid = if n - c >= 64 { !0u64 } else { (1u64 << (n - c)) - 1 };
            // SAFETY: AVX-512 F and BW are guaranteed by the caller.
            // The masked load reads only `record[c..]` (`valid`: up to
            // 64 bytes, no further than its end) and suppresses faults
            // on the other lanes.
            let x = unsafe { _mm512_maskz_loadu_epi8(valid, record.as_ptr().add(c) as *const i8) };
            let q = _mm512_cmpeq_epi8_mask(x, qv) & valid;
            let d = _mm512_cmpeq_epi8_mask(x, dv) & valid;
            // SAFETY: PCLMULQDQ is guaranteed by the caller.
            let inside = unsafe { prefix_xor_clmul(q) } ^ inq;
            let close = q & !inside;
            let second = q & inside & ((close << 1) | close_in);
            inq = ((inside as i64) >> 63) as u64;
            close_in = close >> 63;
            let bits = valid & !second;
            // The structural delimiters (outside quotes, never a quote
            // left out), at their places among the bytes kept.
            let placed = _pext_u64(d & !inside, bits);
            let m = placed.count_ones() as usize;
            // SAFETY: AVX-512 F, BW and VBMI2 are guaranteed by the
            // caller. The byte store writes 64 bytes at `len`, where
            // `len - old`, the bytes kept before `c`, is at most
            // `c < n`: inside the `n + 64` bytes reserved past `old`.
            // The offsets stores write 16 lanes each at 0 and 16 past
            // `cl` and, with more than 32 delimiters, at 32 and 48: `cl
            // - c0` is at most one more than the delimiters before `c`,
            // so at most `c + 1 <= n`, and the stores stay inside the
            // `n + 1 + 64` slots reserved past `c0`. The bytes and
            // slots up to `len` and `cl` are written, in order, before
            // the lengths cover them.
            unsafe {
                let v = _mm512_maskz_compress_epi8(bits, x);
                _mm512_storeu_si512(sdst.add(len) as *mut __m512i, v);
                let idx = _mm512_maskz_compress_epi8(placed, iota);
                let at = _mm512_set1_epi32((len - base) as i32);
                let dst = cdst.add(cl) as *mut __m512i;
                macro_rules! put {
                    ($k:literal) => {{
                        let i = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<$k>(idx));
                        _mm512_storeu_si512(dst.add($k), _mm512_add_epi32(i, at));
                    }};
                }
                put!(0);
                put!(1);
                if m > 32 {
                    put!(2);
                    put!(3);
                }
            }
            cl += m;
            len += bits.count_ones() as usize;
            c += 64;
        }
        // SAFETY: `cl - c0 <= n + 1`: the slot at `cl` is inside the
        // room reserved.
        unsafe { cdst.add(cl).write((len - base) as u32) };
        // SAFETY: the bytes up to `len` and the slots up to `cl + 1`
        // were written above, inside the capacities.
        unsafe {
            scratch.set_len(len);
            copies.set_len(cl + 1);
        }
        if cl - c0 != rec.fields {
            // The delimiters found here are the scanning loop's, from
            // the same bytes by the same rule; were they ever not,
            // readers of the copy would pair the record's field count
            // with the wrong offsets. The copy from the loop's own
            // offsets is then taken instead.
            scratch.truncate(old);
            copies.truncate(c0);
            let at = rec.ends_at as usize;
            let rel = (rec.start - ends_base) as u32;
            let ends = &ends[at..at + rec.fields - 1];
            super::fields::copy_unescaped(record, rel, ends, quote, base, copies, scratch);
        }
    }
}

/// [`Avx512Clmul::clean_opens`] alone, for tests.
///
/// # Safety
///
/// The CPU must support BMI2.
#[cfg(test)]
#[target_feature(enable = "bmi2")]
pub(super) unsafe fn clean_opens_bmi2(o: u64, c: u64, k: u64, f: u64) -> (u64, u64) {
    // SAFETY: forwarded from the caller.
    unsafe { Avx512Clmul::clean_opens(o, c, k, f) }
}

/// [`Avx512Clmul::flatten`] alone, for tests.
///
/// # Safety
///
/// The CPU must support AVX-512 F.
#[cfg(test)]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn flatten_avx512(out: &mut Vec<u32>, bits: u64, base: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { Avx512Clmul::flatten(out, bits, base) }
}

/// [`Avx512Vbmi2`]'s `flatten`, for tests.
///
/// # Safety
///
/// The CPU must support AVX-512 F, BW and VBMI2.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
pub(super) unsafe fn flatten_vbmi2(out: &mut Vec<u32>, bits: u64, base: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { Avx512Vbmi2::flatten(out, bits, base) }
}

entry_points!(
    AVX512_VBMI2,
    "avx512vbmi2+pclmulqdq",
    true,
    Avx512Vbmi2,
    "avx512f,avx512bw,avx512vbmi2,avx2,pclmulqdq,popcnt,bmi1,bmi2",
    record_vbmi2,
    count_vbmi2,
    select_vbmi2,
    records_vbmi2,
    masks_vbmi2
);
entry_points!(
    AVX512_CLMUL,
    "avx512+pclmulqdq",
    false,
    Avx512Clmul,
    "avx512f,avx512bw,avx2,pclmulqdq,popcnt,bmi1,bmi2",
    record_avx512,
    count_avx512,
    select_avx512,
    records_avx512,
    masks_avx512
);
entry_points!(
    AVX2_CLMUL,
    "avx2+pclmulqdq",
    false,
    Avx2Clmul,
    "avx2,pclmulqdq,popcnt,bmi1",
    record_avx2,
    count_avx2,
    select_avx2,
    records_avx2,
    masks_avx2
);
entry_points!(
    SSE2_CLMUL,
    "sse2+pclmulqdq",
    false,
    Sse2Clmul,
    "sse2,pclmulqdq",
    record_sse2_clmul,
    count_sse2_clmul,
    select_sse2_clmul,
    records_sse2_clmul,
    masks_sse2_clmul
);
entry_points!(
    SSE2,
    "sse2",
    false,
    Sse2,
    "sse2",
    record_sse2,
    count_sse2,
    select_sse2,
    records_sse2,
    masks_sse2
);

/// [`super::ByteSet::any`] for 16 bytes or more: whether a byte of `f` is
/// one of `bytes` or (with `controls`) below 0x20, in 16-byte chunks, the
/// last one overlapping the one before. SSE2 is part of x86-64: safe.
#[inline(always)]
pub(super) fn any_of_sse2(f: &[u8], bytes: [u8; 4], controls: bool) -> bool {
    debug_assert!(f.len() >= 16);
    let chunk = |c: &[u8]| -> bool {
        debug_assert_eq!(c.len(), 16);
        // SAFETY: SSE2 is part of x86-64; `c` holds 16 bytes, read
        // without alignment.
        unsafe {
            let x = _mm_loadu_si128(c.as_ptr().cast());
            let mut m = _mm_setzero_si128();
            for b in bytes {
                m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8)));
            }
            if controls {
                // Below 0x20: unsigned min with 0x1f leaves it as is.
                let low = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
                m = _mm_or_si128(m, low);
            }
            _mm_movemask_epi8(m) != 0
        }
    };
    let n = f.len();
    let mut chunks = f.chunks_exact(16);
    if chunks.by_ref().any(chunk) {
        return true;
    }
    !chunks.remainder().is_empty() && chunk(&f[n - 16..])
}

/// Bit `i` set where `w[i]` (16 bytes) is one of `needles`. SSE2 is part
/// of x86-64: safe.
#[inline(always)]
pub(super) fn match16_sse2(w: &[u8], needles: &[u8; 8]) -> u32 {
    assert_eq!(w.len(), 16);
    // SAFETY: SSE2 is part of the x86_64 baseline, and `w` holds 16 bytes
    // (checked above), which an unaligned load reads.
    unsafe {
        let v = _mm_loadu_si128(w.as_ptr().cast::<__m128i>());
        let mut hit = _mm_cmpeq_epi8(v, _mm_set1_epi8(needles[0] as i8));
        for &n in &needles[1..] {
            hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(n as i8)));
        }
        _mm_movemask_epi8(hit) as u32
    }
}
