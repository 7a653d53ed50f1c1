//! Input sources: special files, the automatic choice, truncation while
//! mapped, and mapped vs buffered agreement on rows, errors and positions.

mod common;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use fastcsv::{Dialect, ErrorKind, Reader, ReaderBuilder, SourceChoice, SourceKind, SourceReason};

/// Everything a reader produced: each row's fields and position, then the
/// error (as displayed, so path, line, record and byte all count).
#[derive(Debug, PartialEq)]
struct Trace {
    rows: Vec<(Vec<Vec<u8>>, fastcsv::Position, u64)>,
    errors: Vec<String>,
}

/// Reads to the end, resuming after data errors (as a caller that skips
/// bad records would); stops at the first non-data error.
fn trace(mut rdr: Reader<'_>) -> Trace {
    let mut t = Trace { rows: Vec::new(), errors: Vec::new() };
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields = row.iter().map(<[u8]>::to_vec).collect();
                t.rows.push((fields, row.position(), rdr.line()));
            }
            Ok(None) => return t,
            Err(e) => {
                let stop = !e.is_data() || t.errors.len() > 100;
                t.errors.push(e.to_string());
                if stop {
                    return t;
                }
            }
        }
    }
}

fn open(path: &Path, choice: SourceChoice, buf: usize, d: &Dialect) -> Reader<'static> {
    ReaderBuilder::new().dialect(d.clone()).source(choice).buffer_size(buf).from_path(path).unwrap()
}

/// The buffered source, synchronous (`ahead` false) or with the read-ahead
/// thread.
fn open_read(path: &Path, ahead: bool, buf: usize, d: &Dialect) -> Reader<'static> {
    let rdr = ReaderBuilder::new()
        .dialect(d.clone())
        .source(SourceChoice::Buffered)
        .read_ahead(ahead)
        .buffer_size(buf)
        .from_path(path)
        .unwrap();
    assert_eq!(rdr.reads_ahead(), ahead);
    rdr
}

/// A small seeded generator (xorshift), so the corpus is the same on every
/// run without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// Awkward CSV: quotes, doubled quotes, CR/LF/CRLF, empty lines, BOM-like
/// bytes, ragged rows and strict-mode errors.
fn corpus(seed: u64, len: usize) -> Vec<u8> {
    let pieces =
        ["a", "bc", ",", ",", "\"", "\"\"", "\n", "\r\n", "\r", "x y", "\u{e9}", "\"q,\"", "1"];
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < len {
        out.extend_from_slice(rng.pick(&pieces).as_bytes());
    }
    out
}

#[test]
fn mapped_and_buffered_agree_on_rows_errors_and_positions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.csv");
    let dialects = [
        Dialect::default(),
        Dialect::builder().strict(true).build().unwrap(),
        Dialect::builder().flexible(true).escape(Some(b'\\')).build().unwrap(),
    ];
    for seed in 1..=6u64 {
        let mut data = corpus(seed, 3000);
        if seed % 2 == 0 {
            data.splice(0..0, *b"\xEF\xBB\xBF");
        }
        fs::write(&path, &data).unwrap();
        for d in &dialects {
            let want = trace(open(&path, SourceChoice::Mmap, 4096, d));
            assert!(!want.rows.is_empty());
            for buf in [1, 2, 3, 7, 64, 1000, 128 * 1024] {
                for ahead in [false, true] {
                    let got = trace(open_read(&path, ahead, buf, d));
                    assert_eq!(got, want, "seed {seed}, buffer {buf}, ahead {ahead}, {d:?}");
                }
            }
        }
    }
}

#[test]
fn empty_file_has_no_rows() {
    let f = tempfile::NamedTempFile::new().unwrap();
    for choice in [SourceChoice::Auto, SourceChoice::Mmap, SourceChoice::Buffered] {
        let mut rdr = ReaderBuilder::new().source(choice).from_path(f.path()).unwrap();
        assert_eq!(rdr.source_kind(), SourceKind::Buffered);
        let want = if choice == SourceChoice::Buffered {
            SourceReason::Requested
        } else {
            SourceReason::ZeroSize
        };
        assert_eq!(rdr.source_reason(), want);
        assert!(rdr.headers().unwrap().is_none());
        assert!(rdr.read_row().unwrap().is_none());
        assert!(rdr.read_row().unwrap().is_none());
    }
}

#[test]
fn dev_null_has_no_rows() {
    for choice in [SourceChoice::Auto, SourceChoice::Mmap] {
        let mut rdr = ReaderBuilder::new().source(choice).from_path("/dev/null").unwrap();
        assert_eq!(rdr.source_kind(), SourceKind::Buffered);
        assert_eq!(rdr.source_reason(), SourceReason::NotRegular);
        assert_eq!(rdr.count_rows().unwrap(), 0);
    }
}

#[test]
fn fifo_is_streamed() {
    let dir = tempfile::tempdir().unwrap();
    // A FIFO is read once per writer: a fresh one for each source choice.
    let cases = [
        (SourceChoice::Auto, None),
        (SourceChoice::Mmap, None),
        (SourceChoice::Buffered, Some(false)),
        (SourceChoice::Auto, Some(true)),
    ];
    for (i, (choice, ahead)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("pipe{i}.csv"));
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            // Opening a FIFO for writing blocks until the reader opens it.
            let mut w = fs::OpenOptions::new().write(true).open(writer_path).unwrap();
            w.write_all(b"n,sq\n").unwrap();
            for i in 0..20_000u64 {
                // Many small writes: records straddle pipe reads.
                writeln!(w, "{i},\"{}\"", i * i).unwrap();
            }
        });
        let mut b = ReaderBuilder::new();
        b.source(choice).buffer_size(100);
        if let Some(on) = ahead {
            b.read_ahead(on);
        }
        let mut rdr = b.from_path(&path).unwrap();
        assert_eq!(rdr.source_kind(), SourceKind::Buffered);
        let parallel = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
        assert_eq!(rdr.reads_ahead(), ahead.unwrap_or(parallel));
        let want = if choice == SourceChoice::Buffered {
            SourceReason::Requested
        } else {
            SourceReason::NotRegular
        };
        assert_eq!(rdr.source_reason(), want);
        let mut n = 0u64;
        while let Some(row) = rdr.read_row().unwrap() {
            assert_eq!(row.get_str(0).unwrap().parse::<u64>().unwrap(), n);
            assert_eq!(row.get_str(1).unwrap().parse::<u64>().unwrap(), n * n);
            n += 1;
        }
        assert_eq!(n, 20_000);
        writer.join().unwrap();
    }
}

/// The read-ahead thread hands over what each `read()` returns: a row
/// written alone is parsed while the writer waits, not when a whole buffer
/// has arrived.
#[test]
fn read_ahead_streams_short_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.csv");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (ack_tx, ack_rx) = std::sync::mpsc::channel::<u64>();
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let mut w = fs::OpenOptions::new().write(true).open(writer_path).unwrap();
        let mut acked = 0;
        for i in 0..5u64 {
            // (At least 3 bytes: the reader looks for a BOM first.)
            writeln!(w, "row {i}").unwrap();
            // Wait until the reader has parsed this row (it cannot have
            // unless the short read was passed on at once).
            if ack_rx.recv_timeout(std::time::Duration::from_secs(20)) == Ok(i) {
                acked += 1;
            }
        }
        acked
    });
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut rdr = ReaderBuilder::new()
        .dialect(d)
        .read_ahead(true)
        .buffer_size(64 * 1024)
        .from_path(&path)
        .unwrap();
    assert!(rdr.reads_ahead());
    let mut n = 0;
    while let Some(row) = rdr.read_row().unwrap() {
        assert_eq!(row.get_str(0).unwrap(), format!("row {n}"));
        ack_tx.send(n).unwrap();
        n += 1;
    }
    assert_eq!(n, 5);
    assert_eq!(writer.join().unwrap(), 5, "rows waited for a full buffer");
}

/// Descriptors of this process open on `path` (Linux: `/proc/self/fd`).
fn open_descriptors(path: &Path) -> usize {
    let Ok(dir) = fs::read_dir("/proc/self/fd") else { return 0 };
    dir.filter_map(|e| fs::read_link(e.ok()?.path()).ok()).filter(|p| p == path).count()
}

/// Dropping a read-ahead reader of a file stops and joins its thread: the
/// file is closed when the drop returns, however far the thread had read.
/// (That the thread reads at most a ring's worth after the drop is checked
/// with a counting source in `src/source/readahead.rs`.)
#[test]
fn dropping_a_read_ahead_reader_closes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    write_numbered(&path, 400_000);
    let path = path.canonicalize().unwrap();
    let d = Dialect::builder().headers(false).build().unwrap();
    for (size, rows) in [(4096, 1), (4096, 5000), (128 * 1024, 0), (7, 3)] {
        let mut rdr = ReaderBuilder::new()
            .dialect(d.clone())
            .source(SourceChoice::Buffered)
            .read_ahead(true)
            .buffer_size(size)
            .from_path(&path)
            .unwrap();
        assert!(rdr.reads_ahead());
        for i in 0..rows {
            let row = rdr.read_row().unwrap().unwrap();
            assert_eq!(row.get_str(0).unwrap(), i.to_string());
        }
        if cfg!(target_os = "linux") {
            assert_eq!(open_descriptors(&path), 1);
        }
        drop(rdr);
        assert_eq!(open_descriptors(&path), 0, "buffer {size}, {rows} rows read");
    }
}

/// A file read ahead from an offset (positioned past its first 3 MiB),
/// row by row and counted, in chunks of several sizes: the same rows, lines
/// and errors as read without the thread and as mapped.
#[test]
fn read_ahead_from_an_offset_matches_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("offset.csv");
    write_numbered(&path, 400_000);
    let bytes = fs::read(&path).unwrap();
    let mut pos = 3 << 20;
    while bytes[pos - 1] != b'\n' {
        pos += 1;
    }
    let first: u64 = std::str::from_utf8(&bytes[pos..pos + 12])
        .unwrap()
        .split(['\n', ','])
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let d = Dialect::builder().headers(false).build().unwrap();
    let open = |choice: SourceChoice, ahead: bool, size: usize| {
        let mut f = File::open(&path).unwrap();
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(pos as u64)).unwrap();
        ReaderBuilder::new()
            .dialect(d.clone())
            .source(choice)
            .read_ahead(ahead)
            .buffer_size(size)
            .from_file(f)
            .unwrap()
    };
    let want = trace(open(SourceChoice::Mmap, false, 4096));
    let mut n = open(SourceChoice::Mmap, false, 4096);
    let rows = n.count_rows().unwrap();
    assert_eq!(rows, 400_000 - first);
    for size in [1, 100, 4096, 128 * 1024] {
        for ahead in [false, true] {
            assert_eq!(trace(open(SourceChoice::Buffered, ahead, size)), want, "{size} {ahead}");
            let mut rdr = open(SourceChoice::Buffered, ahead, size);
            assert_eq!(rdr.reads_ahead(), ahead);
            assert_eq!((rdr.count_rows().unwrap(), rdr.line()), (rows, n.line()), "{size} {ahead}");
        }
    }
}

#[test]
fn automatic_read_ahead_only_for_large_files() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.csv");
    write_numbered(&small, 10);
    let big = dir.path().join("big.csv");
    let size = write_numbered(&big, 150_000);
    assert!(size >= fastcsv::READ_AHEAD_MIN);
    let parallel = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let ahead = |p: &Path, b: &mut ReaderBuilder| b.from_path(p).unwrap().reads_ahead();
    let mut read = ReaderBuilder::new();
    read.source(SourceChoice::Buffered);
    assert!(!ahead(&small, &mut read));
    assert_eq!(ahead(&big, &mut read), parallel);
    assert!(!ahead(&big, read.clone().read_ahead(false)));
    assert!(ahead(&small, read.clone().read_ahead(true)));
    // A mapped file's pages are mapped in ahead of a count, on Linux, under
    // the same rule (and only once the count starts).
    let mut map = ReaderBuilder::new();
    map.source(SourceChoice::Mmap);
    let linux = cfg!(target_os = "linux");
    let counted = |p: &Path, b: &mut ReaderBuilder| {
        let mut rdr = b.from_path(p).unwrap();
        assert!(!rdr.reads_ahead());
        rdr.count_rows().unwrap();
        rdr.reads_ahead()
    };
    assert_eq!(counted(&big, &mut map), parallel && linux);
    assert_eq!(counted(&big, map.clone().read_ahead(true)), linux);
    assert!(!counted(&big, map.clone().read_ahead(false)));
    assert!(!counted(&small, &mut map));
    // Nor do generic readers.
    assert!(!ReaderBuilder::new().read_ahead(true).from_reader(&b"a\n"[..]).reads_ahead());
}

/// The fault-ahead thread of a mapped file changes nothing but speed:
/// counts are the same with it and without, from the start, from an
/// offset, and after rows were read; dropping the reader joins it.
#[test]
fn fault_ahead_counts_the_same_and_stops_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faulted.csv");
    let size = write_numbered(&path, 400_000);
    assert!(size > 3 * fastcsv::READ_AHEAD_MIN, "{size}");
    let d = Dialect::builder().headers(false).build().unwrap();
    let mapped = |ahead: bool| {
        let mut b = ReaderBuilder::new();
        b.dialect(d.clone()).source(SourceChoice::Mmap).read_ahead(ahead);
        b
    };
    let linux = cfg!(target_os = "linux");
    // After `skip` rows read one by one.
    let count = |ahead: bool, skip: u64| {
        let mut rdr = mapped(ahead).from_path(&path).unwrap();
        for i in 0..skip {
            let row = rdr.read_row().unwrap().unwrap();
            assert_eq!(row.get_str(0).unwrap().parse::<u64>().unwrap(), i);
        }
        let n = rdr.count_rows().unwrap();
        assert_eq!(rdr.reads_ahead(), ahead && linux);
        (n, rdr.line())
    };
    for skip in [0, 1, 123_457] {
        assert_eq!(count(true, skip), count(false, skip), "after {skip} rows");
        assert_eq!(count(true, skip).0, 400_000 - skip);
    }
    // From an offset (a file positioned past its first 3 MiB).
    let from = |ahead: bool| {
        let bytes = fs::read(&path).unwrap();
        let mut pos = 3 << 20;
        while bytes[pos - 1] != b'\n' {
            pos += 1;
        }
        let mut f = File::open(&path).unwrap();
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(pos as u64)).unwrap();
        mapped(ahead).from_file(f).unwrap().count_rows().unwrap()
    };
    assert_eq!(from(true), from(false));
    // Rows: the helper maps pages a window ahead of the parser, started
    // by the first row; the rows and the batches are the same.
    let rows = |ahead: bool| {
        let mut rdr = mapped(ahead).from_path(&path).unwrap();
        let mut sum = 0u64;
        for i in 0..400_000u64 {
            let row = rdr.read_row().unwrap().unwrap();
            assert_eq!(row.get_str(0).unwrap().parse::<u64>().unwrap(), i);
            sum += row.get_str(2).unwrap().parse::<u64>().unwrap();
        }
        assert!(rdr.read_row().unwrap().is_none());
        assert_eq!(rdr.reads_ahead(), ahead && linux);
        sum
    };
    assert_eq!(rows(true), rows(false));
    let batches = |ahead: bool| {
        let mut rdr = mapped(ahead).from_path(&path).unwrap();
        let mut sel = fastcsv::Selection::new([0, 2]);
        let (mut n, mut sum) = (0u64, 0u64);
        while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
            for r in b.iter() {
                assert_eq!(std::str::from_utf8(r.get(0)).unwrap().parse::<u64>().unwrap(), n);
                sum += std::str::from_utf8(r.get(1)).unwrap().parse::<u64>().unwrap();
                n += 1;
            }
        }
        assert_eq!(rdr.reads_ahead(), ahead && linux);
        (n, sum)
    };
    assert_eq!(batches(true), batches(false));
    assert_eq!(batches(true).0, 400_000);
    // Dropped right after a count, or a few rows in, the thread maybe
    // still mapping or waiting for the parser.
    for _ in 0..20 {
        let mut rdr = mapped(true).from_path(&path).unwrap();
        assert_eq!(rdr.count_rows().unwrap(), 400_000);
        drop(rdr);
        let mut rdr = mapped(true).from_path(&path).unwrap();
        assert!(rdr.read_row().unwrap().is_some());
        drop(rdr);
    }
}

#[test]
fn proc_files_of_size_zero_are_read() {
    let path = Path::new("/proc/self/status");
    assert_eq!(fs::metadata(path).unwrap().len(), 0, "/proc reports size 0");
    let d = Dialect::builder().delimiter(b':').headers(false).flexible(true).build().unwrap();
    for choice in [SourceChoice::Auto, SourceChoice::Mmap] {
        let mut rdr =
            ReaderBuilder::new().dialect(d.clone()).source(choice).from_path(path).unwrap();
        assert_eq!(rdr.source_kind(), SourceKind::Buffered);
        assert_eq!(rdr.source_reason(), SourceReason::ZeroSize);
        let first = rdr.read_row().unwrap().unwrap().to_owned();
        assert_eq!(first.get(0), Some(&b"Name"[..]));
        assert!(rdr.count_rows().unwrap() > 5);
    }
}

#[test]
fn failed_map_falls_back_to_reading() {
    // sysfs attributes report a size (a page) but cannot be mapped (ENODEV).
    // The transparent huge page setting is bracketed; a kernel built
    // without them still has the list of online CPUs.
    let thp = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
    let path = [thp, Path::new("/sys/devices/system/cpu/online")]
        .into_iter()
        .find(|p| p.exists())
        .expect("sysfs is mounted at /sys");
    assert!(fs::metadata(path).unwrap().len() > 0);
    let d = Dialect::builder().delimiter(b' ').headers(false).flexible(true).build().unwrap();
    let mut rdr =
        ReaderBuilder::new().dialect(d).source(SourceChoice::Mmap).from_path(path).unwrap();
    assert_eq!(rdr.source_kind(), SourceKind::Buffered);
    assert_eq!(rdr.source_reason(), SourceReason::MapFailed);
    let row = rdr.read_row().unwrap().unwrap();
    if path == thp {
        assert!(row.iter().any(|f| f.contains(&b'[')), "the current setting is bracketed");
    }
    // The fallback read the attribute's text, not its reported size.
    let text = fs::read(path).unwrap();
    let first = text.split(|&b| b == b'\n').next().unwrap();
    assert_eq!(row.iter().collect::<Vec<_>>().join(&b' '), first);
}

#[test]
fn automatic_choice_and_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.csv");
    let big = dir.path().join("big.csv");
    fs::write(&small, "a\n1\n").unwrap();
    fs::write(&big, "a\n1\n".repeat(fastcsv::SMALL_FILE as usize)).unwrap();
    let kind = |p: &Path, b: &mut ReaderBuilder| {
        let r = b.from_path(p).unwrap();
        (r.source_kind(), r.source_reason())
    };
    use SourceKind::{Buffered, Mapped};
    use SourceReason::*;
    assert_eq!(kind(&small, &mut ReaderBuilder::new()), (Buffered, SmallFile));
    assert_eq!(kind(&big, &mut ReaderBuilder::new()), (Mapped, RegularFile));
    assert_eq!(kind(&small, ReaderBuilder::new().source(SourceChoice::Mmap)), (Mapped, Requested));
    assert_eq!(
        kind(&big, ReaderBuilder::new().source(SourceChoice::Buffered)),
        (Buffered, Requested)
    );
    assert_eq!(kind(&big, ReaderBuilder::new().map_limit(1000)), (Buffered, TooLarge));
    // An explicit request ignores the limit.
    assert_eq!(
        kind(&big, ReaderBuilder::new().map_limit(1000).source(SourceChoice::Mmap)),
        (Mapped, Requested)
    );
    let r = Reader::from_reader(&b""[..]);
    assert_eq!((r.source_kind(), r.source_reason()), (Buffered, NotAFile));
    assert_eq!(SmallFile.to_string(), "small file");
}

#[test]
fn bom_split_across_refills() {
    let data = b"\xEF\xBB\xBFname,qty\nx,1\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.csv");
    fs::write(&path, data).unwrap();
    for buf in 1..=5 {
        let mut rdr = ReaderBuilder::new().buffer_size(buf).from_reader(&data[..]);
        assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"name"[..]), "buffer {buf}");
        let row = rdr.read_row().unwrap().unwrap();
        assert_eq!((row.get(0), row.position().byte), (Some(&b"x"[..]), 12));
        let d = Dialect::default();
        let a = trace(open(&path, SourceChoice::Buffered, buf, &d));
        let b = trace(open(&path, SourceChoice::Mmap, buf, &d));
        assert_eq!(a, b);
        assert_eq!(trace(open_read(&path, true, buf, &d)), b);
        assert_eq!(a.rows.len(), 1);
    }
    // A BOM cut short by the end of input is data, not a BOM.
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut rdr = ReaderBuilder::new().dialect(d).buffer_size(1).from_reader(&b"\xEF\xBB"[..]);
    assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"\xEF\xBB"[..]));
}

#[test]
fn one_byte_buffers_match_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.csv");
    fs::write(&path, corpus(99, 20_000)).unwrap();
    let d = Dialect::builder().strict(true).build().unwrap();
    let want = trace(open(&path, SourceChoice::Mmap, 1, &d));
    assert!(!want.errors.is_empty() && !want.rows.is_empty());
    for ahead in [false, true] {
        let got = trace(open_read(&path, ahead, 1, &d));
        assert_eq!(got, want, "read-ahead {ahead}");
    }
}

#[test]
fn huge_record_grows_the_buffer_then_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.csv");
    let mut data = format!("h\n\"{}\"\n", "y\n".repeat(250)); // 500-byte record
    data.push_str(&format!("{}\n", "z".repeat(2000)));
    fs::write(&path, &data).unwrap();
    for ahead in [false, true] {
        let open = || {
            ReaderBuilder::new()
                .source(SourceChoice::Buffered)
                .read_ahead(ahead)
                .buffer_size(16)
                .max_buffer_size(1024)
                .from_path(&path)
                .unwrap()
        };
        let mut rdr = open();
        assert_eq!(rdr.read_row().unwrap().unwrap().get(0).unwrap().len(), 500);
        assert_eq!(rdr.buffer_capacity(), Some(512));
        let e = rdr.read_row().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::RecordTooLarge { limit: 1024 }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.starts_with(&*path.to_string_lossy()), "{msg}");
        assert!(msg.contains(":253: record 2, byte 505: record larger"), "{msg}");
        assert_eq!(rdr.buffer_capacity(), Some(1024));
        // Counting refills for short records; this one, over half the
        // buffer, goes to the state machine and the error is the same.
        let mut rdr = open();
        let e = rdr.count_rows().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::RecordTooLarge { limit: 1024 }), "{e:?}");
        assert_eq!(e.to_string(), msg);
        assert_eq!(rdr.buffer_capacity(), Some(1024));
    }
    // The mapped source has no buffer and reads it whole.
    let mut rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_path(&path).unwrap();
    assert_eq!(rdr.buffer_capacity(), None);
    assert_eq!(rdr.count_rows().unwrap(), 2);
}

/// A buffer the allocator refuses (here half the address space, which no
/// allocation can get, so nothing is allocated) is an `OutOfMemory` error
/// from the first read, with the path, not an abort; for a stream, for a
/// file read in place and for one read ahead.
#[test]
fn a_buffer_too_large_to_allocate_is_an_error() {
    let huge = usize::MAX / 2;
    let is_oom = |e: &fastcsv::Error| matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::OutOfMemory);
    let mut rdr = ReaderBuilder::new().buffer_size(huge).from_reader(&b"a\n1\n"[..]);
    let e = rdr.read_row().unwrap_err();
    assert!(is_oom(&e), "{e:?}");
    assert_eq!(e.to_string(), format!("cannot allocate a read buffer of {huge} bytes"));
    assert!(rdr.read_row().unwrap().is_none());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.csv");
    fs::write(&path, "a\n1\n").unwrap();
    for ahead in [false, true] {
        let mut rdr = ReaderBuilder::new()
            .source(SourceChoice::Buffered)
            .read_ahead(ahead)
            .buffer_size(huge)
            .from_path(&path)
            .unwrap();
        let e = rdr.read_row().unwrap_err();
        assert!(is_oom(&e), "{e:?}");
        assert!(e.to_string().starts_with(&format!("{}: cannot allocate", path.display())), "{e}");
    }
}

/// Writes `rows` lines of `i,<text>,<i*7>` and returns the file's size.
fn write_numbered(path: &Path, rows: u64) -> u64 {
    let mut w = BufWriter::new(File::create(path).unwrap());
    for i in 0..rows {
        writeln!(w, "{i},some text for row {i},{}", i * 7).unwrap();
    }
    w.flush().unwrap();
    fs::metadata(path).unwrap().len()
}

/// A file that grows or shrinks while the read-ahead thread and the parser
/// read it at offsets: the rows are the file's rows in order, from the
/// first, each whole and right, up to where a read found the end (a file
/// cut shorter then ends in `FileChanged`, after whole rows only; no gap,
/// repeat or stale chunk however the reads raced with the writer). Real
/// files make the races rare; the tests in `src/source/readahead.rs` drive
/// them on purpose (short reads, failures, lengths changing at each read).
#[test]
fn read_ahead_of_a_file_changing_length_gives_its_rows_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    let check = |path: &Path, at_least: u64, shrinks: bool| {
        let mut rdr = ReaderBuilder::new()
            .dialect(d.clone())
            .source(SourceChoice::Buffered)
            .read_ahead(true)
            .buffer_size(4096)
            .from_path(path)
            .unwrap();
        assert!(rdr.reads_ahead());
        let mut n = 0u64;
        loop {
            let row = match rdr.read_row() {
                Ok(Some(row)) => row,
                Ok(None) => break,
                // A file cut while read ends in this error, after whole rows
                // only (issue 36); one that grows does not.
                Err(e) if shrinks && matches!(e.kind(), ErrorKind::FileChanged) => break,
                Err(e) => panic!("row {n}: {e}"),
            };
            let want = format!("{n},some text for row {n},{}", n * 7);
            let got: Vec<&str> = row.iter().map(|f| std::str::from_utf8(f).unwrap()).collect();
            // The last row may be cut by the end (a shrink mid-row, or
            // the writer's last row in progress).
            if got.join(",") != want {
                assert!(want.starts_with(&got.join(",")), "row {n}: {got:?}");
                assert!(rdr.read_row().unwrap().is_none(), "rows after a cut row {n}");
                break;
            }
            n += 1;
        }
        assert!(n >= at_least, "{n} rows, at least {at_least} expected");
        n
    };
    // Growing: a writer appends rows while the reader reads.
    let path = dir.path().join("growing.csv");
    write_numbered(&path, 200_000);
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            let f = fs::OpenOptions::new().append(true).open(path).unwrap();
            // Small writes, so that many land while the reader reads.
            let mut w = BufWriter::with_capacity(1000, f);
            for i in 200_000..400_000u64 {
                writeln!(w, "{i},some text for row {i},{}", i * 7).unwrap();
            }
            w.flush().unwrap();
        })
    };
    check(&path, 200_000, false);
    writer.join().unwrap();
    assert_eq!(check(&path, 400_000, false), 400_000);
    // Shrinking: cut to a smaller size (mid-row) while the reader reads.
    for keep in [3_000_000u64, 100_000, 5] {
        let path = dir.path().join(format!("shrinking-{keep}.csv"));
        write_numbered(&path, 400_000);
        let cutter = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(2));
                File::options().write(true).open(path).unwrap().set_len(keep).unwrap();
            })
        };
        check(&path, 0, true);
        cutter.join().unwrap();
    }
}

#[test]
fn truncation_while_mapped_is_an_error_not_a_crash() {
    // With and without the helper that maps pages in ahead of the parser.
    for ahead in [true, false] {
        truncated_while_mapped(ahead);
    }
}

fn truncated_while_mapped(ahead: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking.csv");
    let size = write_numbered(&path, 1_700_000);
    assert!(size > 64 << 20, "{size}");
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut b = ReaderBuilder::new();
    b.dialect(d).source(SourceChoice::Mmap).read_ahead(ahead);
    let mut rdr = b.from_path(&path).unwrap();
    assert_eq!(rdr.source_kind(), SourceKind::Mapped);
    for i in 0..1000u64 {
        let row = rdr.read_row().unwrap().unwrap();
        assert_eq!(row.get_str(0).unwrap().parse::<u64>().unwrap(), i);
    }
    assert_eq!(rdr.reads_ahead(), ahead && cfg!(target_os = "linux"));
    let keep = (1u64 << 20) + 12_345; // not page-aligned on purpose
    File::options().write(true).open(&path).unwrap().set_len(keep).unwrap();
    let mut n = 1000u64;
    let err = loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                // Every row handed out is a real one, never zeros.
                assert_eq!(row.get_str(0).unwrap().parse::<u64>().unwrap(), n);
                assert_eq!(row.get_str(2).unwrap().parse::<u64>().unwrap(), n * 7);
                n += 1;
            }
            Ok(None) => panic!("no error after truncation ({n} rows)"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err.kind(), ErrorKind::FileChanged), "{err:?}");
    let msg = err.to_string();
    assert!(msg.starts_with(&*path.to_string_lossy()), "{msg}");
    assert!(msg.ends_with("file changed while reading"), "{msg}");
    let byte = err.position().unwrap().byte;
    assert!(byte <= keep && byte > keep - 100, "error at byte {byte}, kept {keep}");
    // The rows before the cut were all returned, and reading stops there.
    assert!(n > 20_000, "{n}");
    assert!(rdr.read_row().unwrap().is_none());
}

#[test]
fn shrink_after_the_last_page_is_read_is_caught_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrunk.csv");
    fs::write(&path, "a,b\n1,2\n3,4\n").unwrap();
    let mut rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_path(&path).unwrap();
    assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"1"[..]));
    File::options().write(true).open(&path).unwrap().set_len(4).unwrap();
    let e = loop {
        match rdr.read_row() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("shrinking went unnoticed"),
            Err(e) => break e,
        }
    };
    assert!(matches!(e.kind(), ErrorKind::FileChanged), "{e:?}");
    // Growing is not a change that invalidates what was read.
    fs::write(&path, "a,b\n1,2\n").unwrap();
    let mut rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_path(&path).unwrap();
    fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"5,6\n").unwrap();
    assert_eq!(rdr.count_rows().unwrap(), 1);
}

/// In a child process: with fastcsv's handler installed, a SIGBUS in a
/// mapping that is not fastcsv's still kills the process.
#[test]
fn foreign_sigbus_still_kills() {
    if let Ok(p) = std::env::var("FASTCSV_FOREIGN_SIGBUS") {
        let path = Path::new(&p);
        // No core file from the crash this child is about to have.
        let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: `no_core` is a valid rlimit.
        unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
        // Install the handler through a fastcsv mapping, and keep it alive.
        let _rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_path(path).unwrap();
        let f = File::open(path).unwrap();
        // SAFETY: this child exists to fault on purpose.
        let map = unsafe { memmap2::Mmap::map(&f).unwrap() };
        File::options().write(true).open(path).unwrap().set_len(0).unwrap();
        let b = std::hint::black_box(&map[..])[100_000];
        println!("survived, read {b}");
        std::process::exit(0);
    }
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("foreign.csv");
    fs::write(&path, "x\n".repeat(100_000)).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "foreign_sigbus_still_kills", "--nocapture", "--test-threads=1"])
        .env("FASTCSV_FOREIGN_SIGBUS", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{out:?}");
}

/// The resident size of the mapping of `path` in this process, from
/// `/proc/self/smaps` (per mapping, so other tests' threads do not count).
fn mapped_rss_kib(path: &Path) -> Option<u64> {
    let smaps = fs::read_to_string("/proc/self/smaps").ok()?;
    let name = path.to_str()?;
    let mut lines = smaps.lines();
    while let Some(l) = lines.next() {
        if !l.ends_with(name) {
            continue;
        }
        for l in lines.by_ref() {
            if let Some(v) = l.strip_prefix("Rss:") {
                return v.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
    }
    None
}

#[test]
fn large_maps_release_parsed_pages_and_read_right() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resident.csv");
    let size = write_numbered(&path, 2_200_000);
    assert!(size > 80 << 20, "{size}");
    let d = Dialect::builder().headers(false).build().unwrap();
    let peak = |b: &mut ReaderBuilder| {
        let mut rdr = b.dialect(d.clone()).source(SourceChoice::Mmap).from_path(&path).unwrap();
        let (mut rows, mut peak, mut sum) = (0u64, 0u64, 0u64);
        while let Some(row) = rdr.read_row().unwrap() {
            sum += row.get_str(2).unwrap().parse::<u64>().unwrap();
            rows += 1;
            if rows % 100_000 == 0 {
                peak = peak.max(mapped_rss_kib(&path).expect("the mapping is in smaps"));
            }
        }
        assert_eq!(rows, 2_200_000);
        // Released pages were never needed again: every value is right.
        assert_eq!(sum, (0..2_200_000u64).map(|i| i * 7).sum::<u64>());
        peak
    };
    let released = peak(&mut ReaderBuilder::new());
    let kept = peak(ReaderBuilder::new().release_threshold(u64::MAX));
    // Released every 16 MiB: at most 16 MiB behind the cursor, plus the
    // fault-ahead helper's 32 MiB (two CPUs) or the kernel's read-ahead
    // and fault-around (one) in front of it.
    assert!(released < 56 * 1024, "released: {released} KiB resident");
    let alone = peak(ReaderBuilder::new().read_ahead(false));
    assert!(alone < 24 * 1024, "released, no helper: {alone} KiB resident");
    assert!(kept > 64 * 1024, "kept: {kept} KiB resident");
}

/// In a child process (so that no other test's mappings count): once every
/// slot of the SIGBUS guard is taken, another mapping falls back to reading,
/// and a freed slot is used again.
#[test]
fn mappings_beyond_the_guard_slots_are_read() {
    if let Ok(p) = std::env::var("FASTCSV_GUARD_SLOTS") {
        let open = || ReaderBuilder::new().source(SourceChoice::Mmap).from_path(&p).unwrap();
        let mut held = Vec::new();
        loop {
            let rdr = open();
            if rdr.source_kind() == SourceKind::Buffered {
                assert_eq!(rdr.source_reason(), SourceReason::MapFailed);
                let mut rdr = rdr;
                assert_eq!(rdr.count_rows().unwrap(), 2, "the fallback reads the file");
                break;
            }
            held.push(rdr);
            assert!(held.len() <= 1000, "no limit on mappings?");
        }
        println!("slots: {}", held.len());
        held.pop();
        assert_eq!(open().source_kind(), SourceKind::Mapped, "a freed slot is reused");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slots.csv");
    fs::write(&path, "a\n1\n2\n").unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "mappings_beyond_the_guard_slots_are_read", "--nocapture"])
        .env("FASTCSV_GUARD_SLOTS", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("slots: 64"), "{stdout}");
}

#[test]
fn an_open_pipe_is_read() {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: pipe() just created these descriptors; each File owns one.
    let (rx, mut tx) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let writer = std::thread::spawn(move || {
        tx.write_all(b"a,b\n1,2\n3,4\n").unwrap();
    });
    let mut rdr = ReaderBuilder::new().source(SourceChoice::Mmap).from_file(rx).unwrap();
    assert_eq!(
        (rdr.source_kind(), rdr.source_reason()),
        (SourceKind::Buffered, SourceReason::NotRegular)
    );
    assert_eq!(rdr.count_rows().unwrap(), 2);
    writer.join().unwrap();
}

/// Several threads truncate their own mapped files mid-parse while others
/// keep opening and closing mappings (churning the guard's registry): each
/// truncated reader reports `FileChanged`, no other reader is disturbed.
#[test]
fn concurrent_truncations_and_registrations() {
    let dir = tempfile::tempdir().unwrap();
    let churn_path = dir.path().join("churn.csv");
    let churn_size = write_numbered(&churn_path, 20_000);
    assert!(churn_size > fastcsv::SMALL_FILE, "mapped under Auto");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churners: Vec<_> = (0..2)
        .map(|_| {
            let (p, stop) = (churn_path.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut opened = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let d = Dialect::builder().headers(false).build().unwrap();
                    let mut r = ReaderBuilder::new().dialect(d).from_path(&p).unwrap();
                    assert_eq!(r.count_rows().unwrap(), 20_000);
                    opened += 1;
                }
                opened
            })
        })
        .collect();
    let truncators: Vec<_> = (0..4)
        .map(|t| {
            let p = dir.path().join(format!("shrink{t}.csv"));
            std::thread::spawn(move || {
                write_numbered(&p, 150_000);
                let d = Dialect::builder().headers(false).build().unwrap();
                let mut rdr = ReaderBuilder::new()
                    .dialect(d)
                    .source(SourceChoice::Mmap)
                    .from_path(&p)
                    .unwrap();
                for _ in 0..100 {
                    rdr.read_row().unwrap().unwrap();
                }
                File::options().write(true).open(&p).unwrap().set_len(100_000).unwrap();
                loop {
                    match rdr.read_row() {
                        Ok(Some(_)) => {}
                        Ok(None) => panic!("thread {t}: truncation unnoticed"),
                        Err(e) => {
                            assert!(matches!(e.kind(), ErrorKind::FileChanged), "{e}");
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    for t in truncators {
        t.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in churners {
        assert!(c.join().unwrap() > 0);
    }
}

/// A source that a writer appends to: `read` takes what is there so far.
struct Growing(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Read for Growing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut v = self.0.lock().unwrap();
        let n = v.len().min(buf.len());
        buf[..n].copy_from_slice(&v[..n]);
        v.drain(..n);
        Ok(n)
    }
}

/// A row or an error as `(fields, kind, position, line)`, with positions
/// shifted by `by` (bytes, lines, records): what a reader gives.
type Event = (Vec<Vec<u8>>, String, Option<fastcsv::Position>, u64);

fn events(rdr: &mut Reader<'_>, by: (u64, u64, u64)) -> Vec<Event> {
    let shift = |p: fastcsv::Position| fastcsv::Position {
        byte: p.byte + by.0,
        line: p.line + by.1,
        record: p.record + by.2,
    };
    let mut out = Vec::new();
    loop {
        let e = match rdr.read_row() {
            Ok(Some(row)) => (
                row.iter().map(<[u8]>::to_vec).collect(),
                String::new(),
                Some(shift(row.position())),
            ),
            Ok(None) => return out,
            Err(e) => (Vec::new(), format!("{:?}", e.kind()), e.position().map(shift)),
        };
        out.push((e.0, e.1, e.2, rdr.line() + by.1));
    }
}

#[test]
fn resume_after_end_reads_what_was_appended() {
    // Cut at every byte, read to the end, the rest appended and read after
    // `resume_after_end`: the rows and errors of the two parts read as
    // inputs of their own (a record cut short ends at the cut), the second
    // part's bytes, lines and records counted after the first's.
    let text = b"a,\"b\nc\"\r\nd,e\r\"f\"\"g\"\n\nh\\\ni,\"j\"x\r\n\"k";
    for strict in [false, true] {
        let d = Dialect::builder()
            .headers(false)
            .flexible(true)
            .strict(strict)
            .escape(Some(b'\\'))
            .build()
            .unwrap();
        for buf in [1, 3, 64] {
            for cut in 0..=text.len() {
                let (first, rest) = text.split_at(cut);
                let b = ReaderBuilder::new().dialect(d.clone()).buffer_size(buf).clone();
                let mut one = b.from_slice(first);
                let mut want = events(&mut one, (0, 0, 0));
                let by = (cut as u64, one.line(), one.records_read());
                want.extend(events(&mut b.from_slice(rest), by));

                let shared = std::sync::Arc::new(std::sync::Mutex::new(first.to_vec()));
                let mut rdr = b.from_reader(Growing(shared.clone()));
                assert!(!rdr.resume_after_end(), "before the end");
                let mut got = events(&mut rdr, (0, 0, 0));
                shared.lock().unwrap().extend_from_slice(rest);
                assert!(rdr.read_row().unwrap().is_none(), "ended until resumed");
                assert!(rdr.resume_after_end());
                got.extend(events(&mut rdr, (0, 0, 0)));
                assert_eq!(got, want, "strict {strict}, buffer {buf}, cut {cut}");
                assert_eq!(rdr.byte_offset(), text.len() as u64);
            }
        }
    }
}

#[test]
fn resume_after_end_looks_for_the_header_again() {
    let shared = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut rdr = Reader::from_reader(Growing(shared.clone()));
    assert!(rdr.read_row().unwrap().is_none());
    shared.lock().unwrap().extend_from_slice(b"name\nx\n");
    assert!(rdr.resume_after_end());
    assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"x"[..]));
    assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"name"[..]));
}

#[test]
fn resume_after_end_follows_a_file_that_grows() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.csv");
    fs::write(&p, "t,msg\n1,\"a\n").unwrap();
    let d = Dialect::builder().flexible(true).build().unwrap();
    let mut rdr = open_read(&p, false, 4, &d);
    let row = rdr.read_row().unwrap().unwrap();
    assert_eq!(row.iter().collect::<Vec<_>>(), [&b"1"[..], b"a\n"]);
    assert!(rdr.read_row().unwrap().is_none());
    assert!(rdr.resume_after_end());
    assert!(rdr.read_row().unwrap().is_none(), "nothing new yet");
    let mut f = fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"2,b\n3,c").unwrap();
    assert!(rdr.resume_after_end());
    let rows: Vec<_> = rdr.rows().map(|r| r.unwrap().get(1).unwrap().to_vec()).collect();
    assert_eq!(rows, [b"b".to_vec(), b"c".to_vec()]);
    assert_eq!((rdr.line(), rdr.byte_offset()), (4, 18));
}

#[test]
fn resume_after_end_only_for_read_sources() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.csv");
    fs::write(&p, "a\n1\n").unwrap();
    let d = Dialect::default();
    let mut readers = vec![
        Reader::from_slice(b"a\n1\n"),
        open(&p, SourceChoice::Mmap, 4, &d),
        open_read(&p, true, 4, &d),
    ];
    for rdr in &mut readers {
        while rdr.read_row().unwrap().is_some() {}
        assert!(!rdr.resume_after_end());
    }
    // Nor after an I/O error: that end is not the input's.
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("no"))
        }
    }
    let mut rdr = Reader::from_reader(Failing);
    assert!(rdr.read_row().is_err());
    assert!(!rdr.resume_after_end());
}

/// A file that grew after it was split: a part that ended at a record's
/// end reads the rows it had (the file as it was split); the last part of
/// a file whose last record had no line end would read a record that now
/// runs on past the part (`1000` of what is now `10005`), so it fails
/// with `FileChanged` instead of reading a value the file never held.
#[test]
fn a_part_whose_last_record_grew_is_a_changed_file() {
    use fastcsv::split::Splitter;
    let dir = tempfile::tempdir().unwrap();
    let d = Dialect::default();
    for (tail, grows_mid_record) in [("1000\n", false), ("1000", true)] {
        let path = dir.path().join("grown.csv");
        let body: String = (0..1000).map(|i| format!("{i}\n")).collect();
        fs::write(&path, format!("a\n{body}{tail}")).unwrap();
        let parts = Splitter::new(&d).split_path(&path, 500).unwrap();
        assert!(parts.len() > 2);
        fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"5\n1001\n").unwrap();
        let mut got = Vec::new();
        let mut failed = None;
        'parts: for p in &parts {
            let mut rdr = match ReaderBuilder::new().from_path_part(&path, p) {
                Ok(r) => r,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            loop {
                match rdr.read_row() {
                    Ok(Some(row)) => got.push(row.get_str(0).unwrap().to_string()),
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break 'parts;
                    }
                }
            }
        }
        if grows_mid_record {
            let e = failed.expect("a record that grew went unnoticed");
            assert!(matches!(e.kind(), ErrorKind::FileChanged), "{e}");
            assert!(!got.contains(&"1000".to_string()), "{:?}", got.last());
        } else {
            assert!(failed.is_none(), "{failed:?}");
            let want: Vec<String> = (0..=1000).map(|i| i.to_string()).collect();
            assert_eq!(got, want);
        }
    }
}

/// The last part of a file that ended inside a quoted field whose last
/// byte is a line end (`"1000` and LF): when the file then grows (`5"`,
/// closing the quote), that field runs on past the part. The part's last
/// byte is a line end, so the check of that byte let it through and the
/// part read a value the file never held (`1000` and LF, not `1000`, LF,
/// `5`), with no error. It is `FileChanged` now, with the path and the
/// record's line and byte, on every source, strict or not, by rows,
/// batches or a count.
#[test]
fn a_part_ending_inside_a_quoted_field_that_grew_is_a_changed_file() {
    use fastcsv::split::Splitter;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quoted.csv");
    let body: String = (0..1000).map(|i| format!("{i}\n")).collect();
    let head = format!("a\n{body}");
    fs::write(&path, format!("{head}\"1000\n")).unwrap();
    let d = Dialect::default();
    let parts = Splitter::new(&d).split_path(&path, 500).unwrap();
    let last = parts.last().unwrap().clone();
    assert!(parts.len() > 2 && last.end == fs::metadata(&path).unwrap().len());
    fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"5\"\n1001\n").unwrap();
    for strict in [false, true] {
        let d = Dialect::builder().strict(strict).build().unwrap();
        for choice in [SourceChoice::Mmap, SourceChoice::Buffered] {
            let b = ReaderBuilder::new().dialect(d.clone()).source(choice).clone();
            let what = format!("strict {strict}, {choice:?}");
            // Rows: the part's earlier rows, then the error.
            let mut rdr = b.from_path_part(&path, &last).unwrap();
            let mut rows = Vec::new();
            let e = loop {
                match rdr.read_row() {
                    Ok(Some(row)) => rows.push(row.get_str(0).unwrap().to_string()),
                    Ok(None) => panic!("{what}: read {:?} with no error", rows.last()),
                    Err(e) => break e,
                }
            };
            assert!(matches!(e.kind(), ErrorKind::FileChanged), "{what}: {e}");
            assert!(!rows.iter().any(|r| r.starts_with("1000")), "{what}: {rows:?}");
            let pos = e.position().expect("a position");
            assert_eq!((pos.line, pos.byte), (1002, head.len() as u64), "{what}: {e}");
            assert_eq!(e.path(), Some(path.as_path()), "{what}");
            // A count and batches end the same way.
            let e = b.from_path_part(&path, &last).unwrap().count_rows().unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::FileChanged), "{what}: count: {e}");
            let mut rdr = b.from_path_part(&path, &last).unwrap();
            let mut sel = fastcsv::Selection::all();
            let e = loop {
                match rdr.read_batch(&mut sel) {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("{what}: batches with no error"),
                    Err(e) => break e,
                }
            };
            assert!(matches!(e.kind(), ErrorKind::FileChanged), "{what}: batches: {e}");
        }
    }
    // The file as it was split reads its last value, quote not closed.
    fs::write(&path, format!("{head}\"1000\n")).unwrap();
    let mut rdr = ReaderBuilder::new().from_path_part(&path, &last).unwrap();
    let mut rows = Vec::new();
    while let Some(row) = rdr.read_row().unwrap() {
        rows.push(row.get_str(0).unwrap().to_string());
    }
    assert_eq!(rows.last().map(String::as_str), Some("1000\n"));
}
