//! `fastcsv flatten`: one line per field, `name value`, records separated
//! by a line of `#`, as `xsv flatten` writes them.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::args::InputArgs;
use super::fmt::condense;
use super::table::TabAligner;
use super::{path_arg, Failure, Input};

/// `fastcsv flatten --help`'s text after the options.
pub const HELP: &str = "\
Writes each record as lines of `name  value`, the names aligned, with a line
holding --separator between records (none when it is empty, and the names are
then aligned over the whole output). Without a header row (-n), fields are
named by their index from 0, as in xsv (so is a field past the header row's,
with --flexible). Values are written as they are
(a value with a line end continues on the next line).

Examples:
  fastcsv slice -i 41 export.csv | fastcsv flatten
  fastcsv flatten -c 40 -s '---' export.csv | less";

/// `fastcsv flatten`.
#[derive(Debug, Args)]
pub struct FlattenArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Shorten each value to N characters (bytes when it is not UTF-8),
    /// followed by `...`.
    #[arg(short, long, value_name = "N")]
    pub condense: Option<usize>,
    /// The line written between records (nothing when empty).
    #[arg(short, long, value_name = "TEXT", default_value = "#", allow_hyphen_values = true)]
    pub separator: String,
    /// Write the output to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: super::args::ParallelArgs,
}

/// `fastcsv flatten`: the names and values are aligned record by record
/// (the separator line ends a run of aligned lines), or over the whole
/// input with an empty separator.
pub fn run(a: &FlattenArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    // Without a header row, fields are named by their index from 0, as
    // in xsv.
    let names: Option<Vec<Vec<u8>>> =
        input.reader.headers()?.map(|h| h.iter().map(<[u8]>::to_vec).collect());
    let out = super::commands::sink(a.output.as_deref(), &[file])?;
    let mut w = TabAligner::new(out, 2, 2);
    let mut first = true;
    input.each_row(|row| {
        if !first && !a.separator.is_empty() {
            writeln!(w, "{}", a.separator)?;
        }
        first = false;
        for (i, f) in row.iter().enumerate() {
            // A field past the header's width (with --flexible) is named
            // by its index, as without a header row, rather than left out
            // as xsv's pairing of names and fields would.
            match names.as_ref().and_then(|n| n.get(i)) {
                Some(name) => w.write_all(name)?,
                None => write!(w, "{i}")?,
            }
            w.write_all(b"\t")?;
            w.write_all(&condense(f, a.condense))?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(w.into_inner()?.flush()?)
}
