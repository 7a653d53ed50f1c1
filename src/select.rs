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
use crate::scan::{has_byte_compress, ColMasks, Selected, SelectedRecord, NO_COPY};

mod pieces;
use pieces::{kept_any, Slow};
pub use pieces::{CsvPieces, FieldIter, RawFields};

/// Records per batch: enough to amortise the call, small enough that a
/// batch's spans stay in the L1/L2 cache.
pub(crate) const BATCH_RECORDS: usize = 1024;

/// The most input bytes a batch of [`Selection::csv`] scans: `cat` copies
/// each batch whole into its output buffer right after, so that input and
/// output stay in the core's cache (1024 records of long text can
/// outgrow it).
/// A record longer than this goes to the state machine.
pub(crate) const BATCH_BYTES: usize = 128 << 10;

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
    /// With `all`: records the block scanner takes keep the quotes a CSV
    /// writer drops instead of their delimiter offsets
    /// ([`Selection::csv`]).
    pub(crate) csv: bool,
    /// With `all`: records the block scanner takes keep their delimiter
    /// offsets but are not unescaped ([`Selection::raw`]).
    pub(crate) raw: bool,
    /// Records the block scanner takes keep which bytes the CSV of the
    /// columns keeps instead of their spans ([`Selection::csv_columns`]).
    pub(crate) csv_cols: Option<ColMasks>,
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

    /// Keeps every field: the fastest way to visit all of them. The block
    /// scanner takes regular records (see `scan::block`) without building
    /// any span: it keeps the offsets of their delimiters, and
    /// [`SelectedRow::iter`] walks those (quotes around a field are
    /// stripped then; a record holding doubled quotes is copied unescaped
    /// when the batch is built, with the offsets of its delimiters in the
    /// copy, and read from there the same way). Records it cannot
    /// prove regular come alone, with all their fields, from the state
    /// machine. [`SelectedRow::raw`] tells which records can be copied
    /// whole (`fastcsv cat`).
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

    /// Every record, to be written again as CSV with the input's delimiter
    /// and quote byte, quoting a field only when it holds the delimiter,
    /// the quote or a line-end byte (as `fastcsv cat` and Python's
    /// `csv.writer` do). A record the block scanner takes is plain RFC
    /// 4180 (see [`SelectedRow::raw_fields`]), so that CSV is its input
    /// bytes without the quotes of the quoted fields that need none: the
    /// scanner finds those from its bit masks, and
    /// [`SelectedRow::csv_pieces`] gives the bytes in between. Nothing
    /// else is kept for such a record: it has no fields
    /// ([`SelectedRow::len`] is 0). Records the block scanner cannot take
    /// come, as with [`Selection::all`], alone with all their fields.
    ///
    /// The pieces are right for a dialect whose record terminator is
    /// [`Terminator::Any`](crate::Terminator::Any) (CR and LF are then
    /// the line-end bytes a field must be quoted for).
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2,h3\n\"a\",\"b,c\",\"d\"\"e\"\n1,\"\"\"\",x\n");
    /// let mut sel = Selection::csv();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let csv: Vec<Vec<u8>> = b.iter().map(|r| r.csv_pieces().unwrap().collect::<Vec<_>>().concat()).collect();
    /// assert_eq!(csv, [&b"a,\"b,c\",\"d\"\"e\""[..], b"1,\"\"\"\",x"]);
    /// assert_eq!(b.row(0).len(), 0);
    /// ```
    pub fn csv() -> Selection {
        Selection { all: true, csv: true, ..Selection::default() }
    }

    /// Every record, for a program that reads the fields as they are in
    /// the input ([`SelectedRow::raw_fields`]): [`Selection::all`] without
    /// the unescaping of the fields that hold doubled quotes. A record the
    /// block scanner takes has no fields otherwise ([`SelectedRow::len`]
    /// is 0); records it cannot take come, as with [`Selection::all`],
    /// alone with all their fields.
    ///
    /// ```
    /// use fastcsv::{Dialect, Reader, Selection};
    /// let d = Dialect::builder().strict(false).build().unwrap();
    /// let input = b"h1,h2\n\"a\"\"b\",c\n\"x\" y,z\n";
    /// let mut rdr = Reader::builder().dialect(d).from_slice(input);
    /// let mut sel = Selection::raw();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let f = b.row(0).raw_fields().unwrap();
    /// let rec = f.record();
    /// assert_eq!(f.map(|r| &rec[r]).collect::<Vec<_>>(), [&b"\"a\"\"b\""[..], b"c"]);
    /// assert_eq!(b.row(0).len(), 0);
    /// // A record the state machine parsed (text after a closing quote).
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// assert!(b.row(0).raw_fields().is_none());
    /// assert_eq!(b.row(0).iter().collect::<Vec<_>>(), [&b"x y"[..], b"z"]);
    /// ```
    pub fn raw() -> Selection {
        Selection { all: true, raw: true, ..Selection::default() }
    }

    /// Columns `cols` of every record, to be written again as CSV with the
    /// input's delimiter and quote byte, quoting a field only when it
    /// needs it: [`Selection::csv`] for some columns, as `fastcsv select`
    /// writes them. A record the block scanner takes is plain RFC 4180, so
    /// those columns' CSV is some of its bytes: the selected fields with
    /// the delimiters between them, less the quotes of the quoted fields
    /// that need none. The scanner marks those bytes in a bit mask, 64
    /// bytes to a word, from where each field's delimiters fall in its
    /// masks (no field is looked at), and [`Batch::csv_run`] and
    /// [`SelectedRow::csv_pieces`] give them; such a record has no fields
    /// otherwise ([`SelectedRow::len`] is 0), and whether it holds a quote
    /// byte is not kept ([`SelectedRow::raw`] is `None`). A record without every
    /// selected column (with `flexible`) is not in a run: its pieces end
    /// with a delimiter for each column missing, whose field is empty. The
    /// other records come, as with [`Selection::new`], with the selected
    /// fields: those the state machine parses and those ending in a lone
    /// CR.
    ///
    /// The columns must be ascending, distinct and below 63, and the
    /// dialect's terminator [`Terminator::Any`](crate::Terminator::Any)
    /// (records with a CRLF give their line with an LF); otherwise this is
    /// [`Selection::new`] (no record has CSV pieces).
    ///
    /// ```
    /// use fastcsv::{Dialect, Reader, Selection};
    /// let input = b"a,b,c\n1,\"x,y\",\"z\"\r\n2,\"q\",r\n";
    /// let mut rdr = Reader::from_slice(input);
    /// let mut sel = Selection::csv_columns([1, 2]);
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let (n, run) = b.csv_run(0);
    /// assert_eq!((n, run.collect::<Vec<_>>().concat()), (2, b"\"x,y\",z\nq,r\n".to_vec()));
    /// assert_eq!(b.row(1).len(), 0);
    /// // Records without every selected column: empty fields.
    /// let d = Dialect::builder().flexible(true).build().unwrap();
    /// let input = b"a,b,c\n1,\"x\"\n1\n\"2\",\"\"\"\"\n";
    /// let mut rdr = Reader::builder().dialect(d).from_slice(input);
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// assert_eq!(b.csv_run(0).0, 0);
    /// let csv = |i: usize| b.row(i).csv_pieces().unwrap().collect::<Vec<_>>().concat();
    /// assert_eq!([csv(0), csv(1), csv(2)], [&b"x,"[..], b",", b"\"\"\"\","]);
    /// ```
    pub fn csv_columns(cols: impl IntoIterator<Item = usize>) -> Selection {
        let mut sel = Selection::new(cols);
        sel.csv_cols = ColMasks::new(&sel.cols);
        sel
    }

    /// The columns `cols` for writing as CSV, in the mode that does it
    /// fastest on this CPU: [`Selection::csv_columns`] where runs of its
    /// records are copied with a byte compress (AVX-512 VBMI2), 64 input
    /// bytes a step; otherwise [`Selection::new`], since copying each run
    /// of kept bytes in turn costs more than that scan saves. Whichever it
    /// is, [`Selection::has_csv_columns`] says.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut sel = Selection::csv_output([0, 2]);
    /// let fast = fastcsv::scan::simd_level() == "avx512vbmi2+pclmulqdq";
    /// assert_eq!(sel.has_csv_columns(), fast);
    /// let mut rdr = Reader::from_slice(b"a,b,c\n1,2,3\n");
    /// let in_order = sel.has_csv_columns();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// if in_order {
    ///     assert_eq!(b.csv_run(0).1.collect::<Vec<_>>().concat(), b"1,3\n");
    /// } else {
    ///     assert_eq!((b.row(0).get(0), b.row(0).get(1)), (&b"1"[..], &b"3"[..]));
    /// }
    /// ```
    pub fn csv_output(cols: impl IntoIterator<Item = usize>) -> Selection {
        if has_byte_compress() {
            Selection::csv_columns(cols)
        } else {
            Selection::new(cols)
        }
    }

    /// True for a [`Selection::csv_columns`] whose columns it takes (see
    /// there).
    ///
    /// ```
    /// use fastcsv::Selection;
    /// assert!(Selection::csv_columns([0, 4]).has_csv_columns());
    /// assert!(!Selection::csv_columns([4, 0]).has_csv_columns());
    /// assert!(!Selection::new([0, 4]).has_csv_columns());
    /// ```
    pub fn has_csv_columns(&self) -> bool {
        self.csv_cols.is_some()
    }

    /// With `all`: records the block scanner takes have no parsed fields
    /// ([`Selection::csv`], [`Selection::raw`]).
    fn fieldless(&self) -> bool {
        self.csv || self.raw
    }

    /// Every field, and the records the block scanner takes keep their
    /// delimiter offsets (what [`Batch`] records once per batch).
    pub(crate) fn ends_all(&self) -> bool {
        self.all && !self.fieldless()
    }

    /// The columns kept, as given to [`Selection::new`] (empty for
    /// [`Selection::all`], [`Selection::csv`] and [`Selection::raw`]).
    pub fn columns(&self) -> &[usize] {
        &self.cols
    }

    pub(crate) fn clear(&mut self) {
        self.out.spans.clear();
        self.out.records.clear();
        self.out.scratch.clear();
        self.out.ends.clear();
        self.out.copies.clear();
        self.out.drops.clear();
        self.out.keep.clear();
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
    /// The quote byte, or -1 (none).
    pub(crate) quote: i32,
    /// The delimiter.
    pub(crate) delimiter: u8,
    /// Records in the batch: the first `len` of `sel.out.records` (fewer
    /// when a parallel read cuts a batch at its chunk's end).
    pub(crate) len: usize,
    /// [`Selection::ends_all`]: the records the block scanner took
    /// have their delimiter offsets (tested once per row by
    /// [`SelectedRow::iter`]).
    pub(crate) ends_all: bool,
}

impl<'r> Batch<'r> {
    /// Number of records (at least 1).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a batch holds at least one record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `n` records only.
    pub(crate) fn truncated(mut self, n: usize) -> Batch<'r> {
        self.len = self.len.min(n);
        self
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
    /// delimiter, quote `"` and LF line ends can copy such a run whole
    /// (see also [`Batch::csv_run`]).
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
        let recs = &self.sel.out.records[..self.len];
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

    /// With [`Selection::csv`] (for [`Selection::csv_columns`], see
    /// there): from record `i` on, the records the block
    /// scanner took whose line ends in a single LF, as long as they follow
    /// each other (except a record of one empty quoted field, which a
    /// writer quotes): how many there are, and their CSV lines
    /// ([`SelectedRow::csv_pieces`] with their LFs) as pieces of the
    /// input. A CSV writer with the input's delimiter and quote byte and LF
    /// line ends writes the pieces one after the other. 0 and no pieces
    /// when record `i` is not one, or with other selections.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n\"1\",\"a,b\"\n3,\"4\"\n5,6\r\n");
    /// let mut sel = Selection::csv();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let (n, pieces) = b.csv_run(0);
    /// assert_eq!((n, pieces.collect::<Vec<_>>().concat()), (2, b"1,\"a,b\"\n3,4\n".to_vec()));
    /// assert_eq!(b.csv_run(2).0, 0);
    /// ```
    pub fn csv_run(&self, i: usize) -> (usize, CsvPieces<'r>) {
        if self.sel.csv_cols.is_some() {
            return self.cols_run(i);
        }
        let out = &self.sel.out;
        let recs = &out.records[..self.len];
        // Some bytes left once the quotes are dropped: a record of one
        // empty quoted field has none.
        let empty = |r: &SelectedRecord| {
            r.fields == 1 && r.end - r.start == 2 && i32::from(self.input[r.start]) == self.quote
        };
        let ok = |k: usize| {
            recs.get(k)
                .is_some_and(|r| r.lf && r.spans_at == usize::MAX && r.fields > 0 && !empty(r))
        };
        if !self.sel.csv || !ok(i) {
            return (0, CsvPieces::none());
        }
        let mut j = i + 1;
        while ok(j) && recs[j].start == recs[j - 1].after {
            j += 1;
        }
        let (first, last) = (&recs[i], &recs[j - 1]);
        (j - i, out.csv_pieces(&self.input[first.start..last.after], first.start))
    }

    /// [`Batch::csv_run`] with [`Selection::csv_columns`]: every record
    /// the block scanner took ends in an LF or CRLF; those with every
    /// selected column are copied whole.
    fn cols_run(&self, i: usize) -> (usize, CsvPieces<'r>) {
        let out = &self.sel.out;
        let recs = &out.records[..self.len];
        let cols = &self.sel.cols;
        let last = cols.last().copied().unwrap_or(0);
        // One selected column, empty: a writer quotes it.
        let one = cols.len() == 1;
        let ok = |k: usize| {
            recs.get(k).is_some_and(|r| {
                r.spans_at == usize::MAX
                    && r.fields > last
                    && (!one || kept_any(&out.keep, r.start - out.ends_base, r.end - r.start))
            })
        };
        if !ok(i) {
            return (0, CsvPieces::none());
        }
        let mut j = i + 1;
        while ok(j) && recs[j].start == recs[j - 1].after {
            j += 1;
        }
        let (first, last) = (&recs[i], &recs[j - 1]);
        (
            j - i,
            CsvPieces::kept(
                &self.input[first.start..last.after],
                &out.keep,
                first.start - out.ends_base,
                (0, self.delimiter),
            ),
        )
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
        if sel.csv_cols.is_some() {
            let n = self.len();
            assert!(j < n, "field {j} of a record of {n}");
        }
        let k = sel.order[j];
        let s = sel.out.spans[self.i * sel.uniq.len() + k];
        s.bytes(self.batch.input, self.batch.scratch)
    }

    /// [`SelectedRow::get`] with [`Selection::all`]: from the record's
    /// spans, or from the two delimiter offsets around field `j`.
    #[inline]
    fn get_whole(&self, j: usize) -> &'r [u8] {
        let n = self.len();
        assert!(j < n, "field {j} of a record of {n}");
        let b = self.batch;
        if let Some(at) = self.spans_at() {
            return b.sel.out.spans[at + j].bytes(b.input, b.scratch);
        }
        let out = &b.sel.out;
        let r = &out.records[self.i];
        let (f, plain) = if r.copy != NO_COPY {
            // Its copy, unescaped: offsets from `copies_base`.
            let c = &out.copies[r.copy as usize..][..r.fields + 1];
            let a = if j == 0 { c[0] } else { c[j] + 1 } as usize;
            (&b.scratch[out.copies_base..][a..c[j + 1] as usize], false)
        } else {
            let raw = self.ends_fields();
            (&raw.record[raw.get(j).unwrap_or_default()], r.plain)
        };
        // See `FieldIter::field`.
        match f {
            [q, inner @ .., _] if !plain && i32::from(*q) == b.quote => inner,
            _ => f,
        }
    }

    /// With [`Selection::all`]: where the record's spans start, if it has
    /// them (records taken as raw bytes have none).
    fn spans_at(&self) -> Option<usize> {
        let at = self.batch.sel.out.records[self.i].spans_at;
        (at != usize::MAX).then_some(at)
    }

    /// The selected fields in order.
    ///
    /// With [`Selection::all`], walking the fields of a record taken by
    /// the block scanner costs a few instructions per field (see
    /// [`Selection::all`]); [`SelectedRow::get`] walks to its field, so
    /// prefer this iterator to visit them all.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2,h3\n1,\"a,b\",\"\"\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let fields: Vec<&[u8]> = b.row(0).iter().collect();
    /// assert_eq!(fields, [&b"1"[..], b"a,b", b""]);
    /// ```
    #[inline(always)]
    pub fn iter(&self) -> FieldIter<'r> {
        let b = self.batch;
        let slow = Slow {
            sel: b.sel,
            scratch: b.scratch,
            quote: b.quote,
            delimiter: b.delimiter,
            i: self.i,
            j: 0,
            n: 0,
            spans: false,
        };
        let out = &b.sel.out;
        let r = &out.records[self.i];
        if b.ends_all && r.spans_at == usize::MAX {
            // The input from the offsets' base on: a field is then
            // `input[start..e]` for a delimiter offset `e`, with no base
            // to add (one register fewer in the caller's loop). A record
            // with doubled quotes is read the same way from its copy,
            // unescaped.
            // Both cases worked out and one taken without a branch: in
            // quoted text, whether a record holds doubled quotes is a coin
            // toss. (The copy's entries are read at index 0 when the record
            // has none: in range or not, the same way for every row.)
            use std::hint::select_unpredictable as pick;
            let copied = r.copy != NO_COPY;
            let ci = pick(copied, r.copy as usize, 0);
            let c = out.copies.get(ci..).unwrap_or_default();
            let c_start = c.first().map_or(0, |&x| x as usize);
            let c_end = c.get(r.fields).map_or(0, |&x| x as usize);
            let start = pick(copied, c_start, r.start - out.ends_base);
            let end = pick(copied, c_end, r.end - out.ends_base);
            let (src, at) =
                pick(copied, (&out.copies[..], ci + 1), (&out.ends[..], r.ends_at as usize));
            let ends = &src[at..at + r.fields - 1];
            let input = pick(copied, &b.scratch[out.copies_base..], &b.input[out.ends_base..]);
            FieldIter {
                ends: ends.iter(),
                start,
                end,
                input,
                // A record without quote bytes has nothing to strip.
                quote: if r.plain { -1 } else { b.quote },
                slow,
            }
        } else {
            let (j, n, spans) = iter_other(b.sel, self.i);
            FieldIter {
                ends: [].iter(),
                start: 0,
                end: usize::MAX,
                input: b.input,
                quote: -1,
                slow: Slow { j, n, spans, ..slow },
            }
        }
    }

    /// With [`Selection::all`], for a record the block scanner took that
    /// holds no quote byte (see [`SelectedRow::raw`]): the input its
    /// delimiter offsets count from, the record's start and end there, and
    /// those offsets, so that its fields are the bytes between them, as
    /// [`SelectedRow::iter`] gives them (for a program that notes every
    /// field's place, as typed columns do). `None` for other records.
    #[inline(always)]
    pub(crate) fn plain_ends(&self) -> Option<(&'r [u8], usize, &'r [u32], usize)> {
        let b = self.batch;
        let out = &b.sel.out;
        let r = &out.records[self.i];
        if !(b.ends_all && r.spans_at == usize::MAX && r.plain && r.fields > 0) {
            return None;
        }
        let at = r.ends_at as usize;
        let ends = &out.ends[at..at + r.fields - 1];
        Some((&b.input[out.ends_base..], r.start - out.ends_base, ends, r.end - out.ends_base))
    }

    /// Number of selected columns (with [`Selection::all`], the record's
    /// field count).
    pub fn len(&self) -> usize {
        row_len(self.batch.sel, self.i)
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

    /// With [`Selection::all`], for a record the block scanner took (see
    /// [`crate::scan`]): its fields as they are in the input, quotes
    /// included. Such a record is plain RFC 4180: a quoted field is the
    /// quote byte, its value with each quote byte doubled, and the quote
    /// byte; an unquoted field is its value, holding no quote byte,
    /// delimiter or record terminator (CR and LF with
    /// [`Terminator::Any`](crate::Terminator::Any), else the terminator
    /// byte), and no escape, trimming or filtering applied to it. A
    /// CSV writer with the same delimiter and quote can therefore copy
    /// most of the record and only drop the quotes its own rules do not
    /// need. `None` for other records (those the state machine parsed,
    /// such as ones with lenient quoting) and other selections.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2,h3\n1,\"a,\"\"b\"\"\",\"c\"\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let f = b.row(0).raw_fields().unwrap();
    /// let rec = f.record();
    /// let raw: Vec<&[u8]> = f.map(|r| &rec[r]).collect();
    /// assert_eq!(raw, [&b"1"[..], b"\"a,\"\"b\"\"\"", b"\"c\""]);
    /// // The parsed values, for comparison.
    /// assert_eq!(b.row(0).get(1), b"a,\"b\"");
    /// ```
    #[inline]
    pub fn raw_fields(&self) -> Option<RawFields<'r>> {
        let b = self.batch;
        let fields = b.sel.out.records[self.i].fields;
        if !b.sel.all || b.sel.csv || self.spans_at().is_some() || fields == 0 {
            return None;
        }
        Some(self.ends_fields())
    }

    /// [`SelectedRow::raw_fields`] with each doubled quote made single:
    /// for a record that holds some, its unescaped copy (kept in the batch)
    /// and the delimiters' places in it; for the others, the same as
    /// `raw_fields`. A field that starts with the quote byte is then that
    /// byte, its value and that byte; any other field is its value. A
    /// caller can so take every field's value from one slice, with no
    /// copy per field. `None` where `raw_fields` is.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2,h3\n1,\"a,\"\"b\"\"\",\"c\"\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let f = b.row(0).unescaped_fields().unwrap();
    /// assert_eq!(f.record(), b"1,\"a,\"b\"\",\"c\"");
    /// let rec = f.record();
    /// let fields: Vec<&[u8]> = f.map(|r| &rec[r]).collect();
    /// assert_eq!(fields, [&b"1"[..], b"\"a,\"b\"\"", b"\"c\""]);
    /// ```
    #[inline]
    pub fn unescaped_fields(&self) -> Option<RawFields<'r>> {
        let b = self.batch;
        let out = &b.sel.out;
        let r = &out.records[self.i];
        // As `raw_fields`.
        if !b.sel.all || b.sel.csv || r.spans_at != usize::MAX || r.fields == 0 {
            return None;
        }
        if r.copy == NO_COPY {
            return Some(self.ends_fields());
        }
        // The copy's start, each delimiter in it, and its end: offsets in
        // the scratch from `copies_base`.
        let c = &out.copies[r.copy as usize..][..r.fields + 1];
        let (start, end) = (c[0] as usize, c[r.fields] as usize);
        Some(RawFields {
            record: &b.scratch[out.copies_base..][start..end],
            ends: &c[1..r.fields],
            shift: start,
            next: 0,
        })
    }

    /// With [`Selection::csv`] (for [`Selection::csv_columns`], its
    /// selected columns), for a record the block scanner took: the
    /// record (without terminator) as CSV output with the input's
    /// delimiter and quote byte, as pieces of the input to write one after
    /// the other: its bytes without the quotes that need not be there
    /// (where the pieces split, and whether some are empty, depends on the
    /// CPU). A record of one empty quoted field (`""`) gives no byte: a
    /// writer writes `""` then, since an empty line is no record. `None`
    /// for other records and selections.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n\"a\",\"b\"\n");
    /// let mut sel = Selection::csv();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let pieces: Vec<&[u8]> = b.row(0).csv_pieces().unwrap().collect();
    /// assert_eq!(pieces.concat(), b"a,b");
    /// ```
    pub fn csv_pieces(&self) -> Option<CsvPieces<'r>> {
        let b = self.batch;
        let out = &b.sel.out;
        let r = &out.records[self.i];
        if self.spans_at().is_some() || r.fields == 0 {
            return None;
        }
        if b.sel.csv_cols.is_some() {
            // Selected columns past the record's end are empty fields: a
            // delimiter before each, but where the bytes kept end with one
            // (the last field kept has its own) or start the line.
            let cols = &b.sel.cols;
            let here = cols.partition_point(|&c| c < r.fields);
            let missing = cols.len() - here;
            let extra = match here.checked_sub(1).map(|k| cols[k]) {
                None => missing.saturating_sub(1),
                Some(c) => missing - usize::from(c + 1 < r.fields && missing > 0),
            };
            return Some(CsvPieces::kept(
                &b.input[r.start..r.end],
                &out.keep,
                r.start - out.ends_base,
                (extra, b.delimiter),
            ));
        }
        if !b.sel.csv {
            return None;
        }
        Some(out.csv_pieces(&b.input[r.start..r.end], r.start))
    }

    /// [`SelectedRow::raw_fields`] of a record of [`Selection::all`] taken
    /// by the block scanner (no spans, at least one field).
    #[inline]
    fn ends_fields(&self) -> RawFields<'r> {
        let b = self.batch;
        let out = &b.sel.out;
        let r = &out.records[self.i];
        RawFields {
            record: &b.input[r.start..r.end],
            ends: &out.ends[r.ends_at as usize..r.ends_at as usize + r.fields - 1],
            shift: r.start - out.ends_base,
            next: 0,
        }
    }
}

/// For [`SelectedRow::iter`], record `i` of a batch of `sel` with spans
/// (the range of them, and true) or fields by index (`0..len`, false): out
/// of line, so that the common case stays small, and given the selection
/// and the index rather than the row, so that the caller need not keep
/// each row in memory to pass its address. (Returning the whole iterator
/// from here made the caller keep every iterator in memory.)
#[inline(never)]
fn iter_other(sel: &Selection, i: usize) -> (usize, usize, bool) {
    let at = sel.out.records[i].spans_at;
    if at != usize::MAX && sel.all {
        return (at, at + row_len(sel, i), true);
    }
    // With `Selection::csv` or `raw`, a record given as CSV pieces or
    // raw fields has none (`len` is 0).
    (0, row_len(sel, i), false)
}

/// [`SelectedRow::len`] of record `i` of a batch of `sel`.
fn row_len(sel: &Selection, i: usize) -> usize {
    let r = &sel.out.records[i];
    let spans = r.spans_at != usize::MAX;
    if sel.all {
        if sel.fieldless() && !spans {
            // A record given as CSV pieces or raw fields.
            return 0;
        }
        r.fields
    } else if sel.csv_cols.is_some() && !spans {
        // A record given as CSV pieces.
        0
    } else {
        sel.cols.len()
    }
}

impl Selected {
    /// With [`Selection::csv`]: the CSV pieces of `record`, bytes of the
    /// input from `start` on, from the words of the bytes kept or the
    /// offsets of the quotes dropped, whichever the scan wrote.
    fn csv_pieces<'r>(&'r self, record: &'r [u8], start: usize) -> CsvPieces<'r> {
        let shift = start - self.ends_base;
        if !self.keep.is_empty() {
            return CsvPieces::kept(record, &self.keep, shift, (0, 0));
        }
        let drops = self.drops_within(start, start + record.len()).iter();
        CsvPieces { record, drops, keep: &[], extra: 0, delimiter: 0, shift, at: 0 }
    }
}
