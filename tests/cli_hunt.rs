//! End-to-end tests of the CLI fault hunt: wrong answers with exit status
//! 0 found by trying each verb on awkward input, each checked against a
//! straightforward computation.

mod cli_support;

use std::io::Write;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

/// Runs `fastcsv ARGS` with `stdin` as standard input.
fn run_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    cli_support::feed(cmd, stdin)
}

/// Asserts success with nothing on standard error; returns standard
/// output as text.
fn ok_with(args: &[&str], stdin: &[u8]) -> String {
    let o = run_with(args, stdin);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    assert_eq!(err, "", "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// The cells of `stats`' default output, by column name then statistic.
fn stats_cells(out: &str) -> Vec<Vec<(String, String)>> {
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| head.iter().map(|h| h.to_string()).zip(l.split(',').map(String::from)).collect())
        .collect()
}

fn cell(row: &[(String, String)], name: &str) -> f64 {
    let v = &row.iter().find(|(h, _)| h == name).unwrap().1;
    v.parse().unwrap_or_else(|_| panic!("{name} = {v:?}"))
}

/// The population mean and deviation of `v` in two passes about the
/// first value, in units of `2^e` (so that neither the differences nor
/// their squares leave the range of `f64`).
fn mean_and_stddev(v: &[f64], e: i32) -> (f64, f64) {
    let unit = 2f64.powi(e);
    let s: Vec<f64> = v.iter().map(|&x| x / unit - v[0] / unit).collect();
    let n = v.len() as f64;
    let mean = s.iter().sum::<f64>() / n;
    let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (v[0] + mean * unit, var.sqrt() * unit)
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * want.abs()
}

/// `stats` on values 1e-301 apart (squares of differences underflow to 0)
/// and 1e308 apart (they overflow): the deviation was 0 for both, and the
/// mean of the second `inf` (its sum overflows), with exit status 0. The
/// same on one thread and on several.
#[test]
fn stats_deviation_of_tiny_and_huge_spreads() {
    let tiny: Vec<f64> = (0..3000).map(|i| f64::from(i % 7 + 1) * 1e-301).collect();
    let huge: Vec<f64> = (0..3000).map(|i| if i % 3 == 0 { -1e308 } else { 1e308 }).collect();
    let mut data = b"tiny,huge\n".to_vec();
    for (t, h) in tiny.iter().zip(&huge) {
        writeln!(data, "{t:e},{h:e}").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spread.csv");
    std::fs::write(&p, &data).unwrap();
    let p = p.display().to_string();
    let (tm, ts) = mean_and_stddev(&tiny, -990);
    let (hm, hs) = mean_and_stddev(&huge, 1000);
    assert!(ts > 1e-302 && hs > 1e307);
    for args in [
        vec!["stats", "-"],
        vec!["stats", "-j", "1", &p],
        vec!["stats", "-j", "3", "--chunk-size", "4K", &p],
    ] {
        let out = ok_with(&args, &data);
        let rows = stats_cells(&out);
        assert!(close(cell(&rows[0], "mean"), tm), "{args:?}: {out}");
        assert!(close(cell(&rows[0], "stddev"), ts), "{args:?}: {out}");
        assert!(close(cell(&rows[1], "mean"), hm), "{args:?}: {out}");
        assert!(close(cell(&rows[1], "stddev"), hs), "{args:?}: {out}");
    }
}

/// A column holding `inf` or `NaN` has no finite deviation: `NaN`, where
/// the deviation was 0.
#[test]
fn stats_deviation_with_inf_or_nan_is_nan() {
    for (values, mean) in [("1\ninf\n2\n", "inf"), ("NaN\n1\n2\n", "NaN"), ("1e400\n1\n", "inf")] {
        let out = ok_with(&["stats", "-"], format!("x\n{values}").as_bytes());
        let rows = stats_cells(&out);
        let get = |n: &str| rows[0].iter().find(|(h, _)| h == n).unwrap().1.clone();
        assert_eq!((get("mean").as_str(), get("stddev").as_str()), (mean, "NaN"), "{values:?}");
    }
}

/// The median and quartiles of values near the largest `f64`: the middle
/// two were added before halving, which overflowed to `inf`.
#[test]
fn stats_median_of_huge_values_does_not_overflow() {
    let out = ok_with(&["stats", "--everything", "-"], b"x\n1e308\n1.5e308\n-1e308\n-1.5e308\n");
    let rows = stats_cells(&out);
    assert_eq!(cell(&rows[0], "median"), 0.0, "{out}");
    assert_eq!(cell(&rows[0], "q1"), -1.25e308, "{out}");
    assert_eq!(cell(&rows[0], "q3"), 1.25e308, "{out}");
    let out = ok_with(&["stats", "--median", "-"], b"x\n1.7e308\n1.7e308\n");
    assert_eq!(cell(&stats_cells(&out)[0], "median"), 1.7e308, "{out}");
}

/// `fmt` with output bytes that collide (`-t '"'`, `--quote ,`,
/// `--escape ,`, a delimiter that is a line end) wrote CSV that cannot be
/// read back, and exited 0: a usage error now, with nothing written.
#[test]
fn fmt_refuses_output_bytes_that_collide() {
    let data = b"a,b\n\"x,y\",\"q\"\"\"\n";
    for (args, needle) in [
        (&["fmt", "-t", "\""][..], "delimiter and quote are both `\"`"),
        (&["fmt", "--quote", ","], "delimiter and quote are both `,`"),
        (&["fmt", "--escape", ","], "delimiter and escape are both `,`"),
        (&["fmt", "-t", ";", "--escape", ";"], "delimiter and escape are both `;`"),
        (&["fmt", "-t", "\\x0a"], "delimiter cannot be LF"),
        (&["fmt", "--quote", "\\x0d"], "quote cannot be CR"),
        (&["fmt", "--ascii", "--quote", "\\x1e"], "quote cannot be \\x1E"),
    ] {
        let o = run_with(args, data);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // An escape equal to the quote is the usual doubling.
    assert_eq!(ok_with(&["fmt", "--escape", "\"", "-"], data), "a,b\n\"x,y\",\"q\"\"\"\n");
}

/// `fmt --escape E` left `E` itself unescaped inside quotes (the csv
/// crate's writer does), so that reading the output back with the same
/// escape dropped it: `c\d` came back `cd`. Every field now reads back as
/// it was, on one thread and on several.
#[test]
fn fmt_escape_output_reads_back() {
    let data = b"a,b\n\"q\"\"x\",c\\d\n\"x\\\\\"\"y\",plain\n";
    for esc in ["\\", "x"] {
        for jobs in ["1", "3"] {
            let out = ok_with(&["fmt", "--escape", esc, "-j", jobs, "-"], data);
            let again = ok_with(
                &["select", "1-2", "--escape", esc, "--no-doublequote", "-"],
                out.as_bytes(),
            );
            assert_eq!(again, ok_with(&["select", "1-2", "-"], data), "--escape {esc}: {out}");
        }
    }
}

/// `partition COL DIR DIR/in.csv` with a value `in`, and `split DIR
/// DIR/0.csv`, opened the input as one of their files: it was truncated
/// while it was read (the input lost, then "file changed while reading").
/// The input is now refused as an output file before it is touched.
#[test]
fn partition_and_split_never_truncate_their_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = b"k,v\n".to_vec();
    for i in 0..50_000 {
        writeln!(data, "{},{i}", if i % 2 == 0 { "other" } else { "in" }).unwrap();
    }
    let d = dir.path().display().to_string();
    for (name, args) in [
        ("in.csv", vec!["partition", "k", &d]),
        ("0.csv", vec!["split", "-s", "1000", &d]),
        ("0.csv", vec!["split", "--chunks", "2", &d]),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, &data).unwrap();
        let input = input.display().to_string();
        let args: Vec<&str> = args.iter().copied().chain([input.as_str()]).collect();
        let o = run_with(&args, b"");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("is also the input"), "{args:?}: {err}");
        assert_eq!(std::fs::read(&input).unwrap(), data, "{args:?}: the input changed");
    }
}

/// `stats --flexible` named a column past the header row's with an empty
/// field, so that its statistics belonged to no name; it is named by its
/// number, as `stats --csv` and `frequency` name it.
#[test]
fn stats_names_columns_past_the_header_row() {
    let data = b"a,b\n1,2\n3,4,5\n";
    let out = ok_with(&["stats", "--flexible", "-"], data);
    let names: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(names, ["a", "b", "3"], "{out}");
    let freq = ok_with(&["frequency", "--flexible", "-"], data);
    assert!(freq.contains("\n3,5,1\n"), "{freq}");
}

/// `flatten --flexible` left out the fields of a record past the header
/// row's width, with exit status 0: they are written, named by their
/// index from 0.
#[test]
fn flatten_keeps_fields_past_the_header_row() {
    let out = ok_with(&["flatten", "--flexible", "-"], b"a,b\n1,2,3,4\n5\n");
    assert_eq!(out, "a   1\nb   2\n2   3\n3   4\n#\na   5\n", "{out}");
}

/// Integers whose squares add up past 128 bits (values near 2^62): the
/// deviation came from floating-point moments, whose last digits depend
/// on the chunks (`-j 1` and `-j 3` disagreed), where docs/cli.md says an
/// integer column's statistics are the same on any number of threads.
#[test]
fn stats_of_huge_integers_are_the_same_on_several_threads() {
    let mut data = b"a\n".to_vec();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        // A xorshift sequence: values spread over +-2^62.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        writeln!(data, "{}", (x >> 1) as i64 - (1 << 62)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ints.csv");
    std::fs::write(&p, &data).unwrap();
    let p = p.display().to_string();
    let one = ok_with(&["stats", "--everything", "-j", "1", &p], b"");
    for chunk in ["4K", "16K"] {
        let many = ok_with(&["stats", "--everything", "-j", "3", "--chunk-size", chunk, &p], b"");
        assert_eq!(many, one, "--chunk-size {chunk}");
    }
    assert_eq!(ok_with(&["stats", "--everything", "-"], &data), one);
}

/// `table -w`/`-p` past what a line can hold: 2^64 - 1 wrapped the padding
/// to nothing (columns run together, exit 0), 2^63 panicked on a capacity
/// overflow. Both are usage errors now; sizes of 0 name no buffer they do
/// not set.
#[test]
fn table_widths_and_sizes_are_checked() {
    let data = b"a,b\n1,2\n";
    for args in [
        &["table", "-w", "18446744073709551615", "-"][..],
        &["table", "-w", "9223372036854775808", "-"],
        &["table", "-p", "65537", "-"],
    ] {
        let o = run_with(args, data);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("at most 65536") && !err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(ok_with(&["table", "-w", "3", "-p", "1", "-"], data), "a   b\n1   2\n");
    for args in [&["sort", "--memory", "0", "-"][..], &["count", "--chunk-size", "0", "-"]] {
        let o = run_with(args, data);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("a size must be at least 1 byte"), "{args:?}: {err}");
    }
}

/// `partition --drop` of a file's only column wrote each file as an empty
/// header line and `""` records: read back, the empty line is no record,
/// the first `""` became the header and a record was lost (exit 0). A
/// usage error now, before any file is made.
#[test]
fn partition_drop_of_the_only_column_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("parts");
    let d = out.display().to_string();
    for args in
        [&["partition", "--drop", "k", &d, "-"][..], &["partition", "--drop", "-n", "1", &d, "-"]]
    {
        let o = run_with(args, b"k\na\nb\na\n");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--drop would leave no column"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
    ok_with(&["partition", "--drop", "k", &d, "-"], b"k,v\na,1\nb,2\na,3\n");
    assert_eq!(std::fs::read_to_string(out.join("a.csv")).unwrap(), "v\n1\n3\n");
}

/// `-o` naming a pipe whose reader goes away (`-o /dev/stdout | head`,
/// `-o >(head)`) failed with "write error: /dev/stdout: Broken pipe" and
/// exit 1, where the same pipe as standard output ends quietly with exit
/// 0 (as xsv ends on every broken pipe).
#[test]
fn output_file_that_is_a_closed_pipe_ends_quietly() {
    let mut data = b"a,b\n".to_vec();
    for i in 0..200_000 {
        writeln!(data, "{i},{}", i * 7).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in.csv");
    std::fs::write(&p, &data).unwrap();
    let p = p.display().to_string();
    for args in [&["select", "2,1"][..], &["sort", "-s", "2"], &["fmt", "-t", ";"]] {
        let mut cmd = Command::new(BIN);
        cmd.args(args).args([p.as_str(), "-o", "/dev/stdout"]);
        let o = cli_support::close_after(cmd, 16);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}
