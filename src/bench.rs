//! The measurement harness behind `fastcsv bench` and `benches/`: one file
//! parsed with the mapped source and with the buffered source at each of
//! several buffer sizes, several runs each.
//!
//! For every configuration it reports the median and the range of the wall
//! times, the throughput (10⁶ bytes per second, from the median), the
//! throughput per CPU second, the user and system CPU time and the minor and
//! major page faults per run (deltas of `getrusage(RUSAGE_SELF)`, so the
//! buffered source's read-ahead thread is counted: the reader's drop joins
//! it before the figures are taken), and how
//! much the resident set grew during the run. Runs go round-robin over the
//! configurations (run 1 of each, then run 2, ...), so that a change in the
//! machine's load does not land on one configuration only. It uses only the
//! reader's public API.
//!
//! # Measuring honestly
//!
//! * Every configuration must produce the same number of rows and data
//!   errors, or [`run`] fails: a faster wrong answer is not a result.
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
//! * No figure here is meaningful on a busy machine: say what else was
//!   running when you publish one.
//!
//! ```
//! use fastcsv::bench::{self, BenchOptions, Work};
//! let dir = tempfile::tempdir().unwrap();
//! let p = dir.path().join("fastcsv-bench-doc.csv");
//! std::fs::write(&p, "a,b\n1,2\n3,4\n").unwrap();
//! let opts = BenchOptions { sizes: vec![1024, 4096], runs: 1, work: Work::Fields, ..Default::default() };
//! let report = bench::run(&p, &opts).unwrap();
//! assert_eq!(report.rows, 2);
//! assert_eq!(report.results.len(), 3); // mmap, 1K, 4K
//! assert!(report.to_table().contains("mmap"));
//! ```

use std::fmt::Write as _;
use std::fs::File;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{Dialect, Error, Reader, ReaderBuilder, Result, SourceChoice, SourceKind};

/// What the parse does with each row.
///
/// ```
/// use fastcsv::bench::Work;
/// assert_eq!(Work::parse("fields"), Some(Work::Fields));
/// assert_eq!(Work::Utf8.as_str(), "utf8");
/// assert_eq!(Work::default(), Work::Count);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Work {
    /// Count rows only, touching no field.
    #[default]
    Count,
    /// Touch every field's bytes (sums their lengths).
    Fields,
    /// Validate every field as UTF-8.
    Utf8,
}

impl Work {
    /// Parses `count`, `fields` or `utf8`.
    ///
    /// ```
    /// assert_eq!(fastcsv::bench::Work::parse("nope"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Work> {
        match s {
            "count" => Some(Work::Count),
            "fields" => Some(Work::Fields),
            "utf8" => Some(Work::Utf8),
            _ => None,
        }
    }

    /// The name [`Work::parse`] accepts.
    ///
    /// ```
    /// assert_eq!(fastcsv::bench::Work::Count.as_str(), "count");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Work::Count => "count",
            Work::Fields => "fields",
            Work::Utf8 => "utf8",
        }
    }
}

/// The default buffer-size sweep: 1 KiB to 4 MiB by powers of 4, plus the
/// reader's default 128 KiB.
pub const DEFAULT_SIZES: &[usize] =
    &[1 << 10, 4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20, 4 << 20];

/// What to measure.
///
/// ```
/// let o = fastcsv::bench::BenchOptions::default();
/// assert_eq!(o.runs, 3);
/// assert_eq!(o.sizes, fastcsv::bench::DEFAULT_SIZES);
/// assert!(!o.cold);
/// assert_eq!(o.time_budget, Some(std::time::Duration::from_secs(40)));
/// ```
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Buffer sizes for the buffered source (bytes). May be empty: then only
    /// the mapped source is measured.
    pub sizes: Vec<usize>,
    /// Runs per configuration (at least 1).
    pub runs: usize,
    /// Evict the file from the page cache before each run.
    pub cold: bool,
    /// What to do with each row.
    pub work: Work,
    /// The dialect to parse with.
    pub dialect: Dialect,
    /// Roughly how long the whole measurement may take: after the first
    /// run, `runs` is lowered (to 1 at least) so that every configuration
    /// fits, and [`BenchReport::runs`] says how many were made. `None`
    /// makes exactly `runs` runs. Default 40 s, so that the default
    /// settings (nine configurations) finish within about a minute on a
    /// 1 GiB file, with room for a busy machine.
    pub time_budget: Option<Duration>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            sizes: DEFAULT_SIZES.to_vec(),
            runs: 3,
            cold: false,
            work: Work::Count,
            dialect: Dialect::default(),
            time_budget: Some(Duration::from_secs(40)),
        }
    }
}

/// The figures for one source and buffer size.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("fastcsv-bench-config-doc.csv");
/// std::fs::write(&p, "a\n1\n").unwrap();
/// let o = fastcsv::bench::BenchOptions { sizes: vec![], runs: 2, ..Default::default() };
/// let r = fastcsv::bench::run(&p, &o).unwrap();
/// let c = &r.results[0];
/// assert_eq!(c.source, fastcsv::SourceKind::Mapped);
/// assert_eq!(c.times.len(), 2);
/// assert!(c.min <= c.median && c.median <= c.max);
/// ```
#[derive(Clone, Debug)]
pub struct ConfigResult {
    /// [`SourceKind::Mapped`] or [`SourceKind::Buffered`].
    pub source: SourceKind,
    /// The buffer size (buffered source only).
    pub buffer_size: Option<usize>,
    /// A helper thread worked ahead of the parser (see
    /// [`ReaderBuilder::read_ahead`]): the buffered source's reads, or the
    /// mapped source's page faults during a count; CPU figures include
    /// that thread.
    pub read_ahead: bool,
    /// Wall time of each run (open + parse).
    pub times: Vec<Duration>,
    /// Median wall time.
    pub median: Duration,
    /// Fastest run.
    pub min: Duration,
    /// Slowest run.
    pub max: Duration,
    /// File size / median time, in 10⁶ bytes per second.
    pub mb_per_s: f64,
    /// File size / mean CPU time (user + system) per run, in 10⁶ bytes per
    /// CPU second: steadier than `mb_per_s` on a machine shared with other
    /// work, but blind to time spent waiting for the disk.
    pub cpu_mb_per_s: f64,
    /// User CPU seconds per run (mean).
    pub user_s: f64,
    /// System CPU seconds per run (mean).
    pub sys_s: f64,
    /// Minor page faults per run (mean).
    pub minor_faults: u64,
    /// Major page faults (that needed I/O) per run (mean).
    pub major_faults: u64,
    /// Largest growth of the resident set during a run, in bytes.
    pub peak_rss_growth: u64,
}

impl ConfigResult {
    /// `mmap` (`mmap, fault-ahead` when a helper thread mapped the pages
    /// in ahead of the parser), or `read` with the buffer size (`read
    /// 128K`, and `read 128K, read-ahead` when a helper thread read
    /// ahead); `mmap failed, read` when the file could not be mapped.
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

/// Everything [`run`] measured, with the ways to show it.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The file parsed.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Rows per parse (the same for every configuration).
    pub rows: u64,
    /// Data errors per parse (skipped; the same for every configuration).
    pub errors: u64,
    /// Runs per configuration (fewer than asked for when the time budget
    /// required it).
    pub runs: usize,
    /// Whether the page cache was emptied before each run.
    pub cold: bool,
    /// What was done with each row.
    pub work: Work,
    /// True when peak RSS growth was measured per run (Linux
    /// `clear_refs`), false when it is the growth of the process-wide
    /// `ru_maxrss` (a lower bound).
    pub rss_exact: bool,
    /// Mapped first, then buffered by increasing buffer size.
    pub results: Vec<ConfigResult>,
    /// The machine: CPUs this process may use.
    pub cpus: usize,
    /// The 1-minute load average before and after the measurement (Linux
    /// `/proc/loadavg`), to tell a quiet machine from a busy one.
    pub load: Option<(f64, f64)>,
    /// When the measurement started, in seconds since the Unix epoch.
    pub started: u64,
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

/// Parses `path` with every configuration in `opts`, `opts.runs` times each.
///
/// Fails on I/O errors, and when two configurations disagree on the number
/// of rows or data errors.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("fastcsv-bench-run-doc.csv");
/// std::fs::write(&p, "x,y\n1,2\n").unwrap();
/// let opts = fastcsv::bench::BenchOptions { sizes: vec![1024], runs: 1, ..Default::default() };
/// let r = fastcsv::bench::run(&p, &opts).unwrap();
/// assert_eq!((r.bytes, r.rows), (8, 1));
/// ```
pub fn run(path: &Path, opts: &BenchOptions) -> Result<BenchReport> {
    let meta = std::fs::metadata(path).map_err(|e| Error::from(e).with_path(path))?;
    if !meta.is_file() {
        let msg = "bench needs a regular file (it reads the file many times)";
        return Err(Error::config(msg).with_path(path));
    }
    let bytes = meta.len();
    let mut sizes = opts.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let configs: Vec<Option<usize>> =
        std::iter::once(None).chain(sizes.iter().copied().map(Some)).collect();
    let mut runs = opts.runs.max(1);
    let rss = RssProbe::new();
    let load_before = load_average();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut acc: Vec<Acc> = configs.iter().map(|_| Acc::default()).collect();
    let mut outcome: Option<(u64, u64)> = None;
    // Round-robin: run 1 of every configuration, then run 2, ... so that a
    // change in the machine's load spreads over all of them.
    let mut round = 0;
    while round < runs {
        round += 1;
        for (&buffer_size, acc) in configs.iter().zip(&mut acc) {
            let mut b = ReaderBuilder::new();
            b.dialect(opts.dialect.clone());
            match buffer_size {
                None => b.source(SourceChoice::Mmap),
                Some(n) => b.source(SourceChoice::Buffered).buffer_size(n),
            };
            if opts.cold {
                evict(path)?;
            }
            rss.reset();
            let before_rss = rss.current();
            let before = Usage::now();
            let start = Instant::now();
            let mut rdr = b.from_path(path)?;
            acc.source = Some(rdr.source_kind());
            let got = parse(&mut rdr, opts.work)?;
            // After the parse: the mapped source's helper starts with the
            // first row or the count.
            acc.read_ahead = rdr.reads_ahead();
            drop(rdr);
            let elapsed = start.elapsed();
            let after = Usage::now();
            acc.growth = acc.growth.max(rss.peak().saturating_sub(before_rss));
            acc.cpu = acc.cpu.add(&after.minus(&before));
            acc.times.push(elapsed);
            if let (Some(budget), 1, None) = (opts.time_budget, round, buffer_size) {
                let per_round = elapsed.as_secs_f64() * configs.len() as f64;
                runs = runs.min((budget.as_secs_f64() / per_round).max(1.0) as usize);
            }
            match outcome {
                None => outcome = Some(got),
                Some(want) if want != got => {
                    // Not a usage error: the file or a source misbehaved.
                    return Err(Error::from(std::io::Error::other(format!(
                        "{}: sources disagree: {} rows and {} errors, then {} rows and {} \
                         errors with {}",
                        path.display(),
                        want.0,
                        want.1,
                        got.0,
                        got.1,
                        buffer_size.map_or("mmap".into(), |n| format!("read {n}"))
                    ))));
                }
                Some(_) => {}
            }
        }
    }
    let results = configs.iter().zip(acc).map(|(&b, a)| a.finish(b, bytes)).collect();
    let (rows, errors) = outcome.unwrap_or((0, 0));
    Ok(BenchReport {
        path: path.to_path_buf(),
        bytes,
        rows,
        errors,
        runs,
        cold: opts.cold,
        work: opts.work,
        rss_exact: rss.exact,
        results,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        load: load_before.zip(load_average()),
        started,
    })
}

/// The 1-minute load average.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// What the runs of one configuration measured so far.
#[derive(Default)]
struct Acc {
    source: Option<SourceKind>,
    read_ahead: bool,
    times: Vec<Duration>,
    cpu: Usage,
    growth: u64,
}

impl Acc {
    fn finish(self, buffer_size: Option<usize>, bytes: u64) -> ConfigResult {
        let mut sorted = self.times.clone();
        sorted.sort_unstable();
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] + sorted[mid]) / 2
        } else {
            sorted[mid]
        };
        let n = self.times.len() as f64;
        let rate = |secs: f64| if secs > 0.0 { bytes as f64 / secs / 1e6 } else { 0.0 };
        ConfigResult {
            source: self.source.unwrap_or(SourceKind::Buffered),
            buffer_size,
            read_ahead: self.read_ahead,
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            mb_per_s: rate(median.as_secs_f64()),
            cpu_mb_per_s: rate((self.cpu.user + self.cpu.sys) / n),
            user_s: self.cpu.user / n,
            sys_s: self.cpu.sys / n,
            minor_faults: (self.cpu.minflt as f64 / n).round() as u64,
            major_faults: (self.cpu.majflt as f64 / n).round() as u64,
            peak_rss_growth: self.growth,
            times: self.times,
        }
    }
}

/// One parse; returns (rows, data errors). Data errors are skipped, as the
/// reader allows; I/O errors end the run.
fn parse(rdr: &mut Reader<'_>, work: Work) -> Result<(u64, u64)> {
    let (mut rows, mut errors, mut sink) = (0u64, 0u64, 0usize);
    loop {
        let step = match work {
            Work::Count => rdr.read_row().map(|r| {
                r.map(|_| {
                    rows += 1;
                })
            }),
            Work::Fields => rdr.read_row().map(|r| {
                r.map(|row| {
                    rows += 1;
                    sink += row.iter().map(<[u8]>::len).sum::<usize>();
                })
            }),
            Work::Utf8 => rdr.read_row().and_then(|r| match r {
                None => Ok(None),
                Some(row) => {
                    rows += 1;
                    for i in 0..row.len() {
                        sink += row.get_str(i)?.len();
                    }
                    Ok(Some(()))
                }
            }),
        };
        match step {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) if e.is_data() => errors += 1,
            Err(e) => return Err(e),
        }
    }
    black_box(sink);
    Ok((rows, errors))
}

/// Drops `path`'s pages from the page cache.
fn evict(path: &Path) -> Result<()> {
    let f = File::open(path).map_err(|e| Error::from(e).with_path(path))?;
    #[cfg(not(target_os = "linux"))]
    {
        drop(f);
        return Err(Error::config("cold runs (evicting the page cache) need Linux"));
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is open for the duration of the call;
        // posix_fadvise only changes caching.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(Error::from(std::io::Error::from_raw_os_error(rc)).with_path(path));
        }
        drop(f);
        Ok(())
    }
}

/// CPU time and page faults of this process.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    user: f64,
    sys: f64,
    minflt: u64,
    majflt: u64,
    maxrss: u64,
}

impl Usage {
    fn now() -> Usage {
        #[cfg(unix)]
        {
            // SAFETY: all-zero is a valid `rusage`; getrusage fills it.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `ru` is a valid, writable `rusage`.
            if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
                let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
                return Usage {
                    user: t(ru.ru_utime),
                    sys: t(ru.ru_stime),
                    minflt: ru.ru_minflt as u64,
                    majflt: ru.ru_majflt as u64,
                    // Bytes on macOS, kilobytes elsewhere.
                    maxrss: ru.ru_maxrss as u64 * if cfg!(target_os = "macos") { 1 } else { 1024 },
                };
            }
        }
        Usage::default()
    }

    fn minus(&self, o: &Usage) -> Usage {
        Usage {
            user: self.user - o.user,
            sys: self.sys - o.sys,
            minflt: self.minflt.saturating_sub(o.minflt),
            majflt: self.majflt.saturating_sub(o.majflt),
            maxrss: self.maxrss,
        }
    }

    fn add(&self, o: &Usage) -> Usage {
        Usage {
            user: self.user + o.user,
            sys: self.sys + o.sys,
            minflt: self.minflt + o.minflt,
            majflt: self.majflt + o.majflt,
            maxrss: self.maxrss.max(o.maxrss),
        }
    }
}

/// Resident-set readings: per-run peaks where Linux lets us reset the
/// high-water mark, the process-wide `ru_maxrss` otherwise.
struct RssProbe {
    exact: bool,
}

impl RssProbe {
    fn new() -> RssProbe {
        let probe = RssProbe { exact: true };
        let exact = probe.try_reset() && status_kib("VmHWM:").is_some();
        RssProbe { exact }
    }

    fn try_reset(&self) -> bool {
        std::fs::write("/proc/self/clear_refs", "5").is_ok()
    }

    fn reset(&self) {
        if self.exact {
            self.try_reset();
        }
    }

    /// Resident bytes now (exact mode), or the high-water mark so far.
    fn current(&self) -> u64 {
        if self.exact {
            status_kib("VmRSS:").unwrap_or(0) * 1024
        } else {
            Usage::now().maxrss
        }
    }

    /// Peak resident bytes since the last reset (exact) or ever.
    fn peak(&self) -> u64 {
        if self.exact {
            status_kib("VmHWM:").unwrap_or(0) * 1024
        } else {
            Usage::now().maxrss
        }
    }
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// A duration with a unit that keeps 3-4 significant digits:
/// `6.988 s`, `12.35 ms`, `45.2 µs`.
fn dur(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn mib(n: u64) -> String {
    format!("{:.1}", n as f64 / (1024.0 * 1024.0))
}

/// Escapes a string for JSON and SVG text (both need `"` and `\` or `&<>`
/// handled; the callers pick).
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A finite JSON number (JSON has no NaN or infinity).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "null".into()
    }
}

impl BenchReport {
    /// One line describing the input and the settings.
    fn title(&self) -> String {
        let name = self
            .path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let size = if self.bytes >= 1_000_000 {
            format!("{:.1} MB", self.bytes as f64 / 1e6)
        } else {
            format!("{} bytes", self.bytes)
        };
        format!(
            "{name}: {size}, {} row{}, work={}, {} run{} each, {}",
            self.rows,
            if self.rows == 1 { "" } else { "s" },
            self.work.as_str(),
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            if self.cold { "cold cache" } else { "warm cache" }
        )
    }

    /// An aligned text table, one configuration per line.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-table-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![1024], runs: 1, ..Default::default() };
    /// let t = fastcsv::bench::run(&p, &o).unwrap().to_table();
    /// assert!(t.lines().nth(1).unwrap().starts_with("source"));
    /// assert!(t.contains("read 1K"));
    /// ```
    pub fn to_table(&self) -> String {
        let head = [
            "source",
            "median",
            "min-max",
            "MB/s",
            "CPU MB/s",
            "user s",
            "sys s",
            "minflt",
            "majflt",
            if self.rss_exact { "peak RSS+ MiB" } else { "maxrss+ MiB" },
        ];
        let mut rows: Vec<[String; 10]> = vec![head.map(String::from)];
        for r in &self.results {
            rows.push([
                r.label(),
                dur(r.median),
                format!("{} - {}", dur(r.min), dur(r.max)),
                format!("{:.1}", r.mb_per_s),
                format!("{:.1}", r.cpu_mb_per_s),
                format!("{:.3}", r.user_s),
                format!("{:.3}", r.sys_s),
                r.minor_faults.to_string(),
                r.major_faults.to_string(),
                mib(r.peak_rss_growth),
            ]);
        }
        let mut widths = [0usize; 10];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = self.title();
        out.push('\n');
        for row in &rows {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i == 0 {
                    let _ = write!(line, "{cell:<w$}");
                } else {
                    let _ = write!(line, "  {cell:>w$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if self.errors > 0 {
            let _ = writeln!(out, "({} data errors skipped per parse)", self.errors);
        }
        if let Some((before, after)) = self.load {
            let _ = writeln!(
                out,
                "(load average {before:.2} before, {after:.2} after, {} CPUs{})",
                self.cpus,
                if before.max(after) > 0.5 * self.cpus as f64 {
                    ": the machine was busy, timings are noisy"
                } else {
                    ""
                }
            );
        }
        out
    }

    /// The report as one JSON object (keys: `file`, `bytes`, `rows`,
    /// `errors`, `work`, `runs`, `cold`, `rss_exact`, `cpus`, `load_before`,
    /// `load_after`, `started_unix`, `results`; each result
    /// has `source`, `buffer_size`, `read_ahead`, `median_s`, `min_s`, `max_s`, `times_s`,
    /// `mb_per_s`, `cpu_mb_per_s`, `user_s`, `sys_s`, `minor_faults`, `major_faults`,
    /// `peak_rss_growth_bytes`).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-json-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![], runs: 1, ..Default::default() };
    /// let j = fastcsv::bench::run(&p, &o).unwrap().to_json();
    /// assert!(j.starts_with('{') && j.contains("\"source\": \"mmap\""));
    /// ```
    pub fn to_json(&self) -> String {
        let mut o = String::from("{\n");
        let _ = writeln!(o, "  \"file\": {},", json_str(&self.path.display().to_string()));
        let _ = writeln!(o, "  \"bytes\": {},", self.bytes);
        let _ = writeln!(o, "  \"rows\": {},", self.rows);
        let _ = writeln!(o, "  \"errors\": {},", self.errors);
        let _ = writeln!(o, "  \"work\": {},", json_str(self.work.as_str()));
        let _ = writeln!(o, "  \"runs\": {},", self.runs);
        let _ = writeln!(o, "  \"cold\": {},", self.cold);
        let _ = writeln!(o, "  \"rss_exact\": {},", self.rss_exact);
        let _ = writeln!(o, "  \"cpus\": {},", self.cpus);
        let (lb, la) = self.load.map_or(("null".into(), "null".into()), |(b, a)| (num(b), num(a)));
        let _ = writeln!(o, "  \"load_before\": {lb},");
        let _ = writeln!(o, "  \"load_after\": {la},");
        let _ = writeln!(o, "  \"started_unix\": {},", self.started);
        o.push_str("  \"results\": [");
        for (i, r) in self.results.iter().enumerate() {
            o.push_str(if i == 0 { "\n" } else { ",\n" });
            let times: Vec<String> = r.times.iter().map(|t| num(t.as_secs_f64())).collect();
            let source = if r.source == SourceKind::Mapped { "mmap" } else { "read" };
            let _ = write!(
                o,
                "    {{\"source\": {}, \"buffer_size\": {}, \"read_ahead\": {}, \"median_s\": {}, \"min_s\": {}, \
                 \"max_s\": {}, \"times_s\": [{}], \"mb_per_s\": {}, \"cpu_mb_per_s\": {}, \"user_s\": {}, \
                 \"sys_s\": {}, \"minor_faults\": {}, \"major_faults\": {}, \
                 \"peak_rss_growth_bytes\": {}}}",
                json_str(source),
                r.buffer_size.map_or("null".into(), |n| n.to_string()),
                r.read_ahead,
                num(r.median.as_secs_f64()),
                num(r.min.as_secs_f64()),
                num(r.max.as_secs_f64()),
                times.join(", "),
                num(r.mb_per_s),
                num(r.cpu_mb_per_s),
                num(r.user_s),
                num(r.sys_s),
                r.minor_faults,
                r.major_faults,
                r.peak_rss_growth
            );
        }
        o.push_str("\n  ]\n}\n");
        o
    }

    /// An SVG chart: throughput of the buffered source against buffer size
    /// (log scale), the mapped source as a horizontal line, with axis
    /// titles and units, a legend and a title.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-svg-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![1024, 4096], runs: 1, ..Default::default() };
    /// let svg = fastcsv::bench::run(&p, &o).unwrap().to_svg();
    /// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    /// assert!(svg.contains("throughput (MB/s)"));
    /// ```
    pub fn to_svg(&self) -> String {
        const W: f64 = 760.0;
        const H: f64 = 460.0;
        let (left, right, top, bottom) = (80.0, W - 200.0, 60.0, H - 70.0);
        let buffered: Vec<(f64, f64, &ConfigResult)> = self
            .results
            .iter()
            .filter_map(|r| r.buffer_size.map(|n| ((n as f64).log2(), r.mb_per_s, r)))
            .collect();
        let mapped = self.results.iter().find(|r| r.buffer_size.is_none());
        // Axes: x from the smallest to the largest size (one octave of
        // padding on each side), y from 0 to a round number above the max.
        let (mut x0, mut x1) = buffered
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
        if !x0.is_finite() {
            (x0, x1) = (10.0, 22.0);
        }
        x0 = x0.floor() - 1.0;
        x1 = x1.ceil() + 1.0;
        let ymax_data =
            buffered.iter().map(|p| p.1).chain(mapped.map(|m| m.mb_per_s)).fold(0.0f64, f64::max);
        let step = nice_step(ymax_data.max(1.0) / 5.0);
        let y1 = ((ymax_data / step).floor() + 1.0) * step;
        let px = |x: f64| left + (x - x0) / (x1 - x0) * (right - left);
        let py = |y: f64| bottom - y / y1 * (bottom - top);

        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
             viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">"
        );
        let _ = writeln!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" \
             font-weight=\"bold\">fastcsv bench: throughput by source and buffer size</text>",
            W / 2.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"42\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
            W / 2.0,
            xml(&self.title())
        );
        // Grid and y ticks.
        let mut y = 0.0;
        while y <= y1 + step / 2.0 {
            let v = py(y);
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{v:.1}\" x2=\"{right}\" y2=\"{v:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                v + 4.0,
                fmt_tick(y)
            );
            y += step;
        }
        // x ticks: every power of two in range, labelled every other one
        // when crowded.
        let every = if x1 - x0 > 14.0 { 2 } else { 1 };
        let mut e = x0 as i64;
        while e as f64 <= x1 {
            let h = px(e as f64);
            let _ = writeln!(
                s,
                "<line x1=\"{h:.1}\" y1=\"{bottom}\" x2=\"{h:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
                bottom + 5.0
            );
            if e.rem_euclid(every) == 0 && (0..63).contains(&e) {
                let _ = writeln!(
                    s,
                    "<text x=\"{h:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    bottom + 19.0,
                    format_size(1u64 << e)
                );
            }
            e += 1;
        }
        // Axes and their titles.
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"#333\"/>\
             <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" stroke=\"#333\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">read() buffer size \
             (bytes, log scale)</text>",
            (left + right) / 2.0,
            bottom + 42.0
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(24 {:.1}) rotate(-90)\" \
             text-anchor=\"middle\">throughput (MB/s)</text>",
            (top + bottom) / 2.0
        );
        // The mapped source: a horizontal dashed line.
        if let Some(m) = mapped {
            let v = py(m.mb_per_s);
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{v:.1}\" x2=\"{right}\" y2=\"{v:.1}\" \
                 stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"8 5\">\
                 <title>mmap: {:.1} MB/s</title></line>",
                m.mb_per_s
            );
        }
        // The buffered source: a line through the points.
        if !buffered.is_empty() {
            let pts: Vec<String> =
                buffered.iter().map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1))).collect();
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>",
                pts.join(" ")
            );
            for (x, y, r) in &buffered {
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#1f77b4\">\
                     <title>{}: {:.1} MB/s (median of {})</title></circle>",
                    px(*x),
                    py(*y),
                    xml(&r.label()),
                    y,
                    self.runs
                );
            }
        }
        // Legend.
        let lx = right + 20.0;
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"{top}\" width=\"170\" height=\"56\" fill=\"white\" \
             stroke=\"#999\"/>\
             <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f77b4\" \
             stroke-width=\"2\"/><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#1f77b4\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">read() buffered</text>\
             <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#d62728\" \
             stroke-width=\"2\" stroke-dasharray=\"8 5\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">mmap</text>",
            lx + 10.0,
            top + 18.0,
            lx + 40.0,
            top + 18.0,
            lx + 25.0,
            top + 18.0,
            lx + 48.0,
            top + 22.0,
            lx + 10.0,
            top + 40.0,
            lx + 40.0,
            top + 40.0,
            lx + 48.0,
            top + 44.0
        );
        s.push_str("</svg>\n");
        s
    }
}

/// 1, 2 or 5 times a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= x).unwrap_or(10.0 * p)
}

fn fmt_tick(y: f64) -> String {
    if y.fract() == 0.0 {
        format!("{y:.0}")
    } else {
        format!("{y}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(130.0), 200.0);
        assert_eq!(nice_step(400.0), 500.0);
        assert_eq!(nice_step(1000.0), 1000.0);
    }

    #[test]
    fn durations_keep_their_digits() {
        assert_eq!(dur(Duration::from_millis(6988)), "6.988 s");
        assert_eq!(dur(Duration::from_micros(12_345)), "12.35 ms");
        assert_eq!(dur(Duration::from_nanos(45_200)), "45.2 µs");
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        assert_eq!(num(f64::NAN), "null");
    }
}
