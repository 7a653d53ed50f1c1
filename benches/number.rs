//! The number kernel of typed columns (`fastcsv::arrow::number`) against
//! the standard library's parsers, `fast-float2` and `lexical-core`, on
//! realistic fields: short integers, prices with two decimals, floats as
//! Python prints them (17 significant digits) and scientific notation.
//!
//! Throughput is in bytes of field text; every iteration asserts the
//! number of values parsed (and that each parser accepted all of them).
//!
//! ```sh
//! cargo bench --bench number
//! # profile typed reading of a file (inferred types, all batches):
//! cargo bench --bench number -- --typed FILE [REPS]
//! # one parser over one field set REPS times (for instruction counts
//! # under `valgrind --tool=cachegrind`, which a loaded machine does not
//! # disturb); PARSER is f64/NAME, i64/NAME or `none` (the loop alone):
//! cargo bench --bench number -- --one SET PARSER [REPS]
//! ```
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};

use fastcsv::arrow::number::{parse_f64, parse_f64_in, parse_i64, parse_i64_in};
use fastcsv::arrow::Columns;
use fastcsv::Reader;

/// xorshift64*: tiny and seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

const N: usize = 100_000;

/// The field sets: name and the fields.
fn fields() -> Vec<(&'static str, Vec<String>)> {
    let mut r = Rng(42);
    let short_ints = (0..N)
        .map(|_| {
            let n = (r.next() % 20_000) as i64 - 10_000;
            (n / 10_i64.pow((r.next() % 4) as u32)).to_string()
        })
        .collect();
    let prices = (0..N)
        .map(|_| {
            let c = r.next() % 1_000_000;
            format!("{}.{:02}", c / 100, c % 100)
        })
        .collect();
    let python = (0..N)
        .map(|_| {
            let x = (r.next() >> 11) as f64 / (1u64 << 53) as f64 * 1000.0;
            format!("{x}")
        })
        .collect();
    let scientific = (0..N)
        .map(|_| {
            let m = (r.next() >> 11) as f64 / (1u64 << 53) as f64 * 10.0;
            let e = (r.next() % 41) as i32 - 20;
            format!("{:.6e}", m * 10f64.powi(e))
        })
        .collect();
    vec![
        ("short_ints", short_ints),
        ("prices", prices),
        ("python_floats", python),
        ("scientific", scientific),
    ]
}

/// A float parser under test: name and function, given a field as it
/// lies in a file (the bytes after it, a next field, follow it: `v[..len]`
/// is the field).
type FloatParser = (&'static str, fn(&[u8], usize) -> Option<f64>);

fn float_parsers() -> [FloatParser; 5] {
    [
        ("fastcsv", |v, n| parse_f64(&v[..n])),
        ("fastcsv-in", parse_f64_in),
        ("std", |v, n| std::str::from_utf8(&v[..n]).ok()?.parse().ok()),
        ("fast-float2", |v, n| fast_float2::parse(&v[..n]).ok()),
        ("lexical-core", |v, n| lexical_core::parse(&v[..n]).ok()),
    ]
}

type IntParser = (&'static str, fn(&[u8], usize) -> Option<i64>);

fn int_parsers() -> [IntParser; 4] {
    [
        ("fastcsv", |v, n| parse_i64(&v[..n])),
        ("fastcsv-in", parse_i64_in),
        ("std", |v, n| std::str::from_utf8(&v[..n]).ok()?.parse().ok()),
        ("lexical-core", |v, n| lexical_core::parse(&v[..n]).ok()),
    ]
}

/// What follows each field: the next field of a record.
const AFTER: &str = ",2024-08-18T10:10:32Z";

/// The fields of `set`, each followed by [`AFTER`], with their lengths.
fn in_place(set: &[String]) -> Vec<(String, usize)> {
    set.iter().map(|s| (format!("{s}{AFTER}"), s.len())).collect()
}

fn bench(c: &mut Criterion) {
    for (name, set) in fields() {
        let bytes: u64 = set.iter().map(|s| s.len() as u64).sum();
        let set = in_place(&set);
        let mut g = c.benchmark_group(format!("number/{name}"));
        g.throughput(Throughput::Bytes(bytes));
        g.sample_size(20);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        for (p, f) in float_parsers() {
            g.bench_function(BenchmarkId::new("f64", p), |b| {
                b.iter(|| {
                    let n = set
                        .iter()
                        .filter_map(|(s, k)| black_box(f(black_box(s.as_bytes()), *k)))
                        .count();
                    assert_eq!(n, set.len(), "{p} rejected a field");
                })
            });
        }
        if name == "short_ints" {
            for (p, f) in int_parsers() {
                g.bench_function(BenchmarkId::new("i64", p), |b| {
                    b.iter(|| {
                        let n = set
                            .iter()
                            .filter_map(|(s, k)| black_box(f(black_box(s.as_bytes()), *k)))
                            .count();
                        assert_eq!(n, set.len(), "{p} rejected a field");
                    })
                });
            }
        }
        g.finish();
    }
}

/// Reads `path` into typed columns (types inferred from the first 1000
/// rows) `reps` times, printing the rate: a target for `perf record`.
fn typed(path: &str, reps: usize) {
    let len = std::fs::metadata(path).expect("input file").len();
    for _ in 0..reps {
        let t = Instant::now();
        let mut cols = Columns::new(Reader::from_path(path).expect("open")).expect("header");
        let types = cols.infer_types(1000).expect("infer");
        let mut rows = 0;
        while let Some(b) = cols.next_batch().expect("batch") {
            rows += b.rows();
        }
        let s = t.elapsed().as_secs_f64();
        println!("{rows} rows, types {types:?}: {:.0} MB/s", len as f64 / s / 1e6);
    }
}

/// Runs one parser over one field set `reps` times.
fn one(set: &str, parser: &str, reps: usize) {
    let all = fields();
    let (_, fields) = all.iter().find(|(n, _)| *n == set).expect("a field set name");
    let fields = in_place(fields);
    let f64s = float_parsers();
    let i64s = int_parsers();
    let mut n = 0usize;
    for _ in 0..reps {
        n += match parser.split_once('/') {
            Some(("f64", p)) => {
                let f = f64s.iter().find(|(q, _)| *q == p).expect("an f64 parser").1;
                fields.iter().filter_map(|(s, k)| black_box(f(black_box(s.as_bytes()), *k))).count()
            }
            Some(("i64", p)) => {
                let f = i64s.iter().find(|(q, _)| *q == p).expect("an i64 parser").1;
                fields.iter().filter_map(|(s, k)| black_box(f(black_box(s.as_bytes()), *k))).count()
            }
            _ => fields
                .iter()
                .filter(|(s, k)| black_box(black_box(s.as_bytes())[..*k].len()) > 0)
                .count(),
        };
    }
    assert_eq!(n, reps * fields.len(), "{parser} rejected a field");
    println!("{set} {parser}: {n} values");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let reps = args.get(i + 3).and_then(|r| r.parse().ok()).unwrap_or(10);
        one(&args[i + 1], &args[i + 2], reps);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--typed") {
        let reps = args.get(i + 2).and_then(|r| r.parse().ok()).unwrap_or(3);
        typed(&args[i + 1], reps);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
