//! The measurement harness behind `fastcsv bench` and `benches/`: one file
//! parsed with the mapped source and with the buffered source at each of
//! several buffer sizes (or many small files, each timed on its own), with
//! each of several engines, several runs each.
//!
//! # What is timed
//!
//! Each [`Work`] is the engine of a CLI verb, called through the reader's
//! public API: `count` is [`Reader::par_count`](crate::Reader::par_count) (the block scanner, as
//! `fastcsv count`), `select` is [`Reader::par_batches`](crate::Reader::par_batches) over a
//! [`Selection`](crate::Selection) of two columns (as `fastcsv select`),
//! and `rows`, `fields` and `utf8` visit every row through
//! [`Reader::read_row`](crate::Reader::read_row). The block scanner runs several times faster than
//! the row reader, and the source's share of the time grows with the
//! speed: a comparison at one speed says little about the other, so the
//! default measures `count` and `rows`. [`BenchOptions::threads`] runs
//! `count` and `select` on several threads, by default as many as the CLI
//! uses (a mapped file is split across them; a `read()` stream is parsed
//! on one).
//!
//! For every configuration it reports the median and the range of the wall
//! times, the throughput (10⁶ bytes per second, from the median), the
//! throughput per CPU second, the user and system CPU time and the minor and
//! major page faults per run (deltas of `getrusage(RUSAGE_SELF)`, so the
//! helper threads are counted: the reader's drop joins them before the
//! figures are taken), and how much the resident set grew during the run.
//! Every run's figures are kept ([`ConfigResult::samples`]). Runs go
//! round-robin over the configurations (run 1 of each, then run 2, ...), so
//! that a change in the machine's load does not land on one configuration
//! only.
//!
//! [`run_files`] times many files, each opened, parsed and closed on its
//! own, grouped by size (powers of two): the per-file cost of mapping
//! against one `read()`, which is where the automatic choice's
//! [`SMALL_FILE`](crate::source::SMALL_FILE) threshold comes from.
//!
//! # Measuring honestly
//!
//! * Every source must produce the same number of rows and data errors for
//!   a work, or the run fails: a faster wrong answer is not a result.
//! * `getrusage(RUSAGE_SELF)` covers the whole process. Run the harness in a
//!   process that does nothing else (the CLI); inside a multi-threaded test
//!   harness the CPU and fault figures include the other threads.
//! * Peak RSS: `ru_maxrss` is a process-wide high-water mark that never goes
//!   down, so after the first large run it says nothing about the next one.
//!   On Linux the harness resets the mark before each run (writing `5` to
//!   `/proc/self/clear_refs`) and reports `VmHWM` after the run minus `VmRSS`
//!   before it: the growth of this run alone, file-backed pages included
//!   (a mapped file's pages count while they are mapped and resident). Where
//!   the reset is not possible it falls back to the growth of `ru_maxrss`,
//!   which is a lower bound, and says so ([`BenchReport::rss_exact`]).
//! * `cold` evicts the file from the page cache before every run with
//!   `posix_fadvise(POSIX_FADV_DONTNEED)` (no root needed). Pages that
//!   another process has mapped are not evicted, and on some filesystems
//!   (tmpfs) there is no disk behind the cache at all.
//! * No figure here is meaningful on a busy machine: the report carries the
//!   load average before and after, and the table and chart say when it was
//!   high.
//!
//! ```
//! use fastcsv::bench::{self, BenchOptions, Work};
//! let dir = tempfile::tempdir().unwrap();
//! let p = dir.path().join("fastcsv-bench-doc.csv");
//! std::fs::write(&p, "a,b\n1,2\n3,4\n").unwrap();
//! let opts =
//!     BenchOptions { sizes: vec![1024, 4096], runs: 1, works: vec![Work::Fields], ..Default::default() };
//! let report = bench::run(&p, &opts).unwrap();
//! assert_eq!(report.rows, 2);
//! assert_eq!(report.results.len(), 3); // mmap, 1K, 4K
//! assert!(report.to_table().contains("mmap"));
//! ```

mod engine;
mod report;
mod svg;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::parallel::Parallel;
use crate::reader::ReaderBuilder;
use crate::source::{SourceChoice, SourceKind};
use engine::{RssProbe, Usage};

/// What the parse does: the engine of one CLI verb.
///
/// ```
/// use fastcsv::bench::Work;
/// assert_eq!(Work::parse("fields"), Some(Work::Fields));
/// assert_eq!(Work::Utf8.as_str(), "utf8");
/// assert_eq!(Work::default(), Work::Count);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Work {
    /// Count records with the block scanner ([`Reader::par_count`](crate::Reader::par_count)), as
    /// `fastcsv count` does: ragged records count, fields are not built.
    #[default]
    Count,
    /// Locate two columns (the first and the middle one) of every record
    /// and build their CSV in memory ([`Reader::par_batches`](crate::Reader::par_batches) with
    /// [`Selection::csv_output`](crate::Selection::csv_output)), as
    /// `fastcsv select` does; nothing is written.
    Select,
    /// Every row through [`Reader::read_row`](crate::Reader::read_row), touching no field: the cost
    /// of the row reader itself.
    Rows,
    /// Every row through [`Reader::read_row`](crate::Reader::read_row), touching every field's bytes
    /// (sums their lengths).
    Fields,
    /// Every row through [`Reader::read_row`](crate::Reader::read_row), validating every field as
    /// UTF-8 ([`Row::get_str`](crate::Row::get_str)).
    Utf8,
}

impl Work {
    /// Every work, in the order reports list them.
    pub const ALL: &'static [Work] =
        &[Work::Count, Work::Select, Work::Rows, Work::Fields, Work::Utf8];

    /// Parses `count`, `select`, `rows`, `fields` or `utf8`.
    ///
    /// ```
    /// assert_eq!(fastcsv::bench::Work::parse("nope"), None);
    /// assert_eq!(fastcsv::bench::Work::parse("rows"), Some(fastcsv::bench::Work::Rows));
    /// ```
    pub fn parse(s: &str) -> Option<Work> {
        Work::ALL.iter().copied().find(|w| w.as_str() == s)
    }

    /// The name [`Work::parse`] accepts.
    ///
    /// ```
    /// assert_eq!(fastcsv::bench::Work::Count.as_str(), "count");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Work::Count => "count",
            Work::Select => "select",
            Work::Rows => "rows",
            Work::Fields => "fields",
            Work::Utf8 => "utf8",
        }
    }

    /// What the engine is, in a few words (for reports).
    ///
    /// ```
    /// assert!(fastcsv::bench::Work::Count.describe().contains("fastcsv count"));
    /// ```
    pub fn describe(self) -> &'static str {
        match self {
            Work::Count => "block-scanner count (Reader::par_count), as `fastcsv count`",
            Work::Select => {
                "two columns located and built as CSV in memory (Reader::par_batches), as \
                 `fastcsv select`"
            }
            Work::Rows => "every row through Reader::read_row, no field touched",
            Work::Fields => "every row through Reader::read_row, every field's bytes touched",
            Work::Utf8 => "every row through Reader::read_row, every field checked as UTF-8",
        }
    }

    /// Whether [`BenchOptions::threads`] applies (the engines with a
    /// parallel form: `count` and `select`).
    ///
    /// ```
    /// assert!(fastcsv::bench::Work::Count.parallel());
    /// assert!(!fastcsv::bench::Work::Rows.parallel());
    /// ```
    pub fn parallel(self) -> bool {
        matches!(self, Work::Count | Work::Select)
    }
}

/// The default buffer-size sweep: 1 KiB to 4 MiB by powers of 4, plus the
/// reader's default 128 KiB.
pub const DEFAULT_SIZES: &[usize] =
    &[1 << 10, 4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20, 4 << 20];

/// The default works: the block scanner's `count` and the row reader's
/// `rows`, the two speeds at which the source's share differs most.
pub const DEFAULT_WORKS: &[Work] = &[Work::Count, Work::Rows];

/// What to measure.
///
/// ```
/// let o = fastcsv::bench::BenchOptions::default();
/// assert_eq!(o.runs, 3);
/// assert_eq!(o.sizes, fastcsv::bench::DEFAULT_SIZES);
/// assert_eq!(o.works, fastcsv::bench::DEFAULT_WORKS);
/// assert_eq!(o.threads, fastcsv::Parallel::new().thread_count());
/// assert!(!o.cold);
/// assert_eq!(o.time_budget, Some(std::time::Duration::from_secs(40)));
/// ```
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Buffer sizes for the buffered source (bytes). May be empty: then only
    /// the mapped source is measured (and, in [`run_files`], the automatic
    /// choice).
    pub sizes: Vec<usize>,
    /// Runs per configuration (at least 1).
    pub runs: usize,
    /// Evict the file from the page cache before each run.
    pub cold: bool,
    /// The engines to time, each with every source (duplicates are
    /// dropped; empty means [`DEFAULT_WORKS`]).
    pub works: Vec<Work>,
    /// Threads for the works with a parallel form ([`Work::parallel`]).
    /// The default is the CLI's: every CPU available, as
    /// [`Parallel::new`](crate::Parallel::new) (and `fastcsv count`
    /// without `-j`); 1 parses on the calling thread, as `fastcsv count
    /// -j1`. A mapped file is split across them; a `read()` stream is
    /// parsed on one, as the CLI does. Ignored by [`run_files`].
    pub threads: usize,
    /// The dialect to parse with (`count` makes it flexible, as `fastcsv
    /// count` does).
    pub dialect: Dialect,
    /// Roughly how long the whole measurement may take: after the first
    /// round, `runs` is lowered (to 1 at least) so that every configuration
    /// fits, and [`BenchReport::runs`] says how many were made. `None`
    /// makes exactly `runs` runs. Default 40 s, so that the default
    /// settings finish within about a minute on a 1 GiB file, with room for
    /// a busy machine.
    pub time_budget: Option<Duration>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            sizes: DEFAULT_SIZES.to_vec(),
            runs: 3,
            cold: false,
            works: DEFAULT_WORKS.to_vec(),
            threads: Parallel::new().thread_count(),
            dialect: Dialect::default(),
            time_budget: Some(Duration::from_secs(40)),
        }
    }
}

/// The files of one size class in [`run_files`]: those of at most
/// `max_size` bytes and more than half that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileGroup {
    /// The size class: a power of two, the largest size in the group.
    pub max_size: u64,
    /// How many files.
    pub files: usize,
    /// Their bytes together.
    pub bytes: u64,
}

/// The figures of one run of one configuration (in [`run_files`], one
/// pass over the files of its group).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Wall time (open + parse + close; in [`run_files`], of every file of
    /// the group).
    pub wall: Duration,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults (that needed I/O).
    pub major_faults: u64,
}

/// The figures for one work, source and buffer size (and, in
/// [`run_files`], file group).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("fastcsv-bench-config-doc.csv");
/// std::fs::write(&p, "a\n1\n").unwrap();
/// let o = fastcsv::bench::BenchOptions { sizes: vec![], runs: 2, ..Default::default() };
/// let r = fastcsv::bench::run(&p, &o).unwrap();
/// let c = &r.results[0];
/// assert_eq!(c.source, fastcsv::SourceKind::Mapped);
/// assert_eq!(c.work, fastcsv::bench::Work::Count);
/// assert_eq!((c.times.len(), c.samples.len()), (2, 2));
/// assert!(c.min <= c.median && c.median <= c.max);
/// ```
#[derive(Clone, Debug)]
pub struct ConfigResult {
    /// The engine timed.
    pub work: Work,
    /// The source asked for: [`SourceChoice::Mmap`], [`SourceChoice::Buffered`]
    /// or (in [`run_files`]) [`SourceChoice::Auto`].
    pub choice: SourceChoice,
    /// The source used: [`SourceKind::Mapped`] or [`SourceKind::Buffered`]
    /// (under `Auto`, the last file's).
    pub source: SourceKind,
    /// Under `Auto`, whether files of the group went to both sources.
    pub mixed_sources: bool,
    /// The buffer size (buffered source only).
    pub buffer_size: Option<usize>,
    /// Threads the engine was given (1 for the row-reader works; a stream
    /// is parsed on one whatever this says).
    pub threads: usize,
    /// A helper thread worked ahead of the parser (see
    /// [`ReaderBuilder::read_ahead`]): the buffered source's reads, or the
    /// mapped source's page faults during a count; CPU figures include
    /// that thread.
    pub read_ahead: bool,
    /// The files measured ([`run_files`] only).
    pub group: Option<FileGroup>,
    /// Rows per parse (of the group's files together, in [`run_files`]).
    pub rows: u64,
    /// Data errors per parse (skipped by the row-reader works).
    pub errors: u64,
    /// Wall time of each run (open + parse + close); in [`run_files`], of
    /// each file in each run.
    pub times: Vec<Duration>,
    /// Every run's figures.
    pub samples: Vec<Sample>,
    /// Median of `times`.
    pub median: Duration,
    /// Fastest of `times`.
    pub min: Duration,
    /// Slowest of `times`.
    pub max: Duration,
    /// Bytes parsed per time in `times` / median time, in 10⁶ bytes per
    /// second.
    pub mb_per_s: f64,
    /// The same bytes / mean CPU time (user + system), in 10⁶ bytes per
    /// CPU second: steadier than `mb_per_s` on a machine shared with other
    /// work, but blind to time spent waiting for the disk.
    pub cpu_mb_per_s: f64,
    /// User CPU seconds per time in `times` (mean): per run, or per file.
    pub user_s: f64,
    /// System CPU seconds per time in `times` (mean).
    pub sys_s: f64,
    /// Minor page faults per time in `times` (mean).
    pub minor_faults: u64,
    /// Major page faults per time in `times` (mean).
    pub major_faults: u64,
    /// Largest growth of the resident set during a run, in bytes.
    pub peak_rss_growth: u64,
}

impl ConfigResult {
    /// The source: `mmap` (`mmap, fault-ahead` when a helper thread mapped
    /// the pages in ahead of the parser), or `read` with the buffer size
    /// (`read 128K`, and `read 128K, read-ahead` when a helper thread read
    /// ahead); `mmap failed, read` when the file could not be mapped;
    /// `auto: mmap`, `auto: read` or `auto: both` for the automatic choice.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-label-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![4096], runs: 1, ..Default::default() };
    /// let r = fastcsv::bench::run(&p, &o).unwrap();
    /// assert_eq!(r.results[1].label(), "read 4K");
    /// ```
    pub fn label(&self) -> String {
        if self.choice == SourceChoice::Auto {
            let s = match (self.mixed_sources, self.source) {
                (true, _) => "both",
                (false, SourceKind::Mapped) => "mmap",
                (false, _) => "read",
            };
            return format!("auto: {s}");
        }
        match (self.buffer_size, self.source) {
            (None, SourceKind::Mapped) if self.read_ahead => "mmap, fault-ahead".to_string(),
            (None, SourceKind::Mapped) => "mmap".to_string(),
            // Mapping was asked for but failed (see `SourceReason::MapFailed`).
            (None, _) => "mmap failed, read".to_string(),
            (Some(n), _) if self.read_ahead => {
                format!("read {}, read-ahead", format_size(n as u64))
            }
            (Some(n), _) => format!("read {}", format_size(n as u64)),
        }
    }
}

/// Everything [`run`] or [`run_files`] measured, with the ways to show it.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The file parsed ([`run_files`]: the first file's directory).
    pub path: PathBuf,
    /// How many files ([`run`]: 1).
    pub files: usize,
    /// Bytes parsed per run (every file's, in [`run_files`]).
    pub bytes: u64,
    /// Rows per parse of the first work measured (for [`run_files`], of
    /// every file together); [`ConfigResult::rows`] has each work's.
    pub rows: u64,
    /// Data errors per parse of the first work measured.
    pub errors: u64,
    /// Runs per configuration (fewer than asked for when the time budget
    /// required it).
    pub runs: usize,
    /// Whether the page cache was emptied before each run.
    pub cold: bool,
    /// The engines timed, in order.
    pub works: Vec<Work>,
    /// Threads given to the works with a parallel form.
    pub threads: usize,
    /// The columns `select` took (0-based; [`run`] only, else empty).
    pub select_columns: Vec<usize>,
    /// True when peak RSS growth was measured per run (Linux
    /// `clear_refs`), false when it is the growth of the process-wide
    /// `ru_maxrss` (a lower bound).
    pub rss_exact: bool,
    /// By work; within a work, mapped first, then buffered by increasing
    /// buffer size (in [`run_files`]: by file group, then mapped, buffered
    /// and automatic).
    pub results: Vec<ConfigResult>,
    /// The machine: CPUs this process may use.
    pub cpus: usize,
    /// The machine in one line: CPU model, CPUs, OS and kernel.
    pub machine: String,
    /// The command that made the measurement, when the caller sets it (the
    /// CLI does).
    pub command: Option<String>,
    /// The 1-minute load average before and after the measurement (Linux
    /// `/proc/loadavg`), to tell a quiet machine from a busy one.
    pub load: Option<(f64, f64)>,
    /// When the measurement started, in seconds since the Unix epoch.
    pub started: u64,
}

impl BenchReport {
    /// Whether the load average, before or after, was above half the CPUs:
    /// the machine was doing other work and the timings are noisy.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-busy-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![], runs: 1, ..Default::default() };
    /// let mut r = fastcsv::bench::run(&p, &o).unwrap();
    /// r.load = Some((0.0, 2.0 * r.cpus as f64));
    /// assert!(r.busy());
    /// ```
    pub fn busy(&self) -> bool {
        self.load.is_some_and(|(b, a)| b.max(a) > 0.5 * self.cpus as f64)
    }
}

/// Parses a size: digits with an optional binary suffix `K`, `M`, `G`
/// (or `KiB`, `MiB`, `GiB`; case-insensitive; `B` alone means bytes).
///
/// ```
/// use fastcsv::bench::parse_size;
/// assert_eq!(parse_size("128K").unwrap(), 128 * 1024);
/// assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
/// assert_eq!(parse_size("1g").unwrap(), 1 << 30);
/// assert_eq!(parse_size("512").unwrap(), 512);
/// assert!(parse_size("12Q").is_err());
/// assert!(parse_size("0").is_err());
/// ```
pub fn parse_size(s: &str) -> Result<usize> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(Error::config(format!("bad size {s:?}: use e.g. 4096, 64K, 4M, 1G"))),
    };
    let n: usize =
        digits.parse().map_err(|_| Error::config(format!("bad size {s:?}: no number")))?;
    if n == 0 {
        return Err(Error::config(format!("bad size {s:?}: must be at least 1 byte")));
    }
    n.checked_mul(1 << shift).ok_or_else(|| Error::config(format!("size {s:?} is too large")))
}

/// Parses a comma-separated list of sizes (`1K,4K,128K`).
///
/// ```
/// assert_eq!(fastcsv::bench::parse_sizes("1K, 4K").unwrap(), vec![1024, 4096]);
/// ```
pub fn parse_sizes(s: &str) -> Result<Vec<usize>> {
    s.split(',').filter(|p| !p.trim().is_empty()).map(parse_size).collect()
}

/// Formats a byte count with the largest binary unit that divides it:
/// `1K`, `128K`, `4M`, `1000`.
///
/// ```
/// assert_eq!(fastcsv::bench::format_size(131072), "128K");
/// assert_eq!(fastcsv::bench::format_size(1000), "1000");
/// ```
pub fn format_size(n: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{unit}", n >> shift);
        }
    }
    n.to_string()
}

/// Parses `path` with every work and source in `opts`, `opts.runs` times
/// each.
///
/// Fails on I/O errors, on a data error in `count` or `select` (which the
/// CLI's verbs stop at too), and when two sources disagree on a work's
/// rows or data errors.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("fastcsv-bench-run-doc.csv");
/// std::fs::write(&p, "x,y\n1,2\n").unwrap();
/// let opts = fastcsv::bench::BenchOptions { sizes: vec![1024], runs: 1, ..Default::default() };
/// let r = fastcsv::bench::run(&p, &opts).unwrap();
/// assert_eq!((r.bytes, r.rows), (8, 1));
/// assert_eq!(r.results.len(), 4); // count and rows, each with mmap and read 1K
/// ```
pub fn run(path: &Path, opts: &BenchOptions) -> Result<BenchReport> {
    let bytes = regular_file_size(path)?;
    let works = works(opts);
    let sizes = sorted(&opts.sizes);
    let cols = if works.contains(&Work::Select) { select_columns(path, opts)? } else { vec![] };
    let mut configs = Vec::new();
    for &work in &works {
        configs.push(Config { work, choice: SourceChoice::Mmap, buffer: None, group: 0 });
        for &n in &sizes {
            configs.push(Config {
                work,
                choice: SourceChoice::Buffered,
                buffer: Some(n),
                group: 0,
            });
        }
    }
    let files = vec![FileIn { path: path.to_path_buf(), bytes, cols }];
    let groups = [files];
    measure(&groups, &configs, opts, &works, false).map(|(results, runs, env)| {
        report(
            path.to_path_buf(),
            1,
            bytes,
            results,
            runs,
            opts,
            works,
            env,
            groups[0][0].cols.clone(),
        )
    })
}

/// Times many files, each opened, parsed and closed on its own, grouped by
/// size class (powers of two): for each group, work and source (mapped,
/// `read()` at each of `opts.sizes`, and the automatic choice), the median,
/// fastest and slowest time per file and the CPU time per file.
/// `opts.threads` is not used: one small file is parsed on one thread.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let mut paths = Vec::new();
/// for (name, rows) in [("a.csv", 10), ("b.csv", 400)] {
///     let p = dir.path().join(name);
///     std::fs::write(&p, "x,y\n".to_string() + &"1,2\n".repeat(rows)).unwrap();
///     paths.push(p);
/// }
/// let opts = fastcsv::bench::BenchOptions { sizes: vec![4096], runs: 2, ..Default::default() };
/// let r = fastcsv::bench::run_files(&paths, &opts).unwrap();
/// assert_eq!((r.files, r.rows), (2, 410));
/// let g = r.results[0].group.unwrap();
/// assert_eq!((g.max_size, g.files), (64, 1));
/// // 2 groups x 2 works x (mmap, read 4K, auto); each file timed in each run.
/// assert_eq!(r.results.len(), 12);
/// assert_eq!(r.results[0].times.len(), 2);
/// ```
pub fn run_files(paths: &[PathBuf], opts: &BenchOptions) -> Result<BenchReport> {
    if paths.is_empty() {
        return Err(Error::config("no files to measure"));
    }
    let works = works(opts);
    let mut files = Vec::with_capacity(paths.len());
    let mut total = 0;
    for p in paths {
        let bytes = regular_file_size(p)?;
        let cols = if works.contains(&Work::Select) { select_columns(p, opts)? } else { vec![] };
        total += bytes;
        files.push(FileIn { path: p.clone(), bytes, cols });
    }
    files.sort_by_key(|f| size_class(f.bytes));
    let mut groups: Vec<Vec<FileIn>> = Vec::new();
    for f in files {
        match groups.last_mut() {
            Some(g) if size_class(g[0].bytes) == size_class(f.bytes) => g.push(f),
            _ => groups.push(vec![f]),
        }
    }
    let sizes = sorted(&opts.sizes);
    let mut configs = Vec::new();
    for group in 0..groups.len() {
        for &work in &works {
            configs.push(Config { work, choice: SourceChoice::Mmap, buffer: None, group });
            for &n in &sizes {
                configs.push(Config {
                    work,
                    choice: SourceChoice::Buffered,
                    buffer: Some(n),
                    group,
                });
            }
            configs.push(Config { work, choice: SourceChoice::Auto, buffer: None, group });
        }
    }
    let (results, runs, env) = measure(&groups, &configs, opts, &works, true)?;
    let dir = paths[0].parent().map_or_else(PathBuf::new, Path::to_path_buf);
    Ok(report(dir, paths.len(), total, results, runs, opts, works, env, vec![]))
}

/// The regular files in `dir` (not in its subdirectories), by name.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("b.csv"), "x\n").unwrap();
/// std::fs::write(dir.path().join("a.csv"), "x\n").unwrap();
/// std::fs::create_dir(dir.path().join("sub")).unwrap();
/// let names: Vec<_> = fastcsv::bench::files_in(dir.path()).unwrap()
///     .iter().map(|p| p.file_name().unwrap().to_owned()).collect();
/// assert_eq!(names, ["a.csv", "b.csv"]);
/// ```
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = |e: std::io::Error| Error::from(e).with_path(dir);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        if std::fs::metadata(&path).map_err(io)?.is_file() {
            out.push(path);
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(Error::config("no regular files to measure").with_path(dir));
    }
    Ok(out)
}

/// One work with one source (and file group).
#[derive(Clone, Copy, Debug)]
struct Config {
    work: Work,
    choice: SourceChoice,
    buffer: Option<usize>,
    group: usize,
}

impl Config {
    fn name(&self) -> String {
        let src = match (self.choice, self.buffer) {
            (SourceChoice::Auto, _) => "auto".to_string(),
            (_, Some(n)) => format!("read {}", format_size(n as u64)),
            (_, None) => "mmap".to_string(),
        };
        format!("{} with {src}", self.work.as_str())
    }
}

/// A file to parse, with the columns `select` takes from it.
struct FileIn {
    path: PathBuf,
    bytes: u64,
    cols: Vec<usize>,
}

/// What the measurement saw of the machine.
struct Env {
    rss_exact: bool,
    load: Option<(f64, f64)>,
    started: u64,
}

fn works(opts: &BenchOptions) -> Vec<Work> {
    let mut w: Vec<Work> = Vec::new();
    for &x in if opts.works.is_empty() { DEFAULT_WORKS } else { &opts.works } {
        if !w.contains(&x) {
            w.push(x);
        }
    }
    w
}

fn sorted(sizes: &[usize]) -> Vec<usize> {
    let mut s = sizes.to_vec();
    s.sort_unstable();
    s.dedup();
    s
}

/// A file's group in [`run_files`]: the power of two at or above its size.
fn size_class(bytes: u64) -> u64 {
    bytes.max(1).next_power_of_two()
}

fn regular_file_size(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|e| Error::from(e).with_path(path))?;
    if !meta.is_file() {
        let msg = "bench needs a regular file (it reads the file many times)";
        return Err(Error::config(msg).with_path(path));
    }
    Ok(meta.len())
}

/// The columns `select` takes, from the width of the file's first record.
fn select_columns(path: &Path, opts: &BenchOptions) -> Result<Vec<usize>> {
    let d = opts.dialect.to_builder().headers(false).flexible(true).build()?;
    let mut rdr = ReaderBuilder::new().dialect(d).from_path(path)?;
    let width = rdr.read_row()?.map_or(1, |r| r.len().max(1));
    Ok(engine::select_columns(width))
}

/// The reader for one configuration.
fn builder(opts: &BenchOptions, c: &Config) -> Result<ReaderBuilder> {
    let mut b = ReaderBuilder::new();
    if c.work == Work::Count {
        // As `fastcsv count`: a ragged record is a record.
        b.dialect(opts.dialect.to_builder().flexible(true).build()?);
    } else {
        b.dialect(opts.dialect.clone());
    }
    b.source(c.choice);
    if let Some(n) = c.buffer {
        b.buffer_size(n);
    }
    Ok(b)
}

/// What the runs of one configuration measured so far.
#[derive(Default)]
struct Acc {
    source: Option<SourceKind>,
    mixed: bool,
    read_ahead: bool,
    times: Vec<Duration>,
    samples: Vec<Sample>,
    growth: u64,
    outcome: (u64, u64),
}

/// Runs every configuration round-robin; returns the results, the runs
/// made and what was seen of the machine.
fn measure(
    groups: &[Vec<FileIn>],
    configs: &[Config],
    opts: &BenchOptions,
    works: &[Work],
    per_file: bool,
) -> Result<(Vec<ConfigResult>, usize, Env)> {
    let builders: Vec<ReaderBuilder> =
        configs.iter().map(|c| builder(opts, c)).collect::<Result<_>>()?;
    // One thread, and the threads of the works with a parallel form.
    let pars = [Parallel::new().threads(1), Parallel::new().threads(opts.threads.max(1))];
    let mut runs = opts.runs.max(1);
    let rss = RssProbe::new();
    let load_before = engine::load_average();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut acc: Vec<Acc> = configs.iter().map(|_| Acc::default()).collect();
    // The rows and errors each (group, work) must find with every source.
    let mut want: Vec<Option<(u64, u64, String)>> = vec![None; groups.len() * works.len()];
    let mut round = 0;
    while round < runs {
        round += 1;
        let round_start = Instant::now();
        for ((c, b), acc) in configs.iter().zip(&builders).zip(&mut acc) {
            let par = &pars[usize::from(c.work.parallel() && !per_file)];
            rss.reset();
            let before_rss = rss.current();
            let before = Usage::now();
            let (mut wall, mut got) = (Duration::ZERO, (0u64, 0u64));
            for f in &groups[c.group] {
                if opts.cold {
                    engine::evict(&f.path)?;
                }
                let start = Instant::now();
                let mut rdr = b.from_path(&f.path)?;
                let kind = rdr.source_kind();
                let (rows, errors) =
                    engine::parse(&mut rdr, c.work, par, &f.cols).map_err(|e| stopped(e, c))?;
                // After the parse: the mapped source's helper starts with
                // the first row or the count.
                acc.read_ahead |= rdr.reads_ahead();
                // Dropping joins the helper threads: their time is counted.
                drop(rdr);
                let t = start.elapsed();
                wall += t;
                if per_file {
                    acc.times.push(t);
                }
                acc.mixed |= acc.source.is_some_and(|s| s != kind);
                acc.source = Some(kind);
                got = (got.0 + rows, got.1 + errors);
            }
            let used = Usage::now().minus(&before);
            acc.growth = acc.growth.max(rss.peak().saturating_sub(before_rss));
            if !per_file {
                acc.times.push(wall);
            }
            acc.samples.push(Sample {
                wall,
                user_s: used.user,
                sys_s: used.sys,
                minor_faults: used.minflt,
                major_faults: used.majflt,
            });
            acc.outcome = got;
            let k = c.group * works.len() + works.iter().position(|&w| w == c.work).unwrap_or(0);
            match &want[k] {
                None => want[k] = Some((got.0, got.1, c.name())),
                Some((rows, errors, first)) if (*rows, *errors) != got => {
                    // Not a usage error: a file or a source misbehaved.
                    return Err(Error::from(std::io::Error::other(format!(
                        "{}: sources disagree: {rows} rows and {errors} errors with {first}, \
                         then {} rows and {} errors with {}",
                        groups[c.group][0].path.display(),
                        got.0,
                        got.1,
                        c.name()
                    ))));
                }
                Some(_) => {}
            }
        }
        if let (Some(budget), 1) = (opts.time_budget, round) {
            let per_round = round_start.elapsed().as_secs_f64();
            runs = runs.min((budget.as_secs_f64() / per_round.max(1e-9)).max(1.0) as usize);
        }
    }
    let results = configs
        .iter()
        .zip(acc)
        .map(|(c, a)| {
            let g = &groups[c.group];
            let group = per_file.then(|| FileGroup {
                max_size: size_class(g[0].bytes),
                files: g.len(),
                bytes: g.iter().map(|f| f.bytes).sum(),
            });
            let threads = if c.work.parallel() && !per_file { opts.threads.max(1) } else { 1 };
            finish(
                c,
                a,
                group,
                threads,
                g.iter().map(|f| f.bytes).sum::<u64>() as f64 / g.len() as f64,
                g.len(),
            )
        })
        .collect();
    let env = Env { rss_exact: rss.exact, load: load_before.zip(engine::load_average()), started };
    Ok((results, runs, env))
}

/// A data error in `count` or `select` ends the measurement: the CLI's
/// verbs stop there too, and a partial parse is no figure.
fn stopped(e: Error, c: &Config) -> Error {
    if e.is_data() {
        // Not a usage error: the file has one.
        let msg = format!("{} stops at a data error, as the CLI does: {e}", c.work.as_str());
        Error::from(std::io::Error::other(msg))
    } else {
        e
    }
}

/// The summary of one configuration's runs; `bytes` is what one time in
/// `times` parsed, `files` how many files one sample covers.
fn finish(
    c: &Config,
    a: Acc,
    group: Option<FileGroup>,
    threads: usize,
    bytes: f64,
    files: usize,
) -> ConfigResult {
    let mut sorted = a.times.clone();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2
    } else {
        sorted[mid]
    };
    // CPU and faults per time in `times`: per run, or per file.
    let n = (a.samples.len() * if group.is_some() { files } else { 1 }) as f64;
    let user: f64 = a.samples.iter().map(|s| s.user_s).sum();
    let sys: f64 = a.samples.iter().map(|s| s.sys_s).sum();
    let minflt: u64 = a.samples.iter().map(|s| s.minor_faults).sum();
    let majflt: u64 = a.samples.iter().map(|s| s.major_faults).sum();
    let rate = |secs: f64| if secs > 0.0 { bytes / secs / 1e6 } else { 0.0 };
    ConfigResult {
        work: c.work,
        choice: c.choice,
        source: a.source.unwrap_or(SourceKind::Buffered),
        mixed_sources: a.mixed,
        buffer_size: c.buffer,
        threads,
        read_ahead: a.read_ahead,
        group,
        rows: a.outcome.0,
        errors: a.outcome.1,
        median,
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        mb_per_s: rate(median.as_secs_f64()),
        cpu_mb_per_s: rate((user + sys) / n),
        user_s: user / n,
        sys_s: sys / n,
        minor_faults: (minflt as f64 / n).round() as u64,
        major_faults: (majflt as f64 / n).round() as u64,
        peak_rss_growth: a.growth,
        times: a.times,
        samples: a.samples,
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    path: PathBuf,
    files: usize,
    bytes: u64,
    results: Vec<ConfigResult>,
    runs: usize,
    opts: &BenchOptions,
    works: Vec<Work>,
    env: Env,
    select_columns: Vec<usize>,
) -> BenchReport {
    // The first work's rows: of the one file, or summed over the groups.
    let first: Vec<&ConfigResult> =
        results.iter().filter(|r| r.work == works[0] && r.choice == SourceChoice::Mmap).collect();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    BenchReport {
        path,
        files,
        bytes,
        rows: first.iter().map(|r| r.rows).sum(),
        errors: first.iter().map(|r| r.errors).sum(),
        runs,
        cold: opts.cold,
        works,
        threads: opts.threads.max(1),
        select_columns,
        rss_exact: env.rss_exact,
        results,
        cpus,
        machine: engine::machine(cpus),
        command: None,
        load: env.load,
        started: env.started,
    }
}
