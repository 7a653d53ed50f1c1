//! mmap vs `read()`: the [`fastcsv::bench`] harness (the same one as
//! `fastcsv bench`) over a generated file.
//!
//! ```text
//! cargo bench --bench sources
//! FASTCSV_BENCH_SIZE=1G cargo bench --bench sources      # default 128M
//! FASTCSV_BENCH_FILE=my.csv cargo bench --bench sources  # your own file
//! FASTCSV_BENCH_COLD=1 cargo bench --bench sources       # evict before each run
//! FASTCSV_BENCH_WORK=count,select,rows cargo bench --bench sources  # the engines
//! FASTCSV_BENCH_THREADS=4 cargo bench --bench sources    # count and select on 4 threads
//! ```
//!
//! Prints the table; writes `target/bench-sources.{json,svg}`. The generated
//! file is seeded (the same bytes every time) and deleted afterwards.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use fastcsv::bench::{self, BenchOptions, Work};

/// Writes about `size` bytes of `id,int,float,text` rows; returns the number
/// of data rows (the header excluded).
fn generate(path: &std::path::Path, size: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut written = w.write(b"id,int,float,text\n").unwrap() as u64;
    let mut rows = 0u64;
    let mut line = Vec::with_capacity(96);
    while written < size {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        line.clear();
        let int = (state >> 40) as i64 - (1 << 23);
        if rows % 64 == 63 {
            writeln!(
                line,
                "{rows},{int},{}.{:06},\"row {rows}, \"\"q\"\"\"",
                int / 3,
                state % 1_000_000
            )
        } else {
            writeln!(line, "{rows},{int},{}.{:06},row {rows}", int / 3, state % 1_000_000)
        }
        .unwrap();
        w.write_all(&line).unwrap();
        written += line.len() as u64;
        rows += 1;
    }
    w.flush().unwrap();
    rows
}

fn main() {
    let works = std::env::var("FASTCSV_BENCH_WORK").map_or_else(
        |_| bench::DEFAULT_WORKS.to_vec(),
        |w| {
            w.split(',')
                .map(|w| Work::parse(w.trim()).expect("FASTCSV_BENCH_WORK like count,rows"))
                .collect()
        },
    );
    let threads = std::env::var("FASTCSV_BENCH_THREADS")
        .map_or(1, |t| t.parse().expect("FASTCSV_BENCH_THREADS is a number"));
    let opts = BenchOptions {
        cold: std::env::var_os("FASTCSV_BENCH_COLD").is_some(),
        works,
        threads,
        ..BenchOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let (path, expected): (PathBuf, Option<u64>) = match std::env::var_os("FASTCSV_BENCH_FILE") {
        Some(p) => (p.into(), None),
        None => {
            let size = std::env::var("FASTCSV_BENCH_SIZE").unwrap_or_else(|_| "128M".into());
            let size = bench::parse_size(&size).expect("FASTCSV_BENCH_SIZE like 128M") as u64;
            let p = dir.path().join("sources.csv");
            let rows = generate(&p, size);
            (p, Some(rows))
        }
    };
    let report = bench::run(&path, &opts).expect("bench failed");
    if let Some(rows) = expected {
        // Every work and every source saw every row.
        for r in &report.results {
            assert_eq!((r.rows, r.errors), (rows, 0), "{:?} {}", r.work, r.label());
        }
    }
    print!("{}", report.to_table());
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::write(target.join("bench-sources.json"), report.to_json()).unwrap();
    std::fs::write(target.join("bench-sources.svg"), report.to_svg()).unwrap();
    eprintln!("wrote target/bench-sources.json and target/bench-sources.svg");
}
