//! The kernel trait (64 bytes to bitmasks, and the bit operations some
//! instruction sets do faster), the portable kernel, and the macros that
//! instantiate the scanning loops for each SIMD kernel.

use super::fields::flatten;
use super::{Masks, Needles};

/// Prefix XOR without special instructions: bit `i` of the result is the
/// XOR of bits `0..=i` of `x`.
#[inline(always)]
pub(super) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// A way of classifying 64 bytes. Implementations are `#[inline(always)]`
/// and are only ever inlined into functions compiled for their instruction
/// set (the entry points `entry_points!` writes in `x86_64` and
/// `aarch64`), as memchr does, so that the whole scanning loop is compiled
/// with AVX-512, AVX2, SSE2 or NEON enabled and the comparisons stay in
/// registers.
pub(super) trait Kernel {
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
pub(super) fn deposit_bits(mut src: u64, mut mask: u64) -> u64 {
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
pub(super) fn extract_bits(src: u64, mut mask: u64) -> u64 {
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
pub(super) struct Portable;

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
    (
        $table:ident, $name:literal, $compress:literal, $kernel:ident, $features:literal,
        $record:ident, $count:ident, $select:ident, $records:ident, $masks:ident
    ) => {
        /// The entry points of this kernel. Its functions need the
        /// kernel's instruction set: only [`super::dispatch::dispatch`]
        /// hands the table out, after detecting it.
        pub(super) static $table: Dispatch = Dispatch {
            name: $name,
            byte_compress: $compress,
            record: $record,
            count: $count,
            select: $select,
            records: $records,
        };

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
            // SAFETY: the caller guarantees the kernel's instruction set.
            unsafe {
                if s.std_dialect() {
                    s.block_record_with::<$kernel, true>(input, r, out)
                } else {
                    s.block_record_with::<$kernel, false>(input, r, out)
                }
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
            // SAFETY: the caller guarantees the kernel's instruction set.
            unsafe {
                if s.std_dialect() {
                    s.block_count_with::<$kernel, true>(input, pos, expect, check)
                } else {
                    s.block_count_with::<$kernel, false>(input, pos, expect, check)
                }
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
            // SAFETY: the caller guarantees the kernel's instruction set.
            unsafe {
                if s.std_dialect() {
                    s.block_select_with::<$kernel, true>(input, pos, expect, sel, out)
                } else {
                    s.block_select_with::<$kernel, false>(input, pos, expect, sel, out)
                }
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
            // SAFETY: the caller guarantees the kernel's instruction set.
            unsafe {
                match sel.mode() {
                    MODE_RECORDS => s.block_records_mode::<$kernel, MODE_RECORDS>(i, p, e, sel, o),
                    MODE_FIELDS => s.block_records_mode::<$kernel, MODE_FIELDS>(i, p, e, sel, o),
                    MODE_RAW => s.block_records_mode::<$kernel, MODE_RAW>(i, p, e, sel, o),
                    MODE_COLS => s.block_records_mode::<$kernel, MODE_COLS>(i, p, e, sel, o),
                    _ => s.block_records_mode::<$kernel, MODE_CSV>(i, p, e, sel, o),
                }
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
