//! The report as an aligned text table and as JSON.

use std::fmt::Write as _;
use std::time::Duration;

use super::{format_size, BenchReport, ConfigResult, Work};
use crate::source::SourceChoice;

impl BenchReport {
    /// One line describing the input and the settings.
    pub(super) fn title(&self) -> String {
        let name = self
            .path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let size = if self.bytes >= 1_000_000 {
            format!("{:.1} MB", self.bytes as f64 / 1e6)
        } else {
            format!("{} bytes", self.bytes)
        };
        let what = if self.is_per_file() {
            format!("{name}: {} files, {size} in all", self.files)
        } else {
            format!("{name}: {size}")
        };
        let works: Vec<&str> = self.works.iter().map(|w| w.as_str()).collect();
        format!(
            "{what}, {} row{}, work={}, {} run{} each, {}, {}",
            self.rows,
            plural(self.rows as usize),
            works.join(","),
            self.runs,
            plural(self.runs),
            if self.cold { "cold cache" } else { "warm cache" },
            if self.is_per_file() {
                "each file timed on its own".to_string()
            } else {
                format!("{} thread{}", self.threads, plural(self.threads))
            }
        )
    }

    /// Whether this is a [`run_files`](super::run_files) report (times are
    /// per file).
    pub fn is_per_file(&self) -> bool {
        self.results.first().is_some_and(|r| r.group.is_some())
    }

    /// The mapped result of the same work (and file group) as `r`.
    fn mapped_of(&self, r: &ConfigResult) -> Option<&ConfigResult> {
        self.results
            .iter()
            .find(|m| m.work == r.work && m.group == r.group && m.choice == SourceChoice::Mmap)
    }

    /// `r`'s throughput relative to the mapped source's for the same work:
    /// `0.77x` means `r` took 1/0.77 times as long.
    fn vs_mmap(&self, r: &ConfigResult) -> String {
        match self.mapped_of(r) {
            Some(m) if m.mb_per_s > 0.0 => format!("{:.2}x", r.mb_per_s / m.mb_per_s),
            _ => "-".into(),
        }
    }

    /// An aligned text table, one configuration per line, then notes in
    /// parentheses: what each work runs, how the figures were taken, the
    /// machine and its load.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-table-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![1024], runs: 1, ..Default::default() };
    /// let t = fastcsv::bench::run(&p, &o).unwrap().to_table();
    /// assert!(t.lines().nth(1).unwrap().starts_with("work"));
    /// assert!(t.contains("read 1K") && t.contains("vs mmap"));
    /// ```
    pub fn to_table(&self) -> String {
        let per_file = self.is_per_file();
        let mut head: Vec<&str> = Vec::new();
        if per_file {
            head.push("files");
        }
        head.extend(["work", "source"]);
        if per_file {
            head.extend(["median/file", "min-max/file"]);
        } else {
            head.extend(["median", "min-max"]);
        }
        head.extend(["MB/s", "vs mmap", "CPU MB/s"]);
        if per_file {
            head.extend(["user µs/file", "sys µs/file", "minflt/file", "majflt/file"]);
        } else {
            head.extend(["user s", "sys s", "minflt", "majflt"]);
        }
        head.push(if self.rss_exact { "peak RSS+ MiB" } else { "maxrss+ MiB" });
        let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
        for r in &self.results {
            let mut row = Vec::new();
            if let Some(g) = r.group {
                row.push(format!("≤{} x{}", format_size(g.max_size), g.files));
            }
            row.push(r.work.as_str().to_string());
            row.push(r.label());
            row.push(dur(r.median));
            row.push(format!("{} - {}", dur(r.min), dur(r.max)));
            row.push(format!("{:.1}", r.mb_per_s));
            row.push(self.vs_mmap(r));
            row.push(format!("{:.1}", r.cpu_mb_per_s));
            if per_file {
                row.push(format!("{:.1}", r.user_s * 1e6));
                row.push(format!("{:.1}", r.sys_s * 1e6));
            } else {
                row.push(format!("{:.3}", r.user_s));
                row.push(format!("{:.3}", r.sys_s));
            }
            row.push(r.minor_faults.to_string());
            row.push(r.major_faults.to_string());
            row.push(mib(r.peak_rss_growth));
            rows.push(row);
        }
        let mut widths = vec![0usize; head.len()];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let left = if per_file { 3 } else { 2 };
        let mut out = self.title();
        out.push('\n');
        for row in &rows {
            let mut line = String::new();
            for (i, (cell, &w)) in row.iter().zip(&widths).enumerate() {
                let pad = w - cell.chars().count();
                if i > 0 {
                    line.push_str("  ");
                }
                if i < left {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                } else {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        for note in self.notes() {
            let _ = writeln!(out, "({note})");
        }
        out
    }

    /// The notes under the table (and in the chart): without parentheses.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let errors: Vec<String> = self
            .works
            .iter()
            .filter_map(|&w| {
                let n: u64 = self
                    .results
                    .iter()
                    .filter(|r| r.work == w && r.choice == SourceChoice::Mmap)
                    .map(|r| r.errors)
                    .sum();
                (n > 0).then(|| format!("{}: {n} data errors skipped per parse", w.as_str()))
            })
            .collect();
        notes.extend(errors);
        for &w in &self.works {
            let mut n = format!("{}: {}", w.as_str(), w.describe());
            if w == Work::Select && !self.select_columns.is_empty() {
                let c: Vec<String> =
                    self.select_columns.iter().map(|c| (c + 1).to_string()).collect();
                let _ = write!(n, "; columns {}", c.join(","));
            }
            if w.parallel() && self.threads > 1 && !self.is_per_file() {
                let _ = write!(
                    n,
                    "; {} threads: a mapped file is split across them, a read() stream is parsed on one",
                    self.threads
                );
            }
            notes.push(n);
        }
        let per =
            if self.is_per_file() { "per file, over every file and run" } else { "of the runs" };
        notes.push(format!(
            "median and fastest-slowest {per}; MB/s from the median; vs mmap: MB/s relative to mmap \
             for the same work; CPU and faults: means"
        ));
        if let Some(c) = &self.command {
            notes.push(format!("command: {c}"));
        }
        notes.push(format!("machine: {}", self.machine));
        if let Some((before, after)) = self.load {
            notes.push(format!(
                "load average {before:.2} before, {after:.2} after, {} CPUs{}",
                self.cpus,
                if self.busy() { ": the machine was busy, timings are noisy" } else { "" }
            ));
        }
        notes
    }

    /// The report as one JSON object, every run included. Keys: `file`,
    /// `files`, `bytes`, `rows`, `errors`, `work` (the first work), `works`,
    /// `threads`, `select_columns` (1-based), `runs`, `cold`, `rss_exact`,
    /// `cpus`, `machine`, `command`, `load_before`, `load_after`, `busy`,
    /// `started_unix`, `results`; each result has `work`, `source` (`mmap`,
    /// `read` or `auto`), `label`, `buffer_size`, `threads`, `read_ahead`,
    /// `group` (`null`, or `max_size`, `files`, `bytes`), `rows`, `errors`,
    /// `median_s`, `min_s`, `max_s`, `times_s` (every time: per run, or per
    /// file and run), `mb_per_s`, `vs_mmap`, `cpu_mb_per_s`, `user_s`,
    /// `sys_s`, `minor_faults`, `major_faults`, `peak_rss_growth_bytes` and
    /// `samples` (per run: `wall_s`, `user_s`, `sys_s`, `minor_faults`,
    /// `major_faults`).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-json-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![], runs: 1, ..Default::default() };
    /// let j = fastcsv::bench::run(&p, &o).unwrap().to_json();
    /// assert!(j.starts_with('{') && j.contains("\"source\": \"mmap\""));
    /// ```
    pub fn to_json(&self) -> String {
        let mut o = String::from("{\n");
        let _ = writeln!(o, "  \"file\": {},", json_str(&self.path.display().to_string()));
        let _ = writeln!(o, "  \"files\": {},", self.files);
        let _ = writeln!(o, "  \"bytes\": {},", self.bytes);
        let _ = writeln!(o, "  \"rows\": {},", self.rows);
        let _ = writeln!(o, "  \"errors\": {},", self.errors);
        let first = self.works.first().map_or("count", |w| w.as_str());
        let _ = writeln!(o, "  \"work\": {},", json_str(first));
        let works: Vec<String> = self.works.iter().map(|w| json_str(w.as_str())).collect();
        let _ = writeln!(o, "  \"works\": [{}],", works.join(", "));
        let _ = writeln!(o, "  \"threads\": {},", self.threads);
        let cols: Vec<String> = self.select_columns.iter().map(|c| (c + 1).to_string()).collect();
        let _ = writeln!(o, "  \"select_columns\": [{}],", cols.join(", "));
        let _ = writeln!(o, "  \"runs\": {},", self.runs);
        let _ = writeln!(o, "  \"cold\": {},", self.cold);
        let _ = writeln!(o, "  \"rss_exact\": {},", self.rss_exact);
        let _ = writeln!(o, "  \"cpus\": {},", self.cpus);
        let _ = writeln!(o, "  \"machine\": {},", json_str(&self.machine));
        let cmd = self.command.as_deref().map_or("null".into(), json_str);
        let _ = writeln!(o, "  \"command\": {cmd},");
        let (lb, la) = self.load.map_or(("null".into(), "null".into()), |(b, a)| (num(b), num(a)));
        let _ = writeln!(o, "  \"load_before\": {lb},");
        let _ = writeln!(o, "  \"load_after\": {la},");
        let _ = writeln!(o, "  \"busy\": {},", self.busy());
        let _ = writeln!(o, "  \"started_unix\": {},", self.started);
        o.push_str("  \"results\": [");
        for (i, r) in self.results.iter().enumerate() {
            o.push_str(if i == 0 { "\n" } else { ",\n" });
            let times: Vec<String> = r.times.iter().map(|t| num(t.as_secs_f64())).collect();
            let source = match (r.choice, r.source) {
                (SourceChoice::Auto, _) => "auto",
                (_, crate::SourceKind::Mapped) => "mmap",
                _ => "read",
            };
            let group = r.group.map_or("null".into(), |g| {
                format!(
                    "{{\"max_size\": {}, \"files\": {}, \"bytes\": {}}}",
                    g.max_size, g.files, g.bytes
                )
            });
            let samples: Vec<String> = r
                .samples
                .iter()
                .map(|s| {
                    format!(
                        "{{\"wall_s\": {}, \"user_s\": {}, \"sys_s\": {}, \"minor_faults\": {}, \
                         \"major_faults\": {}}}",
                        num(s.wall.as_secs_f64()),
                        num(s.user_s),
                        num(s.sys_s),
                        s.minor_faults,
                        s.major_faults
                    )
                })
                .collect();
            let vs = self
                .mapped_of(r)
                .filter(|m| m.mb_per_s > 0.0)
                .map_or("null".into(), |m| num(r.mb_per_s / m.mb_per_s));
            let _ = write!(
                o,
                "    {{\"work\": {}, \"source\": {}, \"label\": {}, \"buffer_size\": {}, \"threads\": {}, \
                 \"read_ahead\": {}, \"group\": {group}, \"rows\": {}, \"errors\": {}, \"median_s\": {}, \
                 \"min_s\": {}, \"max_s\": {}, \"times_s\": [{}], \"mb_per_s\": {}, \"vs_mmap\": {vs}, \
                 \"cpu_mb_per_s\": {}, \"user_s\": {}, \"sys_s\": {}, \"minor_faults\": {}, \
                 \"major_faults\": {}, \"peak_rss_growth_bytes\": {},\n     \"samples\": [{}]}}",
                json_str(r.work.as_str()),
                json_str(source),
                json_str(&r.label()),
                r.buffer_size.map_or("null".into(), |n| n.to_string()),
                r.threads,
                r.read_ahead,
                r.rows,
                r.errors,
                num(r.median.as_secs_f64()),
                num(r.min.as_secs_f64()),
                num(r.max.as_secs_f64()),
                times.join(", "),
                num(r.mb_per_s),
                num(r.cpu_mb_per_s),
                num(r.user_s),
                num(r.sys_s),
                r.minor_faults,
                r.major_faults,
                r.peak_rss_growth,
                samples.join(", ")
            );
        }
        o.push_str("\n  ]\n}\n");
        o
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A duration with a unit that keeps 3-4 significant digits:
/// `6.988 s`, `12.35 ms`, `45.2 µs`.
pub(super) fn dur(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn mib(n: u64) -> String {
    format!("{:.1}", n as f64 / (1024.0 * 1024.0))
}

/// Escapes a string for JSON and SVG text (both need `"` and `\` or `&<>`
/// handled; the callers pick).
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

pub(super) fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A finite JSON number (JSON has no NaN or infinity).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "null".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_their_digits() {
        assert_eq!(dur(Duration::from_millis(6988)), "6.988 s");
        assert_eq!(dur(Duration::from_micros(12_345)), "12.35 ms");
        assert_eq!(dur(Duration::from_nanos(45_200)), "45.2 µs");
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        assert_eq!(num(f64::NAN), "null");
    }
}
