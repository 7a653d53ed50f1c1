//! The `bench` harness on a small file: its table, JSON and SVG.

use fastcsv::bench::{self, BenchOptions, Work};

fn small_report(work: Work) -> bench::BenchReport {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small bench.csv");
    let mut data = String::from("id,name,score\n");
    for i in 0..5000 {
        data.push_str(&format!("{i},\"name {i}, \"\"quoted\"\"\",{}\n", i % 97));
    }
    std::fs::write(&path, &data).unwrap();
    let opts =
        BenchOptions { sizes: vec![4096, 1024, 65536, 1024], runs: 3, work, ..Default::default() };
    let r = bench::run(&path, &opts).unwrap();
    assert_eq!(r.bytes, data.len() as u64);
    r
}

#[test]
fn every_configuration_is_measured_and_agrees() {
    for work in [Work::Count, Work::Fields, Work::Utf8] {
        let r = small_report(work);
        assert_eq!((r.rows, r.errors, r.runs), (5000, 0, 3));
        let labels: Vec<String> = r.results.iter().map(|c| c.label()).collect();
        assert_eq!(labels, ["mmap", "read 1K", "read 4K", "read 64K"], "sorted, deduplicated");
        assert_eq!(r.results[0].source, fastcsv::SourceKind::Mapped);
        for c in &r.results {
            assert_eq!(c.times.len(), 3);
            assert!(c.min <= c.median && c.median <= c.max);
            assert!(c.mb_per_s > 0.0);
            assert!(c.user_s >= 0.0 && c.sys_s >= 0.0);
            // Every run parsed the whole file: it cost some CPU time.
            assert!(c.user_s + c.sys_s > 0.0, "{}: no CPU time measured", c.label());
        }
    }
}

#[test]
fn data_errors_are_counted_and_io_errors_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ragged.csv");
    std::fs::write(&path, "a,b\n1,2\n3\n").unwrap();
    let opts = BenchOptions { sizes: vec![1024], runs: 1, ..Default::default() };
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
    assert!(lines[1].starts_with("source") && lines[1].contains("MB/s"), "{t}");
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
    assert!(lines[2].starts_with("mmap ") && lines[3].starts_with("read 1K"), "{t}");
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
    }
}

/// A small well-formedness check: tags nest and close, attributes are
/// quoted, text has no bare `<` or `&`.
fn check_xml(s: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
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
            let name = tag.split_whitespace().next().unwrap().trim_end_matches('/').to_string();
            names.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[gt + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(rest.trim().is_empty());
    names
}

#[test]
fn svg_is_well_formed_with_axes_legend_and_title() {
    let r = small_report(Work::Count);
    let svg = r.to_svg();
    let names = check_xml(&svg);
    assert_eq!(names[0], "svg");
    assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(names.iter().any(|n| n == "polyline"), "the buffered series");
    assert_eq!(names.iter().filter(|n| *n == "circle").count(), 3 + 1, "3 points + legend");
    assert!(svg.contains("fastcsv bench: throughput by source and buffer size"));
    assert!(svg.contains("read() buffer size (bytes, log scale)"));
    assert!(svg.contains("throughput (MB/s)"));
    assert!(svg.contains(">read() buffered</text>") && svg.contains(">mmap</text>"));
    assert!(svg.contains("stroke-dasharray"), "mmap as a dashed line");
    for tick in [">1K<", ">4K<", ">64K<"] {
        assert!(svg.contains(tick), "x tick {tick}");
    }
    // Only the mapped source: still a valid chart.
    let mut only_map = r.clone();
    only_map.results.truncate(1);
    check_xml(&only_map.to_svg());
}

#[test]
fn sizes_parse_like_the_cli_takes_them() {
    assert_eq!(bench::parse_sizes("1K,4K,128K,4M").unwrap(), vec![1024, 4096, 131072, 4 << 20]);
    assert!(bench::parse_sizes("1K,x").is_err());
    assert!(bench::parse_size("").is_err());
    assert!(bench::parse_size("99999999999999999999G").is_err());
    assert_eq!(Work::parse("utf8"), Some(Work::Utf8));
    let d = BenchOptions::default();
    assert_eq!((d.runs, d.cold, d.work), (3, false, Work::Count));
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
