//! The verbs that write records again as CSV (`fmt`, `input`,
//! `fixlengths`, `cat columns`, `split`, `partition`) copy the input's
//! bytes where they already are the output's and write field by field
//! elsewhere: each is checked here against the `csv` crate's writer (the
//! writer xsv uses) on generated input that mixes records copied whole,
//! records needing quotes added or dropped, CRLF and CR line ends, quoted
//! delimiters and line ends, records longer than a batch, and ragged rows.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

/// Field values: plain ones, and ones holding the delimiters, quotes, CR
/// or LF.
const VALUES: &[&str] = &[
    "",
    "a",
    "12.5",
    "x y",
    "a,b",
    "a;b",
    "say \"hi\"",
    "two\nlines",
    "cr\rx",
    "\u{e9}t\u{e9}",
    "\"",
    "tab\there",
    "7",
    "-3",
    "plain text",
];

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `records` records of `width` fields (of 1 to `width` with `ragged`)
/// after a header row `c0,c1,...`: values from `VALUES` (sometimes a long
/// one), quoted when they must be and sometimes when they need not be,
/// with LF, CRLF or CR line ends.
fn generate(seed: u64, records: usize, width: usize, ragged: bool) -> Vec<u8> {
    let mut rng = Rng(seed);
    let header: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
    let mut out = header.join(",").into_bytes();
    out.push(b'\n');
    for r in 0..records {
        let n = if ragged { 1 + rng.next(width) } else { width };
        for j in 0..n {
            if j > 0 {
                out.push(b',');
            }
            let mut v = VALUES[rng.next(VALUES.len())].to_string();
            if r % 997 == 5 && j == 0 {
                // Longer than a batch's bytes.
                v = "long ".repeat(60_000);
            }
            // A record of one empty field must be quoted.
            let needs = v.contains([',', '"', '\r', '\n']) || (n == 1 && v.is_empty());
            if needs || rng.next(5) == 0 {
                out.push(b'"');
                out.extend_from_slice(v.replace('"', "\"\"").as_bytes());
                out.push(b'"');
            } else {
                out.extend_from_slice(v.as_bytes());
            }
        }
        // A lone CR before a record starting with LF would read as CRLF.
        out.extend_from_slice(
            [&b"\n"[..], b"\r\n", b"\r"][if r % 50 == 7 { 1 + rng.next(2) } else { 0 }],
        );
    }
    out
}

/// Every record of `input` (the header row too), as the `csv` crate reads
/// it with delimiter `d`.
fn records(input: &[u8], d: u8) -> Vec<csv::ByteRecord> {
    let mut r =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).delimiter(d).from_reader(input);
    r.byte_records().map(Result::unwrap).collect()
}

/// `records` written by the `csv` crate's writer as `w` sets it up.
fn write(records: &[csv::ByteRecord], w: &csv::WriterBuilder) -> Vec<u8> {
    let mut w = w.from_writer(Vec::new());
    for r in records {
        w.write_byte_record(r).unwrap();
    }
    w.into_inner().unwrap()
}

fn writer() -> csv::WriterBuilder {
    let mut w = csv::WriterBuilder::new();
    w.flexible(true);
    w
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("the binary runs")
}

/// Asserts success; standard output.
fn ok(args: &[&str]) -> Vec<u8> {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    assert_eq!(err, "", "{args:?}");
    o.stdout
}

/// Asserts that `got` is `want`, showing the first difference.
fn same(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at =
            got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        let show = |s: &[u8]| {
            String::from_utf8_lossy(&s[at.saturating_sub(40)..(at + 40).min(s.len())]).into_owned()
        };
        panic!("{what}: differs at byte {at}: got {:?}, want {:?}", show(got), show(want));
    }
}

fn write_file(dir: &Path, name: &str, data: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p.display().to_string()
}

#[test]
fn fmt_and_input_write_what_the_csv_crate_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(1, 5000, 5, false);
    let f = write_file(dir.path(), "g.csv", &data);
    let recs = records(&data, b',');
    // The same delimiter: records copied whole, quotes dropped, added.
    same(&ok(&["fmt", &f]), &write(&recs, &writer()), "fmt");
    same(&ok(&["input", &f]), &write(&recs, &writer()), "input");
    // Other delimiters: records without quotes copied with the delimiter
    // replaced, unless a field holds the new one.
    for t in [b';', b'\t', b' ', b'a'] {
        let mut w = writer();
        w.delimiter(t);
        let arg = (t as char).to_string();
        same(&ok(&["fmt", "-t", &arg, &f]), &write(&recs, &w), &format!("fmt -t {arg:?}"));
    }
    let mut w = writer();
    w.terminator(csv::Terminator::CRLF);
    same(&ok(&["fmt", "--crlf", &f]), &write(&recs, &w), "fmt --crlf");
    let mut w = writer();
    w.delimiter(0x1f).terminator(csv::Terminator::Any(0x1e));
    same(&ok(&["fmt", "--ascii", &f]), &write(&recs, &w), "fmt --ascii");
    let mut w = writer();
    w.quote_style(csv::QuoteStyle::Always);
    same(&ok(&["fmt", "--quote-always", &f]), &write(&recs, &w), "fmt --quote-always");
    let mut w = writer();
    w.quote(b'\'');
    same(&ok(&["fmt", "--quote", "'", &f]), &write(&recs, &w), "fmt --quote");
    let mut w = writer();
    w.escape(b'\\').double_quote(false);
    same(&ok(&["fmt", "--escape", "\\", &f]), &write(&recs, &w), "fmt --escape");
    // Another input delimiter, written with commas.
    let mut w = writer();
    w.delimiter(b';');
    let semi = write(&recs, &w);
    let s = write_file(dir.path(), "s.csv", &semi);
    same(&ok(&["fmt", "-d", ";", &s]), &write(&recs, &writer()), "fmt -d ';'");
    same(&ok(&["input", "-d", ";", &s]), &write(&recs, &writer()), "input -d ';'");
}

#[test]
fn fixlengths_pads_and_cuts_as_the_csv_crate_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(2, 4000, 6, true);
    let f = write_file(dir.path(), "r.csv", &data);
    let recs = records(&data, b',');
    // The length of the longest record without its trailing empty fields.
    let longest = recs
        .iter()
        .map(|r| r.iter().rposition(|f| !f.is_empty()).map_or(1, |i| i + 1))
        .max()
        .unwrap();
    for (args, n) in
        [(vec![], longest), (vec!["-l", "2"], 2), (vec!["-l", "8"], 8), (vec!["-l", "1"], 1)]
    {
        let fixed: Vec<csv::ByteRecord> =
            recs.iter().map(|r| (0..n).map(|i| r.get(i).unwrap_or_default()).collect()).collect();
        let args = [&["fixlengths"][..], &args, &[f.as_str()]].concat();
        same(&ok(&args), &write(&fixed, &writer()), &format!("{args:?}"));
    }
}

#[test]
fn cat_columns_joins_as_the_csv_crate_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (generate(3, 3000, 3, false), generate(4, 2000, 2, false));
    let (fa, fb) = (write_file(dir.path(), "a.csv", &a), write_file(dir.path(), "b.csv", &b));
    let (ra, rb) = (records(&a, b','), records(&b, b','));
    let join = |pad: bool| -> Vec<csv::ByteRecord> {
        let n = if pad { ra.len().max(rb.len()) } else { ra.len().min(rb.len()) };
        (0..n)
            .map(|i| {
                let x = ra.get(i).map_or(vec![&b""[..]; 3], |r| r.iter().collect());
                let y = rb.get(i).map_or(vec![&b""[..]; 2], |r| r.iter().collect());
                x.into_iter().chain(y).collect()
            })
            .collect()
    };
    same(&ok(&["cat", "columns", &fa, &fb]), &write(&join(false), &writer()), "cat columns");
    same(&ok(&["cat", "columns", "--pad", &fa, &fb]), &write(&join(true), &writer()), "--pad");
}

#[test]
fn split_writes_the_records_as_the_csv_crate_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(5, 3000, 4, false);
    let f = write_file(dir.path(), "g.csv", &data);
    let recs = records(&data, b',');
    for size in ["7", "1000", "1024", "5000"] {
        let out = dir.path().join(format!("s{size}"));
        ok(&["split", "-s", size, &out.display().to_string(), &f]);
        let n: usize = size.parse().unwrap();
        for (k, chunk) in recs[1..].chunks(n).enumerate() {
            let got = std::fs::read(out.join(format!("{}.csv", k * n))).unwrap();
            let want = write(&[&recs[..1], chunk].concat(), &writer());
            same(&got, &want, &format!("split -s {size}, file {k}"));
        }
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), (recs.len() - 1).div_ceil(n));
    }
    // Files named *.tsv are tab-separated: records copied with the
    // delimiter replaced, or quoted where a field holds a tab.
    let out = dir.path().join("tabs");
    ok(&["split", "-s", "1000", "--filename", "{}.tsv", &out.display().to_string(), &f]);
    let mut tabs = writer();
    tabs.delimiter(b'\t');
    for (k, chunk) in recs[1..].chunks(1000).enumerate() {
        let got = std::fs::read(out.join(format!("{}.tsv", k * 1000))).unwrap();
        same(&got, &write(&[&recs[..1], chunk].concat(), &tabs), &format!("split .tsv, file {k}"));
    }
    // Equal chunks: all records, in order, each file with the header row.
    let out = dir.path().join("chunks");
    ok(&["split", "--chunks", "3", &out.display().to_string(), &f]);
    let mut starts: Vec<usize> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".csv").parse().unwrap())
        .collect();
    starts.sort();
    starts.push(recs.len() - 1);
    for w in starts.windows(2) {
        let got = std::fs::read(out.join(format!("{}.csv", w[0]))).unwrap();
        let want = write(&[&recs[..1], &recs[1 + w[0]..1 + w[1]]].concat(), &writer());
        same(&got, &want, &format!("split --chunks, file {}", w[0]));
    }
}

#[test]
fn partition_writes_the_records_as_the_csv_crate_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = generate(6, 3000, 3, false);
    // Keys in the last column: the same value quoted or not, and one with
    // a quote inside.
    let mut rng = Rng(9);
    let mut keyed = Vec::new();
    for (i, line) in records(&data, b',').iter().enumerate() {
        let key = ["k1", "\"k1\"", "k 2", "\"k\"\"3\"", "\"\""][rng.next(5)];
        let key = if i == 0 { "key" } else { key };
        let mut r: Vec<Vec<u8>> = line.iter().map(<[u8]>::to_vec).collect();
        r.push(key.as_bytes().to_vec());
        keyed.push(r);
    }
    // Written by hand so that the keys keep their quoting.
    data.clear();
    for (i, r) in keyed.iter().enumerate() {
        let mut line = write(&[r[..3].iter().collect()], &writer());
        line.pop();
        data.extend_from_slice(&line);
        data.push(b',');
        data.extend_from_slice(&r[3]);
        data.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
    }
    let f = write_file(dir.path(), "p.csv", &data);
    let recs = records(&data, b',');
    for drop in [false, true] {
        let out = dir.path().join(format!("p{drop}"));
        let mut args = vec!["partition", "key", out.to_str().unwrap(), &f];
        if drop {
            args.insert(1, "--drop");
        }
        ok(&args);
        for (key, name) in [(&b"k1"[..], "k1"), (b"k 2", "k2"), (b"k\"3", "k3"), (b"", "empty")] {
            let keep = |r: &csv::ByteRecord| -> csv::ByteRecord {
                r.iter().take(if drop { 3 } else { 4 }).collect()
            };
            let mine: Vec<csv::ByteRecord> =
                recs[1..].iter().filter(|r| &r[3] == key).map(keep).collect();
            let want = write(&[vec![keep(&recs[0])], mine].concat(), &writer());
            let got = std::fs::read(out.join(format!("{name}.csv"))).unwrap();
            same(&got, &want, &format!("partition, drop {drop}, {name}"));
        }
    }
}

#[test]
fn partition_files_named_tsv_are_tab_separated() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"k,v\ntsv,\"a\tb\"\ncsv,\"a,b\"\ntsv,x y\ncsv,\"q\"\n";
    let f = write_file(dir.path(), "k.csv", data);
    let out = dir.path().join("o");
    let o = out.display().to_string();
    // The extension is the value's: each file as its name says.
    ok(&["partition", "--filename", "p.{}", "k", &o, &f]);
    let got = |name: &str| String::from_utf8(std::fs::read(out.join(name)).unwrap()).unwrap();
    assert_eq!(got("p.tsv"), "k\tv\ntsv\t\"a\tb\"\ntsv\tx y\n");
    assert_eq!(got("p.csv"), "k,v\ncsv,\"a,b\"\ncsv,q\n");
    // A fixed extension: every file tab-separated, from the copied records.
    ok(&["partition", "--filename", "{}.tsv", "k", &o, &f]);
    assert_eq!(got("tsv.tsv"), "k\tv\ntsv\t\"a\tb\"\ntsv\tx y\n");
    assert_eq!(got("csv.tsv"), "k\tv\ncsv\ta,b\ncsv\tq\n");
}

#[test]
fn a_full_disk_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write_file(dir.path(), "g.csv", &generate(7, 20_000, 4, false));
    for args in [
        &["fmt", f.as_str()][..],
        &["fmt", "-t", ";", &f],
        &["input", &f],
        &["fixlengths", &f],
        &["cat", "columns", &f, &f],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN).args(args).stdout(full).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err, "fastcsv: write error: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}
