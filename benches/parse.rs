//! Criterion benchmarks: fastcsv against its peers, side by side, on the
//! generated `numeric`, `text` and `wide` inputs (see `benches/README.md`).
//!
//! Groups are `SHAPE/TASK`; benchmark ids are `ENGINE/SOURCE`. Throughput
//! is in bytes of input, and every iteration asserts the record count
//! against the generator's own count.
//!
//! ```sh
//! cargo bench --bench parse                          # 1 GiB inputs
//! FASTCSV_BENCH_SIZE=100M cargo bench --bench parse  # smaller, quicker
//! ```
#![allow(missing_docs)]

mod support;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use support::{engines, input, run_checked, Task, SHAPES};

fn parse(c: &mut Criterion) {
    let size = std::env::var("FASTCSV_BENCH_SIZE").unwrap_or_else(|_| "1G".to_string());
    let engines = engines();
    for shape in SHAPES {
        let inp = input(shape, &size);
        for task in [Task::Count, Task::Fields, Task::Select, Task::Utf8] {
            let mut g = c.benchmark_group(format!("{shape}/{}", task.name()));
            g.throughput(Throughput::Bytes(inp.stats.bytes));
            g.sample_size(10);
            g.warm_up_time(Duration::from_secs(1));
            g.measurement_time(Duration::from_secs(4));
            for e in engines.iter().filter(|e| e.task == task) {
                let id = BenchmarkId::new(e.name, e.src.name());
                g.bench_function(id, |b| b.iter(|| run_checked(e, &inp)));
            }
            g.finish();
        }
    }
}

criterion_group!(benches, parse);
criterion_main!(benches);
