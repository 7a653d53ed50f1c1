//! Columnar output: records gathered into text columns laid out as Apache
//! Arrow's `utf8` arrays, and handed to other libraries through the Arrow
//! C stream interface ([`ffi`]) without a copy.
//!
//! [`Columns`] reads a [`Reader`] in batches of rows ([`ColumnBatch`]):
//! each column is one buffer of UTF-8 bytes and one of `i32` offsets, the
//! layout Arrow, pandas (through pyarrow), polars and DuckDB read directly.
//! Every value is text, as in the `csv` module, unless types are set
//! ([`Columns::set_types`]: any of [`DataType`]'s, from `int8` to
//! `decimal128` and zoned timestamps) or inferred, from the first rows
//! ([`Columns::infer_types`]) or from every value ([`InferredColumns`]):
//! then a column may be `int64`, `float64`, `bool`, `date32` or
//! `timestamp`, with nulls, converted as pyarrow's CSV reader converts
//! them ([`typed`]). Every field is checked to be UTF-8; a field that is
//! not is an [`ErrorKind::Utf8`] error at its record, and a value that
//! does not fit its column's type an [`ErrorKind::Value`] error.
//!
//! ```
//! use fastcsv::arrow::Columns;
//! use fastcsv::Reader;
//!
//! let rdr = Reader::from_slice(b"name,n\nAda,1\n\"Grace \"\"G\"\"\",2\n");
//! let mut cols = Columns::new(rdr).unwrap();
//! assert_eq!(cols.names(), ["name", "n"]);
//! let batch = cols.next_batch().unwrap().unwrap();
//! assert_eq!(batch.rows(), 2);
//! assert_eq!(batch.strings(0).get(1), "Grace \"G\"");
//! assert_eq!(batch.strings(1).offsets(), [0, 1, 2]);
//! assert!(cols.next_batch().unwrap().is_none());
//! ```

use std::collections::VecDeque;

use crate::error::{ColumnsFrom, Error, ErrorKind, Position, Result};
use crate::reader::Reader;
use crate::select::Selection;
use check::{check_selection, check_utf8, check_width, field_of};
use filler::Filler;
use place::Place;

/// The bytes of a text column's values checked to be UTF-8 at once as a
/// batch is filled (see [`StringColumn::check_on`]): few enough to be in
/// a near cache still, enough for a check's cost per call not to count.
const CHECK_BYTES: usize = 32 * 1024;

/// Rows per [`ColumnBatch`] unless set otherwise ([`Columns::batch_rows`]).
pub const DEFAULT_BATCH_ROWS: usize = 64 * 1024;

/// A batch ends once its buffers (text and offsets) hold this many bytes,
/// whatever its number of rows, so that offsets stay far from `i32::MAX`.
/// (A smaller limit, which keeps a wide file's columns small, was no
/// faster into pyarrow or polars.)
const BATCH_BYTES: usize = 64 << 20;

/// One column of a [`ColumnBatch`]: Arrow's `utf8` layout, value `i` being
/// `data[offsets[i]..offsets[i + 1]]`, valid UTF-8. No value is null
/// unless null spellings apply to text ([`Spellings::strings_can_be_null`]):
/// a null keeps its text, marked by the validity bitmap.
#[derive(Clone, Debug, Default)]
pub struct StringColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: typed::Nulls,
    /// The values checked to be UTF-8 so far, from the first
    /// ([`StringColumn::check_on`]), and whether one of those after them
    /// failed the check.
    checked: usize,
    unchecked_bad: bool,
}

/// Equal values (and nulls): how far they were checked as they were read
/// is no part of them.
impl PartialEq for StringColumn {
    fn eq(&self, other: &StringColumn) -> bool {
        (&self.offsets, &self.data, &self.nulls) == (&other.offsets, &other.data, &other.nulls)
    }
}

impl Eq for StringColumn {}

impl StringColumn {
    fn new(rows: usize) -> StringColumn {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        StringColumn {
            offsets,
            data: Vec::new(),
            nulls: typed::Nulls::default(),
            checked: 0,
            unchecked_bad: false,
        }
    }

    /// Appends `n` values, given as (address, length, 1 if 32 bytes can
    /// be read from the address), `need` bytes in all (at most `i32::MAX`
    /// with the column's others).
    ///
    /// A value of at most 32 bytes with 32 readable is copied as 32 bytes
    /// (two 16-byte moves; the bytes past it land in spare capacity and are
    /// written over by the next value): no branch on its length, which in
    /// CSV columns changes from one value to the next.
    ///
    /// # Safety
    ///
    /// Each address must point to `length` bytes (and 32, when it says
    /// so) that stay valid during the call and do not
    /// overlap the column's buffers, and the lengths must add up to
    /// `need`.
    #[inline(always)]
    unsafe fn extend<'p>(
        &mut self,
        values: impl Iterator<Item = &'p Place>,
        n: usize,
        need: usize,
    ) {
        use std::ptr::{read_unaligned as rd, write_unaligned as wr};
        self.data.reserve(need + 32);
        self.offsets.reserve(n);
        let (mut len, mut at) = (self.data.len(), self.offsets.len());
        let base = self.data.as_mut_ptr();
        let offs = self.offsets.as_mut_ptr();
        for &Place(addr, l, wide) in values.take(n) {
            let (src, l) = (addr as *const u8, l as usize);
            // SAFETY: `need` (the sum of the lengths) plus 32 bytes were
            // reserved past the data's length, and `n` offsets past the
            // offsets': every write below lands in that room. The reads
            // stay within the `l` bytes at `src`, or the `readable` ones
            // when 32 are.
            unsafe {
                let dst = base.add(len);
                if l <= 32 && wide != 0 {
                    let (a, b) = (rd(src.cast::<u128>()), rd(src.add(16).cast::<u128>()));
                    wr(dst.cast::<u128>(), a);
                    wr(dst.add(16).cast::<u128>(), b);
                } else {
                    copy_short(src, dst, l);
                }
                len += l;
                offs.add(at).write(len as i32);
            }
            at += 1;
        }
        // SAFETY: the bytes up to `len` and the offsets up to `at` were
        // written above, within the capacities.
        unsafe {
            self.data.set_len(len);
            self.offsets.set_len(at);
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> &str {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        // Every value was checked to be UTF-8 when the batch was made.
        std::str::from_utf8(&self.data[a..b]).expect("checked UTF-8")
    }

    /// The `len() + 1` offsets, from 0, ascending.
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }

    /// The values' bytes, one after the other.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Whether value `i` is null (see [`Spellings::strings_can_be_null`]).
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.is_null(i)
    }

    /// The validity bitmap (bit `i` set: value `i` is not null), `None`
    /// when no value is null.
    pub fn validity(&self) -> Option<&[u8]> {
        self.nulls.bits()
    }

    /// Number of nulls.
    pub fn null_count(&self) -> usize {
        self.nulls.count()
    }

    /// The two buffers, for an owner that outlives the batch (without the
    /// validity: see [`StringColumn::validity`]).
    pub fn into_parts(self) -> (Vec<i32>, Vec<u8>) {
        (self.offsets, self.data)
    }
}

/// Copies `n` bytes from `src` to `dst`: short values (most CSV fields)
/// with two overlapping loads and stores each, rather than a call to
/// `memcpy` per value (which took a fifth of the time of a text column
/// build).
///
/// # Safety
///
/// `src` is readable and `dst` writable for `n` bytes, and they do not
/// overlap.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    use std::ptr::{copy_nonoverlapping, read_unaligned as rd, write_unaligned as wr};
    // SAFETY: each access below lies within the first `n` bytes of `src`
    // or `dst`, as the caller provides.
    unsafe {
        if n > 64 {
            copy_nonoverlapping(src, dst, n);
        } else if n >= 32 {
            // Two 32-byte halves that overlap (a field of 33 to 64 bytes,
            // a description, say): inline, where a call to the library's
            // copy costs about as much as the copy.
            let (a, b) = (rd(src.cast::<[u128; 2]>()), rd(src.add(n - 32).cast::<[u128; 2]>()));
            wr(dst.cast::<[u128; 2]>(), a);
            wr(dst.add(n - 32).cast::<[u128; 2]>(), b);
        } else if n >= 16 {
            let (a, b) = (rd(src.cast::<u128>()), rd(src.add(n - 16).cast::<u128>()));
            wr(dst.cast::<u128>(), a);
            wr(dst.add(n - 16).cast::<u128>(), b);
        } else if n >= 8 {
            let (a, b) = (rd(src.cast::<u64>()), rd(src.add(n - 8).cast::<u64>()));
            wr(dst.cast::<u64>(), a);
            wr(dst.add(n - 8).cast::<u64>(), b);
        } else if n >= 4 {
            let (a, b) = (rd(src.cast::<u32>()), rd(src.add(n - 4).cast::<u32>()));
            wr(dst.cast::<u32>(), a);
            wr(dst.add(n - 4).cast::<u32>(), b);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
    }
}

/// Rows of a [`Columns`] reader, column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnBatch {
    columns: Vec<Column>,
    rows: usize,
}

impl ColumnBatch {
    /// Number of rows (at least 1).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Column `j` (panics if there is no such column).
    pub fn column(&self, j: usize) -> &Column {
        &self.columns[j]
    }

    /// Text column `j` (panics if there is no such column, or if it has
    /// another type: see [`Columns::set_types`]).
    pub fn strings(&self, j: usize) -> &StringColumn {
        match &self.columns[j] {
            Column::Utf8(c) => c,
            other => panic!("column {j} is {}, not utf8", other.data_type().name()),
        }
    }

    /// Every column, in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The columns, for an owner that outlives the batch.
    pub fn into_columns(self) -> Vec<Column> {
        self.columns
    }
}

/// A batch of columns being made: text columns (typed when the batch is
/// handed out), and the columns converted as their rows were read (see
/// [`direct`]), whose text columns stay empty.
#[derive(Debug, Default)]
struct TextBatch {
    columns: Vec<StringColumn>,
    /// Per column, its values converted as read, if they are.
    direct: Vec<Option<direct::Builder>>,
    rows: usize,
}

impl TextBatch {
    /// The batch with its columns converted to `types` (a column past
    /// their end stays text); on a value that does not fit, its row and
    /// the error, with the batch given back. The error is the first in the
    /// order of the rows (then of the fields).
    fn typed(
        self,
        types: &[DataType],
        views: bool,
        fields: &[usize],
        sp: &Spellings,
    ) -> std::result::Result<ColumnBatch, (usize, ErrorKind, TextBatch)> {
        let mut typed: Vec<Option<Column>> = Vec::with_capacity(self.columns.len());
        let mut bad: Option<(usize, ErrorKind)> = None;
        for (j, c) in self.columns.iter().enumerate() {
            let ty = types.get(j).copied().unwrap_or(DataType::Utf8);
            if ty.is_text() || self.is_direct(j) {
                typed.push(None);
                continue;
            }
            match convert::convert(c, ty, field_of(fields, j), sp) {
                Ok(col) => typed.push(Some(col)),
                Err((i, kind)) => {
                    if bad.as_ref().is_none_or(|(r, _)| i < *r) {
                        bad = Some((i, kind));
                    }
                    typed.push(None);
                }
            }
        }
        if let Some((i, kind)) = bad {
            return Err((i, kind, self));
        }
        let text = |mut c: StringColumn| {
            if sp.strings_null() {
                c.nulls = typed::Nulls::of(&c, sp);
            }
            c
        };
        let mut direct = self.direct;
        direct.resize_with(self.columns.len(), || None);
        let columns = self
            .columns
            .into_iter()
            .zip(typed)
            .zip(direct)
            .enumerate()
            .map(|(j, ((c, t), d))| match (t, types.get(j).copied().unwrap_or(DataType::Utf8)) {
                _ if d.is_some() => d.map(direct::Builder::finish).expect("matched"),
                (Some(t), _) => t,
                (None, DataType::Utf8) if views => {
                    Column::Utf8View(ViewColumn::from_strings(text(c)))
                }
                (None, DataType::Utf8) => Column::Utf8(text(c)),
                // Text in another layout, asked for by its type.
                (None, ty) => {
                    convert::text_as(c, ty, sp).expect("only text columns are left as text")
                }
            })
            .collect();
        Ok(ColumnBatch { columns, rows: self.rows })
    }

    /// Keeps the first `rows` rows.
    fn truncate(&mut self, rows: usize) {
        for (j, c) in self.columns.iter_mut().enumerate() {
            match self.direct.get_mut(j).and_then(Option::as_mut) {
                Some(d) => d.truncate(rows),
                None => {
                    c.offsets.truncate(rows + 1);
                    c.data.truncate(c.offsets[rows] as usize);
                }
            }
        }
        self.rows = self.rows.min(rows);
    }

    /// The bytes of text of column `j`'s values (read, for a column
    /// converted as read).
    fn text_bytes(&self, j: usize) -> usize {
        match self.direct.get(j).and_then(Option::as_ref) {
            Some(d) => d.text,
            None => self.columns[j].data.len(),
        }
    }

    /// The error of the first of the columns before `before` converted
    /// from text whose value in row `r` does not fit its type, if any.
    fn value_error_in_row(
        &self,
        r: usize,
        before: usize,
        types: &[DataType],
        fields: &[usize],
        sp: &Spellings,
    ) -> Option<ErrorKind> {
        (0..before).find_map(|k| {
            let ty = types.get(k).copied().unwrap_or(DataType::Utf8);
            if ty.is_text() || self.is_direct(k) {
                return None;
            }
            let c = &self.columns[k];
            let mut one = StringColumn::new(1);
            one.data.extend_from_slice(&c.data[c.offsets[r] as usize..c.offsets[r + 1] as usize]);
            one.offsets.push(one.data.len() as i32);
            convert::convert(&one, ty, field_of(fields, k), sp).err().map(|(_, kind)| kind)
        })
    }

    /// Whether column `j` is converted as read.
    fn is_direct(&self, j: usize) -> bool {
        self.direct.get(j).is_some_and(Option::is_some)
    }

    /// Whether a column is converted as read.
    fn any_direct(&self) -> bool {
        self.direct.iter().any(Option::is_some)
    }

    /// The first bad value of the columns converted as read, by row, then
    /// check (UTF-8 first), then column: its row, check and column.
    fn first_bad(&self) -> Option<(usize, direct::Fault, usize)> {
        (0..self.direct.len())
            .filter_map(|j| {
                let b = self.direct[j].as_ref()?.bad()?;
                Some((b.row, b.fault, j))
            })
            .min()
    }
}

/// Reads a [`Reader`] into batches of text columns.
///
/// The columns are named by the header: the reader's own
/// ([`crate::DialectBuilder::headers`], the default), or else, with
/// [`Columns::with_header_row`], the first record that is not empty;
/// without either they are named `"0"`, `"1"`, ... after the first record.
/// Their number is fixed there. Empty records (blank lines kept by
/// [`crate::DialectBuilder::skip_empty_lines`]`(false)`) are skipped. With
/// a [`flexible`](crate::DialectBuilder::flexible) dialect a shorter
/// record is padded with empty values and a longer one is an
/// [`ErrorKind::RaggedRow`] error; otherwise the reader reports ragged
/// records itself. The rows before an error come out first, in a batch of
/// their own.
pub struct Columns<'a> {
    rdr: Reader<'a>,
    sel: Selection,
    names: Vec<String>,
    fill: Filler,
    /// The fields of a group of rows: address, length, and 1 when 32
    /// bytes can be read there.
    places: Vec<Place>,
    /// An error to report once the batches before it are out.
    error: Option<Error>,
    /// The names are still to be taken from the first record.
    named_by_first: bool,
    /// Whether the first non-empty record is the header.
    header_row: bool,
    /// The reader has ended (or failed).
    done: bool,
    /// Where the reader's input is named in errors (its path).
    path: Option<std::path::PathBuf>,
    /// The columns' types (text past the end).
    types: Vec<DataType>,
    /// Text columns as `utf8_view`.
    views: bool,
    /// With a selection ([`Columns::select`]): the file's number of
    /// columns, and each column's index among them (`names` and `types`
    /// are then the selected columns').
    picked: Option<(usize, Vec<usize>)>,
    /// How typed columns spell nulls and booleans.
    spellings: Spellings,
    /// What fixed the number of columns, for the message of a longer row.
    from: ColumnsFrom,
    /// The names were given (see [`Columns::prime`]).
    named: bool,
}

impl<'a> Columns<'a> {
    /// Columns of `rdr`, named by its header row (or numbered, when its
    /// dialect has no headers). Reads up to the header now (without
    /// headers, the first record, to count the columns).
    ///
    /// ```
    /// use fastcsv::{arrow::Columns, Dialect, Reader};
    /// let d = Dialect::builder().headers(false).build().unwrap();
    /// let rdr = Reader::builder().dialect(d).from_slice(b"1,2\n3,4\n");
    /// let mut cols = Columns::new(rdr).unwrap();
    /// assert_eq!(cols.names(), ["0", "1"]);
    /// assert_eq!(cols.next_batch().unwrap().unwrap().strings(1).get(1), "4");
    /// ```
    pub fn new(rdr: Reader<'a>) -> Result<Columns<'a>> {
        Columns::with_header_row(rdr, false)
    }

    /// Columns of `rdr`, whose dialect has no headers, named by its first
    /// non-empty record when `header_row` is true (as Python's
    /// `read_columns` does), numbered otherwise.
    ///
    /// ```
    /// use fastcsv::{arrow::Columns, Dialect, Reader};
    /// let d = Dialect::builder().headers(false).skip_empty_lines(false).build().unwrap();
    /// let rdr = Reader::builder().dialect(d).from_slice(b"\nx,y\n1,2\n");
    /// let cols = Columns::with_header_row(rdr, true).unwrap();
    /// assert_eq!(cols.names(), ["x", "y"]);
    /// ```
    pub fn with_header_row(rdr: Reader<'a>, header_row: bool) -> Result<Columns<'a>> {
        Columns::build(rdr, header_row, None)
    }

    /// Columns of `rdr`, whose dialect has no headers, named `names`: for
    /// a part of a split file (see [`crate::split`]) after the one with the
    /// header row. Their number is fixed by the names. The first rows are
    /// read now, as [`Columns::with_header_row`] reads them: a first row
    /// longer than the names is an error here, not from the first batch.
    ///
    /// ```
    /// use fastcsv::{arrow::Columns, Dialect, Reader};
    /// let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    /// let rdr = Reader::builder().dialect(d).from_slice(b"1\n2,3\n");
    /// let mut cols = Columns::with_names(rdr, vec!["a".into(), "b".into()]).unwrap();
    /// let batch = cols.next_batch().unwrap().unwrap();
    /// assert_eq!((batch.strings(1).get(0), batch.strings(1).get(1)), ("", "3"));
    /// ```
    pub fn with_names(rdr: Reader<'a>, names: Vec<String>) -> Result<Columns<'a>> {
        Columns::with_names_from(rdr, names, ColumnsFrom::Names)
    }

    /// [`Columns::with_names`], whose names come from `from`, as
    /// [`Columns::names_from`] says, for the message of a longer row among
    /// the first rows, read now (a later part of a split file names the
    /// header row).
    ///
    /// ```
    /// use fastcsv::{arrow::Columns, ColumnsFrom, Dialect, Reader};
    /// let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    /// let rdr = Reader::builder().dialect(d).from_slice(b"1,2,3\n");
    /// let names = vec!["a".into(), "b".into()];
    /// let e = Columns::with_names_from(rdr, names, ColumnsFrom::Header).err().unwrap();
    /// assert!(e.to_string().ends_with("3 fields, but the header row has 2 fields"), "{e}");
    /// ```
    pub fn with_names_from(
        rdr: Reader<'a>,
        names: Vec<String>,
        from: ColumnsFrom,
    ) -> Result<Columns<'a>> {
        Columns::build(rdr, false, Some((names, from)))
    }

    fn build(
        rdr: Reader<'a>,
        header_row: bool,
        given: Option<(Vec<String>, ColumnsFrom)>,
    ) -> Result<Columns<'a>> {
        let mut cols = Columns::unprimed(rdr, header_row, given)?;
        cols.prime()?;
        Ok(cols)
    }

    /// [`Columns::build`] up to the first rows: the header row, if the
    /// dialect says there is one, is read. Set up (types, selection,
    /// spellings) before [`Columns::prime`] reads the first rows, these
    /// are built as any later batch is (typed columns converted as read,
    /// not held as text and converted after).
    fn unprimed(
        mut rdr: Reader<'a>,
        header_row: bool,
        given: Option<(Vec<String>, ColumnsFrom)>,
    ) -> Result<Columns<'a>> {
        let path = rdr.path().map(|p| p.to_path_buf());
        let mut names = Vec::new();
        let mut named_by_first = true;
        let mut from = if header_row { ColumnsFrom::Header } else { ColumnsFrom::FirstRecord };
        let named = given.is_some();
        if let Some((given, given_from)) = given {
            names = given;
            named_by_first = false;
            from = given_from;
        } else if rdr.dialect().headers() {
            named_by_first = false;
            from = ColumnsFrom::Header;
            if let Some(h) = rdr.headers()? {
                for i in 0..h.len() {
                    let name = h.get_str(i).map_err(|e| match &path {
                        Some(p) => e.with_path(p),
                        None => e,
                    })?;
                    names.push(name.to_owned());
                }
            }
        }
        Ok(Columns {
            rdr,
            sel: Selection::all(),
            names,
            fill: Filler {
                ready: VecDeque::new(),
                carry: None,
                batch_rows: DEFAULT_BATCH_ROWS,
                per_row: Vec::new(),
                last_rows: 0,
                template: Vec::new(),
            },
            places: Vec::new(),
            error: None,
            named_by_first,
            header_row: header_row && named_by_first,
            done: false,
            path,
            types: Vec::new(),
            views: false,
            picked: None,
            spellings: Spellings::default(),
            from,
            named,
        })
    }

    /// Reads the first rows as [`Columns::build`] does: the first record
    /// when it names the columns, and with names given, the first batch
    /// (a longer first row is an error now, as with a header row, not from
    /// the first batch); an error before any row (in the header, say) is
    /// returned now.
    pub(crate) fn prime(&mut self) -> Result<()> {
        self.fill.template = self.direct_template();
        while self.named_by_first && !self.done {
            self.pull();
        }
        while self.named && !self.done && self.fill.ready.is_empty() && self.fill.carry.is_none() {
            self.retemplate();
            self.pull();
        }
        if self.fill.ready.is_empty() && self.fill.carry.is_none() {
            if let Some(e) = self.error.take() {
                return Err(self.with_path(e));
            }
        }
        Ok(())
    }

    /// Says what the names given to [`Columns::with_names`] are, for the
    /// message of a longer row ([`ErrorKind::LongRow`]): by default the
    /// caller's own ([`ColumnsFrom::Names`]); the file's header row for a
    /// later part of a split file.
    ///
    /// ```
    /// use fastcsv::{arrow::Columns, ColumnsFrom, Dialect, Reader};
    /// let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    /// let rdr = Reader::builder().dialect(d).from_slice(b"1,2\n1,2,3\n");
    /// let mut c = Columns::with_names(rdr, vec!["a".into(), "b".into()]).unwrap();
    /// c.names_from(ColumnsFrom::Header);
    /// assert_eq!(c.next_batch().unwrap().unwrap().rows(), 1);
    /// let e = c.next_batch().unwrap_err().to_string();
    /// assert!(e.ends_with("3 fields, but the header row has 2 fields"), "{e}");
    /// ```
    pub fn names_from(&mut self, from: ColumnsFrom) -> &mut Self {
        self.from = from;
        // A longer row among the rows read already says so too.
        if let Some(e) = &self.error {
            if let ErrorKind::LongRow { columns, found, .. } = *e.kind() {
                let mut again = Error::new(ErrorKind::LongRow { columns, found, from });
                if let Some(pos) = e.position() {
                    again = again.with_position(pos);
                }
                self.error = Some(again);
            }
        }
        self
    }

    /// Rows per batch (at least 1; default [`DEFAULT_BATCH_ROWS`]): every
    /// batch but the last holds exactly that many, unless 64 MiB of text
    /// and offsets or an error ends it first.
    pub fn batch_rows(&mut self, n: usize) -> &mut Self {
        self.fill.resize(n.max(1), &self.spellings);
        self
    }

    /// The column names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Converts the columns to `types`, one per column (default: every
    /// column `utf8`), by the rules in [`typed`]: a value that does not fit
    /// is an [`ErrorKind::Value`] error at its record, after the rows
    /// before it. Set before reading the batches: the rows read from
    /// then on are converted as they are read (`int64`, `float64`,
    /// `bool`, `date32` and `timestamp` columns, straight from the
    /// fields' bytes), and other types once those rows are read are an
    /// error.
    ///
    /// ```
    /// use fastcsv::arrow::{Column, Columns, DataType};
    /// let rdr = fastcsv::Reader::from_slice(b"n,x\n1,a\nNA,b\n3,c\nx,d\n");
    /// let mut cols = Columns::new(rdr).unwrap();
    /// cols.set_types(vec![DataType::Int64, DataType::Utf8]).unwrap();
    /// let b = cols.next_batch().unwrap().unwrap();
    /// let Column::Int64(n) = b.column(0) else { panic!() };
    /// assert_eq!((n.get(0), n.get(1), n.null_count()), (Some(1), None, 1));
    /// let e = cols.next_batch().unwrap_err();
    /// assert_eq!(e.to_string(), "line 5: record 4, byte 17: field 0 is not a valid int64: \"x\"");
    /// ```
    pub fn set_types(&mut self, types: Vec<DataType>) -> Result<&mut Self> {
        check_width(&types, &self.names)?;
        if self.direct_pending() && types != self.types() {
            // Rows read since the first batch are typed already.
            return Err(Error::config("the types are set before the batches are read"));
        }
        self.types = types;
        Ok(self)
    }

    /// How typed columns spell nulls, trues and falses (default:
    /// pyarrow's, see [`Spellings`]), for the types set or inferred; set
    /// before [`Columns::infer_types`] and the batches.
    pub fn set_spellings(&mut self, spellings: Spellings) -> &mut Self {
        self.spellings = spellings;
        self
    }

    /// Gives text columns as [`Column::Utf8View`] (Arrow's `utf8_view`,
    /// which polars keeps its strings in) rather than [`Column::Utf8`].
    /// The views are built with the batches (on the worker threads, with
    /// [`ParColumns`]).
    pub fn string_view(&mut self, on: bool) -> &mut Self {
        self.views = on;
        self
    }

    /// Keeps only the columns `cols` (0-based indices into
    /// [`Columns::names`], in the order given, each at most once): the
    /// others are not built, and their fields not copied, checked for
    /// UTF-8 nor converted (the reader visits only the selected fields,
    /// see [`Selection::new`]). The names and types (set before, or after)
    /// are then the selected columns'; positions in errors still count
    /// fields in the file (`field 7`), and a record longer than the
    /// file's header is still an error. Set before reading the batches
    /// (rows already read, with the header, are cut down to the
    /// selection); once.
    ///
    /// ```
    /// use fastcsv::arrow::Columns;
    /// let rdr = fastcsv::Reader::from_slice(b"a,b,c\n1,2,3\n4,5,6\n");
    /// let mut cols = Columns::new(rdr).unwrap();
    /// cols.select(&[2, 0]).unwrap();
    /// assert_eq!(cols.names(), ["c", "a"]);
    /// let b = cols.next_batch().unwrap().unwrap();
    /// assert_eq!((b.strings(0).get(1), b.strings(1).get(1)), ("6", "4"));
    /// ```
    pub fn select(&mut self, cols: &[usize]) -> Result<&mut Self> {
        if self.picked.is_some() {
            return Err(Error::config("the columns are selected once"));
        }
        let width = self.names.len();
        check_selection(cols, width)?;
        fn pick<T: Default>(v: &mut Vec<T>, cols: &[usize]) {
            let mut all = std::mem::take(v);
            if !all.is_empty() {
                *v = cols.iter().map(|&j| std::mem::take(&mut all[j])).collect();
            }
        }
        for (b, _) in &mut self.fill.ready {
            pick(&mut b.columns, cols);
            pick(&mut b.direct, cols);
        }
        if let Some((b, _, bytes)) = &mut self.fill.carry {
            pick(&mut b.columns, cols);
            pick(&mut b.direct, cols);
            *bytes = (0..b.columns.len()).map(|j| b.text_bytes(j) + 4 * b.rows).sum();
        }
        let template = &self.fill.template;
        if !template.is_empty() {
            self.fill.template = cols.iter().map(|&j| template.get(j).copied().flatten()).collect();
        }
        let per_row = &self.fill.per_row;
        self.fill.per_row = cols.iter().filter_map(|&j| per_row.get(j).copied()).collect();
        if !self.types.is_empty() {
            self.types = cols.iter().map(|&j| self.types[j]).collect();
        }
        self.names = cols.iter().map(|&j| self.names[j].clone()).collect();
        self.sel = Selection::new(cols.iter().copied());
        self.picked = Some((width, cols.to_vec()));
        Ok(self)
    }

    /// The columns' types.
    pub fn types(&self) -> Vec<DataType> {
        (0..self.names.len())
            .map(|j| self.types.get(j).copied().unwrap_or(DataType::Utf8))
            .collect()
    }

    /// Sets the columns' types to those their first `rows` rows fit
    /// ([`typed`] says how), and returns them (a later value that does not
    /// fit is then an error: [`InferredColumns`] types on every value).
    /// The rows are read now (and kept for the batches); an error among
    /// them comes from [`Columns::next_batch`], after the rows before it,
    /// which the types are inferred from. An error once rows converted as
    /// read (see [`Columns::set_types`]) are waiting.
    pub fn infer_types(&mut self, rows: usize) -> Result<Vec<DataType>> {
        self.types = self.sample_fits(rows)?.iter().map(infer::Fits::data_type).collect();
        Ok(self.types())
    }

    /// What the values of each column's first `rows` rows fit (read now
    /// and kept for the batches, as [`Columns::infer_types`] has it).
    pub(crate) fn sample_fits(&mut self, rows: usize) -> Result<Vec<infer::Fits>> {
        self.sample_fits_on(rows, 1)
    }

    /// [`Columns::sample_fits`] with each batch's columns looked at on up
    /// to `threads` threads.
    pub(crate) fn sample_fits_on(
        &mut self,
        rows: usize,
        threads: usize,
    ) -> Result<Vec<infer::Fits>> {
        if self.direct_pending() {
            // Rows read since the first batch are typed already: their
            // text is gone.
            return Err(Error::config("the types are inferred before the batches are read"));
        }
        // The rows read for the sample are kept as text.
        self.fill.template.clear();
        let mut inf = infer::Inference::new(self.names.len(), rows, &self.spellings);
        let mut seen = 0;
        loop {
            while seen < self.fill.ready.len() && inf.wants_more() {
                inf.feed_on(&self.fill.ready[seen].0.columns, threads)?;
                seen += 1;
            }
            if !inf.wants_more() {
                break;
            }
            if self.done {
                // The batch in progress, if any, is the last.
                if self.error.is_none() && self.fill.seal() {
                    continue;
                }
                break;
            }
            self.pull();
        }
        Ok(inf.fits().to_vec())
    }

    /// The reader, for its position and counts.
    pub fn reader(&self) -> &Reader<'a> {
        &self.rdr
    }

    /// The next batch of rows, `None` at the end. After an error, `None`.
    pub fn next_batch(&mut self) -> Result<Option<ColumnBatch>> {
        loop {
            if let Some((mut b, starts)) = self.fill.ready.pop_front() {
                // The rows were copied from the input after the reader
                // checked them: a mapped file cut since may have put its
                // zeros in them.
                if let Some(e) = self.changed_at(starts.first().copied()) {
                    return Err(e);
                }
                let fields = self.picked.as_ref().map_or(&[][..], |p| &p.1[..]);
                // The values not checked as the batch was filled are
                // checked now; where one failed, the first bad value is
                // looked for.
                let mut checked = true;
                for c in &mut b.columns {
                    checked &= c.check_on(0);
                }
                let mut bad = if checked { None } else { check_utf8(&b, &starts, fields).err() };
                // A bad value of a column converted as read, when it comes
                // first (a text column's bad UTF-8 in the same row comes
                // first when it lies in an earlier column, or the value
                // is not a UTF-8 error).
                if let Some((r, fault, j)) = b.first_bad() {
                    let text = bad.as_ref().map(|(i, k, _)| (*i, direct::Fault::Utf8, *k));
                    if text.is_none_or(|t| (r, fault, j) < t) {
                        let d = b.direct[j].as_mut().and_then(direct::Builder::take_bad);
                        let mut kind = d.expect("a bad value was found").kind;
                        if fault == direct::Fault::Value {
                            // A value of a column before, converted from
                            // text, that does not fit its type either.
                            if let Some(k) =
                                b.value_error_in_row(r, j, &self.types, fields, &self.spellings)
                            {
                                kind = k;
                            }
                        }
                        bad = Some((r, j, Error::new(kind).with_position(starts[r])));
                    }
                }
                let mut bad = bad.map(|(i, _, e)| (i, e));
                if let Some((i, _)) = bad {
                    b.truncate(i);
                }
                let b = match b.typed(&self.types, self.views, fields, &self.spellings) {
                    Ok(b) => b,
                    Err((i, kind, mut b)) => {
                        // A value before any bad UTF-8 (the check stopped
                        // the batch there).
                        bad = Some((i, Error::new(kind).with_position(starts[i])));
                        b.truncate(i);
                        b.typed(&self.types, self.views, fields, &self.spellings).map_err(|_| {
                            Error::config("a column's values changed type on a second look")
                        })?
                    }
                };
                if let Some((i, e)) = bad {
                    self.stop();
                    if i == 0 {
                        return Err(self.with_path(e));
                    }
                    // The rows before the bad one first.
                    self.error = Some(e);
                }
                return Ok(Some(b));
            }
            if self.error.is_some() && self.fill.seal() {
                // The rows before the error first (held back by a new
                // batch size, say).
                continue;
            }
            if let Some(e) = self.error.take() {
                if let Some(e) = self.changed_at(e.position()) {
                    return Err(e);
                }
                self.stop();
                return Err(self.with_path(e));
            }
            if self.done {
                if !self.fill.seal() {
                    return Ok(None);
                }
                continue;
            }
            self.retemplate();
            self.pull();
        }
    }

    /// The batches read from now on convert the columns as read that the
    /// types set say ([`Columns::direct_template`]); a batch begun before
    /// they changed (the rows after a header row read with it, before the
    /// types were set) ends there, short, rather than building its
    /// remaining rows as text to convert once it is full.
    fn retemplate(&mut self) {
        let t = self.direct_template();
        if t != self.fill.template {
            if self.fill.carry.as_ref().is_some_and(|(b, _, _)| b.rows == 0) {
                self.fill.carry = None;
            }
            self.fill.seal();
            self.fill.template = t;
        }
    }

    /// The columns that batches read from now on convert as read (see
    /// [`direct`]): those typed with a type it takes, with their fields.
    fn direct_template(&self) -> Vec<Option<(DataType, usize)>> {
        let fields = self.picked.as_ref().map_or(&[][..], |p| &p.1[..]);
        (0..self.types.len())
            .map(|j| {
                let ty = self.types[j];
                direct::Builder::takes(ty).then(|| (ty, field_of(fields, j)))
            })
            .collect()
    }

    /// Whether a batch read and not yet handed out has columns converted
    /// as read.
    fn direct_pending(&self) -> bool {
        self.fill.ready.iter().any(|(b, _)| b.any_direct())
            || self.fill.carry.as_ref().is_some_and(|(b, _, _)| b.any_direct())
    }

    /// [`ErrorKind::FileChanged`] at `at` (the first row not handed out),
    /// ending the read, when the reader's mapped file changed (see
    /// `docs/reliability.md`); one `fstat`.
    fn changed_at(&mut self, at: Option<Position>) -> Option<Error> {
        if !self.rdr.source_changed() {
            return None;
        }
        self.stop();
        let e = Error::new(ErrorKind::FileChanged);
        let e = match at {
            Some(p) => e.with_position(p),
            None => e,
        };
        Some(self.with_path(e))
    }

    /// Nothing more after an error.
    fn stop(&mut self) {
        self.done = true;
        self.fill.ready.clear();
        self.fill.carry = None;
        self.error = None;
    }

    fn with_path(&self, e: Error) -> Error {
        match (&self.path, e.path()) {
            (Some(p), None) => e.with_path(p),
            _ => e,
        }
    }

    /// Reads one batch of records into columns. At the end, or on an
    /// error (kept for after the rows before it), the reader is done.
    fn pull(&mut self) {
        if let Err(e) = self.pull_rows() {
            self.done = true;
            self.fill.seal();
            self.error = Some(e);
        }
    }

    fn pull_rows(&mut self) -> Result<()> {
        let Some(batch) = self.rdr.read_batch(&mut self.sel)? else {
            self.done = true;
            return Ok(());
        };
        // The records to keep, then the error that ends them, if any.
        let mut kept = Vec::with_capacity(batch.len());
        let mut err = None;
        for row in batch.iter() {
            let n = row.field_count();
            if n == 0 {
                continue;
            }
            if self.named_by_first {
                self.named_by_first = false;
                if self.header_row {
                    for (i, f) in row.iter().enumerate() {
                        let s = std::str::from_utf8(f).map_err(|e| {
                            Error::new(ErrorKind::Utf8 { field: i, valid_up_to: e.valid_up_to() })
                                .with_position(row.position())
                        })?;
                        self.names.push(s.to_owned());
                    }
                    continue;
                }
                self.names = (0..n).map(|i| i.to_string()).collect();
            }
            let file_width = self.picked.as_ref().map_or(self.names.len(), |p| p.0);
            if n > file_width {
                let kind = ErrorKind::LongRow { columns: file_width, found: n, from: self.from };
                err = Some(Error::new(kind).with_position(row.position()));
                break;
            }
            kept.push(row);
        }
        let width = self.names.len();
        // Where fields may lie (the input and the unescaped copies), to
        // know how many bytes can be read from a field's start.
        let bounds = [
            (batch.input.as_ptr() as usize, batch.input.len()),
            (batch.scratch.as_ptr() as usize, batch.scratch.len()),
        ];
        let room = |f: &[u8]| -> usize {
            let p = f.as_ptr() as usize;
            for (lo, len) in bounds {
                if p.wrapping_sub(lo) < len {
                    return lo + len - p;
                }
            }
            0
        };
        // Rows in groups: their fields' places noted row by row (the
        // field iterator's fast walk), then copied column by column, so
        // that each column is written in order with its state in
        // registers. (Row by row, a 300-column file took 2.5 times as
        // long as checking the same rows' UTF-8 in place.)
        let group = place::group_rows(width);
        let mut k = 0;
        while k < kept.len() {
            let g = group.min(self.fill.room()).min(kept.len() - k);
            let rows = &kept[k..k + g];
            // Column by column: column `j`'s places are `places[j * g..]`,
            // read in order below.
            let places = &mut self.places;
            if places.len() < g * width {
                places.resize(g * width, Place::default());
            }
            for (r, row) in rows.iter().enumerate() {
                if let Some(plain) = row.plain_ends().filter(|p| p.2.len() < width) {
                    place::note_plain(places, r, g, width, plain);
                    continue;
                }
                let mut fields = row.iter();
                for j in 0..width {
                    let f = fields.next().unwrap_or_default();
                    places[j * g + r] =
                        Place(f.as_ptr() as usize, f.len() as u32, u32::from(room(f) >= 32));
                }
            }
            let (b, starts, bytes) = self.fill.target(width);
            for j in 0..width {
                let column = &places[j * g..(j + 1) * g];
                let need: usize = column.iter().map(|p| p.1 as usize).sum();
                if b.text_bytes(j) + need > i32::MAX as usize {
                    // Over 2 GiB in one batch's column (a huge value):
                    // the group's values are taken back from the columns
                    // before, for equal lengths, and the error is the
                    // first row's that does not fit.
                    for (k, c) in b.columns[..j].iter_mut().enumerate() {
                        if let Some(d) = b.direct.get_mut(k).and_then(Option::as_mut) {
                            d.truncate(b.rows);
                            continue;
                        }
                        c.offsets.truncate(c.offsets.len() - g);
                        c.data.truncate(*c.offsets.last().unwrap_or(&0) as usize);
                    }
                    let mut len = b.text_bytes(j);
                    let bad = (0..g)
                        .find(|&r| {
                            len += column[r].1 as usize;
                            len > i32::MAX as usize
                        })
                        .unwrap_or(0);
                    return Err(Error::config("a column of one batch holds over 2 GiB of text")
                        .with_position(rows[bad].position()));
                }
                let column = column.iter();
                match b.direct.get_mut(j).and_then(Option::as_mut) {
                    Some(d) => {
                        // SAFETY: the places are the fields of `rows`, in
                        // the batch borrowed for this whole loop.
                        unsafe { d.extend(column, b.rows, &self.spellings) };
                        d.text += need;
                    }
                    // SAFETY: the places are the fields of `rows`, in the
                    // batch borrowed for this whole loop (the input or its
                    // unescaped copies, never a column), with the bytes
                    // readable from each as `room` found; `need` is their
                    // sum.
                    None => {
                        // SAFETY: as above.
                        unsafe { b.columns[j].extend(column, g, need) };
                        b.columns[j].check_on(CHECK_BYTES);
                    }
                }
                *bytes += need + 4 * g;
            }
            b.rows += g;
            starts.extend(rows.iter().map(|r| r.position()));
            self.fill.seal_if_full();
            k += g;
        }
        err.map_or(Ok(()), Err)
    }
}

mod check;
mod convert;
mod datatype;
mod direct;
pub mod ffi;
mod filler;
mod infer;
pub mod number;
mod par;
mod place;
mod temporal;
pub mod typed;
mod whole;

pub use datatype::TYPE_NAMES;
pub use par::ParColumns;
pub use typed::{
    BooleanColumn, Column, DataType, DictionaryColumn, LargeStringColumn, PrimitiveColumn,
    Spellings, TimeUnit, ViewColumn, Zone,
};
pub use whole::{default_sample_rows, InferredColumns};

#[cfg(test)]
mod tests {
    /// Every length up to past the library copy's, at every offset in a
    /// word: the bytes copied exactly, none written past them.
    #[test]
    fn short_copies_copy_exactly_their_bytes() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=140 {
            for at in 0..8 {
                let mut dst = vec![0xEEu8; 160];
                // SAFETY: `src[at..]` holds at least `n` bytes, `dst` 160,
                // and they are separate vectors.
                unsafe { super::copy_short(src[at..].as_ptr(), dst.as_mut_ptr(), n) };
                assert_eq!(&dst[..n], &src[at..at + n], "{n} bytes from {at}");
                assert!(dst[n..].iter().all(|&b| b == 0xEE), "{n} bytes from {at}: past the end");
            }
        }
    }
}
