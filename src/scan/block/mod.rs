//! The block scanner: 64 bytes at a time, with bitmasks.
//!
//! BE ADVISED: this is a *shortcut* past the state machine in `scan/mod.rs`, and
//! it is only allowed to take records whose meaning it can prove equal to
//! what the state machine would produce. Anything else is handed back,
//! whole record at a time, to the state machine.
//!
//! # How a block is read
//!
//! A kernel (AVX-512, AVX2 or SSE2 on x86-64, NEON on aarch64, or
//! portable; picked once at run time, see [`simd_level`]) compares 64 input bytes against
//! the delimiter, the quote, the two terminator bytes (CR and LF, or the
//! single terminator byte twice), and optionally the escape byte and the
//! space, giving one `u64` per needle (bit `i` is byte `i`). NEON has no
//! `movemask`; its kernel builds the bitmask with pairwise adds (see
//! `aarch64::movemask4`). The inside-quotes mask is the prefix XOR of the
//! quote bits (carry-less multiply by all ones when `pclmulqdq`, or on aarch64
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
//!
//! # Layout (as memchr lays out its arches)
//!
//! * `kernel`: the [`kernel::Kernel`] trait (64 bytes to bitmasks, and the
//!   few bit operations some instruction sets do faster) and the portable
//!   kernel, the oracle of the others;
//! * `x86_64`, `aarch64`: the SIMD kernels, behind `cfg(target_arch)`;
//! * `dispatch`: one table of entry points per kernel, the best one for
//!   the CPU chosen once and cached;
//! * `classify`: the [`classify::Classifier`], masks to structure;
//! * `record`: one record at a time, for the state machine;
//! * `records`: the loop over runs of records (counting, and the batch
//!   modes of [`Selection`](crate::Selection));
//! * `select`: the selected columns' loop and what the batch modes keep;
//! * `fields`: spans and unescaped copies of the fields taken;
//! * `bytes`: small SIMD byte-set tests the rest of the crate uses.
//!
//! # Advice for hackers
//!
//! * Every function that needs a CPU feature is an `unsafe fn` whose
//!   `# Safety` section says so; the scanning loops (`*_with`) are generic
//!   over the kernel and `#[inline(always)]`, so that they are compiled
//!   into each kernel's entry points with its features enabled. Only the
//!   tables of `dispatch` call those, and `dispatch` hands out a table only
//!   for a kernel it detected.
//! * No module outside this one asks about the CPU or uses `std::arch`.
//! * A new kernel needs: a `Kernel` impl, an `entry_points!` line, a branch
//!   in `dispatch::detect` (and in `FASTCSV_SIMD`'s list), and a line in
//!   `tests::kernels_agree_with_portable`.

#[macro_use]
mod kernel;
#[cfg(target_arch = "aarch64")]
mod aarch64;
mod bytes;
mod classify;
mod dispatch;
mod fields;
mod record;
mod records;
mod select;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub(crate) use bytes::match16;
pub use bytes::ByteSet;
pub(crate) use classify::{Cache, Classifier};
pub(crate) use select::{ColMasks, SelectArgs, Selected, SelectedRecord, NO_COPY};

use dispatch::dispatch;

/// Raw comparison masks of one 64-byte block (bit `i` = byte `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    pub(super) delim: u64,
    pub(super) quote: u64,
    /// Needle 2: CR, or the terminator byte.
    pub(super) nl_a: u64,
    /// Needle 3: LF, or the terminator byte.
    pub(super) nl_b: u64,
    /// Escape byte (zero unless `EXTRA`).
    pub(super) esc: u64,
    /// Space (zero unless `EXTRA`).
    pub(super) space: u64,
    /// Prefix XOR of `quote`: bit `i` is the parity of quotes at `0..=i`.
    pub(super) quote_prefix: u64,
}

/// The bytes a kernel looks for. `quote_on` is all ones when the dialect
/// has a quote character and zero otherwise (then `bytes[1]` is unused);
/// `extra` says whether the escape and space needles are wanted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Needles {
    pub(super) bytes: [u8; 6],
    pub(super) quote_on: u64,
    pub(super) extra: bool,
}

/// The instruction set the block scanner uses on this CPU: one of
/// `avx512vbmi2+pclmulqdq` (AVX-512 F, BW and VBMI2), `avx512+pclmulqdq`
/// (AVX-512 F and BW), `avx2+pclmulqdq`, `sse2+pclmulqdq`, `sse2`
/// (x86-64), `neon+pmull`, `neon` (aarch64) or `portable`. Informational:
/// the crate picks its paths itself.
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
    dispatch().name
}

/// Appends `src` to `out` without the bytes at offsets `drops[i] - shift`
/// (ascending, inside `src`: otherwise the bytes appended are wrong, but
/// nothing is read or written out of bounds), when this CPU can do it
/// with a byte compress (AVX-512 VBMI2, and the AVX-512 kernel chosen):
/// 64 bytes a step, with no branch on where the drops are. False, having
/// written nothing, otherwise.
pub(crate) fn append_without(src: &[u8], drops: &[u32], shift: usize, out: &mut Vec<u8>) -> bool {
    #[cfg(target_arch = "x86_64")]
    if dispatch().byte_compress {
        // SAFETY: the table with the byte compress is chosen only after
        // AVX-512 F, BW and VBMI2 were detected on this CPU.
        unsafe { x86_64::compress_avx512(src, drops, shift, out) };
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
    if dispatch().byte_compress {
        // SAFETY: the table with the byte compress is chosen only after
        // AVX-512 F, BW and VBMI2 were detected on this CPU.
        unsafe { x86_64::compress_kept_avx512(src, keep, shift, out) };
        return true;
    }
    let _ = (src, keep, shift, out);
    false
}

/// True when runs of [`Selection::csv`](crate::Selection::csv) and
/// [`Selection::csv_columns`](crate::Selection::csv_columns) records are
/// copied with a byte compress (the `avx512vbmi2+pclmulqdq` kernel), 64
/// input bytes a step. Informational, as [`simd_level`]:
/// [`Selection::csv_output`](crate::Selection::csv_output) makes the choice
/// this governs.
///
/// ```
/// let compress = fastcsv::scan::has_byte_compress();
/// assert_eq!(compress, fastcsv::scan::simd_level() == "avx512vbmi2+pclmulqdq");
/// ```
pub fn has_byte_compress() -> bool {
    dispatch().byte_compress
}
