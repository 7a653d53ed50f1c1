//! `cat --to jsonl|tsv`, `table` and `flatten` on inputs large enough for
//! their fast paths (records copied from the scanner's delimiter offsets,
//! text aligned in chunks), against oracles: the `csv` crate's parse and
//! `serde_json`'s for JSON lines, `select`'s field-by-field writer, and the
//! widths worked out here for `table` and `flatten`.
#![cfg(feature = "cli")]

use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).stdin(Stdio::null()).output().unwrap()
}

fn ok(args: &[&str]) -> Vec<u8> {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// A seeded generator (xorshift), so that each run writes the same file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// A field: mostly plain ASCII of 0 to 40 bytes, sometimes with bytes JSON
/// or TSV escape, non-ASCII text or a quote, a comma or a line end (then
/// quoted in the file).
fn field(rng: &mut Rng, special: bool) -> String {
    let len = [0, 1, 3, 7, 8, 15, 16, 17, 31, 40][rng.below(10)];
    let mut s: String = (0..len).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
    if special && rng.below(8) == 0 {
        let odd = [
            "\"", "\\", "\t", "\u{1}", "\u{1f}", "\u{7f}", "\u{e9}", "\u{540d}", ",", "\n", "\r\n",
            "\u{8}",
        ];
        s.insert_str(s.len() / 2, odd[rng.below(odd.len() as u64)]);
    }
    s
}

fn quote(f: &str) -> String {
    if f.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// A CSV file of `records` records of `width` fields (with `ragged`, some
/// have fewer or more), its header row `names`.
fn csv_file(names: &[&str], records: usize, ragged: bool, special: bool, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut text = names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(",");
    text.push('\n');
    for _ in 0..records {
        let mut n = names.len();
        if ragged && rng.below(5) == 0 {
            n = 1 + rng.below(names.len() as u64 + 2);
        }
        let fields: Vec<String> = (0..n).map(|_| quote(&field(&mut rng, special))).collect();
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    text
}

fn temp(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Keys that need escaping (a quote, a backslash, a TAB), a non-ASCII key
/// and a key longer than 16 bytes.
const NAMES: [&str; 6] =
    ["id", "na\"me", "back\\slash", "t\tab", "\u{e9}t\u{e9}", "a_key_longer_than_sixteen_bytes"];

#[test]
fn jsonl_records_are_the_csv_records() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (ragged, special)) in
        [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate()
    {
        let text = csv_file(&NAMES, 3000, ragged, special, 7 + k as u64);
        let f = temp(&dir, &format!("f{k}.csv"), &text);
        let mut want: Vec<Vec<String>> = Vec::new();
        let mut rdr = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(false)
            .from_reader(text.as_bytes());
        for r in rdr.records() {
            want.push(r.unwrap().iter().map(str::to_string).collect());
        }
        let (names, records) = want.split_first().unwrap();
        for jobs in ["1", "2"] {
            let mut flex = vec!["cat", "-j", jobs, "--to", "jsonl", &f];
            if ragged {
                flex.push("--flexible");
            }
            let out = String::from_utf8(ok(&flex)).unwrap();
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), records.len());
            for (line, rec) in lines.iter().zip(records) {
                let v: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(line).unwrap();
                assert_eq!(v.len(), rec.len(), "{line}");
                for (i, value) in rec.iter().enumerate() {
                    // Fields past the header are keyed by their column number.
                    let key = names.get(i).cloned().unwrap_or_else(|| (i + 1).to_string());
                    assert_eq!(v[&key], serde_json::Value::String(value.clone()), "{line}");
                }
            }
            if !ragged {
                // Byte for byte as `select` writes them, field by field.
                assert_eq!(out.as_bytes(), ok(&["select", "-j", jobs, "1-", "--to", "jsonl", &f]));
                assert_eq!(
                    ok(&["cat", "-j", jobs, "--to", "tsv", &f]),
                    ok(&["select", "-j", jobs, "1-", "--to", "tsv", &f])
                );
            }
            // Arrays, the header row a record.
            let mut arrays = flex.clone();
            arrays.push("-n");
            let out = String::from_utf8(ok(&arrays)).unwrap();
            for (line, rec) in out.lines().zip(&want) {
                let v: Vec<String> = serde_json::from_str(line).unwrap();
                assert_eq!(&v, rec);
            }
        }
    }
}

#[test]
fn tsv_records_are_the_csv_records_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let text = csv_file(&NAMES, 3000, true, true, 3);
    let f = temp(&dir, "t.csv", &text);
    let mut want = Vec::new();
    let mut rdr =
        csv::ReaderBuilder::new().flexible(true).has_headers(false).from_reader(text.as_bytes());
    for r in rdr.records() {
        let esc: Vec<String> = r
            .unwrap()
            .iter()
            .map(|v| {
                v.replace('\\', "\\\\")
                    .replace('\t', "\\t")
                    .replace('\n', "\\n")
                    .replace('\r', "\\r")
            })
            .collect();
        want.extend_from_slice(esc.join("\t").as_bytes());
        want.push(b'\n');
    }
    for jobs in ["1", "2"] {
        let out = ok(&["cat", "-j", jobs, "--to", "tsv", "--flexible", &f]);
        assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want));
    }
    // A TAB-separated input: records copied as they are.
    let tsv = temp(&dir, "t.tsv", "a\tb\n1\t2\n\t\n");
    assert_eq!(ok(&["cat", "-j", "1", "--to", "tsv", &tsv]), b"a\tb\n1\t2\n\t\n");
    assert_eq!(
        ok(&["cat", "-j", "1", "--to", "jsonl", &tsv]),
        b"{\"a\":\"1\",\"b\":\"2\"}\n{\"a\":\"\",\"b\":\"\"}\n"
    );
}

/// Plain ASCII records all of one width: `table` pads each column to its
/// widest field (at least 2) and 2 spaces, over the whole file (well past
/// the aligner's chunks).
#[test]
fn table_of_a_large_file_aligns_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["id", "name", "a_long_header_name", "x"];
    let text = csv_file(&names, 20_000, false, false, 11);
    let f = temp(&dir, "big.csv", &text);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let widths: Vec<usize> =
        (0..names.len()).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap().max(2)).collect();
    let mut want = String::new();
    for r in &rows {
        for (c, v) in r.iter().enumerate() {
            want.push_str(v);
            if c + 1 < r.len() {
                want.push_str(&" ".repeat(widths[c] - v.len() + 2));
            }
        }
        want.push('\n');
    }
    assert!(want.len() > 1 << 20);
    assert_eq!(String::from_utf8(ok(&["table", &f])).unwrap(), want);
}

/// `flatten` of many records: each field `name  value` with the names
/// padded to the longest, a `#` line between records.
#[test]
fn flatten_of_a_large_file() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["id", "name", "a_long_header_name", "x"];
    let text = csv_file(&names, 20_000, false, false, 13);
    let f = temp(&dir, "big.csv", &text);
    let mut want = String::new();
    for (k, line) in text.lines().skip(1).enumerate() {
        if k > 0 {
            want.push_str("#\n");
        }
        for (n, v) in names.iter().zip(line.split(',')) {
            want.push_str(&format!("{n:<20}{v}\n"));
        }
    }
    assert_eq!(String::from_utf8(ok(&["flatten", &f])).unwrap(), want);
}

#[cfg(target_os = "linux")]
#[test]
fn write_errors_fail_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp(&dir, "big.csv", &csv_file(&NAMES, 5000, false, false, 5));
    for args in [
        vec!["cat", "-j", "1", "--to", "jsonl", &f],
        vec!["cat", "--to", "jsonl", &f],
        vec!["cat", "-j", "1", "--to", "tsv", &f],
        vec!["table", &f],
        vec!["flatten", &f],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN).args(&args).stdout(full).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "fastcsv: write error: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

/// A record with non-ASCII text is written whole when it is valid UTF-8;
/// one that is not fails with the column and byte of the first invalid
/// byte, after the records before it.
#[test]
fn jsonl_refuses_invalid_utf8_in_a_non_ascii_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = b"a,b,c\n".to_vec();
    for i in 0..2000 {
        text.extend_from_slice(format!("{i},\u{e9}t\u{e9},\u{540d}\n").as_bytes());
    }
    let good = text.clone();
    text.extend_from_slice(b"\xc3\xa9,x,ab\xff\n4,5,6\n");
    let (g, b) = (dir.path().join("good.csv"), dir.path().join("bad.csv"));
    std::fs::write(&g, &good).unwrap();
    std::fs::write(&b, &text).unwrap();
    let (g, b) = (g.display().to_string(), b.display().to_string());
    let out = ok(&["cat", "-j", "1", "--to", "jsonl", &g]);
    assert_eq!(out, ok(&["select", "-j", "1", "1-", "--to", "jsonl", &g]));
    assert!(String::from_utf8(out.clone())
        .unwrap()
        .ends_with("{\"a\":\"1999\",\"b\":\"\u{e9}t\u{e9}\",\"c\":\"\u{540d}\"}\n"));
    for jobs in ["1", "2"] {
        let o = run(&["cat", "-j", jobs, "--to", "jsonl", &b]);
        assert_eq!(o.status.code(), Some(1));
        // The header row is record 0.
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "fastcsv: {b}:2002: record 2001, byte {}: invalid UTF-8 in column 3 (byte 2 \
                 of the field); JSON output needs UTF-8\n",
                good.len()
            )
        );
        assert!(out.starts_with(&o.stdout));
    }
}
