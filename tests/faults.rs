//! Faults the `fastcsv` binary must not hide (issue 36, "nothing lost,
//! nothing silent"): write errors on standard output, a file that shrinks
//! while it is read, very wide records, tiny buffers.
//!
//! The truncation tests use the debug-build hook
//! `FASTCSV_TEST_TRUNCATE_AFTER=N` (the input is cut to `N` bytes once the
//! records past byte `N` were handed to the command), plus one real
//! truncation from this process while the binary is blocked on its output.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A numeric CSV file: a header row, then `rows` records `i,i*7%1000,texti`.
fn numeric(dir: &Path, name: &str, rows: usize) -> (String, Vec<u8>) {
    let mut data = b"a,b,c\n".to_vec();
    for i in 0..rows {
        data.extend_from_slice(format!("{i},{},text{i}\n", i * 7 % 1000).as_bytes());
    }
    let path = dir.join(name);
    std::fs::write(&path, &data).unwrap();
    (path.display().to_string(), data)
}

/// Every verb that writes to standard output, on `file`.
fn writers(file: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).chain([file.to_string()]).collect();
    vec![
        v(&["cat"]),
        v(&["cat", "--to", "jsonl"]),
        v(&["select", "c,a"]),
        v(&["slice", "-l", "3"]),
        v(&["search", "1"]),
        v(&["headers"]),
        v(&["count"]),
        v(&["frequency"]),
        v(&["stats"]),
        v(&["stats", "--csv"]),
        v(&["check"]),
        v(&["parts", "--size", "100"]),
        v(&["bench", "--runs", "1", "--sizes", "4K"]),
    ]
}

/// Exit status 1 and exactly one line on standard error, naming the error.
fn one_write_error(args: &[String], o: &Output, error: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err, format!("fastcsv: write error: {error}\n"), "{args:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_device_fails_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (f, _) = numeric(dir.path(), "n.csv", 50);
    for args in writers(&f) {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN).args(&args).stdout(full).output().unwrap();
        one_write_error(&args, &o, "No space left on device (os error 28)");
    }
}

/// Standard output open for reading only (`1</dev/null`): every write
/// fails with EBADF, which Rust's own `stdout()` would take for success.
#[cfg(unix)]
#[test]
fn a_read_only_stdout_fails_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (f, _) = numeric(dir.path(), "n.csv", 50);
    for args in writers(&f) {
        let null = std::fs::File::open("/dev/null").unwrap();
        let o = Command::new(BIN).args(&args).stdout(null).output().unwrap();
        one_write_error(&args, &o, "Bad file descriptor (os error 9)");
    }
}

/// Standard output closed (`>&-`); Rust's runtime opens `/dev/null` in its
/// place before `main`, which must not make the output vanish silently.
#[cfg(unix)]
#[test]
fn a_closed_stdout_fails_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (f, _) = numeric(dir.path(), "n.csv", 50);
    for args in writers(&f) {
        let o = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" >&-"#)
            .arg(BIN)
            .args(&args)
            .output()
            .unwrap();
        one_write_error(&args, &o, "Bad file descriptor (os error 9)");
    }
    // Written to /dev/null as a shell does it (write-only): no error.
    let o = Command::new("sh")
        .args(["-c", r#"exec "$0" cat "$1" >/dev/null"#, BIN, &f])
        .output()
        .unwrap();
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

/// A reader that stops early (`| head -1`): a quiet exit 0.
#[test]
fn a_pipe_closed_early_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let (f, _) = numeric(dir.path(), "n.csv", 300_000);
    for args in [vec!["cat", &f], vec!["search", "1", &f], vec!["frequency", &f]] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 6];
        child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!((status.code(), err.as_str()), (Some(0), ""), "{args:?}");
    }
}

/// The position `fastcsv: PATH:LINE: record R, byte B: file changed while
/// reading` names, as (line, record, byte); panics on any other message.
fn changed_at(err: &str, path: &str) -> (u64, u64, u64) {
    let rest = err.strip_prefix(&format!("fastcsv: {path}:")).unwrap_or_else(|| panic!("{err}"));
    let rest =
        rest.strip_suffix(": file changed while reading\n").unwrap_or_else(|| panic!("{err}"));
    let (line, rest) = rest.split_once(": record ").unwrap();
    let (record, byte) = rest.split_once(", byte ").unwrap();
    (line.parse().unwrap(), record.parse().unwrap(), byte.parse().unwrap())
}

/// Checks a run cut by a file change: exit 1, one message naming the
/// record where reading stopped (its line and byte in the original
/// `data`), and standard output exactly `out(records before it)`.
fn stopped_at_change(o: &Output, path: &str, data: &[u8], out: impl Fn(u64) -> Vec<u8>) -> u64 {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let (line, record, byte) = changed_at(&err, path);
    // One record a line, the header row being record 0.
    assert_eq!(line, record + 1, "{err}");
    let starts: Vec<usize> = std::iter::once(0)
        .chain(data.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1))
        .collect();
    assert_eq!(byte, starts[record as usize] as u64, "{err}");
    assert!(o.stdout == out(record), "{err}: {} bytes written", o.stdout.len());
    record
}

/// Runs `fastcsv ARGS` with the file cut to `to` bytes once the records
/// past byte `after` were handed out.
fn run_cut(args: &[&str], (after, to): (u64, u64)) -> Output {
    Command::new(BIN)
        .args(args)
        .env("FASTCSV_TEST_TRUNCATE_AFTER", after.to_string())
        .env("FASTCSV_TEST_TRUNCATE_TO", to.to_string())
        .output()
        .unwrap()
}

/// Where to cut (see `run_cut`): behind the reader (at a record's start
/// or inside one), and ahead of it, where the batch being read holds
/// records before the cut (the change is then found after some of them).
const CUTS: [(u64, u64); 4] = [
    (3_000_000, 3_000_000),
    (3_000_000, 3_000_003),
    (3_000_000, 5_000_017),
    (3_000_000, 8_000_017),
];

/// The first `records` lines of `data`.
fn lines(data: &[u8], records: u64) -> Vec<u8> {
    let mut n = 0;
    let end = data
        .iter()
        .position(|&b| {
            n += u64::from(b == b'\n');
            n == records
        })
        .map_or(0, |i| i + 1);
    data[..end].to_vec()
}

#[cfg(all(target_os = "linux", debug_assertions))]
#[test]
fn cat_and_select_stop_at_the_record_where_the_file_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, data) = numeric(dir.path(), "orig.csv", 450_000);
    let f = dir.path().join("t.csv").display().to_string();
    for j in ["1", "2", "4"] {
        for cut in CUTS {
            std::fs::copy(&orig, &f).unwrap();
            let o = run_cut(&["cat", "-j", j, &f], cut);
            let r = stopped_at_change(&o, &f, &data, |r| lines(&data, r));
            assert!(r > 1000, "-j {j}: {r}");
            if j != "2" {
                continue;
            }
            std::fs::copy(&orig, &f).unwrap();
            let o = run_cut(&["select", "c,a", "-j", j, &f], cut);
            let picked = |r: u64| {
                let text = String::from_utf8(lines(&data, r)).unwrap();
                let mut v = String::new();
                for l in text.lines() {
                    let c: Vec<&str> = l.split(',').collect();
                    v.push_str(&format!("{},{}\n", c[2], c[0]));
                }
                v.into_bytes()
            };
            stopped_at_change(&o, &f, &data, picked);
        }
    }
}

/// `check` (parallel or not) reports the change as an error, never "ok"
/// on the shorter file nor a false problem in the data.
#[cfg(all(target_os = "linux", debug_assertions))]
#[test]
fn check_reports_a_changed_file() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, data) = numeric(dir.path(), "orig.csv", 450_000);
    let f = dir.path().join("t.csv").display().to_string();
    for j in ["1", "2"] {
        for cut in CUTS {
            std::fs::copy(&orig, &f).unwrap();
            let o = run_cut(&["check", "-j", j, &f], cut);
            stopped_at_change(&o, &f, &data, |_| Vec::new());
        }
    }
    // A file with a real problem, cut while the parallel pass reads it
    // (ahead of the reader): the problem may be reported, and then the
    // change; never the cut record as a problem, nor a summary.
    let mut bad = data.clone();
    let at = bad.len() * 2 / 3;
    let at = at + bad[at..].iter().position(|&b| b == b'\n').unwrap();
    bad.splice(at..at, *b"\xff");
    std::fs::write(&orig, &bad).unwrap();
    let line = bad[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    for j in ["1", "2", "4"] {
        for to in [5_000_017, bad.len() as u64 - 1_000_003] {
            std::fs::copy(&orig, &f).unwrap();
            let o = run_cut(&["check", "-j", j, &f], (3_000_000, to));
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.starts_with(&format!("fastcsv: {f}:")), "{err}");
            assert!(err.ends_with(": file changed while reading\n"), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            for l in String::from_utf8(o.stdout).unwrap().lines() {
                let want = format!("{f}:{line}: record {}, ", line - 1);
                assert!(l.starts_with(&want) && l.contains("invalid UTF-8 in column 3"), "{l}");
            }
        }
    }
    std::fs::write(&orig, &data).unwrap();
    // Unchanged, the same file is fine.
    let o = Command::new(BIN).args(["check", "-j", "2", &orig]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{orig}: ok, 450000 records\n"));
}

/// A real truncation, from here, while `cat` waits for its output to be
/// read: what was written is a prefix, and the change is reported.
#[cfg(target_os = "linux")]
#[test]
fn a_real_truncation_while_reading() {
    let dir = tempfile::tempdir().unwrap();
    let (f, data) = numeric(dir.path(), "t.csv", 1_200_000);
    for j in ["1", "2"] {
        let (f2, _) = numeric(dir.path(), &format!("t{j}.csv"), 0);
        std::fs::copy(&f, &f2).unwrap();
        let mut child = Command::new(BIN)
            .args(["cat", "-j", j, &f2])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut got = vec![0u8; 4096];
        out.read_exact(&mut got).unwrap();
        // The output pipe and buffer hold far less than this.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f2)
            .unwrap()
            .set_len(data.len() as u64 / 2)
            .unwrap();
        out.read_to_end(&mut got).unwrap();
        let mut err = Vec::new();
        child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
        let status = child.wait().unwrap();
        let o = Output { status, stdout: got, stderr: err };
        stopped_at_change(&o, &f2, &data, |r| lines(&data, r));
    }
}

/// Peak resident memory of `fastcsv ARGS` in KiB (`ru_maxrss`).
#[cfg(target_os = "linux")]
// The child is reaped by `wait4`, which also gives its usage.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&str]) -> (i32, i64) {
    let child =
        Command::new(BIN).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value (integers only).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the child is ours and not yet waited for; both pointers are
    // to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

/// A record of a million empty fields: per-column state stays small until
/// a column has values.
#[cfg(target_os = "linux")]
#[test]
fn very_wide_records_take_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.csv");
    let mut data = ",".repeat(999_999).into_bytes();
    data.push(b'\n');
    data.extend_from_slice(&data.clone());
    std::fs::File::create(&path).unwrap().write_all(&data).unwrap();
    let p = path.display().to_string();
    for args in [vec!["stats", "--no-headers", &p], vec!["frequency", &p]] {
        let (code, kib) = peak_kib(&args);
        assert_eq!(code, 0, "{args:?}");
        assert!(kib < 256 * 1024, "{args:?}: {kib} KiB");
    }
}

/// Counts the `read()` calls made on it.
struct Counting {
    data: std::io::Cursor<Vec<u8>>,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.data.read(buf)
    }
}

/// `buffer_size(1)` bounds what the parser sees at a time, not the size of
/// the reads: a few MiB take a few dozen `read()` calls, not millions.
#[test]
fn a_one_byte_buffer_reads_in_large_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (_, data) = numeric(dir.path(), "n.csv", 200_000);
    let len = data.len();
    let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let src = Counting { data: std::io::Cursor::new(data), reads: reads.clone() };
    let mut rdr = fastcsv::ReaderBuilder::new().buffer_size(1).from_reader(src);
    assert_eq!(rdr.count_rows().unwrap(), 200_000);
    let n = reads.load(std::sync::atomic::Ordering::Relaxed);
    assert!(n <= len / (64 << 10) + 3, "{n} reads for {len} bytes");
    assert_eq!(rdr.buffer_capacity(), Some(32));
}
