//! Batches: many rows parsed and their fields decoded without the GIL,
//! then turned into Python objects with it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyList;

use fastcsv::{
    Error as CoreError, Position, RawFields, Reader as CoreReader, SelectedRow, Selection,
};

use crate::source::HeldReader;
use crate::strings::{
    build_list, build_list_raw, decode_then_parse, position_text, to_float, units_raw, StrMaker,
    Text, WIDE_MAX,
};
use crate::utf8::{
    byte_kind, char_count, decode_bmp, decode_latin1, decode_ucs4, decode_utf8_append,
    is_ascii_field, max_byte, non_ascii_fields,
};

/// Where a batch ends: after `bytes` bytes of records, `fields` fields or
/// `rows` rows, whichever comes first (small, so that a small input needs
/// no second thread and a batch stays in cache); the block scanner is
/// given at most `regular` bytes of input at a time, so a batch ends at
/// most that far past its limits (each field, and each record, takes at
/// least one byte of it).
#[derive(Clone, Copy)]
pub(crate) struct BatchSize {
    bytes: usize,
    fields: usize,
    rows: usize,
    regular: usize,
}

/// The batches of a bulk read (`fastcsv.read`, `read_columns`), whose
/// objects stay: fewer, larger batches cost less per row.
pub(crate) const BULK_BATCH: BatchSize =
    BatchSize { bytes: 256 << 10, fields: 32 << 10, rows: 16 << 10, regular: 16 << 10 };

/// The batches of a reader, whose rows are made one per `__next__` and
/// most often let go at once: a quarter of the fields, so that a batch's
/// spans and bytes take less of the CPU's near caches, where the
/// short-string cache's table and strings, which a row-by-row read of
/// short repeated values reaches for every field, then stay.
pub(crate) const ROW_BATCH: BatchSize =
    BatchSize { bytes: 256 << 10, fields: 8 << 10, rows: 16 << 10, regular: 4 << 10 };

/// How often [`Batch::prepare_until`] checks whether to stop (fields),
/// and how many it classifies at a time.
const PREPARE_STEP: usize = 256;

/// Room for a row that ends a batch past its [`BatchSize::bytes`].
const BATCH_SLACK: usize = 64 << 10;

/// The largest end offset in a batch's `data` that its `u32` spans hold
/// (`u32::MAX`; lowered by [`_set_span_max`] for tests): a batch whose
/// `data` grows past it (a record of gigabytes) keeps its spans as
/// `usize` pairs instead.
static SPAN_MAX: AtomicUsize = AtomicUsize::new(u32::MAX as usize);

/// Sets the largest offset a batch keeps in its `u32` spans (at most
/// `u32::MAX`; `None` for that), for tests of the wide spans of very long
/// records; the previous value.
#[pyfunction]
#[pyo3(signature = (limit=None))]
pub(crate) fn _set_span_max(limit: Option<usize>) -> usize {
    let limit = limit.unwrap_or(u32::MAX as usize).min(u32::MAX as usize);
    SPAN_MAX.swap(limit, Ordering::Relaxed)
}

/// How a field's text was prepared by [`Batch::prepare`]. Offsets and
/// lengths are `u32` (12 bytes a field, where `usize` took 24: a batch's
/// forms are read back by the calling thread, and half the bytes stay in
/// a nearer cache); a field whose units end past the batch's `span_max`
/// (a record of gigabytes) is left to CPython's decoder instead
/// ([`Form::Utf8`]), which makes the same `str` of strict UTF-8.
#[derive(Clone, Copy)]
pub(crate) enum Form {
    /// Decoded code units at `at..at + len` of the batch's `ucs1`.
    Ucs1 { at: u32, len: u32 },
    /// ... of its `ucs2`.
    Ucs2 { at: u32, len: u32 },
    /// ... of its `ucs4`.
    Ucs4 { at: u32, len: u32 },
    /// Not strict UTF-8 (or past `span_max`): CPython's decoder and error
    /// handler decide.
    Utf8,
}

/// Where to cut a batch's vector of code units back to when a field's
/// units were not kept (see [`Batch::prepare_field`]).
enum Trim {
    Ucs1(usize),
    Ucs2(usize),
    Ucs4(usize),
}

/// Code units at `at..at + len` of their vector as a [`Form`]'s `u32`
/// offset and length, when they end at or before `max` (at most
/// `u32::MAX`).
#[inline(always)]
fn units_at(at: usize, len: usize, max: usize) -> Option<(u32, u32)> {
    (at + len <= max).then_some((at as u32, len as u32))
}

/// Rows scanned and decoded without the GIL, waiting to become Python
/// objects.
#[derive(Default)]
pub(crate) struct Batch {
    /// The records' bytes as read, back to back, and after each record
    /// the fields of it that are not a part of its bytes as they stand
    /// (unescaped, filtered).
    pub(crate) data: Vec<u8>,
    /// Start and end offset in `data` of each field, as `u32` (half the
    /// bytes of `usize`, which the calling thread reads after the scanning
    /// thread wrote them); use [`Batch::span`] unless `wide` is empty.
    /// The number of fields is `ends.len()`.
    pub(crate) starts: Vec<u32>,
    pub(crate) ends: Vec<u32>,
    /// Every field's span instead, once `data` grew past `span_max` (a
    /// record of gigabytes): `starts` and `ends` then hold zeros for the
    /// fields after that, kept for their count.
    wide: Vec<(usize, usize)>,
    /// [`SPAN_MAX`] as the batch's load began (set by `clear`, which every
    /// load runs before it notes a span).
    span_max: usize,
    /// Per field: began with an ordinary byte (kept for QUOTE_NONNUMERIC).
    numeric: Vec<bool>,
    /// Per row: index into `ends` one past its last field, and position.
    pub(crate) rows: Vec<(usize, Position)>,
    /// Per row: the reader's line count right after it (`line_num`).
    pub(crate) lines: Vec<u64>,
    /// The reader's line count where the batch ended.
    pub(crate) end_line: u64,
    /// The reader's byte offset where the batch began.
    pub(crate) start_byte: u64,
    /// Where the record after the batch's last row starts (for a batch
    /// that an error ended, the record that failed).
    pub(crate) end_byte: u64,
    /// Whether an LF at `end_byte` may still belong to the last row's line
    /// (see [`CoreReader::pending_lf`]).
    pub(crate) end_lf: bool,
    /// Where the record an error ended the batch in began (byte, line).
    pub(crate) err_start: Option<(u64, u64)>,
    /// [`Batch::prepare`] has run.
    pub(crate) prepared: bool,
    /// [`Batch::prepare_late`] has run on a batch that is not all ASCII:
    /// its fields that are not ASCII are decoded as their objects are made.
    late: bool,
    /// Rows to decode first and parse with `csv` (see
    /// [`decode_then_parse`]): their index and bytes in `raw`.
    pub(crate) reparse: Vec<(usize, std::ops::Range<usize>)>,
    raw: Vec<u8>,
    /// The fields that are not ASCII, in order, as prepared: their index
    /// in the batch and how. (ASCII fields, most of them, have no entry:
    /// preparing writes nothing for them, and the calling thread reads
    /// nothing back.)
    forms: Vec<(u32, Form)>,
    /// Per row prepared, where its entries of `forms` begin, and one more
    /// (the number of entries so far); empty before preparing, and when
    /// `data` is ASCII.
    row_forms: Vec<u32>,
    /// Scratch for [`Batch::prepare_until`]: the fields of a run of rows
    /// that are not ASCII.
    flagged: Vec<u32>,
    /// ... and the kind of each (see [`non_ascii_fields`]).
    kinds: Vec<u8>,
    /// Decoded code units of the fields that are not ASCII, by kind.
    ucs1: Vec<u8>,
    ucs2: Vec<u16>,
    ucs4: Vec<u32>,
    /// The block scanner's output, reused from one load to the next.
    regular: AllFields,
}

/// A [`Selection::all`], which is also its default.
struct AllFields(Selection);

impl Default for AllFields {
    fn default() -> AllFields {
        AllFields(Selection::all())
    }
}

/// Appends `d + off` (wrapping) for each `d` of `delims` to `v`: written
/// straight into its spare capacity, a loop the compiler vectorizes
/// (`extend` with `map` checks the length per item).
#[inline]
fn fill_spans(v: &mut Vec<u32>, delims: &[u32], off: u32) {
    let n = delims.len();
    v.reserve(n);
    let len = v.len();
    for (o, &d) in v.spare_capacity_mut()[..n].iter_mut().zip(delims) {
        o.write(d.wrapping_add(off));
    }
    // SAFETY: the `n` items past `len` were just written (reserved above).
    unsafe { v.set_len(len + n) };
}

/// Appends the span of every field of a record with quoted fields, less
/// the quotes around those, to `starts` and `ends`: the record's bytes
/// are `data[base..end]` (`end` is `data.len()`), and its delimiter `k` is
/// at `delims[k] + off` (wrapping) of `data`. A field there that starts
/// with `quote` is quoted and ends with it (a record the block scanner
/// took, unescaped): one byte is dropped at each end. The spans are
/// written straight into the vectors' spare capacity, as in
/// [`fill_spans`] (a `push` stores each vector's length per item).
#[inline]
fn fill_quoted(
    (starts, ends): (&mut Vec<u32>, &mut Vec<u32>),
    data: &[u8],
    (base, end): (u32, u32),
    delims: &[u32],
    off: u32,
    quote: u8,
) {
    let n = delims.len() + 1;
    starts.reserve(n);
    ends.reserve(n);
    let (s0, e0) = (starts.len(), ends.len());
    let field = |a: u32, e: u32| {
        // `data[a]` is the field's first byte, or the delimiter or the end
        // after an empty one (never the quote).
        let q = u32::from(data.get(a as usize) == Some(&quote) && a < e);
        (a + q, e - q)
    };
    let (ss, es) = (&mut starts.spare_capacity_mut()[..n], &mut ends.spare_capacity_mut()[..n]);
    let mut a = base;
    // The fields before each delimiter, then the last one.
    let ends_at = delims.iter().map(|&d| d.wrapping_add(off)).chain(std::iter::once(end));
    for ((s, t), e) in ss.iter_mut().zip(es.iter_mut()).zip(ends_at) {
        let (x, y) = field(a, e);
        s.write(x);
        t.write(y);
        a = e.wrapping_add(1);
    }
    // SAFETY: the `n` items past `s0` and `e0` were just written (reserved
    // above; `ends_at` has `n` items).
    unsafe {
        starts.set_len(s0 + n);
        ends.set_len(e0 + n);
    }
}

/// The code units `at..at + len` of `v` (a [`Form`]'s).
#[inline(always)]
fn units<T>(v: &[T], at: u32, len: u32) -> &[T] {
    let at = at as usize;
    &v[at..at + len as usize]
}

impl Batch {
    /// A batch with room for a full batch of `bytes` (unless its last row
    /// is very long), so that filling it does not allocate: the scanning
    /// thread then takes no memory of its own from the allocator, memory
    /// that glibc would keep in that thread's arena after it ends.
    pub(crate) fn reserved(size: BatchSize) -> Batch {
        // The records of one last call of the block scanner copy at most
        // its input (a record with doubled quotes as its unescaped copy
        // alone): room for twice that leaves some to spare.
        let room = size.bytes + BATCH_SLACK + 2 * size.regular;
        let fields = size.fields + size.regular + 1024;
        let rows = size.rows + size.regular;
        Batch {
            data: Vec::with_capacity(room),
            starts: Vec::with_capacity(fields),
            ends: Vec::with_capacity(fields),
            wide: Vec::new(),
            span_max: SPAN_MAX.load(Ordering::Relaxed),
            numeric: Vec::with_capacity(fields),
            rows: Vec::with_capacity(rows),
            lines: Vec::with_capacity(rows),
            end_line: 0,
            start_byte: 0,
            end_byte: 0,
            end_lf: false,
            err_start: None,
            prepared: false,
            late: false,
            reparse: Vec::new(),
            raw: Vec::new(),
            forms: Vec::with_capacity(fields),
            row_forms: Vec::with_capacity(rows + 1),
            flagged: Vec::with_capacity(fields),
            kinds: Vec::with_capacity(fields),
            ucs1: Vec::with_capacity(room),
            ucs2: Vec::with_capacity(room),
            ucs4: Vec::new(),
            regular: AllFields::default(),
        }
    }

    fn clear(&mut self) {
        self.prepared = false;
        self.late = false;
        self.data.clear();
        self.starts.clear();
        self.ends.clear();
        self.wide.clear();
        self.span_max = SPAN_MAX.load(Ordering::Relaxed);
        self.numeric.clear();
        self.rows.clear();
        self.lines.clear();
        self.reparse.clear();
        self.raw.clear();
        self.forms.clear();
        self.row_forms.clear();
        self.ucs1.clear();
        self.ucs2.clear();
        self.ucs4.clear();
    }

    /// Reads rows until the batch is full by `size` (see [`BatchSize`]).
    /// `Ok(false)` at end of input; after an error, the rows before it.
    /// With `joins`, rows for [`decode_then_parse`] are marked.
    pub(crate) fn load(
        &mut self,
        held: &mut HeldReader,
        nonnumeric: bool,
        joins: bool,
        size: BatchSize,
    ) -> Result<bool, CoreError> {
        if held.stopped {
            self.clear();
            return Ok(false);
        }
        let end = self.load_rows(held.get(), nonnumeric, joins, size);
        // A file that shrank: the last row's bytes may have been copied
        // from a page of a mapping past the new end (zeros) after the
        // reader checked them, or cut short by the new end of a file read
        // with `read()`. It is dropped, and the change reported, whatever
        // ended the batch (an error about zeros is no error of the file).
        // (A mapping is not asked again of a reader that reported it and
        // stopped: the core checks its size itself at the end.)
        let mapped = !self.rows.is_empty() || end.is_err();
        let at = self.rows.last().map(|&(_, p)| p);
        match held.check_unchanged(mapped, at) {
            Ok(()) => end,
            Err(e) => {
                if let Some(pos) = self.drop_last_row() {
                    self.err_start = Some((pos.byte, pos.line));
                    self.end_byte = pos.byte;
                    self.end_lf = false;
                }
                self.end_line = self.lines.last().copied().unwrap_or(self.end_line);
                Err(e)
            }
        }
    }

    /// [`Batch::load`]'s reading of the rows.
    fn load_rows(
        &mut self,
        rdr: &mut CoreReader<'_>,
        nonnumeric: bool,
        joins: bool,
        size: BatchSize,
    ) -> Result<bool, CoreError> {
        self.clear();
        self.start_byte = rdr.byte_offset();
        self.err_start = None;
        // Out of `self` while its batches borrow it.
        let mut sel = std::mem::take(&mut self.regular);
        let quote = rdr.dialect().quote();
        let end = loop {
            if self.data.len() >= size.bytes
                || self.ends.len() >= size.fields
                || self.rows.len() >= size.rows
            {
                break Ok(true);
            }
            // Records the block scanner takes come many at a time, without
            // building a span per field; the others one by one.
            // (QUOTE_NONNUMERIC needs to know which fields were quoted,
            // which only rows tell.)
            if !nonnumeric {
                let room = size.bytes.saturating_sub(self.data.len()).clamp(1, size.regular);
                match rdr.read_regular(&mut sel.0, room) {
                    Ok(Some(b)) => {
                        let n = b.len();
                        for (i, row) in b.iter().enumerate() {
                            self.push_regular(&row, joins, quote);
                            // The lines through a record are those before
                            // the next one; through the last, the reader's.
                            if i + 1 < n {
                                self.lines.push(b.row(i + 1).position().line - 1);
                            }
                        }
                        self.lines.push(rdr.line());
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.err_start = rdr.error_record_start();
                        break Err(e);
                    }
                }
            }
            let row = match rdr.read_row() {
                Ok(Some(row)) => row,
                Ok(None) => break Ok(false),
                Err(e) => {
                    self.err_start = rdr.error_record_start();
                    break Err(e);
                }
            };
            // The record's bytes in one copy; each field is found in them
            // (fields that are a part of the input as read are), or else
            // copied after them.
            let raw = row.raw();
            let base = self.data.len();
            self.data.extend_from_slice(raw);
            let raw_at = raw.as_ptr() as usize;
            for (i, f) in row.iter().enumerate() {
                self.push_field(f, raw_at, raw.len(), base);
                if nonnumeric {
                    self.numeric.push(row.is_numeric(i));
                }
            }
            if joins && row.unescaping_may_join_invalid_utf8() {
                let at = self.raw.len();
                self.raw.extend_from_slice(row.raw());
                self.reparse.push((self.rows.len(), at..self.raw.len()));
            }
            self.rows.push((self.ends.len(), row.position()));
            self.lines.push(rdr.line());
        };
        self.regular = sel;
        self.end_line = rdr.line();
        (self.end_byte, self.end_lf) = match (&end, self.err_start) {
            (Err(_), Some((at, _))) => (at, false),
            _ => (rdr.byte_offset(), rdr.pending_lf()),
        };
        end
    }

    /// Notes field `f` of a record whose `raw_len` bytes, read at address
    /// `raw_at`, were copied to `data[base..]`: where it lies in that copy
    /// when it is a part of the record's bytes, or else a copy of it after
    /// them (an unescaped field).
    #[inline]
    fn push_field(&mut self, f: &[u8], raw_at: usize, raw_len: usize, base: usize) {
        let off = (f.as_ptr() as usize).wrapping_sub(raw_at);
        if off <= raw_len && f.len() <= raw_len - off {
            self.push_span(base + off, base + off + f.len());
        } else {
            let start = self.data.len();
            self.data.extend_from_slice(f);
            self.push_span(start, self.data.len());
        }
    }

    /// Notes the next field's span in `data`.
    #[inline]
    fn push_span(&mut self, start: usize, end: usize) {
        if end <= self.span_max && self.wide.is_empty() {
            // `start <= end`, both within `u32` (`span_max` is at most
            // `u32::MAX`).
            self.starts.push(start as u32);
            self.ends.push(end as u32);
        } else {
            self.push_wide(start, end);
        }
    }

    /// [`Batch::push_span`] past `span_max`: every span from now on (and
    /// those before, copied once) in `wide`.
    #[cold]
    #[inline(never)]
    fn push_wide(&mut self, start: usize, end: usize) {
        if self.wide.is_empty() {
            self.wide.reserve(self.ends.len() + 1);
            let spans = self.starts.iter().zip(&self.ends);
            self.wide.extend(spans.map(|(&s, &e)| (s as usize, e as usize)));
        }
        self.wide.push((start, end));
        self.starts.push(0);
        self.ends.push(0);
    }

    /// Field `f`'s start and end offset in `data`.
    #[inline]
    pub(crate) fn span(&self, f: usize) -> (usize, usize) {
        if self.wide.is_empty() {
            (self.starts[f] as usize, self.ends[f] as usize)
        } else {
            self.wide[f]
        }
    }

    /// The length in bytes of the longest of `fields` (for the field size
    /// limit).
    pub(crate) fn longest(&self, fields: std::ops::Range<usize>) -> usize {
        fields.map(|f| self.span(f)).map(|(s, e)| e - s).max().unwrap_or(0)
    }

    /// Appends a record the block scanner took (but its line count): its
    /// bytes once (for a record with doubled quotes, its unescaped copy),
    /// and every field's span in them, found from the delimiters' offsets
    /// in one pass: no copy per field. With `joins`, a record whose bytes
    /// are not UTF-8 is marked for [`decode_then_parse`] when one of its
    /// fields that was unescaped (holds the quote byte `quote`, which only
    /// a doubled one leaves in a field of such a record) is not ASCII, as
    /// `Row::unescaping_may_join_invalid_utf8` marks it.
    #[inline]
    fn push_regular(&mut self, row: &SelectedRow<'_>, joins: bool, quote: Option<u8>) {
        if row.raw().is_some() {
            // No quote byte: the fields are the record's bytes between its
            // delimiters, as they stand. (No field: an empty line.)
            if let Some(fields) = row.raw_fields() {
                self.push_plain(&fields);
            }
            self.rows.push((self.ends.len(), row.position()));
            return;
        }
        let Some(fields) = row.unescaped_fields() else {
            // No field (an empty line).
            self.rows.push((self.ends.len(), row.position()));
            return;
        };
        let rec = fields.record();
        let base = self.data.len();
        self.data.extend_from_slice(rec);
        let end = base + rec.len();
        match quote {
            Some(q) if end <= self.span_max && self.wide.is_empty() => {
                // Delimiter `d` is at `base + d - shift` of `data`, as in
                // `push_plain`.
                let (delims, shift) = fields.delimiters();
                let off = (base as u32).wrapping_sub(shift as u32);
                fill_quoted(
                    (&mut self.starts, &mut self.ends),
                    &self.data,
                    (base as u32, end as u32),
                    delims,
                    off,
                    q,
                );
            }
            _ => {
                for f in fields {
                    let (a, e) = (base + f.start, base + f.end);
                    let q = usize::from(quote.is_some() && a < e && Some(self.data[a]) == quote);
                    self.push_span(a + q, e - q);
                }
            }
        }
        if joins && quote.is_some() {
            self.mark_joined(row, rec, quote);
        }
        self.rows.push((self.ends.len(), row.position()));
    }

    /// [`Batch::push_regular`] for a record with no quote byte, `fields`:
    /// its bytes once, and field `j` from after delimiter `j - 1` (or the
    /// record's start) to delimiter `j` (or its end).
    #[inline]
    fn push_plain(&mut self, fields: &RawFields<'_>) {
        let raw = fields.record();
        let base = self.data.len();
        self.data.extend_from_slice(raw);
        let end = base + raw.len();
        if end <= self.span_max && self.wide.is_empty() {
            let (delims, shift) = fields.delimiters();
            // Delimiter `d` is at `base + d - shift` of `data`, which is at
            // most `end` and so within `u32`: the sum is right in wrapping
            // `u32` arithmetic whatever `shift` is.
            let off = (base as u32).wrapping_sub(shift as u32);
            self.starts.push(base as u32);
            fill_spans(&mut self.starts, delims, off.wrapping_add(1));
            fill_spans(&mut self.ends, delims, off);
            self.ends.push(end as u32);
        } else {
            for f in fields.clone() {
                self.push_span(base + f.start, base + f.end);
            }
        }
    }

    /// For [`Batch::push_regular`] with `joins`: marks the record `row`,
    /// whose unescaped bytes are `rec`, for [`decode_then_parse`] when it
    /// had doubled quotes (`rec` is its copy), its bytes are not UTF-8 and
    /// one of its fields that is not ASCII holds the quote byte.
    fn mark_joined(&mut self, row: &SelectedRow<'_>, rec: &[u8], quote: Option<u8>) {
        let Some(raw) = row.raw_fields().map(|f| f.record()) else {
            return;
        };
        // Cheapest first: no copy (then no field was unescaped), an ASCII
        // copy (no field past ASCII), UTF-8 bytes.
        if raw.as_ptr() == rec.as_ptr() || rec.is_ascii() || simdutf8::basic::from_utf8(raw).is_ok()
        {
            return;
        }
        let joined = row.iter().any(|f| !f.is_ascii() && quote.is_some_and(|q| f.contains(&q)));
        if joined {
            let at = self.raw.len();
            self.raw.extend_from_slice(raw);
            self.reparse.push((self.rows.len(), at..self.raw.len()));
        }
    }

    /// Removes the last row loaded (not yet prepared); its position.
    fn drop_last_row(&mut self) -> Option<Position> {
        let (_, pos) = self.rows.pop()?;
        self.lines.pop();
        let fields = self.rows.last().map_or(0, |r| r.0);
        self.starts.truncate(fields);
        self.ends.truncate(fields);
        self.wide.truncate(fields);
        // What the rows left need of `data` (rare: no need to be quick).
        self.data.truncate((0..fields).map(|f| self.span(f).1).max().unwrap_or(0));
        self.numeric.truncate(fields.min(self.numeric.len()));
        if self.reparse.last().is_some_and(|r| r.0 == self.rows.len()) {
            let (_, raw) = self.reparse.pop().expect("checked");
            self.raw.truncate(raw.start);
        }
        Some(pos)
    }

    /// [`Batch::load`] (of `size`) on a read-ahead thread, then [`Batch::prepare`]
    /// until `defer` says that the thread that takes the batch waits for
    /// it: that thread prepares the rest, so that between a scanning
    /// thread and a calling thread that makes objects, whichever is ahead
    /// decodes. With `late`, [`Batch::prepare_late`] instead: the thread
    /// that takes the batch decodes every field past ASCII.
    pub(crate) fn load_for(
        &mut self,
        rdr: &mut HeldReader,
        nonnumeric: bool,
        joins: bool,
        defer: &AtomicBool,
        late: bool,
        size: BatchSize,
    ) -> Result<bool, CoreError> {
        let end = self.load(rdr, nonnumeric, joins, size);
        if late {
            self.prepare_late();
        } else {
            self.prepare_until(Some(defer));
        }
        end
    }

    /// Decodes every field that is not ASCII into code units of its final
    /// kind, so that making its `str` under the GIL is a copy. Once.
    pub(crate) fn prepare(&mut self) {
        self.prepare_until(None);
    }

    /// In place of [`Batch::prepare`] where the thread that makes the
    /// objects is the one that loaded the batch: nothing is decoded ahead;
    /// each field that is not ASCII is decoded as its `str` is made (into
    /// a small scratch buffer, from bytes still in this core's cache, with
    /// no batch-wide store of code units written and read back).
    pub(crate) fn prepare_late(&mut self) {
        if self.prepared {
            return;
        }
        self.late = !self.data.is_ascii();
        self.prepared = true;
    }

    /// Whether every field of the batch is ASCII, as prepared (every
    /// field's object a copy of its bytes).
    pub(crate) fn all_ascii(&self) -> bool {
        self.forms.is_empty() && !self.late
    }

    /// [`Batch::prepare`], stopping early once `stop` is set (checked
    /// before a row once [`PREPARE_STEP`] fields went by since the last
    /// check); a later call goes on with the next row.
    fn prepare_until(&mut self, stop: Option<&AtomicBool>) {
        if self.prepared {
            return;
        }
        if self.row_forms.is_empty() {
            if self.data.is_ascii() {
                self.prepared = true;
                return;
            }
            if u32::try_from(self.ends.len()).is_err() {
                // Field indices past `u32` (a row of billions of fields):
                // decoded as their objects are made instead.
                self.late = true;
                self.prepared = true;
                return;
            }
            self.row_forms.push(0);
        }
        debug_assert_eq!(self.rows.last().map_or(0, |r| r.0), self.ends.len());
        let (mut flagged, mut kinds) =
            (std::mem::take(&mut self.flagged), std::mem::take(&mut self.kinds));
        let mut r = self.row_forms.len() - 1;
        while r < self.rows.len() {
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                break;
            }
            // Rows `r..q`: [`PREPARE_STEP`] fields or more (or the rest).
            let f0 = if r == 0 { 0 } else { self.rows[r - 1].0 };
            let q = r + self.rows[r..].partition_point(|row| row.0 < f0 + PREPARE_STEP);
            let q = (q + 1).min(self.rows.len());
            let f1 = self.rows[q - 1].0;
            flagged.clear();
            kinds.clear();
            if self.wide.is_empty() {
                let spans = (&self.starts[f0..f1], &self.ends[f0..f1]);
                // `f0` fits: `ends.len()` does (checked above).
                non_ascii_fields(&self.data, spans, f0 as u32, (&mut flagged, &mut kinds));
            } else {
                for g in f0..f1 {
                    let (s, e) = self.span(g);
                    let b = &self.data[s..e];
                    if !is_ascii_field(b) {
                        flagged.push(g as u32);
                        kinds.push(byte_kind(max_byte(b)));
                    }
                }
            }
            let mut k = self.forms.len();
            for (&g, &kind) in flagged.iter().zip(&kinds) {
                let form = self.decode_field(g as usize, kind);
                self.forms.push((g, form));
            }
            for row in r..q {
                let end = self.rows[row].0;
                while self.forms.get(k).is_some_and(|e| (e.0 as usize) < end) {
                    k += 1;
                }
                // As many entries as fields at most: this fits too.
                self.row_forms.push(k as u32);
            }
            r = q;
        }
        (self.flagged, self.kinds) = (flagged, kinds);
        self.prepared = r == self.rows.len();
    }

    /// How row `r`'s fields that are not ASCII were prepared (empty for a
    /// batch prepared late, or all ASCII).
    #[inline(always)]
    fn row_forms(&self, r: usize) -> &[(u32, Form)] {
        match (self.row_forms.get(r), self.row_forms.get(r + 1)) {
            (Some(&a), Some(&b)) => &self.forms[a as usize..b as usize],
            _ => &[],
        }
    }

    /// How field `f` of row `r` was prepared: `None` for an ASCII field,
    /// or a batch prepared late.
    #[inline]
    fn form(&self, r: usize, f: usize) -> Option<Form> {
        if self.forms.is_empty() {
            return None;
        }
        let row = self.row_forms(r);
        row.binary_search_by_key(&f, |e| e.0 as usize).ok().map(|k| row[k].1)
    }

    /// How [`Batch::prepare_until`] prepares field `f`, which is not
    /// ASCII: its code units decoded into the vector of their `kind` (see
    /// [`non_ascii_fields`]).
    #[inline(always)]
    fn decode_field(&mut self, f: usize, kind: u8) -> Form {
        let (start, end) = self.span(f);
        let b = &self.data[start..end];
        let max = self.span_max;
        // Strict UTF-8 with no byte past 0xC3 has only characters below
        // U+0100 (UCS-1), and one with a byte past 0xC3 but none past
        // 0xEF has one at or past U+0100 and none past U+FFFF (UCS-2): the
        // largest byte picks the decoder, which writes the kind of the
        // `str` at once. (Units that end past `max` are dropped again.)
        let form = match kind {
            0 => {
                let at = self.ucs1.len();
                let units = decode_latin1(b, &mut self.ucs1).and_then(|n| units_at(at, n, max));
                units.map(|(at, len)| Form::Ucs1 { at, len }).ok_or(Trim::Ucs1(at))
            }
            1 => {
                let at = self.ucs2.len();
                let units = decode_bmp(b, &mut self.ucs2).and_then(|(n, _)| units_at(at, n, max));
                units.map(|(at, len)| Form::Ucs2 { at, len }).ok_or(Trim::Ucs2(at))
            }
            // A byte past 0xEF: a character past U+FFFF (UCS-4).
            _ => {
                let at = self.ucs4.len();
                let n = decode_ucs4(b, &mut self.ucs4).or_else(|| {
                    let n = char_count(b);
                    decode_utf8_append(b, n, &mut self.ucs4).then_some(n)
                });
                let units = n.and_then(|n| units_at(at, n, max));
                units.map(|(at, len)| Form::Ucs4 { at, len }).ok_or(Trim::Ucs4(at))
            }
        };
        form.unwrap_or_else(|trim| {
            match trim {
                Trim::Ucs1(at) => self.ucs1.truncate(at),
                Trim::Ucs2(at) => self.ucs2.truncate(at),
                Trim::Ucs4(at) => self.ucs4.truncate(at),
            }
            Form::Utf8
        })
    }

    /// A field whose bytes are `b`, prepared as `form` (see
    /// [`Batch::form`]).
    fn text<'a>(&'a self, form: Option<Form>, b: &'a [u8]) -> Text<'a> {
        match form {
            None if self.late => Text::Utf8(b),
            None => Text::Ascii(b),
            Some(Form::Ucs1 { at, len }) => Text::Ucs1(units(&self.ucs1, at, len)),
            Some(Form::Ucs2 { at, len }) => Text::Ucs2(units(&self.ucs2, at, len)),
            Some(Form::Ucs4 { at, len }) => Text::Ucs4(units(&self.ucs4, at, len)),
            Some(Form::Utf8) => Text::Utf8(b),
        }
    }

    /// Field `f` of the batch, field `i` of its row `r` (at `pos`), as a
    /// Python object.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn field<'py>(
        &self,
        py: Python<'py>,
        (r, f): (usize, usize),
        i: usize,
        pos: Position,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (start, end) = self.span(f);
        let b = &self.data[start..end];
        let form = self.form(r, f);
        let s = match form {
            None if strs.cache.is_none() && (!self.late || is_ascii_field(b)) => {
                strs.ascii(py, &self.data, start, end, i)?
            }
            _ => strs.make(py, b, self.text(form, b), i, &|| position_text(name, pos, i))?,
        };
        if nonnumeric && self.numeric[f] {
            to_float(s)
        } else {
            Ok(s)
        }
    }

    /// The bytes of row `r` if it is to be decoded first.
    fn reparsed(&self, r: usize) -> Option<&[u8]> {
        if self.reparse.is_empty() {
            return None;
        }
        let k = self.reparse.binary_search_by_key(&r, |(i, _)| *i).ok()?;
        Some(&self.raw[self.reparse[k].1.clone()])
    }

    /// The fields of row `r`: their indices in the batch, and its position.
    pub(crate) fn row_fields(&self, r: usize) -> (std::ops::Range<usize>, Position) {
        let first = if r == 0 { 0 } else { self.rows[r - 1].0 };
        let (end, pos) = self.rows[r];
        (first..end, pos)
    }

    /// Row `r` as a Python list.
    pub(crate) fn row_list<'py>(
        &self,
        py: Python<'py>,
        r: usize,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (fields, pos) = self.row_fields(r);
        if let Some(raw) = self.reparsed(r) {
            return decode_then_parse(py, raw, strs, name, pos);
        }
        let first = fields.start;
        strs.columns(fields.len());
        if strs.cache.is_none() && !nonnumeric && self.wide.is_empty() {
            // Nothing to decide per field but its text: walk the spans.
            // (Written out here rather than through `Batch::field`, which
            // costs more instructions per field.)
            let ends = &self.ends[fields.clone()];
            // As long as `ends`, which lets the compiler drop the bounds
            // checks below.
            let starts = &self.starts[fields][..ends.len()];
            let data = &self.data[..];
            if self.late {
                // Decoded here, field by field.
                return build_list_raw(py, ends.len(), |i| {
                    let (start, end) = (starts[i] as usize, ends[i] as usize);
                    let b = &data[start..end];
                    if is_ascii_field(b) {
                        return strs.ascii_raw(py, data, start, end, i);
                    }
                    let at = || position_text(name, pos, i);
                    strs.wide_raw(py, b, None, i, &at)
                });
            }
            let forms = self.row_forms(r);
            if forms.is_empty() {
                // An ASCII row: every field is a copy.
                return strs.ascii_row(py, data, starts, ends);
            }
            // The row's entries in `forms`, in field order: the next one.
            let mut next = 0;
            return build_list_raw(py, ends.len(), |i| {
                let (start, end) = (starts[i] as usize, ends[i] as usize);
                let form = match forms.get(next) {
                    Some(&(g, form)) if g as usize == first + i => {
                        next += 1;
                        form
                    }
                    _ => return strs.ascii_raw(py, data, start, end, i),
                };
                match form {
                    // Decoded already: a copy of the units (the path of
                    // `make_raw` for them, with no `PyResult` per field).
                    Form::Ucs1 { at, len } if end - start > WIDE_MAX => {
                        units_raw(py, units(&self.ucs1, at, len), 0xFF)
                    }
                    Form::Ucs2 { at, len } if end - start > WIDE_MAX => {
                        units_raw(py, units(&self.ucs2, at, len), 0xFFFF)
                    }
                    // Short: through the short-string cache.
                    Form::Ucs1 { at, len } => {
                        let u = Some(Text::Ucs1(units(&self.ucs1, at, len)));
                        strs.wide_raw(py, &data[start..end], u, i, &|| position_text(name, pos, i))
                    }
                    Form::Ucs2 { at, len } => {
                        let u = Some(Text::Ucs2(units(&self.ucs2, at, len)));
                        strs.wide_raw(py, &data[start..end], u, i, &|| position_text(name, pos, i))
                    }
                    Form::Ucs4 { at, len } => units_raw(py, units(&self.ucs4, at, len), 0x10_FFFF),
                    _ => {
                        let b = &data[start..end];
                        let at = || position_text(name, pos, i);
                        strs.make_raw(py, b, self.text(Some(form), b), i, &at)
                    }
                }
            });
        }
        build_list(py, fields.len(), |i| {
            self.field(py, (r, first + i), i, pos, nonnumeric, strs, name)
        })
    }

    /// Row `r`'s fields as Python objects, in `items` (cleared first).
    pub(crate) fn row_items<'py>(
        &self,
        py: Python<'py>,
        r: usize,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
        items: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        items.clear();
        let (fields, pos) = self.row_fields(r);
        if let Some(raw) = self.reparsed(r) {
            items.extend(decode_then_parse(py, raw, strs, name, pos)?.iter());
            return Ok(());
        }
        strs.columns(fields.len());
        if self.all_ascii() && strs.cache.is_none() && !nonnumeric {
            // An ASCII batch: every field is a copy.
            for (i, f) in fields.enumerate() {
                let (start, end) = self.span(f);
                items.push(strs.ascii(py, &self.data, start, end, i)?);
            }
            return Ok(());
        }
        for (i, f) in fields.enumerate() {
            items.push(self.field(py, (r, f), i, pos, nonnumeric, strs, name)?);
        }
        Ok(())
    }
}
