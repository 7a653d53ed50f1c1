//! The loop over runs of records: counting, and the batch modes of
//! [`Selection`](crate::Selection) that keep every record (its offsets,
//! or the bytes its CSV keeps).

use super::classify::{below, below_lowest, from, Carry, Classifier, QuotedFields};
use super::classify::{clean_quotes, clean_quotes_in_words, keep_all_up_to};
use super::fields::{copy_pending, starts_record};
use super::kernel::Kernel;
use super::select::{ColMasks, SelectArgs, Selected, SelectedRecord, ENDS_SPAN, NO_COPY};
use super::select::{MODE_COLS, MODE_COUNT, MODE_CSV, MODE_FIELDS, MODE_RAW};
use crate::scan::{Scanner, State};
impl Scanner {
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
        let Some(d) = self.block.as_ref().filter(|_| self.block_on).map(|c| c.dispatch) else {
            return 0;
        };
        // SAFETY: the table came from `dispatch()` (through the
        // classifier), which hands out a kernel's table only after
        // detecting its instruction set on this CPU.
        unsafe { (d.count)(self, input, pos, expect, check) }
    }

    /// Whether [`Scanner::block_count`] or [`Scanner::block_select`],
    /// having stopped at a record start with `tail` (the rest of the input
    /// from there) left, could go on if more input were appended: the block
    /// scanner can start there and `tail` holds no record terminator, so it
    /// stopped only for want of the record's end. A buffered count or batch
    /// then refills instead of handing the record to the state machine
    /// (which builds every field of it). A record the block scanner cannot take for
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

    /// [`Scanner::block_count`] with kernel `K`, inlined into the entry
    /// points compiled for it.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    pub(super) unsafe fn block_count_with<K: Kernel, const STD: bool>(
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
        // SAFETY: forwarded from the caller.
        unsafe {
            self.block_records_with::<K, MODE_COUNT, STD>(input, pos, expect, &args, &mut none)
        }
    }

    /// The classifier for a run of block-scanned records starting at
    /// `input[pos]`, or `None` when no run can start there (no block
    /// scanner, the state machine is mid-record or owes an LF, nothing to
    /// take, or the next record is an empty line or a comment).
    pub(super) fn run_start(
        &self,
        input: &[u8],
        pos: usize,
        max_records: usize,
    ) -> Option<Classifier> {
        let cls = self.block.clone()?;
        let ready = self.state == State::StartRecord && !self.skip_lf && max_records > 0;
        (ready && starts_record::<false>(&cls, input, pos, self.comment)).then_some(cls)
    }

    /// [`Scanner::block_records_with`] in `MODE` (not `MODE_COUNT`), for
    /// the dialect.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    pub(super) unsafe fn block_records_mode<K: Kernel, const MODE: u8>(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        sel: &SelectArgs<'_>,
        out: &mut Selected,
    ) -> u64 {
        // SAFETY: forwarded from the caller.
        unsafe {
            if self.std_dialect() {
                self.block_records_with::<K, MODE, true>(input, pos, expect, sel, out)
            } else {
                self.block_records_with::<K, MODE, false>(input, pos, expect, sel, out)
            }
        }
    }

    /// The loop of [`Scanner::block_count`] (`MODE_COUNT`); in the other
    /// modes it also records every record it takes in `out` (start, end,
    /// line, field count, and whether it holds a quote byte) and stops
    /// after `sel.max_records`, and keeps what the mode says. `sel.cols`
    /// is not looked at.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    pub(super) unsafe fn block_records_with<K: Kernel, const MODE: u8, const STD: bool>(
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
        let mut words = KeepWords::new(cm);
        // A borrow of the field rather than the vector taken out of `out`:
        // taking it cost the loops of the other modes instructions (and
        // `read_batch` with every field time), for no gain here.
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
        // them again in the words.
        let csv_words = csv && K::DEPOSIT && cls.dispatch.byte_compress;

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
            // SAFETY: the caller guarantees `K`'s instruction set.
            let b = unsafe { cls.block::<K, STD, MODE>(input, base, &mut carry, &mut qf) };
            if masks || csv {
                let rel = (base - out.ends_base) as u32;
                if masks {
                    // SAFETY: the caller guarantees `K`'s instruction set.
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
                    // SAFETY: the caller guarantees `K`'s instruction set.
                    let drop =
                        unsafe { clean_quotes_in_words::<K>(&qf, rel, state, &mut out.keep) };
                    out.keep.push(!drop);
                } else if csv && K::DEPOSIT && b.quoted {
                    let state = (&mut clean_in, &mut in_field, &mut open_at);
                    // SAFETY: the caller guarantees `K`'s instruction set.
                    unsafe { push_drops_deposit::<K>(drops, &qf, rel, state) };
                } else if csv && !K::DEPOSIT && (qf.open | qf.close | clean_in) != 0 {
                    push_drops_loop(drops, &qf, rel, &mut clean_in, &mut open_at);
                }
            }
            if cols {
                let rel = (base - out.ends_base) as u32;
                // The quotes to drop, as with `csv`, in blocks with quotes
                // in play. (Taking every block, with no branch, was slower
                // on numeric data and gained nothing on quoted text.)
                let drop = if b.quoted {
                    let state = (&mut clean_in, &mut in_field, &mut open_at);
                    // SAFETY: the caller guarantees `K`'s instruction set.
                    unsafe { clean_quotes_in_words::<K>(&qf, rel, state, &mut out.keep) }
                } else {
                    0
                };
                words.start_block(drop);
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
                    let seg = b.delim & below(k) & from(r.saturating_sub(base));
                    // SAFETY: the caller guarantees `K`'s instruction set.
                    unsafe { words.record_end::<K>(seg, fields, k, end - base, end == p + 2) };
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
                    // SAFETY: the caller guarantees `K`'s instruction set.
                    unsafe { words.record_open::<K>(seg, d) };
                }
                // SAFETY: the caller guarantees `K`'s instruction set.
                unsafe { words.end_block::<K>(&mut out.keep) };
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
            // SAFETY: the caller guarantees `K`'s instruction set.
            unsafe { words.finish::<K>(&mut out.keep) };
        }
        *pos = r;
        count
    }
}

/// `MODE_CSV` with [`Kernel::DEPOSIT`], for a block with quotes in play
/// (its quoted fields `qf`, at `rel` from the batch's offset base):
/// appends the offsets of the quotes a CSV writer drops to `drops`, without
/// a loop over the fields: the clean fields' opening quotes come from a bit
/// deposit, and the quotes to drop are written from one mask (in order:
/// opening and closing quotes alternate). `state` is what
/// [`clean_quotes`] carries from block to block.
///
/// # Safety
///
/// The CPU must support `K`'s instruction set.
#[inline(always)]
unsafe fn push_drops_deposit<K: Kernel>(
    drops: &mut Vec<u32>,
    qf: &QuotedFields,
    rel: u32,
    (clean_in, in_field, open_at): (&mut u64, &mut u64, &mut u32),
) {
    let open_before = *open_at;
    // SAFETY: forwarded from the caller.
    let (mut bits, carried) = unsafe { clean_quotes::<K>(qf, rel, clean_in, in_field, open_at) };
    // The opening quote of the field the block started in goes first, when
    // that field is clean. Quotes to drop are sparse (about one a block in
    // quoted text): two slots are written whatever their number, and a
    // loop takes any more.
    let n = carried as usize + bits.count_ones() as usize;
    drops.reserve(65);
    let len = drops.len();
    let spare = &mut drops.spare_capacity_mut()[..65];
    spare[0].write(open_before);
    let mut i = carried as usize;
    for _ in 0..2 {
        // `trailing_zeros` of 0 is 64: harmless in an unkept slot.
        spare[i].write(rel + bits.trailing_zeros());
        bits &= bits.wrapping_sub(1);
        i += 1;
    }
    while bits != 0 {
        spare[i].write(rel + bits.trailing_zeros());
        bits &= bits - 1;
        i += 1;
    }
    // SAFETY: the `n <= 65` slots after the old length were written above,
    // inside the capacity reserved.
    unsafe { drops.set_len(len + n) };
}

/// `MODE_CSV` without [`Kernel::DEPOSIT`], for a block whose quoted fields
/// `qf` (at `rel` from the batch's offset base) open or close a field, or
/// that starts in a clean one (`*clean_in`): appends the offsets of the
/// quotes a CSV writer drops to `drops`, a field at a time. Updates
/// `*clean_in` and `*open_at` (where the field the next block starts in
/// opened) for the next block.
#[inline(always)]
fn push_drops_loop(
    drops: &mut Vec<u32>,
    qf: &QuotedFields,
    rel: u32,
    clean_in: &mut u64,
    open_at: &mut u32,
) {
    // Adding each field's opening quote to the bits of `plain` carries
    // through a field up to the first bit missing: its closing quote when
    // nothing inside keeps the quotes. A field from the last block starts
    // with the carry in.
    let (s1, c1) = qf.plain.overflowing_add(qf.open);
    let (s2, c2) = s1.overflowing_add(*clean_in);
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
            let o = if opens != 0 { rel + 63 - opens.leading_zeros() } else { *open_at };
            spare[i].write(o);
            spare[i + 1].write(rel + k);
            i += 2;
        }
        // SAFETY: the `i <= 64` slots after the old length were written
        // above, inside the capacity reserved.
        unsafe { drops.set_len(len + i) };
    }
    *clean_in = 0;
    if qf.open_at_end {
        *clean_in = u64::from(c1 | c2);
        if qf.open != 0 {
            *open_at = rel + 63 - qf.open.leading_zeros();
        }
    }
}

/// `MODE_COLS`: which bytes the CSV of the selected columns keeps, one word
/// per block (all ones: kept), built as the loop goes. The records'
/// delimiters flip the keep state as [`ColMasks`] says, and a prefix XOR
/// of the flips gives the state of each byte.
#[derive(Clone, Copy, Debug)]
struct KeepWords {
    cm: ColMasks,
    /// The keep state at the block's start, before the forced bits.
    keeping: u64,
    /// Flips and forced kept bytes that fall past the block's end (a
    /// delimiter in its last byte, a record ending there).
    flips_next: u64,
    kept_next: u64,
    /// For the block in hand: the flips, the bytes forced in (LFs) and out
    /// (the CR of a CRLF), and the quotes to drop.
    flips: u64,
    forced_in: u64,
    forced_out: u64,
    drop: u64,
    /// The word of the block in hand is still to be written.
    pending: bool,
}

impl KeepWords {
    fn new(cm: ColMasks) -> KeepWords {
        KeepWords {
            cm,
            keeping: if cm.selected(0) { !0 } else { 0 },
            flips_next: 0,
            kept_next: 0,
            flips: 0,
            forced_in: 0,
            forced_out: 0,
            drop: 0,
            pending: false,
        }
    }

    /// A new block, whose quotes to drop are `drop`. Where the keep state
    /// flips and the bytes forced in or out: from the last block, then
    /// each record that ends in this one ([`KeepWords::record_end`]) and
    /// the one left open ([`KeepWords::record_open`]).
    #[inline(always)]
    fn start_block(&mut self, drop: u64) {
        self.drop = drop;
        (self.flips, self.forced_in, self.forced_out) = (self.flips_next, self.kept_next, 0);
        (self.flips_next, self.kept_next) = (0, 0);
        self.pending = true;
    }

    /// The `d` low bits of the columns' pattern `m` past the first, at the
    /// set bits of `seg` (none when `d` is 64 or more).
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn dep<K: Kernel>(m: u64, d: usize, seg: u64) -> u64 {
        if d < 64 {
            // SAFETY: forwarded from the caller.
            unsafe { K::deposit(m >> d, seg) }
        } else {
            0
        }
    }

    /// A record of `fields` fields that ends in the block: its delimiters
    /// in the block are `seg`, its terminator at bit `k`, and the next
    /// record starts `next` bytes past the block's start (after a CRLF
    /// when `crlf`). Its delimiters flip the keep state (XOR: with the last
    /// selected field empty, its two flips fall on the same byte and
    /// cancel); its LF is kept, the CR of a CRLF is not; and the next
    /// record starts in the state of its first field.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn record_end<K: Kernel>(
        &mut self,
        seg: u64,
        fields: usize,
        k: usize,
        next: usize,
        crlf: bool,
    ) {
        let cm = self.cm;
        let d = fields - 1 - seg.count_ones() as usize;
        // SAFETY: forwarded from the caller.
        let (after, at) =
            unsafe { (Self::dep::<K>(cm.after, d, seg), Self::dep::<K>(cm.at, d, seg)) };
        self.flips ^= (after << 1) ^ at;
        let lf = next - 1;
        if lf < 64 {
            self.forced_in |= 1 << lf;
        } else {
            self.kept_next |= 1;
        }
        self.forced_out |= u64::from(crlf) << k;
        let flip = u64::from(cm.selected(fields - 1) != cm.selected(0));
        if next < 64 {
            self.flips |= flip << next;
        } else {
            self.flips_next |= flip << (next - 64);
        }
    }

    /// The record left open at the block's end: its delimiters in the
    /// block are `seg`, with `d` of them before the block.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn record_open<K: Kernel>(&mut self, seg: u64, d: usize) {
        let cm = self.cm;
        // SAFETY: forwarded from the caller.
        let (after, at) =
            unsafe { (Self::dep::<K>(cm.after, d, seg), Self::dep::<K>(cm.at, d, seg)) };
        self.flips ^= (after << 1) ^ at;
        self.flips_next |= after >> 63;
    }

    /// The block's word, from its flips: written to `keep`.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn end_block<K: Kernel>(&mut self, keep: &mut Vec<u64>) {
        // SAFETY: forwarded from the caller.
        let state = unsafe { K::prefix_xor(self.flips) } ^ self.keeping;
        self.keeping = ((state as i64) >> 63) as u64;
        keep.push(((state & !self.forced_out) | self.forced_in) & !self.drop);
        self.pending = false;
    }

    /// After the loop: the word of the block it stopped in (its records
    /// taken), and the LF of a CRLF whose CR ends the last block scanned.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    unsafe fn finish<K: Kernel>(&self, keep: &mut Vec<u64>) {
        if self.pending {
            // SAFETY: forwarded from the caller.
            let state = unsafe { K::prefix_xor(self.flips) } ^ self.keeping;
            keep.push(((state & !self.forced_out) | self.forced_in) & !self.drop);
        }
        keep.push(self.kept_next);
    }
}
