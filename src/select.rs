//! Reading chosen columns, many records at a time: [`Reader::read_batch`].
//!
//! [`Reader::read_row`] builds a span for every field of every record. A
//! program that keeps a few columns (`fastcsv select`, a projection before
//! a columnar build) wastes most of that work. [`Reader::read_batch`] runs
//! the block scanner over as many regular records as it can in one call and
//! keeps only the spans of the chosen columns; the fields in between are
//! skipped over as bits of a mask. Records the block scanner cannot prove
//! regular come one at a time through the state machine, so the rows,
//! errors and positions are exactly those of [`Reader::read_row`].
//!
//! [`Reader::read_batch`]: crate::Reader::read_batch
//! [`Reader::read_row`]: crate::Reader::read_row

use crate::error::Position;
use crate::scan::Selected;

/// Records per batch: enough to amortise the call, small enough that a
/// batch's spans stay in the L1/L2 cache.
pub(crate) const BATCH_RECORDS: usize = 1024;

/// The columns to keep, and the memory a batch is built in (reuse it from
/// one [`Reader::read_batch`](crate::Reader::read_batch) call to the next).
///
/// ```
/// let sel = fastcsv::Selection::new([2, 0, 2]);
/// assert_eq!(sel.columns(), &[2, 0, 2]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The columns as asked for (any order, repeats allowed).
    cols: Vec<usize>,
    /// The same columns, ascending, once each.
    pub(crate) uniq: Vec<usize>,
    /// For each asked-for column, its index in `uniq`.
    order: Vec<usize>,
    /// Every field of every record (see [`Selection::all`]).
    pub(crate) all: bool,
    pub(crate) out: Selected,
    /// Absolute offset of the batch input's byte 0.
    pub(crate) input_base: u64,
    /// Record index of the batch's first record.
    pub(crate) first_record: u64,
}

impl Selection {
    /// Keeps columns `cols` (0-based), in this order; a column may appear
    /// more than once. An empty selection keeps no field (but still
    /// reports records, their positions and [`SelectedRow::raw`]).
    pub fn new(cols: impl IntoIterator<Item = usize>) -> Selection {
        let cols: Vec<usize> = cols.into_iter().collect();
        let mut uniq = cols.clone();
        uniq.sort_unstable();
        uniq.dedup();
        let order = cols.iter().map(|c| uniq.binary_search(c).unwrap_or(0)).collect();
        Selection { cols, uniq, order, ..Selection::default() }
    }

    /// Keeps every field. Records whose bytes are exactly their fields
    /// joined by the delimiter (no quote byte: see [`SelectedRow::raw`])
    /// are taken by the block scanner without building any span, and their
    /// fields are split from those bytes when asked for; every other
    /// record comes alone, with all its fields. Made for copying or
    /// converting whole records (`fastcsv cat`).
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n1,2\n\"a\"\"b\",3\n");
    /// let mut sel = Selection::all();
    /// let mut rows = Vec::new();
    /// while let Some(batch) = rdr.read_batch(&mut sel).unwrap() {
    ///     for r in batch.iter() {
    ///         rows.push((r.iter().collect::<Vec<_>>().join(&b'|'), r.raw().is_some()));
    ///     }
    /// }
    /// assert_eq!(rows, [(b"1|2".to_vec(), true), (b"a\"b|3".to_vec(), false)]);
    /// ```
    pub fn all() -> Selection {
        Selection { all: true, ..Selection::default() }
    }

    /// The columns kept, as given to [`Selection::new`] (empty for
    /// [`Selection::all`]).
    pub fn columns(&self) -> &[usize] {
        &self.cols
    }

    pub(crate) fn clear(&mut self) {
        self.out.spans.clear();
        self.out.records.clear();
        self.out.scratch.clear();
    }
}

/// Records read by [`Reader::read_batch`](crate::Reader::read_batch),
/// borrowing the input like [`Row`](crate::Row) does. Valid until the next
/// call to the reader.
///
/// ```
/// use fastcsv::{Reader, Selection};
/// let mut rdr = Reader::from_slice(b"a,b,c\n1,2,3\n4,\"5\",6\n");
/// let mut sel = Selection::new([2, 1]);
/// let mut out = Vec::new();
/// while let Some(batch) = rdr.read_batch(&mut sel).unwrap() {
///     for row in batch.iter() {
///         out.push(row.iter().collect::<Vec<_>>().concat());
///     }
/// }
/// assert_eq!(out, [b"32".to_vec(), b"65".to_vec()]);
/// ```
#[derive(Clone, Copy)]
pub struct Batch<'r> {
    pub(crate) input: &'r [u8],
    pub(crate) scratch: &'r [u8],
    pub(crate) sel: &'r Selection,
    pub(crate) delimiter: u8,
}

impl<'r> Batch<'r> {
    /// Number of records (at least 1).
    pub fn len(&self) -> usize {
        self.sel.out.records.len()
    }

    /// Always false: a batch holds at least one record.
    pub fn is_empty(&self) -> bool {
        self.sel.out.records.is_empty()
    }

    /// Record `i` (panics if `i >= len()`).
    pub fn row(&self, i: usize) -> SelectedRow<'r> {
        assert!(i < self.len(), "record {i} of a batch of {}", self.len());
        SelectedRow { batch: *self, i }
    }

    /// From record `i` on, the records whose [`SelectedRow::raw_line`]
    /// ends in a single LF, as long as they follow each other: their lines
    /// as one slice of the input, and how many there are (0 and an empty
    /// slice when record `i` is not one). A CSV writer with the same
    /// delimiter, quote `"` and LF line ends can copy such a run whole.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n1,2\n3,4\n5,6\r\n7,8\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// assert_eq!(b.raw_run(0), (2, &b"1,2\n3,4\n"[..]));
    /// assert_eq!(b.raw_run(2), (0, &b""[..]));
    /// assert_eq!(b.raw_run(3), (1, &b"7,8\n"[..]));
    /// ```
    pub fn raw_run(&self, i: usize) -> (usize, &'r [u8]) {
        let recs = &self.sel.out.records;
        let ok = |k: usize| recs.get(k).is_some_and(|r| r.plain && r.lf);
        if !ok(i) {
            return (0, &[]);
        }
        let mut j = i + 1;
        while ok(j) && recs[j].start == recs[j - 1].after {
            j += 1;
        }
        (j - i, &self.input[recs[i].start..recs[j - 1].after])
    }

    /// The records in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = SelectedRow<'r>> + 'r {
        let b = *self;
        (0..b.len()).map(move |i| SelectedRow { batch: b, i })
    }
}

/// One record of a [`Batch`]: its selected fields, in the order of the
/// [`Selection`].
#[derive(Clone, Copy)]
pub struct SelectedRow<'r> {
    batch: Batch<'r>,
    i: usize,
}

impl<'r> SelectedRow<'r> {
    /// The `j`-th selected field; empty when the record has no such column
    /// (a short row with `flexible`). Panics if `j` is not below
    /// [`SelectedRow::len`].
    ///
    /// ```
    /// use fastcsv::{Dialect, Reader, Selection};
    /// let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    /// let mut rdr = Reader::builder().dialect(d).from_slice(b"1,2,3\n4\n");
    /// let mut sel = Selection::new([1]);
    /// let batch = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// assert_eq!(batch.row(0).get(0), b"2");
    /// assert_eq!(batch.row(1).get(0), b"");
    /// assert_eq!(batch.row(1).field_count(), 1);
    /// ```
    #[inline(always)]
    pub fn get(&self, j: usize) -> &'r [u8] {
        let sel = self.batch.sel;
        if sel.all {
            return self.get_whole(j);
        }
        let k = sel.order[j];
        let s = sel.out.spans[self.i * sel.uniq.len() + k];
        s.bytes(self.batch.input, self.batch.scratch)
    }

    /// [`SelectedRow::get`] with [`Selection::all`].
    #[inline(never)]
    fn get_whole(&self, j: usize) -> &'r [u8] {
        assert!(j < self.len(), "field {j} of a record of {}", self.len());
        match self.spans_at() {
            Some(at) => {
                self.batch.sel.out.spans[at + j].bytes(self.batch.input, self.batch.scratch)
            }
            None => self.split_raw().nth(j).unwrap_or_default(),
        }
    }

    /// With [`Selection::all`]: where the record's spans start, if it has
    /// them (records taken as raw bytes have none).
    fn spans_at(&self) -> Option<usize> {
        let at = self.batch.sel.out.records[self.i].spans_at;
        (at != usize::MAX).then_some(at)
    }

    /// The fields of a record taken as raw bytes.
    fn split_raw(&self) -> impl Iterator<Item = &'r [u8]> + 'r {
        let r = &self.batch.sel.out.records[self.i];
        let d = self.batch.delimiter;
        self.batch.input[r.start..r.end].split(move |&c| c == d)
    }

    /// The selected fields in order.
    pub fn iter(&self) -> impl Iterator<Item = &'r [u8]> + 'r {
        let r = *self;
        let split = (r.batch.sel.all && r.spans_at().is_none()).then(|| r.split_raw());
        let by_index = match split {
            Some(_) => 0..0,
            None => 0..r.len(),
        };
        split.into_iter().flatten().chain(by_index.map(move |j| r.get(j)))
    }

    /// Number of selected columns (with [`Selection::all`], the record's
    /// field count).
    pub fn len(&self) -> usize {
        if self.batch.sel.all {
            self.field_count()
        } else {
            self.batch.sel.cols.len()
        }
    }

    /// True when [`SelectedRow::len`] is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of fields the record has (all of them, not just the selected
    /// ones; 0 for an empty line kept with `skip_empty_lines(false)`).
    pub fn field_count(&self) -> usize {
        self.batch.sel.out.records[self.i].fields
    }

    /// Where the record starts.
    pub fn position(&self) -> Position {
        let r = &self.batch.sel.out.records[self.i];
        Position {
            byte: self.batch.sel.input_base + r.start as u64,
            line: r.line,
            record: self.batch.sel.first_record + self.i as u64,
        }
    }

    /// The record's bytes without its terminator, when they are exactly
    /// its fields joined by the delimiter (no quote byte, no escape, no
    /// trimming or filtering touched them): a writer can then copy the
    /// record whole. `None` otherwise, or when unknown.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n1,2\r\n\"3\",4\n");
    /// let mut sel = Selection::new([]);
    /// let mut raws = Vec::new();
    /// while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
    ///     raws.extend(b.iter().map(|r| r.raw().map(<[u8]>::to_vec)));
    /// }
    /// assert_eq!(raws, [Some(b"1,2".to_vec()), None]);
    /// ```
    pub fn raw(&self) -> Option<&'r [u8]> {
        let r = &self.batch.sel.out.records[self.i];
        r.plain.then(|| &self.batch.input[r.start..r.end])
    }

    /// [`SelectedRow::raw`] with the record's terminator (CR, LF, CRLF or
    /// the dialect's byte; none for a last record without one). The lines
    /// of consecutive records are adjacent slices of the input, so a
    /// writer can join them into one write.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n1,2\r\n3,4\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// assert_eq!(b.row(0).raw_line(), Some(&b"1,2\r\n"[..]));
    /// assert_eq!(b.row(1).raw_line(), Some(&b"3,4\n"[..]));
    /// ```
    pub fn raw_line(&self) -> Option<&'r [u8]> {
        let r = &self.batch.sel.out.records[self.i];
        r.plain.then(|| &self.batch.input[r.start..r.after])
    }
}
