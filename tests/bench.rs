//! The `bench` harness on a small file: its table, JSON and SVG.

use fastcsv::bench::{self, BenchOptions, Work};

fn small_report(work: Work) -> bench::BenchReport {
    small_report_with(vec![work], 1)
}

fn small_report_with(works: Vec<Work>, threads: usize) -> bench::BenchReport {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small bench.csv");
    let mut data = String::from("id,name,score\n");
    for i in 0..5000 {
        data.push_str(&format!("{i},\"name {i}, \"\"quoted\"\"\",{}\n", i % 97));
    }
    std::fs::write(&path, &data).unwrap();
    let opts = BenchOptions {
        sizes: vec![4096, 1024, 65536, 1024],
        runs: 3,
        works,
        threads,
        ..Default::default()
    };
    let r = bench::run(&path, &opts).unwrap();
    assert_eq!(r.bytes, data.len() as u64);
    r
}

#[test]
fn every_configuration_is_measured_and_agrees() {
    for &work in Work::ALL {
        let r = small_report(work);
        assert_eq!((r.rows, r.errors, r.runs), (5000, 0, 3), "{work:?}");
        assert_eq!(r.works, [work]);
        let labels: Vec<String> = r.results.iter().map(|c| c.label()).collect();
        assert_eq!(labels, ["mmap", "read 1K", "read 4K", "read 64K"], "sorted, deduplicated");
        assert_eq!(r.results[0].source, fastcsv::SourceKind::Mapped);
        for c in &r.results {
            assert_eq!(c.work, work);
            assert_eq!((c.rows, c.errors, c.threads), (5000, 0, 1));
            assert_eq!(c.times.len(), 3);
            assert_eq!(c.samples.len(), 3, "every run kept");
            assert_eq!(c.samples.iter().map(|s| s.wall).collect::<Vec<_>>(), c.times);
            assert!(c.min <= c.median && c.median <= c.max);
            assert!(c.mb_per_s > 0.0);
            assert!(c.user_s >= 0.0 && c.sys_s >= 0.0);
            // Every run parsed the whole file: it cost some CPU time.
            assert!(c.user_s + c.sys_s > 0.0, "{}: no CPU time measured", c.label());
        }
    }
}

/// The default measures the block scanner's count and the row reader, each
/// with every source, work by work.
#[test]
fn the_default_compares_sources_at_both_speeds() {
    assert_eq!(BenchOptions::default().works, [Work::Count, Work::Rows]);
    let r = small_report_with(vec![], 1);
    assert_eq!(r.works, [Work::Count, Work::Rows]);
    let got: Vec<(Work, String)> = r.results.iter().map(|c| (c.work, c.label())).collect();
    let mut want = Vec::new();
    for w in [Work::Count, Work::Rows] {
        for l in ["mmap", "read 1K", "read 4K", "read 64K"] {
            want.push((w, l.to_string()));
        }
    }
    assert_eq!(got, want);
    let t = r.to_table();
    assert!(t.contains("work=count,rows"), "{t}");
    assert!(
        t.contains("(count: block-scanner count (Reader::par_count), as `fastcsv count`)"),
        "{t}"
    );
    assert!(t.contains("(rows: every row through Reader::read_row"), "{t}");
    // The mapped rows of each work are the reference of its `vs mmap`.
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[2].starts_with("count  mmap") && lines[2].contains("1.00x"), "{t}");
    assert!(lines[6].starts_with("rows   mmap") && lines[6].contains("1.00x"), "{t}");
}

/// `count` counts ragged records (as `fastcsv count`, which reads
/// flexibly); the row reader skips them as data errors; `select` stops.
#[test]
fn each_work_sees_a_ragged_file_as_its_verb_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ragged.csv");
    std::fs::write(&path, "a,b\n1,2\n3\n4,5\n").unwrap();
    let run = |w: Work| {
        let opts =
            BenchOptions { sizes: vec![1024], runs: 1, works: vec![w], ..Default::default() };
        bench::run(&path, &opts)
    };
    let c = run(Work::Count).unwrap();
    assert_eq!((c.rows, c.errors), (3, 0));
    for w in [Work::Rows, Work::Fields, Work::Utf8] {
        let r = run(w).unwrap();
        assert_eq!((r.rows, r.errors), (2, 1), "{w:?}");
    }
    let e = run(Work::Select).unwrap_err().to_string();
    assert!(e.contains("select stops at a data error"), "{e}");
}

/// `select` takes the first and the middle column and finds every record.
#[test]
fn select_builds_two_columns() {
    let r = small_report(Work::Select);
    assert_eq!(r.select_columns, [0, 1]);
    assert!(r.to_table().contains("; columns 1,2"));
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["select_columns"], serde_json::json!([1, 2]));
}

/// With threads, `count` and `select` get them (a mapped file is split
/// across them), the row reader does not; the answers do not change.
#[test]
fn threads_apply_to_the_parallel_engines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("par.csv");
    let mut data = String::from("id,name,score\n");
    for i in 0..60_000 {
        data.push_str(&format!("{i},\"name {i},\nx\",{}\n", i % 97));
    }
    std::fs::write(&path, &data).unwrap();
    let opts = BenchOptions {
        sizes: vec![65536],
        runs: 1,
        works: vec![Work::Count, Work::Select, Work::Rows],
        threads: 3,
        ..Default::default()
    };
    let r = bench::run(&path, &opts).unwrap();
    assert_eq!(r.threads, 3);
    for c in &r.results {
        assert_eq!(c.rows, 60_000, "{:?} {}", c.work, c.label());
        assert_eq!(c.threads, if c.work == Work::Rows { 1 } else { 3 });
    }
    let t = r.to_table();
    assert!(t.contains(", 3 threads"), "{t}");
    assert!(t.contains(
        "3 threads: a mapped file is split across them, a read() stream is parsed on one"
    ));
}

/// Many files: grouped by size class, each timed on its own, with the
/// automatic choice beside the two sources.
#[test]
fn many_files_are_timed_per_file_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    // Sizes 100 bytes-ish, about 3 KB and about 100 KB: three groups.
    for (name, rows) in [("a.csv", 10), ("b.csv", 9), ("c.csv", 400), ("d.csv", 12_000)] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("x,y\n{}", "10,20\n".repeat(rows))).unwrap();
        paths.push(p);
    }
    assert_eq!(bench::files_in(dir.path()).unwrap(), paths);
    let opts = BenchOptions { sizes: vec![4096, 1024], runs: 2, ..Default::default() };
    let r = bench::run_files(&paths, &opts).unwrap();
    assert!(r.is_per_file());
    assert_eq!((r.files, r.rows, r.errors, r.runs), (4, 12_419, 0, 2));
    let groups: Vec<(u64, usize)> =
        r.results.iter().map(|c| c.group.map(|g| (g.max_size, g.files)).unwrap()).collect();
    // 3 groups x 2 works x (mmap, read 1K, read 4K, auto).
    assert_eq!(groups.len(), 24);
    assert_eq!(groups[0], (64, 2));
    assert_eq!(groups[8], (4096, 1));
    assert_eq!(groups[16], (131_072, 1));
    let labels: Vec<String> = r.results[..4].iter().map(|c| c.label()).collect();
    assert_eq!(labels, ["mmap", "read 1K", "read 4K", "auto: read"]);
    // The large file is mapped by the automatic choice (see SMALL_FILE).
    assert_eq!(r.results[19].label(), "auto: mmap");
    for c in &r.results {
        let g = c.group.unwrap();
        assert_eq!(c.times.len(), 2 * g.files, "one time per file and run");
        assert_eq!(c.samples.len(), 2, "one sample per pass over the group");
        assert_eq!(c.threads, 1);
    }
    let t = r.to_table();
    assert!(
        t.starts_with(&format!("{}: 4 files, ", dir.path().file_name().unwrap().to_string_lossy())),
        "{t}"
    );
    assert!(t.contains("each file timed on its own"), "{t}");
    assert!(t.lines().nth(1).unwrap().starts_with("files  ") && t.contains("median/file"), "{t}");
    assert!(t.contains("≤64 x2"), "{t}");
    // A group of one file works; no files at all is an error.
    assert!(bench::run_files(&[], &opts).is_err());
    let empty = tempfile::tempdir().unwrap();
    let e = bench::files_in(empty.path()).unwrap_err().to_string();
    assert!(e.contains("no regular files"), "{e}");
}

#[test]
fn data_errors_are_counted_and_io_errors_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ragged.csv");
    std::fs::write(&path, "a,b\n1,2\n3\n").unwrap();
    let opts =
        BenchOptions { sizes: vec![1024], runs: 1, works: vec![Work::Rows], ..Default::default() };
    let r = bench::run(&path, &opts).unwrap();
    assert_eq!((r.rows, r.errors), (1, 1), "data errors are skipped and counted");
    assert!(r.to_table().contains("1 data errors skipped"));
    let missing = bench::run(&dir.path().join("nope.csv"), &opts).unwrap_err();
    assert!(missing.to_string().contains("nope.csv"));
}

#[test]
fn table_is_aligned() {
    let r = small_report(Work::Fields);
    let t = r.to_table();
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("small bench.csv: "), "{t}");
    assert!(lines[0].contains("5000 rows, work=fields, 3 runs each, warm cache"), "{t}");
    assert!(lines[1].starts_with("work    source") && lines[1].contains("MB/s"), "{t}");
    assert!(lines[0].ends_with(", 1 thread"), "{t}");
    // Title, header, 4 configurations, then notes in parentheses.
    let table: Vec<&str> = lines.iter().copied().take_while(|l| !l.starts_with('(')).collect();
    assert_eq!(table.len(), 2 + 4, "{t}");
    assert!(lines[6..].iter().all(|l| l.starts_with('(')), "{t}");
    assert!(t.contains("(load average "), "{t}");
    // Right-aligned columns: every line has the same width.
    let w = lines[1].chars().count();
    for l in &table[1..] {
        assert_eq!(l.chars().count(), w, "{t}");
    }
    assert!(
        lines[2].starts_with("fields  mmap ") && lines[3].starts_with("fields  read 1K"),
        "{t}"
    );
    assert!(t.contains("\n(command: ") == r.command.is_some(), "{t}");
    assert!(t.contains("\n(machine: ") && t.contains(&format!("{} CPUs", r.cpus)), "{t}");
}

#[test]
fn json_is_valid_with_the_expected_keys() {
    let r = small_report(Work::Count);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert!(v["file"].as_str().unwrap().ends_with("small bench.csv"));
    assert_eq!(v["rows"], 5000);
    assert_eq!(v["work"], "count");
    assert_eq!(v["runs"], 3);
    assert_eq!(v["cold"], false);
    assert!(v["rss_exact"].is_boolean());
    assert!(v["cpus"].as_u64().unwrap() >= 1);
    assert!(v["load_before"].is_number() && v["load_after"].is_number());
    assert!(v["started_unix"].as_u64().unwrap() > 1_600_000_000);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["source"], "mmap");
    assert!(results[0]["buffer_size"].is_null());
    assert_eq!(results[2]["source"], "read");
    assert_eq!(results[2]["buffer_size"], 4096);
    // A small file: read on the parsing thread (see `READ_AHEAD_MIN`).
    assert_eq!(results[2]["read_ahead"], false);
    for res in results {
        for key in [
            "median_s",
            "min_s",
            "max_s",
            "mb_per_s",
            "cpu_mb_per_s",
            "user_s",
            "sys_s",
            "minor_faults",
            "major_faults",
            "peak_rss_growth_bytes",
        ] {
            assert!(res[key].is_number(), "{key} in {res}");
        }
        assert_eq!(res["times_s"].as_array().unwrap().len(), 3);
        assert_eq!(res["work"], "count");
        assert_eq!(res["threads"], 1);
        assert_eq!(res["rows"], 5000);
        assert_eq!(res["errors"], 0);
        assert!(res["group"].is_null());
        assert!(res["label"].is_string() && res["vs_mmap"].is_number());
        // Every run, not only the summary.
        let samples = res["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 3);
        for (s, t) in samples.iter().zip(res["times_s"].as_array().unwrap()) {
            assert_eq!(&s["wall_s"], t);
            for key in ["user_s", "sys_s", "minor_faults", "major_faults"] {
                assert!(s[key].is_number(), "{key} in {s}");
            }
        }
    }
    assert_eq!(results[0]["vs_mmap"], 1.0);
    assert_eq!(v["works"], serde_json::json!(["count"]));
    assert_eq!(v["threads"], 1);
    assert_eq!(v["files"], 1);
    assert!(v["machine"].as_str().unwrap().contains("CPUs"));
    assert!(v["command"].is_null());
    assert!(v["busy"].is_boolean());
    assert_eq!(v["select_columns"], serde_json::json!([]));
}

#[test]
fn json_of_many_files_has_groups_and_a_time_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, rows) in [("a.csv", 10), ("b.csv", 10), ("c.csv", 1000)] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("x,y\n{}", "10,20\n".repeat(rows))).unwrap();
        paths.push(p);
    }
    let opts =
        BenchOptions { sizes: vec![], runs: 2, works: vec![Work::Utf8], ..Default::default() };
    let mut r = bench::run_files(&paths, &opts).unwrap();
    r.command = Some("fastcsv bench \"x\"".into());
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!((v["files"].as_u64(), v["rows"].as_u64()), (Some(3), Some(1020)));
    assert_eq!(v["command"], "fastcsv bench \"x\"");
    let results = v["results"].as_array().unwrap();
    // 2 groups x (mmap, auto).
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["group"], serde_json::json!({"max_size": 64, "files": 2, "bytes": 128}));
    assert_eq!(results[1]["source"], "auto");
    assert_eq!(results[1]["label"], "auto: read");
    assert_eq!(results[0]["times_s"].as_array().unwrap().len(), 2 * 2, "files x runs");
    assert_eq!(results[0]["samples"].as_array().unwrap().len(), 2, "one per run");
    assert_eq!(results[2]["group"]["max_size"], 8192);
}

/// An element of an SVG file: its name and attributes.
#[derive(Debug)]
struct Elem {
    name: String,
    attrs: Vec<(String, String)>,
}

impl Elem {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A small XML parser for the charts: checks that tags nest and close,
/// attributes are quoted, text has no bare `<` or `&`; returns the
/// elements in document order.
fn parse_xml(s: &str) -> Vec<Elem> {
    let mut stack: Vec<String> = Vec::new();
    let mut elems = Vec::new();
    let mut rest = s;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        for (i, _) in text.match_indices('&') {
            let ent = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;"].iter().any(|e| ent.starts_with(e)),
                "bare & in {text:?}"
            );
        }
        let gt = rest[lt..].find('>').expect("unclosed tag") + lt;
        let tag = &rest[lt + 1..gt];
        assert!(!tag.contains('<'), "< inside a tag: {tag}");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
        } else {
            let body = tag.strip_suffix('/').unwrap_or(tag);
            let (name, mut attrs_text) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
            let mut attrs = Vec::new();
            loop {
                attrs_text = attrs_text.trim_start();
                if attrs_text.is_empty() {
                    break;
                }
                let (key, after) = attrs_text.split_once("=\"").expect("attribute without =\"");
                let (value, after) = after.split_once('"').expect("unterminated attribute");
                assert!(!key.contains(char::is_whitespace), "bad attribute name {key:?}");
                attrs.push((key.to_string(), value.to_string()));
                attrs_text = after;
            }
            elems.push(Elem { name: name.to_string(), attrs });
            if !tag.ends_with('/') {
                stack.push(name.to_string());
            }
        }
        rest = &rest[gt + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(rest.trim().is_empty());
    elems
}

fn count_class(elems: &[Elem], class: &str) -> usize {
    elems.iter().filter(|e| e.attr("class") == Some(class)).count()
}

#[test]
fn svg_has_whiskers_a_line_per_work_and_the_cpu_panel() {
    let mut r = small_report_with(vec![Work::Count, Work::Rows], 1);
    r.load = Some((0.0, 0.0));
    let svg = r.to_svg();
    let elems = parse_xml(&svg);
    assert_eq!(elems[0].name, "svg");
    assert_eq!(elems[0].attr("xmlns"), Some("http://www.w3.org/2000/svg"));
    // A read() line through the 3 buffer sizes per work; mmap dashed and
    // flat, one per work.
    let polylines: Vec<&Elem> = elems.iter().filter(|e| e.name == "polyline").collect();
    assert_eq!(polylines.len(), 2, "one read() line per work");
    assert_eq!(polylines[0].attr("points").unwrap().split(' ').count(), 3);
    let dashed = elems.iter().filter(|e| e.name == "line" && e.attr("stroke-dasharray").is_some());
    assert_eq!(dashed.count(), 2 + 2, "mmap per work, and in the legend");
    // Every point has a min-max whisker: 2 works x (mmap + 3 sizes).
    assert_eq!(count_class(&elems, "whisker"), 8);
    for w in elems.iter().filter(|e| e.attr("class") == Some("whisker")) {
        let d = w.attr("d").unwrap();
        assert!(d.starts_with('M') && d.contains('V'), "{d}");
    }
    // The CPU panel: user and system time stacked, one bar per configuration.
    assert_eq!(count_class(&elems, "cpu-user"), 8);
    assert_eq!(count_class(&elems, "cpu-sys"), 8);
    for title in [
        "fastcsv bench: throughput by source and buffer size",
        "read() buffer size (bytes, log scale)",
        "throughput (MB/s)",
        "CPU seconds per run",
        ">count: mmap</text>",
        ">count: read()</text>",
        ">rows: mmap</text>",
        ">rows: read()</text>",
        "CPU time: user (dark) and system (light)",
        "machine: ",
    ] {
        assert!(svg.contains(title), "{title}");
    }
    for tick in [">1K<", ">4K<", ">64K<"] {
        assert!(svg.contains(tick), "x tick {tick}");
    }
    assert_eq!(count_class(&elems, "warning"), 0, "a quiet machine");
    // A busy machine: the warning is in the chart.
    r.load = Some((0.0, 4.0 * r.cpus as f64));
    r.command = Some("fastcsv bench 'a <b>.csv'".into());
    let busy = r.to_svg();
    let elems = parse_xml(&busy);
    assert_eq!(count_class(&elems, "warning"), 1);
    assert!(busy.contains("machine busy: load average 0.00 before"));
    assert!(busy.contains("fastcsv bench 'a &lt;b&gt;.csv'"), "the command, escaped");
    // Only the mapped source: still a valid chart.
    let mut only_map = r.clone();
    only_map.results.retain(|c| c.buffer_size.is_none());
    let elems = parse_xml(&only_map.to_svg());
    assert_eq!(count_class(&elems, "whisker"), 2);
}

#[test]
fn svg_of_many_files_plots_time_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, rows) in [("a.csv", 10), ("b.csv", 1000)] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("x,y\n{}", "10,20\n".repeat(rows))).unwrap();
        paths.push(p);
    }
    let opts = BenchOptions { sizes: vec![4096], runs: 1, ..Default::default() };
    let r = bench::run_files(&paths, &opts).unwrap();
    let svg = r.to_svg();
    let elems = parse_xml(&svg);
    assert!(svg.contains("fastcsv bench: time per file by file size and source"));
    assert!(svg.contains("time per file (µs, log scale)") && svg.contains("CPU µs per file"));
    // 2 works x (mmap, read 4K, auto): a line each, through both groups.
    let polylines: Vec<&Elem> = elems.iter().filter(|e| e.name == "polyline").collect();
    assert_eq!(polylines.len(), 6);
    assert!(polylines.iter().all(|p| p.attr("points").unwrap().split(' ').count() == 2));
    assert_eq!(count_class(&elems, "whisker"), 12);
    assert_eq!(count_class(&elems, "cpu-user"), 12);
    assert_eq!(count_class(&elems, "cpu-sys"), 12);
    assert!(svg.contains(">rows: auto</text>"));
}

#[test]
fn sizes_parse_like_the_cli_takes_them() {
    assert_eq!(bench::parse_sizes("1K,4K,128K,4M").unwrap(), vec![1024, 4096, 131072, 4 << 20]);
    assert!(bench::parse_sizes("1K,x").is_err());
    assert!(bench::parse_size("").is_err());
    assert!(bench::parse_size("99999999999999999999G").is_err());
    assert_eq!(Work::parse("utf8"), Some(Work::Utf8));
    let d = BenchOptions::default();
    assert_eq!((d.runs, d.cold), (3, false));
    assert_eq!(d.threads, fastcsv::Parallel::new().thread_count(), "as `fastcsv count`");
    assert_eq!(Work::parse("select"), Some(Work::Select));
    assert_eq!(Work::parse("rows"), Some(Work::Rows));
    for &w in Work::ALL {
        assert_eq!(Work::parse(w.as_str()), Some(w));
    }
    assert!(d.sizes.contains(&(128 * 1024)));
}

#[test]
fn the_time_budget_lowers_runs_for_every_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("budget.csv");
    std::fs::write(&path, "a\n1\n2\n").unwrap();
    let opts = BenchOptions {
        sizes: vec![1024, 2048],
        runs: 5,
        time_budget: Some(std::time::Duration::ZERO),
        ..Default::default()
    };
    let r = bench::run(&path, &opts).unwrap();
    assert_eq!(r.runs, 1);
    assert!(r.results.iter().all(|c| c.times.len() == 1));
    let exact = BenchOptions { time_budget: None, ..opts };
    let r = bench::run(&path, &exact).unwrap();
    assert_eq!(r.runs, 5);
    assert!(r.results.iter().all(|c| c.times.len() == 5));
}

#[test]
fn only_regular_files_are_measured() {
    let e = bench::run("/dev/null".as_ref(), &BenchOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("/dev/null: bench needs a regular file"), "{e}");
}

/// `fastcsv bench` on the command line: its engines, threads and many
/// files (the usage errors are in `tests/cli.rs`).
#[cfg(feature = "cli")]
mod cli {
    use std::path::PathBuf;
    use std::process::Command;

    /// Runs the binary; checks it succeeded quietly; returns its output.
    fn ok(args: &[&str]) -> String {
        let o = Command::new(env!("CARGO_BIN_EXE_fastcsv")).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        String::from_utf8(o.stdout).unwrap()
    }

    fn temp_file(dir: &tempfile::TempDir, name: &str, data: &[u8]) -> String {
        let p: PathBuf = dir.path().join(name);
        std::fs::write(&p, data).unwrap();
        p.display().to_string()
    }

    /// Each engine by name, several at once, and on several threads.
    #[test]
    fn bench_works_and_threads() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = String::from("id,name,score\n");
        for i in 0..20_000 {
            data.push_str(&format!("{i},\"n {i}, x\",{}\n", i % 7));
        }
        let file = temp_file(&dir, "w.csv", data.as_bytes());
        let t =
            ok(&["bench", &file, "--sizes", "64K", "--runs", "1", "--work", "select,fields,utf8"]);
        assert!(t.contains("20000 rows, work=select,fields,utf8, 1 run each"), "{t}");
        for w in ["select", "fields", "utf8"] {
            assert_eq!(
                t.lines().filter(|l| l.starts_with(&format!("{w} "))).count(),
                2,
                "{w}: {t}"
            );
        }
        assert!(t.contains("as `fastcsv select`; columns 1,2"), "{t}");
        let j = ok(&["bench", &file, "--sizes", "64K", "--runs", "1", "--threads", "2", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["threads"], 2);
        assert_eq!(v["works"], serde_json::json!(["count", "rows"]));
        let threads: Vec<u64> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["threads"].as_u64().unwrap())
            .collect();
        assert_eq!(threads, [2, 2, 1, 1], "count on 2 threads, rows on one");
        assert!(v["results"].as_array().unwrap().iter().all(|r| r["rows"] == 20_000));
    }

    /// Several FILEs, or --files DIR: each file timed on its own, by size.
    #[test]
    fn bench_many_files() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::create_dir(&small).unwrap();
        for (name, rows) in [("a.csv", 4), ("b.csv", 5), ("c.csv", 2000)] {
            std::fs::write(small.join(name), format!("x,y\n{}", "1,2\n".repeat(rows))).unwrap();
        }
        let d = small.display().to_string();
        let svg = dir.path().join("files.svg").display().to_string();
        let t = ok(&["bench", "--files", &d, "--runs", "2", "--plot", &svg]);
        assert!(t.starts_with("small: 3 files, "), "{t}");
        assert!(
            t.contains("2009 rows, work=count,rows, 2 runs each, warm cache, each file timed"),
            "{t}"
        );
        // The default read() buffer alone, beside mmap and the automatic choice.
        for label in
            ["≤32 x2  count  mmap", "≤32 x2  count  read 128K", "≤32 x2  count  auto: read"]
        {
            assert!(t.contains(label), "{label}: {t}");
        }
        assert_eq!(t.lines().filter(|l| l.starts_with('≤')).count(), 2 * 2 * 3, "{t}");
        let svg = std::fs::read_to_string(&svg).unwrap();
        assert!(svg.contains("time per file (µs, log scale)"), "{svg}");
        // The same files named one by one, with --sizes.
        let (a, c) = (small.join("a.csv"), small.join("c.csv"));
        let (a, c) = (a.display().to_string(), c.display().to_string());
        let j =
            ok(&["bench", &a, &c, "--sizes", "1K,4K", "--runs", "1", "--json", "--work", "rows"]);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!((v["files"].as_u64(), v["rows"].as_u64()), (Some(2), Some(2004)));
        let labels: Vec<&str> =
            v["results"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["mmap", "read 1K", "read 4K", "auto: read"].repeat(2));
    }
}
