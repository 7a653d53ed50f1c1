//! `fastcsv split`: records into files of N records, or into N pieces of
//! about equal size, each with the header row, as `xsv split`.
//!
//! Files are named by the template (`{}.csv` by default) with `{}` the
//! index of their first record, from 0. They are CSV with a comma (a tab
//! for a name ending in `.tsv` or `.tab`), whatever the input's
//! delimiter, as xsv writes them. `--chunks` cuts a regular file at
//! record starts with the exact splitter (`fastcsv::split::Splitter`),
//! which never cuts inside a quoted field.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use fastcsv::{ReaderBuilder, RowBuf};

use super::args::{tab_separated_name, Format, SplitArgs};
use super::fmt::{one_thread, CsvStyle};
use super::output::{CsvRewrite, RecordWriter};
use super::{path_arg, Failure, Input, OutputFileError};

/// A `--filename` template: the text before and after its one `{}`.
pub struct Template(String, String);

impl Template {
    /// Parses a template, which must hold `{}` exactly once.
    pub fn parse(s: &str) -> Result<Template, Failure> {
        let parts: Vec<&str> = s.split("{}").collect();
        if parts.len() != 2 {
            return Err(Failure::Usage(format!(
                "the --filename template `{s}` must contain `{{}}` exactly once"
            )));
        }
        Ok(Template(parts[0].into(), parts[1].into()))
    }

    /// True when the extension of the file names does not depend on the
    /// value (which [`partition`](super::partition) gives without dots):
    /// the text after `{}` holds a dot, or the text before holds none.
    pub fn fixed_extension(&self) -> bool {
        self.1.contains('.') || !self.0.contains('.')
    }

    /// The path in `dir` for `value`.
    pub fn path(&self, dir: &Path, value: &str) -> PathBuf {
        dir.join(format!("{}{value}{}", self.0, self.1))
    }
}

/// A file written by `split` or `partition`: its writer reports errors
/// with the file's name.
pub type FileWriter = RecordWriter<BufWriter<Named>>;

/// A file whose write errors carry its name.
pub struct Named {
    file: File,
    name: String,
}

impl Write for Named {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf).map_err(|e| self.named(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush().map_err(|e| self.named(e))
    }
}

impl Named {
    fn named(&self, e: std::io::Error) -> std::io::Error {
        let kind = e.kind();
        std::io::Error::new(kind, OutputFileError { name: self.name.clone(), source: e })
    }
}

/// Creates the directory `dir` (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Fatal(format!("{}: {e}", dir.display())))
}

/// Creates (or truncates) the file `path` and writes `header` to it;
/// `buffer` is the write buffer's size. A `path` that is the `input` file
/// is refused before it is truncated (a value of `partition`'s column, or
/// `split`'s file name, can name the input when OUTDIR holds it).
pub fn create(
    path: &Path,
    header: Option<&[&[u8]]>,
    buffer: usize,
    input: Option<&Path>,
) -> Result<FileWriter, Failure> {
    let name = path.display().to_string();
    if let Some(i) = input.filter(|i| super::commands::same_file(i, path)) {
        return Err(Failure::Fatal(format!(
            "{name}: is also the input ({}); write the files elsewhere",
            i.display()
        )));
    }
    let file = File::create(path).map_err(|e| Failure::Fatal(format!("{name}: {e}")))?;
    let out = BufWriter::with_capacity(buffer, Named { file, name });
    let mut w = RecordWriter::new(out, Format::Csv, file_style(path).delimiter, None);
    if let Some(h) = header {
        w.write(h.iter().copied()).map_err(|e| match e {
            super::output::WriteError::Io(e) => Failure::from(e),
            super::output::WriteError::Utf8 { .. } => unreachable!("CSV output takes any bytes"),
        })?;
    }
    Ok(w)
}

/// Flushes a finished file.
pub fn finish(w: FileWriter) -> Result<(), Failure> {
    w.into_inner()?.flush()?;
    Ok(())
}

/// `fastcsv split`.
pub fn split(a: &SplitArgs) -> Result<(), Failure> {
    let template = Template::parse(&a.filename)?;
    let file = path_arg(a.file.as_deref());
    if let Some(n) = a.chunks {
        let Some(path) = file else {
            return Err(Failure::Usage(
                "--chunks needs a file: standard input cannot be cut".into(),
            ));
        };
        return chunks(a, path, n, &template);
    }
    let mut input = Input::open(file, &a.input, false)?;
    let header = input.reader.headers()?.cloned();
    let names: Option<Vec<&[u8]>> = header.as_ref().map(|h| h.iter().collect());
    create_dir(&a.outdir)?;
    let mut w = create(&template.path(&a.outdir, "0"), names.as_deref(), 256 << 10, file)?;
    let rw =
        CsvRewrite::new(input.reader.dialect(), file_style(&template.path(&a.outdir, "0")), true);
    // Records are numbered from the first after the header row.
    let first = input.reader.records_read();
    // Each batch's records as CSV, and where files start in it: the
    // offset, and the index of the file's first record.
    let mut next = a.size;
    input.par_each_batch(
        &rw.selection(),
        &one_thread(),
        Pending::default,
        |b, p: &mut Pending| -> Result<(), Failure> {
            let i0 = b.row(0).position().record - first;
            // The records of the batch up to each multiple of the size.
            let mut at = 0;
            while at < b.len() {
                let i = i0 + at as u64;
                let to = (i / a.size + 1) * a.size;
                let end = b.len().min(at + usize::try_from(to - i).unwrap_or(usize::MAX));
                if i > 0 && i.is_multiple_of(a.size) {
                    p.starts.push((p.bytes.len(), i));
                }
                rw.append(b, at..end, &mut p.bytes);
                at = end;
            }
            Ok(())
        },
        |p| {
            let mut from = 0;
            for &(at, i) in &p.starts {
                w.get_mut().write_all(&p.bytes[from..at])?;
                from = at;
                debug_assert_eq!(i, next);
                next = i + a.size;
                let new = create(
                    &template.path(&a.outdir, &i.to_string()),
                    names.as_deref(),
                    256 << 10,
                    file,
                )?;
                finish(std::mem::replace(&mut w, new))?;
            }
            w.get_mut().write_all(&p.bytes[from..])?;
            p.bytes.clear();
            p.starts.clear();
            Ok(())
        },
    )?;
    finish(w)
}

/// Records as CSV, and where new files start in them.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// The offset in `bytes` where each new file starts, and the index of
    /// its first record.
    starts: Vec<(usize, u64)>,
}

/// How [`create`] writes the file `path`: CSV with a tab for a name ending
/// in `.tsv` or `.tab`, else with a comma.
pub fn file_style(path: &Path) -> CsvStyle {
    let delimiter = if tab_separated_name(path) { b'\t' } else { b',' };
    CsvStyle { delimiter, ..CsvStyle::default() }
}

/// `split --chunks N`: N byte ranges of about equal size, moved to record
/// starts; each range's records go to one file.
fn chunks(a: &SplitArgs, path: &Path, n: u64, template: &Template) -> Result<(), Failure> {
    let d = a.input.dialect(Some(path), false).map_err(|e| Failure::Usage(e.message()))?;
    let name = path.display().to_string();
    let len = std::fs::metadata(path).map_err(|e| Failure::Fatal(format!("{name}: {e}")))?.len();
    let parts = fastcsv::split::Splitter::new(&d)
        .split_path(path, len.div_ceil(n).max(1))
        .map_err(|e| Failure::Fatal(e.to_string()))?;
    let mut b = ReaderBuilder::new();
    b.dialect(d.clone()).source(a.input.source).buffer_size(a.input.buffer_size);
    let mut header: Option<RowBuf> = None;
    create_dir(&a.outdir)?;
    let skip = u64::from(d.headers());
    let rw = CsvRewrite::new(&d, file_style(&template.path(&a.outdir, "0")), true);
    let mut sel = rw.selection();
    let mut buf = Vec::new();
    for p in &parts {
        let mut rdr = b.from_path_part(path, p)?;
        if p.index == 0 {
            header = rdr.headers()?.cloned();
        }
        let start = p.records.saturating_sub(skip);
        let names: Option<Vec<&[u8]>> = header.as_ref().map(|h| h.iter().collect());
        let mut w = None;
        while let Some(batch) = rdr.read_batch(&mut sel)? {
            let w = match &mut w {
                Some(w) => w,
                None => w.insert(create(
                    &template.path(&a.outdir, &start.to_string()),
                    names.as_deref(),
                    256 << 10,
                    Some(path),
                )?),
            };
            buf.clear();
            rw.append(&batch, 0..batch.len(), &mut buf);
            w.get_mut().write_all(&buf)?;
        }
        // A file with no records is written only for an input with none.
        if w.is_none() && p.index == 0 && parts.len() == 1 {
            w = Some(create(
                &template.path(&a.outdir, "0"),
                names.as_deref(),
                256 << 10,
                Some(path),
            )?);
        }
        if let Some(w) = w {
            finish(w)?;
        }
    }
    Ok(())
}
