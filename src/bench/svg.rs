//! The report as an SVG chart: throughput (or time per file) with min-max
//! whiskers, one line per work and source, above a panel of user and
//! system CPU time per configuration, and the load warning when the machine
//! was busy.

use std::fmt::Write as _;

use super::report::xml;
use super::{format_size, BenchReport, ConfigResult};
use crate::source::SourceChoice;

const W: f64 = 900.0;
const H: f64 = 800.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = W - 240.0;
/// The top panel (throughput or time per file).
const TOP: f64 = 90.0;
const BOTTOM: f64 = 400.0;
/// The bottom panel (CPU time).
const CPU_TOP: f64 = 480.0;
const CPU_BOTTOM: f64 = 690.0;

/// A color per work (single file) or per source (files).
const COLORS: &[&str] =
    &["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];
/// A dash pattern per work in the per-file chart.
const DASHES: &[&str] = &["", "8 4", "2 3", "10 3 2 3", "4 4"];

/// One point: x (log2 of a size), y, and the y range of the runs.
struct Point<'a> {
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
    r: &'a ConfigResult,
}

/// One line of the top panel.
struct Series<'a> {
    name: String,
    color: &'static str,
    dash: &'static str,
    /// A horizontal line across the chart (the mapped source, which has no
    /// buffer size) rather than a line through points.
    flat: bool,
    points: Vec<Point<'a>>,
}

impl BenchReport {
    /// An SVG chart. For one file: throughput against `read()` buffer size
    /// (log scale), one line per work, the mapped source as a dashed
    /// horizontal line of the same color with its range shaded; for many
    /// files ([`run_files`](super::run_files)): time per file against file
    /// size, both log scales, one line per work and source. Every point has
    /// a min-max whisker (`class="whisker"`). Below, user and system CPU
    /// time per configuration as stacked bars (`class="cpu-user"`,
    /// `class="cpu-sys"`). When the machine was busy, the warning is inside
    /// the chart (`class="warning"`).
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("fastcsv-bench-svg-doc.csv");
    /// std::fs::write(&p, "a\n1\n").unwrap();
    /// let o = fastcsv::bench::BenchOptions { sizes: vec![1024, 4096], runs: 1, ..Default::default() };
    /// let svg = fastcsv::bench::run(&p, &o).unwrap().to_svg();
    /// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    /// assert!(svg.contains("throughput (MB/s)") && svg.contains("class=\"whisker\""));
    /// ```
    pub fn to_svg(&self) -> String {
        let per_file = self.is_per_file();
        let series = self.series();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
             viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">"
        );
        let _ = writeln!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
        let heading = if per_file {
            "fastcsv bench: time per file by file size and source"
        } else {
            "fastcsv bench: throughput by source and buffer size"
        };
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" \
             font-weight=\"bold\">{heading}</text>",
            W / 2.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"42\" text-anchor=\"middle\" fill=\"#444\" font-size=\"11\">{}</text>",
            W / 2.0,
            xml(&self.title())
        );
        let mut sub = vec![format!("machine: {}", self.machine)];
        if let Some(c) = &self.command {
            // About as much as fits on a line.
            let c: String = if c.chars().count() > 150 {
                c.chars().take(149).chain(['…']).collect()
            } else {
                c.clone()
            };
            sub.insert(0, c);
        }
        for (i, line) in sub.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\" \
                 font-size=\"10\">{}</text>",
                W / 2.0,
                57 + 13 * i,
                xml(line)
            );
        }

        // Axes: x over the sizes (one octave of padding each side).
        let xs = series.iter().flat_map(|l| l.points.iter().filter(|_| !l.flat).map(|p| p.x));
        let (mut x0, mut x1) =
            xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
        if !x0.is_finite() {
            (x0, x1) = (10.0, 22.0);
        }
        x0 = x0.floor() - 1.0;
        x1 = x1.ceil() + 1.0;
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (RIGHT - LEFT);
        let all = || series.iter().flat_map(|l| l.points.iter());
        let y = if per_file {
            let lo = all().map(|p| p.lo).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let hi = all().map(|p| p.hi).fold(0.0f64, f64::max);
            Axis::log(lo, hi, TOP, BOTTOM)
        } else {
            Axis::linear(all().map(|p| p.hi).fold(0.0f64, f64::max), TOP, BOTTOM)
        };
        y.draw(
            &mut s,
            if per_file { "time per file (µs, log scale)" } else { "throughput (MB/s)" },
        );
        let every = if x1 - x0 > 14.0 { 2 } else { 1 };
        let mut e = x0 as i64;
        while e as f64 <= x1 {
            let h = px(e as f64);
            let _ = writeln!(
                s,
                "<line x1=\"{h:.1}\" y1=\"{BOTTOM}\" x2=\"{h:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
                BOTTOM + 5.0
            );
            if e.rem_euclid(every) == 0 && (0..63).contains(&e) {
                let _ = writeln!(
                    s,
                    "<text x=\"{h:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    BOTTOM + 19.0,
                    format_size(1u64 << e)
                );
            }
            e += 1;
        }
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{BOTTOM}\" x2=\"{RIGHT}\" y2=\"{BOTTOM}\" stroke=\"#333\"/>"
        );
        let x_title = if per_file {
            "file size (bytes, log scale: files of at most this size and more than half)"
        } else {
            "read() buffer size (bytes, log scale)"
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x_title}</text>",
            (LEFT + RIGHT) / 2.0,
            BOTTOM + 38.0
        );

        // The series, with their whiskers.
        for (li, l) in series.iter().enumerate() {
            let dash = if l.dash.is_empty() {
                String::new()
            } else {
                format!(" stroke-dasharray=\"{}\"", l.dash)
            };
            if l.flat {
                for p in &l.points {
                    let (a, b) = (y.at(p.hi), y.at(p.lo));
                    let _ = writeln!(
                        s,
                        "<rect x=\"{LEFT}\" y=\"{a:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" \
                         fill-opacity=\"0.12\"/>",
                        RIGHT - LEFT,
                        (b - a).max(0.5),
                        l.color
                    );
                    whisker(&mut s, LEFT + 8.0 + 10.0 * li as f64, a, b, l.color);
                    let v = y.at(p.y);
                    let _ = writeln!(
                        s,
                        "<line x1=\"{LEFT}\" y1=\"{v:.1}\" x2=\"{RIGHT}\" y2=\"{v:.1}\" stroke=\"{}\" \
                         stroke-width=\"2\"{dash}><title>{}</title></line>",
                        l.color,
                        xml(&point_title(self, p))
                    );
                }
                continue;
            }
            let pts: Vec<String> =
                l.points.iter().map(|p| format!("{:.1},{:.1}", px(p.x), y.at(p.y))).collect();
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
                pts.join(" "),
                l.color
            );
            for p in &l.points {
                whisker(&mut s, px(p.x), y.at(p.hi), y.at(p.lo), l.color);
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>",
                    px(p.x),
                    y.at(p.y),
                    l.color,
                    xml(&point_title(self, p))
                );
            }
        }

        // Legend.
        let lx = RIGHT + 20.0;
        let lh = 18.0 * series.len() as f64 + 30.0;
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"{TOP}\" width=\"215\" height=\"{lh}\" fill=\"white\" stroke=\"#999\"/>"
        );
        for (i, l) in series.iter().enumerate() {
            let ly = TOP + 16.0 + 18.0 * i as f64;
            let dash = if l.dash.is_empty() {
                String::new()
            } else {
                format!(" stroke-dasharray=\"{}\"", l.dash)
            };
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" \
                 stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                lx + 8.0,
                lx + 38.0,
                l.color,
                lx + 44.0,
                ly + 4.0,
                xml(&l.name)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#444\" font-size=\"10\">whiskers: fastest to slowest{}</text>",
            lx + 8.0,
            TOP + lh - 8.0,
            if per_file { " file" } else { " run" }
        );

        if self.busy() {
            let (b, a) = self.load.unwrap_or_default();
            let _ = writeln!(
                s,
                "<text class=\"warning\" x=\"{:.1}\" y=\"{:.1}\" fill=\"#c00\" font-size=\"11\" font-weight=\"bold\">\
                 machine busy: load average {b:.2} before, {a:.2} after, on {} CPUs: timings are \
                 noisy</text>",
                LEFT + 8.0,
                TOP + 14.0,
                self.cpus
            );
        }
        self.cpu_panel(&mut s);
        s.push_str("</svg>\n");
        s
    }

    /// The lines of the top panel.
    fn series(&self) -> Vec<Series<'_>> {
        let per_file = self.is_per_file();
        let mut out: Vec<Series<'_>> = Vec::new();
        for (wi, &work) in self.works.iter().enumerate() {
            let mut keys: Vec<(SourceChoice, Option<usize>)> = Vec::new();
            for r in self.results.iter().filter(|r| r.work == work) {
                let key = if per_file || r.choice == SourceChoice::Mmap {
                    (r.choice, r.buffer_size)
                } else {
                    // Every buffer size on one line.
                    (SourceChoice::Buffered, None)
                };
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            for (ki, key) in keys.into_iter().enumerate() {
                let members = self.results.iter().filter(|r| {
                    r.work == work
                        && if per_file || key.0 == SourceChoice::Mmap {
                            (r.choice, r.buffer_size) == key
                        } else {
                            r.choice == SourceChoice::Buffered
                        }
                });
                let points: Vec<Point<'_>> = members
                    .map(|r| {
                        if per_file {
                            let g = r.group.map_or(1, |g| g.max_size);
                            let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
                            Point {
                                x: (g as f64).log2(),
                                y: us(r.median),
                                lo: us(r.min),
                                hi: us(r.max),
                                r,
                            }
                        } else {
                            let rate = |d: std::time::Duration| {
                                let t = d.as_secs_f64();
                                if t > 0.0 {
                                    self.bytes as f64 / t / 1e6
                                } else {
                                    0.0
                                }
                            };
                            let x = r.buffer_size.map_or(0.0, |n| (n as f64).log2());
                            Point { x, y: r.mb_per_s, lo: rate(r.max), hi: rate(r.min), r }
                        }
                    })
                    .collect();
                let src = match key {
                    (SourceChoice::Mmap, _) => "mmap".to_string(),
                    (SourceChoice::Auto, _) => "auto".to_string(),
                    (_, Some(n)) => format!("read {}", format_size(n as u64)),
                    (_, None) => "read()".to_string(),
                };
                let (color, dash) = if per_file {
                    (COLORS[ki % COLORS.len()], DASHES[wi % DASHES.len()])
                } else {
                    (
                        COLORS[wi % COLORS.len()],
                        if key.0 == SourceChoice::Mmap { "8 5" } else { "" },
                    )
                };
                let flat = !per_file && key.0 == SourceChoice::Mmap;
                out.push(Series {
                    name: format!("{}: {src}", work.as_str()),
                    color,
                    dash,
                    flat,
                    points,
                });
            }
        }
        out
    }

    /// User and system CPU time per configuration, as stacked bars grouped
    /// by work (and file group).
    fn cpu_panel(&self, s: &mut String) {
        let per_file = self.is_per_file();
        let scale = if per_file { 1e6 } else { 1.0 };
        let total = |r: &ConfigResult| (r.user_s + r.sys_s) * scale;
        let y = Axis::linear(
            self.results.iter().map(total).fold(0.0f64, f64::max),
            CPU_TOP,
            CPU_BOTTOM,
        );
        let unit = if per_file { "CPU µs per file" } else { "CPU seconds per run" };
        y.draw(s, unit);
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">CPU time: user \
             (dark) and system (light), mean {}</text>",
            (LEFT + RIGHT) / 2.0,
            CPU_TOP - 14.0,
            if per_file { "per file" } else { "per run" }
        );
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{CPU_BOTTOM}\" x2=\"{RIGHT}\" y2=\"{CPU_BOTTOM}\" stroke=\"#333\"/>"
        );
        // One slot per bar, one empty slot between groups.
        let key = |r: &ConfigResult| (r.work, r.group.map(|g| g.max_size));
        let mut slots = 0usize;
        let mut last = None;
        for r in &self.results {
            if last.is_some_and(|k| k != key(r)) {
                slots += 1;
            }
            last = Some(key(r));
            slots += 1;
        }
        let slot = (RIGHT - LEFT) / slots.max(1) as f64;
        let bw = (slot * 0.7).min(28.0);
        let (mut i, mut last, mut group_start) = (0usize, None, LEFT);
        for (n, r) in self.results.iter().enumerate() {
            if last.is_some_and(|k| k != key(r)) {
                i += 1;
            }
            if last != Some(key(r)) {
                group_start = LEFT + slot * i as f64;
            }
            last = Some(key(r));
            let cx = LEFT + slot * (i as f64 + 0.5);
            let color =
                COLORS[self.works.iter().position(|&w| w == r.work).unwrap_or(0) % COLORS.len()];
            let (u, sy) = (r.user_s * scale, r.sys_s * scale);
            let (yu, ys) = (y.at(u), y.at(u + sy));
            let _ = writeln!(
                s,
                "<rect class=\"cpu-user\" x=\"{:.1}\" y=\"{yu:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" \
                 fill=\"{color}\"><title>{}: user {u:.4}</title></rect>\
                 <rect class=\"cpu-sys\" x=\"{:.1}\" y=\"{ys:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" \
                 fill=\"{color}\" fill-opacity=\"0.35\"><title>{}: system {sy:.4}</title></rect>",
                cx - bw / 2.0,
                (CPU_BOTTOM - yu).max(0.0),
                xml(&bar_name(r)),
                cx - bw / 2.0,
                (yu - ys).max(0.0),
                xml(&bar_name(r)),
            );
            let short = match (r.choice, r.buffer_size) {
                (SourceChoice::Mmap, _) => "mmap".to_string(),
                (SourceChoice::Auto, _) => "auto".to_string(),
                (_, Some(b)) => format_size(b as u64),
                _ => "read".to_string(),
            };
            let _ = writeln!(
                s,
                "<text transform=\"translate({cx:.1} {:.1}) rotate(-60)\" text-anchor=\"end\" \
                 font-size=\"{}\">{}</text>",
                CPU_BOTTOM + 10.0,
                if slot < 16.0 { 7 } else { 10 },
                xml(&short)
            );
            // The group's name under its last bar's slot range.
            let next = self.results.get(n + 1).map(key);
            if next != Some(key(r)) {
                let mid = (group_start + LEFT + slot * (i as f64 + 1.0)) / 2.0;
                // Per file, the works are told apart by their colors (the
                // panel's legend): the size alone fits under the group.
                let name = match r.group {
                    Some(g) => format!("≤{}", format_size(g.max_size)),
                    None => r.work.as_str().to_string(),
                };
                let _ = writeln!(
                    s,
                    "<text x=\"{mid:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"{}\" \
                     font-weight=\"bold\">{}</text>",
                    CPU_BOTTOM + 62.0,
                    if per_file { 9 } else { 11 },
                    xml(&name)
                );
            }
            i += 1;
        }
        // The panel's legend: a color per work.
        let lx = RIGHT + 20.0;
        for (i, w) in self.works.iter().enumerate() {
            let ly = CPU_TOP + 18.0 * i as f64;
            let color = COLORS[i % COLORS.len()];
            let _ = writeln!(
                s,
                "<rect x=\"{lx}\" y=\"{ly:.1}\" width=\"12\" height=\"12\" fill=\"{color}\"/>\
                 <rect x=\"{:.1}\" y=\"{ly:.1}\" width=\"12\" height=\"12\" fill=\"{color}\" \
                 fill-opacity=\"0.35\"/><text x=\"{:.1}\" y=\"{:.1}\">{}: user, system</text>",
                lx + 12.0,
                lx + 30.0,
                ly + 10.0,
                w.as_str()
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#444\" font-size=\"10\">read() copies into the \
             buffer in the kernel (system time); a mapped file's pages are faulted in (system time \
             too)</text>",
            LEFT,
            H - 12.0
        );
    }
}

fn bar_name(r: &ConfigResult) -> String {
    match r.group {
        Some(g) => format!("{} ≤{} {}", r.work.as_str(), format_size(g.max_size), r.label()),
        None => format!("{} {}", r.work.as_str(), r.label()),
    }
}

fn point_title(rep: &BenchReport, p: &Point<'_>) -> String {
    let r = p.r;
    if rep.is_per_file() {
        format!(
            "{}: {:.1} µs per file (median of {}), {:.1} - {:.1}",
            bar_name(r),
            p.y,
            r.times.len(),
            p.lo,
            p.hi
        )
    } else {
        format!(
            "{}: {:.1} MB/s (median of {}), {:.1} - {:.1}",
            bar_name(r),
            p.y,
            r.times.len(),
            p.lo,
            p.hi
        )
    }
}

/// A vertical min-max whisker with caps.
fn whisker(s: &mut String, x: f64, top: f64, bottom: f64, color: &str) {
    let _ = writeln!(
        s,
        "<path class=\"whisker\" d=\"M{:.1} {top:.1}H{:.1}M{x:.1} {top:.1}V{bottom:.1}M{:.1} \
         {bottom:.1}H{:.1}\" stroke=\"{color}\" stroke-width=\"1.2\" fill=\"none\"/>",
        x - 4.0,
        x + 4.0,
        x - 4.0,
        x + 4.0
    );
}

/// A y axis: linear from 0, or log10 over decades.
struct Axis {
    log: bool,
    v0: f64,
    v1: f64,
    step: f64,
    top: f64,
    bottom: f64,
}

impl Axis {
    fn linear(max: f64, top: f64, bottom: f64) -> Axis {
        let step = nice_step(max.max(1e-9) / 5.0);
        let v1 = ((max / step).floor() + 1.0) * step;
        Axis { log: false, v0: 0.0, v1, step, top, bottom }
    }

    fn log(lo: f64, hi: f64, top: f64, bottom: f64) -> Axis {
        let (lo, hi) = if lo.is_finite() && hi > 0.0 { (lo, hi.max(lo)) } else { (1.0, 10.0) };
        let v0 = lo.log10().floor();
        let v1 = (hi.log10().ceil()).max(v0 + 1.0);
        Axis { log: true, v0, v1, step: 1.0, top, bottom }
    }

    /// The y pixel of value `v`.
    fn at(&self, v: f64) -> f64 {
        let t = if self.log { v.max(1e-12).log10() } else { v };
        self.bottom - (t - self.v0) / (self.v1 - self.v0) * (self.bottom - self.top)
    }

    /// Grid lines, ticks and the axis title.
    fn draw(&self, s: &mut String, title: &str) {
        let mut t = self.v0;
        while t <= self.v1 + self.step / 2.0 {
            let value = if self.log { 10f64.powf(t) } else { t };
            let v = self.at(value);
            let _ = writeln!(
                s,
                "<line x1=\"{LEFT}\" y1=\"{v:.1}\" x2=\"{RIGHT}\" y2=\"{v:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT - 6.0,
                v + 4.0,
                fmt_tick(value)
            );
            t += self.step;
        }
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#333\"/>\
             <text transform=\"translate(24 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            self.top,
            self.bottom,
            (self.top + self.bottom) / 2.0,
            xml(title)
        );
    }
}

/// 1, 2 or 5 times a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|&s| s >= x).unwrap_or(10.0 * p)
}

fn fmt_tick(y: f64) -> String {
    if y.fract() == 0.0 {
        format!("{y:.0}")
    } else {
        let t = format!("{y:.6}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(130.0), 200.0);
        assert_eq!(nice_step(400.0), 500.0);
        assert_eq!(nice_step(1000.0), 1000.0);
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(fmt_tick(0.1 + 0.2), "0.3");
        assert_eq!(fmt_tick(1000.0), "1000");
    }

    #[test]
    fn log_axis_covers_whole_decades() {
        let a = Axis::log(35.0, 4200.0, 0.0, 300.0);
        assert_eq!((a.v0, a.v1), (1.0, 4.0));
        assert_eq!(a.at(10.0), 300.0);
        assert_eq!(a.at(10_000.0), 0.0);
    }
}
