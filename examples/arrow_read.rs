//! Reads a file into typed Arrow columns on one thread, as Python's
//! `fastcsv.read_arrow(path, types=...)` does with `threads=1`, and prints
//! the rows and the rate: a target for `perf record`, `/usr/bin/time` and
//! `valgrind --tool=cachegrind` when measuring the typed path.
//!
//! ```text
//! cargo run --release --example arrow_read -- FILE [MODE] [REPS]
//! ```
//!
//! MODE is `infer` (the default: types from every value, as
//! `types="infer"` reads a file), `hold` (the same, holding every batch's
//! text first, as `types="infer"` reads a stream), `sample` (types from
//! the first 65,536 rows, as `infer_rows=65536`) or `text` (every column
//! `utf8`).

use std::time::Instant;

use fastcsv::arrow::{Columns, InferredColumns, Spellings};
use fastcsv::Reader;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: arrow_read FILE [infer|sample|text] [REPS]");
        std::process::exit(2);
    };
    let mode = args.get(2).map_or("infer", String::as_str);
    let reps: usize = args.get(3).map_or(1, |s| s.parse().expect("REPS is a number"));
    let len = std::fs::metadata(path).expect("input file").len();
    for _ in 0..reps {
        let t = Instant::now();
        let open = || Columns::new(Reader::from_path(path).expect("open")).expect("header");
        let (rows, values) = match mode {
            "infer" => {
                let sp = Spellings::default();
                let mut c = InferredColumns::read_again(open(), || Ok(open()), &sp, 1, false)
                    .expect("read");
                drain(|| c.next_batch().expect("batch"))
            }
            "hold" => {
                let sp = Spellings::default();
                let mut c = InferredColumns::read(open(), &sp, 1, false).expect("read");
                drain(|| c.next_batch().expect("batch"))
            }
            "sample" => {
                let mut c = open();
                c.infer_types(65_536).expect("infer");
                drain(|| c.next_batch().expect("batch"))
            }
            "text" => {
                let mut c = open();
                drain(|| c.next_batch().expect("batch"))
            }
            other => panic!("unknown mode {other}"),
        };
        let s = t.elapsed().as_secs_f64();
        println!("{rows} rows, {values} values: {:.0} MB/s", len as f64 / s / 1e6);
    }
}

/// Rows and values of every batch `next` gives.
fn drain(mut next: impl FnMut() -> Option<fastcsv::arrow::ColumnBatch>) -> (usize, usize) {
    let (mut rows, mut values) = (0, 0);
    while let Some(b) = next() {
        rows += b.rows();
        values += b.columns().iter().map(|c| c.len()).sum::<usize>();
    }
    (rows, values)
}
