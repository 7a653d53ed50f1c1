//! `fastcsv input`: read CSV with unusual quoting (another quote byte,
//! an escape byte, no quoting at all) and write it as plain RFC 4180
//! CSV, as `xsv input` does.

use std::path::PathBuf;

use clap::Args;

use super::args::InputArgs;
use super::fmt::{open_all_rows, rewrite, CsvStyle};
use super::{path_arg, Failure};

/// `fastcsv input --help`'s text after the options.
pub const HELP: &str = "\
Reads CSV with the dialect options (another --quote byte, an --escape byte,
--no-quoting, -d, --skip-initial-space, --comment ...) and writes every row
(the header row too) as RFC 4180 CSV: commas, double quotes where needed, LF.
A doubled quote inside quotes stays a quote with --escape (as xsv reads it);
--no-doublequote turns that off.

Examples:
  fastcsv input --quote \"'\" single-quoted.csv
  fastcsv input --escape '\\' -d ';' export.csv -o clean.csv
  fastcsv input --no-quoting raw.csv";

/// `fastcsv input`.
#[derive(Debug, Args)]
pub struct InputCmdArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Quotes are ordinary data (xsv's name for --no-quote).
    #[arg(long)]
    pub no_quoting: bool,
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

/// `fastcsv input`: every row (the header row too) written with minimal
/// quoting, commas and LF.
pub fn run(a: &InputCmdArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut args = a.input.clone();
    args.no_quote |= a.no_quoting;
    let mut input = open_all_rows(file, &args)?;
    let out = super::commands::sink(a.output.as_deref(), &[file])?;
    rewrite(&mut input, CsvStyle::for_output(a.output.as_deref()), out)
}
