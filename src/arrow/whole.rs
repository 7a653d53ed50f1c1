//! Types decided on the whole column: [`InferredColumns`] reads every
//! batch of a source of text columns, then types each column with the
//! narrowest type that holds every one of its values, so that a typed
//! read never fails on a value that a wider type holds.
//!
//! The work is a speculative conversion, so that the whole-column types
//! cost little more than sampled ones:
//!
//! 1. Every batch is read (as text) and kept.
//! 2. Each column's candidate type is inferred from its first
//!    rows ([`Fits`]): [`SAMPLE_ROWS`], fewer for rows of many columns
//!    ([`default_sample_rows`]).
//! 3. Each column is converted to its candidate, batch by batch, on
//!    several threads. If every value fits, the candidate is the
//!    whole column's type: every type narrower than it failed on a
//!    sampled value already.
//! 4. A column where a value did not fit (or whose sampled values were all
//!    null) is looked at whole: each batch's [`Fits`], merged in order,
//!    give its type, and it is converted again, from the text kept. Each
//!    column is converted at most twice.
//!
//! Nothing is handed out before the types are settled, so the stream's
//! schema is right from its first batch, at the price of holding the
//! whole input's columns in memory (its text, plus the typed columns
//! while they are made).
//!
//! A file that can be read again ([`InferredColumns::read_par`]) is read
//! with the candidate types instead, converted on the worker threads as
//! they would be with types given, so that only typed columns are held;
//! a value that does not fit its candidate makes it read again, whole, as
//! above.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::convert;
use super::ffi::BatchSource;
use super::infer::{Fits, Inference};
use super::typed::{Column, DataType, Spellings, ViewColumn};
use super::ParColumns;
use super::{ColumnBatch, Columns, StringColumn, DEFAULT_BATCH_ROWS};
use crate::error::{Error, ErrorKind, Result};
use crate::pool;

/// Rows the candidate types are inferred from (step 2 above), at most.
pub const SAMPLE_ROWS: usize = DEFAULT_BATCH_ROWS;

/// Values (rows times columns) the candidate types are inferred from, at
/// most: rows of many columns are sampled fewer (but [`SAMPLE_ROWS_MIN`]),
/// since the candidates only propose (every value checks them) and the
/// sample's cost grows with its values: 65,536 rows of 300 columns were a
/// fifth of a 256 MB file, looked at before the read began, and 2^20
/// values (52,428 rows of 20 columns) still cost a typed read 5% of its
/// CPU time, for candidates that 4,096 rows proposed as well on every
/// bench file (see docs/BENCHMARKS.md).
pub const SAMPLE_VALUES: usize = 1 << 16;

/// Rows sampled at the least, however many columns.
pub const SAMPLE_ROWS_MIN: usize = 4096;

/// The rows sampled by default for the candidate types of rows of
/// `width` columns (see [`InferredColumns`]): 2^16 values, within 4,096
/// and 65,536 rows.
///
/// ```
/// use fastcsv::arrow::default_sample_rows;
/// assert_eq!(default_sample_rows(1), 65_536);
/// assert_eq!(default_sample_rows(8), 8192);
/// assert_eq!(default_sample_rows(20), 4096);
/// assert_eq!(default_sample_rows(300), 4096);
/// ```
pub fn default_sample_rows(width: usize) -> usize {
    (SAMPLE_VALUES / width.max(1)).clamp(SAMPLE_ROWS_MIN, SAMPLE_ROWS)
}

/// The batches of a source of text columns, with each column typed by
/// every one of its values (see [`InferredColumns::read`] and [`InferredColumns::read_par`]); the rows and
/// error of the source, the error after the rows before it.
///
/// ```
/// use fastcsv::arrow::{Column, Columns, DataType, InferredColumns, Spellings};
/// let mut text = String::from("n\n");
/// for i in 0..70_000 {
///     text.push_str(&format!("{i}\n"));
/// }
/// text.push_str("1.5\n");
/// let cols = Columns::new(fastcsv::Reader::from_slice(text.as_bytes())).unwrap();
/// let mut typed = InferredColumns::read(cols, &Spellings::default(), 2, false).unwrap();
/// assert_eq!(typed.types(), [DataType::Float64]);
/// let mut rows = 0;
/// while let Some(b) = typed.next_batch().unwrap() {
///     let Column::Float64(n) = b.column(0) else { panic!() };
///     rows += n.len();
/// }
/// assert_eq!(rows, 70_001);
/// ```
pub struct InferredColumns {
    names: Vec<String>,
    types: Vec<DataType>,
    batches: VecDeque<ColumnBatch>,
    /// The source's error, after the batches.
    error: Option<Error>,
}

impl InferredColumns {
    /// Reads every batch of `source` now, and types its text columns by
    /// their values, nulls and booleans spelt as `spellings` says (which
    /// should be the source's), on up to `threads` threads. A column the
    /// source gives another type keeps it. Text columns are given as
    /// `utf8_view` when `views` (the source's own views are taken back to
    /// `utf8` first: set them here rather than on the source).
    ///
    /// An error of the source ends the rows: the types are those of the
    /// rows before it, which come first, then the error. Fails only if a
    /// worker thread panics.
    pub fn read<S: BatchSource>(
        source: S,
        spellings: &Spellings,
        threads: usize,
        views: bool,
    ) -> Result<InferredColumns> {
        let sample = default_sample_rows(source.names().len());
        InferredColumns::read_sampling(source, spellings, threads, views, sample)
    }

    /// [`InferredColumns::read`] with the candidate types taken from the
    /// first `sample` rows rather than the default sample
    /// ([`default_sample_rows`]): a matter of speed
    /// only (a candidate that a later value does not fit costs that
    /// column a second look), never of the types, which are the whole
    /// columns'.
    ///
    /// ```
    /// use fastcsv::arrow::{Columns, DataType, InferredColumns, Spellings};
    /// let cols = Columns::new(fastcsv::Reader::from_slice(b"a\n1\n2\nx\n")).unwrap();
    /// let t = InferredColumns::read_sampling(cols, &Spellings::default(), 1, false, 1).unwrap();
    /// assert_eq!(t.types(), [DataType::Utf8]);
    /// ```
    pub fn read_sampling<S: BatchSource>(
        mut source: S,
        spellings: &Spellings,
        threads: usize,
        views: bool,
        sample: usize,
    ) -> Result<InferredColumns> {
        let names = source.names().to_vec();
        let given = source.types();
        let width = names.len();
        let mut texts = Vec::new();
        let mut error = None;
        loop {
            match source.next_batch() {
                Ok(Some(mut b)) => {
                    for c in &mut b.columns {
                        if let Column::Utf8View(_) = c {
                            let Column::Utf8View(v) = std::mem::replace(c, empty()) else {
                                unreachable!("matched above")
                            };
                            *c = Column::Utf8(v.into_strings());
                        }
                    }
                    texts.push(b);
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let text = |k: usize, j: usize| -> Option<&StringColumn> {
            texts[k].columns.get(j).and_then(Column::as_utf8)
        };
        // Which columns are inferred: text ones.
        let open: Vec<bool> =
            (0..width).map(|j| given.get(j).is_none_or(|&t| t == DataType::Utf8)).collect();

        // 2. Candidates from the first rows.
        let mut inf = Inference::new(width, sample, spellings);
        for (k, b) in texts.iter().enumerate() {
            if !inf.wants_more() {
                break;
            }
            for j in (0..width).filter(|&j| open[j]) {
                if let Some(c) = text(k, j) {
                    inf.feed_column(j, c);
                }
            }
            inf.fed(b.rows);
        }
        let whole_sampled = inf.wants_more();
        let fits = inf.fits();
        let mut types: Vec<DataType> =
            (0..width).map(|j| if open[j] { fits[j].data_type() } else { given[j] }).collect();
        // A column whose sampled values were all null could be anything.
        let mut unsure: Vec<bool> =
            (0..width).map(|j| open[j] && !whole_sampled && !fits[j].seen_value()).collect();

        // 3. Each column converted to its candidate.
        let nb = texts.len();
        let tasks: Vec<(usize, usize)> = (0..width)
            .filter(|&j| open[j] && !unsure[j] && types[j] != DataType::Utf8)
            .flat_map(|j| (0..nb).map(move |k| (k, j)))
            .collect();
        let convert = |(k, j): (usize, usize), ty: DataType| -> Option<Column> {
            text(k, j).and_then(|c| convert::convert(c, ty, j, spellings).ok())
        };
        let mut converted: Vec<Option<Column>> = (0..nb * width).map(|_| None).collect();
        let out = par_map(threads, tasks.clone(), |t| convert(t, types[t.1]))?;
        for ((k, j), c) in tasks.into_iter().zip(out) {
            match c {
                Some(c) => converted[k * width + j] = Some(c),
                None => unsure[j] = true,
            }
        }

        // 4. The columns left unsure, looked at whole.
        let tasks = type_whole(threads, nb, &unsure, &mut types, text, spellings)?;
        for j in (0..width).filter(|&j| unsure[j]) {
            for k in 0..nb {
                converted[k * width + j] = None;
            }
        }
        let tasks: Vec<(usize, usize)> =
            tasks.into_iter().filter(|&(_, j)| types[j] != DataType::Utf8).collect();
        let out = par_map(threads, tasks.clone(), |t| convert(t, types[t.1]))?;
        for ((k, j), c) in tasks.into_iter().zip(out) {
            match c {
                Some(c) => converted[k * width + j] = Some(c),
                // Not reached: every value fits the type its column's
                // values gave.
                None if error.is_none() => {
                    error = Some(Error::config(format!(
                        "column {j}'s values changed type on a second look"
                    )));
                }
                None => {}
            }
        }

        let batches = place(texts, converted, views, threads)?;
        Ok(InferredColumns { names, types, batches, error })
    }

    /// [`InferredColumns::read`] for a file read on several threads:
    /// `cols` (no types set, not yet read), which `open` opens again the
    /// same way when the file must be read a second time. Rather
    /// than holding the text of the whole file, it reads the file with the
    /// candidate types (converted on the worker threads, as they would be
    /// with types given) and holds only typed columns, and the text of
    /// the columns whose sampled values were all null, typed at the end.
    /// Only when a value does not fit its candidate is the file read
    /// again, whole, as [`InferredColumns::read`] reads it: the types are
    /// the same either way, the memory and time less when no column
    /// widens after the sample.
    ///
    /// ```
    /// use fastcsv::{arrow::{DataType, InferredColumns, ParColumns, Spellings}, ReaderBuilder};
    /// let p = std::env::temp_dir().join("fastcsv-doc-read-par.csv");
    /// let mut text = String::from("n,late\n");
    /// for i in 0..10_000 {
    ///     text.push_str(&format!("{i},{}\n", if i == 9_999 { "x" } else { "1" }));
    /// }
    /// std::fs::write(&p, &text).unwrap();
    /// let open = || ParColumns::from_path(&ReaderBuilder::new(), &p, false, 2, 4096);
    /// let t = InferredColumns::read_par(open().unwrap(), open, &Spellings::default(), 2, false)
    ///     .unwrap();
    /// assert_eq!(t.types(), [DataType::Int64, DataType::Utf8]);
    /// ```
    pub fn read_par(
        cols: ParColumns,
        open: impl Fn() -> Result<ParColumns>,
        spellings: &Spellings,
        threads: usize,
        views: bool,
    ) -> Result<InferredColumns> {
        let sample = default_sample_rows(cols.names().len());
        InferredColumns::read_par_sampling(cols, open, spellings, threads, views, sample)
    }

    /// [`InferredColumns::read_par`] with the candidates taken from the
    /// first `sample` rows (a matter of speed only, as in
    /// [`InferredColumns::read_sampling`]).
    pub fn read_par_sampling(
        cols: ParColumns,
        open: impl Fn() -> Result<ParColumns>,
        spellings: &Spellings,
        threads: usize,
        views: bool,
        sample: usize,
    ) -> Result<InferredColumns> {
        speculate(cols, open, spellings, threads, views, sample)
    }

    /// [`InferredColumns::read`] for an input that can be read again (a
    /// file, say) on one thread: `cols` (no types set, not yet read),
    /// which `open` opens again the same way when the input must be read
    /// a second time. As [`InferredColumns::read_par`] does, it reads the
    /// input with the candidate types of the first rows, converting each
    /// value as it is read (no text column in between), and holds only
    /// typed columns; only when a value does not fit its candidate is the
    /// input read again, whole, as [`InferredColumns::read`] reads it.
    /// The types are the same either way. `threads` is used for that
    /// second look only.
    ///
    /// ```
    /// use fastcsv::arrow::{Columns, DataType, InferredColumns, Spellings};
    /// let text = b"n,late\n1,1\n2,x\n";
    /// let open = || Columns::new(fastcsv::Reader::from_slice(text));
    /// let sp = Spellings::default();
    /// let t = InferredColumns::read_again(open().unwrap(), open, &sp, 1, false).unwrap();
    /// assert_eq!(t.types(), [DataType::Int64, DataType::Utf8]);
    /// ```
    pub fn read_again<'a>(
        cols: Columns<'a>,
        open: impl Fn() -> Result<Columns<'a>>,
        spellings: &Spellings,
        threads: usize,
        views: bool,
    ) -> Result<InferredColumns> {
        let sample = default_sample_rows(cols.names().len());
        speculate(cols, open, spellings, threads, views, sample)
    }

    /// The column names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The columns' types, settled on every value.
    pub fn types(&self) -> Vec<DataType> {
        self.types.clone()
    }

    /// The next batch; `None` at the end. The source's error, if any,
    /// comes after the batches before it, once.
    pub fn next_batch(&mut self) -> Result<Option<ColumnBatch>> {
        match self.batches.pop_front() {
            Some(b) => Ok(Some(b)),
            None => match self.error.take() {
                Some(e) => Err(e),
                None => Ok(None),
            },
        }
    }
}

/// A source of text columns that can be read with candidate types (see
/// [`InferredColumns::read_par`]).
pub(crate) trait Speculative: BatchSource {
    /// Sets the spellings, and returns what the first `sample` rows fit.
    fn sample(&mut self, spellings: &Spellings, sample: usize) -> Result<Vec<Fits>>;
    /// Sets the spellings only (on a source opened again).
    fn spell(&mut self, spellings: &Spellings);
    /// Reads on with `types` (text columns as `utf8`).
    fn candidates(&mut self, types: Vec<DataType>) -> Result<()>;
    /// Whether rows sampled may not have been the input's (see
    /// [`ParColumns::replanned`]).
    fn resampled(&self) -> bool {
        false
    }
}

impl Speculative for ParColumns {
    fn sample(&mut self, spellings: &Spellings, sample: usize) -> Result<Vec<Fits>> {
        self.set_spellings(spellings.clone());
        // Candidates only: the first rows of the first parts, read at once
        // (see `sample_fits_spread`).
        self.sample_fits_spread(sample)
    }
    fn spell(&mut self, spellings: &Spellings) {
        self.set_spellings(spellings.clone());
    }
    fn candidates(&mut self, types: Vec<DataType>) -> Result<()> {
        self.set_types(types)?;
        self.string_view(false);
        Ok(())
    }
    fn resampled(&self) -> bool {
        self.replanned()
    }
}

impl Speculative for Columns<'_> {
    fn sample(&mut self, spellings: &Spellings, sample: usize) -> Result<Vec<Fits>> {
        self.set_spellings(spellings.clone());
        // The sampled rows in a batch of their own, read as text (as a
        // part's sample is read, see `ParColumns::sample_fits_spread`):
        // the rows after them are converted as read once the candidates
        // are set, not held as text to the end of a whole first batch.
        let rows = self.fill.batch_rows;
        self.fill.batch_rows = rows.min(sample.max(1));
        let fits = self.sample_fits(sample);
        self.fill.batch_rows = rows;
        self.fill.last_rows = rows;
        fits
    }
    fn spell(&mut self, spellings: &Spellings) {
        self.set_spellings(spellings.clone());
    }
    fn candidates(&mut self, types: Vec<DataType>) -> Result<()> {
        self.set_types(types)?;
        self.string_view(false);
        Ok(())
    }
}

/// [`InferredColumns::read_par`]'s way over any [`Speculative`] source.
fn speculate<S: Speculative>(
    mut cols: S,
    open: impl Fn() -> Result<S>,
    spellings: &Spellings,
    threads: usize,
    views: bool,
    sample: usize,
) -> Result<InferredColumns> {
    let fits = cols.sample(spellings, sample)?;
    // A column whose sampled values were all null stays text until
    // its values are all seen.
    let unsure: Vec<bool> = fits.iter().map(|f| !f.seen_value()).collect();
    let mut types: Vec<DataType> = fits.iter().map(Fits::data_type).collect();
    cols.candidates(types.clone())?;
    let names = cols.names().to_vec();
    let width = names.len();
    let mut texts = Vec::new();
    let mut error = None;
    loop {
        match cols.next_batch() {
            Ok(Some(b)) => texts.push(b),
            Ok(None) => break,
            Err(e) if matches!(e.kind(), ErrorKind::Value { .. }) => {
                // A value wider than its candidate: every value looked
                // at, from the text.
                drop((texts, cols));
                let mut again = open()?;
                again.spell(spellings);
                return InferredColumns::read_sampling(again, spellings, threads, views, sample);
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let changed = error.as_ref().is_some_and(|e| matches!(e.kind(), ErrorKind::FileChanged));
    if cols.resampled() && !changed {
        // Candidates perhaps from rows that were not the file's: every
        // value looked at, from the text. (Not where the file changed
        // since: a second read would give the rows of another file
        // without that error.)
        drop((texts, cols));
        let mut again = open()?;
        again.spell(spellings);
        return InferredColumns::read_sampling(again, spellings, threads, views, sample);
    }
    drop(cols);
    let nb = texts.len();
    let text = |k: usize, j: usize| texts[k].columns.get(j).and_then(Column::as_utf8);
    let tasks = type_whole(threads, nb, &unsure, &mut types, text, spellings)?;
    let tasks: Vec<(usize, usize)> =
        tasks.into_iter().filter(|&(_, j)| types[j] != DataType::Utf8).collect();
    let out = par_map(threads, tasks.clone(), |(k, j)| {
        text(k, j).and_then(|c| convert::convert(c, types[j], j, spellings).ok())
    })?;
    let mut converted: Vec<Option<Column>> = (0..nb * width).map(|_| None).collect();
    for ((k, j), c) in tasks.into_iter().zip(out) {
        match c {
            Some(c) => converted[k * width + j] = Some(c),
            None if error.is_none() => {
                error = Some(Error::config(format!(
                    "column {j}'s values changed type on a second look"
                )));
            }
            None => {}
        }
    }
    let batches = place(texts, converted, views, threads)?;
    Ok(InferredColumns { names, types, batches, error })
}

impl BatchSource for InferredColumns {
    fn names(&self) -> &[String] {
        InferredColumns::names(self)
    }
    fn types(&self) -> Vec<DataType> {
        InferredColumns::types(self)
    }
    fn next_batch(&mut self) -> Result<Option<ColumnBatch>> {
        InferredColumns::next_batch(self)
    }
}

/// The batches `texts` with the columns `converted` (batch by batch, one
/// slot a column) in place of their text, which is let go; the text left
/// as `utf8_view` when `views`.
fn place(
    texts: Vec<ColumnBatch>,
    converted: Vec<Option<Column>>,
    views: bool,
    threads: usize,
) -> Result<VecDeque<ColumnBatch>> {
    let width = texts.first().map_or(0, |b| b.columns.len());
    let mut slots = converted.into_iter();
    let jobs: Vec<(ColumnBatch, Vec<Option<Column>>)> =
        texts.into_iter().map(|b| (b, slots.by_ref().take(width).collect())).collect();
    let batches = par_map(threads, jobs, |(mut b, typed)| {
        for (c, t) in b.columns.iter_mut().zip(typed) {
            match t {
                Some(t) => *c = t,
                None if views && matches!(c, Column::Utf8(_)) => {
                    if let Column::Utf8(s) = std::mem::replace(c, empty()) {
                        *c = Column::Utf8View(ViewColumn::from_strings(s));
                    }
                }
                None => {}
            }
        }
        b
    })?;
    Ok(batches.into())
}

/// An empty text column, to move a column out of its place.
fn empty() -> Column {
    Column::Utf8(StringColumn::new(0))
}

/// Types each column marked in `unsure` by all its values (the text of
/// batch `k`, column `j`, from `text`), the batches' columns looked at on
/// up to `threads` threads; returns the (batch, column) pairs of those
/// columns, batch by batch.
fn type_whole<'t>(
    threads: usize,
    nb: usize,
    unsure: &[bool],
    types: &mut [DataType],
    text: impl Fn(usize, usize) -> Option<&'t StringColumn> + Sync,
    spellings: &Spellings,
) -> Result<Vec<(usize, usize)>> {
    let width = unsure.len();
    let tasks: Vec<(usize, usize)> =
        (0..width).filter(|&j| unsure[j]).flat_map(|j| (0..nb).map(move |k| (k, j))).collect();
    let parts = par_map(threads, tasks.clone(), |(k, j)| {
        let mut f = Fits::ALL;
        if let Some(c) = text(k, j) {
            f.see_column(c, spellings);
        }
        f
    })?;
    let mut whole = vec![Fits::ALL; width];
    for (&(_, j), f) in tasks.iter().zip(parts) {
        whole[j] = whole[j].merge(f);
    }
    for j in (0..width).filter(|&j| unsure[j]) {
        types[j] = whole[j].data_type();
    }
    Ok(tasks)
}

/// `f` over `items` on up to `threads` threads (the calling thread one
/// of them), results in order; a worker's panic is an error.
fn par_map<T: Send, U: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> U + Sync,
) -> Result<Vec<U>> {
    let n = items.len();
    let threads = threads.min(n);
    if threads <= 1 {
        return Ok(items.into_iter().map(f).collect());
    }
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let out: Vec<Mutex<Option<U>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let lock = |m: &Mutex<Option<T>>| m.lock().unwrap_or_else(|e| e.into_inner()).take();
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = items.get(k) else { break };
        if let Some(t) = lock(slot) {
            let u = f(t);
            *out[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(u);
        }
    };
    let work = &work;
    // The calling thread works too (a panic of its own goes on
    // unwinding, as `pool::scope` has it).
    pool::scope("infer", threads - 1, work, |_| work())
        .map_err(|p| pool::panic_error("type inference", &p))?;
    Ok(out
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every item was mapped"))
        .collect())
}
