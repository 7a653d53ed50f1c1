//! Prints every row of a file as one JSON array per line (strings decoded
//! as UTF-8 with replacement), then `{"error": ..., "line": N}` if parsing
//! stopped. Used by `tests/python/oracle_check.py` to compare the Rust
//! engine with CPython's `csv` module without building the extension.
//!
//! Usage: dump_rows FILE [delimiter quote|none escape|none doublequote(0|1)
//! skipinitialspace(0|1) strict(0|1)]

fn json(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let byte = |i: usize, def: Option<u8>| -> Option<u8> {
        match args.get(i).map(String::as_str) {
            None => def,
            Some("none") => None,
            Some(s) => Some(s.as_bytes()[0]),
        }
    };
    let flag = |i: usize, def: bool| args.get(i).map_or(def, |s| s == "1");
    let d = fastcsv::Dialect::builder()
        .delimiter(byte(2, Some(b',')).unwrap())
        .quote(byte(3, Some(b'"')))
        .escape(byte(4, None))
        .double_quote(flag(5, true))
        .skip_initial_space(flag(6, false))
        .strict(flag(7, false))
        .headers(false)
        .flexible(true)
        .strip_bom(false)
        .build()
        .unwrap();
    let mut rdr = fastcsv::Reader::builder().dialect(d).from_path(&args[1]).unwrap();
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let f: Vec<String> =
                    row.iter().map(|b| json(&String::from_utf8_lossy(b))).collect();
                println!("[{}]", f.join(","));
            }
            Ok(None) => break,
            Err(e) => {
                println!("{{\"error\": {}, \"line\": {}}}", json(&e.message()), rdr.line());
                break;
            }
        }
    }
}
