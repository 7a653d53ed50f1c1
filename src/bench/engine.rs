//! The engines the bench times (the ones the CLI's verbs run, through the
//! reader's public API) and the process figures taken around them: CPU time
//! and page faults, resident set, load average, the machine, page-cache
//! eviction.

use std::fs::File;
use std::hint::black_box;
use std::path::Path;

use super::Work;
use crate::error::{Error, Result};
use crate::parallel::Parallel;
use crate::reader::Reader;
use crate::select::{Batch, Selection};

/// One parse of the rest of `rdr` with the engine of `work`; returns (rows,
/// data errors). The row-reader modes skip data errors, as the reader
/// allows; `count` and `select` stop at the first one, as the CLI's verbs
/// do, and so does any I/O error.
///
/// `par` is made once, outside the timed region: making one asks the
/// system for the CPUs available (cgroup files on Linux), a fixed cost a
/// CLI process pays once, not per file.
pub(super) fn parse(
    rdr: &mut Reader<'_>,
    work: Work,
    par: &Parallel,
    cols: &[usize],
) -> Result<(u64, u64)> {
    match work {
        Work::Count => Ok((rdr.par_count(par)?.0, 0)),
        Work::Select => select(rdr, par, cols),
        Work::Rows | Work::Fields | Work::Utf8 => rows(rdr, work),
    }
}

/// `fastcsv select`'s engine for columns in ascending order: the CSV of the
/// chosen columns built in memory, in runs of records where the block
/// scanner marked their bytes (`Selection::csv_output`), field by field
/// otherwise; written nowhere.
fn select(rdr: &mut Reader<'_>, par: &Parallel, cols: &[usize]) -> Result<(u64, u64)> {
    let fast = Selection::csv_output(cols.iter().copied());
    let in_order = fast.has_csv_columns();
    let sel = if in_order { fast } else { Selection::new(cols.iter().copied()) };
    let (mut rows, mut bytes) = (0u64, 0usize);
    rdr.par_batches(
        &sel,
        par,
        || (Vec::<u8>::with_capacity(1 << 16), 0u64),
        |b, (out, n)| -> Result<()> {
            *n += b.len() as u64;
            build_csv(b, in_order, out);
            Ok(())
        },
        |(out, n)| {
            rows += std::mem::take(n);
            bytes += out.len();
            out.clear();
            Ok(())
        },
    )?;
    black_box(bytes);
    Ok((rows, 0))
}

/// Appends the batch's selected columns to `out` as CSV lines (fields as
/// they are: the bench measures locating and copying them, not quoting).
fn build_csv(b: &Batch<'_>, in_order: bool, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < b.len() {
        if in_order {
            let (n, run) = b.csv_run(i);
            if n > 0 {
                run.append_to(out);
                i += n;
                continue;
            }
        }
        for (j, f) in b.row(i).iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            out.extend_from_slice(f);
        }
        out.push(b'\n');
        i += 1;
    }
}

/// Every row through `Reader::read_row`, with `work`'s per-row work.
fn rows(rdr: &mut Reader<'_>, work: Work) -> Result<(u64, u64)> {
    let (mut rows, mut errors, mut sink) = (0u64, 0u64, 0usize);
    loop {
        let step = rdr.read_row().and_then(|r| match r {
            None => Ok(None),
            Some(row) => {
                rows += 1;
                match work {
                    Work::Fields => sink += row.iter().map(<[u8]>::len).sum::<usize>(),
                    Work::Utf8 => {
                        for i in 0..row.len() {
                            sink += row.get_str(i)?.len();
                        }
                    }
                    _ => {}
                }
                Ok(Some(()))
            }
        });
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

/// The columns `select` takes from a file whose first record has `width`
/// fields: the first and the middle one (0-based).
pub(super) fn select_columns(width: usize) -> Vec<usize> {
    let mut c = vec![0, width / 2];
    c.dedup();
    c
}

/// The 1-minute load average.
pub(super) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// The CPU model, the CPUs this process may use and the OS, in one line
/// (what Linux says in `/proc`; less elsewhere).
pub(super) fn machine(cpus: usize) -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.split_whitespace().collect::<Vec<_>>().join(" "))
    });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok();
    let mut m = format!("{cpus} CPUs");
    if let Some(model) = model {
        m = format!("{model}, {m}");
    }
    match kernel {
        Some(k) => format!("{m}, {} {}", std::env::consts::OS, k.trim()),
        None => format!("{m}, {}", std::env::consts::OS),
    }
}

/// Drops `path`'s pages from the page cache.
pub(super) fn evict(path: &Path) -> Result<()> {
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
pub(super) struct Usage {
    pub user: f64,
    pub sys: f64,
    pub minflt: u64,
    pub majflt: u64,
    pub maxrss: u64,
}

impl Usage {
    pub fn now() -> Usage {
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

    pub fn minus(&self, o: &Usage) -> Usage {
        Usage {
            user: (self.user - o.user).max(0.0),
            sys: (self.sys - o.sys).max(0.0),
            minflt: self.minflt.saturating_sub(o.minflt),
            majflt: self.majflt.saturating_sub(o.majflt),
            maxrss: self.maxrss,
        }
    }
}

/// Resident-set readings: per-run peaks where Linux lets us reset the
/// high-water mark, the process-wide `ru_maxrss` otherwise.
pub(super) struct RssProbe {
    pub exact: bool,
}

impl RssProbe {
    pub fn new() -> RssProbe {
        let exact = try_reset() && status_kib("VmHWM:").is_some();
        RssProbe { exact }
    }

    pub fn reset(&self) {
        if self.exact {
            try_reset();
        }
    }

    /// Resident bytes now (exact mode), or the high-water mark so far.
    pub fn current(&self) -> u64 {
        if self.exact {
            status_kib("VmRSS:").unwrap_or(0) * 1024
        } else {
            Usage::now().maxrss
        }
    }

    /// Peak resident bytes since the last reset (exact) or ever.
    pub fn peak(&self) -> u64 {
        if self.exact {
            status_kib("VmHWM:").unwrap_or(0) * 1024
        } else {
            Usage::now().maxrss
        }
    }
}

fn try_reset() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_takes_the_first_and_middle_columns() {
        assert_eq!(select_columns(1), [0]);
        assert_eq!(select_columns(2), [0, 1]);
        assert_eq!(select_columns(6), [0, 3]);
    }

    #[test]
    fn every_engine_finds_the_rows() {
        let data = b"a,b,c\n1,\"x,y\",3\n4,5,6\n".repeat(50);
        for work in Work::ALL {
            let mut rdr = Reader::builder()
                .dialect(crate::Dialect::builder().flexible(true).build().unwrap())
                .from_slice(&data);
            // Header, then 2 records, then 49 (header-like) 3-field records
            // and 98 more.
            let par = Parallel::new().threads(2);
            let got = parse(&mut rdr, *work, &par, &[0, 2]).unwrap();
            assert_eq!(got, (149, 0), "{work:?}");
        }
    }
}
