//! Fuzz target: any bytes, any dialect. The fast engine must never panic and
//! must agree with the reference engine through every engine of the shared
//! oracle (`tests/common/oracle.rs`: a slice, buffers of 1 byte upward,
//! files mapped and read, block scan on and off), over the buffered
//! source with a small buffer, through `read_row`, `read_batch`, and the
//! parallel `par_batches` and `par_count`; the Arrow columns
//! (`fastcsv::arrow::Columns`) must hold the reference's rows; and the
//! parts of a split (`fastcsv::split`), read one after another, must give
//! them too, a sync point (`Splitter::sync_point`) must be a record start,
//! and `Splitter::split_slice` must give the parts of the summaries.
//!
//! Run with `cargo +nightly fuzz run parse -- -detect_leaks=0` from the
//! repository root. (LeakSanitizer flags the 32-byte record glibc keeps per
//! thread-local destructor, `__cxa_thread_atexit_impl`, when a worker thread
//! of the parallel reader exits at the wrong moment; it is freed by glibc.)
#![no_main]

// The every-engine oracle the property tests use too.
#[path = "../../tests/common/oracle.rs"]
mod oracle;

use fastcsv::scan::reference::{RefOutput, RefRow};
use fastcsv::{Batch, Dialect, Filter, Parallel, Reader, Selection, Terminator};
use libfuzzer_sys::fuzz_target;
use oracle::via_reader as collect;

/// The rows of the parts of `input` cut at `cuts`, read one after another
/// up to the first error.
fn collect_parts(input: &[u8], d: &Dialect, cuts: &[usize]) -> RefOutput {
    let sp = fastcsv::split::Splitter::new(d);
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(input.len());
    let sums: Vec<_> =
        bounds.windows(2).map(|w| sp.summarize(input, w[0]..w[1]).expect("in range")).collect();
    let parts = sp.resolve(&sums).expect("in order");
    let mut out = RefOutput { rows: Vec::new(), error: None };
    for p in &parts {
        let rdr = Reader::builder().dialect(d.clone()).from_slice_part(input, p).expect("a part");
        let got = collect(rdr);
        out.rows.extend(got.rows);
        if got.error.is_some() {
            out.error = got.error;
            break;
        }
    }
    out
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
            Ok(Some(b)) => {
                for r in b.iter() {
                    let fields: Vec<Vec<u8>> = r.iter().map(<[u8]>::to_vec).collect();
                    // A field by index is the field the iterator gives.
                    assert_eq!(fields.len(), r.len());
                    for (j, f) in fields.iter().enumerate() {
                        assert_eq!(r.get(j), &f[..], "field {j}");
                    }
                    rows.push(fields);
                }
            }
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

/// The rows through `read_batch` with `Selection::raw()` and
/// `Selection::csv()`, as parsed fields: a record given as raw fields is
/// unquoted here (its fields are plain RFC 4180 with the dialect's quote);
/// one given as CSV pieces must be what a writer with the input's
/// delimiter and quote, quoting only where needed, writes for the
/// reference's fields, so the reference's row is checked against it and
/// taken. Runs of CSV pieces appended with `append_to` must equal the
/// pieces one by one. `None` where the block scanner gave nothing raw.
fn collect_marked(input: &[u8], d: &Dialect, want: &RefOutput) -> Picked {
    let q = d.quote();
    let unquote = |f: &[u8]| -> Vec<u8> {
        match (q, f) {
            (Some(q), [a, inner @ .., b]) if *a == q && *b == q => {
                let mut out = Vec::new();
                let mut i = 0;
                while i < inner.len() {
                    out.push(inner[i]);
                    i += if inner[i] == q { 2 } else { 1 };
                }
                out
            }
            _ => f.to_vec(),
        }
    };
    let written = |fields: &[Vec<u8>]| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push(d.delimiter());
            }
            // The bytes that end records: CR and LF with `Terminator::Any`
            // (what `Selection::csv` documents), the one byte otherwise.
            let ends = |c: u8| match d.terminator() {
                Terminator::Any => c == b'\r' || c == b'\n',
                Terminator::Byte(t) => c == t,
            };
            let needs = f.iter().any(|&c| c == d.delimiter() || Some(c) == q || ends(c));
            match q {
                Some(q) if needs => {
                    out.push(q);
                    for &c in f {
                        out.push(c);
                        if c == q {
                            out.push(q);
                        }
                    }
                    out.push(q);
                }
                _ => out.extend_from_slice(f),
            }
        }
        out
    };
    // Raw fields.
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::raw();
    let mut rows = Vec::new();
    let raw = loop {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => {
                for r in b.iter() {
                    rows.push(match r.raw_fields() {
                        Some(f) => f.clone().map(|x| unquote(&f.record()[x])).collect(),
                        None => r.iter().map(<[u8]>::to_vec).collect(),
                    });
                }
            }
            Ok(None) => break (rows, None),
            Err(e) => break (rows, Some((e.message(), rdr.line()))),
        }
    };
    assert_eq!(raw, project(want, None), "Selection::raw");
    // CSV pieces, record by record and in runs.
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::csv();
    let mut rows: Vec<Vec<Vec<u8>>> = Vec::new();
    let end = loop {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => {
                let fields = |k: usize| want.rows[k].fields.clone();
                rows.extend(check_csv_batch(&b, rows.len(), "csv", &fields, &written));
            }
            Ok(None) => break None,
            Err(e) => break Some((e.message(), rdr.line())),
        }
    };
    // CSV of some columns (ascending), record by record and in runs; a
    // record given as pieces is checked against the reference's fields of
    // those columns (empty past its end) and taken.
    let cols = col_set(want, input.len());
    let project_row = |k: usize| -> Vec<Vec<u8>> {
        cols.iter().map(|&c| want.rows[k].fields.get(c).cloned().unwrap_or_default()).collect()
    };
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::csv_columns(cols.iter().copied());
    let mut picked: Vec<Vec<Vec<u8>>> = Vec::new();
    loop {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => {
                picked.extend(check_csv_batch(
                    &b,
                    picked.len(),
                    "csv_columns",
                    &project_row,
                    &written,
                ));
            }
            Ok(None) => break,
            Err(_) => break,
        }
    }
    let n = picked.len();
    assert_eq!(picked, project(want, Some(&cols)).0[..n], "csv_columns rows");
    (rows, end)
}

/// Checks a batch of `Selection::csv` or `Selection::csv_columns`
/// (`what`) whose first record is record `first` of the input: a record
/// given as CSV pieces must be what `written` gives for `fields(k)` (the
/// reference's fields it selects; no bytes for one empty field), and runs
/// appended with `append_to` must be their pieces one by one and those
/// lines. The batch's rows as fields (the reference's where checked).
fn check_csv_batch(
    b: &Batch<'_>,
    first: usize,
    what: &str,
    fields: &dyn Fn(usize) -> Vec<Vec<u8>>,
    written: &dyn Fn(&[Vec<u8>]) -> Vec<u8>,
) -> Vec<Vec<Vec<u8>>> {
    let mut rows = Vec::new();
    for (i, r) in b.iter().enumerate() {
        let k = first + i;
        match r.csv_pieces() {
            Some(p) => {
                let got = p.collect::<Vec<_>>().concat();
                let fields = fields(k);
                let one_empty = fields.len() == 1 && fields[0].is_empty();
                let expect = if one_empty { Vec::new() } else { written(&fields) };
                assert_eq!(got, expect, "{what}: pieces of record {k}");
                rows.push(fields);
            }
            None => rows.push(r.iter().map(<[u8]>::to_vec).collect()),
        }
    }
    let mut i = 0;
    while i < b.len() {
        let (n, run) = b.csv_run(i);
        if n == 0 {
            i += 1;
            continue;
        }
        let mut one_by_one = b"x".to_vec();
        for piece in run.clone() {
            one_by_one.extend_from_slice(piece);
        }
        let mut appended = b"x".to_vec();
        run.append_to(&mut appended);
        assert_eq!(appended, one_by_one, "{what}: append_to");
        let mut lines = b"x".to_vec();
        for k in first + i..first + i + n {
            lines.extend_from_slice(&written(&fields(k)));
            lines.push(b'\n');
        }
        assert_eq!(appended, lines, "{what}: run from record {}", first + i);
        i += n;
    }
    rows
}

/// One to three ascending columns for `Selection::csv_columns`, from the
/// input's length and the reference's first row.
fn col_set(want: &RefOutput, len: usize) -> Vec<usize> {
    let w = want.rows.first().map_or(1, |r| r.fields.len()).max(1);
    let a = len % w;
    match len % 3 {
        0 => vec![a],
        1 => vec![a, a + 1 + len % 2],
        _ => vec![0, a + 1, a + 3],
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

/// What `fastcsv::arrow::Columns` must give for the reference's output:
/// the names (`None` when no record names the columns and none is read),
/// the rows up to the first one that fails (not UTF-8, longer than the
/// first, or the reader's error), and whether one failed.
type Cols = (Option<Vec<String>>, Vec<Vec<String>>, bool);

fn expect_columns(want: &RefOutput, header_row: bool) -> Cols {
    expect_selected(want, header_row, None)
}

/// [`expect_columns`] of the columns `sel` only (all when `None`): only
/// their values need be UTF-8. `None` names also when a column selected
/// is not there (the selection fails).
fn expect_selected(want: &RefOutput, header_row: bool, sel: Option<&[usize]>) -> Cols {
    let utf8 = |r: &RefRow| -> Option<Vec<String>> {
        r.fields.iter().map(|f| String::from_utf8(f.clone()).ok()).collect()
    };
    let picked = |r: &RefRow, w: usize| -> Option<Vec<String>> {
        let every: Vec<usize> = (0..w).collect();
        let f = |j: usize| r.fields.get(j).map_or(&[][..], |f| &f[..]);
        sel.unwrap_or(&every).iter().map(|&j| String::from_utf8(f(j).to_vec()).ok()).collect()
    };
    let project = |names: Option<Vec<String>>| -> Option<Vec<String>> {
        let names = names?;
        match sel {
            Some(s) => s.iter().map(|&j| names.get(j).cloned()).collect(),
            None => Some(names),
        }
    };
    let mut names: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for r in want.rows.iter().filter(|r| !r.fields.is_empty()) {
        if names.is_none() && header_row {
            match utf8(r) {
                Some(n) => names = Some(n),
                None => return (None, rows, true),
            }
            continue;
        }
        let w = names.get_or_insert_with(|| (0..r.fields.len()).map(|i| i.to_string()).collect());
        let w = w.len();
        if sel.is_some_and(|s| s.iter().any(|&j| j >= w)) {
            return (None, Vec::new(), true);
        }
        match picked(r, w).filter(|_| r.fields.len() <= w) {
            Some(v) => rows.push(v),
            None => return (project(names), rows, true),
        }
    }
    if let Some(s) = sel {
        // (No record: no column.)
        let w = names.as_ref().map_or(0, Vec::len);
        if s.iter().any(|&j| j >= w) {
            return (None, Vec::new(), true);
        }
        names.get_or_insert_with(Vec::new);
    }
    (project(names), rows, want.error.is_some())
}

fn got_columns(rdr: Reader<'_>, header_row: bool, batch_rows: usize) -> Cols {
    got_selected(rdr, header_row, batch_rows, None)
}

fn got_selected(
    rdr: Reader<'_>,
    header_row: bool,
    batch_rows: usize,
    sel: Option<&[usize]>,
) -> Cols {
    let mut c = match fastcsv::arrow::Columns::with_header_row(rdr, header_row) {
        Ok(c) => c,
        Err(_) => return (None, Vec::new(), true),
    };
    c.batch_rows(batch_rows);
    if let Some(s) = sel {
        if c.select(s).is_err() {
            return (None, Vec::new(), true);
        }
    }
    let mut rows = Vec::new();
    let failed = loop {
        match c.next_batch() {
            Ok(Some(b)) => {
                assert!(b.rows() > 0 && b.rows() <= batch_rows, "batch of {} rows", b.rows());
                for i in 0..b.rows() {
                    let text = |c: &fastcsv::arrow::Column| c.as_utf8().unwrap().get(i).to_owned();
                    rows.push(b.columns().iter().map(text).collect());
                }
            }
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    (Some(c.names().to_vec()), rows, failed)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 13 {
        return;
    }
    let (cfg, input) = data.split_at(13);
    let Some(d) = dialect(cfg) else { return };
    // Every engine against the reference (`tests/common/oracle.rs`): the
    // slice, buffers of 1 byte upward, batches, counts, a file mapped and
    // read, block scan on and off.
    let want = oracle::check_every_engine(&d, input);
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
    // Raw fields and CSV pieces (the rows are compared up to the first
    // error: those selections read on after one the same way).
    assert_eq!(collect_marked(input, &d, &want), project(&want, None), "raw / csv");
    // Several threads, chunks of 1..64 bytes: most chunk starts are guesses.
    let (threads, chunk) = (usize::from(cfg[8] % 3) + 2, usize::from(cfg[7] % 64) + 1);
    let rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    assert_eq!(collect_par(rdr, sel, threads, chunk), proj, "par_batches({threads}, {chunk})");
    let want_count = want.rows.len() as u64;
    // count_rows in place and through the `size`-byte buffer (which it
    // refills mid-record to stay in the block scanner).
    let counted = |mut rdr: Reader<'_>, what: &str| match rdr.count_rows() {
        Ok(n) => assert_eq!((n, None), (want_count, want.error.clone()), "{what}"),
        Err(e) => assert_eq!(Some((e.message(), rdr.line())), want.error, "{what} error"),
    };
    counted(Reader::builder().dialect(d.clone()).from_slice(input), "count_rows slice");
    let rdr = Reader::builder().dialect(d.clone()).buffer_size(size).from_reader(input);
    counted(rdr, "count_rows buffered");
    // Arrow columns, over the slice and the small buffer: an error before
    // the names are known fails at once (no names, no rows).
    let header_row = cfg[6] % 2 == 1;
    let batch_rows = usize::from(cfg[5] % 5) + 1;
    let mut expect = expect_columns(&want, header_row);
    if expect.0.is_none() && !expect.2 {
        // No record at all: no column.
        expect.0 = Some(Vec::new());
    }
    for (what, rdr) in [
        ("columns slice", Reader::builder().dialect(d.clone()).from_slice(input)),
        (
            "columns buffered",
            Reader::builder().dialect(d.clone()).buffer_size(size).from_reader(input),
        ),
    ] {
        let got = got_columns(rdr, header_row, batch_rows);
        if got.0.is_none() || expect.0.is_none() {
            // Failed before the names were known (or, by the reader's
            // batching, with the first rows): nothing given out.
            let nothing = got.2 && got.1.is_empty() && expect.2 && expect.1.is_empty();
            assert!(nothing, "{what}: {got:?} {expect:?}");
            continue;
        }
        assert_eq!(got, expect, "{what}");
    }
    // Selected columns (distinct, any order): the rows' values of those
    // columns, only theirs checked for UTF-8.
    let picked: Vec<usize> = {
        let mut v = vec![usize::from(cfg[10] % 5), usize::from(cfg[11] % 3), 1];
        let mut seen = [false; 5];
        v.retain(|&j| !std::mem::replace(&mut seen[j], true));
        v.truncate(usize::from(cfg[9] % 4));
        v
    };
    let expect = expect_selected(&want, header_row, Some(&picked));
    let rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let got = got_selected(rdr, header_row, batch_rows, Some(&picked));
    if got.0.is_none() || expect.0.is_none() {
        let nothing = got.2 && got.1.is_empty() && expect.2 && expect.1.is_empty();
        assert!(nothing, "selected {picked:?}: {got:?} {expect:?}");
    } else {
        assert_eq!(got, expect, "selected {picked:?}");
    }
    // Typed columns inferred from the first rows: the rows it saw convert
    // (a value that does not fit comes later), the batches have the types
    // inferred, and the rows are the text columns' rows.
    let sample = usize::from(cfg[7] % 16) + 1;
    if let Ok(mut c) = fastcsv::arrow::Columns::with_header_row(
        Reader::builder().dialect(d.clone()).from_slice(input),
        header_row,
    ) {
        c.batch_rows(batch_rows);
        // Now and then other spellings of nulls and booleans, drawn from
        // bytes the input has, with nulls in text columns.
        let custom = cfg[8] % 4 == 0;
        if custom {
            let word =
                |k: usize| input.get(k..k + usize::from(cfg[k % 13] % 3)).unwrap_or_default();
            let sp = fastcsv::arrow::Spellings::default()
                .nulls([word(0), word(3), &b""[..]])
                .trues([word(1), &b"1"[..]])
                .falses([word(2)])
                .strings_can_be_null(cfg[9] % 2 == 0);
            c.set_spellings(sp);
        }
        let types = c.infer_types(sample).expect("inference reads no further than batches do");
        assert_eq!(types, c.types());
        let mut rows = 0;
        loop {
            match c.next_batch() {
                Ok(Some(b)) => {
                    let got: Vec<_> = b.columns().iter().map(|c| c.data_type()).collect();
                    assert_eq!(got, types);
                    // Text columns: a null where the spellings say, with
                    // its count and bitmap agreeing.
                    for col in b.columns() {
                        if let Some(t) = col.as_utf8() {
                            let nulls = (0..t.len()).filter(|&i| t.is_null(i)).count();
                            assert_eq!(nulls, t.null_count());
                            assert_eq!(t.validity().is_some(), nulls > 0);
                            if !custom || cfg[9] % 2 != 0 {
                                assert_eq!(nulls, 0, "nulls in text without strings_can_be_null");
                            }
                        }
                    }
                    rows += b.rows();
                }
                Ok(None) => break,
                Err(e) => {
                    if let fastcsv::ErrorKind::Value { .. } = e.kind() {
                        assert!(rows >= sample, "a sampled row did not fit: {e}");
                    }
                    break;
                }
            }
        }
        if expect.0.is_some() {
            let text_rows = expect.1.len();
            assert!(rows <= text_rows, "{rows} typed rows, {text_rows} text rows");
        }
    }
    // Parts of a split at two cuts (a field over the size limit is not
    // modelled by the splitter: its parts after one may start elsewhere).
    if d.field_limit().is_none() {
        let at = |b: u8| input.len() * usize::from(b) / 255;
        let mut cuts = [at(cfg[4]), at(cfg[3])];
        cuts.sort_unstable();
        assert_eq!(collect_parts(input, &d, &cuts), want, "parts cut at {cuts:?}");
        // A sync point is a record start: an exact cut there starts a part
        // there.
        let sp = fastcsv::split::Splitter::new(&d);
        if let Some(p) = sp.sync_point(input, cuts[0], 0) {
            let p = usize::try_from(p).expect("in the input");
            assert!(p >= cuts[0] && p <= input.len(), "sync point {p} for {}", cuts[0]);
            let sums =
                [sp.summarize(input, 0..p).unwrap(), sp.summarize(input, p..input.len()).unwrap()];
            let parts = sp.resolve(&sums).expect("in order");
            assert_eq!(parts[1].start, p as u64, "sync point for {}", cuts[0]);
        }
        // The local split (counted parts where the bytes before the cuts
        // decide them) gives the summaries' parts.
        let chunk = usize::from(cfg[5]) + 1;
        let even: Vec<usize> = (1..).map(|k| k * chunk).take_while(|&c| c < input.len()).collect();
        let mut bounds = vec![0];
        bounds.extend_from_slice(&even);
        bounds.push(input.len());
        let sums: Vec<_> =
            bounds.windows(2).map(|w| sp.summarize(input, w[0]..w[1]).unwrap()).collect();
        let want = sp.settle(
            Reader::builder().dialect(d.clone()).from_slice(input),
            sp.resolve(&sums).unwrap(),
        );
        let got = sp.split_slice(input, chunk);
        assert_eq!(
            got.map_err(|e| e.to_string()),
            want.map_err(|e| e.to_string()),
            "split_slice by {chunk}"
        );
    }
    let mut rdr = Reader::builder().dialect(d).from_slice(input);
    match rdr.par_count(&Parallel::new().threads(threads).chunk_size(chunk)) {
        Ok((n, _)) => assert_eq!((n, None), (want_count, want.error.clone()), "par_count"),
        Err(e) => assert_eq!(Some((e.message(), rdr.line())), want.error, "par_count error"),
    }
});
