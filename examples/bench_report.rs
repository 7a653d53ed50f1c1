//! The benchmark report: every engine of `benches/support` on the three
//! generated shapes, side by side, round robin (so that noise from other
//! processes hits all engines alike), printing medians, throughput and the
//! target ratios as markdown.
//!
//! Usage: `cargo run --release --example bench_report -- [SIZE] [REPS] [SHAPE...]`
//! (defaults: `1G 5`, all shapes). Progress goes to stderr, the tables to
//! stdout. Every run checks the record count against the generator's, and
//! engines that visit the same fields must agree on their checksum.

#[path = "../benches/support/mod.rs"]
mod support;

use std::time::Instant;

use support::{engines, input, run_checked, Engine, Src, Task, PAR, SHAPES, SYNC};

/// CPU time (user + system) of the whole process, in seconds: unlike wall
/// time, it does not count the time spent waiting for a core that other
/// processes hold. Process-wide (`RUSAGE_SELF`), so the buffered source's
/// read-ahead thread is counted; it has ended when the reader is dropped
/// (the drop joins it), and nothing else runs in this process meanwhile.
fn cpu_time() -> f64 {
    let mut ru: libc::rusage = unsafe_zeroed_rusage();
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn unsafe_zeroed_rusage() -> libc::rusage {
    // SAFETY: rusage is plain old data; all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size = args.first().cloned().unwrap_or_else(|| "1G".to_string());
    let reps: usize = args.get(1).map_or(5, |s| s.parse().expect("REPS"));
    let shapes: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        SHAPES.iter().map(|s| s.to_string()).collect()
    };
    let engines = engines();
    // For profiling: run only engines whose `task/engine/source` label
    // contains one of these comma-separated strings (no tables are printed
    // then).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let picked = |l: &str| only.split(',').any(|o| l.contains(o));
    let label = |e: &Engine| format!("{}/{}/{}", e.task.name(), e.name, e.src.name());
    println!(
        "block scanner kernel: `{}`; {reps} runs per engine, round robin; median \
         seconds and GiB/s of input.\n",
        fastcsv::scan::simd_level()
    );
    for shape in &shapes {
        let inp = input(shape, &size);
        let gib = inp.stats.bytes as f64 / (1u64 << 30) as f64;
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
        let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
        let mut sums: Vec<u64> = vec![0; engines.len()];
        for rep in 0..reps {
            eprintln!("{shape}: run {}/{reps}", rep + 1);
            for (k, e) in engines.iter().enumerate() {
                if !only.is_empty() && !picked(&label(e)) {
                    continue;
                }
                let (t, c) = (Instant::now(), cpu_time());
                let (_, sum) = run_checked(e, &inp);
                times[k].push(t.elapsed().as_secs_f64());
                cpu[k].push(cpu_time() - c);
                sums[k] = sum;
            }
        }
        if !only.is_empty() {
            for (k, e) in engines.iter().enumerate() {
                if !times[k].is_empty() {
                    let (w, c) = (median(&mut times[k]), median(&mut cpu[k]));
                    println!("{}: {w:.3} s wall, {c:.3} s cpu", label(e));
                }
            }
            continue;
        }
        let med: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
        let med_cpu: Vec<f64> = cpu.iter_mut().map(|t| median(t)).collect();
        // Engines visiting the same fields must have seen the same bytes.
        for task in [Task::Fields, Task::Select, Task::Utf8] {
            let seen: Vec<(&Engine, u64)> = engines
                .iter()
                .zip(&sums)
                .filter(|(e, _)| e.task == task)
                .map(|(e, &s)| (e, s))
                .collect();
            for (e, s) in &seen {
                assert_eq!(*s, seen[0].1, "{} {} checksum differs on {shape}", e.name, task.name());
            }
        }
        println!("### `{shape}`: {:.2} GiB, {} records\n", gib, inp.stats.records);
        println!("| task | engine | source | median s | GiB/s | min s | max s | median CPU s |");
        println!("|---|---|---|---:|---:|---:|---:|---:|");
        for (k, e) in engines.iter().enumerate() {
            let (lo, hi) =
                times[k].iter().fold((f64::MAX, 0f64), |(a, b), &t| (a.min(t), b.max(t)));
            println!(
                "| {} | {} | {} | {:.3} | {:.2} | {:.3} | {:.3} | {:.3} |",
                e.task.name(),
                e.name,
                e.src.name(),
                med[k],
                gib / med[k],
                lo,
                hi,
                med_cpu[k]
            );
        }
        let find = |name: &str, task: Task, src: Src| {
            let k = engines
                .iter()
                .position(|e| e.name == name && e.task == task && e.src == src)
                .expect("engine");
            med[k]
        };
        let ratio = |a: f64, b: f64| b / a; // speed of a relative to b (time b / time a)
        let count = find("fastcsv", Task::Count, Src::Mapped);
        // Visiting every field: `read_batch(Selection::all())`, the API made
        // for it; `read_row` (one record per call) is given too.
        let fields = find("fastcsv read_batch all", Task::Fields, Src::Mapped);
        let fields_row = find("fastcsv", Task::Fields, Src::Mapped);
        // The peers' "mapped" runs read the report's own, already faulted-in
        // map; fastcsv's map the file afresh each run (page faults
        // included). These run fastcsv over the very same bytes.
        let fields_slice =
            find("fastcsv read_batch all, from_slice (pre-faulted map)", Task::Fields, Src::Mapped);
        let count_slice = find("fastcsv from_slice (pre-faulted map)", Task::Count, Src::Mapped);
        let rows: Vec<(String, f64, &str)> = vec![
            (
                "count: fastcsv / simd-csv Splitter (mapped)".into(),
                ratio(count, find("simd-csv Splitter", Task::Count, Src::Mapped)),
                if shape == "text" { "≥ 1.5" } else { "≥ 1.0" },
            ),
            (
                "count: fastcsv / simd-csv Splitter (buffered)".into(),
                ratio(
                    find("fastcsv", Task::Count, Src::Buffered),
                    find("simd-csv Splitter", Task::Count, Src::Buffered),
                ),
                if shape == "text" { "≥ 1.5" } else { "≥ 1.0" },
            ),
            (
                "count, same pre-faulted bytes: fastcsv from_slice / simd-csv Splitter".into(),
                ratio(count_slice, find("simd-csv Splitter", Task::Count, Src::Mapped)),
                if shape == "text" { "≥ 1.5" } else { "≥ 1.0" },
            ),
            (
                "count, same pre-faulted bytes: fastcsv from_slice / memchr newline ceiling".into(),
                ratio(count_slice, find("memchr newlines (ceiling)", Task::Count, Src::Mapped)),
                "≥ 0.5",
            ),
            (
                "count: fastcsv / memchr newline ceiling".into(),
                ratio(count, find("memchr newlines (ceiling)", Task::Count, Src::Mapped)),
                "≥ 0.5",
            ),
            (
                "count: block scanner / state machine only".into(),
                ratio(count, find("fastcsv (state machine only)", Task::Count, Src::Mapped)),
                "",
            ),
            (
                "fields: fastcsv read_batch all / simd-csv ZeroCopyReader (mapped)".into(),
                ratio(fields, find("simd-csv ZeroCopyReader", Task::Fields, Src::Mapped)),
                "≥ 1.5",
            ),
            (
                "fields: fastcsv read_batch all / simd-csv ZeroCopyReader (buffered)".into(),
                ratio(
                    find("fastcsv read_batch all", Task::Fields, Src::Buffered),
                    find("simd-csv ZeroCopyReader", Task::Fields, Src::Buffered),
                ),
                "≥ 1.5",
            ),
            (
                "fields: fastcsv read_batch all / csv ByteRecord (mapped)".into(),
                ratio(fields, find("csv ByteRecord", Task::Fields, Src::Mapped)),
                "≥ 4",
            ),
            (
                "fields, same pre-faulted bytes: fastcsv read_batch all from_slice / simd-csv ZeroCopyReader".into(),
                ratio(fields_slice, find("simd-csv ZeroCopyReader", Task::Fields, Src::Mapped)),
                "≥ 1.5",
            ),
            (
                "fields, same pre-faulted bytes: fastcsv read_batch all from_slice / csv ByteRecord".into(),
                ratio(fields_slice, find("csv ByteRecord", Task::Fields, Src::Mapped)),
                "≥ 4",
            ),
            (
                "fields: fastcsv read_row / simd-csv ZeroCopyReader (mapped)".into(),
                ratio(fields_row, find("simd-csv ZeroCopyReader", Task::Fields, Src::Mapped)),
                "",
            ),
            (
                "fields: fastcsv read_row / csv ByteRecord (mapped)".into(),
                ratio(fields_row, find("csv ByteRecord", Task::Fields, Src::Mapped)),
                "",
            ),
            (
                "fields: read_row, block scanner / state machine only".into(),
                ratio(fields_row, find("fastcsv (state machine only)", Task::Fields, Src::Mapped)),
                "",
            ),
            (
                "select 3 columns: fastcsv read_batch / simd-csv ZeroCopyReader (mapped)".into(),
                ratio(
                    find("fastcsv read_batch", Task::Select, Src::Mapped),
                    find("simd-csv ZeroCopyReader", Task::Select, Src::Mapped),
                ),
                "",
            ),
            (
                "select 3 columns: fastcsv read_batch / read_row (mapped)".into(),
                ratio(
                    find("fastcsv read_batch", Task::Select, Src::Mapped),
                    find("fastcsv", Task::Select, Src::Mapped),
                ),
                "",
            ),
            (
                "count: buffered / mapped".into(),
                ratio(find("fastcsv", Task::Count, Src::Buffered), count),
                "≥ 0.85",
            ),
            (
                "fields (read_batch all): buffered / mapped".into(),
                ratio(find("fastcsv read_batch all", Task::Fields, Src::Buffered), fields),
                "≥ 0.85",
            ),
            (
                "fields (read_row): buffered / mapped".into(),
                ratio(find("fastcsv", Task::Fields, Src::Buffered), fields_row),
                "≥ 0.85",
            ),
            (
                format!("count: {PAR} / one thread (mapped)"),
                ratio(find(PAR, Task::Count, Src::Mapped), count),
                "",
            ),
            (
                format!("fields: {PAR} / read_batch all on one thread (mapped)"),
                ratio(find(PAR, Task::Fields, Src::Mapped), fields),
                "",
            ),
            (
                format!("select 3 columns: {PAR} / read_batch on one thread (mapped)"),
                ratio(
                    find(PAR, Task::Select, Src::Mapped),
                    find("fastcsv read_batch", Task::Select, Src::Mapped),
                ),
                "",
            ),
            (
                format!("fields: {PAR} / simd-csv ZeroCopyReader (mapped)"),
                ratio(
                    find(PAR, Task::Fields, Src::Mapped),
                    find("simd-csv ZeroCopyReader", Task::Fields, Src::Mapped),
                ),
                "",
            ),
            (
                "count: buffered without read-ahead / mapped".into(),
                ratio(find(SYNC, Task::Count, Src::Buffered), count),
                "",
            ),
            (
                "fields: buffered without read-ahead / mapped".into(),
                ratio(find(SYNC, Task::Fields, Src::Buffered), fields),
                "",
            ),
        ];
        println!("\n| ratio (speed, from medians) | `{shape}` | target |");
        println!("|---|---:|---|");
        for (what, r, target) in rows {
            println!("| {what} | {r:.2}x | {target} |");
        }
        println!();
    }
}
