//! Shared by `benches/parse.rs` (Criterion) and `examples/bench_report.rs`
//! (the 1 GiB report): the generated inputs and every engine under test.
//!
//! Each engine returns `(records, checksum)`; the checksum is the number of
//! fields plus their total length in bytes (after unquoting), so engines
//! that visit fields must agree on it, and the record count must equal the
//! generator's own count.
#![allow(dead_code)] // each includer uses a subset

#[path = "../../examples/gen_data.rs"]
mod gen_data;

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};

use fastcsv::{Dialect, ReaderBuilder, SourceChoice};

/// The buffer size for every buffered engine.
pub const BUFFER: usize = 128 * 1024;

/// The shapes, in report order.
pub const SHAPES: &[&str] = &["numeric", "text", "wide"];

/// A generated, page-cached input file.
pub struct Input {
    pub shape: String,
    pub path: PathBuf,
    pub map: memmap2::Mmap,
    pub stats: gen_data::Stats,
}

impl Input {
    /// The bytes of the file (mapped).
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}

/// `target/bench-data/SHAPE-SIZE.csv`, generated on first use, with its
/// statistics in a `.stats` file beside it.
pub fn input(shape: &str, size: &str) -> Input {
    let bytes = gen_data::parse_size(size).unwrap_or_else(|| panic!("bad size {size:?}"));
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("bench-data");
    std::fs::create_dir_all(&dir).expect("create target/bench-data");
    let path = dir.join(format!("{shape}-{size}.csv"));
    let stats_path = dir.join(format!("{shape}-{size}.stats"));
    let stats = match read_stats(&stats_path) {
        Some(st) if std::fs::metadata(&path).is_ok_and(|m| m.len() == st.bytes) => st,
        _ => {
            eprintln!("generating {} ...", path.display());
            let tmp = path.with_extension("tmp");
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
            let st = gen_data::generate(shape, bytes, gen_data::SEED, &mut w).expect("generate");
            drop(w);
            std::fs::rename(&tmp, &path).expect("rename");
            let line = format!("{} {} {}\n", st.records, st.bytes, st.newlines);
            std::fs::write(&stats_path, line).expect("write stats");
            st
        }
    };
    let file = File::open(&path).expect("open input");
    // SAFETY: the file is ours, in target/, and nobody truncates it while
    // the benchmark runs.
    let map = unsafe { memmap2::Mmap::map(&file).expect("mmap") };
    // Page the file in, so that every engine starts from the page cache.
    let mut sum = 0u64;
    for chunk in map.chunks(4096) {
        sum = sum.wrapping_add(u64::from(chunk[0]));
    }
    std::hint::black_box(sum);
    Input { shape: shape.to_string(), path, map, stats }
}

fn read_stats(p: &Path) -> Option<gen_data::Stats> {
    let s = std::fs::read_to_string(p).ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some(gen_data::Stats { records: it.next()??, bytes: it.next()??, newlines: it.next()?? })
}

/// Mapped (the whole file in memory) or read through a 128 KiB buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Mapped,
    Buffered,
}

impl Src {
    pub fn name(self) -> &'static str {
        match self {
            Src::Mapped => "mapped",
            Src::Buffered => "buffered",
        }
    }
}

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Count records.
    Count,
    /// Visit every field (zero-copy where the engine can).
    Fields,
    /// Visit three columns: first, middle, last.
    Select,
    /// Every field as validated UTF-8 `&str`.
    Utf8,
}

impl Task {
    pub fn name(self) -> &'static str {
        match self {
            Task::Count => "count",
            Task::Fields => "fields",
            Task::Select => "select",
            Task::Utf8 => "utf8",
        }
    }
}

/// One engine: a name and how to run it on an input.
pub struct Engine {
    pub name: &'static str,
    pub task: Task,
    pub src: Src,
    pub run: fn(&Input, Src) -> (u64, u64),
}

fn reader_for<'a>(input: &'a Input, src: Src) -> Box<dyn Read + 'a> {
    match src {
        Src::Mapped => Box::new(input.bytes()),
        Src::Buffered => Box::new(File::open(&input.path).expect("open")),
    }
}

/// Columns for `Task::Select`.
fn selected(shape: &str) -> [usize; 3] {
    match shape {
        "numeric" => [0, 9, 19],
        "text" => [0, 3, 7],
        _ => [0, 150, 299],
    }
}

fn fastcsv_reader(input: &Input, src: Src, block: bool) -> fastcsv::Reader<'static> {
    fastcsv_reader_with(input, src, block, None)
}

/// `ahead`: force the buffered source's read-ahead thread on or off
/// (`None`: the default choice, which is on for these 1 GiB files when two
/// CPUs are available).
fn fastcsv_reader_with(
    input: &Input,
    src: Src,
    block: bool,
    ahead: Option<bool>,
) -> fastcsv::Reader<'static> {
    let d = Dialect::builder().headers(false).build().expect("dialect");
    let choice = match src {
        Src::Mapped => SourceChoice::Mmap,
        Src::Buffered => SourceChoice::Buffered,
    };
    let mut b = ReaderBuilder::new();
    b.dialect(d).source(choice).buffer_size(BUFFER).block_scan(block);
    if let Some(on) = ahead {
        b.read_ahead(on);
    }
    b.from_path(&input.path).expect("open")
}

fn fastcsv_count(input: &Input, src: Src, block: bool) -> (u64, u64) {
    let n = fastcsv_reader(input, src, block).count_rows().expect("count");
    (n, 0)
}

/// Counting through the synchronous buffered source (no read-ahead).
fn fastcsv_count_sync(input: &Input, src: Src) -> (u64, u64) {
    let n = fastcsv_reader_with(input, src, true, Some(false)).count_rows().expect("count");
    (n, 0)
}

/// Every field through the synchronous buffered source (no read-ahead).
fn fastcsv_fields_sync(input: &Input, src: Src) -> (u64, u64) {
    let mut rdr = fastcsv_reader_with(input, src, true, Some(false));
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(row) = rdr.read_row().expect("row") {
        n += 1;
        for f in row.iter() {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

fn fastcsv_fields(input: &Input, src: Src, block: bool) -> (u64, u64) {
    let mut rdr = fastcsv_reader(input, src, block);
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(row) = rdr.read_row().expect("row") {
        n += 1;
        for f in row.iter() {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

fn fastcsv_select(input: &Input, src: Src) -> (u64, u64) {
    let cols = selected(&input.shape);
    let mut rdr = fastcsv_reader(input, src, true);
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(row) = rdr.read_row().expect("row") {
        n += 1;
        for &c in &cols {
            sum += 1 + row.get(c).map_or(0, <[u8]>::len) as u64;
        }
    }
    (n, sum)
}

/// Every field through `read_batch`: `Selection::all()` (fields walked from
/// the delimiter offsets the block scanner kept) or all columns by index
/// (`width`, the column-selecting loop).
fn fastcsv_batch_fields(input: &Input, src: Src, width: Option<usize>) -> (u64, u64) {
    let sel = match width {
        Some(w) => fastcsv::Selection::new(0..w),
        None => fastcsv::Selection::all(),
    };
    batch_fields(fastcsv_reader(input, src, true), sel)
}

/// Every field `sel` keeps, batch by batch.
fn batch_fields(mut rdr: fastcsv::Reader<'_>, mut sel: fastcsv::Selection) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(b) = rdr.read_batch(&mut sel).expect("batch") {
        for row in b.iter() {
            n += 1;
            for f in row.iter() {
                sum += 1 + f.len() as u64;
            }
        }
    }
    (n, sum)
}

/// Every field `sel` keeps, on every CPU (`Reader::par_batches`); the
/// record count and checksum are summed per chunk.
fn par_fields(input: &Input, sel: fastcsv::Selection) -> (u64, u64) {
    let mut rdr = fastcsv_reader(input, Src::Mapped, true);
    let (mut n, mut sum) = (0u64, 0u64);
    rdr.par_batches(
        &sel,
        &fastcsv::Parallel::new(),
        || (0u64, 0u64),
        |b, (k, s)| -> Result<(), fastcsv::Error> {
            for row in b.iter() {
                *k += 1;
                for f in row.iter() {
                    *s += 1 + f.len() as u64;
                }
            }
            Ok(())
        },
        |(k, s)| {
            n += std::mem::take(k);
            sum += std::mem::take(s);
            Ok(())
        },
    )
    .expect("par_batches");
    (n, sum)
}

/// Counting on every CPU (`Reader::par_count`).
fn par_count(input: &Input) -> (u64, u64) {
    let rdr = &mut fastcsv_reader(input, Src::Mapped, true);
    (rdr.par_count(&fastcsv::Parallel::new()).expect("par_count").0, 0)
}

/// The columns of `Task::Select` through `read_batch`.
fn fastcsv_batch_select(input: &Input, src: Src) -> (u64, u64) {
    let cols = selected(&input.shape);
    let mut rdr = fastcsv_reader(input, src, true);
    let mut sel = fastcsv::Selection::new(cols);
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(b) = rdr.read_batch(&mut sel).expect("batch") {
        for row in b.iter() {
            n += 1;
            for j in 0..row.len() {
                sum += 1 + row.get(j).len() as u64;
            }
        }
    }
    (n, sum)
}

fn fastcsv_utf8(input: &Input, src: Src) -> (u64, u64) {
    let mut rdr = fastcsv_reader(input, src, true);
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(row) = rdr.read_row().expect("row") {
        n += 1;
        // One UTF-8 check per record, as csv's StringRecord does.
        for f in row.str_iter().expect("utf8") {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

/// Every field into Arrow `utf8` columns (`fastcsv::arrow::Columns`:
/// copied per column, checked as UTF-8), the batches dropped as they come,
/// as a streaming consumer would.
fn fastcsv_arrow(input: &Input, src: Src) -> (u64, u64) {
    let rdr = fastcsv_reader(input, src, true);
    let mut cols = fastcsv::arrow::Columns::new(rdr).expect("columns");
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(b) = cols.next_batch().expect("batch") {
        n += b.rows() as u64;
        // The values' bytes plus one per value, as the other engines sum.
        for c in b.columns() {
            let c = c.as_utf8().expect("text columns");
            sum += c.data().len() as u64 + c.len() as u64;
        }
    }
    (n, sum)
}

fn simd_split_count(input: &Input, src: Src) -> (u64, u64) {
    let mut s = simd_csv::SplitterBuilder::new()
        .has_headers(false)
        .buffer_capacity(BUFFER)
        .from_reader(reader_for(input, src));
    (s.count_records().expect("count"), 0)
}

fn simd_zero_copy_fields(input: &Input, src: Src) -> (u64, u64) {
    let mut r = simd_csv::ZeroCopyReaderBuilder::new()
        .has_headers(false)
        .buffer_capacity(BUFFER)
        .from_reader(reader_for(input, src));
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(rec) = r.read_byte_record().expect("record") {
        n += 1;
        for f in rec.unescaped_iter() {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

fn simd_zero_copy_select(input: &Input, src: Src) -> (u64, u64) {
    let cols = selected(&input.shape);
    let mut r = simd_csv::ZeroCopyReaderBuilder::new()
        .has_headers(false)
        .buffer_capacity(BUFFER)
        .from_reader(reader_for(input, src));
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(rec) = r.read_byte_record().expect("record") {
        n += 1;
        for &c in &cols {
            sum += 1 + rec.unescape(c).map_or(0, |f| f.len()) as u64;
        }
    }
    (n, sum)
}

fn csv_builder() -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.has_headers(false).buffer_capacity(BUFFER);
    b
}

fn csv_byte_record(input: &Input, src: Src) -> (u64, u64) {
    let mut r = csv_builder().from_reader(reader_for(input, src));
    let mut rec = csv::ByteRecord::new();
    let (mut n, mut sum) = (0u64, 0u64);
    while r.read_byte_record(&mut rec).expect("record") {
        n += 1;
        for f in rec.iter() {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

fn csv_byte_record_count(input: &Input, src: Src) -> (u64, u64) {
    let mut r = csv_builder().from_reader(reader_for(input, src));
    let mut rec = csv::ByteRecord::new();
    let mut n = 0u64;
    while r.read_byte_record(&mut rec).expect("record") {
        n += 1;
    }
    (n, 0)
}

fn csv_string_record(input: &Input, src: Src) -> (u64, u64) {
    let mut r = csv_builder().from_reader(reader_for(input, src));
    let mut rec = csv::StringRecord::new();
    let (mut n, mut sum) = (0u64, 0u64);
    while r.read_record(&mut rec).expect("record") {
        n += 1;
        for f in rec.iter() {
            sum += 1 + f.len() as u64;
        }
    }
    (n, sum)
}

/// csv-core over the whole mapped file: `read_record` into fixed buffers.
fn csv_core(input: &Input, fields: bool) -> (u64, u64) {
    let mut rdr = csv_core::Reader::new();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 1024];
    let mut data = input.bytes();
    let (mut n, mut sum) = (0u64, 0u64);
    loop {
        let (res, nin, _nout, nend) = rdr.read_record(data, &mut out, &mut ends);
        data = &data[nin..];
        match res {
            csv_core::ReadRecordResult::InputEmpty => {}
            csv_core::ReadRecordResult::Record => {
                n += 1;
                if fields {
                    let mut start = 0;
                    for &e in &ends[..nend] {
                        sum += 1 + (e - start) as u64;
                        start = e;
                    }
                }
            }
            csv_core::ReadRecordResult::End => return (n, sum),
            r => panic!("csv-core: {r:?} (buffers too small)"),
        }
    }
}

/// The name of the fastcsv engines that read synchronously, without the
/// read-ahead thread (the plain "fastcsv" buffered engines use it).
pub const SYNC: &str = "fastcsv (no read-ahead)";

/// The engines that parse one file on every CPU (`Reader::par_batches`,
/// `Reader::par_count`).
pub const PAR: &str = "fastcsv parallel (all CPUs)";

/// Every engine, in report order.
pub fn engines() -> Vec<Engine> {
    use Src::*;
    use Task::*;
    vec![
        Engine { name: "fastcsv", task: Count, src: Mapped, run: |i, s| fastcsv_count(i, s, true) },
        Engine { name: PAR, task: Count, src: Mapped, run: |i, _| par_count(i) },
        Engine {
            name: "fastcsv",
            task: Count,
            src: Buffered,
            run: |i, s| fastcsv_count(i, s, true),
        },
        Engine { name: SYNC, task: Count, src: Buffered, run: fastcsv_count_sync },
        Engine {
            name: "fastcsv from_slice (pre-faulted map)",
            task: Count,
            src: Mapped,
            run: |i, _| {
                let d = Dialect::builder().headers(false).build().expect("dialect");
                let n = ReaderBuilder::new().dialect(d).from_slice(i.bytes()).count_rows();
                (n.expect("count"), 0)
            },
        },
        Engine {
            name: "fastcsv (state machine only)",
            task: Count,
            src: Mapped,
            run: |i, s| fastcsv_count(i, s, false),
        },
        Engine { name: "simd-csv Splitter", task: Count, src: Mapped, run: simd_split_count },
        Engine { name: "simd-csv Splitter", task: Count, src: Buffered, run: simd_split_count },
        Engine { name: "csv ByteRecord", task: Count, src: Mapped, run: csv_byte_record_count },
        Engine { name: "csv-core", task: Count, src: Mapped, run: |i, _| csv_core(i, false) },
        Engine {
            name: "memchr newlines (ceiling)",
            task: Count,
            src: Mapped,
            run: |i, _| (memchr::memchr_iter(b'\n', i.bytes()).count() as u64, 0),
        },
        Engine {
            name: "fastcsv",
            task: Fields,
            src: Mapped,
            run: |i, s| fastcsv_fields(i, s, true),
        },
        Engine {
            name: "fastcsv",
            task: Fields,
            src: Buffered,
            run: |i, s| fastcsv_fields(i, s, true),
        },
        Engine { name: SYNC, task: Fields, src: Buffered, run: fastcsv_fields_sync },
        Engine {
            name: "fastcsv read_batch all",
            task: Fields,
            src: Mapped,
            run: |i, s| fastcsv_batch_fields(i, s, None),
        },
        Engine {
            name: "fastcsv read_batch all",
            task: Fields,
            src: Buffered,
            run: |i, s| fastcsv_batch_fields(i, s, None),
        },
        Engine {
            name: PAR,
            task: Fields,
            src: Mapped,
            run: |i, _| par_fields(i, fastcsv::Selection::all()),
        },
        Engine {
            name: "fastcsv read_batch all, from_slice (pre-faulted map)",
            task: Fields,
            src: Mapped,
            run: |i, _| {
                let d = Dialect::builder().headers(false).build().expect("dialect");
                let rdr = ReaderBuilder::new().dialect(d).from_slice(i.bytes());
                batch_fields(rdr, fastcsv::Selection::all())
            },
        },
        Engine {
            name: "fastcsv read_batch columns",
            task: Fields,
            src: Mapped,
            run: |i, s| {
                let w = match i.shape.as_str() {
                    "numeric" => 20,
                    "text" => 8,
                    _ => 300,
                };
                fastcsv_batch_fields(i, s, Some(w))
            },
        },
        Engine {
            name: "fastcsv (state machine only)",
            task: Fields,
            src: Mapped,
            run: |i, s| fastcsv_fields(i, s, false),
        },
        Engine {
            name: "simd-csv ZeroCopyReader",
            task: Fields,
            src: Mapped,
            run: simd_zero_copy_fields,
        },
        Engine {
            name: "simd-csv ZeroCopyReader",
            task: Fields,
            src: Buffered,
            run: simd_zero_copy_fields,
        },
        Engine { name: "csv ByteRecord", task: Fields, src: Mapped, run: csv_byte_record },
        Engine { name: "csv ByteRecord", task: Fields, src: Buffered, run: csv_byte_record },
        Engine { name: "csv-core", task: Fields, src: Mapped, run: |i, _| csv_core(i, true) },
        Engine { name: "fastcsv", task: Select, src: Mapped, run: fastcsv_select },
        Engine { name: "fastcsv", task: Select, src: Buffered, run: fastcsv_select },
        Engine { name: "fastcsv read_batch", task: Select, src: Mapped, run: fastcsv_batch_select },
        Engine {
            name: PAR,
            task: Select,
            src: Mapped,
            run: |i, _| par_fields(i, fastcsv::Selection::new(selected(&i.shape))),
        },
        Engine {
            name: "fastcsv read_batch",
            task: Select,
            src: Buffered,
            run: fastcsv_batch_select,
        },
        Engine {
            name: "simd-csv ZeroCopyReader",
            task: Select,
            src: Mapped,
            run: simd_zero_copy_select,
        },
        Engine { name: "fastcsv", task: Utf8, src: Mapped, run: fastcsv_utf8 },
        Engine { name: "fastcsv", task: Utf8, src: Buffered, run: fastcsv_utf8 },
        Engine { name: "csv StringRecord", task: Utf8, src: Mapped, run: csv_string_record },
        Engine { name: "fastcsv arrow::Columns", task: Utf8, src: Mapped, run: fastcsv_arrow },
    ]
}

/// Runs `e` once and checks its answer: the record count is the
/// generator's (the newline count for the memchr ceiling).
pub fn run_checked(e: &Engine, input: &Input) -> (u64, u64) {
    let (n, sum) = (e.run)(input, e.src);
    let want =
        if e.name.starts_with("memchr") { input.stats.newlines } else { input.stats.records };
    assert_eq!(n, want, "{} {} {} on {}", e.name, e.task.name(), e.src.name(), input.shape);
    (n, sum)
}
