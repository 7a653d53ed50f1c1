//! The `fastcsv` command line: argument definitions ([`args`]), column
//! selections ([`selection`]), output formats ([`output`]), statistics
//! ([`stats`]), standard output ([`stdout`]) and the commands themselves
//! ([`commands`]).
//!
//! Everything here uses the library's public API only.

pub mod args;
pub mod catcols;
pub mod commands;
pub mod dedup;
pub mod fixlengths;
pub mod flatten;
pub mod fmt;
pub mod frequency;
pub mod input;
pub mod join;
pub mod output;
pub mod partition;
pub mod sample;
pub mod search;
pub mod selection;
pub mod sort;
pub mod split;
pub mod stats;
pub mod stdout;
pub mod table;

use std::fs::File;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Duration;

use fastcsv::{Batch, Position, Reader, ReaderBuilder, Row, Selection};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use args::InputArgs;
use output::WriteError;

/// Why a command stopped early; each maps to an exit status in `main`.
#[derive(Debug)]
pub enum Failure {
    /// The invocation is wrong (exit status 2).
    Usage(String),
    /// A data or I/O error, already formatted (exit status 1).
    Fatal(String),
    /// Problems were found and already reported (exit status 1).
    Reported,
    /// Standard output was closed (`| head`): stop quietly (exit status 0).
    BrokenPipe,
}

impl From<fastcsv::Error> for Failure {
    fn from(e: fastcsv::Error) -> Failure {
        match e.kind() {
            fastcsv::ErrorKind::Config(_) => Failure::Usage(e.to_string()),
            _ => Failure::Fatal(e.to_string()),
        }
    }
}

/// Errors writing standard output, or the `-o` file (whose errors carry
/// its name as an [`OutputFileError`]).
impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        // A closed pipe is the reader going away (`| head`), whether it is
        // standard output or an `-o` file that is a pipe (`-o /dev/stdout`,
        // `-o >(head)`), as xsv treats every broken pipe.
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::BrokenPipe;
        }
        if let Some(named) = e.get_ref().and_then(|i| i.downcast_ref::<OutputFileError>()) {
            return Failure::Fatal(named.to_string());
        }
        Failure::Fatal(format!("write error: {e}"))
    }
}

/// A write to the `-o` file failed.
#[derive(Debug)]
pub struct OutputFileError {
    /// The file's name as given.
    pub name: String,
    /// What went wrong.
    pub source: io::Error,
}

impl std::fmt::Display for OutputFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "write error: {}: {}", self.name, self.source)
    }
}

impl std::error::Error for OutputFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The name standard input goes by in messages.
pub const STDIN_NAME: &str = "<stdin>";

/// Inputs smaller than this never get a progress bar.
pub const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// The FILE arguments, with none meaning standard input (`None`).
///
/// Standard input can be read once: named twice, the second reading would
/// find it at its end (or halfway, after a read-ahead), and its records
/// would be lost without a word, so that is a usage error.
pub fn inputs(files: &[PathBuf]) -> Result<Vec<Option<&Path>>, Failure> {
    if files.is_empty() {
        return Ok(vec![None]);
    }
    let paths: Vec<Option<&Path>> =
        files.iter().map(|p| (p.as_os_str() != "-").then_some(p.as_path())).collect();
    if paths.iter().filter(|p| p.is_none()).count() > 1 {
        return Err(Failure::Usage(
            "standard input (`-`) is named more than once; it can be read only once".into(),
        ));
    }
    Ok(paths)
}

/// A single FILE argument, with `-` or none meaning standard input.
pub fn path_arg(file: Option<&Path>) -> Option<&Path> {
    file.filter(|p| p.as_os_str() != "-")
}

/// Whether `path` can be opened again for the same bytes: a regular file
/// (or something that cannot be looked at, whose error opening it will
/// report), not a pipe, FIFO or device, which a first pass drains.
pub fn reads_again(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.is_file() || m.is_dir())
}

/// One open input: the reader, its name for messages, a progress bar.
pub struct Input {
    /// The reader.
    pub reader: Reader<'static>,
    /// The path as given, or `<stdin>`.
    pub name: String,
    /// The file read, `None` for standard input.
    path: Option<PathBuf>,
    /// The size of a regular file when opened.
    size: Option<u64>,
    progress: Progress,
}

impl Input {
    /// Opens a path (or standard input for `None`) with the dialect and
    /// source options of `args` (without `-d`, a path named `*.tsv` is read
    /// as tab-separated); `strict` forces strict parsing.
    pub fn open(path: Option<&Path>, args: &InputArgs, strict: bool) -> Result<Input, Failure> {
        let dialect = args.dialect(path, strict).map_err(|e| Failure::Usage(e.message()))?;
        let mut b = ReaderBuilder::new();
        b.dialect(dialect).source(args.source).buffer_size(args.buffer_size);
        if args.jobs == Some(1) {
            // One thread in all: no read-ahead or map-ahead helper.
            b.read_ahead(false);
        }
        let (reader, name, size) = match path {
            Some(p) => {
                let name = p.display().to_string();
                let size = std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len());
                (b.from_path(p)?, name, size)
            }
            None => {
                b.path(STDIN_NAME);
                match stdin_file() {
                    // A redirected file can be mapped like any other.
                    Some(f) => {
                        let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                        (b.from_file(f)?, STDIN_NAME.to_string(), size)
                    }
                    // `Stdin`, not its lock: a reader's stream must be
                    // `Send`. It locks for each (large) read.
                    None => (b.from_reader(io::stdin()), STDIN_NAME.to_string(), None),
                }
            }
        };
        // The bar counts decompressed bytes, which a compressed file's size
        // does not bound: no total then.
        let size = size
            .filter(|_| !matches!(reader.source_reason(), fastcsv::SourceReason::Compressed(_)));
        let progress = Progress::new(size, args.quiet);
        let path = path.map(Path::to_path_buf);
        Ok(Input { reader, name, path, size, progress })
    }

    /// Calls `f` on every remaining record, advancing the progress bar.
    pub fn each_row(
        &mut self,
        mut f: impl FnMut(&Row<'_>) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let mut n: u32 = 0;
        while let Some(row) = self.reader.read_row()? {
            f(&row)?;
            n = n.wrapping_add(1);
            if n.is_multiple_of(16_384) {
                self.progress.set(self.reader.byte_offset());
            }
        }
        self.progress.finish();
        Ok(())
    }

    /// Reads every remaining batch of records, keeping the columns of
    /// `sel`, on this thread: `f` gets each batch; advances the progress
    /// bar.
    pub fn each_batch(
        &mut self,
        sel: &mut Selection,
        mut f: impl FnMut(&Batch<'_>) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        while let Some(batch) = self.reader.read_batch(sel)? {
            f(&batch)?;
            self.progress.set(batch.row(batch.len() - 1).position().byte);
        }
        self.progress.finish();
        Ok(())
    }

    /// What [`SizeGuard::shrank`] needs to know about the input.
    pub fn size_guard(&self) -> SizeGuard {
        SizeGuard { path: self.path.clone(), size: self.size }
    }

    /// Tells the fault-injection hook of debug builds that the records up
    /// to byte `at` were handed out (see `test_hooks`).
    #[inline]
    pub fn handed_out(&self, at: u64) {
        test_hooks::handed_out(self.path.as_deref(), at);
    }

    /// Reads every remaining batch of records, keeping only the columns of
    /// `sel`, on several threads when the input is mapped (see
    /// [`Reader::par_batches`]): `work` fills outputs made by `make`, which
    /// `sink` receives (and empties) in input order; advances the progress
    /// bar.
    pub fn par_each_batch<T: Send, E: From<fastcsv::Error> + Send>(
        &mut self,
        sel: &Selection,
        par: &fastcsv::Parallel,
        make: impl Fn() -> T + Sync,
        work: impl Fn(&Batch<'_>, &mut T) -> Result<(), E> + Sync,
        mut sink: impl FnMut(&mut T) -> Result<(), E>,
    ) -> Result<(), E> {
        let progress = &self.progress;
        let path = self.path.as_deref();
        self.reader.par_batches(
            sel,
            par,
            || (make(), 0u64),
            |b, (t, at)| -> Result<(), E> {
                work(b, t)?;
                *at = b.row(b.len() - 1).position().byte;
                Ok(())
            },
            |(t, at)| {
                sink(t)?;
                progress.set(*at);
                test_hooks::handed_out(path, *at);
                Ok(())
            },
        )?;
        progress.finish();
        Ok(())
    }

    /// Counts the remaining records (quickly when no bar is shown).
    pub fn count(&mut self, par: &fastcsv::Parallel) -> Result<u64, Failure> {
        if !self.progress.is_shown() {
            return Ok(self.reader.par_count(par)?.0);
        }
        if self.reader.source_kind() == fastcsv::SourceKind::Mapped && par.thread_count() > 1 {
            let progress = &self.progress;
            let n = self.reader.par_count_with(par, |at| progress.set(at))?.0;
            progress.finish();
            return Ok(n);
        }
        let mut n = 0u64;
        self.each_row(|_| {
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }
}

/// An input's path and size when opened.
pub struct SizeGuard {
    path: Option<PathBuf>,
    size: Option<u64>,
}

impl SizeGuard {
    /// The error for a file found shorter than when it was opened, at
    /// `pos`; `None` while it is not (or for standard input). A mapped file
    /// cut inside a page reads as zeros up to the page's end without a
    /// fault, so NUL bytes in a record may mean a change the reader has
    /// not seen yet.
    pub fn shrank(&self, pos: Position) -> Option<Failure> {
        let (path, size) = (self.path.as_deref()?, self.size?);
        let now = std::fs::metadata(path).map_or(0, |m| m.len());
        (now < size).then(|| {
            let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
            e.with_position(pos).with_path(path).into()
        })
    }
}

/// Fault injection for the tests of a file that changes while it is
/// read (`tests/faults.rs`); in debug builds only, release builds read no
/// variable.
mod test_hooks {
    use std::path::Path;

    /// Called once the records up to byte `at` of the file `path` were
    /// handed to the command: with `FASTCSV_TEST_TRUNCATE_AFTER=N` set and
    /// `at >= N`, cuts the file (once) to `FASTCSV_TEST_TRUNCATE_TO` bytes,
    /// or to `N` without it (a cut ahead of the reader, or behind it).
    #[cfg(debug_assertions)]
    pub fn handed_out(path: Option<&Path>, at: u64) {
        use std::sync::atomic::{AtomicBool, Ordering};
        static DONE: AtomicBool = AtomicBool::new(false);
        let Some(path) = path else { return };
        let Some(n) = std::env::var("FASTCSV_TEST_TRUNCATE_AFTER").ok() else { return };
        let n: u64 = n.parse().expect("FASTCSV_TEST_TRUNCATE_AFTER is a byte count");
        if at >= n && !DONE.swap(true, Ordering::Relaxed) {
            let to = std::env::var("FASTCSV_TEST_TRUNCATE_TO")
                .map_or(n, |t| t.parse().expect("FASTCSV_TEST_TRUNCATE_TO is a byte count"));
            let f = std::fs::OpenOptions::new().write(true).open(path);
            f.and_then(|f| f.set_len(to)).expect("the test hook cuts the input");
        }
    }

    #[cfg(not(debug_assertions))]
    #[inline(always)]
    pub fn handed_out(_: Option<&Path>, _: u64) {}

    /// Called between the two passes of a command that reads its input
    /// twice: with `FASTCSV_TEST_APPEND_BETWEEN=TEXT` set, appends `TEXT`
    /// to the file `path` (a file that grows between the passes).
    #[cfg(debug_assertions)]
    pub fn between_passes(path: Option<&Path>) {
        use std::io::Write;
        let (Some(path), Some(text)) = (path, std::env::var_os("FASTCSV_TEST_APPEND_BETWEEN"))
        else {
            return;
        };
        let f = std::fs::OpenOptions::new().append(true).open(path);
        f.and_then(|mut f| f.write_all(text.as_encoded_bytes()))
            .expect("the test hook appends to the input");
    }

    #[cfg(not(debug_assertions))]
    #[inline(always)]
    pub fn between_passes(_: Option<&Path>) {}
}

/// A writer error for the record at `pos` of the input called `name` as a
/// failure; `column` maps the written field index to the input's.
pub fn write_failure(
    name: &str,
    e: WriteError,
    pos: fastcsv::Position,
    column: impl Fn(usize) -> usize,
) -> Failure {
    match e {
        WriteError::Io(e) => e.into(),
        WriteError::Utf8 { field, valid_up_to } => Failure::Fatal(format!(
            "{name}:{}: record {}, byte {}: invalid UTF-8 in column {} (byte {valid_up_to} \
             of the field); JSON output needs UTF-8",
            pos.line,
            pos.record,
            pos.byte,
            column(field) + 1,
        )),
    }
}

/// JSON output needs UTF-8 keys as it needs UTF-8 values: fails on the
/// first of the header names `keys` that is not UTF-8, at the position of
/// the header row `pos` of the input called `name`; `column` maps the key
/// index to the input's column.
pub fn json_keys_utf8(
    name: &str,
    keys: &[&[u8]],
    pos: fastcsv::Position,
    column: impl Fn(usize) -> usize,
) -> Result<(), Failure> {
    for (i, k) in keys.iter().enumerate() {
        if let Err(e) = std::str::from_utf8(k) {
            return Err(Failure::Fatal(format!(
                "{name}:{}: record {}, byte {}: invalid UTF-8 in the name of column {} \
                 (byte {} of the name); JSON output needs UTF-8",
                pos.line,
                pos.record,
                pos.byte,
                column(i) + 1,
                e.valid_up_to(),
            )));
        }
    }
    Ok(())
}

/// Standard input as a `File` (a duplicate of descriptor 0), so that a
/// redirected regular file can be mapped.
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    io::stdin().as_fd().try_clone_to_owned().ok().map(File::from)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// Whether to draw a progress bar: only on a terminal, only for inputs of
/// known size above [`PROGRESS_MIN_BYTES`], never with `--quiet`.
pub fn wants_progress(stderr_is_terminal: bool, quiet: bool, size: Option<u64>) -> bool {
    stderr_is_terminal && !quiet && size.is_some_and(|s| s > PROGRESS_MIN_BYTES)
}

/// A progress bar on standard error, or nothing.
struct Progress(Option<ProgressBar>);

impl Progress {
    fn new(size: Option<u64>, quiet: bool) -> Progress {
        if !wants_progress(io::stderr().is_terminal(), quiet, size) {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(size, ProgressDrawTarget::stderr_with_hz(4));
        let style = ProgressStyle::with_template(
            "{bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
        )
        .expect("the progress template is valid");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress(Some(bar))
    }

    fn is_shown(&self) -> bool {
        self.0.is_some()
    }

    #[inline]
    fn set(&self, pos: u64) {
        if let Some(b) = &self.0 {
            b.set_position(pos);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_only_for_big_inputs_on_a_terminal() {
        let big = Some(PROGRESS_MIN_BYTES + 1);
        assert!(wants_progress(true, false, big));
        assert!(!wants_progress(false, false, big));
        assert!(!wants_progress(true, true, big));
        assert!(!wants_progress(true, false, Some(1000)));
        assert!(!wants_progress(true, false, None));
    }

    #[test]
    fn dash_and_nothing_mean_stdin() {
        assert_eq!(inputs(&[]).ok(), Some(vec![None]));
        let files = [PathBuf::from("-"), PathBuf::from("a.csv")];
        assert_eq!(inputs(&files).ok(), Some(vec![None, Some(Path::new("a.csv"))]));
        let twice = [PathBuf::from("-"), PathBuf::from("a.csv"), PathBuf::from("-")];
        assert!(matches!(inputs(&twice), Err(Failure::Usage(_))));
        assert_eq!(path_arg(Some(Path::new("-"))), None);
        assert_eq!(path_arg(Some(Path::new("b"))), Some(Path::new("b")));
    }
}
