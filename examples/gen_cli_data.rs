//! Writes a large, seeded CSV for timing the command-line tool.
//!
//! Usage: `cargo run --release --example gen_cli_data -- OUT.csv [MiB] [SEED]`
//! (default 1024 MiB, seed 42). The same size and seed give the same bytes.
//!
//! Columns: `id,user,email,city,amount,score,created,comment`. About one
//! row in eight quotes a field holding a comma, one in sixty-four a doubled
//! quote, and one in five hundred a line break inside quotes, as exports
//! from spreadsheets and databases do.

use std::fs::File;
use std::io::{BufWriter, Write};

/// xorshift64*: small, fast and good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const FIRST: &[&str] = &[
    "ann", "bob", "chloé", "dmitri", "eve", "fatima", "georg", "hana", "ivan", "jun", "kofi",
    "lena", "mateo", "nadia", "oskar", "priya",
];
const CITIES: &[&str] = &[
    "Paris",
    "Oslo",
    "São Paulo",
    "Lagos",
    "Tokyo",
    "Zürich",
    "Austin",
    "Kraków",
    "Lima",
    "Mumbai",
    "Cairo",
    "Seoul",
];
const WORDS: &[&str] = &[
    "late", "delivery", "refund", "great", "service", "box", "damaged", "thanks", "again", "order",
    "missing", "item", "fast", "slow", "ok",
];

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: gen_cli_data OUT.csv [MiB] [SEED]");
        std::process::exit(2);
    };
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(42);
    let target = mib << 20;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut written = 0u64;
    let mut line = Vec::with_capacity(512);
    line.extend_from_slice(b"id,user,email,city,amount,score,created,comment\n");
    let mut id = 0u64;
    while written < target {
        out.write_all(&line)?;
        written += line.len() as u64;
        line.clear();
        id += 1;
        let user = rng.pick(FIRST);
        let n = rng.below(10_000);
        write!(line, "{id},{user}{n},{user}.{n}@example.com,")?;
        let city = rng.pick(CITIES);
        if rng.below(8) == 0 {
            write!(line, "\"{city}, {}\",", rng.pick(CITIES))?;
        } else {
            write!(line, "{city},")?;
        }
        let cents = rng.below(1_000_000);
        write!(line, "{}.{:02},{},", cents / 100, cents % 100, rng.below(101))?;
        let day = rng.below(28) + 1;
        let month = rng.below(12) + 1;
        write!(line, "2024-{month:02}-{day:02}T{:02}:{:02}:00Z,", rng.below(24), rng.below(60))?;
        match rng.below(500) {
            0 => write!(line, "\"{}\n{}\"", rng.pick(WORDS), rng.pick(WORDS))?,
            1..=7 => write!(line, "\"said \"\"{}\"\" twice\"", rng.pick(WORDS))?,
            8..=99 => {}
            _ => {
                let words = rng.below(6) + 1;
                for w in 0..words {
                    if w > 0 {
                        line.push(b' ');
                    }
                    line.extend_from_slice(rng.pick(WORDS).as_bytes());
                }
            }
        }
        line.push(b'\n');
    }
    out.flush()?;
    eprintln!("{path}: {written} bytes, {} records", id.saturating_sub(1));
    Ok(())
}
