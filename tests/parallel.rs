//! `Reader::par_batches` against a sequential `read_batch` loop: the same
//! records (selected fields, field counts, positions), the same first
//! error, and the same reader state after it (`line()`,
//! `records_read()`), over random dialects and inputs cut into chunks of a
//! few bytes (so that most chunk starts are guessed from quote parity, and
//! many guesses are wrong), and over a mapped file.

mod common;

use common::{dialect, input};
use fastcsv::{Dialect, Parallel, Reader, Selection};
use proptest::prelude::*;

/// Fields, field count and byte offset (inside `work`, line and record
/// numbers count from the chunk's start).
type Picked = (Vec<Vec<u8>>, usize, u64);

/// Records, the first error (as text) and the reader's state after.
type Outcome = (Vec<Picked>, Option<String>, u64, u64);

fn pick(b: &fastcsv::Batch<'_>, out: &mut Vec<Picked>) {
    for r in b.iter() {
        out.push((r.iter().map(<[u8]>::to_vec).collect(), r.field_count(), r.position().byte));
    }
}

fn sequential(rdr: &mut Reader<'_>, sel: &Selection) -> Outcome {
    let mut sel = sel.clone();
    let mut rows = Vec::new();
    loop {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => pick(&b, &mut rows),
            Ok(None) => return (rows, None, rdr.line(), rdr.records_read()),
            Err(e) => return (rows, Some(e.to_string()), rdr.line(), rdr.records_read()),
        }
    }
}

fn parallel(
    rdr: &mut Reader<'_>,
    sel: &Selection,
    par: &Parallel,
) -> (Outcome, fastcsv::ParallelRun) {
    let mut rows = Vec::new();
    let r = rdr.par_batches(
        sel,
        par,
        Vec::new,
        |b, out: &mut Vec<Picked>| -> Result<(), fastcsv::Error> {
            pick(b, out);
            Ok(())
        },
        |out| {
            rows.append(out);
            Ok(())
        },
    );
    let (err, run) = match r {
        Ok(run) => (None, run),
        Err(e) => (Some(e.to_string()), Default::default()),
    };
    ((rows, err, rdr.line(), rdr.records_read()), run)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn par_batches_equals_read_batch(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        headers in any::<bool>(),
        cols in prop::collection::vec(0..12usize, 0..4),
        all in prop::bool::weighted(0.3),
        chunk in prop_oneof![Just(1usize), 2..9usize, 9..200usize],
        threads in 2..5usize,
    ) {
        let Some(d) = d else { return Ok(()) };
        let mut b = d.to_builder();
        let d = b.flexible(flexible).headers(headers).build().unwrap();
        let sel = if all { Selection::all() } else { Selection::new(cols) };
        let mut want = Reader::builder().dialect(d.clone()).from_slice(&input);
        let want = sequential(&mut want, &sel);
        let par = Parallel::new().threads(threads).chunk_size(chunk);
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let (got, _) = parallel(&mut rdr, &sel, &par);
        prop_assert_eq!(got, want, "input {:?}", String::from_utf8_lossy(&input));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn par_count_equals_count_rows(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        headers in any::<bool>(),
        chunk in prop_oneof![Just(1usize), 2..9usize, 9..200usize],
        threads in 2..5usize,
    ) {
        let Some(d) = d else { return Ok(()) };
        let mut b = d.to_builder();
        let d = b.flexible(flexible).headers(headers).build().unwrap();
        let state = |r: &Reader<'_>| (r.line(), r.records_read());
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let want = (rdr.count_rows().map_err(|e| e.to_string()), state(&rdr));
        let par = Parallel::new().threads(threads).chunk_size(chunk);
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let got = rdr.par_count(&par).map(|(n, _)| n).map_err(|e| e.to_string());
        prop_assert_eq!((got, state(&rdr)), want, "input {:?}", String::from_utf8_lossy(&input));
    }
}

/// RFC 4180 data with quoted delimiters, line ends and doubled quotes,
/// LF and CRLF: every chunk start is guessed right, no chunk is redone.
fn rfc_data(records: usize) -> Vec<u8> {
    let mut v = b"id,text,n\r\n".to_vec();
    for i in 0..records {
        let text = match i % 4 {
            0 => format!("\"a, b\nc {i}\""),
            1 => format!("\"say \"\"{i}\"\"\""),
            2 => format!("plain {i}"),
            _ => String::new(),
        };
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        v.extend_from_slice(format!("{i},{text},{}{end}", i * 7).as_bytes());
    }
    v
}

#[test]
fn quoted_line_ends_split_exactly() {
    let data = rfc_data(20_000);
    let d = Dialect::default();
    for sel in [Selection::all(), Selection::new([1]), Selection::new([])] {
        let want = sequential(&mut Reader::builder().dialect(d.clone()).from_slice(&data), &sel);
        assert_eq!(want.0.len(), 20_000);
        for (threads, chunk) in [(2, 4096), (3, 1000), (2, 100_000)] {
            let par = Parallel::new().threads(threads).chunk_size(chunk);
            let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
            let (got, run) = parallel(&mut rdr, &sel, &par);
            assert_eq!(got, want, "threads {threads}, chunk {chunk}");
            assert_eq!(run.sequential_from, None, "every guess right");
            assert_eq!(run.chunks, data.len().saturating_sub(11).div_ceil(chunk));
            let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
            let (n, run) = rdr.par_count(&par).unwrap();
            assert_eq!((n, rdr.line(), rdr.records_read()), (20_000, want.2, want.3));
            assert_eq!(run.sequential_from, None, "every count chunk ends a record");
        }
    }
}

/// An error deep in the input: the records before it, then the error with
/// the sequential reader's position, line and record number.
#[test]
fn errors_keep_their_positions() {
    let mut data = rfc_data(5_000);
    let at = data.len() / 2;
    let nl = at + data[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
    data.splice(nl..nl, b"1,2,3,4\n".iter().copied());
    let d = Dialect::builder().strict(true).build().unwrap();
    let sel = Selection::all();
    let want = sequential(&mut Reader::builder().dialect(d.clone()).from_slice(&data), &sel);
    let err = want.1.clone().expect("a ragged row");
    assert!(err.contains("record with 4 fields"), "{err}");
    let par = Parallel::new().threads(2).chunk_size(2048);
    let mut rdr = Reader::builder().dialect(d).from_slice(&data);
    let (got, _) = parallel(&mut rdr, &sel, &par);
    assert_eq!(got, want);
    assert!(got.0.len() > 2000, "the records before the error, from several chunks");
}

/// An error of `work` (or, wrapped, of the reader).
#[derive(Debug)]
struct Failed(String);

impl From<fastcsv::Error> for Failed {
    fn from(e: fastcsv::Error) -> Self {
        Failed(e.to_string())
    }
}

/// In `work`, a row's byte offset is the sequential one (record and line
/// count from the chunk's start, as documented); an error made by `work`
/// from a row's position comes out with the sequential record and line,
/// since its chunk is read again on the calling thread.
#[test]
fn work_sees_byte_offsets_and_its_errors_are_sequential() {
    let data = rfc_data(20_000);
    let d = Dialect::default();
    let sel = Selection::new([0]);
    let offsets = |par: &Parallel| {
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
        let mut got = Vec::new();
        let work = |b: &fastcsv::Batch<'_>, out: &mut Vec<u64>| -> Result<(), fastcsv::Error> {
            out.extend(b.iter().map(|r| r.position().byte));
            Ok(())
        };
        rdr.par_batches(&sel, par, Vec::new, work, |out| {
            got.append(out);
            Ok(())
        })
        .unwrap();
        got
    };
    let want = offsets(&Parallel::new().threads(1));
    assert_eq!(want.len(), 20_000);
    assert_eq!(offsets(&Parallel::new().threads(2).chunk_size(4096)), want);
    // `work` fails at the record whose id is 15000, naming its position.
    let failing = |par: &Parallel| {
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
        let work = |b: &fastcsv::Batch<'_>, _: &mut ()| -> Result<(), Failed> {
            match b.iter().find(|r| r.get(0) == b"15000") {
                Some(r) => {
                    let p = r.position();
                    Err(Failed(format!("record {} line {} byte {}", p.record, p.line, p.byte)))
                }
                None => Ok(()),
            }
        };
        rdr.par_batches(&sel, par, || (), work, |_| Ok(())).unwrap_err().0
    };
    let want = failing(&Parallel::new().threads(1));
    assert!(want.starts_with("record 15001 "), "{want}");
    assert_eq!(failing(&Parallel::new().threads(2).chunk_size(4096)), want);
}

/// A mapped file, after its header was read, and the file's length not a
/// multiple of the chunk size.
#[test]
fn mapped_file_after_headers() {
    let data = rfc_data(30_001);
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, &data).unwrap();
    let sel = Selection::new([2, 0]);
    let want = sequential(&mut Reader::from_slice(&data), &sel);
    let mut b = Reader::builder();
    let mut rdr = b.source(fastcsv::SourceChoice::Mmap).from_path(f.path()).unwrap();
    assert_eq!(rdr.headers().unwrap().unwrap().get(1), Some(&b"text"[..]));
    let (got, run) = parallel(&mut rdr, &sel, &Parallel::new().threads(2).chunk_size(65_536));
    assert_eq!(got, want);
    assert!(run.chunks > 10 && run.sequential_from.is_none(), "{run:?}");
    // Nothing left to read.
    assert!(rdr.read_row().unwrap().is_none());
}

/// After a data error the reader resumes at the next line; a parallel read
/// from there gives what a sequential one gives.
#[test]
fn resumes_after_an_error() {
    let mut data = b"a,b\n1,2\n\"x\"y,3\n".to_vec();
    data.extend_from_slice(&rfc_data(3000)[11..]);
    let d = Dialect::builder().strict(true).flexible(true).build().unwrap();
    let sel = Selection::all();
    let mut outcomes = Vec::new();
    for par in [None, Some(Parallel::new().threads(2).chunk_size(512))] {
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
        let mut s = sel.clone();
        let first = rdr.read_batch(&mut s).unwrap().unwrap().len();
        assert!(rdr.read_batch(&mut s).is_err(), "text after a closing quote");
        outcomes.push((
            first,
            match &par {
                None => sequential(&mut rdr, &sel),
                Some(p) => parallel(&mut rdr, &sel, p).0,
            },
        ));
    }
    assert_eq!(outcomes[0].1 .0.len(), 3000);
    assert_eq!(outcomes[0], outcomes[1]);
}

/// A panic in `work` on a worker thread reaches the caller; it does not
/// leave the calling thread waiting.
#[test]
fn a_panic_in_work_propagates() {
    let data = rfc_data(20_000);
    let r = std::panic::catch_unwind(|| {
        let mut rdr = Reader::from_slice(&data);
        let par = Parallel::new().threads(2).chunk_size(4096);
        let _ = rdr.par_batches(
            &Selection::all(),
            &par,
            || 0u64,
            |b, _: &mut u64| -> Result<(), fastcsv::Error> {
                if b.row(0).position().byte > 200_000 {
                    panic!("work failed");
                }
                Ok(())
            },
            |_| Ok(()),
        );
    });
    assert!(r.is_err());
}

/// A stray quote inside an unquoted field (kept as data by Python's rules)
/// once made the guessing scheme's quote parity wrong for every later
/// chunk, and the reader finished alone. The chunks now start at record
/// starts found exactly by the splitter: the rows, counts and positions
/// are the sequential read's, and no chunk hands over to it.
#[test]
fn a_stray_quote_hands_over_early() {
    let mut data = b"a,b,c\n1,5\" screen,3\n".to_vec();
    for i in 0..200_000 {
        data.extend_from_slice(format!("{i},{},{}\n", i * 3, i % 7).as_bytes());
    }
    let par = Parallel::new().threads(2).chunk_size(64 << 10);
    let want = sequential(&mut Reader::from_slice(&data), &Selection::new([0, 2]));
    let mut rdr = Reader::from_slice(&data);
    let (got, run) = parallel(&mut rdr, &Selection::new([0, 2]), &par);
    assert_eq!(got, want);
    assert!(run.sequential_from.is_none() && run.chunks > 10, "{run:?}");
    let mut rdr = Reader::from_slice(&data);
    let (n, run) = rdr.par_count(&par).unwrap();
    assert_eq!((n, rdr.line()), (200_001, 200_002));
    assert!(run.sequential_from.is_none() && run.chunks > 10, "{run:?}");
}

/// The workers are named threads (`fastcsv-parallel`), started through
/// the crate's one thread module; the calling thread sinks.
#[test]
fn workers_are_named_threads() {
    let data = b"a,b\n".iter().copied().chain(b"1,\"x\ny\"\n".repeat(20_000)).collect::<Vec<u8>>();
    let mut rdr = Reader::from_slice(&data);
    let par = Parallel::new().threads(2).chunk_size(4096);
    let names = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let caller = std::thread::current().id();
    let mut sank_here = true;
    let ran = rdr
        .par_batches(
            &Selection::all(),
            &par,
            || 0u64,
            |_, _: &mut u64| -> Result<(), fastcsv::Error> {
                let t = std::thread::current();
                names.lock().unwrap().insert(t.name().unwrap_or("").to_string());
                Ok(())
            },
            |_| {
                sank_here &= std::thread::current().id() == caller;
                Ok(())
            },
        )
        .unwrap();
    assert!(ran.chunks > 1, "{ran:?}");
    assert!(sank_here);
    assert!(names.into_inner().unwrap().contains("fastcsv-parallel"));
}
