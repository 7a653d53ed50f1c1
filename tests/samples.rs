//! Every bundled sample through every engine and source, with the row
//! counts and a few fields pinned down.

mod common;

use common::{check_every_engine, rows, scan_dialect};
use fastcsv::Dialect;

fn load(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn samples_agree_across_engines_and_sources() {
    let cases: Vec<(&str, Dialect, usize)> = vec![
        ("people.csv", scan_dialect(&mut Dialect::builder()), 6),
        ("crlf.csv", scan_dialect(&mut Dialect::builder()), 3),
        ("tab.tsv", scan_dialect(Dialect::builder().delimiter(b'\t')), 3),
        ("controls.csv", scan_dialect(&mut Dialect::builder()), 6),
        ("comments.csv", scan_dialect(Dialect::builder().delimiter(b';').comment(Some(b'#'))), 3),
        ("messy.csv", scan_dialect(&mut Dialect::builder()), 7),
    ];
    for (name, d, n) in cases {
        let data = load(name);
        let out = check_every_engine(&d, &data);
        assert_eq!(out.rows.len(), n, "{name}");
        assert!(out.error.is_none(), "{name}: {:?}", out.error);
    }
    let people = check_every_engine(&scan_dialect(&mut Dialect::builder()), &load("people.csv"));
    let r = rows(&people);
    assert_eq!(r[2][1], "Grace \"Amazing\" Hopper");
    assert_eq!(r[2][3], "Wrote the first\ncompiler");
    assert_eq!(r[4][1], "\u{674e}\u{96f7}");
}

#[test]
fn bom_is_stripped() {
    let data = load("bom.csv");
    let mut rdr = fastcsv::Reader::from_slice(&data);
    assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"col1"[..]));
}

#[test]
fn messy_sample_errors_in_strict_mode() {
    let d = Dialect::builder().strict(true).build().unwrap();
    let data = load("messy.csv");
    let mut rdr = fastcsv::Reader::builder().dialect(d).path("messy.csv").from_slice(&data);
    let mut errors = Vec::new();
    let mut ok = 0;
    loop {
        match rdr.read_row() {
            Ok(Some(_)) => ok += 1,
            Ok(None) => break,
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert_eq!(ok, 3, "{errors:?}");
    assert_eq!(
        errors,
        vec![
            "messy.csv:3: record 2, byte 24: ',' expected after '\"'",
            "messy.csv:4: record 3, byte 32: found record with 2 fields, but the previous record has 3 fields",
            "messy.csv:7: record 6, byte 75: unexpected end of data",
        ]
    );
}
