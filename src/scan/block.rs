//! The block scanner: 64 bytes at a time, with bitmasks.
//!
//! BE ADVISED: this is a *shortcut* past the state machine in `mod.rs`, and
//! it is only allowed to take records whose meaning it can prove equal to
//! what the state machine would produce. Anything else is handed back,
//! whole record at a time, to the state machine.
//!
//! # How a block is read
//!
//! A kernel (AVX2 or SSE2 on x86-64, NEON on aarch64, or portable; picked
//! once at run time, see [`simd_level`]) compares 64 input bytes against
//! the delimiter, the quote, the two terminator bytes (CR and LF, or the
//! single terminator byte twice), and optionally the escape byte and the
//! space, giving one `u64` per needle (bit `i` is byte `i`). NEON has no
//! `movemask`; its kernel builds the bitmask with pairwise adds (see
//! `arm::movemask4`). The inside-quotes mask is the prefix XOR of the quote
//! bits (carry-less multiply by all ones when `pclmulqdq`, or on aarch64
//! PMULL, is available), XORed with the carry from the block before.
//! Delimiters and terminators outside quotes are the structural bytes:
//! they end fields and records.
//!
//! Every kernel must give exactly the portable kernel's masks:
//! `tests::kernels_agree_with_portable` compares each one available on the
//! machine, and `scripts/test-aarch64.sh` runs the tests under qemu for the
//! NEON kernels. Code for one architecture stays behind `cfg(target_arch)`.
//!
//! # What makes a record "regular"
//!
//! The prefix XOR models quotes as toggles. That matches Python's reader
//! only when every quote is one of:
//!
//! * an *opening* quote (inside-mask 1 at the quote) right after a field
//!   start: a structural delimiter or terminator, or the record start;
//! * a *closing* quote (inside-mask 0) right before a structural byte;
//! * one of a doubled pair `""` inside a quoted field (closing quote right
//!   before an opening quote), when `double_quote` is on.
//!
//! Every other quote, every escape byte and every space at a field start
//! (with `skip_initial_space`) is marked *bad*. The parity of the prefix
//! XOR is exact up to the first bad bit, so a record that ends before its
//! first bad bit is regular; a record that contains one goes to the state
//! machine, and block scanning restarts at the next record with fresh
//! carries. Comments and empty lines are recognised at the record's first
//! byte and also go to the state machine, as does a record that ends in CR
//! at the very end of the input (it may need `skip_lf`).
//!
//! Regular records reuse the state machine's own `add`/`save` steps for
//! their fields, so spans, `is_owned`/`is_quoted`/`is_numeric` flags,
//! filtering, trimming and field-size limits come out identical; a field
//! over the limit makes the record go back to the state machine, which then
//! reports the error at the exact byte.
//!
//! # What the counting loop keeps
//!
//! One loop walks the blocks and the records they end; it is compiled once
//! per mode, so that what a mode does not keep costs nothing: nothing
//! (`count`), the records, their delimiter offsets (every field, with
//! the records holding doubled quotes copied unescaped, or raw), the quotes a CSV
//! writer drops (`Selection::csv`: a carry-add over the bytes of quoted
//! fields finds the clean ones, and with BMI2 a bit extract and deposit
//! their opening quotes), or the bytes the CSV of some columns keeps
//! (`Selection::csv_columns`, [`ColMasks`]: a bit deposit of the columns'
//! boundary pattern on each record's delimiters gives where the keep state
//! flips, and a prefix XOR the state, one word per block). With AVX-512
//! VBMI2, runs of records are then copied through those masks with the
//! byte compress.
//!
//! # Line counting
//!
//! Python's `line_num` counts every CR, and every LF not preceded by CR
//! (only the terminator byte with `Terminator::Byte`). The `lines` mask
//! marks exactly those bytes, carrying "previous byte was CR" across
//! blocks, and a record adds the popcount over its bytes.
//!
//! If you add a dialect option: decide whether the classifier can prove it
//! absent per record (add a needle and mark it bad) — otherwise records
//! using it must fall back. Then run `tests/block.rs`.

use std::sync::OnceLock;

use super::{Fields, Scanner, Span, State, NUMERIC, OWNED, QUOTED};
use crate::dialect::{Dialect, Terminator};

/// Raw comparison masks of one 64-byte block (bit `i` = byte `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    delim: u64,
    quote: u64,
    /// Needle 2: CR, or the terminator byte.
    nl_a: u64,
    /// Needle 3: LF, or the terminator byte.
    nl_b: u64,
    /// Escape byte (zero unless `EXTRA`).
    esc: u64,
    /// Space (zero unless `EXTRA`).
    space: u64,
    /// Prefix XOR of `quote`: bit `i` is the parity of quotes at `0..=i`.
    quote_prefix: u64,
}

/// The bytes a kernel looks for. `quote_on` is all ones when the dialect
/// has a quote character and zero otherwise (then `bytes[1]` is unused);
/// `extra` says whether the escape and space needles are wanted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Needles {
    bytes: [u8; 6],
    quote_on: u64,
    extra: bool,
}

/// Prefix XOR without special instructions: bit `i` of the result is the
/// XOR of bits `0..=i` of `x`.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// A way of classifying 64 bytes. Implementations are `#[inline(always)]`
/// and are only ever inlined into functions compiled for their
/// instruction set (see `x86::record_*`, `arm::record_*`), as memchr does,
/// so that the whole scanning loop is compiled with AVX2, SSE2 or NEON
/// enabled and the comparisons stay in registers.
trait Kernel {
    /// Compares the 64 bytes at `p` with the needles.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads of 64 bytes, and the CPU must support
    /// the kernel's instruction set. With `STD` (see
    /// [`Classifier::is_std`]), the escape and space needles are known to
    /// be unwanted.
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks;

    /// Appends `base + i` for every set bit `i` of `bits`, in order.
    ///
    /// # Safety
    ///
    /// The CPU must support the kernel's instruction set.
    #[inline(always)]
    unsafe fn flatten(out: &mut Vec<u32>, bits: u64, base: u32) {
        flatten(out, bits, base);
    }

    /// Whether [`Kernel::clean_opens`] is a few instructions (a bit
    /// extract and deposit), so that `MODE_CSV` finds the quotes to drop
    /// with masks rather than a loop over the fields that close.
    const DEPOSIT: bool = false;

    /// For the fields of a block (opening quotes `open` and closing ones
    /// `close`, which alternate, a closing one first when `in_field` is 1:
    /// the block starts inside a field), the opening quotes of the fields
    /// whose closing quote is in `clean` (a subset of `close`), and 1 if
    /// the field the block starts inside is one of them. `MODE_CSV` calls
    /// it only with [`Kernel::DEPOSIT`]; by default it is a loop over the
    /// bits.
    ///
    /// # Safety
    ///
    /// The CPU must support the kernel's instruction set.
    #[inline(always)]
    unsafe fn clean_opens(open: u64, close: u64, clean: u64, in_field: u64) -> (u64, u64) {
        let which = extract_bits(clean, close);
        (deposit_bits(which >> in_field, open), which & in_field)
    }

    /// Bit `i` of the result is the XOR of bits `0..=i` of `x`.
    ///
    /// # Safety
    ///
    /// The CPU must support the kernel's instruction set.
    #[inline(always)]
    unsafe fn prefix_xor(x: u64) -> u64 {
        prefix_xor(x)
    }

    /// The low bits of `src`, one by one, at the set bits of `mask` (the
    /// BMI2 `pdep` instruction).
    ///
    /// # Safety
    ///
    /// The CPU must support the kernel's instruction set.
    #[inline(always)]
    unsafe fn deposit(src: u64, mask: u64) -> u64 {
        deposit_bits(src, mask)
    }
}

/// `pdep` one bit at a time: the low bits of `src` at the set bits of
/// `mask`, in order.
#[inline(always)]
fn deposit_bits(mut src: u64, mut mask: u64) -> u64 {
    let mut r = 0;
    while mask != 0 && src != 0 {
        let low = mask & mask.wrapping_neg();
        if src & 1 != 0 {
            r |= low;
        }
        src >>= 1;
        mask &= mask - 1;
    }
    r
}

/// `pext` one bit at a time: the bits of `src` at the set bits of `mask`,
/// packed at the bottom in order.
#[inline(always)]
fn extract_bits(src: u64, mut mask: u64) -> u64 {
    let (mut r, mut i) = (0, 0);
    while mask != 0 {
        let k = mask.trailing_zeros();
        r |= ((src >> k) & 1) << i;
        i += 1;
        mask &= mask - 1;
    }
    r
}

/// One byte at a time: where no SIMD kernel exists, and the oracle for the
/// SIMD kernels in tests.
struct Portable;

impl Kernel for Portable {
    #[inline(always)]
    unsafe fn masks<const STD: bool>(p: *const u8, n: &Needles) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p`.
        let block = unsafe { std::slice::from_raw_parts(p, 64) };
        let mut m = Masks::default();
        for (i, &c) in block.iter().enumerate() {
            let bit = 1u64 << i;
            m.delim |= if c == n.bytes[0] { bit } else { 0 };
            m.quote |= if c == n.bytes[1] { bit } else { 0 };
            m.nl_a |= if c == n.bytes[2] { bit } else { 0 };
            m.nl_b |= if c == n.bytes[3] { bit } else { 0 };
            if !STD && n.extra {
                m.esc |= if c == n.bytes[4] { bit } else { 0 };
                m.space |= if c == n.bytes[5] { bit } else { 0 };
            }
        }
        m.quote &= n.quote_on;
        m.quote_prefix = prefix_xor(m.quote);
        m
    }
}

/// Instantiates the scanning loops for one instruction set, in the
/// module that defines the kernel (the names it uses are resolved there).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! entry_points {
    ($kernel:ident, $features:literal, $record:ident, $count:ident, $select:ident, $records:ident, $masks:ident) => {
        /// [`Scanner::block_record_with`] compiled for this kernel.
        ///
        /// # Safety
        ///
        /// The CPU must support the kernel's instruction set.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $record(
            s: &mut Scanner,
            input: &[u8],
            r: usize,
            out: &mut Fields,
        ) -> Option<usize> {
            if s.std_dialect() {
                s.block_record_with::<$kernel, true>(input, r, out)
            } else {
                s.block_record_with::<$kernel, false>(input, r, out)
            }
        }

        /// [`Scanner::block_count_with`] compiled for this kernel.
        ///
        /// # Safety
        ///
        /// The CPU must support the kernel's instruction set.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $count(
            s: &mut Scanner,
            input: &[u8],
            pos: &mut usize,
            expect: &mut Option<usize>,
            check: bool,
        ) -> u64 {
            if s.std_dialect() {
                s.block_count_with::<$kernel, true>(input, pos, expect, check)
            } else {
                s.block_count_with::<$kernel, false>(input, pos, expect, check)
            }
        }

        /// [`Scanner::block_select_with`] compiled for this kernel.
        ///
        /// # Safety
        ///
        /// The CPU must support the kernel's instruction set.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $select(
            s: &mut Scanner,
            input: &[u8],
            pos: &mut usize,
            expect: &mut Option<usize>,
            sel: &SelectArgs<'_>,
            out: &mut Selected,
        ) -> u64 {
            if s.std_dialect() {
                s.block_select_with::<$kernel, true>(input, pos, expect, sel, out)
            } else {
                s.block_select_with::<$kernel, false>(input, pos, expect, sel, out)
            }
        }

        /// [`Scanner::block_records_with`] (keeping records) compiled
        /// for this kernel.
        ///
        /// # Safety
        ///
        /// The CPU must support the kernel's instruction set.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $records(
            s: &mut Scanner,
            input: &[u8],
            pos: &mut usize,
            expect: &mut Option<usize>,
            sel: &SelectArgs<'_>,
            out: &mut Selected,
        ) -> u64 {
            // The loop is compiled for each mode, so that what a mode does
            // not keep costs nothing.
            let (i, p, e, o) = (input, pos, expect, out);
            match sel.mode() {
                MODE_RECORDS => s.block_records_mode::<$kernel, MODE_RECORDS>(i, p, e, sel, o),
                MODE_FIELDS => s.block_records_mode::<$kernel, MODE_FIELDS>(i, p, e, sel, o),
                MODE_RAW => s.block_records_mode::<$kernel, MODE_RAW>(i, p, e, sel, o),
                MODE_COLS => s.block_records_mode::<$kernel, MODE_COLS>(i, p, e, sel, o),
                _ => s.block_records_mode::<$kernel, MODE_CSV>(i, p, e, sel, o),
            }
        }

        /// The kernel alone, for tests.
        ///
        /// # Safety
        ///
        /// `p` must be valid for reads of 64 bytes and the CPU must
        /// support the kernel's instruction set.
        #[cfg(test)]
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $masks(p: *const u8, n: &Needles) -> Masks {
            // SAFETY: forwarded from the caller.
            unsafe { $kernel::masks::<false>(p, n) }
        }
    };
}

/// The [`Masks`] of a block (but its prefix XOR) from `$eq!(byte)`, a
/// kernel's macro that compares the block with one byte: the escape and
/// space needles only when wanted (see [`Kernel::masks`]). A macro, so that
/// the comparisons stay in the caller, compiled with its target features.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! needle_masks {
    ($eq:ident, $n:expr, $std:expr) => {{
        let n = $n;
        let mut m = Masks {
            delim: $eq!(n.bytes[0]),
            quote: $eq!(n.bytes[1]) & n.quote_on,
            nl_a: $eq!(n.bytes[2]),
            nl_b: $eq!(n.bytes[3]),
            ..Masks::default()
        };
        if !$std && n.extra {
            m.esc = $eq!(n.bytes[4]);
            m.space = $eq!(n.bytes[5]);
        }
        m
    }};
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{prefix_xor, Fields, Kernel, Masks, Needles, Scanner, SelectArgs, Selected};
    use super::{MODE_COLS, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
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
            // SAFETY: the caller guarantees BMI2 (every AVX-512 CPU has
            // it, and `isa()` checks). Bit `i` of `which` tells whether
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
    /// widening is cheap). Every field of the 1 GiB text file: 12% less
    /// user CPU time; numeric 10%, wide 7%.
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
                    63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44,
                    43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24,
                    23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                    1, 0,
                );
                // The positions of the set bits, one byte each, in order.
                let idx = _mm512_maskz_compress_epi8(bits, iota);
                let at = _mm512_set1_epi32(base as i32);
                macro_rules! put {
                    ($k:literal) => {{
                        let i = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<$k>(idx));
                        _mm512_storeu_si512(
                            dst.add(16 * $k) as *mut __m512i,
                            _mm512_add_epi32(i, at),
                        );
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
    pub(super) unsafe fn compress_avx512(
        src: &[u8],
        drops: &[u32],
        shift: usize,
        out: &mut Vec<u8>,
    ) {
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

    /// [`super::copy_pending`] with the byte compress: each record's bytes
    /// 64 at a time, the second quote of each pair found (from the prefix
    /// XOR of the quotes) and left out by the compress, and the
    /// structural delimiters' places in the copy from the same step (the
    /// delimiters outside quotes, their bits gathered to the bytes kept).
    ///
    /// # Safety
    ///
    /// The CPU must support AVX-512 F, BW and VBMI2, BMI2 and PCLMULQDQ.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt,bmi2,pclmulqdq")]
    pub(super) unsafe fn copy_pending_vbmi2(
        input: &[u8],
        out: &mut Selected,
        quote: u8,
        delim: u8,
    ) {
        let Selected { records, pending, copies, scratch, copies_base, ends, ends_base, .. } = out;
        let ends_base = *ends_base;
        let base = *copies_base;
        let qv = _mm512_set1_epi8(quote as i8);
        let dv = _mm512_set1_epi8(delim as i8);
        let iota = _mm512_set_epi8(
            63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42,
            41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
            19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
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
                let x =
                    unsafe { _mm512_maskz_loadu_epi8(valid, record.as_ptr().add(c) as *const i8) };
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
                super::copy_unescaped(record, rel, ends, quote, base, copies, scratch);
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
        Avx512Vbmi2,
        "avx512f,avx512bw,avx512vbmi2,avx2,pclmulqdq,popcnt,bmi1,bmi2",
        record_vbmi2,
        count_vbmi2,
        select_vbmi2,
        records_vbmi2,
        masks_vbmi2
    );
    entry_points!(
        Avx512Clmul,
        "avx512f,avx512bw,avx2,pclmulqdq,popcnt,bmi1,bmi2",
        record_avx512,
        count_avx512,
        select_avx512,
        records_avx512,
        masks_avx512
    );
    entry_points!(
        Avx2Clmul,
        "avx2,pclmulqdq,popcnt,bmi1",
        record_avx2,
        count_avx2,
        select_avx2,
        records_avx2,
        masks_avx2
    );
    entry_points!(
        Sse2Clmul,
        "sse2,pclmulqdq",
        record_sse2_clmul,
        count_sse2_clmul,
        select_sse2_clmul,
        records_sse2_clmul,
        masks_sse2_clmul
    );
    entry_points!(Sse2, "sse2", record_sse2, count_sse2, select_sse2, records_sse2, masks_sse2);
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use super::{prefix_xor, Fields, Kernel, Masks, Needles, Scanner, SelectArgs, Selected};
    use super::{MODE_COLS, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
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
    /// Note: LLVM (Rust 1.95) proves the summed bits disjoint and emits
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
        NeonPmull,
        "neon,aes",
        record_neon_pmull,
        count_neon_pmull,
        select_neon_pmull,
        records_neon_pmull,
        masks_neon_pmull
    );
    entry_points!(Neon, "neon", record_neon, count_neon, select_neon, records_neon, masks_neon);
}

/// The instruction sets the block scanner can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Sse2Clmul,
    #[cfg(target_arch = "x86_64")]
    Avx2Clmul,
    #[cfg(target_arch = "x86_64")]
    Avx512Clmul,
    #[cfg(target_arch = "x86_64")]
    Avx512Vbmi2,
    #[cfg(target_arch = "aarch64")]
    Neon,
    #[cfg(target_arch = "aarch64")]
    NeonPmull,
}

impl Isa {
    fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => "sse2",
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2Clmul => "sse2+pclmulqdq",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Clmul => "avx2+pclmulqdq",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Clmul => "avx512+pclmulqdq",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vbmi2 => "avx512vbmi2+pclmulqdq",
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => "neon",
            #[cfg(target_arch = "aarch64")]
            Isa::NeonPmull => "neon+pmull",
        }
    }
}

/// Detects the CPU once. The environment variable `FASTCSV_SIMD` (read
/// once, at the first detection) can lower the choice to `avx512+pclmulqdq`,
/// `avx2+pclmulqdq`, `sse2+pclmulqdq`, `sse2` or `portable` on x86-64, and to `neon` or `portable` on aarch64,
/// to test and measure those paths; it never selects an instruction set the
/// CPU lacks.
fn isa() -> Isa {
    static CHOSEN: OnceLock<Isa> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let want = std::env::var("FASTCSV_SIMD").unwrap_or_default();
        if want == "portable" {
            return Isa::Portable;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let clmul = std::arch::is_x86_feature_detected!("pclmulqdq");
            // Every AVX2 CPU has these too, but check: popcnt and tzcnt
            // count the structural bits.
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1");
            if want == "sse2" || !clmul {
                return Isa::Sse2;
            }
            if want == "sse2+pclmulqdq" || !avx2 {
                return Isa::Sse2Clmul;
            }
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("bmi2");
            if want == "avx2+pclmulqdq" || !avx512 {
                return Isa::Avx2Clmul;
            }
            if want == "avx512+pclmulqdq" || !std::arch::is_x86_feature_detected!("avx512vbmi2") {
                return Isa::Avx512Clmul;
            }
            Isa::Avx512Vbmi2
        }
        #[cfg(target_arch = "aarch64")]
        {
            // NEON is in the aarch64 baseline of the usual targets, but not
            // of all (`-softfloat` ones), so it is checked too. PMULL comes
            // with the `aes` feature.
            if !std::arch::is_aarch64_feature_detected!("neon") {
                return Isa::Portable;
            }
            if want == "neon" || !std::arch::is_aarch64_feature_detected!("aes") {
                return Isa::Neon;
            }
            Isa::NeonPmull
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Isa::Portable
        }
    })
}

/// The instruction set the block scanner uses on this CPU: one of
/// `avx512vbmi2+pclmulqdq` (AVX-512 F, BW and VBMI2), `avx512+pclmulqdq`
/// (AVX-512 F and BW), `avx2+pclmulqdq`, `sse2+pclmulqdq`, `sse2`
/// (x86-64), `neon+pmull`,
/// `neon` (aarch64) or `portable`.
///
/// ```
/// let isa = fastcsv::scan::simd_level();
/// let known = [
///     "avx512vbmi2+pclmulqdq", "avx512+pclmulqdq", "avx2+pclmulqdq", "sse2+pclmulqdq", "sse2",
///     "neon+pmull", "neon", "portable",
/// ];
/// assert!(known.contains(&isa));
/// ```
pub fn simd_level() -> &'static str {
    isa().name()
}

/// Appends `src` to `out` without the bytes at offsets `drops[i] - shift`
/// (ascending, inside `src`: otherwise the bytes appended are wrong, but
/// nothing is read or written out of bounds), when this CPU can do it
/// with a byte compress (AVX-512 VBMI2, and the AVX-512 kernel chosen):
/// 64 bytes a step, with no branch on where the drops are. False, having
/// written nothing, otherwise.
pub(crate) fn append_without(src: &[u8], drops: &[u32], shift: usize, out: &mut Vec<u8>) -> bool {
    #[cfg(target_arch = "x86_64")]
    if vbmi2() {
        // SAFETY: AVX-512 F and BW (checked by `isa()`) and VBMI2 were
        // detected on this CPU.
        unsafe { x86::compress_avx512(src, drops, shift, out) };
        return true;
    }
    let _ = (src, drops, shift, out);
    false
}

/// Appends the bytes of `src` whose bits are set in `keep` (byte `i` at
/// bit `shift + i`; `keep` covers them all) to `out`, as
/// [`append_without`] does: with the byte compress, or false.
pub(crate) fn append_kept(src: &[u8], keep: &[u64], shift: usize, out: &mut Vec<u8>) -> bool {
    #[cfg(target_arch = "x86_64")]
    if vbmi2() {
        // SAFETY: AVX-512 F and BW (checked by `isa()`) and VBMI2 were
        // detected on this CPU.
        unsafe { x86::compress_kept_avx512(src, keep, shift, out) };
        return true;
    }
    let _ = (src, keep, shift, out);
    false
}

/// True when runs of [`Selection::csv`](crate::Selection::csv) and
/// [`Selection::csv_columns`](crate::Selection::csv_columns) records are
/// copied with a byte compress (the `avx512vbmi2+pclmulqdq` kernel), 64
/// input bytes a step. Without it, `csv_columns` copies each
/// run of kept bytes in turn, which costs more than its scan saves:
/// `fastcsv select` then reads every delimiter offset instead
/// ([`Selection::raw`](crate::Selection::raw)).
///
/// ```
/// let compress = fastcsv::scan::has_byte_compress();
/// assert_eq!(compress, fastcsv::scan::simd_level() == "avx512vbmi2+pclmulqdq");
/// ```
pub fn has_byte_compress() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        vbmi2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the AVX-512 VBMI2 kernel is chosen.
#[cfg(target_arch = "x86_64")]
fn vbmi2() -> bool {
    matches!(isa(), Isa::Avx512Vbmi2)
}

/// What the previous block leaves to the next one.
#[derive(Clone, Copy, Debug)]
struct Carry {
    /// All ones when the previous block ended inside quotes.
    inq: u64,
    /// 1 when the previous byte starts a field (structural, or record
    /// start).
    field_start: u64,
    /// 1 when the previous byte was a closing quote.
    close: u64,
    /// 1 when the previous byte was a CR that counts as a line end.
    cr: u64,
}

impl Carry {
    /// The carry at the first byte of a record.
    fn record_start() -> Carry {
        Carry { inq: 0, field_start: 1, close: 0, cr: 0 }
    }
}

/// The structural view of one block.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Delimiters outside quotes.
    delim: u64,
    /// Terminators outside quotes.
    nl: u64,
    /// Bytes that need the state machine (see the module docs).
    bad: u64,
    /// The first quote of each doubled pair; with `MODE_FIELDS`, the
    /// second (a quote that opens right after one that closes), which
    /// needs no look at the next block.
    pairs: u64,
    /// Bytes that end a line for Python's `line_num`.
    lines: u64,
    /// Every quote byte (structural or not).
    quote: u64,
    /// Quotes are in play: the block holds a quote byte or starts inside
    /// quotes (or a dialect option needs the full classification). When
    /// false, `MODE_CSV`'s `QuotedFields` are all zero.
    quoted: bool,
}

/// What `MODE_CSV` scanning adds to a [`Block`] (kept apart, so that the other
/// loops do not carry it).
#[derive(Clone, Copy, Debug, Default)]
struct QuotedFields {
    /// Quotes that open a field.
    open: u64,
    /// Quotes that close a field (the last byte before a structural one).
    close: u64,
    /// The bytes of quoted fields, from the opening quote up to the closing
    /// one (excluded), less those for which a CSV writer quotes a field:
    /// delimiters, line-end bytes and the first quote of each doubled
    /// pair. A quoted field needs no quotes when this covers it whole.
    plain: u64,
    /// The block ends inside a quoted field.
    open_at_end: bool,
}

/// The block in which the last record ended, kept so that the next record
/// (which starts in it) does not classify it again. Addresses are absolute,
/// so that it survives the caller re-slicing the same input; the reader
/// drops it whenever the bytes at those addresses may change (a buffer
/// refill), and only the reader turns it on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cache {
    /// Address of the next record's first byte.
    next: usize,
    /// Address of the block's first byte.
    base: usize,
    block: Block,
    /// The carry after the block.
    carry: Carry,
}

/// Bits `0..k` (k <= 64).
#[inline]
fn below(k: usize) -> u64 {
    if k >= 64 {
        !0
    } else {
        (1u64 << k) - 1
    }
}

/// The bits below the lowest set bit of `x` (all of them when `x` is 0).
#[inline(always)]
fn below_lowest(x: u64) -> u64 {
    (x & x.wrapping_neg()).wrapping_sub(1)
}

/// Bits `k..64` (k <= 64).
#[inline]
fn from(k: usize) -> u64 {
    !below(k)
}

/// The classifier for one dialect.
#[derive(Clone)]
pub(crate) struct Classifier {
    isa: Isa,
    needles: Needles,
    any_term: bool,
    double_quote: bool,
    quote: Option<u8>,
    term: u8,
    delim: u8,
    /// All ones when the dialect has an escape byte.
    esc_on: u64,
    /// All ones with `skip_initial_space`.
    space_on: u64,
}

impl Classifier {
    /// A classifier with the best kernel for this CPU.
    pub(crate) fn new(d: &Dialect) -> Classifier {
        let (any_term, term) = match d.terminator {
            Terminator::Any => (true, b'\n'),
            Terminator::Byte(t) => (false, t),
        };
        let (a, b) = if any_term { (b'\r', b'\n') } else { (term, term) };
        Classifier {
            isa: isa(),
            needles: Needles {
                bytes: [
                    d.delimiter,
                    d.quote.unwrap_or(d.delimiter),
                    a,
                    b,
                    d.escape.unwrap_or(d.delimiter),
                    b' ',
                ],
                quote_on: if d.quote.is_some() { !0 } else { 0 },
                extra: d.escape.is_some() || d.skip_initial_space,
            },
            any_term,
            double_quote: d.double_quote,
            quote: d.quote,
            term,
            delim: d.delimiter,
            esc_on: if d.escape.is_some() { !0 } else { 0 },
            space_on: if d.skip_initial_space { !0 } else { 0 },
        }
    }

    /// True for the dialect the scanning loops are also compiled for with
    /// its options as constants (`STD`): a quote byte with doubled quotes,
    /// any of CR, LF and CRLF ending records, no escape byte and no
    /// skip-initial-space. That is `csv`'s `excel` dialect with any
    /// delimiter or quote byte, by far the most common; with its options
    /// read from the classifier in every block instead, the loops tested
    /// flags and spilled registers.
    pub(crate) fn is_std(&self) -> bool {
        self.any_term && self.double_quote && self.quote.is_some() && !self.needles.extra
    }

    /// Whether CR and LF both end records; `true` under `STD`.
    #[inline(always)]
    fn any_term<const STD: bool>(&self) -> bool {
        STD || self.any_term
    }

    /// Whether escape and space bytes are looked for; `false` under `STD`.
    #[inline(always)]
    fn extra<const STD: bool>(&self) -> bool {
        !STD && self.needles.extra
    }

    /// Whether `c` ends records (under `STD`, CR and LF are constants).
    #[inline(always)]
    fn is_nl<const STD: bool>(&self, c: u8) -> bool {
        if self.any_term::<STD>() {
            c == b'\r' || c == b'\n'
        } else {
            c == self.term
        }
    }

    /// Masks of the last, partial block, zero-padded, with the portable
    /// kernel: out of line, so that the hot loop stays small.
    #[cold]
    #[inline(never)]
    fn tail_masks(&self, rest: &[u8]) -> Masks {
        let mut pad = [0u8; 64];
        pad[..rest.len()].copy_from_slice(rest);
        // SAFETY: `pad` is 64 bytes; the portable kernel needs no CPU
        // features.
        unsafe { Portable::masks::<false>(pad.as_ptr(), &self.needles) }
    }

    /// Classifies the block at `input[base..]` and updates the carry; with
    /// `MODE_CSV`, also sets `qf`.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn block<K: Kernel, const STD: bool, const MODE: u8>(
        &self,
        input: &[u8],
        base: usize,
        carry: &mut Carry,
        qf: &mut QuotedFields,
    ) -> Block {
        let rest = input.len() - base;
        if rest >= 64 {
            // SAFETY: 64 bytes at `base`; the caller guarantees the
            // instruction set.
            let m = unsafe { K::masks::<STD>(input.as_ptr().add(base), &self.needles) };
            // A full block: compiled with `valid` a constant.
            self.classify::<STD, MODE>(m, !0, input, base, carry, qf)
        } else {
            let m = self.tail_masks(&input[base..]);
            self.classify::<STD, MODE>(m, below(rest), input, base, carry, qf)
        }
    }

    /// The rest of [`Classifier::block`], given the raw masks and the mask
    /// of bits that are real bytes.
    #[inline(always)]
    fn classify<const STD: bool, const MODE: u8>(
        &self,
        m: Masks,
        valid: u64,
        input: &[u8],
        base: usize,
        carry: &mut Carry,
        qf: &mut QuotedFields,
    ) -> Block {
        // Bits past the end of the input are garbage; bits below them only
        // depend on bits below them, so masking at the end is enough.
        let q = m.quote & valid;
        let nl = (m.nl_a | m.nl_b) & valid;
        let d = m.delim & valid;
        let lines = if self.any_term::<STD>() {
            let cr = m.nl_a & valid;
            let lf = m.nl_b & valid;
            cr | (lf & !((cr << 1) | carry.cr))
        } else {
            nl
        };
        let cr_out = if self.any_term::<STD>() { (m.nl_a & valid) >> 63 } else { 0 };
        // The modes that look at no quote's next byte (`MODE_FIELDS` marks
        // the second quote of each pair, which needs only the byte before
        // it) check the byte after a closing quote in bit 63 here, in the
        // next block (it must be a delimiter, a line end or a quote),
        // rather than load it in the block of the quote.
        let defer =
            MODE == MODE_COUNT || MODE == MODE_RECORDS || MODE == MODE_RAW || MODE == MODE_FIELDS;
        let late_close = if defer { carry.close } else { 0 };
        if (q | carry.inq | late_close) == 0 && !self.extra::<STD>() {
            // No quote in play (the common case in numeric data): every
            // delimiter and terminator is structural, and nothing is bad.
            let structural = d | nl;
            *carry = Carry { inq: 0, field_start: structural >> 63, close: 0, cr: cr_out };
            if MODE == MODE_CSV || MODE == MODE_COLS {
                *qf = QuotedFields::default();
            }
            return Block { delim: d, nl, bad: 0, pairs: 0, lines, quote: 0, quoted: false };
        }
        let late_bad = late_close & !(d | nl | q) & 1;
        let x = m.quote_prefix ^ carry.inq;
        let open = q & x;
        let close = q & !x;
        let sd = d & !x;
        let snl = nl & !x;
        let structural = sd | snl;
        let field_start = (structural << 1) | carry.field_start;
        // The byte after the block, for quotes in bit 63 (when deferred, a
        // closing quote there is taken as followed by a structural byte,
        // and `late_bad` of the next block checks it).
        // Only a quote in bit 63 looks at it (every use is under `close`),
        // so the byte is not loaded otherwise: a branch rarely taken.
        let (next_struct, next_quote) = match input.get(base + 64) {
            _ if defer => (1, 0),
            _ if q >> 63 == 0 => (0, 0),
            Some(&c) => (
                u64::from(c == self.delim || self.is_nl::<STD>(c)),
                u64::from(Some(c) == self.quote),
            ),
            None => (0, 0),
        };
        let before_struct = (structural >> 1) | (next_struct << 63);
        let mut bad = late_bad;
        let pairs;
        if STD || self.double_quote {
            let before_open = (open >> 1) | (next_quote << 63);
            let after_close = (close << 1) | carry.close;
            pairs = if MODE == MODE_FIELDS { open & after_close } else { close & before_open };
            bad |= (open & !field_start & !after_close) | (close & !before_struct & !before_open);
        } else {
            pairs = 0;
            bad |= (open & !field_start) | (close & !before_struct);
        }
        if self.extra::<STD>() {
            bad |= (m.esc & valid & self.esc_on) | (m.space & field_start & valid & self.space_on);
        }
        *carry = Carry {
            inq: ((x as i64) >> 63) as u64,
            field_start: structural >> 63,
            close: close >> 63,
            cr: cr_out,
        };
        if MODE == MODE_CSV || MODE == MODE_COLS {
            // `x` covers each quoted field but the first quote of each
            // doubled pair; the delimiters and line ends inside are taken
            // out.
            *qf = QuotedFields {
                open: open & field_start,
                close: close & before_struct,
                plain: x & !(d | nl),
                open_at_end: ((x | pairs) >> 63) != 0,
            };
        }
        Block { delim: sd, nl: snl, bad, pairs, lines, quote: q, quoted: true }
    }
}

/// The quotes a CSV writer drops in a block with quotes in play
/// (`MODE_CSV` with [`Kernel::DEPOSIT`], and `MODE_COLS`), from its quoted
/// fields `qf` at `rel` from the batch's offset base: those of the block's
/// clean fields, and 1 when the field the block starts in (opened at
/// `*open_at`, in an earlier block) is clean too. Adding each field's
/// opening quote to the bits of `plain` carries through a field up to the
/// first bit missing: its closing quote when nothing inside keeps the
/// quotes; a field from the last block starts with the carry in
/// (`*clean_in`). Updates `*clean_in`, `*in_field` (1 when the next block
/// starts inside a quoted field) and `*open_at` for the next block.
///
/// # Safety
///
/// The CPU must support `K`'s instruction set.
#[inline(always)]
unsafe fn clean_quotes<K: Kernel>(
    qf: &QuotedFields,
    rel: u32,
    clean_in: &mut u64,
    in_field: &mut u64,
    open_at: &mut u32,
) -> (u64, u64) {
    let (s1, c1) = qf.plain.overflowing_add(qf.open);
    let (s2, c2) = s1.overflowing_add(*clean_in);
    let clean = s2 & qf.close;
    // SAFETY: forwarded from the caller.
    let (opens, carried) = unsafe { K::clean_opens(qf.open, qf.close, clean, *in_field) };
    *in_field = u64::from(qf.open_at_end);
    *clean_in = *in_field & u64::from(c1 | c2);
    if qf.open != 0 {
        *open_at = rel + 63 - qf.open.leading_zeros();
    }
    (opens | clean, carried)
}

/// [`clean_quotes`] for the modes that write one word of bytes kept per
/// block (`MODE_COLS`, and `MODE_CSV` with the byte compress): the quotes
/// to drop in the block, with the opening quote of the field it started
/// in (opened at `*open_at`, in an earlier block, whose word is written)
/// cleared in `keep` when that field is clean.
///
/// # Safety
///
/// The CPU must support `K`'s instruction set.
#[inline(always)]
unsafe fn clean_quotes_in_words<K: Kernel>(
    qf: &QuotedFields,
    rel: u32,
    (clean_in, in_field, open_at): (&mut u64, &mut u64, &mut u32),
    keep: &mut [u64],
) -> u64 {
    let o = *open_at as usize;
    // SAFETY: forwarded from the caller.
    let (drop, carried) = unsafe { clean_quotes::<K>(qf, rel, clean_in, in_field, open_at) };
    if let Some(w) = keep.get_mut(o / 64) {
        *w &= !(carried << (o % 64));
    }
    drop
}

/// Appends all-ones words (every byte kept) to `keep` up to `n` words.
#[inline(always)]
fn keep_all_up_to(keep: &mut Vec<u64>, n: usize) {
    while keep.len() < n {
        keep.push(!0);
    }
}

/// The span `save` would produce for the regular field `input[a..e]` when
/// the dialect has no filter, trim or field limit and the field has no
/// doubled quotes: the bytes between the quotes, or the field itself; an
/// empty field is `0..0`, as the state machine leaves it.
///
/// Computed without branches on the field's shape (besides the one load),
/// so that the three integers stay in registers.
#[inline(always)]
fn plain_span(input: &[u8], a: usize, e: usize, quote: i32) -> Span {
    let nonempty = a != e;
    let quoted = nonempty && i32::from(input[a]) == quote;
    // Quoted: the bytes between the quotes (0..0 for `""`); unquoted: the
    // field (0..0 when empty).
    let (start, end) = if quoted { (a + 1, e - 1) } else { (a, e) };
    let keep = usize::from(start < end).wrapping_neg();
    let flags = if quoted { QUOTED } else { NUMERIC & usize::from(nonempty).wrapping_neg() };
    Span { start: start & keep, end: end & keep, flags }
}

/// Copies each record of `out.pending` (records the scanning loop took
/// from `input`, holding doubled quotes of the quote byte `quote`)
/// unescaped to `out.scratch`, as [`copy_unescaped`] does, and says where
/// in `out.copies` (`SelectedRecord::copy`).
fn copy_pending(input: &[u8], out: &mut Selected, quote: u8, delim: u8) {
    #[cfg(target_arch = "x86_64")]
    if vbmi2() {
        // SAFETY: AVX-512 F and BW, BMI2, PCLMULQDQ (checked by `isa()`)
        // and VBMI2 were detected on this CPU.
        unsafe { x86::copy_pending_vbmi2(input, out, quote, delim) };
        return;
    }
    let _ = delim; // Only the byte compress's copy finds the delimiters.
    copy_pending_portable(input, out, quote);
}

/// [`copy_pending`] without the byte compress: each record through
/// [`copy_unescaped`], with the loop's offsets of its delimiters.
fn copy_pending_portable(input: &[u8], out: &mut Selected, quote: u8) {
    for &k in &out.pending {
        let rec = &mut out.records[k as usize];
        let at = rec.ends_at as usize;
        let ends = &out.ends[at..at + rec.fields - 1];
        rec.copy = out.copies.len() as u32;
        let rel = (rec.start - out.ends_base) as u32;
        let (copies, scratch) = (&mut out.copies, &mut out.scratch);
        let record = &input[rec.start..rec.end];
        copy_unescaped(record, rel, ends, quote, out.copies_base, copies, scratch);
    }
}

/// Copies the regular record `record` (without its terminator; `rel` is
/// its offset from the offsets' base), which holds doubled quotes of the
/// quote byte `quote`, to the end of `scratch` with the second quote of
/// each pair left out, given the offsets from the base of its structural
/// delimiters (`ends`). Appends to `copies` where the copy starts, where
/// each delimiter is in it, and where it ends, as offsets in `scratch`
/// from `copies_base`. Its fields are then read from the copy as the other
/// records' are from the input: a quoted field keeps its enclosing quotes
/// (the second quote of a pair is never one of them), and the delimiters
/// are where the offsets say.
///
/// The pairs are found again here, from the record's quotes: in a regular
/// record, a quote opens or closes a quoted field or is one of a pair, and
/// a pair's second quote is the one that opens right after one closed.
/// (The scanning loop then only counts the pairs, with no list of them to
/// write in every block that has one.)
fn copy_unescaped(
    record: &[u8],
    rel: u32,
    ends: &[u32],
    quote: u8,
    copies_base: usize,
    copies: &mut Vec<u32>,
    scratch: &mut Vec<u8>,
) {
    let at = scratch.len() - copies_base;
    copies.push(at as u32);
    let shift = (at as u32).wrapping_sub(rel);
    // The bytes copied up to `from`; the pairs left out so far; the next
    // delimiter; inside a quoted field; the byte after the last closing
    // quote.
    let (mut from, mut dropped, mut di) = (0usize, 0u32, 0usize);
    let (mut inq, mut after_close) = (false, usize::MAX);
    for i in memchr::memchr_iter(quote, record) {
        if inq {
            (inq, after_close) = (false, i + 1);
            continue;
        }
        inq = true;
        if after_close != i {
            continue;
        }
        // The second quote of a pair: the delimiters before it move back
        // by the pairs so far, and it is left out.
        while let Some(&e) = ends.get(di).filter(|&&e| ((e - rel) as usize) < i) {
            copies.push(e.wrapping_add(shift) - dropped);
            di += 1;
        }
        scratch.extend_from_slice(&record[from..i]);
        (from, dropped) = (i + 1, dropped + 1);
    }
    copies.extend(ends[di..].iter().map(|&e| e.wrapping_add(shift) - dropped));
    scratch.extend_from_slice(&record[from..]);
    copies.push((scratch.len() - copies_base) as u32);
}

/// Appends `base + i` for every set bit `i` of `bits`, in order. Writes
/// eight offsets at a time whatever the bit count (the extra ones land in
/// spare capacity and are not kept), so that the branch is taken once per
/// eight delimiters, not mispredicted once per block.
#[inline(always)]
fn flatten(out: &mut Vec<u32>, mut bits: u64, base: u32) {
    let n = bits.count_ones() as usize;
    out.reserve(64);
    let len = out.len();
    let spare = &mut out.spare_capacity_mut()[..64];
    let mut i = 0;
    loop {
        for slot in &mut spare[i..i + 8] {
            // `trailing_zeros` of 0 is 64: harmless in an unkept slot.
            slot.write(base.wrapping_add(bits.trailing_zeros()));
            bits &= bits.wrapping_sub(1);
        }
        i += 8;
        if i >= n {
            break;
        }
    }
    // SAFETY: the first `n <= 64` slots after the old length were written
    // above, inside the capacity reserved for 64.
    unsafe { out.set_len(len + n) };
}

/// True when a record the block scanner may take starts at `input[r]`: not
/// past the end, not an empty line, not a comment.
#[inline(always)]
fn starts_record<const STD: bool>(cls: &Classifier, input: &[u8], r: usize, comment: i32) -> bool {
    r < input.len() && !cls.is_nl::<STD>(input[r]) && i32::from(input[r]) != comment
}

/// Pushes `span`, a regular field's plain span; a quoted one is then
/// unescaped into `scratch` when its content holds quote bytes (in a
/// regular record they come as doubled pairs).
#[inline(always)]
fn push_unescaped(
    spans: &mut Vec<Span>,
    input: &[u8],
    span: Span,
    quote: i32,
    scratch: &mut Vec<u8>,
) {
    // The span goes in from its three integers; a quoted one is then
    // fixed in place, out of line. (Pushing the merged result of both
    // paths made the compiler pass it through the stack in pieces and read
    // it back as one 16-byte load, which the CPU cannot forward from two
    // 8-byte stores: a fifth of `select`'s time went to that stall.)
    let Span { start, end, flags } = span;
    spans.push(Span { start, end, flags });
    if flags == QUOTED {
        fix_quoted(spans, input, quote, scratch);
    }
}

/// Replaces the last span (a quoted field) with [`unescaped_quoted`]'s.
#[inline(never)]
fn fix_quoted(spans: &mut [Span], input: &[u8], quote: i32, scratch: &mut Vec<u8>) {
    if let Some(last) = spans.last_mut() {
        *last = unescaped_quoted(input, *last, quote, scratch);
    }
}

/// [`unescaped`] for a quoted field, out of line.
#[inline(never)]
fn unescaped_quoted(input: &[u8], span: Span, quote: i32, scratch: &mut Vec<u8>) -> Span {
    let mut rest = &input[span.start..span.end];
    let q = quote as u8;
    if memchr::memchr(q, rest).is_none() {
        return span;
    }
    let start = scratch.len();
    while let Some(i) = memchr::memchr(q, rest) {
        // Keep the first quote of the pair, skip the second.
        scratch.extend_from_slice(&rest[..=i]);
        rest = rest.get(i + 2..).unwrap_or_default();
    }
    scratch.extend_from_slice(rest);
    Span { start, end: scratch.len(), flags: OWNED | QUOTED }
}

impl Scanner {
    /// Scans the whole record starting at `input[r]` with the block
    /// classifier. Called in `StartRecord` (after `skip_lf`), with `out`
    /// freshly cleared. Returns the offset past the record's terminator, or
    /// `None`, having changed nothing, when the record is not regular (see
    /// the module docs) and must go through the state machine.
    pub(super) fn block_record(
        &mut self,
        input: &[u8],
        r: usize,
        out: &mut Fields,
    ) -> Option<usize> {
        match self.block.as_ref()?.isa {
            Isa::Portable => self.block_record_with::<Portable, false>(input, r, out),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX2 after detecting it on this CPU.
            Isa::Avx2Clmul => unsafe { x86::record_avx2(self, input, r, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 after detecting it on this CPU.
            Isa::Avx512Clmul => unsafe { x86::record_avx512(self, input, r, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 VBMI2 after detecting it.
            Isa::Avx512Vbmi2 => unsafe { x86::record_vbmi2(self, input, r, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose pclmulqdq after detecting it.
            Isa::Sse2Clmul => unsafe { x86::record_sse2_clmul(self, input, r, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of x86-64.
            Isa::Sse2 => unsafe { x86::record_sse2(self, input, r, out) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose PMULL after detecting `aes` (and NEON).
            Isa::NeonPmull => unsafe { arm::record_neon_pmull(self, input, r, out) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose NEON after detecting it.
            Isa::Neon => unsafe { arm::record_neon(self, input, r, out) },
        }
    }

    /// [`Scanner::block_record`] with kernel `K`. Must only run where `K`'s
    /// instruction set is available (it is inlined into the entry points
    /// compiled for it).
    #[inline(always)]
    fn block_record_with<K: Kernel, const STD: bool>(
        &mut self,
        input: &[u8],
        r: usize,
        out: &mut Fields,
    ) -> Option<usize> {
        let cls = self.block.as_ref()?;
        let c0 = input[r];
        if cls.is_nl::<STD>(c0) || i32::from(c0) == self.comment {
            return None;
        }
        let cls = cls.clone();
        let at = |i: isize| (input.as_ptr() as usize).wrapping_add(i as usize);
        // Resume in the block the previous record ended in, if it is cached.
        // `base` is signed: callers that re-slice the input at each record
        // (the reader does) put that block's start before `input[0]`.
        let r_ = r as isize;
        let (mut base, mut carry, mut cached) = match self.block_cache.take() {
            Some(c) if c.next == at(r_) => {
                (r_ - c.next.wrapping_sub(c.base) as isize, c.carry, Some(c.block))
            }
            _ => (r_, Carry::record_start(), None),
        };
        // Offset of `x` (at or after the record start) in the block.
        let rel = |x: usize, base: isize| (x as isize - base).max(0) as usize;
        let mut fstart = r;
        let mut dq_pending = false;
        let mut lines = 0u64;
        // Fields can be pushed as spans directly when saving them would do
        // nothing else. A field whose raw bytes fit the size limit has at
        // most that many characters, so only longer ones need `save`'s
        // check.
        let direct = !self.trim && !self.filter.active();
        let limit = self.limit;
        while base < input.len() as isize {
            let b = match cached.take() {
                Some(b) => b,
                // SAFETY: this function only runs where `K` is supported;
                // past the cached block, `base > r >= 0`.
                // `MODE_FIELDS`: the pairs are needed (their second
                // quotes, so that one straddling two blocks shows in the
                // second).
                None => unsafe {
                    cls.block::<K, STD, MODE_FIELDS>(
                        input,
                        base as usize,
                        &mut carry,
                        &mut QuotedFields::default(),
                    )
                },
            };
            // Bits before the record (in a cached block) are not ours.
            let mine = from(rel(r, base));
            let ok = below_lowest(b.bad & mine);
            let mut ends = (b.delim | b.nl) & ok & mine;
            if direct && !dq_pending && b.pairs == 0 {
                // The common case, in a tight loop: the delimiters before
                // the record's end (if it is in this block) end plain
                // fields.
                let nl = b.nl & ends;
                let mut delims = ends & (nl & nl.wrapping_neg()).wrapping_sub(1);
                ends &= !delims;
                // At most 64 spans: write them into reserved capacity with
                // a local count, so the vector's length is stored once.
                out.spans.reserve(64);
                let spare = out.spans.spare_capacity_mut();
                let mut n = 0;
                let mut over = false;
                while delims != 0 {
                    let p = (base + delims.trailing_zeros() as isize) as usize;
                    over |= (p - fstart) as u64 > limit;
                    spare[n].write(plain_span(input, fstart, p, self.quote));
                    n += 1;
                    fstart = p + 1;
                    delims &= delims - 1;
                }
                let len = out.spans.len() + n;
                // SAFETY: the `n` spans after the old length were just
                // written (and `n <= 64 <=` the reserved spare capacity).
                unsafe { out.spans.set_len(len) };
                if over {
                    // The state machine reports the error at its byte.
                    self.block_abandon(out);
                    return None;
                }
            }
            while ends != 0 {
                let k = ends.trailing_zeros() as usize;
                // At or after the record start, so not negative.
                let p = (base + k as isize) as usize;
                let lo = rel(fstart, base);
                let dq = dq_pending || (b.pairs != 0 && b.pairs & below(k) & from(lo) != 0);
                if direct && !dq && (p - fstart) as u64 <= limit {
                    out.spans.push(plain_span(input, fstart, p, self.quote));
                } else if !self.block_field(input, fstart, p, dq, out) {
                    self.block_abandon(out);
                    return None;
                }
                if b.nl >> k & 1 != 0 {
                    let mut i = p + 1;
                    if input[p] == b'\r' && cls.any_term::<STD>() {
                        match input.get(i) {
                            Some(b'\n') => i += 1,
                            Some(_) => {}
                            None => {
                                // The LF may come in the next input.
                                self.block_abandon(out);
                                return None;
                            }
                        }
                    }
                    self.rec_off = r;
                    self.rec_line = self.lines + 1;
                    self.lines += lines + u64::from((b.lines & below(k + 1) & mine).count_ones());
                    self.state = State::StartRecord;
                    self.row_ready = true;
                    if self.cache_blocks && (i as isize) < base + 64 {
                        let (next, base) = (at(i as isize), at(base));
                        self.block_cache = Some(Cache { next, base, block: b, carry });
                    }
                    return Some(i);
                }
                fstart = p + 1;
                dq_pending = false;
                ends &= ends - 1;
            }
            if b.bad & mine != 0 {
                break;
            }
            lines += u64::from((b.lines & mine).count_ones());
            dq_pending |= b.pairs & from(rel(fstart, base)) != 0;
            base += 64;
        }
        self.block_abandon(out);
        None
    }

    /// Whether the block classifier is on for a dialect it has loops
    /// specialised for ([`Classifier::is_std`]).
    fn std_dialect(&self) -> bool {
        self.block.as_ref().is_some_and(Classifier::is_std)
    }

    /// Undoes a partial `block_record`: the record starts afresh.
    fn block_abandon(&mut self, out: &mut Fields) {
        out.clear();
        self.fstart = 0;
        self.fend = 0;
        self.sstart = 0;
        self.owned = false;
        self.quoted = false;
        self.numeric = false;
    }

    /// Saves the regular field `input[a..e]` through the state machine's
    /// own `add`/`save`, in the same steps (so the same spans and flags).
    /// `dq` says the field holds doubled quotes. False when the field is
    /// over the size limit.
    #[inline]
    fn block_field(
        &mut self,
        input: &[u8],
        a: usize,
        e: usize,
        dq: bool,
        out: &mut Fields,
    ) -> bool {
        if a < e && i32::from(input[a]) == self.quote {
            // `"content"`: the closing quote is at e - 1.
            self.quoted = true;
            let end = e - 1;
            // `seg` starts the part being added; `search` is where the next
            // quote is looked for.
            let mut seg = a + 1;
            if dq {
                let q = self.quote as u8;
                // The state machine adds up to the first quote of a pair,
                // then goes on from the second quote (data) to the next.
                // In a regular field every inner quote is such a pair.
                let mut search = seg;
                while let Some(k) = memchr::memchr(q, &input[search..end]) {
                    let j = search + k;
                    if self.add(input, seg, j, out).is_err() {
                        return false;
                    }
                    seg = j + 1;
                    search = j + 2;
                }
            }
            if self.add(input, seg, end, out).is_err() {
                return false;
            }
        } else {
            self.numeric = a < e;
            if self.add(input, a, e, out).is_err() {
                return false;
            }
        }
        self.save(input, out);
        true
    }

    /// Counts the regular records from `input[*pos..]` without building
    /// fields, as [`Reader::count_rows`](crate::Reader::count_rows) needs:
    /// `lines()`, `record_offset()` and `record_line()` are updated as if
    /// each had been scanned. Stops, with `*pos` at its first byte, at the
    /// first record that needs the state machine, the first record whose
    /// field count differs from `*expect` (when `check`), or the
    /// unterminated end of the input. `*expect` is set from the first
    /// record when `check` and unset.
    pub(crate) fn block_count(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        check: bool,
    ) -> u64 {
        let Some(isa) = self.block.as_ref().filter(|_| self.block_on).map(|c| c.isa) else {
            return 0;
        };
        match isa {
            Isa::Portable => self.block_count_with::<Portable, false>(input, pos, expect, check),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX2 after detecting it on this CPU.
            Isa::Avx2Clmul => unsafe { x86::count_avx2(self, input, pos, expect, check) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 after detecting it on this CPU.
            Isa::Avx512Clmul => unsafe { x86::count_avx512(self, input, pos, expect, check) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 VBMI2 after detecting it.
            Isa::Avx512Vbmi2 => unsafe { x86::count_vbmi2(self, input, pos, expect, check) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose pclmulqdq after detecting it.
            Isa::Sse2Clmul => unsafe { x86::count_sse2_clmul(self, input, pos, expect, check) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of x86-64.
            Isa::Sse2 => unsafe { x86::count_sse2(self, input, pos, expect, check) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose PMULL after detecting `aes` (and NEON).
            Isa::NeonPmull => unsafe { arm::count_neon_pmull(self, input, pos, expect, check) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose NEON after detecting it.
            Isa::Neon => unsafe { arm::count_neon(self, input, pos, expect, check) },
        }
    }

    /// Whether [`Scanner::block_count`] or [`Scanner::block_select`],
    /// having stopped at a record start with `tail` (the rest of the input
    /// from there) left, could go on if more input were appended: the block
    /// scanner can start there and `tail` holds no record terminator, so it
    /// stopped only for want of the record's end. A buffered count or batch
    /// then refills instead of handing the record to the state machine
    /// (which builds every field of it: a sixth of the samples when counting
    /// the wide file did that). A record the block scanner cannot take for
    /// another reason is found so after the refill, once its end is in.
    pub(crate) fn block_needs_more(&self, tail: &[u8]) -> bool {
        let ready = self.block.is_some()
            && self.block_on
            && self.state == State::StartRecord
            && !self.skip_lf;
        ready
            && if self.any_term {
                memchr::memchr2(b'\r', b'\n', tail).is_none()
            } else {
                memchr::memchr(self.term, tail).is_none()
            }
    }

    /// [`Scanner::block_count`] with kernel `K`. Must only run where `K`'s
    /// instruction set is available (it is inlined into the entry points
    /// compiled for it).
    #[inline(always)]
    fn block_count_with<K: Kernel, const STD: bool>(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        check: bool,
    ) -> u64 {
        let args = SelectArgs {
            cols: &[],
            max_records: usize::MAX,
            check,
            all_cols: false,
            csv: false,
            raw: false,
            csv_cols: None,
        };
        let mut none = Selected::default();
        self.block_records_with::<K, MODE_COUNT, STD>(input, pos, expect, &args, &mut none)
    }

    /// The classifier for a run of block-scanned records starting at
    /// `input[pos]`, or `None` when no run can start there (no block
    /// scanner, the state machine is mid-record or owes an LF, nothing to
    /// take, or the next record is an empty line or a comment).
    fn run_start(&self, input: &[u8], pos: usize, max_records: usize) -> Option<Classifier> {
        let cls = self.block.clone()?;
        let ready = self.state == State::StartRecord && !self.skip_lf && max_records > 0;
        (ready && starts_record::<false>(&cls, input, pos, self.comment)).then_some(cls)
    }

    /// [`Scanner::block_records_with`] in `MODE` (not `MODE_COUNT`), for
    /// the dialect.
    #[inline(always)]
    fn block_records_mode<K: Kernel, const MODE: u8>(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        sel: &SelectArgs<'_>,
        out: &mut Selected,
    ) -> u64 {
        if self.std_dialect() {
            self.block_records_with::<K, MODE, true>(input, pos, expect, sel, out)
        } else {
            self.block_records_with::<K, MODE, false>(input, pos, expect, sel, out)
        }
    }

    /// The loop of [`Scanner::block_count`] (`MODE_COUNT`); in the other
    /// modes it also records every record it takes in `out` (start, end,
    /// line, field count, and whether it holds a quote byte) and stops
    /// after `sel.max_records`, and keeps what the mode says. `sel.cols`
    /// is not looked at.
    #[inline(always)]
    fn block_records_with<K: Kernel, const MODE: u8, const STD: bool>(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        sel: &SelectArgs<'_>,
        out: &mut Selected,
    ) -> u64 {
        let Some(cls) = self.run_start(input, *pos, sel.max_records) else {
            return 0;
        };
        // With `MODE_FIELDS`, the offsets of all structural delimiters are
        // kept (a few instructions per field, no span built); records
        // holding doubled quotes are noted (from a running count of the
        // pairs) and copied unescaped after the loop.
        // With `MODE_CSV`, the quotes a CSV writer drops are kept instead.
        // `MODE_RAW` keeps the offsets and unescapes nothing.
        // With `MODE_COLS`, which bytes the CSV of the selected columns
        // keeps (one word per block).
        const { assert!(MODE <= MODE_COLS) };
        let keep = MODE != MODE_COUNT;
        let masks = MODE == MODE_FIELDS || MODE == MODE_RAW;
        let csv = MODE == MODE_CSV;
        let cols = MODE == MODE_COLS;
        let unescape = MODE == MODE_FIELDS;
        if masks || csv || cols {
            out.ends.clear();
            out.copies.clear();
            out.pending.clear();
            out.copies_base = out.scratch.len();
            out.drops.clear();
            out.keep.clear();
            out.ends_base = *pos;
        }
        let cm = match sel.csv_cols {
            Some(cm) if cols => cm,
            _ => ColMasks { sel: 0, after: 0, at: 0 },
        };
        // With `cols`: the keep state (all ones: kept) at the block's
        // start, before the forced bits; flips and forced kept bytes that
        // fall past the block's end (a delimiter in its last byte, a
        // record ending there).
        let mut keeping = if cm.selected(0) { !0u64 } else { 0 };
        let (mut flips_next, mut kept_next) = (0u64, 0u64);
        // With `cols`, for the block in hand: the flips, the bytes forced
        // in (LFs) and out (the CR of a CRLF), the quotes to drop, and
        // whether its word is still to be written.
        let (mut flips, mut forced_in, mut forced_out, mut drop) = (0u64, 0u64, 0u64, 0u64);
        let mut pending = false;
        let dep = |m: u64, d: usize, seg: u64| -> u64 {
            if d < 64 {
                // SAFETY: this function only runs where `K` is supported.
                unsafe { K::deposit(m >> d, seg) }
            } else {
                0
            }
        };
        // A borrow of the field rather than the vector taken out of `out`:
        // taking it cost the loops of the other modes 2% more instructions
        // (and `read_batch` with every field 9% more time), for no gain
        // here.
        let drops = &mut out.drops;
        // With `csv`: the opening quote (from `ends_base`) of the quoted
        // field that the last block left open, and 1 if that field holds
        // no byte that keeps its quotes so far.
        let (mut open_at, mut clean_in) = (0u32, 0u64);
        // With `csv` and `K::DEPOSIT`: 1 when the block starts inside a
        // quoted field.
        let mut in_field = 0u64;
        // With `csv`: whether the bytes kept are written as one word per
        // block (`Selected::keep`) rather than the offsets of the quotes
        // dropped (`Selected::drops`). Words cost nothing per quote and
        // feed the byte compress whole; without the compress, copying
        // around each quote from a list of offsets is cheaper than finding
        // them again in the words (text `cat -j1` 15% slower).
        let csv_words = csv && K::DEPOSIT && has_byte_compress();

        let mut qf = QuotedFields::default();
        // Offsets from `ends_base` fit `u32`: no block starts past
        // `ENDS_SPAN` (the record in progress is left to the next call).
        let n = if masks || csv || cols {
            if cols || csv_words {
                out.keep.reserve((input.len() - *pos) / 64 + 2);
            }
            input.len().min((*pos).saturating_add(ENDS_SPAN + 1))
        } else {
            input.len()
        };
        let mut r = *pos;
        let comment = self.comment;
        let starts_ok = |r: usize| starts_record::<STD>(&cls, input, r, comment);
        let mut count = 0u64;
        let mut carry = Carry::record_start();
        let mut base = r;
        let lines0 = self.lines;
        // Structural delimiters (without `masks`: with it, `out.ends` holds
        // them), line ends and quote bytes from `*pos` to `base`, and
        // delimiters, quotes and doubled quotes up to the current record's
        // start.
        let (mut d_total, mut l_total, mut q_total) = (0u64, 0u64, 0u64);
        let (mut d_rec, mut q_rec, mut pr_rec) = (0u64, 0u64, 0u64);
        // With `unescape`: the doubled pairs from `*pos` to `base`.
        let mut pr_total = 0u64;
        if keep {
            out.records.reserve(sel.max_records.min(1 << 16));
        }
        if unescape {
            out.pending.reserve(sel.max_records.min(1 << 16));
        }
        'blocks: while base < n {
            // SAFETY: this function only runs where `K` is supported.
            let b = unsafe { cls.block::<K, STD, MODE>(input, base, &mut carry, &mut qf) };
            if masks || csv {
                let rel = (base - out.ends_base) as u32;
                if masks {
                    // SAFETY: this function only runs where `K` is supported.
                    unsafe { K::flatten(&mut out.ends, b.delim, rel) };
                }
                // A block without quotes in play has no quote to drop,
                // and neither starts nor ends inside a quoted field; testing
                // that (rather than whether the block has fields that open
                // or close) follows the branch `classify` took.
                if csv_words && b.quoted {
                    // The block's word: every byte but the quotes dropped.
                    // Only blocks with quotes in play write theirs (with
                    // the words of the blocks without, all ones, since the
                    // last one that did; the rest at the end), so that
                    // data without quotes writes none, and quoted text
                    // takes no branch on whether a block drops any.
                    keep_all_up_to(&mut out.keep, rel as usize / 64);
                    let state = (&mut clean_in, &mut in_field, &mut open_at);
                    // SAFETY: this function only runs where `K` is supported.
                    let drop =
                        unsafe { clean_quotes_in_words::<K>(&qf, rel, state, &mut out.keep) };
                    out.keep.push(!drop);
                } else if csv && K::DEPOSIT && b.quoted {
                    // As below, without a loop over the fields: the clean
                    // fields' opening quotes come from a bit deposit, and
                    // the quotes to drop are written from one mask (in
                    // order: opening and closing quotes alternate).
                    let open_before = open_at;
                    // SAFETY: this function only runs where `K` is supported.
                    let (mut bits, carried) = unsafe {
                        clean_quotes::<K>(&qf, rel, &mut clean_in, &mut in_field, &mut open_at)
                    };
                    // The opening quote of the field the block started in
                    // goes first, when that field is clean. Quotes to drop
                    // are sparse (about one a block in quoted text): two
                    // slots are written whatever their number, and a loop
                    // takes any more.
                    let n = carried as usize + bits.count_ones() as usize;
                    drops.reserve(65);
                    let len = drops.len();
                    let spare = &mut drops.spare_capacity_mut()[..65];
                    spare[0].write(open_before);
                    let mut i = carried as usize;
                    for _ in 0..2 {
                        // `trailing_zeros` of 0 is 64: harmless in an
                        // unkept slot.
                        spare[i].write(rel + bits.trailing_zeros());
                        bits &= bits.wrapping_sub(1);
                        i += 1;
                    }
                    while bits != 0 {
                        spare[i].write(rel + bits.trailing_zeros());
                        bits &= bits - 1;
                        i += 1;
                    }
                    // SAFETY: the `n <= 65` slots after the old length were
                    // written above, inside the capacity reserved.
                    unsafe { drops.set_len(len + n) };
                } else if csv && !K::DEPOSIT && (qf.open | qf.close | clean_in) != 0 {
                    // Adding each field's opening quote to the bits of
                    // `plain` carries through a field up to the first bit
                    // missing: its closing quote when nothing inside keeps
                    // the quotes. A field from the last block starts
                    // with the carry in.
                    let (s1, c1) = qf.plain.overflowing_add(qf.open);
                    let (s2, c2) = s1.overflowing_add(clean_in);
                    let mut clean = s2 & qf.close;
                    if clean != 0 {
                        // At most 32 fields close in a block: 64 slots.
                        drops.reserve(64);
                        let len = drops.len();
                        let spare = &mut drops.spare_capacity_mut()[..64];
                        let mut i = 0;
                        while clean != 0 {
                            let k = clean.trailing_zeros();
                            clean &= clean - 1;
                            let opens = qf.open & below(k as usize);
                            let o =
                                if opens != 0 { rel + 63 - opens.leading_zeros() } else { open_at };
                            spare[i].write(o);
                            spare[i + 1].write(rel + k);
                            i += 2;
                        }
                        // SAFETY: the `i <= 64` slots after the old length
                        // were written above, inside the capacity reserved.
                        unsafe { drops.set_len(len + i) };
                    }
                    clean_in = 0;
                    if qf.open_at_end {
                        clean_in = u64::from(c1 | c2);
                        if qf.open != 0 {
                            open_at = rel + 63 - qf.open.leading_zeros();
                        }
                    }
                }
            }
            if cols {
                let rel = (base - out.ends_base) as u32;
                // The quotes to drop, as with `csv`, in blocks with quotes
                // in play. (Taking every block, with no branch, made
                // numeric `select -j1` 1.15 times as slow and gained
                // nothing on quoted text.)
                if b.quoted {
                    let state = (&mut clean_in, &mut in_field, &mut open_at);
                    // SAFETY: this function only runs where `K` is supported.
                    drop = unsafe { clean_quotes_in_words::<K>(&qf, rel, state, &mut out.keep) };
                } else {
                    drop = 0;
                }
                // Where the keep state flips and the bytes forced in or
                // out: from the last block, then each record that ends in
                // this one (in the loop below) and the one left open.
                (flips, forced_in, forced_out) = (flips_next, kept_next, 0);
                (flips_next, kept_next) = (0, 0);
                pending = true;
            }
            // Record ends before the first bad byte, not before `r` (the LF
            // of a CRLF that straddles blocks).
            let mut ends = b.nl & below_lowest(b.bad) & from(r - base.min(r));
            while ends != 0 {
                let k = ends.trailing_zeros() as usize;
                let p = base + k;
                let mut end = p + 1;
                if input[p] == b'\r' && cls.any_term::<STD>() {
                    match input.get(end) {
                        Some(b'\n') => end += 1,
                        Some(_) => {}
                        None => break 'blocks,
                    }
                }
                // A field can only be over the limit in a record longer
                // than the limit: that record goes to the state machine.
                if (end - r) as u64 > self.limit {
                    break 'blocks;
                }
                // With `masks`, the block's delimiters are already in
                // `out.ends`, which holds every one since `*pos`: no running
                // count to carry from block to block.
                let d_end = if masks {
                    (out.ends.len() as u64) - u64::from((b.delim & from(k)).count_ones())
                } else {
                    d_total + u64::from((b.delim & below(k)).count_ones())
                };
                // Quote bytes are counted for `plain`, which `cols` records
                // do not keep (their bytes go out through the keep words):
                // one running count and register fewer in that loop.
                let q_end = if keep && !cols {
                    q_total + u64::from((b.quote & below(k)).count_ones())
                } else {
                    0
                };
                let fields = (d_end - d_rec) as usize + 1;
                if sel.check {
                    match *expect {
                        None => *expect = Some(fields),
                        Some(e) if e != fields => break 'blocks,
                        Some(_) => {}
                    }
                }
                // With `cols`, a record ending in a lone CR (its CSV ends
                // in an LF) goes to the state machine.
                if cols && input[p] == b'\r' && end == p + 1 {
                    break 'blocks;
                }
                if cols {
                    // The record's delimiters in this block flip the keep
                    // state as `ColMasks` says (XOR: with the last
                    // selected field empty, its two flips fall on the same
                    // byte and cancel); its LF is kept, the CR of a CRLF
                    // is not; and the next record starts in the state of
                    // its first field.
                    let seg = b.delim & below(k) & from(r.saturating_sub(base));
                    let d = fields - 1 - seg.count_ones() as usize;
                    flips ^= (dep(cm.after, d, seg) << 1) ^ dep(cm.at, d, seg);
                    let lf = end - 1 - base;
                    if lf < 64 {
                        forced_in |= 1 << lf;
                    } else {
                        kept_next |= 1;
                    }
                    forced_out |= u64::from(end == p + 2) << k;
                    let next = end - base;
                    let flip = u64::from(cm.selected(fields - 1) != cm.selected(0));
                    if next < 64 {
                        flips |= flip << next;
                    } else {
                        flips_next |= flip << (next - 64);
                    }
                }
                let l_end = l_total + u64::from((b.lines & below(k + 1)).count_ones());
                let mut pr_end = 0;
                if keep {
                    if unescape {
                        // The record holds doubled quotes when pairs end
                        // in it; it is then copied unescaped after the loop
                        // (which has no call to keep its registers across).
                        // Noted without a branch: in quoted text, whether a
                        // record holds a pair is a coin toss.
                        pr_end = pr_total + u64::from((b.pairs & below(k)).count_ones());
                        let n = out.pending.len();
                        out.pending.push(out.records.len() as u32);
                        out.pending.truncate(n + usize::from(pr_end != pr_rec));
                    }
                    out.records.push(SelectedRecord {
                        start: r,
                        end: p,
                        after: end,
                        lf: input[p] == b'\n',
                        spans_at: usize::MAX,
                        ends_at: d_rec as u32,
                        // Set after the loop for the records copied.
                        copy: NO_COPY,
                        line: self.lines + 1,
                        fields,
                        plain: !cols && q_end == q_rec,
                    });
                }
                self.rec_off = r;
                self.rec_line = self.lines + 1;
                self.lines = lines0 + l_end;
                count += 1;
                (r, d_rec, q_rec, pr_rec) = (end, d_end, q_end, pr_end);
                if (keep && count as usize >= sel.max_records) || !starts_ok(r) {
                    break 'blocks;
                }
                ends &= from(r - base);
            }
            if cols {
                // The record left open.
                let lo = r.saturating_sub(base);
                if lo < 64 {
                    let seg = b.delim & from(lo);
                    let d = if r > base { 0 } else { (d_total - d_rec) as usize };
                    let after = dep(cm.after, d, seg);
                    flips ^= (after << 1) ^ dep(cm.at, d, seg);
                    flips_next |= after >> 63;
                }
                // SAFETY: this function only runs where `K` is supported.
                let state = unsafe { K::prefix_xor(flips) } ^ keeping;
                keeping = ((state as i64) >> 63) as u64;
                out.keep.push(((state & !forced_out) | forced_in) & !drop);
                pending = false;
            }
            if b.bad != 0 {
                break;
            }
            if !masks {
                d_total += u64::from(b.delim.count_ones());
            }
            l_total += u64::from(b.lines.count_ones());
            if keep && !cols {
                q_total += u64::from(b.quote.count_ones());
            }
            if unescape {
                pr_total += u64::from(b.pairs.count_ones());
            }

            base += 64;
        }
        if let (true, Some(quote)) = (unescape, cls.quote) {
            copy_pending(input, out, quote, cls.delim);
        }
        if csv_words && !out.keep.is_empty() {
            // The words after the last block with quotes in play, up to
            // the last record taken. (None at all: every byte is kept, and
            // a run is one copy.)
            keep_all_up_to(&mut out.keep, (r - out.ends_base).div_ceil(64));
        }
        if cols {
            if pending {
                // The block the loop stopped in: its records taken.
                // SAFETY: this function only runs where `K` is supported.
                let state = unsafe { K::prefix_xor(flips) } ^ keeping;
                out.keep.push(((state & !forced_out) | forced_in) & !drop);
            }
            // The LF of a CRLF whose CR ends the last block scanned.
            out.keep.push(kept_next);
        }
        *pos = r;
        count
    }
}

/// What [`Scanner::block_select`] is asked for.
pub(crate) struct SelectArgs<'a> {
    /// The columns to keep (0-based, ascending, no duplicates).
    pub cols: &'a [usize],
    /// Stop after this many records.
    pub max_records: usize,
    /// Check every record's field count against `*expect`.
    pub check: bool,
    /// Keep every field (`cols` is then ignored): the counting loop keeps
    /// the offsets of the structural delimiters (with `ends`) and spans
    /// only for records holding doubled quotes (unless `csv`).
    pub all_cols: bool,
    /// With `all_cols`: keep [`Selected::drops`] instead of the delimiter
    /// offsets.
    pub csv: bool,
    /// With `all_cols`: unescape nothing.
    pub raw: bool,
    /// Keep [`Selected::keep`] for the columns `cols` instead of their
    /// spans.
    pub csv_cols: Option<ColMasks>,
}

/// The highest column [`SelectArgs::csv_cols`] can take (a bit of a `u64`
/// each).
pub(crate) const CSV_COLS_MAX: usize = 62;

/// For `MODE_COLS`, which bytes of a record the CSV of columns `cols`
/// (ascending, distinct, at most [`CSV_COLS_MAX`], not empty) keeps: the
/// bytes of each selected field with the delimiter after it, but the last
/// selected field's, and the LF that ends the record. Along a record, that
/// flips right after delimiter `k` when field `k` is selected and field
/// `k + 1` is not or the other way round (`after`), at the last selected
/// field's delimiter (`at`), and at the next record's start when the last
/// field is selected and the first is not or the other way round.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColMasks {
    /// Bit `c` for each selected column `c`.
    pub sel: u64,
    after: u64,
    at: u64,
}

impl ColMasks {
    /// `None` when `cols` is empty, not ascending or has a column past
    /// [`CSV_COLS_MAX`].
    pub(crate) fn new(cols: &[usize]) -> Option<ColMasks> {
        let (&last, _) = cols.split_last()?;
        if last > CSV_COLS_MAX || cols.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let sel = cols.iter().fold(0u64, |m, &c| m | 1 << c);
        let at = 1u64 << last;
        Some(ColMasks { sel, after: (sel ^ (sel >> 1)) & !at, at })
    }

    /// Whether field `k` is selected.
    #[inline(always)]
    fn selected(&self, k: usize) -> bool {
        k < 64 && (self.sel >> k) & 1 != 0
    }
}

/// What [`Scanner::block_records_with`] keeps: nothing (it counts).
const MODE_COUNT: u8 = 0;
/// Each record's bounds, line and field count ([`Selected::records`]).
const MODE_RECORDS: u8 = 1;
/// Those, the delimiter offsets ([`Selected::ends`]) and the records with
/// doubled quotes copied unescaped ([`Selected::copies`]).
const MODE_FIELDS: u8 = 2;
/// The records and the quotes a CSV writer drops ([`Selected::drops`]).
const MODE_CSV: u8 = 3;
/// The records and the delimiter offsets, nothing unescaped.
const MODE_RAW: u8 = 4;
/// The records and which bytes the CSV of some columns keeps
/// ([`Selected::keep`]).
const MODE_COLS: u8 = 5;

impl SelectArgs<'_> {
    /// The mode of the counting loop that takes these records (not
    /// [`MODE_COUNT`]).
    fn mode(&self) -> u8 {
        if self.csv_cols.is_some() {
            return MODE_COLS;
        }
        match (self.all_cols, self.csv, self.raw) {
            (false, _, _) => MODE_RECORDS,
            (true, true, _) => MODE_CSV,
            (true, false, true) => MODE_RAW,
            (true, false, false) => MODE_FIELDS,
        }
    }
}

/// One record taken by [`Scanner::block_select`]; offsets are in the input
/// it was given.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SelectedRecord {
    /// First byte of the record.
    pub start: usize,
    /// The record's end, before its terminator.
    pub end: usize,
    /// Past the record's terminator.
    pub after: usize,
    /// The terminator is a single LF.
    pub lf: bool,
    /// Index of the record's first span, `usize::MAX` when none were kept.
    pub spans_at: usize,
    /// With `all_cols` and no spans: index of the record's first field end
    /// in [`Selected::ends`] (`u32`, as the offsets are: one batch spans at
    /// most [`ENDS_SPAN`] bytes).
    pub ends_at: u32,
    /// With `all_cols`, for a record holding doubled quotes: where its
    /// copy is described in [`Selected::copies`]; [`NO_COPY`] otherwise.
    pub copy: u32,
    /// Line of the record's first byte (1-based).
    pub line: u64,
    /// Number of fields in the record.
    pub fields: usize,
    /// The record is known to hold no quote byte (not counted for
    /// `csv_cols`, whose records go out through `Selected::keep`): its
    /// bytes up to `end` are exactly its fields joined by the delimiter.
    pub plain: bool,
}

// One cache line a record: the scanning loops write one per record and the
// readers of a batch read them back (88 bytes with `usize` offsets into
// `Selected::ends` and `Selected::copies`).
const _: () = assert!(std::mem::size_of::<SelectedRecord>() <= 64);

/// The output of [`Scanner::block_select`]: per record, one span per
/// selected column (empty for columns past the record's end).
#[derive(Clone, Debug, Default)]
pub(crate) struct Selected {
    pub spans: Vec<Span>,
    /// Selected fields that needed unescaping (doubled quotes).
    pub scratch: Vec<u8>,
    pub records: Vec<SelectedRecord>,
    /// With `all_cols`: the offsets (from `ends_base`) of the structural
    /// delimiters the counting loop went over, in order; a record's fields
    /// end at `ends[r.ends_at..][..r.fields - 1]` and at its `end`.
    pub ends: Vec<u32>,
    pub ends_base: usize,
    /// With `csv`: the offsets (from `ends_base`, ascending) of the quotes
    /// around quoted fields that hold no delimiter, line-end byte or
    /// doubled quote: the quotes a CSV writer with the input's delimiter
    /// and quote, quoting only where needed, does not write (or, with the
    /// byte compress, the bits of `keep`).
    pub drops: Vec<u32>,
    /// With `csv_cols`: one word per 64 bytes from `ends_base`, bit `i`
    /// set when the CSV of the selected columns keeps byte `i` of the
    /// block (see [`ColMasks`]), the quotes a CSV writer drops left out.
    /// With `csv` where the CPU has the byte compress
    /// ([`has_byte_compress`]): the same for every column, instead of
    /// `drops`; empty when no block had quotes in play (every byte kept).
    pub keep: Vec<u64>,
    /// With `all_cols`: for each record holding doubled quotes, copied
    /// unescaped to `scratch`, where the copy starts, where each of its
    /// delimiters is, and where it ends, as offsets from `copies_base`
    /// in `scratch` (`SelectedRecord::copy` says where a record's are).
    pub copies: Vec<u32>,
    pub copies_base: usize,
    /// During one call of the scanning loop with `all_cols`: the indices
    /// of the records taken that hold doubled quotes, copied once the
    /// loop is done.
    pub pending: Vec<u32>,
}

impl Selected {
    /// With `csv`: the quotes to drop among the input's bytes `a..e`
    /// (offsets in the input the records were taken from).
    pub fn drops_within(&self, a: usize, e: usize) -> &[u32] {
        let rel = |x: usize| (x - self.ends_base) as u32;
        let from = self.drops.partition_point(|&d| d < rel(a));
        let to = self.drops.partition_point(|&d| d < rel(e));
        &self.drops[from..to]
    }
}

/// [`SelectedRecord::copy`] of a record not copied.
pub(crate) const NO_COPY: u32 = u32::MAX;

/// With `all_cols`, one batch spans at most this many bytes, so that
/// [`Selected::ends`] fits `u32` offsets.
const ENDS_SPAN: usize = (u32::MAX - 64) as usize;

impl Scanner {
    /// Takes the regular records from `input[*pos..]` (see the module
    /// docs), up to `sel.max_records`, keeping only the spans of the
    /// selected columns: the fields in between are skipped over, never
    /// built. Stops, with `*pos` at its first byte, at the first record that
    /// needs the state machine, holds doubled quotes, is longer than the
    /// field size limit or (with `sel.check`) has a field count other than
    /// `*expect` (set from the first record when unset). Line numbers and
    /// record offsets are updated as if each record had been scanned.
    /// Returns the number of records taken.
    pub(crate) fn block_select(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        sel: &SelectArgs<'_>,
        out: &mut Selected,
    ) -> u64 {
        let Some(isa) = self.block.as_ref().filter(|_| self.block_on).map(|c| c.isa) else {
            return 0;
        };
        if self.trim || self.filter.active() {
            return 0;
        }
        if sel.cols.is_empty() || sel.all_cols || sel.csv_cols.is_some() {
            // Records only, every field, or CSV of some columns: the
            // counting loop.
            return match isa {
                Isa::Portable => {
                    let (i, p, e, o) = (input, pos, expect, out);
                    match sel.mode() {
                        MODE_RECORDS => {
                            self.block_records_mode::<Portable, MODE_RECORDS>(i, p, e, sel, o)
                        }
                        MODE_FIELDS => {
                            self.block_records_mode::<Portable, MODE_FIELDS>(i, p, e, sel, o)
                        }
                        MODE_RAW => self.block_records_mode::<Portable, MODE_RAW>(i, p, e, sel, o),
                        MODE_COLS => {
                            self.block_records_mode::<Portable, MODE_COLS>(i, p, e, sel, o)
                        }
                        _ => self.block_records_mode::<Portable, MODE_CSV>(i, p, e, sel, o),
                    }
                }
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `isa()` chose AVX2 after detecting it on this CPU.
                Isa::Avx2Clmul => unsafe { x86::records_avx2(self, input, pos, expect, sel, out) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `isa()` chose AVX-512 after detecting it on this
                // CPU.
                Isa::Avx512Clmul => unsafe {
                    x86::records_avx512(self, input, pos, expect, sel, out)
                },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `isa()` chose AVX-512 VBMI2 after detecting it.
                Isa::Avx512Vbmi2 => unsafe {
                    x86::records_vbmi2(self, input, pos, expect, sel, out)
                },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `isa()` chose pclmulqdq after detecting it.
                Isa::Sse2Clmul => unsafe {
                    x86::records_sse2_clmul(self, input, pos, expect, sel, out)
                },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: SSE2 is part of x86-64.
                Isa::Sse2 => unsafe { x86::records_sse2(self, input, pos, expect, sel, out) },
                #[cfg(target_arch = "aarch64")]
                // SAFETY: `isa()` chose PMULL after detecting `aes` (and
                // NEON).
                Isa::NeonPmull => unsafe {
                    arm::records_neon_pmull(self, input, pos, expect, sel, out)
                },
                #[cfg(target_arch = "aarch64")]
                // SAFETY: `isa()` chose NEON after detecting it.
                Isa::Neon => unsafe { arm::records_neon(self, input, pos, expect, sel, out) },
            };
        }
        match isa {
            Isa::Portable => {
                self.block_select_with::<Portable, false>(input, pos, expect, sel, out)
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX2 after detecting it on this CPU.
            Isa::Avx2Clmul => unsafe { x86::select_avx2(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 after detecting it on this CPU.
            Isa::Avx512Clmul => unsafe { x86::select_avx512(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose AVX-512 VBMI2 after detecting it.
            Isa::Avx512Vbmi2 => unsafe { x86::select_vbmi2(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `isa()` chose pclmulqdq after detecting it.
            Isa::Sse2Clmul => unsafe { x86::select_sse2_clmul(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of x86-64.
            Isa::Sse2 => unsafe { x86::select_sse2(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose PMULL after detecting `aes` (and NEON).
            Isa::NeonPmull => unsafe { arm::select_neon_pmull(self, input, pos, expect, sel, out) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: `isa()` chose NEON after detecting it.
            Isa::Neon => unsafe { arm::select_neon(self, input, pos, expect, sel, out) },
        }
    }

    /// [`Scanner::block_select`] with kernel `K`. Must only run where `K`'s
    /// instruction set is available (it is inlined into the entry points
    /// compiled for it).
    #[inline(always)]
    fn block_select_with<K: Kernel, const STD: bool>(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        sel: &SelectArgs<'_>,
        out: &mut Selected,
    ) -> u64 {
        let Some(cls) = self.run_start(input, *pos, sel.max_records) else {
            return 0;
        };
        let n = input.len();
        let mut r = *pos;
        let comment = self.comment;
        let starts_ok = |r: usize| starts_record::<STD>(&cls, input, r, comment);
        let (quote, limit, cols) = (self.quote, self.limit, sel.cols);
        let first = cols.first().copied().unwrap_or(usize::MAX);
        let mut count = 0u64;
        let mut carry = Carry::record_start();
        let mut base = r;
        let lines0 = self.lines;
        let mut l_total = 0u64;
        // The current record: field index, field start, next wanted column
        // (and its index in `cols`), quote and pair bits seen, and the
        // number of spans before it (to undo a record that is not taken).
        let (mut fi, mut fstart, mut si, mut want) = (0usize, r, 0usize, first);
        let mut rec_q = 0u64;
        let mut spans0 = out.spans.len();
        out.records.reserve(sel.max_records.min(1 << 16));
        out.spans.reserve(sel.max_records.min(1 << 16) * cols.len());
        'blocks: while base < n {
            // SAFETY: this function only runs where `K` is supported.
            let b = unsafe {
                cls.block::<K, STD, MODE_COUNT>(
                    input,
                    base,
                    &mut carry,
                    &mut QuotedFields::default(),
                )
            };
            let mut ends = (b.delim | b.nl) & below_lowest(b.bad) & from(r - base.min(r));
            while ends != 0 {
                // The current record's delimiters in this block, up to its
                // end if that is in the block.
                let upto = below_lowest(ends & b.nl);
                let mut d = ends & upto;
                ends &= !upto;
                loop {
                    let c = d.count_ones() as usize;
                    if fi + c <= want {
                        // No wanted field ends here: skip them all.
                        if c > 0 {
                            fstart = base + (64 - d.leading_zeros() as usize);
                            fi += c;
                        }
                        break;
                    }
                    for _ in fi..want {
                        fstart = base + d.trailing_zeros() as usize + 1;
                        d &= d - 1;
                    }
                    let p = base + d.trailing_zeros() as usize;
                    let span = plain_span(input, fstart, p, quote);
                    push_unescaped(&mut out.spans, input, span, quote, &mut out.scratch);
                    d &= d - 1;
                    fi = want + 1;
                    fstart = p + 1;
                    si += 1;
                    want = cols.get(si).copied().unwrap_or(usize::MAX);
                }
                if ends == 0 {
                    break;
                }
                // The record ends at the terminator `k`.
                let k = ends.trailing_zeros() as usize;
                let p = base + k;
                ends &= ends - 1;
                let mut end = p + 1;
                if input[p] == b'\r' && cls.any_term::<STD>() {
                    match input.get(end) {
                        Some(b'\n') => end += 1,
                        Some(_) => {}
                        None => break 'blocks,
                    }
                }
                if (end - r) as u64 > limit {
                    break 'blocks;
                }
                let seg = from(r.saturating_sub(base)) & below(k);
                rec_q |= b.quote & seg;
                if fi == want {
                    let span = plain_span(input, fstart, p, quote);
                    push_unescaped(&mut out.spans, input, span, quote, &mut out.scratch);
                    si += 1;
                }
                let fields = fi + 1;
                if sel.check {
                    match *expect {
                        None => *expect = Some(fields),
                        Some(e) if e != fields => break 'blocks,
                        Some(_) => {}
                    }
                }
                for _ in si..cols.len() {
                    out.spans.push(Span { start: 0, end: 0, flags: 0 });
                }
                let l_end = l_total + u64::from((b.lines & below(k + 1)).count_ones());
                out.records.push(SelectedRecord {
                    start: r,
                    end: p,
                    after: end,
                    lf: input[p] == b'\n' && end == p + 1,
                    spans_at: spans0,
                    ends_at: 0,
                    copy: NO_COPY,
                    line: self.lines + 1,
                    fields,
                    plain: rec_q == 0,
                });
                self.rec_off = r;
                self.rec_line = self.lines + 1;
                self.lines = lines0 + l_end;
                count += 1;
                r = end;
                (fi, fstart, si, want) = (0, r, 0, first);
                rec_q = 0;
                spans0 = out.spans.len();
                if count as usize >= sel.max_records || !starts_ok(r) {
                    break 'blocks;
                }
                ends &= from(r - base);
            }
            if b.bad != 0 {
                break;
            }
            let rest = from(r.saturating_sub(base));
            rec_q |= b.quote & rest;
            l_total += u64::from(b.lines.count_ones());
            base += 64;
        }
        // The record in progress, if any, is left to the state machine.
        out.spans.truncate(spans0);
        *pos = r;
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel available on this CPU agrees with the portable one.
    #[test]
    fn kernels_agree_with_portable() {
        type Masker = unsafe fn(*const u8, &Needles) -> Masks;
        let mut all: Vec<(&str, Masker)> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            all.push(("sse2", x86::masks_sse2));
            if std::arch::is_x86_feature_detected!("pclmulqdq") {
                all.push(("sse2_clmul", x86::masks_sse2_clmul));
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("popcnt")
                    && std::arch::is_x86_feature_detected!("bmi1")
                {
                    all.push(("avx2_clmul", x86::masks_avx2));
                    if std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512bw")
                    {
                        all.push(("avx512_clmul", x86::masks_avx512));
                        if std::arch::is_x86_feature_detected!("avx512vbmi2") {
                            all.push(("avx512_vbmi2", x86::masks_vbmi2));
                        }
                    }
                }
            }
        }
        #[cfg(target_arch = "aarch64")]
        if std::arch::is_aarch64_feature_detected!("neon") {
            all.push(("neon", arm::masks_neon));
            if std::arch::is_aarch64_feature_detected!("aes") {
                all.push(("neon_pmull", arm::masks_neon_pmull));
            }
        }
        // Where the target promises NEON, the NEON kernels must be among
        // those compared (this is what the aarch64 CI step runs for).
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        assert!(all.iter().any(|(name, _)| *name == "neon"));
        let alphabet = b",\"\r\n a\\#\xc3\xa9\0;";
        let mut seed = 0x1234_5678_9abc_def1u64;
        for round in 0..2000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = alphabet[(seed % alphabet.len() as u64) as usize];
            }
            let needles = Needles {
                bytes: [b',', b'"', b'\r', b'\n', b'\\', b' '],
                quote_on: if round % 7 == 0 { 0 } else { !0 },
                extra: round % 3 == 0,
            };
            // SAFETY: `block` is 64 bytes; portable needs no CPU features.
            let want = unsafe { Portable::masks::<false>(block.as_ptr(), &needles) };
            for (name, masks) in &all {
                // SAFETY: `block` is 64 bytes and each kernel was pushed
                // only after detecting its CPU features.
                let got = unsafe { masks(block.as_ptr(), &needles) };
                assert_eq!(got, want, "{name}");
            }
        }
    }

    /// Every kernel's `flatten` on this CPU gives the offsets of the set
    /// bits, in order, after what the vector held.
    #[test]
    fn flatten_kernels_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut bits_of = |round: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Sparse, dense, all and none.
            match round % 4 {
                0 => seed & (seed >> 3) & (seed >> 7),
                1 => seed | (seed >> 1),
                2 => !0,
                _ => seed,
            }
        };
        for round in 0..4000u64 {
            let bits = if round < 2 { round } else { bits_of(round) };
            let base = (round * 64) as u32;
            let want: Vec<u32> =
                (0..64).filter(|i| bits >> i & 1 == 1).map(|i| base + i as u32).collect();
            let mut v = vec![7u32; (round % 5) as usize];
            let mut expect = v.clone();
            expect.extend(&want);
            flatten(&mut v, bits, base);
            assert_eq!(v, expect, "portable, {bits:#x}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                let mut v = vec![7u32; (round % 5) as usize];
                // SAFETY: AVX-512 F was detected just above.
                unsafe { x86::flatten_avx512(&mut v, bits, base) };
                assert_eq!(v, expect, "avx512, {bits:#x}");
                if std::arch::is_x86_feature_detected!("avx512vbmi2") {
                    let mut v = vec![7u32; (round % 5) as usize];
                    // SAFETY: AVX-512 F, BW and VBMI2 were detected.
                    unsafe { x86::flatten_vbmi2(&mut v, bits, base) };
                    assert_eq!(v, expect, "avx512 vbmi2, {bits:#x}");
                }
            }
        }
    }

    /// The copies of records with doubled quotes: the byte compress's
    /// (which finds the delimiters itself) and the portable one (from the
    /// loop's offsets) give the same bytes and offsets, and the first falls
    /// back to the second when the count it finds is not the record's.
    #[test]
    fn both_copies_of_records_with_pairs_agree() {
        let input: &[u8] = b"x,\"a\"\"b\",c\n\"\"\"\"\"\",\"p,\"\"q\"\"\",\"\"\n";
        // Two records, with the offsets of their delimiters from 0.
        let recs = [(0usize, 10usize, vec![1u32, 8]), (11, 30, vec![17, 27])];
        let build = |fields_of: &dyn Fn(usize) -> usize| {
            let mut out = Selected::default();
            for (i, (a, e, d)) in recs.iter().enumerate() {
                out.records.push(SelectedRecord {
                    start: *a,
                    end: *e,
                    after: e + 1,
                    lf: true,
                    spans_at: usize::MAX,
                    ends_at: out.ends.len() as u32,
                    copy: NO_COPY,
                    line: 1,
                    fields: fields_of(d.len() + 1),
                    plain: false,
                });
                out.ends.extend(d);
                out.pending.push(i as u32);
            }
            out.scratch.extend(b"earlier");
            out.copies_base = 3;
            out
        };
        let portable = |out: &mut Selected| copy_pending_portable(input, out, b'"');
        let mut want = build(&|f| f);
        portable(&mut want);
        assert_eq!(&want.scratch[7..], b"x,\"a\"b\",c\"\"\"\",\"p,\"q\"\",\"\"");
        assert_eq!(want.copies, [4, 5, 11, 13, 13, 17, 25, 28]);
        #[cfg(target_arch = "x86_64")]
        if vbmi2() {
            let mut got = build(&|f| f);
            // SAFETY: the VBMI2 kernel is chosen only where the CPU has
            // AVX-512 F, BW and VBMI2, BMI2 and PCLMULQDQ.
            unsafe { x86::copy_pending_vbmi2(input, &mut got, b'"', b',') };
            assert_eq!((&got.scratch, &got.copies), (&want.scratch, &want.copies));
            // A field count the copy does not find (with as many offsets
            // from the loop): the loop's offsets are used.
            let mut want = build(&|f| f + 1);
            want.ends.insert(2, 9);
            want.ends.push(29);
            want.records[1].ends_at = 3;
            let mut got = want.clone();
            portable(&mut want);
            // SAFETY: as above.
            unsafe { x86::copy_pending_vbmi2(input, &mut got, b'"', b',') };
            assert_eq!((&got.scratch, &got.copies), (&want.scratch, &want.copies));
            assert_eq!(got.copies.len(), 2 * 5);
        }
    }

    /// `clean_opens` pairs each clean closing quote with the opening quote
    /// before it, over random fields (opening and closing quotes
    /// alternating, the block starting inside a field or not).
    #[test]
    fn clean_opens_pairs_each_close_with_its_open() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi2") {
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            for round in 0..20_000u64 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Alternate quotes at the set bits of `seed`'s sparse
                // part; a random half of the closing ones are clean.
                let quotes = seed & (seed >> 5) & if round % 3 == 0 { !0 } else { seed >> 11 };
                let in_field = round & 1;
                let (mut open, mut close, mut want_opens) = (0u64, 0u64, 0u64);
                let (mut clean, mut want_carried) = (0u64, 0u64);
                let mut inside = in_field == 1;
                let mut last_open: Option<u32> = None;
                let mut pick = seed.rotate_left(23);
                for i in 0..64 {
                    if quotes >> i & 1 == 0 {
                        continue;
                    }
                    if inside {
                        close |= 1 << i;
                        if pick & 1 == 1 {
                            clean |= 1 << i;
                            match last_open {
                                Some(o) => want_opens |= 1 << o,
                                None => want_carried = 1,
                            }
                        }
                        pick >>= 1;
                    } else {
                        open |= 1 << i;
                        last_open = Some(i);
                    }
                    inside = !inside;
                }
                // SAFETY: BMI2 was detected just above.
                let got = unsafe { x86::clean_opens_bmi2(open, close, clean, in_field) };
                assert_eq!(got, (want_opens, want_carried), "{open:#x} {close:#x} {clean:#x}");
            }
        }
    }

    #[test]
    fn prefix_xor_is_running_parity() {
        let x = 0b1001_0010u64;
        let p = prefix_xor(x);
        for i in 0..64 {
            let want = (x & below(i + 1)).count_ones() % 2;
            assert_eq!((p >> i & 1) as u32, want, "bit {i}");
        }
    }

    #[test]
    fn classifies_quotes() {
        let d = Dialect::default();
        let c = Classifier::new(&d);
        let mut carry = Carry::record_start();
        // a,"b,c","d""e"\n  then a mid-field quote
        let input = b"a,\"b,c\",\"d\"\"e\"\nx\"y\n";
        assert!(c.is_std());
        let mut qf = QuotedFields::default();
        // SAFETY: the portable kernel needs no CPU features.
        let b = unsafe { c.block::<Portable, false, MODE_CSV>(input, 0, &mut carry, &mut qf) };
        assert_eq!(b.delim, 1 << 1 | 1 << 7);
        // The bad quote opens a false quoted region: nothing after it is
        // structural, which is why records with bad bits fall back.
        assert_eq!(b.nl, 1 << 14);
        assert_eq!(b.pairs, 1 << 10);
        assert_eq!(b.bad, 1 << 16);
        assert_eq!(b.lines, 1 << 14 | 1 << 18);
        // The loops specialised for this dialect classify alike.
        let mut carry_std = Carry::record_start();
        let mut qf_std = QuotedFields::default();
        // SAFETY: as above.
        let s =
            unsafe { c.block::<Portable, true, MODE_CSV>(input, 0, &mut carry_std, &mut qf_std) };
        assert_eq!(format!("{s:?} {carry_std:?}"), format!("{b:?} {carry:?}"));
        assert_eq!(format!("{qf_std:?}"), format!("{qf:?}"));
        // Quoted fields: `"b,c"` (2..6) and `"d""e"` (8..14); the bad
        // quote at 16 opens no field, but quotes the rest of the block.
        assert_eq!(qf.open, 1 << 2 | 1 << 8);
        assert_eq!(qf.close, 1 << 6 | 1 << 13);
        // Inside them, all but the delimiter and the pair's first quote
        // (and, from 16 on, the LF at 18).
        let inside = |a: u64, e: u64| below(e as usize) & from(a as usize);
        assert_eq!(qf.plain & below(16), inside(2, 6) & !(1 << 4) | inside(8, 13) & !(1 << 10));
        assert!(qf.open_at_end);
        // `MODE_FIELDS` marks the pair's second quote instead, and defers
        // checking what follows a closing quote in bit 63.
        let mut carry_f = Carry::record_start();
        // SAFETY: as above.
        let f = unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 0, &mut carry_f, &mut qf) };
        assert_eq!(f.pairs, 1 << 11);
        assert_eq!((f.delim, f.nl, f.bad), (b.delim, b.nl, b.bad));
    }

    #[test]
    fn fields_mode_finds_a_pair_across_blocks_and_a_bad_close_late() {
        let c = Classifier::new(&Dialect::default());
        let run = |input: &[u8]| {
            let mut carry = Carry::record_start();
            let mut qf = QuotedFields::default();
            // SAFETY: the portable kernel needs no CPU features.
            let a =
                unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 0, &mut carry, &mut qf) };
            // SAFETY: as above.
            let b =
                unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 64, &mut carry, &mut qf) };
            (a, b)
        };
        // A quoted field whose pair straddles the blocks: first quote in
        // bit 63, second in bit 0 of the next block.
        let mut input = vec![b'x'; 128];
        input[0] = b'"';
        input[63] = b'"';
        input[64] = b'"';
        input[66] = b'"';
        input[67] = b'\n';
        let (a, b) = run(&input);
        assert_eq!((a.pairs, a.bad), (0, 0));
        assert_eq!((b.pairs, b.bad, b.nl), (1, 0, 1 << 3));
        // A closing quote in bit 63 followed by a plain byte: bad in bit 0
        // of the next block.
        input[64] = b'y';
        let (a, b) = run(&input);
        assert_eq!((a.bad, b.bad & 1), (0, 1));
    }

    #[test]
    fn only_the_plain_dialect_is_std() {
        let std = |d: Dialect| Classifier::new(&d).is_std();
        assert!(std(Dialect { delimiter: b';', quote: Some(b'\''), ..Dialect::default() }));
        assert!(!std(Dialect { escape: Some(b'\\'), ..Dialect::default() }));
        assert!(!std(Dialect { skip_initial_space: true, ..Dialect::default() }));
        assert!(!std(Dialect { double_quote: false, ..Dialect::default() }));
        assert!(!std(Dialect { quote: None, ..Dialect::default() }));
        assert!(!std(Dialect { terminator: Terminator::Byte(b';'), ..Dialect::default() }));
    }
}
