//! Fuzz target: any bytes, any dialect. The fast engine must never panic and
//! must agree with the reference engine, over a slice and over the buffered
//! source with a small buffer, through `read_row`, `read_batch`, and the
//! parallel `par_batches` and `par_count`.
//!
//! Run with `cargo +nightly fuzz run parse -- -detect_leaks=0` from the
//! repository root. (LeakSanitizer flags the 32-byte record glibc keeps per
//! thread-local destructor, `__cxa_thread_atexit_impl`, when a worker thread
//! of the parallel reader exits at the wrong moment; it is freed by glibc.)
#![no_main]

use fastcsv::scan::reference::{self, RefOutput, RefRow};
use fastcsv::{Dialect, Filter, Parallel, Reader, Selection, Terminator};
use libfuzzer_sys::fuzz_target;

fn collect(mut rdr: Reader<'_>) -> RefOutput {
    let mut rows = Vec::new();
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields = row.iter().map(|f| f.to_vec()).collect();
                rows.push(RefRow { fields, line: rdr.line() });
            }
            Ok(None) => return RefOutput { rows, error: None },
            Err(e) => return RefOutput { rows, error: Some((e.message(), rdr.line())) },
        }
    }
}

/// The rows through `read_batch` with `sel` (`None`: `Selection::all()`),
/// and the error with `line()` when one ends the input.
type Picked = (Vec<Vec<Vec<u8>>>, Option<(String, u64)>);

fn collect_batches(mut rdr: Reader<'_>, sel: Option<&[usize]>) -> Picked {
    let mut s = match sel {
        Some(cols) => Selection::new(cols.iter().copied()),
        None => Selection::all(),
    };
    let mut rows = Vec::new();
    loop {
        match rdr.read_batch(&mut s) {
            Ok(Some(b)) => rows.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect())),
            Ok(None) => return (rows, None),
            Err(e) => return (rows, Some((e.message(), rdr.line()))),
        }
    }
}

/// The rows through `Reader::par_batches` on `threads` threads in chunks
/// of `chunk` bytes, as `collect_batches` gives them.
fn collect_par(mut rdr: Reader<'_>, sel: Option<&[usize]>, threads: usize, chunk: usize) -> Picked {
    let s = match sel {
        Some(cols) => Selection::new(cols.iter().copied()),
        None => Selection::all(),
    };
    let par = Parallel::new().threads(threads).chunk_size(chunk);
    let mut rows = Vec::new();
    let r = rdr.par_batches(
        &s,
        &par,
        Vec::new,
        |b, out: &mut Vec<Vec<Vec<u8>>>| -> Result<(), fastcsv::Error> {
            out.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect()));
            Ok(())
        },
        |out| {
            rows.append(out);
            Ok(())
        },
    );
    match r {
        Ok(_) => (rows, None),
        Err(e) => (rows, Some((e.message(), rdr.line()))),
    }
}

/// The reference's rows projected as `collect_batches` gives them.
fn project(want: &RefOutput, sel: Option<&[usize]>) -> Picked {
    let rows = want
        .rows
        .iter()
        .map(|r| match sel {
            Some(cols) => {
                cols.iter().map(|&c| r.fields.get(c).cloned().unwrap_or_default()).collect()
            }
            None => r.fields.clone(),
        })
        .collect();
    (rows, want.error.clone())
}

fn dialect(cfg: &[u8]) -> Option<Dialect> {
    let b = |i: usize| cfg.get(i).copied().unwrap_or(0);
    let pick = |x: u8, opts: &[u8]| opts[x as usize % opts.len()];
    let mut d = Dialect::builder();
    d.delimiter(pick(b(0), b",;\t|"))
        .quote(match b(1) % 3 {
            0 => Some(b'"'),
            1 => Some(b'\''),
            _ => None,
        })
        .escape(if b(2) % 2 == 0 { None } else { Some(b'\\') })
        .double_quote(b(3) % 2 == 0)
        .skip_initial_space(b(4) % 2 == 1)
        .strict(b(5) % 2 == 1)
        .comment(if b(6) % 3 == 0 { Some(b'#') } else { None })
        .terminator(if b(7) % 4 == 0 { Terminator::Byte(b';') } else { Terminator::Any })
        .skip_empty_lines(b(8) % 2 == 1)
        .trim(b(9) % 2 == 1)
        .filter(match b(10) % 4 {
            0 => Filter::Off,
            1 => Filter::Controls,
            2 => Filter::AllControls,
            _ => Filter::Invisible,
        })
        .field_limit(if b(11) % 3 == 0 { Some(u64::from(b(12)) + 1) } else { None })
        .headers(false)
        .flexible(true)
        .strip_bom(false);
    d.build().ok()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 13 {
        return;
    }
    let (cfg, input) = data.split_at(13);
    let Some(d) = dialect(cfg) else { return };
    let want = reference::parse(&d, input);
    let got = collect(Reader::builder().dialect(d.clone()).from_slice(input));
    assert_eq!(got, want, "slice");
    let size = usize::from(cfg[12] % 16) + 1;
    let got = collect(Reader::builder().dialect(d.clone()).buffer_size(size).from_reader(input));
    assert_eq!(got, want, "buffered({size})");
    // read_batch: three columns (a repeat and one past most rows), or all.
    let cols: &[usize] = &[usize::from(cfg[11] % 4), 0, usize::from(cfg[10] % 8)];
    let sel = if cfg[9] % 3 == 0 { None } else { Some(cols) };
    let proj = project(&want, sel);
    let got = collect_batches(Reader::builder().dialect(d.clone()).from_slice(input), sel);
    assert_eq!(got, proj, "read_batch slice");
    let got = collect_batches(
        Reader::builder().dialect(d.clone()).buffer_size(size).from_reader(input),
        sel,
    );
    assert_eq!(got, proj, "read_batch buffered({size})");
    // Several threads, chunks of 1..64 bytes: most chunk starts are guesses.
    let (threads, chunk) = (usize::from(cfg[8] % 3) + 2, usize::from(cfg[7] % 64) + 1);
    let rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    assert_eq!(collect_par(rdr, sel, threads, chunk), proj, "par_batches({threads}, {chunk})");
    let mut rdr = Reader::builder().dialect(d).from_slice(input);
    let want_count = want.rows.len() as u64;
    match rdr.par_count(&Parallel::new().threads(threads).chunk_size(chunk)) {
        Ok((n, _)) => assert_eq!((n, None), (want_count, want.error.clone()), "par_count"),
        Err(e) => assert_eq!(Some((e.message(), rdr.line())), want.error, "par_count error"),
    }
});
