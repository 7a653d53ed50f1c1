//! Seeded generator of benchmark CSV files. The same arguments always give
//! the same bytes, so results can be compared across machines and commits.
//!
//! Usage: `cargo run --release --example gen_data -- SHAPE SIZE OUT [SEED]`
//!
//! * `SHAPE`: `numeric` (20 unquoted int/float/timestamp columns), `text`
//!   (quoted fields with commas, doubled quotes, embedded newlines and
//!   non-ASCII UTF-8) or `wide` (300 short columns).
//! * `SIZE`: a byte count with an optional `K`, `M` or `G` suffix (powers
//!   of 1024). Records are written until the file reaches at least SIZE;
//!   the last record is always complete.
//! * `OUT`: the file to write (`-` for stdout).
//!
//! Every file starts with a header row. On success the number of records
//! (header included), bytes and LF bytes is printed to stderr as
//! `records=N bytes=B newlines=L`.
//! See `benches/README.md`.

use std::io::{self, BufWriter, Write};

/// A tiny xorshift64* generator: no dependencies, fully determined by the
/// seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Avoid the all-zero state, which xorshift never leaves.
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform-ish in `0..n` (n > 0); the modulo bias is irrelevant here.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `p` percent.
    fn chance(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "data",
    "value",
    "record",
    "field",
    "report",
    "quarterly",
    "net",
    "gross",
    "total",
    "item",
];
const UNICODE_WORDS: &[&str] = &[
    "café",
    "naïve",
    "Zürich",
    "São Paulo",
    "Kraków",
    "Øresund",
    "Ελλάδα",
    "Москва",
    "東京",
    "서울",
    "₹500",
    "€12",
    "smörgåsbord",
    "jalapeño",
    "Ångström",
    "🙂",
];
const CITIES: &[&str] = &[
    "Paris",
    "Oslo",
    "Berlin",
    "Lisbon",
    "Montréal",
    "Reykjavík",
    "Köln",
    "Málaga",
    "Tromsø",
    "Zürich",
    "Łódź",
    "İstanbul",
    "Seattle",
    "Lagos",
    "Nairobi",
    "Lima",
];

/// Parses `100M`, `1G`, `64K` or a plain byte count.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// Writes `n` with `decimals` digits after the point, without going
/// through floating point (so output is identical on every platform).
fn fixed(out: &mut Vec<u8>, n: u64, decimals: u32) {
    let p = 10u64.pow(decimals);
    let _ = write!(out, "{}.{:0width$}", n / p, n % p, width = decimals as usize);
}

fn timestamp(out: &mut Vec<u8>, rng: &mut Rng) {
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        2000 + rng.below(26),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60)
    );
}

fn numeric_header(out: &mut Vec<u8>) {
    let cols: Vec<String> = (0..20)
        .map(|c| match c % 4 {
            0 => format!("int{c}"),
            1 | 2 => format!("float{c}"),
            _ => format!("ts{c}"),
        })
        .collect();
    out.extend_from_slice(cols.join(",").as_bytes());
    out.push(b'\n');
}

fn numeric_row(out: &mut Vec<u8>, rng: &mut Rng, id: u64) {
    for c in 0..20 {
        if c > 0 {
            out.push(b',');
        }
        match c % 4 {
            0 if c == 0 => {
                let _ = write!(out, "{id}");
            }
            0 => {
                let neg = if rng.chance(20) { "-" } else { "" };
                let _ = write!(out, "{neg}{}", rng.below(1_000_000));
            }
            1 | 2 => {
                if rng.chance(3) {
                    // A missing value.
                    continue;
                }
                let d = 1 + rng.below(6) as u32;
                fixed(out, rng.below(10u64.pow(d + 3)), d);
            }
            _ => timestamp(out, rng),
        }
    }
    out.push(b'\n');
}

const TEXT_COLS: &[&str] =
    &["id", "name", "city", "description", "amount", "tags", "note", "updated"];

fn text_header(out: &mut Vec<u8>) {
    out.extend_from_slice(TEXT_COLS.join(",").as_bytes());
    out.push(b'\n');
}

/// A run of words, some non-ASCII, with punctuation.
fn sentence(out: &mut Vec<u8>, rng: &mut Rng, words: u64) {
    for w in 0..words {
        if w > 0 {
            out.extend_from_slice(if rng.chance(15) { b", " } else { b" " });
        }
        let word = if rng.chance(15) { rng.pick(UNICODE_WORDS) } else { rng.pick(WORDS) };
        out.extend_from_slice(word.as_bytes());
    }
}

/// A quoted field whose content may hold commas, doubled quotes and
/// embedded line breaks (LF or CRLF).
fn quoted_text(out: &mut Vec<u8>, rng: &mut Rng, words: u64) {
    out.push(b'"');
    for part in 0..1 + rng.below(3) {
        if part > 0 {
            match rng.below(10) {
                0 => out.extend_from_slice(b"\n"),
                1 => out.extend_from_slice(b"\r\n"),
                2..=4 => {
                    out.extend_from_slice(b" \"\"");
                    out.extend_from_slice(rng.pick(WORDS).as_bytes());
                    out.extend_from_slice(b"\"\" ");
                }
                _ => out.extend_from_slice(b"; "),
            }
        }
        let n = 1 + rng.below(words);
        sentence(out, rng, n);
    }
    out.push(b'"');
}

fn text_row(out: &mut Vec<u8>, rng: &mut Rng, id: u64) {
    let _ = write!(out, "{id},");
    // name: sometimes quoted (for a comma), sometimes plain
    if rng.chance(40) {
        let _ = write!(out, "\"{}, {}\"", rng.pick(WORDS), rng.pick(UNICODE_WORDS));
    } else {
        out.extend_from_slice(rng.pick(WORDS).as_bytes());
    }
    out.push(b',');
    out.extend_from_slice(rng.pick(CITIES).as_bytes());
    out.push(b',');
    quoted_text(out, rng, 12);
    out.push(b',');
    fixed(out, rng.below(10_000_000), 2);
    out.push(b',');
    let _ = write!(out, "\"{};{};{}\"", rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
    out.push(b',');
    if rng.chance(50) {
        quoted_text(out, rng, 6);
    }
    out.push(b',');
    timestamp(out, rng);
    out.push(b'\n');
}

fn wide_header(out: &mut Vec<u8>) {
    let cols: Vec<String> = (0..300).map(|c| format!("c{c}")).collect();
    out.extend_from_slice(cols.join(",").as_bytes());
    out.push(b'\n');
}

fn wide_row(out: &mut Vec<u8>, rng: &mut Rng, _id: u64) {
    const SHORT: &[&str] = &["a", "b", "xy", "0", "1", "42", "-7", "ok", "no", "", "3.5", "zz"];
    for c in 0..300 {
        if c > 0 {
            out.push(b',');
        }
        out.extend_from_slice(rng.pick(SHORT).as_bytes());
    }
    out.push(b'\n');
}

/// What a generated file holds, counted while writing it (independently of
/// any parser): records (header included), bytes and LF bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Records, the header row included.
    pub records: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// Number of LF bytes (what a newline count finds).
    pub newlines: u64,
}

/// Writes a `shape` file of at least `size` bytes to `w`.
pub fn generate(shape: &str, size: u64, seed: u64, w: &mut dyn Write) -> io::Result<Stats> {
    type Shape = (fn(&mut Vec<u8>), fn(&mut Vec<u8>, &mut Rng, u64));
    let (header, row): Shape = match shape {
        "numeric" => (numeric_header, numeric_row),
        "text" => (text_header, text_row),
        "wide" => (wide_header, wide_row),
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown shape {other:?} (numeric, text, wide)"),
            ))
        }
    };
    let mut rng = Rng::new(seed);
    let mut chunk = Vec::with_capacity(1 << 20);
    header(&mut chunk);
    let mut st = Stats { records: 1, bytes: 0, newlines: 0 };
    let mut flush = |chunk: &mut Vec<u8>, st: &mut Stats| -> io::Result<()> {
        w.write_all(chunk)?;
        st.bytes += chunk.len() as u64;
        st.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        chunk.clear();
        Ok(())
    };
    while st.bytes + (chunk.len() as u64) < size {
        row(&mut chunk, &mut rng, st.records);
        st.records += 1;
        if chunk.len() >= 1 << 19 {
            flush(&mut chunk, &mut st)?;
        }
    }
    flush(&mut chunk, &mut st)?;
    w.flush()?;
    Ok(st)
}

/// The default seed.
pub const SEED: u64 = 0x5EED;

#[allow(dead_code)] // unused where this file is included as a module
fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: gen_data numeric|text|wide SIZE[K|M|G] OUT [SEED]";
    if args.len() < 3 {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let Some(size) = parse_size(&args[1]) else {
        eprintln!("bad size {:?}; {usage}", args[1]);
        std::process::exit(2);
    };
    let seed = match args.get(3) {
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("bad seed {s:?}");
            std::process::exit(2)
        }),
        None => SEED,
    };
    let sink: Box<dyn Write> = if args[2] == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(std::fs::File::create(&args[2])?)
    };
    let mut w = BufWriter::with_capacity(1 << 20, sink);
    match generate(&args[0], size, seed, &mut w) {
        Ok(st) => {
            eprintln!("records={} bytes={} newlines={}", st.records, st.bytes, st.newlines);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            eprintln!("{e}; {usage}");
            std::process::exit(2)
        }
        Err(e) => Err(e),
    }
}
