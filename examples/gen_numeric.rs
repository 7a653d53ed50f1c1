//! Writes a seeded, reproducible CSV of mostly numeric data for
//! measurements (never committed: generate it where you need it).
//!
//! ```text
//! cargo run --release --example gen_numeric -- OUT SIZE [SEED]
//! cargo run --release --example gen_numeric -- /tmp/numeric-1g.csv 1G 42
//! ```
//!
//! SIZE takes the suffixes K, M, G (binary). The file has a header
//! `id,int,float,small,text,flag` and rows like
//! `12,-4081,3.14159,7,item 12,1`; every 64th text field is quoted and holds a
//! comma and a doubled quote, so the slow paths of the parser are exercised
//! too. The same SEED always gives the same bytes; rows are written whole,
//! so the file ends at the first row boundary at or after SIZE.

use std::io::{BufWriter, Write};

/// xorshift64*: tiny, seeded, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_numeric OUT SIZE [SEED]");
        std::process::exit(2);
    }
    let size = fastcsv::bench::parse_size(&args[2]).unwrap_or_else(|e| {
        eprintln!("gen_numeric: {e}");
        std::process::exit(2)
    }) as u64;
    let seed: u64 = args.get(3).map_or(42, |s| s.parse().expect("SEED is a number"));
    let file = std::fs::File::create(&args[1]).expect("cannot create OUT");
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut rng = Rng(seed.max(1));
    let mut written = 0u64;
    let mut line = Vec::with_capacity(128);
    line.extend_from_slice(b"id,int,float,small,text,flag\n");
    let mut id = 0u64;
    while written < size {
        w.write_all(&line).expect("write failed");
        written += line.len() as u64;
        line.clear();
        let r = rng.next();
        let int = (r >> 8) as i64 % 1_000_000 - 500_000;
        let frac = rng.next() % 1_000_000;
        let small = r % 100;
        let _ = if id % 64 == 63 {
            writeln!(
                line,
                "{id},{int},{}.{frac:06},{small},\"item {id}, \"\"x\"\"\",{}",
                int / 7,
                r & 1
            )
        } else {
            writeln!(line, "{id},{int},{}.{frac:06},{small},item {id},{}", int / 7, r & 1)
        };
        id += 1;
    }
    w.flush().expect("write failed");
    eprintln!("gen_numeric: {} bytes, {id} rows (header included), seed {seed}", written);
}
