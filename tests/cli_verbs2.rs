//! End-to-end tests of `table`, `fmt`, `flatten`, `fixlengths`, `input`,
//! `cat columns` and `stats`' default output: each case of
//! `tests/verbs2/cases.tsv` against the output xsv 0.13.0 gave for it
//! (`tests/verbs2/expected/`, written by `tests/verbs2/gen.py`; xsv is not
//! needed to run these tests), then bad input, usage errors, a full disk
//! and a closed pipe for every verb.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("verbs2")
}

/// Runs `fastcsv ARGS` in `tests/verbs2` with `stdin` as standard input.
fn run_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(data_dir());
    cli_support::feed(cmd, stdin)
}

fn run(args: &[&str]) -> Output {
    run_with(args, b"")
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

/// Asserts exit status `code` and one `fastcsv: ` line on standard error
/// containing `needle`.
fn fails(args: &[&str], code: i32, needle: &str) -> String {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
    if code == 1 {
        assert!(err.starts_with("fastcsv: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    err
}

/// The cases: a name and the arguments (`\t` and `\\` escaped).
fn cases() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(data_dir().join("cases.tsv")).unwrap();
    let unescape = |a: &str| a.replace("\\t", "\t").replace("\\\\", "\\");
    text.lines()
        .map(|l| {
            let mut it = l.split('\t');
            let name = it.next().unwrap().to_string();
            (name, it.map(unescape).collect())
        })
        .collect()
}

/// Whether `a` and `b` are the same number to 12 significant digits.
fn close(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
        _ => false,
    }
}

/// `stats`: equal cells, except that the mean and standard deviation
/// (fastcsv's are exact, xsv's running ones drift in the last digits) and
/// a sum of floats (added in another order) need only be close.
fn same_stats(name: &str, got: &[u8], want: &[u8]) {
    let read = |b: &[u8]| -> Vec<Vec<String>> {
        let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(b);
        r.records().map(|r| r.unwrap().iter().map(String::from).collect()).collect()
    };
    let (got, want) = (read(got), read(want));
    assert_eq!(got.len(), want.len(), "{name}");
    assert_eq!(got[0], want[0], "{name}");
    for (g, w) in got.iter().zip(&want).skip(1) {
        assert_eq!(g.len(), w.len(), "{name}");
        for ((h, a), b) in want[0].iter().zip(g).zip(w) {
            let loose = matches!(h.as_str(), "mean" | "stddev") || (h == "sum" && w[1] == "Float");
            assert!(a == b || (loose && close(a, b)), "{name}: {h}: {a} != xsv's {b}");
        }
    }
}

/// `stats` output without the quartiles that fastcsv's `--everything`
/// appends after xsv's columns (`q1,q3`: numbers or empty, never quoted),
/// the rest byte for byte; any other output as it is.
fn without_quartiles(out: &[u8]) -> Vec<u8> {
    let header = out.split(|&b| b == b'\n').next().unwrap_or_default();
    if !header.ends_with(b",q1,q3") {
        return out.to_vec();
    }
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(out);
    let mut starts = Vec::new();
    let mut rec = csv::ByteRecord::new();
    while r.read_byte_record(&mut rec).unwrap() {
        assert!(rec.len() >= 3);
        starts.push(rec.position().unwrap().byte() as usize);
    }
    starts.push(out.len());
    let mut v = Vec::new();
    for w in starts.windows(2) {
        let body = out[w[0]..w[1]].strip_suffix(b"\n").unwrap();
        let last = body.iter().rposition(|&b| b == b',').unwrap();
        let cut = body[..last].iter().rposition(|&b| b == b',').unwrap();
        v.extend_from_slice(&body[..cut]);
        v.push(b'\n');
    }
    v
}

#[test]
fn outputs_match_xsv() {
    let cases = cases();
    assert!(cases.len() >= 40);
    for (name, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = ok(&args);
        let want = std::fs::read(data_dir().join("expected").join(format!("{name}.out"))).unwrap();
        if args[0] == "stats" {
            same_stats(&name, &without_quartiles(&got), &want);
        } else {
            assert!(
                got == want,
                "{name}: {args:?}\n got: {:?}\nwant: {:?}",
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        }
    }
}

/// Cases where fastcsv's output is exactly xsv's, stats included: no
/// float arithmetic.
#[test]
fn stats_of_integers_and_text_are_xsvs_byte_for_byte() {
    for name in ["stats_b", "stats_b_everything", "stats_e", "stats_bad_utf8", "stats_w"] {
        let (_, args) = cases().into_iter().find(|(n, _)| n == name).unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = std::fs::read(data_dir().join("expected").join(format!("{name}.out"))).unwrap();
        assert_eq!(without_quartiles(&ok(&args)), want, "{name}");
    }
}

#[test]
fn stats_mode_median_and_types() {
    let o = run_with(&["stats", "--everything"], b"a,b,c\n1,x,\n2,x,\n2,y,\n3,,\n");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "field,type,sum,min,max,min_length,max_length,mean,stddev,median,mode,cardinality,q1,q3\n\
         a,Integer,8,1,3,1,1,2,0.7071067811865476,2,2,3,1.5,2.5\n\
         b,Unicode,,x,y,0,1,,,,x,3,,\n\
         c,NULL,,,,0,0,,,,,1,,\n"
    );
    // The quartiles: medians of the lower and upper halves of the numbers
    // (the middle one in neither), empty values ignored.
    let o = run_with(&["stats", "--everything"], b"i,f\n5,0.5\n1,\n4,2.25\n2,-1\n3,10\n");
    let out = String::from_utf8(o.stdout).unwrap();
    let tail = |l: &str| l.rsplitn(3, ',').take(2).map(String::from).collect::<Vec<_>>();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(tail(lines[1]), ["4.5", "1.5"], "{out}");
    assert_eq!(tail(lines[2]), ["6.125", "-0.25"], "{out}");
    // Only --everything adds them.
    let o = run_with(&["stats", "--median"], b"a\n1\n");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "field,type,sum,min,max,min_length,max_length,mean,stddev,median\n\
         a,Integer,1,1,1,1,1,1,0,1\n"
    );
    // Ties have no mode under xsv's rule; a float turns integers to Float.
    let o = run_with(&["stats", "--mode", "--median"], b"a\n1\n2.5\n");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "field,type,sum,min,max,min_length,max_length,mean,stddev,median,mode\n\
         a,Float,3.5,1,2.5,1,3,1.75,0.75,1.75,N/A\n"
    );
    // --nulls: the empty values count as zeros.
    let o = run_with(&["stats", "--nulls"], b"a,b\n4,x\n,y\n1,z\n");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "field,type,sum,min,max,min_length,max_length,mean,stddev\n\
         a,Integer,5,1,4,0,1,1.6666666666666667,1.699673171197595\n\
         b,Unicode,,x,z,1,1,,\n"
    );
    // The old formats stay behind their flags.
    let o = run_with(&["stats", "--table"], b"a\n4\n");
    assert!(String::from_utf8(o.stdout).unwrap().starts_with("#  column  non-empty"));
}

/// Every statistic of integers and text is the same on one thread and on
/// several; those of floats agree to 12 significant digits.
#[test]
fn stats_everything_is_the_same_on_several_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = b"i,f,t\n".to_vec();
    for k in 0..30_000u64 {
        data.extend_from_slice(format!("{},{}.5,w{}\n", k % 977, k % 13, k % 101).as_bytes());
    }
    let p = dir.path().join("n.csv");
    std::fs::write(&p, &data).unwrap();
    let p = p.display().to_string();
    let one = ok(&["stats", "--everything", "-j", "1", &p]);
    let many = ok(&["stats", "--everything", "-j", "3", "--chunk-size", "8K", &p]);
    // Integers and text: the same bytes (integer sums are exact).
    let (one, many) = (String::from_utf8(one).unwrap(), String::from_utf8(many).unwrap());
    let lines = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    let (a, b) = (lines(&one), lines(&many));
    assert_eq!([&a[..2], &a[3..]].concat(), [&b[..2], &b[3..]].concat());
    // Floats are added in another grouping: the same to 12 digits.
    same_stats("floats", many.as_bytes(), one.as_bytes());
}

#[test]
fn standard_input_and_output_file() {
    let data = std::fs::read(data_dir().join("a.csv")).unwrap();
    let want = std::fs::read(data_dir().join("expected").join("fmt_t.out")).unwrap();
    let o = run_with(&["fmt", "-t", ";"], &data);
    assert_eq!(o.stdout, want);
    let want = std::fs::read(data_dir().join("expected").join("table.out")).unwrap();
    assert_eq!(run_with(&["table", "-"], &data).stdout, want);
    let dir = tempfile::tempdir().unwrap();
    for (verb, expected) in [
        (&["table"][..], "table"),
        (&["fmt", "--crlf"][..], "fmt_crlf"),
        (&["flatten"][..], "flatten"),
        (&["input"][..], "input_plain"),
        (&["stats", "--everything"][..], "stats_a_everything"),
    ] {
        let out = dir.path().join(format!("{expected}.txt")).display().to_string();
        let file = if expected == "input_plain" { "w.csv" } else { "a.csv" };
        let args = [verb, &[file, "-o", &out]].concat();
        assert_eq!(ok(&args), b"", "{args:?}");
        let got = std::fs::read(&out).unwrap();
        let want =
            std::fs::read(data_dir().join("expected").join(format!("{expected}.out"))).unwrap();
        if verb[0] == "stats" {
            same_stats(expected, &without_quartiles(&got), &want);
        } else {
            assert_eq!(got, want, "{args:?}");
        }
    }
    let out = dir.path().join("c.csv").display().to_string();
    ok(&["cat", "columns", "a.csv", "b.csv", "-o", &out]);
    let want = std::fs::read(data_dir().join("expected").join("cat_columns.out")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // fixlengths -l reads standard input.
    let o = run_with(&["fixlengths", "-l", "2"], b"a,b,c\n1\n");
    assert_eq!(o.stdout, b"a,b\n1,\n");
}

#[test]
fn bad_input_is_one_line_with_its_position() {
    // A ragged row (these verbs read strictly rectangular records unless
    // --flexible).
    for verb in [
        &["table"][..],
        &["fmt"],
        &["flatten"],
        &["input"],
        &["stats"],
        &["stats", "--everything"],
        &["cat", "columns"],
    ] {
        let args = [verb, &["ragged.csv"]].concat();
        let err = fails(&args, 1, "ragged.csv:2: record 1, byte 6: found record with 2 fields");
        assert!(err.ends_with("3 fields\n") || err.contains("3 fields"), "{err}");
    }
    // --flexible lets them through.
    assert!(!ok(&["table", "--flexible", "ragged.csv"]).is_empty());
    assert!(!ok(&["fmt", "--flexible", "ragged.csv"]).is_empty());
    // A missing file.
    for verb in ["table", "fmt", "flatten", "fixlengths", "input", "stats"] {
        fails(&[verb, "nope.csv"], 1, "nope.csv");
    }
    fails(&["cat", "columns", "a.csv", "nope.csv"], 1, "nope.csv");
    // An unterminated quote under --strict.
    let o = run_with(&["input", "--strict"], b"a,b\n1,\"x\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("fastcsv: <stdin>:2: record 1"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    fails(&["fixlengths", "-l", "0", "a.csv"], 2, "-l");
    fails(&["fixlengths"], 2, "standard input");
    // A pipe named by a path reads empty the second time: refused, not an
    // empty output with exit status 0 (`run` gives a pipe as stdin).
    fails(&["fixlengths", "/dev/stdin"], 2, "not standard input or a pipe");
    fails(&["cat", "--pad", "a.csv"], 2, "--pad is for `cat columns`");
    fails(&["cat", "columns", "--to", "jsonl", "a.csv"], 2, "cat columns writes CSV");
    fails(&["cat", "columns", "-", "-"], 2, "more than once");
    fails(&["stats", "--table", "--everything", "a.csv"], 2, "cannot be used with");
    fails(&["stats", "--json", "--table", "a.csv"], 2, "cannot be used with");
    fails(&["fmt", "-t", ";;", "a.csv"], 2, "expected one byte");
    fails(&["table", "-w", "x", "a.csv"], 2, "invalid value");
    fails(&["flatten", "-c", "-1", "a.csv"], 2, "");
    fails(&["table", "a.csv", "-o", "a.csv"], 1, "is also an input");
}

#[test]
fn a_full_disk_fails_every_verb() {
    for args in [
        &["table", "a.csv"][..],
        &["fmt", "a.csv"],
        &["flatten", "a.csv"],
        &["fixlengths", "ragged.csv"],
        &["input", "a.csv"],
        &["cat", "columns", "a.csv", "b.csv"],
        &["stats", "a.csv"],
        &["stats", "--everything", "a.csv"],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN).args(args).current_dir(data_dir()).stdout(full).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), "fastcsv: write error: No space left on device (os error 28)\n");
    }
}

#[test]
fn a_closed_pipe_is_a_quiet_success() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.csv");
    let mut data = b"a,b,c\n".to_vec();
    for k in 0..200_000 {
        data.extend_from_slice(format!("{k},text {k},\"q,{k}\"\n").as_bytes());
    }
    std::fs::write(&big, &data).unwrap();
    let big = big.display().to_string();
    for verb in [
        &["table"][..],
        &["fmt", "--quote-always"],
        &["flatten"],
        &["fixlengths"],
        &["input"],
        &["cat", "columns", &big],
    ] {
        let args = [verb, &[big.as_str()]].concat();
        let mut cmd = Command::new(BIN);
        cmd.args(&args);
        let o = cli_support::close_after(cmd, 16);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}
