//! The fields of the records the block scanner takes: their spans, and
//! the copies, unescaped, of records holding doubled quotes.

use super::classify::Classifier;
#[cfg(target_arch = "x86_64")]
use super::dispatch::dispatch;
use super::select::Selected;
use crate::scan::{Span, NUMERIC, OWNED, QUOTED};

/// The span `save` would produce for the regular field `input[a..e]` when
/// the dialect has no filter, trim or field limit and the field has no
/// doubled quotes: the bytes between the quotes, or the field itself; an
/// empty field is `0..0`, as the state machine leaves it.
///
/// Computed without branches on the field's shape (besides the one load),
/// so that the three integers stay in registers.
#[inline(always)]
pub(super) fn plain_span(input: &[u8], a: usize, e: usize, quote: i32) -> Span {
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
pub(super) fn copy_pending(input: &[u8], out: &mut Selected, quote: u8, delim: u8) {
    #[cfg(target_arch = "x86_64")]
    if dispatch().byte_compress {
        // SAFETY: the table with the byte compress is chosen only after
        // AVX-512 F, BW and VBMI2, BMI2 and PCLMULQDQ were detected on
        // this CPU.
        unsafe { super::x86_64::copy_pending_vbmi2(input, out, quote, delim) };
        return;
    }
    let _ = delim; // Only the byte compress's copy finds the delimiters.
    copy_pending_portable(input, out, quote);
}

/// [`copy_pending`] without the byte compress: each record through
/// [`copy_unescaped`], with the loop's offsets of its delimiters.
pub(super) fn copy_pending_portable(input: &[u8], out: &mut Selected, quote: u8) {
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
pub(super) fn copy_unescaped(
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
pub(super) fn flatten(out: &mut Vec<u32>, mut bits: u64, base: u32) {
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
pub(super) fn starts_record<const STD: bool>(
    cls: &Classifier,
    input: &[u8],
    r: usize,
    comment: i32,
) -> bool {
    r < input.len() && !cls.is_nl::<STD>(input[r]) && i32::from(input[r]) != comment
}

/// Pushes `span`, a regular field's plain span; a quoted one is then
/// unescaped into `scratch` when its content holds quote bytes (in a
/// regular record they come as doubled pairs).
#[inline(always)]
pub(super) fn push_unescaped(
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
pub(super) fn fix_quoted(spans: &mut [Span], input: &[u8], quote: i32, scratch: &mut Vec<u8>) {
    if let Some(last) = spans.last_mut() {
        *last = unescaped_quoted(input, *last, quote, scratch);
    }
}

/// [`unescaped`] for a quoted field, out of line.
#[inline(never)]
pub(super) fn unescaped_quoted(
    input: &[u8],
    span: Span,
    quote: i32,
    scratch: &mut Vec<u8>,
) -> Span {
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
