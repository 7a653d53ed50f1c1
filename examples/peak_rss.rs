//! Parses a file once and reports its memory: the peak resident set
//! (`VmHWM`) and the largest anonymous and file-backed parts seen (sampled
//! from `/proc/self/status` every 2^20 rows and at the end). Linux only.
//!
//! ```text
//! cargo run --release --example peak_rss -- FILE mmap|read [BUFFER_SIZE] [--keep-pages]
//! ```
//!
//! `--keep-pages` turns off the release of parsed pages of large mapped
//! files (`ReaderBuilder::release_threshold(u64::MAX)`), to show what it
//! saves.

use fastcsv::{ReaderBuilder, SourceChoice};

fn status() -> std::collections::HashMap<String, u64> {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    s.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let kb = v.trim().strip_suffix(" kB")?.parse().ok()?;
            Some((k.to_string(), kb))
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: peak_rss FILE mmap|read [BUFFER_SIZE] [--keep-pages]");
        std::process::exit(2);
    }
    let mut b = ReaderBuilder::new();
    b.source(SourceChoice::parse(&args[2]).expect("mmap or read"));
    for a in &args[3..] {
        if a == "--keep-pages" {
            b.release_threshold(u64::MAX);
        } else {
            b.buffer_size(fastcsv::bench::parse_size(a).expect("a size like 128K"));
        }
    }
    let before = status();
    let mut rdr = b.from_path(&args[1]).expect("cannot open");
    let (mut rows, mut anon, mut file) = (0u64, 0, 0);
    let sample = |anon: &mut u64, file: &mut u64| {
        let s = status();
        *anon = (*anon).max(s["RssAnon"]);
        *file = (*file).max(s["RssFile"]);
    };
    loop {
        match rdr.read_row() {
            Ok(Some(_)) => rows += 1,
            Ok(None) => break,
            Err(e) if e.is_data() => eprintln!("{e}"),
            Err(e) => panic!("{e}"),
        }
        if rows % (1 << 20) == 0 {
            sample(&mut anon, &mut file);
        }
    }
    sample(&mut anon, &mut file);
    let after = status();
    println!(
        "{} rows, source {:?} ({}), buffer capacity {:?}",
        rows,
        rdr.source_kind(),
        rdr.source_reason(),
        rdr.buffer_capacity()
    );
    println!(
        "before: VmRSS {} KiB (RssAnon {}, RssFile {})",
        before["VmRSS"], before["RssAnon"], before["RssFile"]
    );
    println!(
        "peak:   VmHWM {} KiB; largest RssAnon {anon} KiB, RssFile {file} KiB",
        after["VmHWM"]
    );
}
