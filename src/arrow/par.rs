//! The columns of one file built on several threads, one part each (see
//! [`crate::split`]), handed out in the file's order.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::infer::Fits;
use super::{ColumnBatch, Columns, DataType, Filler, Spellings, DEFAULT_BATCH_ROWS};
use crate::error::{ColumnsFrom, Error, ErrorKind, Position, Result};
use crate::part::Part;
use crate::pool;
use crate::reader::{Reader, ReaderBuilder};
use crate::split::Splitter;

/// What a worker sends for a part: a batch, the part's end with the lines
/// and records it held, or the error that ends it. A later part is read
/// with lines and records counted from its start: the reader adds those
/// of the parts before.
enum Item {
    Batch(ColumnBatch),
    End { lines: u64, records: u64 },
    Error(Error),
}

/// What the workers and the reader share.
struct Shared {
    /// The part being handed out; a worker starts part `k` only once
    /// `k < current + window`, which bounds the batches held.
    current: Mutex<usize>,
    moved: Condvar,
    stop: AtomicBool,
    next: AtomicUsize,
    /// Per part, the columns a sample read from its start (see
    /// `ParColumns::sample_fits_spread`), their rows kept as text: the
    /// part's worker reads on from there rather than read them again.
    sampled: Mutex<Vec<Option<Columns<'static>>>>,
}

/// [`Columns`] of one file built on several threads.
///
/// The file is cut into parts at record starts, each part's columns are
/// built by a worker thread, and the batches come out in the file's
/// order. A cut whose nearby bytes hold no quote, escape or comment byte
/// is placed by a guess of its state (see `Splitter::guessed_split_path`:
/// no pass over the file before the workers start), which the reader of
/// the part that ends there checks at its end; where a guess proves
/// wrong, the rest of the file is read in the exact parts of
/// [`Splitter::split_path`], from the record that ran past it. Either
/// way: the rows, names and errors of a [`Columns`] over the whole file
/// (an error ends the batches, after the rows before it). Batches do not span parts: each part's last batch may
/// hold fewer than `batch_rows`. At most `threads + 1` parts' batches are
/// held at a time.
///
/// ```
/// use fastcsv::{arrow::ParColumns, ReaderBuilder};
/// let p = std::env::temp_dir().join("fastcsv-doc-par-columns.csv");
/// let mut text = String::from("n,sq\n");
/// for i in 0..10_000 {
///     text.push_str(&format!("{i},{}\n", i * i));
/// }
/// std::fs::write(&p, &text).unwrap();
/// let mut cols = ParColumns::from_path(&ReaderBuilder::new(), &p, false, 3, 4096).unwrap();
/// assert_eq!(cols.names(), ["n", "sq"]);
/// let mut rows = 0;
/// while let Some(b) = cols.next_batch().unwrap() {
///     assert_eq!(b.strings(0).get(0).parse::<usize>().unwrap(), rows);
///     rows += b.rows();
/// }
/// assert_eq!(rows, 10_000);
/// ```
pub struct ParColumns {
    names: Vec<String>,
    parts: usize,
    threads: usize,
    /// Until the workers start.
    job: Option<Job>,
    rx: Option<mpsc::Receiver<(usize, Item)>>,
    pending: BTreeMap<usize, VecDeque<Item>>,
    /// Lines and records of the parts handed out.
    before: (u64, u64),
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    done: bool,
    /// The types, once the workers have started (before, the job's).
    types: Vec<DataType>,
    /// Per part: it ends at a guessed bound (see
    /// [`Splitter::guessed_split_path`]), which its reader checks.
    guessed: Vec<bool>,
    /// The job the workers run, once started.
    running: Option<Arc<Job>>,
    /// The file's size when it was split, and the parts' size asked for.
    size: u64,
    part_bytes: u64,
    /// See [`ParColumns::replanned`].
    replanned: bool,
}

impl ParColumns {
    /// Columns of the file at `path`, read with `builder`'s settings on
    /// `threads` threads, in parts of about `part_bytes` bytes. Named as
    /// [`Columns::with_header_row`] names them (by the reader's header
    /// row, by the first non-empty record when `header_row`, or
    /// numbered). Reads the header (or first record) now: an error before
    /// any row fails here when the first part holds it (when that part
    /// has no row, the first `next_batch` returns it).
    pub fn from_path(
        builder: &ReaderBuilder,
        path: impl AsRef<Path>,
        header_row: bool,
        threads: usize,
        part_bytes: u64,
    ) -> Result<ParColumns> {
        ParColumns::open(builder, path.as_ref(), header_row, None, threads, part_bytes)
    }

    /// [`ParColumns::from_path`] for a file whose dialect has no headers,
    /// its columns named `names` as [`Columns::with_names`] names them:
    /// their number is fixed by the names in every part (with a flexible
    /// dialect, a shorter record is padded, a longer one is an error).
    ///
    /// ```
    /// use fastcsv::arrow::ParColumns;
    /// use fastcsv::{Dialect, ReaderBuilder};
    /// let p = std::env::temp_dir().join("fastcsv-doc-par-named.csv");
    /// std::fs::write(&p, "1\n2,3\n4,5\n").unwrap();
    /// let mut b = ReaderBuilder::new();
    /// b.dialect(Dialect::builder().headers(false).flexible(true).build().unwrap());
    /// let names = vec!["a".to_string(), "b".to_string()];
    /// let mut cols = ParColumns::from_path_named(&b, &p, names, 2, 4).unwrap();
    /// assert_eq!(cols.names(), ["a", "b"]);
    /// let mut rows = 0;
    /// while let Some(batch) = cols.next_batch().unwrap() {
    ///     rows += batch.rows();
    /// }
    /// assert_eq!(rows, 3);
    /// ```
    pub fn from_path_named(
        builder: &ReaderBuilder,
        path: impl AsRef<Path>,
        names: Vec<String>,
        threads: usize,
        part_bytes: u64,
    ) -> Result<ParColumns> {
        ParColumns::open(builder, path.as_ref(), false, Some(names), threads, part_bytes)
    }

    fn open(
        builder: &ReaderBuilder,
        path: &Path,
        header_row: bool,
        given: Option<Vec<String>>,
        threads: usize,
        part_bytes: u64,
    ) -> Result<ParColumns> {
        let path = path.to_path_buf();
        let sp = splitter(builder, threads)?;
        let size = std::fs::metadata(&path).map_err(|e| Error::from(e).with_path(&path))?.len();
        // Bounds guessed where the bytes near a cut hold no quote, escape
        // or comment byte: no pass over the whole file before the workers
        // start. Each guess is checked by the reader of the part that ends
        // there, and placed again exactly if wrong (`ParColumns::replan`).
        let (parts, guessed) = match sp.guessed_split_path(&path, part_bytes)? {
            Some(found) => found,
            None => {
                let parts = exact_parts(&sp, &path, part_bytes)?;
                let n = parts.len();
                (parts, vec![false; n])
            }
        };
        // Every CPU has a part: no helper thread maps pages ahead (nor
        // for the names, which take the first records only).
        let mut part_builder = builder.clone();
        part_builder.read_ahead(false);
        let first = part_builder.from_path_part(&path, &parts[0])?;
        // An error before any row fails here as it does for `Columns`,
        // when it is in the first part (one in a later part comes from
        // `next_batch`).
        let named = given.is_some();
        let names = match given {
            Some(names) => Columns::with_names(first, names)?.names().to_vec(),
            None => Columns::with_header_row(first, header_row)?.names().to_vec(),
        };
        let job = Job {
            builder: part_builder,
            path,
            parts,
            names: names.clone(),
            header_row,
            named,
            window: threads.max(1) + 1,
            batch_rows: DEFAULT_BATCH_ROWS,
            types: Vec::new(),
            views: false,
            select: None,
            spellings: Spellings::default(),
        };
        Ok(ParColumns {
            names,
            parts: job.parts.len(),
            threads: threads.clamp(1, job.parts.len()),
            job: Some(job),
            rx: None,
            pending: BTreeMap::new(),
            before: (0, 0),
            shared: Arc::new(Shared {
                current: Mutex::new(0),
                moved: Condvar::new(),
                stop: AtomicBool::new(false),
                next: AtomicUsize::new(0),
                sampled: Mutex::new(Vec::new()),
            }),
            workers: Vec::new(),
            done: false,
            types: Vec::new(),
            guessed,
            running: None,
            size,
            part_bytes,
            replanned: false,
        })
    }

    /// Starts the workers (at the first batch asked for).
    fn start(&mut self) {
        let Some(job) = self.job.take() else { return };
        self.types = job.types.clone();
        let job = Arc::new(job);
        self.running = Some(job.clone());
        let (tx, rx) = mpsc::channel();
        self.rx = Some(rx);
        for _ in 0..self.threads {
            let (job, shared, tx) = (job.clone(), self.shared.clone(), tx.clone());
            // A worker that cannot be started leaves the parts to the
            // others; with none, the first batch reports that they stopped.
            match pool::spawn("columns", move || job.work(&shared, &tx)) {
                Ok(w) => self.workers.push(w),
                Err(_) => break,
            }
        }
    }

    /// Rows per batch (at least 1; default [`DEFAULT_BATCH_ROWS`]); set
    /// before the first batch is read (the workers start then).
    pub fn batch_rows(&mut self, n: usize) -> &mut Self {
        if let Some(job) = &mut self.job {
            job.batch_rows = n.max(1);
        }
        self.forget_sample();
        self
    }

    /// Lets go of the columns a sample read (see `Shared::sampled`): they
    /// were set up as the job was then.
    fn forget_sample(&self) {
        self.shared.sampled.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The column names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Converts the columns to `types`, as [`Columns::set_types`] does;
    /// set before the first batch is read (the workers start then), when
    /// it fails otherwise.
    pub fn set_types(&mut self, types: Vec<DataType>) -> Result<&mut Self> {
        let Some(job) = &mut self.job else {
            return Err(Error::config("the types are set before the first batch"));
        };
        super::check_width(&types, &self.names)?;
        job.types = types;
        Ok(self)
    }

    /// Gives text columns as `utf8_view`, as [`Columns::string_view`]
    /// does, the views built by the workers; set before the first batch.
    pub fn string_view(&mut self, on: bool) -> &mut Self {
        if let Some(job) = &mut self.job {
            job.views = on;
        }
        self
    }

    /// Keeps only the columns `cols`, as [`Columns::select`] does (the
    /// workers visit only their fields); set before the first batch, and
    /// before the types (which are then the selected columns').
    pub fn select(&mut self, cols: &[usize]) -> Result<&mut Self> {
        let Some(job) = &mut self.job else {
            return Err(Error::config("the columns are selected before the first batch"));
        };
        if job.select.is_some() {
            return Err(Error::config("the columns are selected once"));
        }
        super::check_selection(cols, self.names.len())?;
        if !job.types.is_empty() {
            job.types = cols.iter().map(|&j| job.types[j]).collect();
        }
        self.names = cols.iter().map(|&j| self.names[j].clone()).collect();
        job.select = Some(cols.to_vec());
        self.forget_sample();
        Ok(self)
    }

    /// How typed columns spell nulls, trues and falses, as
    /// [`Columns::set_spellings`] says; set before the first batch and
    /// before [`ParColumns::infer_types`].
    pub fn set_spellings(&mut self, spellings: Spellings) -> &mut Self {
        if let Some(job) = &mut self.job {
            job.spellings = spellings;
        }
        self.forget_sample();
        self
    }

    /// The columns' types.
    pub fn types(&self) -> Vec<DataType> {
        let given = self.job.as_ref().map_or(&self.types, |j| &j.types);
        (0..self.names.len()).map(|j| given.get(j).copied().unwrap_or(DataType::Utf8)).collect()
    }

    /// Sets the types to those the first `rows` rows of the file fit, as
    /// [`Columns::infer_types`] does, and returns them: those rows are
    /// read for it now (from as many parts as they span), and again by the
    /// workers.
    pub fn infer_types(&mut self, rows: usize) -> Result<Vec<DataType>> {
        // The sample reads on from part to part: past exact bounds only
        // (its rows decide the types).
        self.exact_bounds()?;
        let types: Vec<DataType> = self.sample_fits(rows)?.iter().map(Fits::data_type).collect();
        self.set_types(types.clone())?;
        Ok(types)
    }

    /// What the values of each column's first `rows` rows fit (in as
    /// many parts as they span, read for it now, one after the other), as
    /// [`Columns::infer_types`] sees them. An error ends the sample (the
    /// rows before it count), as in one reader of the file.
    pub(crate) fn sample_fits(&self, rows: usize) -> Result<Vec<Fits>> {
        self.sample_fits_in(rows, usize::MAX)
    }

    /// [`ParColumns::sample_fits`] over the first `parts` parts at most:
    /// fewer rows where they hold fewer. A sample that only proposes
    /// types, which every value then checks (`InferredColumns::read_par`),
    /// takes the first part's rows alone: its worker is the only one to
    /// read them again, and a sample read on into the next part (a file
    /// of long rows) would make every worker wait for it.
    pub(crate) fn sample_fits_in(&self, rows: usize, parts: usize) -> Result<Vec<Fits>> {
        let Some(job) = &self.job else {
            return Err(Error::config("the types are set before the first batch"));
        };
        let mut fits: Option<Vec<Fits>> = None;
        let mut left = rows;
        for (k, part) in job.parts.iter().enumerate().take(parts) {
            let rdr = job.builder.from_path_part(&job.path, part)?;
            let mut cols = job.columns(k, rdr, None)?;
            let got = cols.sample_fits_on(left, self.threads)?;
            fits = Some(match fits {
                None => got,
                Some(before) => before.into_iter().zip(got).map(|(a, b)| a.merge(b)).collect(),
            });
            let seen: usize = cols.fill.ready.iter().map(|(b, _)| b.rows).sum();
            left = left.saturating_sub(seen);
            if left == 0 || cols.error.is_some() {
                break;
            }
        }
        Ok(fits.unwrap_or_default())
    }

    /// What the values of about `rows` rows fit, to propose types that
    /// every value then checks (`InferredColumns::read_par`): the first
    /// rows of each of the first parts, one part per thread, read at
    /// once (each part's worker reads its rows again, as the first
    /// part's alone did when the sample was that part's). An error
    /// before any row of the first part is the read's; one in a later
    /// part only ends that part's sample (its worker reports it in the
    /// file's order).
    pub(crate) fn sample_fits_spread(&self, rows: usize) -> Result<Vec<Fits>> {
        let Some(job) = &self.job else {
            return Err(Error::config("the types are set before the first batch"));
        };
        let n = self.threads.min(job.parts.len());
        if n <= 1 {
            return self.sample_fits_in(rows, 1);
        }
        let each = rows.div_ceil(n);
        let ks: Vec<usize> = (0..n).collect();
        let got = pool::map_on("sample", n, &ks, |&k| {
            let one = || -> Result<(Vec<Fits>, Columns<'static>)> {
                // Read as the part's worker reads it (`Job::part_read`),
                // which then reads on from these columns.
                let rdr = job.builder.from_path_part(&job.path, &job.part_read(k))?;
                let mut cols = job.columns_sampling(k, rdr, each)?;
                Ok((cols.sample_fits_on(each, 1)?, cols))
            };
            Ok(one())
        })?;
        let mut fits: Option<Vec<Fits>> = None;
        let mut sampled = self.shared.sampled.lock().unwrap_or_else(|e| e.into_inner());
        sampled.clear();
        for (k, got) in got.into_iter().enumerate() {
            let got = match got {
                Ok((f, cols)) => {
                    sampled.push(Some(cols));
                    f
                }
                Err(e) if k == 0 => return Err(e),
                Err(_) => {
                    sampled.push(None);
                    continue;
                }
            };
            fits = Some(match fits {
                None => got,
                Some(before) => before.into_iter().zip(got).map(|(a, b)| a.merge(b)).collect(),
            });
        }
        Ok(fits.unwrap_or_default())
    }

    /// Before the workers start: the parts' bounds placed exactly where
    /// any was guessed.
    fn exact_bounds(&mut self) -> Result<()> {
        let Some(job) = &mut self.job else { return Ok(()) };
        if !self.guessed.contains(&true) {
            return Ok(());
        }
        job.parts =
            exact_parts(&splitter(&job.builder, self.threads)?, &job.path, self.part_bytes)?;
        // A sample's columns were read from the parts as they were.
        self.shared.sampled.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.parts = job.parts.len();
        self.guessed = vec![false; self.parts];
        self.threads = self.threads.clamp(1, self.parts);
        Ok(())
    }

    /// Whether a guessed bound proved wrong and the rest of the file was
    /// read in exact parts (see [`Splitter::guessed_split_path`]): the
    /// first rows of the parts after it, sampled before the workers
    /// started (`sample_fits_spread`), may not have been the file's rows.
    pub(crate) fn replanned(&self) -> bool {
        self.replanned
    }

    /// The next batch in the file's order; `None` at the end. After an
    /// error, `None`.
    pub fn next_batch(&mut self) -> Result<Option<ColumnBatch>> {
        self.start();
        loop {
            if self.done {
                return Ok(None);
            }
            let current = *self.shared.lock();
            if current == self.parts {
                self.finish();
                return Ok(None);
            }
            if let Some(item) = self.pending.get_mut(&current).and_then(|q| q.pop_front()) {
                match item {
                    Item::Batch(b) => return Ok(Some(b)),
                    Item::End { lines, records } => {
                        self.before.0 += lines;
                        self.before.1 += records;
                        self.pending.remove(&current);
                        *self.shared.lock() += 1;
                        self.shared.moved.notify_all();
                    }
                    Item::Error(e) => {
                        let e = shift(e, self.before);
                        if self.guessed.get(current) == Some(&true)
                            && matches!(e.kind(), ErrorKind::FileChanged)
                        {
                            // The guess that ends this part may be wrong:
                            // the rest is read in exact parts (or, if the
                            // file did change, that is reported).
                            if let Err(e) = self.replan(current, e) {
                                self.finish();
                                return Err(e);
                            }
                            continue;
                        }
                        self.finish();
                        return Err(e);
                    }
                }
                continue;
            }
            let got = self.rx.as_ref().map(|rx| rx.recv());
            match got {
                Some(Ok((k, item))) => self.pending.entry(k).or_default().push_back(item),
                _ => {
                    // Every worker is gone without this part's end.
                    self.finish();
                    return Err(Error::config("a worker thread building columns stopped"));
                }
            }
        }
    }

    /// After part `current`'s reader found no record ending at the
    /// guessed bound that ends the part (`e`, a
    /// [`ErrorKind::FileChanged`] at the start of the record that ran past
    /// it, the rows before which were handed out): stops the workers and
    /// starts them again on the rest of the file from that record, in
    /// parts with exact bounds ([`Splitter::split_path`]'s). A file whose
    /// size is not the one split did change: `e` is returned.
    fn replan(&mut self, current: usize, e: Error) -> Result<()> {
        let (Some(pos), Some(job)) = (e.position(), self.running.take()) else {
            return Err(e);
        };
        self.stop_workers();
        let size = std::fs::metadata(&job.path).map(|m| m.len()).ok();
        if size != Some(self.size) || pos.byte < job.parts[current].start {
            // The file did change: reported, not read again.
            return Err(e);
        }
        self.replanned = true;
        let exact =
            exact_parts(&splitter(&job.builder, self.threads)?, &job.path, self.part_bytes)?;
        // Part `current` now ends at that record (a record start: every
        // row before it was read from one), and counts as handed out: the
        // first part (which names the columns) is never read again. Then
        // from that record to the first exact bound after it, and the
        // exact parts from there.
        let mut parts: Vec<Part> = job.parts[..=current].to_vec();
        parts[current].end = pos.byte;
        let width =
            exact.iter().find(|p| p.start > 0).map_or(job.parts[current].width, |p| p.width);
        let mut start = pos.byte;
        for p in exact.iter().filter(|p| p.end > pos.byte) {
            let index = parts.len();
            parts.push(Part { index, start, end: p.end, lines: 0, records: 0, width });
            start = p.end;
        }
        if parts.len() == current + 1 {
            // The record ran to the file's end.
            let index = parts.len();
            parts.push(Part { index, start, end: self.size, lines: 0, records: 0, width });
        }
        // The lines and records before that record.
        self.before = (pos.line.saturating_sub(1), pos.record);
        self.guessed = vec![false; parts.len()];
        self.parts = parts.len();
        self.threads = self.threads.clamp(1, parts.len() - current - 1);
        self.shared = Arc::new(Shared {
            current: Mutex::new(current + 1),
            moved: Condvar::new(),
            stop: AtomicBool::new(false),
            next: AtomicUsize::new(current + 1),
            sampled: Mutex::new(Vec::new()),
        });
        let mut job = Job::clone(&job);
        job.parts = parts;
        self.job = Some(job);
        self.start();
        Ok(())
    }

    /// Stops the workers and waits for them.
    fn finish(&mut self) {
        self.done = true;
        self.stop_workers();
    }

    /// Stops the workers and waits for them; what they sent is dropped.
    fn stop_workers(&mut self) {
        {
            // Under the lock: a worker between its check of `stop` and its
            // wait would otherwise miss the wake-up, and the join below
            // would wait for it forever.
            let _current = self.shared.lock();
            self.shared.stop.store(true, Ordering::Relaxed);
        }
        self.shared.moved.notify_all();
        self.rx = None;
        self.pending.clear();
        for w in self.workers.drain(..) {
            // A worker's panic was sent as an error already.
            let _ = pool::join(w);
        }
    }
}

/// The splitter of a file read with `builder`'s dialect on `threads`
/// threads (the first non-empty record always lies in the first part).
fn splitter(builder: &ReaderBuilder, threads: usize) -> Result<Splitter> {
    let d = builder.dialect_ref().to_builder().headers(true).build()?;
    Ok(Splitter::new(&d).threads(threads.max(1)))
}

/// The parts of the file at `path` (ranges of `part_bytes`) with exact
/// bounds, as [`ParColumns`] reads them where none is guessed.
fn exact_parts(sp: &Splitter, path: &Path, part_bytes: u64) -> Result<Vec<Part>> {
    match sp.quick_split_path(path, part_bytes)? {
        Some(parts) => Ok(parts),
        None => sp.split_path(path, part_bytes),
    }
}

/// `e` with the lines and records before its part added to its position.
fn shift(e: Error, (lines, records): (u64, u64)) -> Error {
    match e.position() {
        Some(p) if lines + records > 0 => e.with_position(Position {
            byte: p.byte,
            line: p.line + lines,
            record: p.record + records,
        }),
        _ => e,
    }
}

impl Drop for ParColumns {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What every worker needs.
#[derive(Clone)]
struct Job {
    builder: ReaderBuilder,
    path: PathBuf,
    parts: Vec<Part>,
    names: Vec<String>,
    header_row: bool,
    /// The columns are named by the caller (`names`), not the file.
    named: bool,
    window: usize,
    batch_rows: usize,
    types: Vec<DataType>,
    views: bool,
    /// The columns selected, if not all.
    select: Option<Vec<usize>>,
    spellings: Spellings,
}

/// Rows and bytes per row of each column of a batch (see [`Job::part`]).
#[derive(Default)]
struct Shape {
    rows: usize,
    per_row: Vec<f64>,
}

impl Filler {
    /// Makes the first batch with room for `rows` rows (at most a batch)
    /// of `per_row` bytes a column, as if a batch of that shape came
    /// before: a part of a file read by `ParColumns` then fills its first
    /// batch without growing its columns (a copy of each) from the
    /// small guess a new input starts with. Nothing once a batch is made.
    fn expect(&mut self, rows: usize, per_row: &[f64]) {
        if self.last_rows == 0 && self.carry.is_none() && self.ready.is_empty() && rows > 0 {
            self.last_rows = rows;
            self.per_row = per_row.to_vec();
        }
    }
}

impl Job {
    /// The columns of part `k`, read by `rdr`: named by the file's header
    /// (or first record) in the first part, unless named by the caller,
    /// and set up as the job says (rows per batch, selection, spellings;
    /// with `shape`, for a worker, the types, the string views and the
    /// first batch's room). The setup comes before the first rows are
    /// read wherever the names are known by then, so that those rows are
    /// built as any later batch is (typed columns converted as read).
    fn columns(
        &self,
        k: usize,
        rdr: Reader<'static>,
        shape: Option<&Shape>,
    ) -> Result<Columns<'static>> {
        self.columns_of(k, rdr, shape, self.batch_rows)
    }

    /// [`Job::columns`] for a sample of `rows` rows: batches of at most
    /// that many, so that no more are read for it.
    fn columns_sampling(
        &self,
        k: usize,
        rdr: Reader<'static>,
        rows: usize,
    ) -> Result<Columns<'static>> {
        self.columns_of(k, rdr, None, self.batch_rows.min(rows.max(1)))
    }

    fn columns_of(
        &self,
        k: usize,
        rdr: Reader<'static>,
        shape: Option<&Shape>,
        batch_rows: usize,
    ) -> Result<Columns<'static>> {
        let mut cols = if k == 0 && !self.named {
            Columns::unprimed(rdr, self.header_row, None)?
        } else if self.named {
            Columns::unprimed(rdr, false, Some((self.names.clone(), ColumnsFrom::Names)))?
        } else {
            // A later part: the names are the first part's header row
            // (or the count of its first record).
            let headers = self.header_row || self.builder.dialect_ref().headers();
            let from = if headers { ColumnsFrom::Header } else { ColumnsFrom::FirstRecord };
            Columns::unprimed(rdr, false, Some((self.names.clone(), from)))?
        };
        // Names from the first record: known once it is read.
        cols.batch_rows(batch_rows);
        cols.set_spellings(self.spellings.clone());
        // The selection and types need the names: known once the first
        // record is read, when it names the columns.
        let first = cols.named_by_first;
        if first {
            cols.prime()?;
        }
        if let Some(s) = &self.select {
            cols.select(s)?;
        }
        if let Some(shape) = shape {
            cols.string_view(self.views);
            if !self.types.is_empty() {
                cols.set_types(self.types.clone())?;
            }
            cols.fill.expect(shape.rows, &shape.per_row);
        }
        if !first {
            cols.prime()?;
        }
        Ok(cols)
    }

    /// Part `k` as its worker reads it: lines and records counted from
    /// its start (see `Item`).
    fn part_read(&self, k: usize) -> Part {
        Part { lines: 0, records: 0, ..self.parts[k].clone() }
    }

    /// The columns a sample read from a part's start (as `columns_sampling`
    /// made them), set up as [`Job::columns`] sets up a worker's: the
    /// types and string views, and batches of `batch_rows` from now on
    /// (the next with room for that many rows). The rows read for the
    /// sample are held as text, and converted to the types as they are
    /// handed out, as [`Columns::infer_types`] has them.
    fn read_on(&self, mut cols: Columns<'static>) -> Result<Columns<'static>> {
        cols.string_view(self.views);
        if !self.types.is_empty() {
            cols.set_types(self.types.clone())?;
        }
        cols.fill.batch_rows = self.batch_rows;
        cols.fill.last_rows = self.batch_rows;
        Ok(cols)
    }

    fn work(&self, shared: &Shared, tx: &mpsc::Sender<(usize, Item)>) {
        // The shape of the fullest batch of this worker's parts so far.
        let mut shape = Shape::default();
        loop {
            let k = shared.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.parts.len() {
                return;
            }
            {
                let mut current = shared.lock();
                while k >= *current + self.window && !shared.stop.load(Ordering::Relaxed) {
                    current = shared.moved.wait(current).unwrap_or_else(|e| e.into_inner());
                }
            }
            if shared.stop.load(Ordering::Relaxed) {
                return;
            }
            let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.part(k, shared, tx, &mut shape)
            }));
            match sent {
                Ok(true) => {}
                Ok(false) => return,
                Err(_) => {
                    let e = Error::config("a worker thread building columns panicked");
                    let _ = tx.send((k, Item::Error(e)));
                    return;
                }
            }
        }
    }

    /// Sends part `k`'s batches; false when the reader has gone. Its
    /// first batch is made with room for `shape`'s rows and bytes (those
    /// of an earlier part's fullest batch), which it then updates.
    fn part(
        &self,
        k: usize,
        shared: &Shared,
        tx: &mpsc::Sender<(usize, Item)>,
        shape: &mut Shape,
    ) -> bool {
        let sampled = shared
            .sampled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(k)
            .and_then(Option::take);
        let made = match sampled {
            Some(cols) => self.read_on(cols),
            None => self
                .builder
                .from_path_part(&self.path, &self.part_read(k))
                .and_then(|rdr| self.columns(k, rdr, Some(shape))),
        };
        let mut cols = match made {
            Ok(c) => c,
            Err(e) => return tx.send((k, Item::Error(e))).is_ok(),
        };
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                return false;
            }
            let batch = cols.next_batch();
            if cols.fill.last_rows > shape.rows {
                shape.rows = cols.fill.last_rows;
                shape.per_row.clone_from(&cols.fill.per_row);
            }
            let (item, end) = match batch {
                Ok(Some(b)) => (Item::Batch(b), false),
                Ok(None) => {
                    let r = cols.reader();
                    (Item::End { lines: r.line(), records: r.records_read() }, true)
                }
                Err(e) => (Item::Error(e), true),
            };
            if tx.send((k, item)).is_err() {
                return false;
            }
            if end {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quoted field with line ends and no quote across many parts: the
    /// bounds inside it are guessed, wrong, and placed again; the rows
    /// are one reader's.
    #[test]
    fn a_wrong_guess_is_placed_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.csv");
        let mut text = String::from("a,b\n1,\"");
        while text.len() < 100 << 10 {
            text.push_str("x,y\n");
        }
        text.push_str("\"\n");
        while !(2048..8192).contains(&(text.len() % (16 << 10))) {
            text.push_str("2,z\n");
        }
        // (Long enough that the last parts, cut finer, lie far past the
        // closing quote.)
        for _ in 0..50_000 {
            text.push_str("3,w\n");
        }
        std::fs::write(&path, &text).unwrap();
        let mut par =
            ParColumns::from_path(&ReaderBuilder::new(), &path, false, 2, 16 << 10).unwrap();
        assert!(par.guessed.contains(&true));
        let mut rows = 0;
        while let Some(b) = par.next_batch().unwrap() {
            rows += b.rows();
        }
        assert!(par.replanned());
        let lines = text.lines().count();
        let inside = text.matches("x,y\n").count();
        assert_eq!(rows, lines - 1 - inside);
    }
}
