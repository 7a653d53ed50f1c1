//! What a careful xsv user finds when trying the command line on tricky
//! small inputs: each test is a difference from xsv 0.13 (or a silent
//! failure) that was a wrong answer, with xsv's output as the expectation
//! (xsv is not needed to run these tests).

mod cli_support;

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

/// A fresh directory under the target directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_audit").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `data` to `NAME` in the test's directory and returns its path.
fn file(dir: &std::path::Path, name: &str, data: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p.to_str().unwrap().to_owned()
}

/// Runs `fastcsv ARGS` with `stdin` as standard input.
fn run_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    cli_support::feed(cmd, stdin)
}

/// Asserts success with nothing on standard error; returns standard output.
fn ok(args: &[&str]) -> Vec<u8> {
    let o = run_with(args, b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    assert_eq!(err, "", "{args:?}");
    o.stdout
}

/// The lines of `out`, sorted (xsv leaves frequency's ties in no set order).
fn sorted_lines(out: &[u8]) -> Vec<Vec<u8>> {
    let mut l: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    l.sort();
    l
}

/// `xsv frequency` counts a UTF-8 value trimmed of white space (Unicode's:
/// tab, vertical tab, form feed, no-break space, ...), so a field of
/// spaces is `(NULL)`; a value that is not UTF-8 is counted as it is.
#[test]
fn frequency_trims_values_as_xsv() {
    let d = scratch("frequency_trims");
    let f = file(
        &d,
        "ws.csv",
        b"a,b\n sp ,1\nsp,2\n   ,3\n\xc2\xa0x,4\nx,5\n \xff ,6\n\t\x0bv\x0c,7\nv,8\n",
    );
    for jobs in ["1", "2"] {
        let out = ok(&["frequency", "-s", "a", "-j", jobs, &f]);
        // What xsv 0.13 writes, lines sorted.
        let want = b"field,value,count\na,sp,2\na,v,2\na,x,2\na,(NULL),1\na, \xff ,1\n";
        assert_eq!(sorted_lines(&out), sorted_lines(want), "-j {jobs}");
        let out = ok(&["frequency", "-s", "a", "--no-nulls", "-j", jobs, &f]);
        let want = b"field,value,count\na,sp,2\na,v,2\na,x,2\na, \xff ,1\n";
        assert_eq!(sorted_lines(&out), sorted_lines(want), "--no-nulls -j {jobs}");
    }
    // Standard input, and without a header row.
    let data = std::fs::read(&f).unwrap();
    let o = run_with(&["frequency", "-n", "-s", "1", "-"], &data);
    assert_eq!(o.status.code(), Some(0));
    let want = b"field,value,count\n1,sp,2\n1,v,2\n1,x,2\n1,(NULL),1\n1, \xff ,1\n1,a,1\n";
    assert_eq!(sorted_lines(&o.stdout), sorted_lines(want));
}

/// xsv's `frequency` takes `-a` for `--asc` and `-o FILE`; an `-o` file
/// named `*.tsv` is tab-separated, as in xsv, for `frequency`, `stats`,
/// `fixlengths`, `input` and `cat columns` as for the other commands.
#[test]
fn frequency_short_asc_and_output_file() {
    let d = scratch("frequency_output");
    let f = file(&d, "in.csv", b"k,v\n\"a\tb\",1\n\"c,d\",1\nx,2\nx,2\n");
    let out = ok(&["frequency", "-s", "k", "-a", "-l", "1", &f]);
    assert_eq!(out, b"field,value,count\nk,a\tb,1\n");
    let csv = d.join("f.csv");
    assert!(ok(&["frequency", "-s", "k", "-o", csv.to_str().unwrap(), &f]).is_empty());
    let want: &[u8] = b"field,value,count\nk,x,2\nk,a\tb,1\nk,\"c,d\",1\n";
    assert_eq!(std::fs::read(&csv).unwrap(), want);
    let tsv = d.join("f.tsv");
    assert!(ok(&["frequency", "-s", "k", "-o", tsv.to_str().unwrap(), &f]).is_empty());
    let want: &[u8] = b"field\tvalue\tcount\nk\tx\t2\nk\t\"a\tb\"\t1\nk\tc,d\t1\n";
    assert_eq!(std::fs::read(&tsv).unwrap(), want);
    // Every write checked, and the input is not overwritten.
    let o = run_with(&["frequency", "-o", "/dev/full", &f], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/dev/full"));
    let o = run_with(&["frequency", "-o", &f, &f], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is also an input"));
}

/// What xsv 0.13 writes to `-o out.tsv` for these commands.
#[test]
fn tsv_output_file_gets_tabs() {
    let d = scratch("tsv_output");
    let f = file(&d, "in.csv", b"k,v\n\"a\tb\",1\n\"c,d\",\n");
    let o = d.join("o.tsv");
    let o = o.to_str().unwrap();
    let cases: [(&[&str], &[u8]); 5] = [
        (
            &["stats", "-o", o, &f],
            b"field\ttype\tsum\tmin\tmax\tmin_length\tmax_length\tmean\tstddev\n\
              k\tUnicode\t\t\"a\tb\"\tc,d\t3\t3\t\t\n\
              v\tInteger\t1\t1\t1\t0\t1\t1\t0\n",
        ),
        (&["fixlengths", "-o", o, &f], b"k\tv\n\"a\tb\"\t1\nc,d\t\n"),
        (&["input", "-o", o, &f], b"k\tv\n\"a\tb\"\t1\nc,d\t\n"),
        (
            &["cat", "columns", "-o", o, &f, &f],
            b"k\tv\tk\tv\n\"a\tb\"\t1\t\"a\tb\"\t1\nc,d\t\tc,d\t\n",
        ),
        (&["frequency", "-s", "v", "-o", o, &f], b"field\tvalue\tcount\nv\t(NULL)\t1\nv\t1\t1\n"),
    ];
    for (args, want) in cases {
        assert!(ok(args).is_empty(), "{args:?}");
        let got = std::fs::read(o).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want), "{args:?}");
    }
}
