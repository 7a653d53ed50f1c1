//! Runs the `fastcsv::bench` harness on a file, the way `fastcsv bench`
//! does, for use before (or without) the CLI:
//!
//! ```text
//! cargo run --release --example bench_file -- FILE [--sizes 1K,4K,...] [--runs N]
//!     [--cold] [--work count|fields|utf8] [--json] [--plot FILE.svg]
//! ```

use fastcsv::bench::{self, BenchOptions, Work};

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_file: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut opts = BenchOptions::default();
    let (mut file, mut json, mut plot) = (None, false, None);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--sizes" => opts.sizes = bench::parse_sizes(&value()?)?,
            "--runs" => {
                // Asked for explicitly: exactly that many, however long.
                opts.runs = value()?.parse()?;
                opts.time_budget = None;
            }
            "--cold" => opts.cold = true,
            "--work" => {
                let w = value()?;
                opts.work = Work::parse(&w).ok_or(format!("unknown work {w:?}"))?;
            }
            "--json" => json = true,
            "--plot" => plot = Some(value()?),
            _ if file.is_none() && !a.starts_with("--") => file = Some(a),
            _ => return Err(format!("unexpected argument {a:?}").into()),
        }
    }
    let file = file.ok_or("usage: bench_file FILE [options]")?;
    let report = bench::run(file.as_ref(), &opts)?;
    if json {
        print!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    if let Some(p) = plot {
        std::fs::write(p, report.to_svg())?;
    }
    Ok(())
}
