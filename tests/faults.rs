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

// ---------------------------------------------------------------------------
// The Rust core (issue 36, "nothing lost, nothing silent"): a file that
// shrinks while the library reads it. Every API that reads a file (rows,
// batches, counts, the parallel readers, split parts, Arrow columns), on
// the mapped and the `read()` source, on one thread and several: the
// read ends in `ErrorKind::FileChanged` naming the path and the line,
// record and byte of the first record not handed out, and the rows handed
// out before it are exactly the file's first rows. The truncation is done
// from the test itself, from inside the reading (between rows, in a
// `sink` or `progress` callback), so each case is deterministic; two
// more cut the file from another thread while it is read.
// ---------------------------------------------------------------------------
mod core {
    use std::path::Path;

    use fastcsv::arrow::{Columns, ParColumns};
    use fastcsv::split::Splitter;
    use fastcsv::SourceChoice;
    use fastcsv::{Dialect, Error, ErrorKind, Parallel, Position, ReaderBuilder, Selection};

    /// A row's fields.
    type Row = Vec<Vec<u8>>;

    /// A read of a file: the rows handed out, and how it ended.
    type Read<'f> = &'f dyn Fn() -> (Vec<Row>, Option<Error>);

    /// A header row, then `n` records whose second field is quoted and
    /// holds a line end and a comma.
    fn sample(n: usize) -> Vec<u8> {
        let mut v = b"a,b,c\n".to_vec();
        for i in 0..n {
            v.extend_from_slice(format!("{i},\"q{i}\nx,y\",t{}\n", i * 7 % 1000).as_bytes());
        }
        v
    }

    /// Every record of `data` (the header row first) with its position,
    /// then the end's.
    fn expected(data: &[u8]) -> Vec<(Row, Position)> {
        let d = Dialect::builder().headers(false).build().unwrap();
        let mut rdr = ReaderBuilder::new().dialect(d).from_slice(data);
        let mut v = Vec::new();
        while let Some(r) = rdr.read_row().unwrap() {
            v.push((r.iter().map(|f| f.to_vec()).collect(), r.position()));
        }
        // The end: where a read that had every row before the file was
        // cut (a read-ahead thread that read it all first) reports it.
        let end =
            Position { byte: data.len() as u64, line: rdr.line() + 1, record: v.len() as u64 };
        v.push((Vec::new(), end));
        v
    }

    /// The original file and where to cut it: at a record's start, inside
    /// a record, inside a quoted field (after its line end), and on a page
    /// boundary (mapped pages past it fault; before, the cut page reads as
    /// zeros without a fault).
    struct Case {
        data: Vec<u8>,
        exp: Vec<(Row, Position)>,
        cuts: Vec<(&'static str, u64)>,
    }

    fn case() -> Case {
        let data = sample(45_000);
        let exp = expected(&data);
        let at = |r: usize| exp[r].1.byte;
        let r = exp.len() * 2 / 3;
        let cuts = vec![
            ("record start", at(r)),
            ("mid-record", at(r) + 2),
            (
                "inside quotes",
                at(r) + data[at(r) as usize..].iter().position(|&b| b == b'\n').unwrap() as u64 + 2,
            ),
            ("page boundary", at(r) / 4096 * 4096),
        ];
        Case { data, exp, cuts }
    }

    fn cut(path: &Path, to: u64) {
        std::fs::OpenOptions::new().write(true).open(path).unwrap().set_len(to).unwrap();
    }

    /// The sources, with a buffer far smaller than the file.
    fn builders() -> Vec<(&'static str, ReaderBuilder)> {
        let mut m = ReaderBuilder::new();
        m.source(SourceChoice::Mmap);
        let mut r = ReaderBuilder::new();
        r.source(SourceChoice::Buffered).read_ahead(false);
        let mut a = ReaderBuilder::new();
        a.source(SourceChoice::Buffered).read_ahead(true);
        vec![("mmap", m), ("read", r), ("read-ahead", a)]
    }

    /// Checks how a read of `path` cut at `to` ended: `rows` (data rows
    /// handed out) are the file's first rows, and `err` is `FileChanged`
    /// at the record after them, with its path, line and byte. Returns
    /// the rows handed out.
    fn check(c: &Case, path: &Path, to: u64, what: &str, rows: &[Row], err: Option<Error>) {
        let err =
            err.unwrap_or_else(|| panic!("{what}: ended with success after {} rows", rows.len()));
        assert!(matches!(err.kind(), ErrorKind::FileChanged), "{what}: {err}");
        assert_eq!(err.path(), Some(path), "{what}: {err}");
        for (i, r) in rows.iter().enumerate() {
            assert!(*r == c.exp[i + 1].0, "{what}: row {i} is not the file's: {r:?}");
        }
        let p = err.position().unwrap_or_else(|| panic!("{what}: no position: {err}"));
        assert_eq!(p, c.exp[rows.len() + 1].1, "{what}: {err} after {} rows", rows.len());
        // Nothing past the cut was handed out from a mapping cut before it
        // was read (a `read()` source may have read past it before the
        // cut, and a cut from another thread may come after the reads:
        // real bytes either way).
        if what.contains("mmap") && !what.starts_with("concurrent") {
            assert!(p.byte <= to, "{what}: {err}");
        }
    }

    /// Like `check` for a count: only the error is seen, at a record of
    /// the file.
    fn check_count(c: &Case, path: &Path, what: &str, r: Result<u64, Error>) {
        let err = match r {
            Ok(n) => panic!("{what}: counted {n} with success"),
            Err(e) => e,
        };
        assert!(matches!(err.kind(), ErrorKind::FileChanged), "{what}: {err}");
        assert_eq!(err.path(), Some(path), "{what}: {err}");
        let p = err.position().unwrap_or_else(|| panic!("{what}: no position: {err}"));
        assert_eq!(p, c.exp[p.record as usize].1, "{what}: {err}");
    }

    fn fields<'r>(it: impl Iterator<Item = &'r [u8]>) -> Row {
        it.map(|f| f.to_vec()).collect()
    }

    /// Runs `each(case, path, to, what, builder)` on a fresh copy of the
    /// file for every cut and source.
    fn each_cut(name: &str, mut each: impl FnMut(&Case, &Path, u64, &str, &ReaderBuilder)) {
        let c = case();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{name}.csv"));
        for (src, b) in builders() {
            for &(at, to) in &c.cuts {
                std::fs::write(&path, &c.data).unwrap();
                each(&c, &path, to, &format!("{name}, {src}, cut {at} ({to})"), &b);
            }
        }
    }

    #[test]
    fn read_row_stops_at_a_change() {
        each_cut("rows", |c, path, to, what, b| {
            let mut rdr = b.from_path(path).unwrap();
            let (mut rows, mut err) = (Vec::new(), None);
            loop {
                match rdr.read_row() {
                    Ok(Some(r)) => rows.push(fields(r.iter())),
                    Ok(None) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
                if rows.len() == 10 {
                    cut(path, to);
                }
            }
            check(c, path, to, what, &rows, err);
        });
    }

    #[test]
    fn read_batch_stops_at_a_change() {
        each_cut("batches", |c, path, to, what, b| {
            let mut rdr = b.from_path(path).unwrap();
            let mut sel = Selection::all();
            let (mut rows, mut err) = (Vec::new(), None);
            loop {
                match rdr.read_batch(&mut sel) {
                    Ok(Some(batch)) => rows.extend(batch.iter().map(|r| fields(r.iter()))),
                    Ok(None) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
                if rows.len() < 2000 {
                    cut(path, to);
                }
            }
            check(c, path, to, what, &rows, err);
        });
    }

    #[test]
    fn count_rows_stops_at_a_change() {
        each_cut("count", |c, path, _, what, b| {
            let mut rdr = b.from_path(path).unwrap();
            for _ in 0..10 {
                rdr.read_row().unwrap().unwrap();
            }
            cut(path, c.cuts[0].1.min(std::fs::metadata(path).unwrap().len()));
            check_count(c, path, what, rdr.count_rows());
        });
    }

    #[test]
    fn par_batches_stop_at_a_change() {
        for threads in [1, 3] {
            each_cut(&format!("par-batches-{threads}"), |c, path, to, what, b| {
                let mut rdr = b.from_path(path).unwrap();
                let par = Parallel::new().threads(threads).chunk_size(64 << 10);
                let mut rows: Vec<Row> = Vec::new();
                let mut cuts = 0;
                let r = rdr.par_batches(
                    &Selection::all(),
                    &par,
                    Vec::new,
                    |batch, out: &mut Vec<Row>| -> Result<(), Error> {
                        out.extend(batch.iter().map(|r| fields(r.iter())));
                        Ok(())
                    },
                    |out| {
                        rows.append(out);
                        if cuts == 0 && !rows.is_empty() {
                            cuts += 1;
                            cut(path, to);
                        }
                        Ok(())
                    },
                );
                check(c, path, to, what, &rows, r.err());
            });
        }
    }

    #[test]
    fn par_count_stops_at_a_change() {
        for threads in [1, 3] {
            each_cut(&format!("par-count-{threads}"), |c, path, to, what, b| {
                let mut rdr = b.from_path(path).unwrap();
                let par = Parallel::new().threads(threads).chunk_size(64 << 10);
                let mut cut_yet = false;
                if threads == 1 || !what.contains("mmap") {
                    // Counted on this thread, with no progress calls:
                    // cut after a few rows.
                    rdr.read_row().unwrap().unwrap();
                    cut(path, to);
                    cut_yet = true;
                }
                let r = rdr.par_count_with(&par, |_| {
                    if !cut_yet {
                        cut_yet = true;
                        cut(path, to);
                    }
                });
                check_count(c, path, what, r.map(|(n, _)| n));
            });
        }
    }

    /// Parts of a split file, each read by its own reader, in order.
    #[test]
    fn split_parts_stop_at_a_change() {
        each_cut("parts", |c, path, to, what, b| {
            let parts = Splitter::new(&Dialect::default()).split_path(path, 256 << 10).unwrap();
            assert!(parts.len() > 4);
            let (mut rows, mut err) = (Vec::new(), None);
            'parts: for p in &parts {
                let mut rdr = match b.from_path_part(path, p) {
                    Ok(r) => r,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                };
                loop {
                    match rdr.read_row() {
                        Ok(Some(r)) => rows.push(fields(r.iter())),
                        Ok(None) => break,
                        Err(e) => {
                            err = Some(e);
                            break 'parts;
                        }
                    }
                    if rows.len() == 10 {
                        cut(path, to);
                    }
                }
            }
            check(c, path, to, what, &rows, err);
        });
    }

    /// The rows of a batch of text columns.
    fn column_rows(b: &fastcsv::arrow::ColumnBatch) -> Vec<Row> {
        (0..b.rows())
            .map(|i| (0..3).map(|j| b.strings(j).get(i).as_bytes().to_vec()).collect())
            .collect()
    }

    #[test]
    fn columns_stop_at_a_change() {
        each_cut("columns", |c, path, to, what, b| {
            let mut cols = Columns::new(b.from_path(path).unwrap()).unwrap();
            cols.batch_rows(1000);
            let (mut rows, mut err) = (Vec::new(), None);
            loop {
                match cols.next_batch() {
                    Ok(Some(batch)) => rows.extend(column_rows(&batch)),
                    Ok(None) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
                if rows.len() == 1000 {
                    cut(path, to);
                }
            }
            check(c, path, to, what, &rows, err);
        });
    }

    #[test]
    fn par_columns_stop_at_a_change() {
        for threads in [1, 3] {
            each_cut(&format!("par-columns-{threads}"), |c, path, to, what, b| {
                let mut cols = ParColumns::from_path(b, path, false, threads, 128 << 10).unwrap();
                cols.batch_rows(1000);
                let (mut rows, mut err) = (Vec::new(), None);
                loop {
                    match cols.next_batch() {
                        Ok(Some(batch)) => rows.extend(column_rows(&batch)),
                        Ok(None) => break,
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                    if rows.len() <= 1000 {
                        cut(path, to);
                    }
                }
                check(c, path, to, what, &rows, err);
            });
        }
    }

    /// A mapped file cut inside a quoted field, near a page's start: the
    /// rest of that page reads as zeros without a fault, and a field limit
    /// smaller than those zeros fails inside them. The change is the
    /// error, not the field (issue 36's "truncation reported as a
    /// malformed field"), on every path that reads rows.
    #[test]
    fn zeros_past_a_cut_are_a_change_not_a_field_error() {
        let c = case();
        // A quoted field's line end in the first 500 bytes of a page, past
        // the middle of the file.
        let r = (c.exp.len() / 2..c.exp.len())
            .find(|&r| {
                let nl = c.exp[r].1.byte as usize
                    + c.data[c.exp[r].1.byte as usize..].iter().position(|&b| b == b'\n').unwrap();
                nl % 4096 < 500
            })
            .unwrap();
        let to = c.exp[r].1.byte
            + c.data[c.exp[r].1.byte as usize..].iter().position(|&b| b == b'\n').unwrap() as u64
            + 1;
        let d = Dialect::builder().field_limit(Some(2000)).build().unwrap();
        let mut b = ReaderBuilder::new();
        b.source(SourceChoice::Mmap).dialect(d);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limit.csv");
        let reads: [(&str, Read<'_>); 3] = [
            ("rows", &|| {
                let mut rdr = b.from_path(&path).unwrap();
                cut(&path, to);
                let mut rows = Vec::new();
                loop {
                    match rdr.read_row() {
                        Ok(Some(r)) => rows.push(fields(r.iter())),
                        Ok(None) => return (rows, None),
                        Err(e) => return (rows, Some(e)),
                    }
                }
            }),
            ("batches", &|| {
                let mut rdr = b.from_path(&path).unwrap();
                cut(&path, to);
                let mut sel = Selection::all();
                let mut rows = Vec::new();
                loop {
                    match rdr.read_batch(&mut sel) {
                        Ok(Some(batch)) => rows.extend(batch.iter().map(|r| fields(r.iter()))),
                        Ok(None) => return (rows, None),
                        Err(e) => return (rows, Some(e)),
                    }
                }
            }),
            ("par_batches", &|| {
                let mut rdr = b.from_path(&path).unwrap();
                cut(&path, to);
                let par = Parallel::new().threads(3).chunk_size(64 << 10);
                let mut rows: Vec<Row> = Vec::new();
                let r = rdr.par_batches(
                    &Selection::all(),
                    &par,
                    Vec::new,
                    |batch, out: &mut Vec<Row>| -> Result<(), Error> {
                        out.extend(batch.iter().map(|r| fields(r.iter())));
                        Ok(())
                    },
                    |out| {
                        rows.append(out);
                        Ok(())
                    },
                );
                (rows, r.err())
            }),
        ];
        for (what, read) in reads {
            std::fs::write(&path, &c.data).unwrap();
            let (rows, err) = read();
            check(&c, &path, to, &format!("{what}, mmap, field limit"), &rows, err);
            // Rows stop at the cut one (a batch that holds it is not
            // handed out).
            assert!(rows.len() < r && (what != "rows" || rows.len() + 1 == r), "{what}");
        }
    }

    /// Records that end in NUL bytes: past a cut inside a page, the zeros
    /// the page reads as end a record early, with no fault (and so no
    /// flag) and no error. Such a record is never handed out: a record
    /// whose last byte reads as zero sends the reader to the file's size,
    /// which shows the cut (here at the first record after it, as every
    /// record ends in a zero).
    #[test]
    fn a_record_ended_by_the_zeros_is_not_handed_out() {
        let mut data = b"a,b\0".to_vec();
        for i in 0..20_000 {
            data.extend_from_slice(format!("{i},text{i}\0").as_bytes());
        }
        // Inside a record in the first 100 bytes of a page.
        let to = (data.len() / 2 / 4096 * 4096 + 50) as u64;
        let d = Dialect::builder().terminator(fastcsv::Terminator::Byte(0)).build().unwrap();
        let exp = {
            let d = d.to_builder().headers(false).build().unwrap();
            let mut rdr = ReaderBuilder::new().dialect(d).from_slice(&data);
            let mut v = Vec::new();
            while let Some(r) = rdr.read_row().unwrap() {
                v.push((r.iter().map(|f| f.to_vec()).collect::<Row>(), r.position()));
            }
            v
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nul.csv");
        std::fs::write(&path, &data).unwrap();
        let mut rdr =
            ReaderBuilder::new().source(SourceChoice::Mmap).dialect(d).from_path(&path).unwrap();
        let mut rows = Vec::new();
        let err = loop {
            match rdr.read_row() {
                Ok(Some(r)) => rows.push(fields(r.iter())),
                Ok(None) => panic!("ended with success after {} rows", rows.len()),
                Err(e) => break e,
            }
            if rows.len() == 10 {
                cut(&path, to);
            }
        };
        assert!(matches!(err.kind(), ErrorKind::FileChanged), "{err}");
        for (i, r) in rows.iter().enumerate() {
            assert!(*r == exp[i + 1].0, "row {i} is not the file's: {r:?}");
        }
        let p = err.position().unwrap();
        assert_eq!(p, exp[rows.len() + 1].1, "{err}");
        assert!(p.byte <= to, "{err}");
    }

    /// A real truncation from another thread while this one reads rows,
    /// on each source; and while workers read batches in parallel.
    #[test]
    fn a_concurrent_truncation_is_a_change() {
        let c = case();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("concurrent.csv");
        let to = c.cuts[1].1;
        for (src, b) in builders() {
            std::fs::write(&path, &c.data).unwrap();
            let mut rdr = b.from_path(&path).unwrap();
            let (mut rows, mut err) = (Vec::new(), None);
            std::thread::scope(|s| {
                let mut cutter = None;
                loop {
                    match rdr.read_row() {
                        Ok(Some(r)) => rows.push(fields(r.iter())),
                        Ok(None) => break,
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                    if rows.len() == 100 {
                        let p = path.clone();
                        cutter = Some(s.spawn(move || cut(&p, to)));
                    }
                }
                cutter.unwrap().join().unwrap();
            });
            check(&c, &path, to, &format!("concurrent rows, {src}"), &rows, err);
        }
        std::fs::write(&path, &c.data).unwrap();
        let mut rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_path(&path).unwrap();
        let par = Parallel::new().threads(3).chunk_size(32 << 10);
        let mut rows: Vec<Row> = Vec::new();
        let r = std::thread::scope(|s| {
            let mut cutter = None;
            let r = rdr.par_batches(
                &Selection::all(),
                &par,
                Vec::new,
                |batch, out: &mut Vec<Row>| -> Result<(), Error> {
                    out.extend(batch.iter().map(|r| fields(r.iter())));
                    Ok(())
                },
                |out| {
                    rows.append(out);
                    if cutter.is_none() {
                        let p = path.clone();
                        cutter = Some(s.spawn(move || cut(&p, to)));
                    }
                    Ok(())
                },
            );
            cutter.unwrap().join().unwrap();
            r
        });
        check(&c, &path, to, "concurrent par_batches, mmap", &rows, r.err());
    }
}

/// A pseudo-file of sysfs states a size of a page but `read()` ends
/// sooner: that is its length, not a change (only a smaller size would
/// be). Linux only; every Linux machine has this file.
#[cfg(target_os = "linux")]
#[test]
fn a_pseudo_file_shorter_than_its_size_is_not_a_change() {
    let path = "/sys/devices/system/cpu/online";
    let meta = std::fs::metadata(path).expect("sysfs is mounted");
    let text = std::fs::read(path).unwrap();
    assert!((text.len() as u64) < meta.len(), "the premise: read() ends before the stated size");
    for choice in [fastcsv::SourceChoice::Buffered, fastcsv::SourceChoice::Auto] {
        for ahead in [false, true] {
            let mut rdr = fastcsv::Reader::builder()
                .dialect(fastcsv::Dialect::builder().headers(false).build().unwrap())
                .source(choice)
                .read_ahead(ahead)
                .from_path(path)
                .unwrap();
            let row = rdr.read_row().unwrap().expect("one row").to_owned();
            assert_eq!(row.get(0), Some(text.trim_ascii_end()), "{choice:?}, ahead {ahead}");
            assert!(rdr.read_row().unwrap().is_none(), "{choice:?}, ahead {ahead}");
        }
    }
}

/// `fixlengths` without `--length` reads its file twice: rows appended
/// between the passes (or a last row finished then) were not measured by
/// the first, and used to be written cut to the first pass's length, with
/// exit status 0. They are now an error at the first such record.
#[cfg(debug_assertions)]
#[test]
fn fixlengths_fails_when_the_file_grows_between_its_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv");
    let run = |body: &str, append: &str| {
        std::fs::write(&path, body).unwrap();
        let mut c = Command::new(BIN);
        c.args(["fixlengths", path.to_str().unwrap()]);
        if !append.is_empty() {
            c.env("FASTCSV_TEST_APPEND_BETWEEN", append);
        }
        c.output().unwrap()
    };
    // Unchanged: every record padded to the longest (3).
    let o = run("a,b\n1,2,3\n4\n", "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, b"a,b,\n1,2,3\n4,,\n");
    // Shorter records appended, a longer one, and the last record finished
    // after the first pass read it.
    for (body, append, line, record, byte) in [
        ("a,b\n1,2,3\n4\n", "5\n", 4, 3, 12),
        ("a,b\n1,2,3\n4\n", "5,6,7,8\n", 4, 3, 12),
        ("a,b\n1,2,3\n4", ",5,6,7\n", 3, 2, 10),
    ] {
        let o = run(body, append);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{append:?}: {err}");
        let want = format!("{}:{line}: record {record}, byte {byte}: file changed", path.display());
        assert!(err.contains(&want), "{append:?}: {err}");
    }
    // A file that grows by records no longer than the longest is the same
    // error: they were not in the first pass.
    let o = run(&"x,y,z\n".repeat(50_000), "1\n");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("file changed"), "{}", stderr(&o));
}
