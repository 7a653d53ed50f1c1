//! One record at a time: the block scanner's shortcut inside the state
//! machine's own loop (see the module docs of `scan/block`).

use super::classify::{below, below_lowest, from, Cache, Carry, Classifier, QuotedFields};
use super::fields::plain_span;
use super::kernel::Kernel;
use super::select::MODE_FIELDS;
use crate::scan::{Fields, Scanner, State};

impl Scanner {
    /// Scans the whole record starting at `input[r]` with the block
    /// classifier. Called in `StartRecord` (after `skip_lf`), with `out`
    /// freshly cleared. Returns the offset past the record's terminator, or
    /// `None`, having changed nothing, when the record is not regular (see
    /// the module docs) and must go through the state machine.
    pub(in crate::scan) fn block_record(
        &mut self,
        input: &[u8],
        r: usize,
        out: &mut Fields,
    ) -> Option<usize> {
        let d = self.block.as_ref()?.dispatch;
        // SAFETY: the table came from `dispatch()` (through the
        // classifier), which hands out a kernel's table only after
        // detecting its instruction set on this CPU.
        unsafe { (d.record)(self, input, r, out) }
    }

    /// [`Scanner::block_record`] with kernel `K`, inlined into the entry
    /// points compiled for it.
    ///
    /// # Safety
    ///
    /// The CPU must support `K`'s instruction set.
    #[inline(always)]
    pub(super) unsafe fn block_record_with<K: Kernel, const STD: bool>(
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
                // SAFETY: the caller guarantees `K`'s instruction set;
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
    pub(super) fn std_dialect(&self) -> bool {
        self.block.as_ref().is_some_and(Classifier::is_std)
    }

    /// Undoes a partial `block_record`: the record starts afresh.
    pub(super) fn block_abandon(&mut self, out: &mut Fields) {
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
    pub(super) fn block_field(
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
}
