//! The commands. Each reads through [`Input`] and writes to a buffered
//! standard output; none allocates per field.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use fastcsv::{Position, RowBuf, Selection};

use super::args::{
    BenchArgs, CatArgs, CheckArgs, CountArgs, Format, FrequencyArgs, HeadersArgs, InputArgs,
    OutputArgs, PartsArgs, SelectArgs, SliceArgs, StatsArgs,
};
use super::frequency::{self, Buckets, Frequencies, Shards};
use super::output::{RecordWriter, WriteError};
use super::stats::{self, Stats};
use super::stdout::Stdout;
use super::{inputs, json_keys_utf8, path_arg, write_failure, Failure, Input, OutputFileError};

/// Standard output, buffered; every write's error is reported (see
/// [`Stdout`]).
fn stdout() -> BufWriter<Stdout> {
    BufWriter::with_capacity(256 << 10, Stdout::new())
}

/// Where `select` and `cat` write: standard output, or the `-o` file.
pub(super) type Sink = BufWriter<Box<dyn Write>>;

/// Opens the output: the `-o` file (created or truncated; errors name it)
/// or standard output; buffered either way. A file that is also
/// one of the `inputs` is refused before it is touched: truncating it
/// would lose the data (and a mapped input would fault).
pub(super) fn sink(path: Option<&Path>, inputs: &[Option<&Path>]) -> Result<Sink, Failure> {
    let w: Box<dyn Write> = match path {
        None => Box::new(Stdout::new()),
        Some(p) => {
            let name = p.display().to_string();
            if let Some(i) = inputs.iter().flatten().find(|i| same_file(i, p)) {
                return Err(Failure::Fatal(format!(
                    "{name}: is also an input ({}); write the output elsewhere",
                    i.display()
                )));
            }
            let file = File::create(p).map_err(|e| Failure::Fatal(format!("{name}: {e}")))?;
            Box::new(NamedFile { file, name })
        }
    };
    Ok(BufWriter::with_capacity(256 << 10, w))
}

/// Whether `a` and `b` name the same existing file.
pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    }
}

/// The `-o` file, whose write errors carry its name.
struct NamedFile {
    file: File,
    name: String,
}

impl NamedFile {
    fn named(&self, e: io::Error) -> io::Error {
        let kind = e.kind();
        io::Error::new(kind, OutputFileError { name: self.name.clone(), source: e })
    }
}

impl Write for NamedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush().map_err(|e| self.named(e))
    }
}

/// `fastcsv count`: one number, or `PATH<TAB>COUNT` lines and a total.
pub fn count(a: &CountArgs) -> Result<(), Failure> {
    let paths = inputs(&a.files)?;
    let mut out = stdout();
    let mut total = 0u64;
    // Counting does not need rectangular records: a ragged row is a record.
    let mut args = a.input.clone();
    args.flexible = true;
    for p in &paths {
        let mut input = Input::open(*p, &args, false)?;
        let n = input.count(&a.par.parallel())?;
        total += n;
        if paths.len() > 1 {
            writeln!(out, "{}\t{n}", input.name)?;
            out.flush()?;
        }
    }
    if paths.len() > 1 {
        writeln!(out, "total\t{total}")?;
    } else {
        writeln!(out, "{total}")?;
    }
    Ok(out.flush()?)
}

/// A usage error (exit status 2) for a compressed `path`: it `why`, so
/// decompress it first. A file that cannot be opened passes (the command
/// reports that itself).
fn not_compressed(path: &Path, why: &str) -> Result<(), Failure> {
    match fastcsv::Codec::of_path(path) {
        Ok(Some(c)) => Err(Failure::Usage(format!(
            "{}: a {c}-compressed file {why}; decompress it first",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// `fastcsv parts`: the file's parts, one line each.
pub fn parts(a: &PartsArgs) -> Result<(), Failure> {
    let path = a.file.as_path();
    if path == Path::new("-") {
        return Err(Failure::Usage("parts needs a file: standard input cannot be cut".into()));
    }
    not_compressed(path, "has no byte ranges of its CSV (parts are byte ranges of the file)")?;
    if !super::reads_again(path) {
        return Err(Failure::Usage(format!(
            "{}: parts needs a regular file (parts are byte ranges of the file)",
            path.display()
        )));
    }
    let d = a.input.dialect(Some(path), false)?;
    let mut splitter = fastcsv::split::Splitter::new(&d);
    if let Some(n) = a.par.jobs {
        splitter = splitter.threads(n as usize);
    }
    let parts =
        splitter.split_path(path, a.size as u64).map_err(|e| Failure::Fatal(e.to_string()))?;
    let mut out = stdout();
    if !a.json {
        writeln!(out, "part,start,end,lines,records")?;
    }
    for p in &parts {
        let (k, s, e, l, r) = (p.index, p.start, p.end, p.lines, p.records);
        if a.json {
            writeln!(out, r#"{{"part":{k},"start":{s},"end":{e},"lines":{l},"records":{r}}}"#)?;
        } else {
            writeln!(out, "{k},{s},{e},{l},{r}")?;
        }
    }
    Ok(out.flush()?)
}

/// `fastcsv headers`: `N   name` lines (or names alone).
pub fn headers(a: &HeadersArgs) -> Result<(), Failure> {
    let paths = inputs(&a.files)?;
    let mut out = stdout();
    // With several inputs, names alone, as xsv (which turns `-j` on).
    let numbered = !a.just_names && paths.len() == 1;
    let mut seen: Vec<Vec<u8>> = Vec::new();
    for p in paths {
        let mut input = Input::open(p, &a.input, false)?;
        let Some(h) = first_record(&mut input)? else {
            continue;
        };
        // xsv aligns the names with a tab writer (cells at least 2 wide,
        // then 2 spaces of padding): the same columns.
        let width = h.len().to_string().len().max(2) + 2;
        for (i, name) in h.iter().enumerate() {
            if a.input.no_headers {
                // No names: the columns of the first record, by number.
                writeln!(out, "{}", i + 1)?;
                continue;
            }
            if a.intersect {
                if seen.iter().any(|s| s == name) {
                    continue;
                }
                seen.push(name.to_vec());
            }
            if numbered {
                write!(out, "{:<width$}", i + 1)?;
            }
            out.write_all(name)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(out.flush()?)
}

/// The header row, or with `--no-headers` the first record.
fn first_record(input: &mut Input) -> Result<Option<RowBuf>, Failure> {
    if input.reader.dialect().headers() {
        return Ok(input.reader.headers()?.cloned());
    }
    Ok(input.reader.read_row()?.map(|r| r.to_owned()))
}

/// The header row's fields as slices.
pub(super) fn fields(h: &RowBuf) -> Vec<&[u8]> {
    h.iter().collect()
}

/// Records up to this many fields wide are selected from through
/// [`Selection::all`] when the output allows (see `select`).
const RAW_SELECT_MAX_WIDTH: usize = 64;

/// `fastcsv select`.
pub fn select(a: &SelectArgs) -> Result<(), Failure> {
    let mut input = Input::open(path_arg(a.file.as_deref()), &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    // The columns are resolved against the header row (or the first
    // record): an input without one has no columns to select, as in xsv.
    if header.is_none() && input.reader.dialect().headers() {
        return Err(Failure::Fatal(format!("{name}: no header row to select columns from")));
    }
    let delimiter = a.output.delimiter().map_err(Failure::Usage)?;
    let format = a.output.to;
    // The output file is created once the selection is known to be valid,
    // so that a misspelt column leaves an existing file alone.
    let out = || sink(a.output.output.as_deref(), &[path_arg(a.file.as_deref())]);
    // With a header the selection is resolved now; without, on the first
    // record (whose width is then the number of columns).
    let (cols, w, keys, width) = match &header {
        Some(h) => {
            let names = fields(h);
            let c = a.columns.resolve(Some(&names), names.len()).map_err(Failure::Usage)?;
            let picked: Vec<&[u8]> = c.iter().map(|&i| names[i]).collect();
            if format == Format::Jsonl {
                json_keys_utf8(&name, &picked, h.position(), |f| c[f])?;
            }
            let mut w = RecordWriter::new(out()?, format, delimiter, Some(&picked));
            if format != Format::Jsonl {
                w.write(picked.iter().copied())
                    .map_err(|e| write_failure(&name, e, h.position(), |f| c[f]))?;
            }
            (c, w, Some(picked), names.len())
        }
        None => {
            let Some(row) = input.reader.read_row()? else {
                return Err(Failure::Fatal(format!("{name}: no record to select columns from")));
            };
            let c = a.columns.resolve(None, row.len()).map_err(Failure::Usage)?;
            let mut w = RecordWriter::new(out()?, format, delimiter, None);
            w.write(c.iter().map(|&i| row.get(i).unwrap_or_default()))
                .map_err(|e| write_failure(&name, e, row.position(), |f| c[f]))?;
            (c, w, None, row.len())
        }
    };
    let make = || RecordWriter::new(Vec::new(), format, delimiter, keys.as_deref());
    // CSV out as it came in: the records the block scanner takes are
    // written from their fields' input bytes (see `cat`), located by the
    // delimiter offsets of `Selection::raw`, which costs less than
    // building the selected fields (unescaped) and quoting them again
    // (`raw` rather than `all`, which also unescapes fields with doubled
    // quotes). Not for wide records, where keeping every delimiter's
    // offset costs more than skipping over them.
    //
    // Columns in ascending order (the common case) may go further: the
    // block scanner marks the bytes of their CSV in a bit mask
    // (`Selection::csv_columns`), which runs of records are copied
    // through (`Batch::csv_run`), so that no delimiter offset is kept and
    // no field is looked at. `Selection::csv_output` takes that mode where
    // it is the faster one on this CPU.
    let requotes = make().requotes(input.reader.dialect());
    let fast = Selection::csv_output(cols.iter().copied());
    let in_order = requotes && fast.has_csv_columns();
    let requote = !in_order && requotes && width <= RAW_SELECT_MAX_WIDTH;
    let sel = if in_order {
        fast
    } else if requote {
        Selection::raw()
    } else {
        Selection::new(cols.iter().copied())
    };
    let mut out = w.into_inner()?;
    input.par_each_batch(
        &sel,
        &a.par.parallel(),
        make,
        |batch, w| {
            let mut i = 0;
            while i < batch.len() {
                let row = batch.row(i);
                if in_order {
                    let (n, run) = batch.csv_run(i);
                    if n > 0 {
                        run.append_to(w.get_mut());
                        i += n;
                        continue;
                    }
                    // One selected column, empty: `write_pieces` quotes it.
                    if let Some(pieces) = row.csv_pieces() {
                        w.write_pieces(pieces)?;
                        i += 1;
                        continue;
                    }
                }
                i += 1;
                let fail = |e| write_failure(&name, e, row.position(), |f| cols[f]);
                let raw = if requote { row.raw_fields() } else { None };
                if let Some(f) = raw {
                    if w.write_requoted_cols(&f, &cols) {
                        continue;
                    }
                }
                if !requote {
                    w.write((0..row.len()).map(|j| row.get(j))).map_err(fail)?;
                } else {
                    // Every field is kept: pick the columns (empty past
                    // the record's end, as `Selection::new` gives them).
                    let n = row.len();
                    w.write(cols.iter().map(|&c| if c < n { row.get(c) } else { &[][..] }))
                        .map_err(fail)?;
                }
            }
            Ok(())
        },
        |w| drain(w, &mut out),
    )?;
    Ok(out.flush()?)
}

/// `fastcsv slice`: the header row, then the records in a range of
/// indices; the records before it are skipped by their ends alone, and
/// reading stops at the range's end.
pub fn slice(a: &SliceArgs) -> Result<(), Failure> {
    // An end before the start is a mistake, as xsv says (before anything
    // is read or written).
    if let (Some(s), Some(e)) = (a.start, a.end) {
        if e < s {
            return Err(Failure::Usage(format!(
                "the end of the range ({e}) is before its start ({s})"
            )));
        }
    }
    let (start, end) = a.range();
    let mut input = Input::open(path_arg(a.file.as_deref()), &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, a.file.as_deref())?;
    // The records before the range are only counted (no field is built),
    // a mapped file's whole chunks on several threads; never past the
    // range's end, where reading stops.
    let skip = end.map_or(start, |e| start.min(e));
    let mut i = input.reader.par_skip_rows(skip, &a.par.parallel())?;
    while end.is_none_or(|e| i < e) {
        let Some(row) = input.reader.read_row()? else { break };
        if i >= start {
            w.write(row.iter()).map_err(|e| write_failure(&name, e, row.position(), |f| f))?;
        }
        i += 1;
    }
    Ok(w.into_inner()?.flush()?)
}

/// The writer of whole records of the input `name` with `header` (if
/// any): the output named by `out` (checked not to be the input `file`),
/// the header row written first (JSON Lines keys checked instead).
pub(super) fn whole_records_writer(
    name: &str,
    header: Option<&RowBuf>,
    out: &OutputArgs,
    file: Option<&Path>,
) -> Result<RecordWriter<Sink>, Failure> {
    let delimiter = out.delimiter().map_err(Failure::Usage)?;
    let format = out.to;
    if let (Some(h), Format::Jsonl) = (header, format) {
        json_keys_utf8(name, &fields(h), h.position(), |f| f)?;
    }
    let sink = sink(out.output.as_deref(), &[path_arg(file)])?;
    Ok(match header {
        Some(h) => {
            let names = fields(h);
            let mut w = RecordWriter::new(sink, format, delimiter, Some(&names));
            if format != Format::Jsonl {
                w.write(names.iter().copied())
                    .map_err(|e| write_failure(name, e, h.position(), |f| f))?;
            }
            w
        }
        None => RecordWriter::new(sink, format, delimiter, None),
    })
}

/// Moves what a worker's writer holds to standard output: straight to
/// the file descriptor when it is large (a batch or a chunk of records),
/// to save a copy through the buffer.
pub(super) fn drain(w: &mut RecordWriter<Vec<u8>>, out: &mut Sink) -> Result<(), Failure> {
    let v = w.get_mut();
    if v.len() >= 16 << 10 {
        out.flush()?;
        out.get_mut().write_all(v)?;
    } else {
        out.write_all(v)?;
    }
    v.clear();
    Ok(())
}

/// `fastcsv cat`: every input's records, the shared header once.
///
/// All header rows (with `--no-headers`, the widths of the first records,
/// unless `--flexible`) are compared before anything is written, so a
/// mismatch leaves no partial output. Regular files are opened twice (once
/// for the header, once to stream) so that only one is open at a time;
/// standard input and every other input that cannot be read again (a pipe
/// named by a path, such as `<(...)` or `/dev/stdin`, a FIFO, a device) is
/// kept open from the first pass, with the first record read from it.
pub fn cat(a: &CatArgs) -> Result<(), Failure> {
    if let Some((w, rest)) = a.files.split_first() {
        if w.as_os_str() == "columns" && !w.exists() {
            if a.output.to != Format::Csv || a.output.out_delimiter.is_some() {
                return Err(Failure::Usage(
                    "cat columns writes CSV: no --to or --out-delimiter".into(),
                ));
            }
            return super::catcols::run(rest, a.pad, &a.input, a.output.output.as_deref());
        }
    }
    if a.pad {
        return Err(Failure::Usage("--pad is for `cat columns`".into()));
    }
    let delimiter = a.output.delimiter().map_err(Failure::Usage)?;
    let format = a.output.to;
    let paths = inputs(xsv_mode(&a.files)?)?;
    // The first input with a header row, and that row.
    let mut first: Option<(String, RowBuf)> = None;
    // The inputs kept open from the first pass, by index in `paths`.
    let mut kept: Vec<Option<Input>> = paths.iter().map(|_| None).collect();
    // Without header rows, the records of all inputs must have the width
    // of the first one's, as within one input: the first input with a
    // record and that width; the first record of each input kept open.
    let same_width = a.input.no_headers && !a.input.flexible;
    let mut width: Option<(String, usize)> = None;
    let mut kept_first: Vec<Option<RowBuf>> = paths.iter().map(|_| None).collect();
    // No progress bar for the header pass.
    let header_pass = InputArgs { quiet: true, ..a.input.clone() };
    for (i, p) in paths.iter().enumerate() {
        let mut input = Input::open(*p, &header_pass, false)?;
        // Only a regular file gives the same bytes when opened again.
        let keep = p.is_none_or(|p| !std::fs::metadata(p).is_ok_and(|m| m.is_file()));
        if same_width {
            if let Some(row) = input.reader.read_row()? {
                let (n, pos) = (row.len(), row.position());
                match &width {
                    Some((first_name, w)) if *w != n => {
                        return Err(Failure::Fatal(format!(
                            "{}:{}: record {}, byte {}: found record with {n} fields, but the \
                             records of {first_name} have {w} fields",
                            input.name, pos.line, pos.record, pos.byte
                        )));
                    }
                    Some(_) => {}
                    None => width = Some((input.name.clone(), n)),
                }
                if keep {
                    kept_first[i] = Some(row.to_owned());
                }
            }
        }
        if let Some(h) = input.reader.headers()? {
            match &first {
                // The fields as parsed (as `headers` lists them): a byte
                // order mark or quotes around a name make no difference.
                Some((first_name, fh)) if !fh.iter().eq(h.iter()) => {
                    let show = |r: &RowBuf| {
                        String::from_utf8_lossy(&r.iter().collect::<Vec<_>>().join(&b","[..]))
                            .into_owned()
                    };
                    return Err(Failure::Fatal(format!(
                        "{}: the header row ({}) differs from {first_name}'s ({})",
                        input.name,
                        show(h),
                        show(fh)
                    )));
                }
                Some(_) => {}
                None => first = Some((input.name.clone(), h.clone())),
            }
        }
        if keep {
            kept[i] = Some(input);
        }
    }
    if let (Some((name, h)), Format::Jsonl) = (&first, format) {
        json_keys_utf8(name, &fields(h), h.position(), |f| f)?;
    }
    let out = sink(a.output.output.as_deref(), &paths)?;
    let (keys, w) = match &first {
        Some((name, h)) => {
            let names = fields(h);
            let mut w = RecordWriter::new(out, format, delimiter, Some(&names));
            if format != Format::Jsonl {
                w.write(names.iter().copied())
                    .map_err(|e| write_failure(name, e, h.position(), |f| f))?;
            }
            (Some(names), w)
        }
        None => (None, RecordWriter::new(out, format, delimiter, None)),
    };
    let mut out = w.into_inner()?;
    for (i, p) in paths.iter().enumerate() {
        let mut input = match kept[i].take() {
            Some(input) => input,
            None => {
                let mut input = Input::open(*p, &a.input, false)?;
                input.reader.headers()?;
                input
            }
        };
        let name = input.name.clone();
        let d = input.reader.dialect();
        let in_delim = d.delimiter();
        let make = || RecordWriter::new(Vec::new(), format, delimiter, keys.as_deref());
        // The first record of an input kept open, read in the first pass
        // to compare its width.
        if let Some(row) = kept_first[i].take() {
            let mut w = make();
            w.write(row.iter()).map_err(|e| write_failure(&name, e, row.position(), |f| f))?;
            drain(&mut w, &mut out)?;
        }
        // When the output is CSV as the input came in: the records the
        // block scanner took are written from their input bytes, dropping
        // only the quotes the output does not need, which the scanner
        // marks (`Selection::csv`); runs of them ending in LF in one go
        // (`Batch::csv_run`).
        let requote = make().requotes(d);
        let sel = if requote { Selection::csv() } else { Selection::all() };
        input.par_each_batch(
            &sel,
            &a.par.parallel(),
            make,
            |batch, w| {
                let mut i = 0;
                while i < batch.len() {
                    if requote {
                        let (n, run) = batch.csv_run(i);
                        if n > 0 {
                            run.append_to(w.get_mut());
                            i += n;
                            continue;
                        }
                    }
                    let row = batch.row(i);
                    i += 1;
                    let fail = |e| write_failure(&name, e, row.position(), |f| f);
                    if let Some(raw) = row.raw() {
                        if w.write_plain_row(&row, in_delim)
                            || w.write_raw(raw, in_delim).map_err(fail)?
                        {
                            continue;
                        }
                    }
                    if let Some(pieces) = row.csv_pieces() {
                        if w.write_pieces(pieces)? {
                            continue;
                        }
                    }
                    w.write(row.iter()).map_err(fail)?;
                }
                Ok(())
            },
            |w| drain(w, &mut out),
        )?;
    }
    Ok(out.flush()?)
}

/// `cat`'s FILE arguments without xsv's mode word: `xsv cat rows A B` is
/// `fastcsv cat A B`, so a leading `rows` that names no file is dropped
/// (`columns` is handled by `cat` before).
fn xsv_mode(files: &[std::path::PathBuf]) -> Result<&[std::path::PathBuf], Failure> {
    match files.split_first() {
        Some((w, rest)) if w.as_os_str() == "rows" && !w.exists() => Ok(rest),
        _ => Ok(files),
    }
}

/// `fastcsv check`: strict parsing; every problem on its own line.
pub fn check(a: &CheckArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let size = |p: &Path| std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len());
    let before = file.and_then(size);
    if let Some((name, records)) = check_clean_in_parallel(a)? {
        let s = if records == 1 { "" } else { "s" };
        let mut out = stdout();
        writeln!(out, "{name}: ok, {records} record{s}")?;
        return Ok(out.flush()?);
    }
    // Widths are checked here, not by the reader: a ragged record's fields
    // are then checked too (the reader's error would leave them unread).
    let check_width = !a.input.flexible;
    let mut args = a.input.clone();
    args.flexible = true;
    let mut input = Input::open(file, &args, true)?;
    let name = input.name.clone();
    // Cut since the parallel pass found something: the problems of the
    // shorter file (a record cut in the middle) are not the ones found.
    if let (Some(p), Some(b), Some(now)) = (file, before, input.size) {
        if now < b {
            return Err(fastcsv::Error::new(fastcsv::ErrorKind::FileChanged).with_path(p).into());
        }
    }
    let mut out = stdout();
    let mut problems = 0u64;
    // Records seen, as one past the highest 0-based record index (a record
    // that ends the input unterminated is not in `records_read`).
    let mut seen = 0u64;
    // Each problem up to `--max-errors` is written; one more means that the
    // check stopped before the input's end (true once it is found).
    let mut report = |out: &mut BufWriter<_>, line: String| -> Result<bool, Failure> {
        if problems >= a.max_errors {
            return Ok(true);
        }
        writeln!(out, "{line}")?;
        problems += 1;
        Ok(false)
    };
    // A problem's line, as the reader's errors are written.
    let line = |pos: Position, what: &dyn std::fmt::Display| -> String {
        format!("{name}:{}: record {}, byte {}: {what}", pos.line, pos.record, pos.byte)
    };
    let ragged = |pos: Position, expected: usize, found: usize| -> String {
        line(pos, &fastcsv::ErrorKind::RaggedRow { expected, found })
    };
    // Field contents the parser accepts but an export should not hold.
    let content = |pos: Position, i: usize, f: &[u8]| -> Option<String> {
        let at = |what: String| line(pos, &what);
        if let Some(z) = memchr::memchr(0, f) {
            return Some(at(format!("NUL byte in column {} (byte {z} of the field)", i + 1)));
        }
        simdutf8::compat::from_utf8(f).err().map(|e| {
            at(format!("invalid UTF-8 in column {} (byte {} of the field)", i + 1, e.valid_up_to()))
        })
    };
    let guard = input.size_guard();
    let mut full = false;
    let header = match input.reader.headers() {
        Ok(h) => h.cloned(),
        Err(e) if !stops_check(&e) => {
            seen = seen.max(e.position().map_or(0, |p| p.record + 1));
            full = report(&mut out, e.to_string())?;
            None
        }
        Err(e) => return Err(e.into()),
    };
    // The width every record must have: the header's, or the first
    // record's.
    let mut width = header.as_ref().map(|h| h.len());
    if let Some(h) = &header {
        for (i, f) in h.iter().enumerate() {
            if let Some(p) = content(h.position(), i, f) {
                full = full || report(&mut out, p)?;
            }
        }
    }
    while !full {
        match input.reader.read_row() {
            Ok(Some(row)) => {
                let w = *width.get_or_insert(row.len());
                if check_width && row.len() != w {
                    full = report(&mut out, ragged(row.position(), w, row.len()))?;
                }
                for (i, f) in row.iter().enumerate() {
                    if full {
                        break;
                    }
                    if let Some(p) = content(row.position(), i, f) {
                        // NUL bytes may be a cut file's zeros (see
                        // `SizeGuard`).
                        if memchr::memchr(0, f).is_some() {
                            if let Some(changed) = guard.shrank(row.position()) {
                                return Err(changed);
                            }
                        }
                        full = report(&mut out, p)?;
                    }
                }
                let at = row.position().byte;
                input.handed_out(at);
            }
            Ok(None) => break,
            Err(e) if !stops_check(&e) => {
                seen = seen.max(e.position().map_or(0, |p| p.record + 1));
                full = report(&mut out, e.to_string())?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let had_header = input.reader.dialect().headers() && seen.max(input.reader.records_read()) > 0;
    let records = seen.max(input.reader.records_read()) - u64::from(had_header);
    let s = |n: u64| if n == 1 { "" } else { "s" };
    if problems == 0 {
        writeln!(out, "{name}: ok, {records} record{}", s(records))?;
    } else {
        let more = if full {
            format!(" (stopped after --max-errors {})", a.max_errors)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{name}: {problems} problem{} in {records} record{}{more}",
            s(problems),
            s(records)
        )?;
    }
    out.flush()?;
    if problems > 0 {
        return Err(Failure::Reported);
    }
    Ok(())
}

/// `fastcsv check`'s fast path for a mapped regular file on several CPUs:
/// the input's name and record count when nothing at all is wrong with it,
/// `None` as soon as anything is (or when the file cannot be read twice):
/// the sequential check then reports every problem with its position.
fn check_clean_in_parallel(a: &CheckArgs) -> Result<Option<(String, u64)>, Failure> {
    let par = a.par.parallel();
    let Some(path) = path_arg(a.file.as_deref()) else {
        return Ok(None);
    };
    // Only a regular file can be read again by the sequential check.
    if par.thread_count() < 2 || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut input = Input::open(Some(path), &a.input, true)?;
    if input.reader.source_kind() != fastcsv::SourceKind::Mapped {
        return Ok(None);
    }
    let clean = |f: &[u8]| memchr::memchr(0, f).is_none() && simdutf8::compat::from_utf8(f).is_ok();
    match input.reader.headers() {
        Ok(Some(h)) if h.iter().all(clean) => {}
        Ok(None) => {}
        Ok(Some(_)) => return Ok(None),
        Err(e) => return Pass::from(e).into_result(),
    }
    let checked = input.par_each_batch(
        &Selection::all(),
        &par,
        || (),
        |batch, _| {
            for row in batch.iter() {
                if !row.iter().all(clean) {
                    return Err(Pass::Unclean);
                }
            }
            Ok(())
        },
        |_| Ok(()),
    );
    if let Err(e) = checked {
        return e.into_result();
    }
    let read = input.reader.records_read();
    let had_header = input.reader.dialect().headers() && read > 0;
    Ok(Some((input.name, read - u64::from(had_header))))
}

/// Why `check`'s parallel pass stopped.
enum Pass {
    /// A problem in the data: the sequential check finds and reports it.
    Unclean,
    /// The file changed while it was read, or could not be read: reading it
    /// again would check another file (or fail again), so this is the
    /// command's error.
    Stop(Failure),
}

impl From<fastcsv::Error> for Pass {
    fn from(e: fastcsv::Error) -> Pass {
        if stops_check(&e) {
            Pass::Stop(e.into())
        } else {
            Pass::Unclean
        }
    }
}

impl Pass {
    /// `None` (check again, sequentially), or the error.
    fn into_result<T>(self) -> Result<Option<T>, Failure> {
        match self {
            Pass::Unclean => Ok(None),
            Pass::Stop(f) => Err(f),
        }
    }
}

/// Errors `check` reports as the command's (exit status 1, on standard
/// error), not as problems in the data: I/O errors and a file that changed
/// while it was read.
fn stops_check(e: &fastcsv::Error) -> bool {
    !e.is_data() || matches!(e.kind(), fastcsv::ErrorKind::FileChanged)
}

/// `fastcsv stats`: a table (or JSON) with one entry per column.
pub fn stats(a: &StatsArgs) -> Result<(), Failure> {
    let mut input = Input::open(path_arg(a.file.as_deref()), &a.input, false)?;
    let header = input.reader.headers()?.cloned();
    let mut names: Vec<String> = match &header {
        Some(h) => h.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect(),
        None => Vec::new(),
    };
    let (picked, visit) = header_columns(a.select.as_ref(), header.as_ref().map(fields))?;
    if let Some(p) = &picked {
        names = p.iter().map(|&j| names[j].clone()).collect();
    }
    let picked = picked.as_deref();
    let which = stats::Which {
        median: a.median || a.everything,
        mode: a.mode || a.everything,
        cardinality: a.cardinality || a.everything,
        quartiles: a.everything,
        nulls: a.nulls,
    };
    let keep = which.keeps_values();
    // The default (xsv) output needs no distinct counts nor lengths in
    // characters.
    let xsv_only = !(a.json || a.csv || a.table);
    let mut st = Stats::default().keeping_values(keep).xsv_only(xsv_only);
    // Columns whose distinct count is already a sketch: chunks count them
    // with a sketch from the start (the same result, without an exact set
    // per chunk).
    let sketched = std::sync::RwLock::new(Vec::new());
    let hint = || sketched.read().map(|s| s.clone()).unwrap_or_default();
    input.par_each_batch::<_, Failure>(
        &visit,
        &a.par.parallel(),
        || Stats::with_sketches(&hint()).keeping_values(keep).xsv_only(xsv_only),
        |batch, s| {
            for row in batch.iter() {
                match picked {
                    // Columns a short record lacks are not counted.
                    Some(p) => {
                        s.add_some(p.len(), picked_fields(p, &row));
                    }
                    None => s.add(row.len(), row.iter()),
                }
            }
            Ok(())
        },
        |s| {
            let seeded =
                Stats::with_sketches(&st.sketched()).keeping_values(keep).xsv_only(xsv_only);
            st.merge(std::mem::replace(s, seeded));
            if let Ok(mut h) = sketched.write() {
                *h = st.sketched();
            }
            Ok(())
        },
    )?;
    // Summaries are made one at a time as they are written (see
    // `stats::write_table`).
    let mut n = st.width(&names);
    let mut cols: Option<Vec<usize>> = None;
    if let (None, Some(sel)) = (picked, &a.select) {
        // Without a header row: the columns of the widest record.
        let c = sel.resolve(None, n).map_err(Failure::Usage)?;
        n = c.len();
        cols = Some(c);
    }
    let column = |i: usize| cols.as_ref().map_or(i, |c| c[i]);
    let row = |i: usize| st.summary(column(i), &names);
    let mut out = sink(a.output.as_deref(), &[path_arg(a.file.as_deref())])?;
    if a.json {
        stats::write_json(&mut out, n, row)?;
    } else if a.csv {
        stats::write_csv(&mut out, n, row)?;
    } else if a.table {
        stats::write_table(&mut out, n, row)?;
    } else {
        // As xsv: header names, or the index from 0 in the output; a
        // column past the header row's (`--flexible`) by its number from 1,
        // as in the other outputs and `frequency`.
        let name = |i: usize| match &header {
            Some(_) => names.get(i).cloned().unwrap_or_else(|| (i + 1).to_string()),
            None => i.to_string(),
        };
        let style = super::fmt::CsvStyle::for_output(a.output.as_deref());
        stats::write_xsv(&mut out, style, &which, n, name, |i| st.xsv_cells(column(i), &which))?;
    }
    Ok(out.flush()?)
}

/// The columns `sel` picks from the header row `names`, and the selection
/// to read them with (only their fields); without a selection or a header
/// row, `None` and every field (the caller resolves against the widest
/// record then).
fn header_columns(
    sel: Option<&super::selection::Selection>,
    names: Option<Vec<&[u8]>>,
) -> Result<(Option<Vec<usize>>, Selection), Failure> {
    match (sel, names) {
        (Some(sel), Some(n)) => {
            let p = sel.resolve(Some(&n), n.len()).map_err(Failure::Usage)?;
            let visit = Selection::new(p.iter().copied());
            Ok((Some(p), visit))
        }
        _ => Ok((None, Selection::all())),
    }
}

/// The fields of `row` read with the selection of columns `picked`, `None`
/// for a column the record lacks (a short record: not counted).
fn picked_fields<'r>(
    picked: &'r [usize],
    row: &fastcsv::SelectedRow<'r>,
) -> impl Iterator<Item = Option<&'r [u8]>> + 'r {
    let n = row.field_count();
    picked.iter().zip(row.iter()).map(move |(&j, v)| (j < n).then_some(v))
}

/// `fastcsv frequency`: CSV of `field,value,count`, per column its most
/// frequent values.
pub fn frequency(a: &FrequencyArgs) -> Result<(), Failure> {
    let mut input = Input::open(path_arg(a.file.as_deref()), &a.input, false)?;
    let names: Option<Vec<Vec<u8>>> =
        input.reader.headers()?.map(|h| h.iter().map(<[u8]>::to_vec).collect());
    let refs: Option<Vec<&[u8]>> = names.as_ref().map(|n| n.iter().map(Vec::as_slice).collect());
    let (picked, visit) = header_columns(a.select.as_ref(), refs)?;
    // Each thread counts a batch, then moves the counts into the shared
    // shards itself: the merge runs on every thread, not on this one.
    let shared = Shards::default();
    input.par_each_batch::<_, Failure>(
        &visit,
        &a.par.parallel(),
        <(Frequencies, Buckets)>::default,
        |batch, (f, buckets)| {
            for row in batch.iter() {
                match &picked {
                    // Columns a short record lacks are not counted.
                    Some(p) => f.add_some(picked_fields(p, &row)),
                    None => f.add(row.iter()),
                }
            }
            f.drain_into(&shared, buckets);
            Ok(())
        },
        |_| Ok(()),
    )?;
    let counts = shared.into_parts();
    // Each column output: its name and where its counts are.
    let columns: Vec<(Vec<u8>, usize)> = match (&picked, &a.select) {
        (Some(p), _) => p
            .iter()
            .enumerate()
            .map(|(k, &j)| (names.as_ref().map_or_else(Vec::new, |n| n[j].clone()), k))
            .collect(),
        (None, Some(sel)) => {
            let cols = sel.resolve(None, frequency::width(&counts)).map_err(Failure::Usage)?;
            cols.into_iter().map(|j| ((j + 1).to_string().into_bytes(), j)).collect()
        }
        (None, None) => (0..frequency::width(&counts).max(names.as_ref().map_or(0, Vec::len)))
            .map(|j| {
                let name = names.as_ref().and_then(|n| n.get(j)).cloned();
                (name.unwrap_or_else(|| (j + 1).to_string().into_bytes()), j)
            })
            .collect(),
    };
    let out = sink(a.output.as_deref(), &[path_arg(a.file.as_deref())])?;
    // Tab-separated for an `-o` file named `*.tsv` or `*.tab`, as in xsv.
    let delim = super::fmt::CsvStyle::for_output(a.output.as_deref()).delimiter;
    let mut w = RecordWriter::new(out, Format::Csv, delim, None);
    let name = input.name.clone();
    let put = |w: &mut RecordWriter<_>, fields: [&[u8]; 3]| {
        w.write(fields).map_err(|e| write_failure(&name, e, Default::default(), |f| f))
    };
    put(&mut w, [b"field", b"value", b"count"])?;
    let top = frequency::Top {
        limit: a.limit,
        asc: a.asc,
        no_nulls: a.no_nulls,
        threads: a.par.parallel().thread_count(),
    };
    for (field, k) in &columns {
        // Sorted and formatted on every thread, a window of lines at a
        // time, and written in order here.
        frequency::each_top(
            &counts,
            *k,
            &top,
            |c| frequency_lines(field, c, delim),
            |b| -> Result<(), Failure> {
                let b = b.map_err(|e| write_failure(&name, e, Default::default(), |f| f))?;
                Ok(w.get_mut().write_all(&b)?)
            },
        )?;
    }
    Ok(w.into_inner()?.flush()?)
}

/// `frequency`'s output lines of `field`'s values and counts.
fn frequency_lines(field: &[u8], top: &[(&[u8], u64)], delim: u8) -> Result<Vec<u8>, WriteError> {
    // The field's name and the delimiter after it, written once (the
    // record `field,` ends with the delimiter and an empty field): every
    // line starts with them.
    let mut w = RecordWriter::new(Vec::new(), Format::Csv, delim, None);
    w.write([field, b""])?;
    let mut start = std::mem::take(w.get_mut());
    start.pop();
    let mut w = RecordWriter::new(
        Vec::with_capacity(top.len() * (start.len() + 16)),
        Format::Csv,
        delim,
        None,
    );
    let mut digits = [0u8; 20];
    for &(value, n) in top {
        let value = if value.is_empty() { &b"(NULL)"[..] } else { value };
        let n = decimal(n, &mut digits);
        let out = w.get_mut();
        out.extend_from_slice(&start);
        // A value without the bytes the writer quotes for (delimiter,
        // quote, CR, LF) is written as it is, as the writer writes it.
        if value.iter().any(|&b| b == delim || matches!(b, b'"' | b'\r' | b'\n')) {
            w.write([value, n])?;
        } else {
            out.extend_from_slice(value);
            out.push(delim);
            out.extend_from_slice(n);
            out.push(b'\n');
        }
    }
    Ok(std::mem::take(w.get_mut()))
}

/// `n` in decimal, written at the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// `fastcsv bench`: the `fastcsv::bench` harness on one file, or on many
/// files each timed on its own; a table or JSON on standard output, and
/// optionally an SVG chart.
pub fn bench(a: &BenchArgs) -> Result<(), Failure> {
    // `-` is standard input everywhere else, which cannot be read again.
    if a.file.iter().any(|f| f.as_os_str() == "-") {
        return Err(Failure::Usage(
            "-: bench needs a regular file (it reads the file many times)".into(),
        ));
    }
    let mut paths = a.file.clone();
    if let Some(dir) = &a.dir {
        paths.extend(fastcsv::bench::files_in(dir)?);
    }
    for path in &paths {
        not_compressed(path, "is never mapped: bench compares mmap and read() on plain files")?;
    }
    let per_file = a.dir.is_some() || paths.len() > 1;
    if per_file && a.threads.is_some_and(|n| n > 1) {
        return Err(Failure::Usage(
            "--threads is for one file: with several, each file is parsed on one thread".into(),
        ));
    }
    let mut opts = fastcsv::bench::BenchOptions {
        cold: a.cold,
        works: a.work.clone(),
        dialect: a.dialect()?,
        ..Default::default()
    };
    if let Some(n) = a.threads {
        opts.threads = n as usize;
    }
    if !a.sizes.is_empty() {
        opts.sizes = a.sizes.clone();
    } else if per_file {
        // Small files: the reader's default buffer, next to the map.
        opts.sizes = vec![fastcsv::DEFAULT_BUFFER_SIZE];
    }
    if let Some(n) = a.runs {
        // Asked for explicitly: exactly that many, however long it takes.
        opts.runs = n as usize;
        opts.time_budget = None;
    }
    let mut report = if per_file {
        fastcsv::bench::run_files(&paths, &opts)?
    } else {
        fastcsv::bench::run(&paths[0], &opts)?
    };
    report.command = Some(command_line());
    if let Some(p) = &a.plot {
        std::fs::write(p, report.to_svg())
            .map_err(|e| Failure::Fatal(format!("{}: {e}", p.display())))?;
    }
    let mut out = stdout();
    let text = if a.json { report.to_json() } else { report.to_table() };
    out.write_all(text.as_bytes())?;
    Ok(out.flush()?)
}

/// This process's command line, as a shell would take it back (arguments
/// with spaces or quotes single-quoted), starting `fastcsv`.
fn command_line() -> String {
    let mut words = vec!["fastcsv".to_string()];
    for arg in std::env::args_os().skip(1) {
        let a = arg.to_string_lossy();
        let plain = !a.is_empty()
            && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,=:+@%".contains(c));
        words.push(if plain { a.into_owned() } else { format!("'{}'", a.replace('\'', "'\\''")) });
    }
    words.join(" ")
}
