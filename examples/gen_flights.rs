//! Seeded generator of a flights-like CSV file (the shape of the airline
//! on-time data sets): 19 columns of small integers, floats with `NA`
//! nulls, short carrier, tail and airport codes, and timestamps. The same
//! arguments always give the same bytes.
//!
//! Usage: `cargo run --release --example gen_flights -- SIZE OUT [SEED]`
//!
//! `SIZE` is a byte count with an optional `K`, `M` or `G` suffix (powers
//! of 1024); rows are written until the file reaches at least `SIZE`.
//! `OUT` is the file to write. See `docs/BENCHMARKS.md ("Round 2")`.

use std::io::{self, BufWriter, Write};

/// xorshift64*: no dependencies, fully determined by the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
}

const CARRIERS: &[&str] = &["AA", "DL", "UA", "WN", "B6", "AS", "NK", "F9", "HA", "OO"];
const AIRPORTS: &[&str] = &[
    "ATL", "LAX", "ORD", "DFW", "DEN", "JFK", "SFO", "SEA", "LAS", "MCO", "EWR", "CLT", "PHX",
    "IAH", "MIA", "BOS", "MSP", "DTW", "FLL", "PHL",
];

fn parse_size(s: &str) -> Option<u64> {
    let (num, mul) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(size), Some(out)) = (args.first().and_then(|s| parse_size(s)), args.get(1)) else {
        eprintln!("usage: gen_flights SIZE OUT [SEED]");
        std::process::exit(2);
    };
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0x5EED);
    let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1);
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let header = "year,month,day,day_of_week,dep_time,crs_dep_time,arr_time,carrier,\
                  flight_num,tail_num,elapsed,air_time,arr_delay,dep_delay,origin,dest,\
                  distance,cancelled,scheduled\n";
    w.write_all(header.as_bytes())?;
    let mut written = header.len() as u64;
    let mut rows = 0u64;
    let mut line = String::with_capacity(256);
    while written < size {
        use std::fmt::Write as _;
        line.clear();
        let (month, day) = (1 + rng.below(12), 1 + rng.below(28));
        let crs = 500 + rng.below(1800);
        let cancelled = rng.chance(2);
        let na =
            |rng: &mut Rng, v: String| if cancelled || rng.chance(1) { "NA".into() } else { v };
        let v = (crs + rng.below(60)).to_string();
        let dep = na(&mut rng, v);
        let v = ((crs + 100 + rng.below(400)) % 2400).to_string();
        let arr = na(&mut rng, v);
        let v = format!("{}.0", 40 + rng.below(400));
        let elapsed = na(&mut rng, v);
        let v = format!("{}.0", 30 + rng.below(380));
        let air = na(&mut rng, v);
        let v = format!("{:.1}", rng.below(2000) as f64 / 10.0 - 30.0);
        let arr_delay = na(&mut rng, v);
        let v = format!("{:.1}", rng.below(1800) as f64 / 10.0 - 20.0);
        let dep_delay = na(&mut rng, v);
        let _ = writeln!(
            line,
            "2024,{month},{day},{},{dep},{crs},{arr},{},{},N{}{}{},{elapsed},{air},{arr_delay},\
             {dep_delay},{},{},{},{},2024-{month:02}-{day:02} {:02}:{:02}:00",
            1 + rng.below(7),
            CARRIERS[rng.below(CARRIERS.len() as u64) as usize],
            1 + rng.below(7000),
            100 + rng.below(900),
            (b'A' + rng.below(26) as u8) as char,
            (b'A' + rng.below(26) as u8) as char,
            AIRPORTS[rng.below(AIRPORTS.len() as u64) as usize],
            AIRPORTS[rng.below(AIRPORTS.len() as u64) as usize],
            100 + rng.below(2600),
            u8::from(cancelled),
            crs / 100 % 24,
            crs % 60,
        );
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        rows += 1;
    }
    w.flush()?;
    eprintln!("records={} bytes={written}", rows + 1);
    Ok(())
}
