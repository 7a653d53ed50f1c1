//! `fastcsv fixlengths`: every record made as long as the longest (or as
//! `--length`), padded with empty fields or cut, as `xsv fixlengths` does.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::fmt::{open_all_rows, CommonArgs, CsvOut, CsvStyle};
use super::{path_arg, Failure};

/// `fastcsv fixlengths --help`'s text after the options.
pub const HELP: &str = "\
Pads short records with empty fields and cuts long ones, so that every record
(the header row too) has the same length: --length, or that of the longest
record not counting its trailing empty fields (at least 1). Without --length
the file is read twice, so it must be a file, not standard input.

Examples:
  fastcsv fixlengths ragged.csv -o square.csv
  cat ragged.csv | fastcsv fixlengths -l 5";

/// `fastcsv fixlengths`.
#[derive(Debug, Args)]
pub struct FixlengthsArgs {
    /// Input file (`-` or none: standard input, which needs --length).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Make every record this long: longer ones are cut, shorter ones
    /// padded with empty fields. Without it, the length is that of the
    /// longest record not counting its trailing empty fields (at least 1),
    /// which takes a first pass over the file.
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub length: Option<u64>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// `fastcsv fixlengths`.
pub fn run(a: &FixlengthsArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut args = a.common.input();
    // Records of any length are what this command is for.
    args.flexible = true;
    let length = match a.length {
        Some(n) => {
            usize::try_from(n).map_err(|_| Failure::Usage("--length is too large".into()))?
        }
        None => {
            if file.is_none() {
                return Err(Failure::Usage(
                    "fixlengths without --length reads its input twice: give a FILE, not \
                     standard input"
                        .into(),
                ));
            }
            let mut max = 0;
            let mut input = open_all_rows(file, &args)?;
            input.each_row(|row| {
                // The last non-empty field (the first counts even empty).
                let last = row.iter().enumerate().filter(|(_, f)| !f.is_empty()).last();
                let n = last.map_or(1, |(i, _)| i + 1);
                max = max.max(n);
                Ok(())
            })?;
            max
        }
    };
    let mut input = open_all_rows(file, &args)?;
    let mut w = CsvOut::new(
        super::commands::sink(a.common.output.as_deref(), &[file])?,
        CsvStyle::default(),
    );
    let pad: &[u8] = b"";
    input.each_row(|row| {
        let fields = row.iter().chain(std::iter::repeat(pad)).take(length);
        Ok(w.record(fields)?)
    })?;
    Ok(w.into_inner().flush()?)
}
