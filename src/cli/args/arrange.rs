//! The arguments of the verbs that arrange records (`sort`, `join`,
//! `sample`, `split`, `partition`, `dedup`), beside the shared ones of the
//! parent module.

use std::path::PathBuf;

use clap::Args;

use super::*;

pub(super) const SORT_HELP: &str = "\
Sorts as xsv sort: by the columns of --select (as for `select`; default: all
fields), as bytes, or with -N as numbers (an i64, else an f64; a field that
is neither sorts before every number, and comparing stops there, so such
records keep their input order). Ties keep input order, with -R too. The
header row is written first unless --no-headers; records are written as
xsv writes them (quotes only where needed).

Memory: records are held (as written) up to --memory, default a quarter of
physical memory; past that, sorted runs go to temporary files in --tmp-dir
(default $TMPDIR or /tmp), merged at the end. A file more than a quarter
of --memory is read with read(), not mapped.

Examples:
  fastcsv sort -s name export.csv
  fastcsv sort -N -R -s price export.csv
  fastcsv sort --memory 512M --tmp-dir /scratch -s id big.csv > sorted.csv";

pub(super) const JOIN_HELP: &str = "\
Joins as xsv join: COLUMNS1 of FILE1 (as for `select`) against COLUMNS2 of
FILE2, the same number of columns. Keys are compared after trimming spaces
(UTF-8 fields), and with --no-case in lower case; a key with an empty field
never matches, unless --nulls. Each output record is a record of FILE1
followed by one of FILE2 (empty fields where one side has no match), in
FILE1's order, the matches in FILE2's order; --right follows FILE2's order
instead; --full writes the unmatched records of FILE2 last; --cross writes
every pair. The header rows are written first (joined), unless --no-headers.

The hash table is built on the smaller file (by size on disk; on xsv's
side, FILE2 or FILE1 with --right, when a size is unknown, as for a pipe)
and the other is streamed. When the table is on the side whose order the
output follows, the streamed side's matched records are kept (each once)
until the end, in --memory and past it in a temporary file in --tmp-dir.

Examples:
  fastcsv join id users.csv user_id orders.csv
  fastcsv join --left --no-case email a.csv mail b.csv";

pub(super) const SAMPLE_HELP: &str = "\
Reservoir sampling (as xsv sample without an index): every record is visited
once and kept with probability N/i; the output is the reservoir, in its own
order (records replaced in place), after the header row. With N at least the
number of records, every record is written in input order. --seed makes the
sample repeatable (the generator is not xsv's: the same seed gives different
records than another tool).

Examples:
  fastcsv sample 1000 export.csv
  fastcsv sample --seed 42 10 export.csv";

pub(super) const SPLIT_HELP: &str = "\
Writes OUTDIR/{start}.csv files (created with OUTDIR if needed), where
{start} is the index of the chunk's first record (from 0), each with the
header row unless --no-headers, as xsv split: --size records each (default
500), or with --chunks N into N pieces of about equal bytes, cut at record
starts (a regular file only). --filename sets the template ({} is replaced by
{start}). Output is CSV (tab-separated for a *.tsv or *.tab name).

Examples:
  fastcsv split -s 100000 parts/ big.csv
  fastcsv split --chunks 8 --filename 'part-{}.csv' parts/ big.csv";

pub(super) const PARTITION_HELP: &str = "\
Writes one file per value of COLUMN (one column, as for `select`) into OUTDIR,
as xsv partition: the value with every non-word character removed (`empty`
when nothing is left; `_2`, `_3`... appended when two values give the same
name) replaces {} in --filename (default {}.csv). --prefix-length N uses the
value's first N bytes; --drop leaves the column out. Every file is held open
until the end.

Examples:
  fastcsv partition state by-state/ export.csv
  fastcsv partition -p 2 --drop zip by-zip/ export.csv";

pub(super) const DEDUP_HELP: &str = "\
Writes each record whose key (the whole record, or the columns of --select)
was not seen before, in input order: the first of each set of duplicates is
kept. Fields are compared as parsed (so `a` and `\"a\"` are equal). Memory:
each distinct key is held. (qsv dedup sorts its output; this one does not:
pipe into `fastcsv sort` for that.)

Examples:
  fastcsv dedup export.csv
  fastcsv dedup -s email export.csv";

/// `fastcsv sort`.
#[derive(Debug, Args)]
pub struct SortArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Columns to sort by (as for `select`; default: all fields).
    #[arg(short, long, value_name = "COLUMNS", value_parser = Selection::parse_arg)]
    pub select: Option<Selection>,
    /// Compare as numbers.
    #[arg(short = 'N', long)]
    pub numeric: bool,
    /// Largest first.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Memory for records before sorted runs go to temporary files
    /// (K, M or G suffix; default: a quarter of physical memory).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<usize>,
    /// Directory of the temporary files (default: $TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// Key columns of FILE1.
    #[arg(value_name = "COLUMNS1", value_parser = Selection::parse_arg)]
    pub columns1: Selection,
    /// The first input (`-`: standard input).
    #[arg(value_name = "FILE1")]
    pub file1: PathBuf,
    /// Key columns of FILE2.
    #[arg(value_name = "COLUMNS2", value_parser = Selection::parse_arg)]
    pub columns2: Selection,
    /// The second input, held in memory (`-`: standard input).
    #[arg(value_name = "FILE2")]
    pub file2: PathBuf,
    /// Every record of FILE1, matched or not.
    #[arg(long, conflicts_with_all = ["right", "full", "cross"])]
    pub left: bool,
    /// Every record of FILE2, matched or not.
    #[arg(long, conflicts_with_all = ["full", "cross"])]
    pub right: bool,
    /// Every record of both.
    #[arg(long, conflicts_with = "cross")]
    pub full: bool,
    /// Every pair of records (N x M records).
    #[arg(long)]
    pub cross: bool,
    /// Compare keys in lower case.
    #[arg(long)]
    pub no_case: bool,
    /// Empty key fields match too.
    #[arg(long)]
    pub nulls: bool,
    /// Memory for the larger file's matched records when the hash table is
    /// built on the other one, before they go to a temporary file (K, M or
    /// G suffix; default: a quarter of physical memory).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<usize>,
    /// Directory of the temporary file (default: $TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv sample`.
#[derive(Debug, Args)]
pub struct SampleArgs {
    /// How many records to sample.
    #[arg(value_name = "N")]
    pub size: u64,
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Seed of the random generator (default: from the clock and process).
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv split`.
#[derive(Debug, Args)]
pub struct SplitArgs {
    /// The directory to write into (created if needed).
    #[arg(value_name = "OUTDIR")]
    pub outdir: PathBuf,
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Records per file.
    #[arg(short, long, value_name = "N", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "chunks")]
    pub size: u64,
    /// Split into N files of about equal size instead (a regular file).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunks: Option<u64>,
    /// File name template; {} is the first record's index.
    #[arg(long, value_name = "TEMPLATE", default_value = "{}.csv")]
    pub filename: String,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv partition`.
#[derive(Debug, Args)]
pub struct PartitionArgs {
    /// The column whose values name the files.
    #[arg(value_name = "COLUMN", value_parser = Selection::parse_arg)]
    pub column: Selection,
    /// The directory to write into (created if needed).
    #[arg(value_name = "OUTDIR")]
    pub outdir: PathBuf,
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// File name template; {} is the sanitised value.
    #[arg(long, value_name = "TEMPLATE", default_value = "{}.csv")]
    pub filename: String,
    /// Use only the value's first N bytes.
    #[arg(short, long, value_name = "N")]
    pub prefix_length: Option<usize>,
    /// Leave the column out of the files.
    #[arg(long)]
    pub drop: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv dedup`.
#[derive(Debug, Args)]
pub struct DedupArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Columns that make the key (as for `select`; default: all fields).
    #[arg(short, long, value_name = "COLUMNS", value_parser = Selection::parse_arg)]
    pub select: Option<Selection>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}
