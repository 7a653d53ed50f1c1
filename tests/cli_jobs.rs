//! `-j N` on every verb, `search` on several threads (the same output,
//! errors and exit status as on one), and `slice` skipping to `--start` by
//! record ends alone (on one thread and on several).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns standard output.
fn ok(args: &[&str]) -> Vec<u8> {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    assert_eq!(stderr(&o), "", "{args:?}");
    o.stdout
}

/// Asserts exit status `code` and one `fastcsv: ` line (or clap's usage
/// error) on standard error containing `needle`.
fn fails(args: &[&str], code: i32, needle: &str) -> Output {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
    if code == 1 {
        assert!(err.starts_with("fastcsv: ") && err.lines().count() == 1, "{err}");
    }
    o
}

/// `args` with `extra` inserted after the verb.
fn with<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    [&args[..1], extra, &args[1..]].concat()
}

/// A header row and `records` records of several shapes: plain, quoted
/// with delimiters, doubled quotes and line ends, empty fields, non-ASCII
/// text, LF and CRLF.
fn data(records: usize) -> Vec<u8> {
    let cities = ["Oslo", "Paris", "Zürich", "Rome", "Lagos"];
    let mut v = b"id,name,city,note,n\n".to_vec();
    for i in 0..records {
        let note = match i % 6 {
            0 => format!("\"a, b\nc {i}\""),
            1 => format!("\"say \"\"hi {i}\"\"\""),
            2 => String::new(),
            3 => "x".repeat(i % 50),
            4 => format!("\"Oslo, {i}\""),
            _ => format!("plain {i}"),
        };
        let city = cities[i % cities.len()];
        let end = if i % 7 == 0 { "\r\n" } else { "\n" };
        v.extend_from_slice(format!("{i},n{},{city},{note},{}{end}", i % 13, i * 7).as_bytes());
    }
    v
}

fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p.display().to_string()
}

/// The records of CSV text, parsed by the `csv` crate.
fn records(csv_text: &[u8], headers: bool) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(headers).from_reader(csv_text);
    r.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect()
}

/// The files in `dir`, by name, with their bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_verb_takes_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "d.csv", &data(3000));
    let f = f.as_str();
    let verbs: Vec<Vec<&str>> = vec![
        vec!["count", f],
        vec!["headers", f],
        vec!["select", "id,city", f],
        vec!["cat", f],
        vec!["cat", "columns", f, f],
        vec!["slice", "-s", "5", "-l", "50", f],
        vec!["search", "Oslo", f],
        vec!["check", f],
        vec!["frequency", "-s", "city", f],
        vec!["stats", f],
        vec!["table", f],
        vec!["fmt", "-t", ";", f],
        vec!["flatten", f],
        vec!["fixlengths", f],
        vec!["input", f],
        vec!["sort", "-s", "city", f],
        vec!["join", "id", f, "id", f],
        vec!["sample", "--seed", "7", "20", f],
        vec!["dedup", "-s", "city", f],
        vec!["parts", "-s", "4K", f],
    ];
    for v in &verbs {
        let one = ok(&with(v, &["-j", "1"]));
        assert!(!one.is_empty(), "{v:?}");
        assert_eq!(ok(&with(v, &["-j", "2"])), one, "{v:?}");
        assert_eq!(ok(&with(v, &["-j2"])), one, "{v:?}");
        assert_eq!(ok(&with(v, &["--threads", "2"])), one, "{v:?}");
        assert_eq!(ok(&with(v, &["--jobs", "3"])), one, "{v:?}");
        if v[0] != "headers" {
            assert_eq!(ok(&with(v, &["-j", "3", "--chunk-size", "4K"])), one, "{v:?}");
        }
        // As every verb that had -j before reports it.
        for bad in ["0", "x"] {
            let want = format!("invalid value '{bad}' for '--jobs <N>'");
            // `headers -j x`: the names of the file `x` (xsv's -j).
            if v[0] != "headers" || bad == "0" {
                fails(&with(v, &["-j", bad]), 2, &want);
            }
            fails(&with(v, &["--threads", bad]), 2, &want);
        }
    }
    // The verbs that write files.
    for v in [vec!["split", "-s", "500"], vec!["partition", "city"]] {
        let mut got = Vec::new();
        for j in ["1", "2"] {
            let out = dir.path().join(format!("{}-{j}", v[0]));
            let out = out.to_str().unwrap();
            ok(&[&v[..], &["-j", j, out, f]].concat());
            got.push(files(Path::new(out)));
        }
        assert!(got[0].len() > 1, "{v:?}");
        assert_eq!(got[0], got[1], "{v:?}");
        fails(&[&v[..], &["-j", "0", "out", f]].concat(), 2, "invalid value '0' for '--jobs <N>'");
    }
    // `headers -j` alone is xsv's --just-names; with a number, threads.
    assert_eq!(ok(&["headers", "-j", f]), b"id\nname\ncity\nnote\nn\n");
    assert_eq!(ok(&["headers", "-j", "-j", "2", f]), b"id\nname\ncity\nnote\nn\n");
    fails(&["headers", "--jobs", "x", f], 2, "invalid value 'x' for '--jobs <N>'");
    // `bench` names it --threads, and takes -j too.
    fails(&["bench", "-j", "0", f], 2, "invalid value '0' for '--threads <N>'");
}

/// Searches of every kind, on one thread and on three with small chunks:
/// the same bytes out, the same status and message.
#[test]
fn search_in_parallel_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "d.csv", &data(20_000));
    let f = f.as_str();
    let formats: [&[&str]; 4] =
        [&[], &["--to", "tsv"], &["--to", "jsonl"], &["--out-delimiter", ";"]];
    let searches: [&[&str]; 12] = [
        &["Oslo"],
        &["-v", "Oslo"],
        &["-i", "oslo"],
        &["-s", "city", "^Os"],
        &["-s", "note,n", "hi 1"],
        &["-s", "note", "y \"hi"],
        &["Paris|Lagos"],
        &["-i", "ZÜRICH"],
        &["no such text"],
        &["-v", "."],
        &["."],
        &["\\d{3}7$"],
    ];
    for s in searches {
        for to in formats {
            let args = [&["search"][..], s, to, &[f]].concat();
            let one = run(&with(&args, &["-j", "1"]));
            assert_eq!(one.status.code(), Some(0), "{args:?}: {}", stderr(&one));
            let par = run(&with(&args, &["-j", "3", "--chunk-size", "4K"]));
            assert_eq!((par.status.code(), stderr(&par)), (Some(0), String::new()), "{args:?}");
            assert!(par.stdout == one.stdout, "{args:?}");
        }
    }
    // Against the `csv` crate: the records with a field holding "Oslo".
    let want: Vec<Vec<String>> = records(&data(20_000), true)
        .into_iter()
        .filter(|r| r.iter().any(|f| f.contains("Oslo")))
        .collect();
    let got = records(&ok(&["search", "-j", "3", "--chunk-size", "4K", "Oslo", f]), true);
    assert!(want.len() > 5000);
    assert_eq!(got, want);
    // No match at all, and every record.
    assert_eq!(
        ok(&["search", "-j", "3", "--chunk-size", "4K", "no such", f]),
        b"id,name,city,note,n\n"
    );
    let all = records(&ok(&["search", "-j", "3", "--chunk-size", "4K", ".", f]), true);
    assert_eq!(all, records(&data(20_000), true));
}

/// A ragged record two thirds in: the records before it, then the error,
/// exit status 1, whatever the threads.
#[test]
fn search_errors_are_those_of_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = data(20_000);
    let at = d.len() * 2 / 3;
    let nl = at + d[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    d.splice(nl..nl, b"oops\n".iter().copied());
    let f = write(dir.path(), "bad.csv", &d);
    for s in [&["Oslo"][..], &["-v", "Oslo"], &["-s", "city", "^Os"], &["."]] {
        let args = [&["search"][..], s, &[&f]].concat();
        let one = fails(&with(&args, &["-j", "1"]), 1, "found record with 1 fields");
        let par = run(&with(&args, &["-j", "3", "--chunk-size", "4K"]));
        assert_eq!(par.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&par), stderr(&one), "{args:?}");
        assert!(par.stdout == one.stdout && one.stdout.len() > 1000, "{args:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_device_fails_search_and_slice_on_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "d.csv", &data(20_000));
    for args in [
        vec!["search", "Oslo", &f],
        vec!["search", "-v", "Oslo", "--to", "jsonl", &f],
        vec!["slice", "-s", "15000", &f],
    ] {
        for j in [&["-j", "1"][..], &["-j", "3", "--chunk-size", "4K"]] {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let o = Command::new(BIN).args(with(&args, j)).stdout(full).output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            assert_eq!(
                stderr(&o),
                "fastcsv: write error: No space left on device (os error 28)\n",
                "{args:?}"
            );
        }
    }
}

/// Records `start..end` as the `csv` crate reads them, whatever the
/// threads and the source.
#[test]
fn slice_skips_to_the_start_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(20_000);
    let f = write(dir.path(), "d.csv", &d);
    let all = records(&d, true);
    let ways: [&[&str]; 4] = [
        &["-j", "1"],
        &["-j", "3", "--chunk-size", "4K"],
        &["--source", "read", "--buffer-size", "1K"],
        &["-j", "2", "--chunk-size", "64K", "--source", "mmap"],
    ];
    for (start, len) in [
        (0, Some(3)),
        (1, Some(1)),
        (4999, Some(2)),
        (12_345, None),
        (19_999, None),
        (20_000, None),
    ] {
        let s = start.to_string();
        let l = len.map(|l: usize| l.to_string());
        let mut args = vec!["slice", "-s", &s];
        if let Some(l) = &l {
            args.extend(["-l", l]);
        }
        args.push(&f);
        let end = len.map_or(all.len(), |l| (start + l).min(all.len()));
        for way in ways {
            let got = records(&ok(&with(&args, way)), true);
            assert_eq!(got, all[start.min(all.len())..end], "{args:?} {way:?}");
        }
    }
    // Past the end: the header row alone.
    assert_eq!(
        ok(&["slice", "-s", "25000", "-j", "3", "--chunk-size", "4K", &f]),
        b"id,name,city,note,n\n"
    );
    // -e before -s: a usage error, as in xsv, with nothing written.
    let o = fails(&["slice", "-s", "100", "-e", "50", &f], 2, "the end of the range (50)");
    assert!(o.stdout.is_empty());
    // -e equal to -s: an empty range, the header row alone.
    assert_eq!(ok(&["slice", "-s", "50", "-e", "50", &f]), b"id,name,city,note,n\n");
    let jsonl = ok(&["slice", "-i", "19999", "--to", "jsonl", "-j", "3", "--chunk-size", "4K", &f]);
    assert!(jsonl.starts_with(b"{\"id\":\"19999\","), "{}", String::from_utf8_lossy(&jsonl));
}

/// A ragged record before the start is reported where it is, on every
/// path; one after the range's end is never read.
#[test]
fn slice_reports_errors_before_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = data(20_000);
    let at = d.len() / 2;
    let nl = at + d[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    d.splice(nl..nl, b"oops\n".iter().copied());
    let f = write(dir.path(), "bad.csv", &d);
    let mut msgs = Vec::new();
    for way in [&["-j", "1"][..], &["-j", "3", "--chunk-size", "4K"], &["--source", "read"]] {
        let o = fails(&with(&["slice", "-s", "15000", &f], way), 1, "found record with 1 fields");
        assert_eq!(o.stdout, b"id,name,city,note,n\n");
        msgs.push(stderr(&o));
    }
    assert!(msgs.iter().all(|m| *m == msgs[0]), "{msgs:?}");
    // The range ends before the bad record: no error.
    let o = ok(&["slice", "-s", "100", "-l", "5", "-j", "3", "--chunk-size", "4K", &f]);
    assert_eq!(records(&o, true).len(), 5);
}

/// `frequency` of a column of many distinct values (its sort and its
/// output lines made on several threads, in windows) prints what one
/// thread prints, and fails on a full device on every thread count.
#[test]
fn frequency_of_many_values_on_threads_is_that_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = b"a,b\n".to_vec();
    for i in 0..300_000u64 {
        // Ties of counts 1 to 3, values of 1 to 12 bytes, some quoted.
        let a = format!("{}{}", "k".repeat((i % 6) as usize), (i * 7919) % 210_011);
        let b = if i % 17 == 0 { format!("\"x,{}\"", i % 5000) } else { format!("{}", i % 97) };
        v.extend_from_slice(format!("{a},{b}\n").as_bytes());
    }
    let f = write(dir.path(), "many.csv", &v);
    for args in
        [vec!["frequency", "-l", "0", &f], vec!["frequency", "-s", "a", "-l", "0", "--asc", &f]]
    {
        let one = ok(&with(&args, &["-j", "1"]));
        // More lines than one window of output on any thread count.
        assert!(one.split(|&b| b == b'\n').count() > 250_000, "{args:?}");
        for j in [&["-j", "2"][..], &["-j", "3", "--chunk-size", "64K"], &["-j", "8"]] {
            assert_eq!(ok(&with(&args, j)), one, "{args:?} {j:?}");
        }
        for j in ["1", "3"] {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let o = Command::new(BIN).args(with(&args, &["-j", j])).stdout(full).output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            assert_eq!(stderr(&o), "fastcsv: write error: No space left on device (os error 28)\n");
        }
    }
}

/// `frequency`'s flags on several threads (values sorted in ranges of
/// the order on every thread, cut to the limit): each gives what one
/// thread gives, for limits that end anywhere in the order, ties, empty
/// values, quoted line breaks and a file without a header row.
#[test]
fn frequency_flags_on_threads_are_those_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = b"a,b,note\n".to_vec();
    for i in 0..150_000u64 {
        let a = (i * 7919) % 120_007;
        let a = if a % 53 == 0 { String::new() } else { format!("v{a}") };
        let note =
            if i % 7 == 0 { format!("\"n\n{}, \"\"q\"\"\"", i % 900) } else { String::new() };
        v.extend_from_slice(format!("{a},{},{note}\n", i % 31).as_bytes());
    }
    let f = write(dir.path(), "flags.csv", &v);
    let sets: [&[&str]; 8] = [
        &["-l", "0"],
        &["-l", "0", "--asc"],
        &["-l", "1"],
        &["-l", "60000", "-s", "a"],
        &["-l", "99999", "--asc", "-s", "a"],
        &["-l", "0", "--no-nulls", "-s", "a,note"],
        &["-n", "-l", "0", "-s", "1"],
        &["-s", "note", "-l", "500"],
    ];
    for set in sets {
        let args = [&["frequency"][..], set, &[&f]].concat();
        let one = ok(&with(&args, &["-j", "1"]));
        for j in [
            &["-j", "2"][..],
            &["-j", "3", "--chunk-size", "4K"],
            &["-j", "8", "--chunk-size", "64K"],
        ] {
            assert_eq!(ok(&with(&args, j)), one, "{args:?} {j:?}");
        }
    }
}

/// A quoted field with line breaks longer than many chunks (no quote in
/// the ranges before the cuts inside it, so their states are taken from
/// the summaries of every range): `count` and `frequency` on several
/// threads give what one thread gives.
#[test]
fn a_long_quoted_field_across_chunks_reads_as_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = b"a,b\n".to_vec();
    for i in 0..20_000 {
        v.extend_from_slice(format!("{},{i}\n", i % 13).as_bytes());
    }
    v.extend_from_slice(b"7,\"");
    for i in 0..20_000 {
        v.extend_from_slice(format!("line {i},\n").as_bytes());
    }
    v.extend_from_slice(b"\"\n");
    for i in 0..20_000 {
        v.extend_from_slice(format!("{},{i}\n", i % 11).as_bytes());
    }
    let f = write(dir.path(), "long.csv", &v);
    for args in [vec!["count", &f], vec!["frequency", "-s", "a", &f]] {
        let one = ok(&with(&args, &["-j", "1"]));
        for j in [&["-j", "2", "--chunk-size", "4K"][..], &["-j", "3", "--chunk-size", "16K"]] {
            assert_eq!(ok(&with(&args, j)), one, "{args:?} {j:?}");
        }
    }
    assert_eq!(ok(&["count", &f]), b"40001\n");
}

/// `frequency` quotes a field name or value holding a delimiter, quote,
/// CR or LF (and only those), as every CSV output does, on one thread and
/// several.
#[test]
fn frequency_quotes_names_and_values_that_need_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = "\"a,b\",\"\"\n\"x,1\",\n\"q\"\"t\",z\n\"l\nm\",z\n\"r\rs\",z\nplain,z\n";
    let f = write(dir.path(), "q.csv", data.as_bytes());
    let want = "field,value,count\n\"a,b\",\"l\nm\",1\n\"a,b\",plain,1\n\"a,b\",\"q\"\"t\",1\n\
                \"a,b\",\"r\rs\",1\n\"a,b\",\"x,1\",1\n,z,4\n,(NULL),1\n";
    for j in ["1", "2"] {
        let o = ok(&["frequency", "-j", j, "-l", "0", &f]);
        assert_eq!(String::from_utf8(o).unwrap(), want, "-j {j}");
    }
}

/// A seeded xorshift64* sequence for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The `stats` outputs that print a sum, mean or deviation of floats.
const STATS_FORMS: [&[&str]; 4] =
    [&["stats"], &["stats", "--nulls", "--everything"], &["stats", "--csv"], &["stats", "--json"]];

/// `stats` of seeded random floats (of magnitudes 1e-20 to 1e20, both
/// signs, integers first in one column, empty values in another): the
/// sum, mean and deviation of a column of floats were added in another
/// grouping on each thread count, so their last digits differed between
/// `-j 1` and `-j 2`. They come from exact sums now: the same bytes on
/// every thread count and chunk size, and for the rows in any order.
#[test]
fn stats_of_floats_are_the_same_on_every_thread_count() {
    let mut rng = Rng(0x5EED_F10A7);
    let rows: Vec<String> = (0..40_000)
        .map(|i| {
            let mut float = || {
                let mag = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let exp = (rng.next() % 41) as i32 - 20;
                let x = mag * 10f64.powi(exp);
                if rng.next() >> 63 == 0 {
                    -x
                } else {
                    x
                }
            };
            let (a, b, c) = (float(), float(), float());
            // Integers first (kept exactly in 128 bits), then floats.
            let c = if i < 15_000 { format!("{}", (c * 1e3) as i64) } else { format!("{c:e}") };
            let d = if i % 5 == 0 { String::new() } else { format!("{}", 1e16 * b) };
            format!("{a},{b:e},{c},{d}\n")
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut orders = vec![rows.clone(), rows.iter().rev().cloned().collect()];
    let mut shuffled = rows.clone();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    orders.push(shuffled);
    let files: Vec<String> = orders
        .iter()
        .enumerate()
        .map(|(k, rows)| {
            write(dir.path(), &format!("{k}.csv"), format!("a,b,c,d\n{}", rows.concat()).as_bytes())
        })
        .collect();
    for form in STATS_FORMS {
        let one = ok(&[form, &["-j", "1", &files[0]]].concat());
        if form.len() == 1 {
            assert!(String::from_utf8_lossy(&one).contains("Float"), "{one:?}");
        }
        for f in &files {
            for j in [
                &["-j", "1"][..],
                &["-j", "2"],
                &["-j", "3", "--chunk-size", "64K"],
                &["-j", "7", "--chunk-size", "16K"],
            ] {
                let args = [form, j, &[f.as_str()]].concat();
                assert_eq!(
                    String::from_utf8_lossy(&ok(&args)),
                    String::from_utf8_lossy(&one),
                    "{args:?}"
                );
            }
        }
    }
}

/// `stats` of the cases that rounding, overflow and underflow make hard,
/// on every thread count: `1e16, 1, -1e16` (a float sum loses the 1),
/// subnormals, `+-1.7e308` (their sum and their squares overflow a
/// float), and `-0.0`.
#[test]
fn stats_of_hard_floats_are_exact() {
    let mut v = b"cancel,tiny,big,negzero\n".to_vec();
    let n = 3000;
    for i in 0..n {
        let cancel = ["1e16", "1", "-1e16"][i % 3];
        let tiny = ["5e-324", "1e-310", "2.5e-320"][i % 3];
        let big = if i < n / 2 { "1.7e308" } else { "-1.7e308" };
        writeln!(v, "{cancel},{tiny},{big},-0.0").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "hard.csv", &v);
    let one = ok(&["stats", "-j", "1", &f]);
    let text = String::from_utf8(one.clone()).unwrap();
    let cells: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // field, type, sum, min, max, min_length, max_length, mean, stddev
    let pick = |row: &[&str]| (row[1].to_string(), row[2].to_string(), row[7].to_string());
    assert_eq!(pick(&cells[0]), ("Float".into(), "1000".into(), (1.0f64 / 3.0).to_string()));
    // The subnormals' exact sum and mean (in units of the smallest,
    // 5e-324), rounded once.
    let num = |c: &str| c.parse::<f64>().unwrap();
    let ulps = 1000 * (1 + 1e-310f64.to_bits() + 2.5e-320f64.to_bits());
    assert_eq!(num(cells[1][2]), ulps as f64 * 5e-324, "{text}");
    assert_eq!(num(cells[1][7]), ((ulps + 1500) / 3000) as f64 * 5e-324, "{text}");
    assert_eq!(pick(&cells[2]), ("Float".into(), "0".into(), "0".into()), "{text}");
    assert_eq!(num(cells[2][8]), 1.7e308, "{text}");
    assert_eq!(cells[3][2..], ["0", "-0", "-0", "4", "4", "0", "0"], "{text}");
    for j in
        [&["-j", "2"][..], &["-j", "3", "--chunk-size", "4K"], &["-j", "7", "--chunk-size", "4K"]]
    {
        let args = [&["stats"][..], j, &[f.as_str()]].concat();
        assert_eq!(String::from_utf8(ok(&args)).unwrap(), text, "{args:?}");
    }
}
