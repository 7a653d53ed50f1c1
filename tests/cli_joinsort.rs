//! `join` with its hash table on either side, `sort`'s radix sort and
//! external merge, `sample`'s one pass over a mapped file: the outputs are
//! xsv's (committed in `tests/joinsort/expected`, made by `gen.sh`) or
//! those of the other way of computing them.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("joinsort")
}

/// Runs fastcsv in `dir` with `env` set and `stdin` fed.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cli_support::feed(cmd, stdin)
}

fn ok(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Vec<u8> {
    let o = run(dir, args, env, stdin);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?} {env:?}: {err}");
    assert_eq!(err, "", "{args:?}");
    o.stdout
}

const LEADING: (&str, &str) = ("FASTCSV_TEST_JOIN_BUILD", "leading");
const MATCHING: (&str, &str) = ("FASTCSV_TEST_JOIN_BUILD", "matching");

/// Every case of `cases.tsv`, with the table on each side (and the side
/// chosen by size), spilled or not: xsv's bytes each time.
#[test]
fn join_is_xsv_whichever_side_holds_the_table() {
    let dir = data_dir();
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut n = 0;
    for line in cases.lines() {
        let (name, args) = line.split_once('\t').unwrap();
        let want = std::fs::read(dir.join("expected").join(format!("{name}.out"))).unwrap();
        let args: Vec<&str> = std::iter::once("join").chain(args.split(' ')).collect();
        let mut spilled = args.clone();
        spilled.insert(1, "--memory");
        spilled.insert(2, "1");
        for env in [&[][..], &[LEADING], &[MATCHING]] {
            for a in [&args, &spilled] {
                let got = ok(&dir, a, env, b"");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{name}: {a:?} {env:?}"
                );
                n += 1;
            }
        }
    }
    assert_eq!(n, 17 * 6);
}

/// Standard input as FILE1 or FILE2, with the table on either side.
#[test]
fn join_reads_stdin_on_either_side() {
    let dir = data_dir();
    let s = std::fs::read(dir.join("s.csv")).unwrap();
    let t = std::fs::read(dir.join("t.csv")).unwrap();
    for kind in ["--full", "--left", "--right", "--cross", "--no-case"] {
        let want = ok(&dir, &["join", kind, "city", "t.csv", "city", "s.csv"], &[], b"");
        for env in [LEADING, MATCHING] {
            let a = ["join", kind, "city", "-", "city", "s.csv"];
            assert_eq!(ok(&dir, &a, &[env], &t), want, "{a:?} {env:?}");
            let a = ["join", kind, "city", "t.csv", "city", "-"];
            assert_eq!(ok(&dir, &a, &[env], &s), want, "{a:?} {env:?}");
        }
    }
}

/// A generated pair: many records, repeated keys, quoted fields, keys
/// that differ only in case or around spaces, empty keys.
fn big_pair(dir: &Path) -> (String, String) {
    let mut a = String::from("id,key,note\n");
    let mut b = String::from("key,val\n");
    for i in 0..3000u32 {
        let k = match i % 7 {
            0 => format!("k{}", i % 50),
            1 => format!(" K{} ", i % 50),
            2 => String::new(),
            _ => format!("k{}", i % 400),
        };
        a.push_str(&format!("{i},{k},\"n,{i}\"\n"));
    }
    for i in 0..200u32 {
        let k = if i % 9 == 0 { String::new() } else { format!("k{}", i % 120) };
        b.push_str(&format!("{k},\"v\"\"{i}\"\n"));
    }
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    (pa.display().to_string(), pb.display().to_string())
}

/// Every kind of join on larger inputs: the same bytes whichever side
/// holds the table, in memory or spilled to a temporary file.
#[test]
fn join_sides_agree_on_generated_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (a, b) = big_pair(dir);
    let kinds: [&[&str]; 7] = [
        &[],
        &["--left"],
        &["--right"],
        &["--full"],
        &["--no-case"],
        &["--nulls"],
        &["--nulls", "--full", "--no-case"],
    ];
    for kind in kinds {
        for (f1, f2) in [(&a, &b), (&b, &a)] {
            let mut args = vec!["join"];
            args.extend_from_slice(kind);
            args.extend_from_slice(&["key", f1, "key", f2]);
            let want = ok(dir, &args, &[MATCHING], b"");
            assert!(want.len() > 100, "{args:?}");
            assert_eq!(ok(dir, &args, &[LEADING], b""), want, "{args:?}");
            let mut spilled = args.clone();
            spilled.splice(1..1, ["--memory", "4K", "--tmp-dir", "."]);
            assert_eq!(ok(dir, &spilled, &[LEADING], b""), want, "{spilled:?}");
            assert_eq!(ok(dir, &args, &[], b""), want, "{args:?}");
        }
    }
    // Nothing is left in the temporary directory.
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert_eq!(left.len(), 2);
}

/// A spill into a directory that is not there: one line, exit 1.
#[test]
fn join_spill_errors_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (a, b) = big_pair(dir);
    let args = ["join", "--memory", "1K", "--tmp-dir", "nowhere", "key", &b, "key", &a];
    let o = run(dir, &args, &[LEADING], b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fastcsv: nowhere: cannot create a temporary file"), "{err}");
    // A size that is not one: a usage error.
    let o = run(dir, &["join", "--memory", "12X", "key", &b, "key", &a], &[], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown unit"));
}

/// JSON output names the input and record of a field that is not UTF-8,
/// whichever side holds the table.
#[test]
fn join_json_errors_name_the_right_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("x.csv"), b"k,v\na,1\n").unwrap();
    std::fs::write(dir.join("y.csv"), b"k,w\nb,2\na,\xff\nc,3\n").unwrap();
    for env in [LEADING, MATCHING] {
        let o = run(dir, &["join", "k", "x.csv", "k", "y.csv", "--to", "jsonl"], &[env], b"");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("y.csv:3: record 2, byte 8: invalid UTF-8 in column 2"), "{err}");
    }
}

/// Rows with keys sharing long prefixes, NUL bytes, quoted fields; the
/// expected order computed here (stable, by fields as bytes).
fn sort_input() -> (String, Vec<(Vec<String>, String)>) {
    let mut text = String::from("k,j,n\n");
    let mut rows = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..5000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = (x >> 33) as usize;
        let k = match r % 6 {
            0 => format!("item {}", r % 3000),
            1 => format!("a-very-long-common-prefix-{}", r % 40),
            2 => String::new(),
            3 => format!("{}", r % 10),
            4 => format!("q,{}", r % 5),
            _ => "a-very-long-common-prefix-".to_string(),
        };
        let j = format!("{}", r % 3);
        let quoted = |f: &str| {
            if f.contains(',') {
                format!("\"{f}\"")
            } else {
                f.to_string()
            }
        };
        let line = format!("{},{},{i}\n", quoted(&k), quoted(&j));
        text.push_str(&line);
        rows.push((vec![k, j], line));
    }
    (text, rows)
}

#[test]
fn sort_orders_as_a_stable_sort_by_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (text, rows) = sort_input();
    std::fs::write(dir.join("in.csv"), &text).unwrap();
    for (sel, reverse) in [("k", false), ("k", true), ("k,j", false), ("j,k", true)] {
        let cols: Vec<usize> = sel.split(',').map(|c| if c == "k" { 0 } else { 1 }).collect();
        let mut want = rows.clone();
        want.sort_by(|a, b| {
            let ka: Vec<&[u8]> = cols.iter().map(|&c| a.0[c].as_bytes()).collect();
            let kb: Vec<&[u8]> = cols.iter().map(|&c| b.0[c].as_bytes()).collect();
            let o = ka.cmp(&kb);
            if reverse {
                o.reverse()
            } else {
                o
            }
        });
        let want: String =
            std::iter::once("k,j,n\n").chain(want.iter().map(|r| r.1.as_str())).collect();
        let mut base = vec!["sort", "-s", sel];
        if reverse {
            base.push("-R");
        }
        for extra in [&["-j", "1"][..], &["-j", "4"], &["--memory", "64K", "--tmp-dir", "."]] {
            let mut args = base.clone();
            args.extend_from_slice(extra);
            args.push("in.csv");
            let got = ok(dir, &args, &[], b"");
            assert_eq!(String::from_utf8_lossy(&got), want, "{args:?}");
        }
    }
    // Keys with NUL bytes: "a" < "a\0" < "a\x01".
    std::fs::write(dir.join("z.csv"), b"k\na\x01\na\0\na\n").unwrap();
    assert_eq!(ok(dir, &["sort", "z.csv"], &[], b""), b"k\na\na\0\na\x01\n");
    // A record of one empty quoted field stays quoted; other quotes go.
    std::fs::write(dir.join("e.csv"), b"k\n\"b\"\n\"\"\n\"a\"\"\"\n").unwrap();
    assert_eq!(ok(dir, &["sort", "e.csv"], &[], b""), b"k\n\"\"\n\"a\"\"\"\nb\n");
}

/// A mapped file and the same bytes on a pipe draw the same records for
/// the same seed (the first pass keeps the bytes of records without
/// quotes and reads the others again at the end).
#[test]
fn sample_mapped_is_sample_streamed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut text = String::from("a,b\n");
    for i in 0..20_000 {
        if i % 3 == 0 {
            text.push_str(&format!("\"q,{i}\",\"x\"\"y\"\n"));
        } else {
            text.push_str(&format!("{i},plain\n"));
        }
    }
    std::fs::write(dir.join("s.csv"), &text).unwrap();
    for n in ["1", "50", "30000"] {
        for seed in ["1", "2"] {
            let mapped = ok(dir, &["sample", "--seed", seed, n, "s.csv"], &[], b"");
            let piped = ok(dir, &["sample", "--seed", seed, n], &[], text.as_bytes());
            assert_eq!(mapped, piped, "sample {n} --seed {seed}");
            let want_lines = n.parse::<usize>().unwrap().min(20_000) + 1;
            assert_eq!(mapped.iter().filter(|&&b| b == b'\n').count(), want_lines);
        }
    }
}
