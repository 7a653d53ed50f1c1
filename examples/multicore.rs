//! Measures the two ways of reading one file on several threads: the
//! guessing scheme (`Reader::par_count` / `Reader::par_batches`: quote
//! parity, verified) and the exact one (`split::Splitter::split_path`,
//! then a reader per part; and `cuts`: the exact cuts alone, from the
//! bytes before each cut, then a reader per part of the mapped file), for
//! a count, every field, and three columns.
//!
//! Usage: `cargo run --release --example multicore -- SHAPE SIZE THREADS RUNS`
//! (files come from the seeded generator, as in `benches/support`, under
//! `target/bench-data/`). Prints one line per case and scheme: the median
//! wall and user+system seconds of RUNS runs, and the checksum (records,
//! fields, bytes), which must be equal for both schemes.

#[path = "gen_data.rs"]
#[allow(dead_code)]
mod gen_data;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fastcsv::split::Splitter;
use fastcsv::{Dialect, Parallel, Reader, ReaderBuilder, Selection, PARALLEL_CHUNK};

fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` writes into the zeroed struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn input(shape: &str, size: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{shape}-{size}.csv"));
    if !path.exists() {
        let bytes = gen_data::parse_size(size).unwrap();
        let tmp = path.with_extension("tmp");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
        gen_data::generate(shape, bytes, gen_data::SEED, &mut w).unwrap();
        drop(w);
        std::fs::rename(&tmp, &path).unwrap();
    }
    let _ = std::fs::read(&path).unwrap(); // page it in
    path
}

type Sum = (u64, u64, u64);

fn add(a: &mut Sum, b: Sum) {
    a.0 += b.0;
    a.1 += b.1;
    a.2 += b.2;
}

fn batch_sum(b: &fastcsv::Batch<'_>) -> Sum {
    let mut s = (b.len() as u64, 0, 0);
    for r in b.iter() {
        for f in r.iter() {
            s.1 += 1;
            s.2 += f.len() as u64;
        }
    }
    s
}

fn guess(path: &Path, case: &str, threads: usize) -> Sum {
    let par = Parallel::new().threads(threads);
    let mut rdr = Reader::from_path(path).unwrap();
    if case == "count" {
        return (rdr.par_count(&par).unwrap().0, 0, 0);
    }
    let sel = if case == "all" { Selection::all() } else { Selection::new([0, 1, 2]) };
    let mut total = (0, 0, 0);
    rdr.par_batches(
        &sel,
        &par,
        || (0u64, 0u64, 0u64),
        |b, s: &mut Sum| -> Result<(), fastcsv::Error> {
            add(s, batch_sum(b));
            Ok(())
        },
        |s| {
            add(&mut total, std::mem::take(s));
            Ok(())
        },
    )
    .unwrap();
    total
}

fn exact(path: &Path, case: &str, threads: usize) -> Sum {
    let d = Dialect::default();
    let parts = Splitter::new(&d).split_path(path, PARALLEL_CHUNK as u64).unwrap();
    let b = ReaderBuilder::new();
    let next = AtomicUsize::new(0);
    let total = Mutex::new((0, 0, 0));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut mine = (0, 0, 0);
                let mut sel =
                    if case == "all" { Selection::all() } else { Selection::new([0, 1, 2]) };
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = parts.get(k) else { break };
                    let mut rdr = b.from_path_part(path, p).unwrap();
                    if case == "count" {
                        mine.0 += rdr.count_rows().unwrap();
                        continue;
                    }
                    while let Some(bt) = rdr.read_batch(&mut sel).unwrap() {
                        add(&mut mine, batch_sum(&bt));
                    }
                }
                add(&mut total.lock().unwrap(), mine);
            });
        }
    });
    total.into_inner().unwrap()
}

/// The exact scheme without the counting pass: the first record start
/// after each cut from the bytes before it (`Splitter::sync_point`), then
/// a reader per part of the mapped file (headers off after part 0).
fn cuts(path: &Path, case: &str, threads: usize) -> Sum {
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: a benchmark file under target/ that nobody changes meanwhile.
    let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
    let input: &[u8] = &map;
    let d = Dialect::default();
    let sp = Splitter::new(&d);
    let mut bounds = vec![0u64];
    let mut c = PARALLEL_CHUNK;
    while c < input.len() {
        let since = *bounds.last().unwrap() as usize;
        let p = sp.sync_point(input, c, since).expect("decided by the bytes before the cut");
        bounds.push(p.max(since as u64));
        c += PARALLEL_CHUNK;
    }
    bounds.push(input.len() as u64);
    let parts: Vec<fastcsv::split::Part> = bounds
        .windows(2)
        .enumerate()
        .map(|(index, w)| fastcsv::split::Part {
            index,
            start: w[0],
            end: w[1],
            lines: 0,
            records: 0,
            width: None,
        })
        .collect();
    let next = AtomicUsize::new(0);
    let total = Mutex::new((0, 0, 0));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut mine = (0, 0, 0);
                let mut sel =
                    if case == "all" { Selection::all() } else { Selection::new([0, 1, 2]) };
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = parts.get(k) else { break };
                    let mut b = ReaderBuilder::new();
                    if k > 0 {
                        b.dialect(Dialect::builder().headers(false).build().unwrap());
                    }
                    let mut rdr = b.from_slice_part(input, p).unwrap();
                    if case == "count" {
                        mine.0 += rdr.count_rows().unwrap();
                        continue;
                    }
                    while let Some(bt) = rdr.read_batch(&mut sel).unwrap() {
                        add(&mut mine, batch_sum(&bt));
                    }
                }
                add(&mut total.lock().unwrap(), mine);
            });
        }
    });
    total.into_inner().unwrap()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (shape, size) = (&a[1], &a[2]);
    let threads: usize = a[3].parse().unwrap();
    let runs: usize = a[4].parse().unwrap();
    let path = input(shape, size);
    for case in ["count", "all", "select3"] {
        for scheme in ["guess", "exact", "cuts"] {
            let mut wall = Vec::new();
            let mut cpu = Vec::new();
            let mut sum = (0, 0, 0);
            for _ in 0..runs {
                let (t0, c0) = (Instant::now(), cpu_seconds());
                sum = match scheme {
                    "guess" => guess(&path, case, threads),
                    "exact" => exact(&path, case, threads),
                    _ => cuts(&path, case, threads),
                };
                wall.push(t0.elapsed().as_secs_f64());
                cpu.push(cpu_seconds() - c0);
            }
            wall.sort_by(f64::total_cmp);
            cpu.sort_by(f64::total_cmp);
            println!(
                "{shape}\t{case}\t{scheme}\twall {:.3}\tcpu {:.3}\t{sum:?}",
                wall[runs / 2],
                cpu[runs / 2]
            );
        }
    }
}
