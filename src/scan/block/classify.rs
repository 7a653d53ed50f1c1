//! The classifier: a kernel's raw masks of a block to its structure
//! (structural delimiters and terminators, bytes that need the state
//! machine, doubled quotes, line ends), with what one block carries to
//! the next.

use super::dispatch::{dispatch, Dispatch};
use super::kernel::{Kernel, Portable};
use super::select::{MODE_COLS, MODE_COUNT, MODE_CSV, MODE_FIELDS, MODE_RAW, MODE_RECORDS};
use super::{Masks, Needles};
use crate::dialect::{Dialect, Terminator};
/// What the previous block leaves to the next one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Carry {
    /// All ones when the previous block ended inside quotes.
    pub(super) inq: u64,
    /// 1 when the previous byte starts a field (structural, or record
    /// start).
    pub(super) field_start: u64,
    /// 1 when the previous byte was a closing quote.
    pub(super) close: u64,
    /// 1 when the previous byte was a CR that counts as a line end.
    pub(super) cr: u64,
}

impl Carry {
    /// The carry at the first byte of a record.
    pub(super) fn record_start() -> Carry {
        Carry { inq: 0, field_start: 1, close: 0, cr: 0 }
    }
}

/// The structural view of one block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    /// Delimiters outside quotes.
    pub(super) delim: u64,
    /// Terminators outside quotes.
    pub(super) nl: u64,
    /// Bytes that need the state machine (see the module docs).
    pub(super) bad: u64,
    /// The first quote of each doubled pair; with `MODE_FIELDS`, the
    /// second (a quote that opens right after one that closes), which
    /// needs no look at the next block.
    pub(super) pairs: u64,
    /// Bytes that end a line for Python's `line_num`.
    pub(super) lines: u64,
    /// Every quote byte (structural or not).
    pub(super) quote: u64,
    /// Quotes are in play: the block holds a quote byte or starts inside
    /// quotes (or a dialect option needs the full classification). When
    /// false, `MODE_CSV`'s `QuotedFields` are all zero.
    pub(super) quoted: bool,
}

/// What `MODE_CSV` scanning adds to a [`Block`] (kept apart, so that the other
/// loops do not carry it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QuotedFields {
    /// Quotes that open a field.
    pub(super) open: u64,
    /// Quotes that close a field (the last byte before a structural one).
    pub(super) close: u64,
    /// The bytes of quoted fields, from the opening quote up to the closing
    /// one (excluded), less those for which a CSV writer quotes a field:
    /// delimiters, line-end bytes and the first quote of each doubled
    /// pair. A quoted field needs no quotes when this covers it whole.
    pub(super) plain: u64,
    /// The block ends inside a quoted field.
    pub(super) open_at_end: bool,
}

/// The block in which the last record ended, kept so that the next record
/// (which starts in it) does not classify it again. Addresses are absolute,
/// so that it survives the caller re-slicing the same input; the reader
/// drops it whenever the bytes at those addresses may change (a buffer
/// refill), and only the reader turns it on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cache {
    /// Address of the next record's first byte.
    pub(super) next: usize,
    /// Address of the block's first byte.
    pub(super) base: usize,
    pub(super) block: Block,
    /// The carry after the block.
    pub(super) carry: Carry,
}

/// Bits `0..k` (k <= 64).
#[inline]
pub(super) fn below(k: usize) -> u64 {
    if k >= 64 {
        !0
    } else {
        (1u64 << k) - 1
    }
}

/// The bits below the lowest set bit of `x` (all of them when `x` is 0).
#[inline(always)]
pub(super) fn below_lowest(x: u64) -> u64 {
    (x & x.wrapping_neg()).wrapping_sub(1)
}

/// Bits `k..64` (k <= 64).
#[inline]
pub(super) fn from(k: usize) -> u64 {
    !below(k)
}

/// The classifier for one dialect.
#[derive(Clone)]
pub(crate) struct Classifier {
    /// The entry points of the kernel chosen for this CPU.
    pub(super) dispatch: &'static Dispatch,
    pub(super) needles: Needles,
    pub(super) any_term: bool,
    pub(super) double_quote: bool,
    pub(super) quote: Option<u8>,
    pub(super) term: u8,
    pub(super) delim: u8,
    /// All ones when the dialect has an escape byte.
    pub(super) esc_on: u64,
    /// All ones with `skip_initial_space`.
    pub(super) space_on: u64,
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
            dispatch: dispatch(),
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
    pub(super) fn any_term<const STD: bool>(&self) -> bool {
        STD || self.any_term
    }

    /// Whether escape and space bytes are looked for; `false` under `STD`.
    #[inline(always)]
    pub(super) fn extra<const STD: bool>(&self) -> bool {
        !STD && self.needles.extra
    }

    /// Whether `c` ends records (under `STD`, CR and LF are constants).
    #[inline(always)]
    pub(super) fn is_nl<const STD: bool>(&self, c: u8) -> bool {
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
    pub(super) fn tail_masks(&self, rest: &[u8]) -> Masks {
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
    pub(super) unsafe fn block<K: Kernel, const STD: bool, const MODE: u8>(
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
    pub(super) fn classify<const STD: bool, const MODE: u8>(
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
pub(super) unsafe fn clean_quotes<K: Kernel>(
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
pub(super) unsafe fn clean_quotes_in_words<K: Kernel>(
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
pub(super) fn keep_all_up_to(keep: &mut Vec<u64>, n: usize) {
    while keep.len() < n {
        keep.push(!0);
    }
}
