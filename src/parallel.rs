//! Reading one input on several threads: [`Reader::par_batches`] and
//! [`Reader::par_count`]; how it works is told on [`Parallel`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::pool;
use crate::reader::{Reader, ReaderBuilder, Src};
use crate::select::{Batch, Selection};
use crate::source::RELEASE_EVERY;
use crate::split::Splitter;

/// Default chunk size of a parallel read.
pub const PARALLEL_CHUNK: usize = 4 << 20;

/// How [`Reader::par_batches`] and [`Reader::par_count`] split their input.
///
/// The input (a slice or a mapped file) is cut into chunks of a few MiB,
/// and each chunk starts at the first record start at or after its cut,
/// found exactly by the splitter's automaton (the crate's grammar; see
/// [`crate::split`]): from the bytes just before each cut where they
/// decide the state there whatever came earlier, which is almost always,
/// else from a summary of every chunk. Nothing is guessed. A cut is found
/// when a worker first needs it, by that worker (the one about to parse
/// the chunk before it, whose bytes it searches for quotes): no pass over
/// the whole input comes before the first chunk is parsed. Each worker
/// thread takes the next chunk and parses it with an ordinary [`Reader`]
/// over the rest of the input, handing the caller's `work` the records
/// that start before the next chunk's start.
///
/// The calling thread still checks each chunk before handing it on: chunk
/// `k` is accepted only if its first record starts exactly where chunk
/// `k - 1`, itself accepted, saw the first record at or after chunk `k`'s
/// start (true by construction: both parses are at the start of the same
/// record). A chunk that met an error of any kind (a syntax error, a field
/// over the limit, a ragged row, an error of `work`), or whose mapped
/// file changed, is thrown away, the workers stop, and the reader itself
/// carries on alone, on the calling thread, from the last accepted record
/// start, with exact line and record numbers, and reports the error
/// there. So the records, the errors and their positions are always those
/// of a sequential [`Reader::read_batch`] loop; only the speed differs.
///
/// [`Reader::par_count`] counts each chunk over exactly the bytes from its
/// start to the next chunk's. Large mapped files give back the pages of
/// the records handed out, as a sequential read does; the file's size is
/// checked before each chunk is handed on (see `docs/reliability.md`).
///
/// ```
/// let p = fastcsv::Parallel::new().threads(3).chunk_size(1 << 20);
/// assert_eq!(p.thread_count(), 3);
/// assert_eq!(p.chunk_bytes(), 1 << 20);
/// ```
#[derive(Clone, Debug)]
pub struct Parallel {
    threads: usize,
    chunk: usize,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel::new()
    }
}

impl Parallel {
    /// As many threads as the machine has CPUs available to this process,
    /// chunks of [`PARALLEL_CHUNK`] bytes.
    ///
    /// ```
    /// assert!(fastcsv::Parallel::new().thread_count() >= 1);
    /// ```
    pub fn new() -> Parallel {
        Parallel { threads: pool::cpus(), chunk: PARALLEL_CHUNK }
    }

    /// Worker threads (at least 1; 1 reads on the calling thread alone).
    ///
    /// ```
    /// assert_eq!(fastcsv::Parallel::new().threads(0).thread_count(), 1);
    /// ```
    pub fn threads(mut self, n: usize) -> Parallel {
        self.threads = n.max(1);
        self
    }

    /// Bytes per chunk (at least 1). Inputs shorter than two chunks are
    /// read on the calling thread.
    ///
    /// ```
    /// assert_eq!(fastcsv::Parallel::new().chunk_size(0).chunk_bytes(), 1);
    /// ```
    pub fn chunk_size(mut self, n: usize) -> Parallel {
        self.chunk = n.max(1);
        self
    }

    /// The number of worker threads.
    pub fn thread_count(&self) -> usize {
        self.threads
    }

    /// The chunk size in bytes.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk
    }
}

/// How a [`Reader::par_batches`] call went.
///
/// ```
/// use fastcsv::{Parallel, Reader, Selection};
/// let mut rdr = Reader::from_slice(b"a\n1\n2\n");
/// let mut n = 0;
/// let ran = rdr
///     .par_batches(&Selection::new([]), &Parallel::new(), || 0u64,
///         |b, k: &mut u64| -> Result<(), fastcsv::Error> { *k += b.len() as u64; Ok(()) },
///         |k| { n += *k; *k = 0; Ok(()) })
///     .unwrap();
/// assert_eq!(n, 2);
/// assert_eq!(ran.chunks, 0); // too small to split: read on this thread
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParallelRun {
    /// Chunks parsed by worker threads and accepted.
    pub chunks: usize,
    /// Where the reader went on alone (a byte offset in the input): after
    /// a chunk that met an error (or a mapped file that changed). `None`
    /// when the workers read everything, or nothing was split.
    pub sequential_from: Option<u64>,
}

/// What a worker found in one chunk.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    /// Offset (in the parallel input) of the first record the worker
    /// parsed, or the input's length if none.
    first: usize,
    /// Offset of the first record at or after the next chunk's start, or
    /// the input's length.
    next: usize,
    /// Lines consumed before `first` and before `next`, counted from the
    /// worker's own start.
    lines_first: u64,
    lines_next: u64,
    /// Records from `first` up to `next`.
    records: u64,
    /// An error (of the input or of `work`) or a cancelled read.
    failed: bool,
}

/// A finished chunk.
struct ChunkOut<T> {
    meta: Meta,
    out: T,
}

struct Shared<T> {
    /// Next chunk to take.
    next: usize,
    /// Chunks handed to the sink.
    written: usize,
    done: Vec<Option<ChunkOut<T>>>,
    /// Emptied outputs, for reuse.
    pool: Vec<T>,
}

/// Where the sequential reader takes over.
struct Stop {
    at: usize,
    lines: u64,
    records: u64,
}

impl<'a> Reader<'a> {
    /// Reads the rest of the input like a [`Reader::read_batch`] loop
    /// (keeping the columns of `sel`), on several threads when the input
    /// is in memory (a slice or a mapped file) and at least two chunks
    /// long; [`Parallel`] tells how the input is split and why the result
    /// is always exact.
    ///
    /// Each worker calls `work` on its batches in input order, filling an
    /// output made by `make`; the calling thread passes the outputs to
    /// `sink` in input order, and `sink` should empty them (they are
    /// reused). Records and errors are those of a sequential read: an
    /// error is returned after `sink` has had the output of every record
    /// before it, with the position a sequential read gives (a chunk where
    /// `work` or the parser fails is read again on the calling thread).
    /// In `work`, a row's [`Position::byte`](crate::Position) is its offset
    /// in the input, but a chunk read ahead on a worker does not know how
    /// many records and lines come before it: there `record` and `line`
    /// count from the chunk's start. Number records in `sink` (which sees
    /// them in order) when the output needs their index. With one thread, a buffered source or a small
    /// input everything happens on the calling thread; `sink` is then
    /// called after every batch of a stream, and after about a chunk's
    /// worth of an input in memory.
    ///
    /// ```
    /// use fastcsv::{Parallel, Reader, Selection};
    /// let mut data = b"id,name\n".to_vec();
    /// for i in 0..10_000 {
    ///     data.extend_from_slice(format!("{i},\"n\n{i}\"\n").as_bytes());
    /// }
    /// let mut rdr = Reader::from_slice(&data);
    /// let mut names = Vec::new();
    /// let par = Parallel::new().threads(2).chunk_size(4096);
    /// let ran = rdr
    ///     .par_batches(
    ///         &Selection::new([1]),
    ///         &par,
    ///         Vec::new,
    ///         |b, out: &mut Vec<Vec<u8>>| -> Result<(), fastcsv::Error> {
    ///             out.extend(b.iter().map(|r| r.get(0).to_vec()));
    ///             Ok(())
    ///         },
    ///         |out| {
    ///             names.append(out);
    ///             Ok(())
    ///         },
    ///     )
    ///     .unwrap();
    /// assert_eq!(names.len(), 10_000);
    /// assert_eq!(names[9_999], b"n\n9999");
    /// assert!(ran.chunks > 1);
    /// assert_eq!(rdr.records_read(), 10_001);
    /// assert_eq!(rdr.line(), 20_001);
    /// ```
    pub fn par_batches<T, E, M, W, S>(
        &mut self,
        sel: &Selection,
        par: &Parallel,
        make: M,
        work: W,
        mut sink: S,
    ) -> std::result::Result<ParallelRun, E>
    where
        T: Send,
        E: From<Error> + Send,
        M: Fn() -> T + Sync,
        W: Fn(&Batch<'_>, &mut T) -> std::result::Result<(), E> + Sync,
        S: FnMut(&mut T) -> std::result::Result<(), E>,
    {
        let mut run = ParallelRun::default();
        if let Some(plan) = self.par_plan(par)? {
            let job = |ctx: &Ctx<'_, T>, s, stop, sel: &mut Selection, out: &mut T| {
                ctx.run_chunk(s, stop, sel, &work, out)
            };
            let mut accept = |out: &mut T| sink(out).map(|()| true);
            let (end, chunks) = self.par_run(&plan, sel, par, &make, &job, &mut accept)?;
            run = self.par_resume(&plan, end, chunks);
        }
        // On one thread: `sink` after every batch of a stream (output keeps
        // flowing), after about a chunk of an input in memory, and before
        // an error is returned.
        let mut sel = sel.clone();
        let mut out = make();
        let streamed = matches!(self.src, Src::Read(_));
        let mut since = self.byte_offset();
        loop {
            let b = match self.read_batch(&mut sel) {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => {
                    sink(&mut out)?;
                    return Err(e.into());
                }
            };
            let r = work(&b, &mut out);
            if streamed || r.is_err() || self.byte_offset() >= since + par.chunk as u64 {
                sink(&mut out)?;
                since = self.byte_offset();
            }
            r?;
        }
        sink(&mut out)?;
        Ok(run)
    }

    /// Counts the remaining records like [`Reader::count_rows`], on
    /// several threads when the input is in memory and at least two chunks
    /// long (see [`Reader::par_batches`]). Each chunk is counted over
    /// exactly the bytes from its start to the next one's (both record
    /// starts, found exactly); a chunk that fails, or does not end at the
    /// end of a record, hands over to the reader, which counts on alone
    /// from the chunk's start. Errors and the reader's state afterwards
    /// are those of [`Reader::count_rows`].
    ///
    /// ```
    /// use fastcsv::{Parallel, Reader};
    /// let mut data = b"id,note\n".to_vec();
    /// for i in 0..10_000 {
    ///     data.extend_from_slice(format!("{i},\"a\nb\"\r\n").as_bytes());
    /// }
    /// let mut rdr = Reader::from_slice(&data);
    /// let (n, ran) = rdr.par_count(&Parallel::new().threads(2).chunk_size(4096)).unwrap();
    /// assert_eq!(n, 10_000);
    /// assert!(ran.chunks > 1 && ran.sequential_from.is_none());
    /// assert_eq!(rdr.line(), 20_001);
    /// ```
    pub fn par_count(&mut self, par: &Parallel) -> Result<(u64, ParallelRun)> {
        self.par_count_with(par, |_| ())
    }

    /// [`Reader::par_count`], calling `progress` with the byte offset
    /// reached (see [`Reader::byte_offset`]) after each chunk counted in
    /// parallel, for a progress bar.
    ///
    /// ```
    /// use fastcsv::{Parallel, Reader};
    /// let data = b"a\n1\n".repeat(10_000);
    /// let mut rdr = Reader::from_slice(&data);
    /// let mut seen = Vec::new();
    /// let par = Parallel::new().threads(2).chunk_size(1000);
    /// let (n, _) = rdr.par_count_with(&par, |at| seen.push(at)).unwrap();
    /// assert_eq!(n, 19_999);
    /// assert!(seen.len() > 10 && seen.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub fn par_count_with(
        &mut self,
        par: &Parallel,
        mut progress: impl FnMut(u64),
    ) -> Result<(u64, ParallelRun)> {
        let mut run = ParallelRun::default();
        let mut n = 0u64;
        if let Some(plan) = self.par_plan(par)? {
            let job =
                |ctx: &Ctx<'_, (u64, u64)>, s, stop, _: &mut Selection, out: &mut (u64, u64)| {
                    ctx.count_chunk(s, stop, out)
                };
            let mut sink = |(k, at): &mut (u64, u64)| -> Result<bool> {
                n += std::mem::take(k);
                progress(*at);
                Ok(true)
            };
            let sel = Selection::new([]);
            let (end, chunks) = self.par_run(&plan, &sel, par, &|| (0, 0), &job, &mut sink)?;
            run = self.par_resume(&plan, end, chunks);
        }
        Ok((n + self.count_rows()?, run))
    }

    /// [`Reader::skip_rows`], with the records of whole chunks counted on
    /// several threads when the input is in memory and at least two chunks
    /// long (see [`Reader::par_count`]): the chunks are counted in order
    /// until the one where record `n` is, and the reader skips the rest
    /// from that chunk's start. Records, errors and the reader's state
    /// afterwards are those of [`Reader::skip_rows`].
    ///
    /// ```
    /// use fastcsv::{Parallel, Reader};
    /// let mut data = b"id,note\n".to_vec();
    /// for i in 0..10_000 {
    ///     data.extend_from_slice(format!("{i},\"a\nb\"\n").as_bytes());
    /// }
    /// let mut rdr = Reader::from_slice(&data);
    /// let par = Parallel::new().threads(2).chunk_size(4096);
    /// assert_eq!(rdr.par_skip_rows(7_000, &par).unwrap(), 7_000);
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"7000"[..]));
    /// assert_eq!((rdr.line(), rdr.records_read()), (14_003, 7_002));
    /// ```
    pub fn par_skip_rows(&mut self, n: u64, par: &Parallel) -> Result<u64> {
        let mut skipped = 0u64;
        if n > 0 {
            if let Some(plan) = self.par_plan(par)? {
                let job =
                    |ctx: &Ctx<'_, (u64, u64)>,
                     s,
                     stop,
                     _: &mut Selection,
                     out: &mut (u64, u64)| ctx.count_chunk(s, stop, out);
                // A chunk is taken whole only when record `n` is not in it.
                let mut sink = |(k, _): &mut (u64, u64)| -> Result<bool> {
                    if skipped + *k > n {
                        return Ok(false);
                    }
                    skipped += std::mem::take(k);
                    Ok(true)
                };
                let sel = Selection::new([]);
                let (end, chunks) = self.par_run(&plan, &sel, par, &|| (0, 0), &job, &mut sink)?;
                self.par_resume(&plan, end, chunks);
            }
        }
        Ok(skipped + self.skip_rows(n - skipped)?)
    }

    /// Hands over to the sequential reader where the workers stopped (the
    /// end of the input when they read everything: reading on then only
    /// checks that a mapped file kept its size).
    fn par_resume(
        &mut self,
        plan: &Plan,
        end: std::result::Result<Stop, Stop>,
        chunks: usize,
    ) -> ParallelRun {
        let mut run = ParallelRun { chunks, sequential_from: None };
        let stop = end.unwrap_or_else(|stop| {
            run.sequential_from = Some(self.base + (plan.start + stop.at) as u64);
            stop
        });
        self.rec_start = plan.start + stop.at;
        self.pos = 0;
        self.records = stop.records;
        self.err_line = None;
        self.done = false;
        self.scanner.restart_at(stop.lines);
        if !self.dialect.flexible {
            self.expected = plan.expected;
        }
        run
    }

    /// Whether and how to split the rest of the input.
    fn par_plan(&mut self, par: &Parallel) -> Result<Option<Plan>> {
        if par.threads < 2 {
            return Ok(None);
        }
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        if !self.started {
            self.start()?;
        }
        // After an error the scanner is skipping the rest of a line: only a
        // record start can be split from.
        if self.done || self.scanner.pending_lf() || !self.scanner.at_record_start() {
            return Ok(None);
        }
        let start = self.rec_start + self.pos;
        let all = match &self.src {
            Src::Slice(s) => *s,
            Src::Mapped(m) => m.bytes(),
            Src::Read(_) => return Ok(None),
        };
        let len = all.len() - start;
        if len < par.chunk.saturating_mul(2) {
            return Ok(None);
        }
        let mut expected = self.expected;
        if !self.dialect.flexible && expected.is_none() {
            // The first record's width is what every record is held to.
            let mut r = self.chunk_builder().from_slice(&all[start..]);
            r.set_field_limit(self.scanner.field_limit());
            if !matches!(r.read_row(), Ok(Some(_))) || r.expected.is_none() {
                return Ok(None);
            }
            expected = r.expected;
        }
        Ok(Some(Plan { start, len, expected, lines: self.scanner.lines(), records: self.records }))
    }

    /// Settings for the readers of chunks: this reader's dialect without
    /// header row or BOM handling (both done already).
    fn chunk_builder(&self) -> ReaderBuilder {
        let mut d = self.dialect.clone();
        d.headers = false;
        d.strip_bom = false;
        let mut b = ReaderBuilder::new();
        b.dialect(d).block_scan(self.scanner.block_scan_on());
        b
    }

    /// The workers and the in-order hand-over; `Err(stop)` where the
    /// sequential reader must take over after a failed chunk, `Ok(stop)`
    /// where every chunk was handed to `sink` or it took no more (it
    /// returns false for a chunk it leaves to the sequential reader).
    #[allow(clippy::type_complexity)]
    fn par_run<T, E, M, J, S>(
        &self,
        plan: &Plan,
        sel: &Selection,
        par: &Parallel,
        make: &M,
        job: &J,
        sink: &mut S,
    ) -> std::result::Result<(std::result::Result<Stop, Stop>, usize), E>
    where
        T: Send,
        M: Fn() -> T + Sync,
        J: Fn(&Ctx<'_, T>, usize, usize, &mut Selection, &mut T) -> Meta + Sync,
        S: FnMut(&mut T) -> std::result::Result<bool, E>,
    {
        let start = Stop { at: 0, lines: plan.lines, records: plan.records };
        let all = match &self.src {
            Src::Slice(s) => *s,
            Src::Mapped(m) => m.bytes(),
            Src::Read(_) => return Ok((Err(start), 0)),
        };
        // Before each chunk is handed on, the guard's flag and the file's
        // size: a file cut inside a page reads as zeros up to that page's
        // end without a fault (no flag), and a page that another worker
        // replaced by zeros may be read here before that worker's handler
        // has set the flag; the truncation itself, which comes before
        // either, shows in the size. One `fstat` per chunk.
        let changed = || match &self.src {
            Src::Mapped(m) => m.changed(true),
            _ => false,
        };
        // Large mapped files give back the pages of records written, as the
        // sequential reader does.
        let mut released = plan.start;
        let mut release = |upto: usize| {
            if let Src::Mapped(m) = &self.src {
                if m.releases() && upto >= released + RELEASE_EVERY {
                    m.release(upto);
                    released = upto;
                }
            }
        };
        let data = &all[plan.start..plan.start + plan.len];
        let builder = self.chunk_builder();
        // Each chunk's first record start, exactly (the plan starts at a
        // record start, which the automaton's start state is), found by
        // the worker that needs it.
        let bounds = Bounds::new(Splitter::new(builder.dialect_ref()), data, par);
        let n = bounds.n;
        let ctx = Ctx {
            data,
            origin: self.base + plan.start as u64,
            bounds,
            n,
            window: 2 * par.threads + 1,
            builder,
            limit: self.scanner.field_limit(),
            expected: plan.expected,
            cancel: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            shared: Mutex::new(Shared {
                next: 0,
                written: 0,
                done: (0..n).map(|_| None).collect(),
                pool: Vec::new(),
            }),
            cv: Condvar::new(),
        };
        let threads = par.threads.min(n);
        let worker = || ctx.worker(sel, make, job);
        let ran = pool::scope("parallel", threads, worker, |started| {
            let mut stop = start;
            if started == 0 {
                // No worker could be started: the reader goes on alone.
                return Ok((Err(stop), 0));
            }
            let mut accepted = 0;
            for k in 0..n {
                let mut o = {
                    let mut g = ctx.lock();
                    loop {
                        if let Some(o) = g.done[k].take() {
                            break o;
                        }
                        if ctx.panicked.load(Ordering::Relaxed) {
                            // `pool::scope` hands back the worker's panic.
                            drop(g);
                            ctx.cancel();
                            return Ok((Err(stop), accepted));
                        }
                        g = ctx.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let m = o.meta;
                if m.failed || (k > 0 && m.first != stop.at) || changed() {
                    ctx.cancel();
                    return Ok((Err(stop), accepted));
                }
                match sink(&mut o.out) {
                    Ok(true) => {}
                    // The caller wants no more chunks: the reader goes on
                    // from this one's start.
                    Ok(false) => {
                        ctx.cancel();
                        return Ok((Ok(stop), accepted));
                    }
                    Err(e) => {
                        ctx.cancel();
                        return Err(e);
                    }
                }
                // Chunk 0 starts at the plan's start, counted from there.
                let from = if k == 0 { 0 } else { m.lines_first };
                stop.lines += m.lines_next.saturating_sub(from);
                stop.records += m.records;
                stop.at = m.next;
                accepted += 1;
                release(plan.start + stop.at);
                let mut g = ctx.lock();
                g.written += 1;
                g.pool.push(o.out);
                drop(g);
                ctx.cv.notify_all();
            }
            Ok((Ok(stop), accepted))
        });
        // A panic in a worker (in `make` or `work`, the caller's code)
        // reaches the caller as a sequential read's would.
        ran.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// The part of the input a parallel read covers.
struct Plan {
    /// Offset of its first byte (a record start) in the source's bytes.
    start: usize,
    len: usize,
    /// The width every record must have (unless flexible).
    expected: Option<usize>,
    /// Lines and records before it.
    lines: u64,
    records: u64,
}

/// The bounds of the chunks of a parallel read (the input's start, the
/// first record start at or after each cut, the input's end), each found
/// once, when a worker first needs it, as
/// `Splitter::record_bounds` places them: the workers search the range
/// before a cut as they come to it (the chunk they are about to parse),
/// so no pass over the whole input comes before the first chunk. Where
/// the bytes before a cut leave its state undecided, every bound is
/// taken from the summaries of all the ranges, once.
struct Bounds<'d> {
    splitter: Splitter,
    data: &'d [u8],
    chunk: usize,
    threads: usize,
    /// Number of chunks.
    n: usize,
    /// Bound `k` (`1 <= k < n`) at `cuts[k - 1]`: `None` inside when a
    /// thread failed.
    cuts: Vec<OnceLock<Option<usize>>>,
    /// Every bound, from the summaries.
    summarized: OnceLock<Option<Vec<usize>>>,
}

impl<'d> Bounds<'d> {
    fn new(splitter: Splitter, data: &'d [u8], par: &Parallel) -> Bounds<'d> {
        let chunk = par.chunk.max(1);
        let n = data.len().div_ceil(chunk).max(1);
        let cuts = (1..n).map(|_| OnceLock::new()).collect();
        Bounds { splitter, data, chunk, threads: par.threads, n, cuts, summarized: OnceLock::new() }
    }

    /// Bound `k` (`0 ..= n`); `None` when a thread failed.
    fn get(&self, k: usize) -> Option<usize> {
        if k == 0 {
            return Some(0);
        }
        if k >= self.n {
            return Some(self.data.len());
        }
        if let Some(all) = self.summarized.get() {
            return all.as_ref().map(|b| b[k]);
        }
        // The bound before is found first (by this thread if no other has),
        // lowest first, so that no call goes deeper than one level.
        let known = (1..k).rev().find(|&i| self.cuts[i - 1].get().is_some()).unwrap_or(0);
        for i in known + 1..k {
            self.get(i)?;
        }
        *self.cuts[k - 1].get_or_init(|| {
            let since = self.get(k - 1)? as u64;
            match self.splitter.cut_bound(self.data, k * self.chunk, self.chunk, since) {
                Some(b) => Some(b as usize),
                None => self.summarized().map(|b| b[k]),
            }
        })
    }

    /// Every bound, from the summaries of all the ranges.
    fn summarized(&self) -> Option<&Vec<usize>> {
        self.summarized
            .get_or_init(|| {
                let b = self.splitter.summary_bounds(self.data, self.chunk, self.threads).ok()?;
                Some(b.into_iter().map(|b| b as usize).collect())
            })
            .as_ref()
    }
}

/// What the workers share.
struct Ctx<'d, T> {
    data: &'d [u8],
    /// Absolute offset of `data[0]`.
    origin: u64,
    /// Chunk `k` holds the records that start from bound `k` up to bound
    /// `k + 1` (record starts, or the input's end).
    bounds: Bounds<'d>,
    n: usize,
    /// Chunks a worker may run ahead of the sink.
    window: usize,
    builder: ReaderBuilder,
    limit: Option<u64>,
    expected: Option<usize>,
    cancel: AtomicBool,
    /// A worker panicked (its chunk will never be done).
    panicked: AtomicBool,
    shared: Mutex<Shared<T>>,
    cv: Condvar,
}

impl<T> Ctx<'_, T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared<T>> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops the workers (they finish or drop the chunk in hand).
    fn cancel(&self) {
        let g = self.lock();
        self.cancel.store(true, Ordering::Relaxed);
        drop(g);
        self.cv.notify_all();
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// One worker: takes chunks in order until there are none left.
    fn worker<M, J>(&self, sel: &Selection, make: &M, job: &J)
    where
        M: Fn() -> T,
        J: Fn(&Self, usize, usize, &mut Selection, &mut T) -> Meta,
    {
        // A panic in `make` or `work` must not leave the calling thread
        // waiting for a chunk that will never be done.
        struct Guard<'g, T>(&'g Ctx<'g, T>);
        impl<T> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.panicked.store(true, Ordering::Relaxed);
                    self.0.cancel();
                }
            }
        }
        let _guard = Guard(self);
        let mut sel = sel.clone();
        loop {
            let (k, out) = {
                let mut g = self.lock();
                loop {
                    if self.cancelled() || g.next >= self.n {
                        return;
                    }
                    if g.next < g.written + self.window {
                        break;
                    }
                    g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                g.next += 1;
                (g.next - 1, g.pool.pop())
            };
            let mut out = out.unwrap_or_else(make);
            let meta = match (self.bounds.get(k), self.bounds.get(k + 1)) {
                (Some(s), Some(stop)) => job(self, s, stop, &mut sel, &mut out),
                // Only a failed thread: the reader goes on alone.
                _ => Meta { failed: true, ..Meta::default() },
            };
            let mut g = self.lock();
            g.done[k] = Some(ChunkOut { meta, out });
            drop(g);
            self.cv.notify_all();
        }
    }
}

impl<T> Ctx<'_, T> {
    /// Parses from `s`, handing `work` the records that start before
    /// `stop`.
    fn run_chunk<E, W>(
        &self,
        s: usize,
        stop: usize,
        sel: &mut Selection,
        work: &W,
        out: &mut T,
    ) -> Meta
    where
        W: Fn(&Batch<'_>, &mut T) -> std::result::Result<(), E>,
    {
        let len = self.data.len();
        let mut r = self.builder.from_slice(&self.data[s..]);
        r.base = self.origin + s as u64;
        r.set_field_limit(self.limit);
        r.expected = self.expected;
        let mut m = Meta { failed: true, ..Meta::default() };
        let mut first = None;
        loop {
            if self.cancelled() {
                return m;
            }
            let b = match r.read_batch(sel) {
                Err(_) => return m,
                Ok(None) => {
                    let end = (len, r.line());
                    let (f, lf) = first.unwrap_or(end);
                    return Meta {
                        first: f,
                        next: len,
                        lines_first: lf,
                        lines_next: end.1,
                        failed: false,
                        ..m
                    };
                }
                Ok(Some(b)) => b,
            };
            // Offset in `data` and lines before record `i` of the batch.
            let at = |i: usize| {
                let p = b.row(i).position();
                ((p.byte - self.origin) as usize, p.line - 1)
            };
            if first.is_none() {
                first = Some(at(0));
            }
            let cut = if at(b.len() - 1).0 < stop {
                b.len()
            } else {
                (0..b.len()).find(|&i| at(i).0 >= stop).unwrap_or(b.len())
            };
            if cut > 0 {
                if work(&b.truncated(cut), out).is_err() {
                    return m;
                }
                m.records += cut as u64;
            }
            if cut < b.len() {
                let (next, lines_next) = at(cut);
                let (f, lf) = first.unwrap_or((next, lines_next));
                return Meta { first: f, next, lines_first: lf, lines_next, failed: false, ..m };
            }
        }
    }
}

impl Ctx<'_, (u64, u64)> {
    /// Counts the records in `data[s..stop]` (with the absolute offset of
    /// `stop`); a chunk that does not end at the end of a record fails.
    fn count_chunk(&self, s: usize, stop: usize, out: &mut (u64, u64)) -> Meta {
        let mut r = self.builder.from_slice(&self.data[s..stop]);
        r.base = self.origin + s as u64;
        r.set_field_limit(self.limit);
        r.expected = self.expected;
        let failed = Meta { failed: true, ..Meta::default() };
        match r.count_rows() {
            Ok(k) if !r.tail_partial || stop == self.data.len() => {
                *out = (k, self.origin + stop as u64);
                Meta {
                    first: s,
                    next: stop,
                    lines_first: 0,
                    lines_next: r.line(),
                    records: k,
                    failed: false,
                }
            }
            _ => failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;

    /// Inputs whose cuts fall in quoted fields with line breaks, in quoted
    /// fields longer than a chunk, after long stretches without quotes,
    /// and between records.
    fn inputs() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut plain = Vec::new();
        for i in 0..3_000 {
            plain.extend_from_slice(format!("{i},{},x\n", i * 7).as_bytes());
        }
        out.push(plain.clone());
        let mut quoted = Vec::new();
        for i in 0..3_000 {
            quoted.extend_from_slice(format!("{i},\"a\nb,\"\"c\"\"\"\n").as_bytes());
        }
        out.push(quoted);
        // A quote far before the cuts, then a field of 40 KiB with line
        // breaks and no quote.
        let mut long = plain.clone();
        long.extend_from_slice(b"1,\"");
        for i in 0..4_000 {
            long.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        long.extend_from_slice(b"\"\n");
        long.extend_from_slice(&plain);
        out.push(long);
        out
    }

    #[test]
    fn bounds_found_as_they_are_needed_are_the_record_bounds() {
        let sp = Splitter::new(&Dialect::default());
        for (i, input) in inputs().into_iter().enumerate() {
            let long = i == 2;
            for chunk in [1_000, 4_096, 10_000, 65_536] {
                let want: Vec<usize> = sp
                    .record_bounds(&input, chunk, 2)
                    .unwrap()
                    .into_iter()
                    .map(|b| b as usize)
                    .collect();
                let sum = sp.summary_bounds(&input, chunk, 2).unwrap();
                assert_eq!(sum.iter().map(|&b| b as usize).collect::<Vec<_>>(), want);
                let par = Parallel::new().threads(2).chunk_size(chunk);
                let b = Bounds::new(sp.clone(), &input, &par);
                assert_eq!(b.n + 1, want.len());
                // In order, and from the end first (each found from the
                // ones before it).
                let got: Vec<usize> = (0..=b.n).map(|k| b.get(k).unwrap()).collect();
                assert_eq!(got, want, "chunk {chunk}");
                // Only the quoted field longer than the search window
                // leaves a cut undecided.
                assert_eq!(b.summarized.get().is_some(), long, "chunk {chunk}");
                let b = Bounds::new(sp.clone(), &input, &par);
                let mut rev: Vec<usize> = (0..=b.n).rev().map(|k| b.get(k).unwrap()).collect();
                rev.reverse();
                assert_eq!(rev, want, "chunk {chunk}");
            }
        }
    }
}
