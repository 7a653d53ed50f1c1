//! What the batch modes are asked for and keep, and the loop that takes
//! only the selected columns of each record.

use super::classify::{below, below_lowest, from, Carry, QuotedFields};
use super::fields::{plain_span, push_unescaped, starts_record};
use super::kernel::Kernel;
use crate::scan::{Scanner, Span};

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
    pub(super) after: u64,
    pub(super) at: u64,
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
    pub(super) fn selected(&self, k: usize) -> bool {
        k < 64 && (self.sel >> k) & 1 != 0
    }
}

/// What [`Scanner::block_records_with`] keeps: nothing (it counts).
pub(super) const MODE_COUNT: u8 = 0;
/// Each record's bounds, line and field count ([`Selected::records`]).
pub(super) const MODE_RECORDS: u8 = 1;
/// Those, the delimiter offsets ([`Selected::ends`]) and the records with
/// doubled quotes copied unescaped ([`Selected::copies`]).
pub(super) const MODE_FIELDS: u8 = 2;
/// The records and the quotes a CSV writer drops ([`Selected::drops`]).
pub(super) const MODE_CSV: u8 = 3;
/// The records and the delimiter offsets, nothing unescaped.
pub(super) const MODE_RAW: u8 = 4;
/// The records and which bytes the CSV of some columns keeps
/// ([`Selected::keep`]).
pub(super) const MODE_COLS: u8 = 5;

impl SelectArgs<'_> {
    /// The mode of the counting loop that takes these records (not
    /// [`MODE_COUNT`]).
    pub(super) fn mode(&self) -> u8 {
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
pub(super) const ENDS_SPAN: usize = (u32::MAX - 64) as usize;

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
        let Some(d) = self.block.as_ref().filter(|_| self.block_on).map(|c| c.dispatch) else {
            return 0;
        };
        if self.trim || self.filter.active() {
            return 0;
        }
        if sel.cols.is_empty() || sel.all_cols || sel.csv_cols.is_some() {
            // Records only, every field, or CSV of some columns: the
            // counting loop.
            // SAFETY: the table came from `dispatch()` (through the
            // classifier), which hands out a kernel's table only after
            // detecting its instruction set on this CPU.
            return unsafe { (d.records)(self, input, pos, expect, sel, out) };
        }
        // SAFETY: the table came from `dispatch()` (through the
        // classifier), which hands out a kernel's table only after
        // detecting its instruction set on this CPU.
        unsafe { (d.select)(self, input, pos, expect, sel, out) }
    }

    /// [`Scanner::block_select`] with kernel `K`, inlined into the entry
    /// points compiled for it.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    pub(super) unsafe fn block_select_with<K: Kernel, const STD: bool>(
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
            // SAFETY: the caller guarantees `K`'s instruction set.
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
