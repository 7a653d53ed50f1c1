//! Command-line arguments: the clap definitions and the value parsers for
//! option values that clap cannot check on its own (bytes, sizes).
//!
//! Every bad value is rejected here, so clap reports it as a usage error
//! (exit status 2) before any input is opened.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use fastcsv::bench::Work;
use fastcsv::{Dialect, Filter, SourceChoice};

use super::selection::Selection;

mod arrange;
pub use arrange::{DedupArgs, JoinArgs, PartitionArgs, SampleArgs, SortArgs, SplitArgs};
use arrange::{DEDUP_HELP, JOIN_HELP, PARTITION_HELP, SAMPLE_HELP, SORT_HELP, SPLIT_HELP};

/// Top-level help text shared by every command.
const ABOUT: &str = "A fast, correct CSV reader for large exports.

Files are memory-mapped when possible; `-` or no FILE reads standard input. \
Empty lines are not records. Parsing follows Python's csv module.";

/// `fastcsv`: the command line.
#[derive(Debug, Parser)]
#[command(
    name = "fastcsv",
    version,
    about = ABOUT,
    after_help = MAIN_HELP,
    propagate_version = true
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count records (the header row is not counted; ragged rows count).
    #[command(after_help = COUNT_HELP)]
    Count(CountArgs),
    /// List the header row's fields, numbered from 1.
    #[command(after_help = HEADERS_HELP)]
    Headers(HeadersArgs),
    /// Select columns by name or 1-based index, ranges and negation.
    #[command(after_help = SELECT_HELP)]
    Select(SelectArgs),
    /// Concatenate files with the same header, converting the format.
    #[command(after_help = CAT_HELP)]
    Cat(CatArgs),
    /// Write a range of records (0-based, the header row not counted).
    #[command(after_help = SLICE_HELP)]
    Slice(SliceArgs),
    /// Write the records where a regular expression matches a field.
    #[command(after_help = SEARCH_HELP)]
    Search(SearchArgs),
    /// Validate strictly and list each problem with its position.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// The most frequent values of each column, with their counts.
    #[command(after_help = FREQUENCY_HELP)]
    Frequency(FrequencyArgs),
    /// Per-column statistics: counts, distinct values, lengths, types,
    /// smallest and largest values, sum, mean and deviation.
    #[command(after_help = STATS_HELP)]
    Stats(StatsArgs),
    /// Measure mmap against read() at several buffer sizes on one file.
    #[command(after_help = BENCH_HELP)]
    Bench(BenchArgs),
    /// Cut a file into byte ranges that start exactly at records, for
    /// parsing in separate processes or machines.
    #[command(after_help = PARTS_HELP)]
    Parts(PartsArgs),
    /// Records as aligned columns, for people to read.
    #[command(after_help = super::table::HELP)]
    Table(super::table::TableArgs),
    /// Rewrite CSV with another delimiter, quote, escape or line end.
    #[command(after_help = super::fmt::HELP)]
    Fmt(super::fmt::FmtArgs),
    /// One line per field (`name value`), a `#` line between records.
    #[command(after_help = super::flatten::HELP)]
    Flatten(super::flatten::FlattenArgs),
    /// Make every record as long as the longest, or as --length.
    #[command(after_help = super::fixlengths::HELP)]
    Fixlengths(super::fixlengths::FixlengthsArgs),
    /// Read CSV with unusual quoting and write plain RFC 4180 CSV.
    #[command(after_help = super::input::HELP)]
    Input(super::input::InputCmdArgs),
    /// Sort records by columns, as text or numbers, in bounded memory.
    #[command(after_help = SORT_HELP)]
    Sort(SortArgs),
    /// Join two files on key columns (inner, outer or cross), as xsv.
    #[command(after_help = JOIN_HELP)]
    Join(JoinArgs),
    /// A uniform random sample of records.
    #[command(after_help = SAMPLE_HELP)]
    Sample(SampleArgs),
    /// Split records into files of N records, or into N chunks.
    #[command(after_help = SPLIT_HELP)]
    Split(SplitArgs),
    /// Write one file per value of a column.
    #[command(after_help = PARTITION_HELP)]
    Partition(PartitionArgs),
    /// Drop repeated records (whole, or by columns), keeping the first.
    #[command(after_help = DEDUP_HELP)]
    Dedup(DedupArgs),
}

const PARTS_HELP: &str = "\
Output: CSV with one row per part: `part,start,end,lines,records`. The part's
records are the bytes start..end (end excluded) of the file; `lines` and
`records` are the lines and records before it (the header row counts as a
record), for positions in messages. The first part holds the header row.
Quoted line ends never start a part, wherever the cuts fall: each range is
summarised on its own for every state it could begin in, and the summaries
are chained (see fastcsv::split).

Examples:
  fastcsv parts --size 256M big.csv
  fastcsv parts --size 64M big.csv --json";

const MAIN_HELP: &str = "\
Exit status: 0 on success (also when the output pipe closes early, as with
`| head`); 1 on a data or I/O error, reported on standard error as
`fastcsv: PATH:LINE: record N, byte B: MESSAGE`, or when `check` finds
problems; 2 on a usage error.

Examples:
  fastcsv count export.csv
  fastcsv select id,email export.csv --to jsonl | head
  fastcsv check --max-errors 100 export.csv
  fastcsv bench export.csv --plot throughput.svg";

const COUNT_HELP: &str = "\
Output: with one input, the number alone. With several, one line per input,
`PATH<TAB>COUNT`, then `total<TAB>COUNT`. Empty lines are not records; rows
of any length are (use `fastcsv check` to find ragged rows).

Examples:
  fastcsv count export.csv
  fastcsv count --no-headers part-*.csv
  zcat big.csv.gz | fastcsv count";

const HEADERS_HELP: &str = "\
Examples:
  fastcsv headers export.csv
  fastcsv headers --just-names export.tsv      # tab-separated by its name
  fastcsv headers -d ';' export.csv";

const SELECT_HELP: &str = "\
COLUMNS is a comma-separated list of items, applied in order:
  name         the column with that header name (quote it as \"a,b\" or \"2024\"
               when it holds a comma or is all digits)
  name[1]      the second column named `name`, when the header repeats it
               (counting from 0, as xsv does)
  3            the third column (indices start at 1)
  2-5, a-c     ranges by index or name, inclusive; 5-2 runs backwards;
               3- runs to the last column, -3 from the first (a list
               that starts with `-` goes after `--`: select -- -3 FILE)
  !a,b         a list that starts with `!`: every column it does not
               name (as xsv), in header order
  1-5,!3       `!item` later in a list removes the item's columns
Columns can repeat (`1,1`). The header row is written first unless
--no-headers.

Examples:
  fastcsv select name,email export.csv
  fastcsv select '2-5,!3' export.csv
  fastcsv select '!notes' export.csv --to jsonl";

const SLICE_HELP: &str = "\
Records are numbered from 0 after the header row (with --no-headers, from
the first record), as in xsv. The range is half-open: --start 10 --end 20
writes records 10 to 19; --len N writes N records from --start (default
0); --index N writes record N alone. Without --end or --len, the records
run to the end. The header row is written first unless --no-headers;
reading stops at the range's end.

Examples:
  fastcsv slice --len 10 export.csv
  fastcsv slice -s 1000 -e 1010 export.csv --to jsonl
  fastcsv slice -i 41 export.csv";

const SEARCH_HELP: &str = "\
A record is written when REGEX matches anywhere in one of its fields (all
fields, or the columns of --select, given as for `select`), or with
--invert-match when it matches none. Fields are matched as parsed
(unquoted), as bytes: the syntax is that of the regex crate (Unicode
classes for UTF-8 text; linear time). The header row is written first
unless --no-headers.

Examples:
  fastcsv search 'Paris|Oslo' export.csv
  fastcsv search -i -s city,country '^fr' export.csv
  fastcsv search -v -s email '@' export.csv --to jsonl";

const CAT_HELP: &str = "\
All inputs must have the same header row (it is written once).
Formats: csv quotes only fields holding the delimiter, a quote, CR or LF;
tsv escapes TAB, LF, CR and backslash as \\t \\n \\r \\\\; jsonl writes one
JSON object per record keyed by the header (arrays with --no-headers), with
every value a string.
`cat columns A B ...` writes the inputs side by side instead, as xsv's cat
columns (every row a record, header rows included; CSV only): up to the
end of the shortest input, or with --pad of the longest, the others giving
empty fields. `cat rows` is plain `cat`.

Examples:
  fastcsv cat part-1.csv part-2.csv > all.csv
  fastcsv cat columns --pad left.csv right.csv
  fastcsv cat -d ';' export.csv --to tsv
  fastcsv cat export.csv --to jsonl | head";

const CHECK_HELP: &str = "\
Parses in strict mode and reports, one per line on standard output,
  PATH:LINE: record N, byte B: MESSAGE
for unterminated quotes, text after a closing quote, ragged rows (unless
--flexible), invalid UTF-8 and NUL bytes. For the last two, B is the start of
the record and the message names the field. Exits 1 if anything was found.

Examples:
  fastcsv check export.csv
  fastcsv check --max-errors 100 --flexible export.csv";

const STATS_HELP: &str = "\
Default output: CSV as `xsv stats` writes it, one record per column:
field,type,sum,min,max,min_length,max_length,mean,stddev (then median, mode,
cardinality with --everything, or each with its flag; --everything then adds
q1,q3, not in xsv: the lower and upper quartiles of a column of numbers, the
medians of its lower and upper halves, the middle value in neither when the
count is odd). type is NULL (no
non-empty value), Integer (every non-empty value a 64-bit integer), Float
(every one a float), Unicode, or Unknown (a value that is not UTF-8). sum,
mean and stddev (of the population) are given for numbers; min and max are
numeric for numbers, else the first and last value in the order of bytes;
lengths are in bytes, an empty value counting 0. The sum of integers is exact
(i128) and the mean and deviation are computed exactly from it, so their last
digits can differ from xsv's. Without a header row, columns are named by their
index from 0, as in xsv.

--table, --csv and --json write fastcsv's own statistics instead: non-empty
and empty counts; distinct non-empty values (exact up to 10000, then a
HyperLogLog estimate with about 1% error, shown as ~N); the shortest and
longest non-empty value in characters; whether every non-empty value parses
as a 64-bit integer and as a float; the smallest and largest value; and in a
column of numbers their sum, mean and standard deviation.

Memory: per column, 16 bytes while it has only empty values; a column with a
non-empty value takes about 400 bytes (1.6 KiB more once it holds a float: the
exact sums of its values and squares), plus 8 bytes per distinct value (up to
10000, then a 16 KiB sketch) and its smallest and largest value. With
--everything, --median, --mode or --cardinality, each column also keeps every
non-empty value (its bytes and 8 more; 16 more while it sorts them at the
end) and, while it holds only numbers, 8 bytes more per value. Summaries are written one at a time.
With -j N, up to 2N+1 chunks hold such state at once.

Examples:
  fastcsv stats export.csv
  fastcsv stats --everything -s price,quantity export.csv
  fastcsv stats --table export.csv
  fastcsv stats --json export.csv";

const FREQUENCY_HELP: &str = "\
Counts every value of each column exactly (as xsv frequency does), and writes
CSV: field,value,count, the most frequent values first (ties in the order of
their bytes), at most --limit per column. An empty value is shown as (NULL),
as in xsv. Without a header row, columns are named by their number (from 1).
Counting keeps each distinct value in memory: select the columns to count
with -s on a file with many distinct values (ids).

Memory: per column, 40 bytes, plus each distinct non-empty value with its
count (its bytes and about 40 more). With -j N, each thread also holds
the counts of one batch of records before moving them into the shared
counts (64 shards, each with its own lock).

Examples:
  fastcsv frequency -s city,country export.csv
  fastcsv frequency --limit 0 --no-nulls -s status export.csv";

const BENCH_HELP: &str = "\
Parses FILE with the mapped source, then with read() at each buffer size
(default 1K,4K,16K,64K,128K,256K,1M,4M), with each engine of --work,
round-robin, and prints per engine and source: median and range of the wall
time, MB/s (10^6 bytes per second), MB/s relative to mmap, MB per CPU second,
user and system CPU seconds, minor and major page faults, and how much the
resident set grew during a run. Every source must find the same rows.

The engines are the CLI's: count is `fastcsv count`'s block scanner, select
locates two columns as `fastcsv select` does (writing nothing), and rows,
fields and utf8 read every row through the row reader. The default, count and
rows, shows whether the source matters at both speeds. count and select run
on as many threads as `fastcsv count` and `fastcsv select` (the CPUs
available; a mapped file is split across them, a read() stream is parsed on
one); --threads N sets them, as -j N does for those commands.

With several FILEs, or --files DIR, every file is opened, parsed and closed
on its own, and the files are grouped by size: per group, engine and source
(mmap, read() at each --sizes, default 128K, and the automatic choice) the
median time per file. This shows the per-file cost of mapping.

Without --runs, 3 runs each, fewer if that would take more than about 40 s.
--cold evicts the files from the page cache before every run (Linux). The
load average is printed too: timings on a busy machine are noisy.

Examples:
  fastcsv bench big.csv
  fastcsv bench big.csv --work count,select,rows --threads 4
  fastcsv bench big.csv --sizes 4K,128K,1M --runs 5 --work fields
  fastcsv bench big.csv --cold --json > cold.json
  fastcsv bench big.csv --plot throughput.svg
  fastcsv bench --files small-files/ --plot per-file.svg";

/// Options that say how to read the input, shared by every command.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Input options")]
pub struct InputArgs {
    /// Field delimiter: one byte, `tab`, `\t` or `\xHH` (default: a comma,
    /// or a tab for a FILE named *.tsv or *.tab, as xsv does).
    #[arg(short, long, value_name = "BYTE", value_parser = parse_byte)]
    pub delimiter: Option<u8>,
    /// Quote character.
    #[arg(long, value_name = "BYTE", default_value = "\"", value_parser = parse_byte)]
    pub quote: u8,
    /// Turn quoting off: quotes are ordinary data.
    #[arg(long, conflicts_with = "quote")]
    pub no_quote: bool,
    /// Escape character: the byte after it is taken literally.
    #[arg(long, value_name = "BYTE", value_parser = parse_byte)]
    pub escape: Option<u8>,
    /// A doubled quote inside quotes is not a literal quote.
    #[arg(long)]
    pub no_doublequote: bool,
    /// Skip lines that start with this byte.
    #[arg(long, value_name = "BYTE", value_parser = parse_byte)]
    pub comment: Option<u8>,
    /// Ignore spaces right after a delimiter.
    #[arg(long)]
    pub skip_initial_space: bool,
    /// Malformed quoting is an error instead of being repaired.
    #[arg(long)]
    pub strict: bool,
    /// Records may have different numbers of fields.
    #[arg(long)]
    pub flexible: bool,
    /// The first record is data, not a header row.
    #[arg(short, long)]
    pub no_headers: bool,
    /// Remove non-visible characters from fields.
    #[arg(
        long,
        value_name = "WHICH",
        value_parser = PossibleValuesParser::new(["off", "controls", "all-controls", "invisible"])
            .map(|s| Filter::parse(&s).unwrap_or_default()),
    )]
    pub filter: Option<Filter>,
    /// How to read files: map them, read() them, or choose.
    #[arg(
        long,
        value_name = "HOW",
        default_value = "auto",
        value_parser = PossibleValuesParser::new(["auto", "mmap", "read"])
            .map(|s| SourceChoice::parse(&s).unwrap_or_default()),
    )]
    pub source: SourceChoice,
    /// Size of the read() buffer: bytes or with a K, M or G suffix (at
    /// most 1G). It bounds how much of the input is parsed at a time (it
    /// grows for a longer record), not the reads, which ask for at least
    /// 64K.
    #[arg(long, value_name = "SIZE", default_value = "128K", value_parser = parse_buffer_size)]
    pub buffer_size: usize,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// The command's `-j`, copied here by [`Command::cap_threads`]: with
    /// one thread, a file read with read() is read on the calling thread
    /// (no read-ahead thread), and a mapped file's pages are not mapped in
    /// ahead by a helper thread.
    #[arg(skip)]
    pub jobs: Option<u32>,
}

/// How many threads read one file, for every command (`headers` takes
/// `--jobs N`, and `-j N` only with a number: its `-j` alone is
/// `--just-names`, as in xsv). The commands that split a mapped file
/// across threads are listed in docs/cli.md; the others parse on one
/// thread whatever N is, and `-j 1` also turns their read-ahead thread off.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Input options")]
pub struct ParallelArgs {
    /// Threads for one input (default: the CPUs available): the commands
    /// that split a mapped file use N, the others parse on one (see
    /// docs/cli.md); 1 reads on the main thread alone, without read-ahead.
    /// Output is the same either way (but for the last digits of `stats`'
    /// sums, means and deviations of floats).
    #[arg(short, long, visible_alias = "threads", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Bytes per chunk of a parallel read (for tests).
    #[arg(long, hide = true, value_name = "SIZE", value_parser = parse_size)]
    pub chunk_size: Option<usize>,
}

impl ParallelArgs {
    /// How many threads may parse one input.
    pub fn parallel(&self) -> fastcsv::Parallel {
        let mut p = fastcsv::Parallel::new();
        if let Some(c) = self.chunk_size {
            p = p.chunk_size(c);
        }
        match self.jobs {
            Some(n) => p.threads(n as usize),
            None => p,
        }
    }
}

impl Command {
    /// Copies the command's `-j` into its input options
    /// ([`InputArgs::jobs`]), where opening an input sees it (`table`,
    /// `fmt` and `fixlengths` build theirs from their common options,
    /// which carry it).
    pub fn cap_threads(&mut self) {
        let (input, jobs) = match self {
            Command::Count(a) => (&mut a.input, a.par.jobs),
            Command::Headers(a) => (&mut a.input, a.jobs),
            Command::Select(a) => (&mut a.input, a.par.jobs),
            Command::Cat(a) => (&mut a.input, a.par.jobs),
            Command::Slice(a) => (&mut a.input, a.par.jobs),
            Command::Search(a) => (&mut a.input, a.par.jobs),
            Command::Check(a) => (&mut a.input, a.par.jobs),
            Command::Frequency(a) => (&mut a.input, a.par.jobs),
            Command::Stats(a) => (&mut a.input, a.par.jobs),
            Command::Flatten(a) => (&mut a.input, a.par.jobs),
            Command::Input(a) => (&mut a.input, a.par.jobs),
            Command::Sort(a) => (&mut a.input, a.par.jobs),
            Command::Join(a) => (&mut a.input, a.par.jobs),
            Command::Sample(a) => (&mut a.input, a.par.jobs),
            Command::Split(a) => (&mut a.input, a.par.jobs),
            Command::Partition(a) => (&mut a.input, a.par.jobs),
            Command::Dedup(a) => (&mut a.input, a.par.jobs),
            Command::Parts(a) => (&mut a.input, a.par.jobs),
            Command::Table(_) | Command::Fmt(_) | Command::Fixlengths(_) => return,
            // Its own option: `bench --threads` (`-j`).
            Command::Bench(_) => return,
        };
        input.jobs = jobs;
    }
}

/// Whether a file's name says it is tab-separated: `*.tsv` or `*.tab`, in
/// any case.
pub fn tab_separated_name(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str());
    matches!(ext.map(str::to_ascii_lowercase).as_deref(), Some("tsv" | "tab"))
}

/// The delimiter of an input read without `-d`: a tab for a FILE whose name
/// says it is tab-separated (as xsv reads `*.tsv`), otherwise a comma
/// (standard input, `None`, included).
pub fn input_delimiter(given: Option<u8>, path: Option<&Path>) -> u8 {
    given.unwrap_or(if path.is_some_and(tab_separated_name) { b'\t' } else { b',' })
}

impl InputArgs {
    /// The dialect these options describe for the input `path` (`None`:
    /// standard input), whose name may set the delimiter. Empty lines are
    /// always skipped: they are not records. `strict` forces strict parsing
    /// (for `check`).
    pub fn dialect(&self, path: Option<&Path>, strict: bool) -> fastcsv::Result<Dialect> {
        Dialect::builder()
            .delimiter(input_delimiter(self.delimiter, path))
            .quote((!self.no_quote).then_some(self.quote))
            .escape(self.escape)
            .double_quote(!self.no_doublequote)
            .comment(self.comment)
            .skip_initial_space(self.skip_initial_space)
            .strict(self.strict || strict)
            .flexible(self.flexible)
            .headers(!self.no_headers)
            .filter(self.filter.unwrap_or_default())
            .skip_empty_lines(true)
            .build()
    }
}

/// `fastcsv parts`.
#[derive(Debug, Args)]
pub struct PartsArgs {
    /// The input file (a regular file: parts are byte ranges of it).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Bytes per range before each is moved to a record start (suffixes
    /// K, M, G).
    #[arg(short, long, value_name = "BYTES", default_value = "64M", value_parser = parse_size)]
    pub size: usize,
    /// One JSON object per line instead of CSV.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv count`.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Input files (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv headers`.
#[derive(Debug, Args)]
pub struct HeadersArgs {
    /// Input files (`-` or none: standard input). With several, their
    /// names one after the other, without numbers, as xsv.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print only the names, without numbers.
    #[arg(short, long)]
    pub just_names: bool,
    /// Each name once: those a file before already had are left out (xsv's
    /// `--intersect`, which despite its name lists the union).
    #[arg(long)]
    pub intersect: bool,
    /// Threads (as for the other commands; `headers` reads one record).
    /// `-j N` with a number is this; `-j` otherwise is --just-names.
    #[arg(long, visible_alias = "threads", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
}

/// Output formats of `select` and `cat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// CSV with minimal quoting (RFC 4180), LF line ends.
    Csv,
    /// Tab-separated; TAB, LF, CR and backslash escaped as \t \n \r \\.
    Tsv,
    /// One JSON object (or array, with --no-headers) per record.
    Jsonl,
}

/// Output options of `select` and `cat`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Output options")]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "csv")]
    pub to: Format,
    /// Delimiter of CSV output (default: a comma, or a tab when the
    /// output file's name ends in .tsv or .tab, as xsv does).
    /// Not the quote, CR or LF (the output could not be read back), and
    /// only for CSV output.
    #[arg(long, value_name = "BYTE", value_parser = parse_out_delimiter)]
    pub out_delimiter: Option<u8>,
    /// Write the output to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// The delimiter of CSV output; a usage error when `--out-delimiter`
    /// is given for another format (which has its own separator).
    pub fn delimiter(&self) -> Result<u8, String> {
        if let Some(d) = self.out_delimiter {
            if self.to != Format::Csv {
                return Err(format!(
                    "--out-delimiter is for CSV output; --to {} has its own separator",
                    if self.to == Format::Tsv { "tsv" } else { "jsonl" }
                ));
            }
            return Ok(d);
        }
        if self.output.as_deref().is_some_and(tab_separated_name) {
            Ok(b'\t')
        } else {
            Ok(b',')
        }
    }
}

/// `fastcsv select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Columns to keep, e.g. `name,3,5-7,!notes` (see below).
    #[arg(value_name = "COLUMNS", value_parser = Selection::parse_arg)]
    pub columns: Selection,
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
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

/// `fastcsv slice`.
#[derive(Debug, Args)]
pub struct SliceArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Index of the first record to write (0-based).
    #[arg(short, long, value_name = "N", conflicts_with = "index")]
    pub start: Option<u64>,
    /// Index of the record to stop before.
    #[arg(short, long, value_name = "N", conflicts_with_all = ["len", "index"])]
    pub end: Option<u64>,
    /// Number of records to write.
    #[arg(short, long, value_name = "N", conflicts_with = "index")]
    pub len: Option<u64>,
    /// Write the record at this index alone.
    #[arg(short, long, value_name = "N")]
    pub index: Option<u64>,
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

impl SliceArgs {
    /// The records to write: from the first index up to the second
    /// (excluded; `None`: to the end).
    pub fn range(&self) -> (u64, Option<u64>) {
        if let Some(i) = self.index {
            return (i, Some(i.saturating_add(1)));
        }
        let start = self.start.unwrap_or(0);
        let end = self.end.or(self.len.map(|n| start.saturating_add(n)));
        (start, end)
    }
}

/// `fastcsv search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The regular expression (regex crate syntax).
    #[arg(value_name = "REGEX")]
    pub pattern: String,
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Match letters in either case.
    #[arg(short, long)]
    pub ignore_case: bool,
    /// Write the records where it matches no field.
    #[arg(short = 'v', long)]
    pub invert_match: bool,
    /// Columns to search (as for `select`; default: all).
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

/// `fastcsv cat`.
#[derive(Debug, Args)]
pub struct CatArgs {
    /// Input files (`-` or none: standard input); a first word `rows` or
    /// `columns` (which names no file) picks xsv's mode.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// With `cat columns`: go on to the end of the longest input, the
    /// others giving empty fields.
    #[arg(short, long)]
    pub pad: bool,
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

/// `fastcsv check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Stop after this many problems.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_errors: u64,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Columns to describe (as for `select`; default: all). With a header
    /// row, only their fields are visited.
    #[arg(short, long, value_name = "COLUMNS", value_parser = Selection::parse_arg)]
    pub select: Option<Selection>,
    /// Write a JSON array of per-column objects (fastcsv's statistics).
    #[arg(long, conflicts_with_all = ["csv", "table"])]
    pub json: bool,
    /// Write fastcsv's statistics as CSV, one record per column (`field`,
    /// `non_empty`, `empty`, `distinct`, `distinct_exact`, `min_length`,
    /// `max_length`, `integer`, `float`, `sum`, `min`, `max`, `mean`,
    /// `stddev`), to pipe into other tools.
    #[arg(long, conflicts_with = "table")]
    pub csv: bool,
    /// Write fastcsv's statistics as an aligned table, for people.
    #[arg(long)]
    pub table: bool,
    /// Add the median, mode and cardinality to the default output, then
    /// the quartiles q1 and q3 (each column's values are kept in memory:
    /// see below).
    #[arg(long, conflicts_with_all = ["csv", "table", "json"])]
    pub everything: bool,
    /// Add the median (of a column of numbers) to the default output.
    #[arg(long, conflicts_with_all = ["csv", "table", "json"])]
    pub median: bool,
    /// Add the mode (xsv's rule) to the default output.
    #[arg(long, conflicts_with_all = ["csv", "table", "json"])]
    pub mode: bool,
    /// Add the number of distinct values (the empty one included) to the
    /// default output.
    #[arg(long, conflicts_with_all = ["csv", "table", "json"])]
    pub cardinality: bool,
    /// In the default output, count empty values as zeros in the mean and
    /// standard deviation.
    #[arg(long, conflicts_with_all = ["csv", "table", "json"])]
    pub nulls: bool,
    /// Write the output to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// `fastcsv frequency`.
#[derive(Debug, Args)]
pub struct FrequencyArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Columns to count (as for `select`; default: all).
    #[arg(short, long, value_name = "COLUMNS", value_parser = Selection::parse_arg)]
    pub select: Option<Selection>,
    /// Values per column, the most frequent (0: all).
    #[arg(short, long, value_name = "N", default_value_t = 10)]
    pub limit: usize,
    /// The least frequent values first.
    #[arg(short, long)]
    pub asc: bool,
    /// Leave out empty values.
    #[arg(long)]
    pub no_nulls: bool,
    /// Write the output to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: ParallelArgs,
}

/// The command line with `headers -j N` (a number, or `-jN`) spelt
/// `--jobs N`, as every other command takes `-j N`; `headers -j` before
/// anything else stays `--just-names`, as in xsv. Arguments after `--` are
/// left alone.
pub fn headers_jobs(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_none_or(|c| c != "headers") {
        return args;
    }
    let number = |s: &OsStr| {
        s.to_str().is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut i = 2;
    while i < args.len() {
        if args[i] == "--" {
            break;
        }
        if args[i] == "-j" && args.get(i + 1).is_some_and(|n| number(n)) {
            args[i] = "--jobs".into();
            i += 1;
        } else if let Some(n) = args[i].to_str().and_then(|a| a.strip_prefix("-j")) {
            if number(OsStr::new(n)) {
                args[i] = format!("--jobs={n}").into();
            }
        }
        i += 1;
    }
    args
}

/// Parses a one-byte option value: a single byte, `tab`, `\t`, or `\xHH`.
pub fn parse_byte(s: &str) -> Result<u8, String> {
    match s {
        "tab" | "\\t" => return Ok(b'\t'),
        "space" => return Ok(b' '),
        _ => {}
    }
    if let Some(hex) = s.strip_prefix("\\x") {
        if hex.len() == 2 {
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                return Ok(b);
            }
        }
        return Err(format!("`{s}`: expected \\x and two hex digits"));
    }
    match s.as_bytes() {
        [b] => Ok(*b),
        [] => Err("expected one byte, got nothing".into()),
        _ => Err(format!("`{s}` is {} bytes; expected one byte, `tab`, `\\t` or `\\xHH`", s.len())),
    }
}

/// [`parse_byte`] for `--out-delimiter`: not the output's quote (`"`), CR
/// or LF, which would make the output unreadable as CSV.
pub fn parse_out_delimiter(s: &str) -> Result<u8, String> {
    match parse_byte(s)? {
        b'"' => Err("the output's quote `\"` cannot be its delimiter".into()),
        b'\r' | b'\n' => Err("a line end (CR or LF) cannot be the output's delimiter".into()),
        b => Ok(b),
    }
}

/// `fastcsv bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The file to measure (a regular file: it is read many times); with
    /// several, each file is timed on its own.
    #[arg(value_name = "FILE", required_unless_present = "dir")]
    pub file: Vec<PathBuf>,
    /// Time every regular file in DIR on its own, grouped by size.
    #[arg(long = "files", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// read() buffer sizes to try, comma-separated (e.g. 1K,4K,128K,4M;
    /// at most 1G).
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_buffer_size)]
    pub sizes: Vec<usize>,
    /// Runs per source (default 3, lowered to fit about 40 s).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Evict the files from the page cache before every run.
    #[arg(long)]
    pub cold: bool,
    /// The engines to time, comma-separated: count (as `fastcsv count`),
    /// select (as `fastcsv select`), rows, fields, utf8 (every row through
    /// the row reader; touching nothing, every field, or checking UTF-8).
    #[arg(
        long,
        value_name = "WORK",
        value_delimiter = ',',
        default_value = "count,rows",
        value_parser = PossibleValuesParser::new(["count", "select", "rows", "fields", "utf8"])
            .map(|s| Work::parse(&s).unwrap_or_default()),
    )]
    pub work: Vec<Work>,
    /// Threads for count and select on one file (default: the CPUs
    /// available, as `fastcsv count` uses; a mapped file is split across
    /// them, a read() stream is parsed on one).
    #[arg(short = 'j', long, visible_alias = "jobs", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Write the report as JSON (every run included) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG chart: throughput with min-max whiskers, and CPU
    /// time split into user and system.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Field delimiter: one byte, `tab`, `\t` or `\xHH` (default: a comma,
    /// or a tab for a FILE named *.tsv or *.tab, as xsv does).
    #[arg(short, long, value_name = "BYTE", value_parser = parse_byte)]
    pub delimiter: Option<u8>,
    /// The first record is data, not a header row.
    #[arg(short, long)]
    pub no_headers: bool,
    /// Records may have different numbers of fields.
    #[arg(long)]
    pub flexible: bool,
}

impl BenchArgs {
    /// The dialect to measure with (empty lines skipped, as everywhere).
    pub fn dialect(&self) -> fastcsv::Result<Dialect> {
        Dialect::builder()
            .delimiter(input_delimiter(self.delimiter, self.file.first().map(PathBuf::as_path)))
            .headers(!self.no_headers)
            .flexible(self.flexible)
            .skip_empty_lines(true)
            .build()
    }
}

/// Parses a size: a number of bytes, optionally followed by `K`, `M` or `G`
/// (powers of 1024; `KB`, `KiB`, `k` are accepted too).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let n: usize = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a number of bytes such as 65536, 128K or 1M"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (use K, M or G)")),
    };
    let size = n.checked_mul(1 << shift).ok_or_else(|| format!("`{s}` is too large"))?;
    if size == 0 {
        return Err("a size must be at least 1 byte".into());
    }
    Ok(size)
}

/// The largest `--buffer-size` (and `bench --sizes`): 1 GiB. The buffer is
/// allocated whole when an input is opened, and once more for each chunk a
/// read-ahead thread holds (up to 8), while `read()` gains nothing from
/// buffers past a few MiB (`bench`'s sizes stop at 4M) and a longer record
/// grows the buffer anyway. 1 GiB leaves room to experiment, and a slip
/// such as `1000G` is a usage error instead of an allocation that fails.
pub const MAX_BUFFER_SIZE: usize = 1 << 30;

/// [`parse_size`], at most [`MAX_BUFFER_SIZE`].
pub fn parse_buffer_size(s: &str) -> Result<usize, String> {
    let size = parse_size(s)?;
    if size > MAX_BUFFER_SIZE {
        return Err(format!("`{s}`: the buffer size must be at most 1G"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        assert_eq!(parse_byte(","), Ok(b','));
        assert_eq!(parse_byte("tab"), Ok(b'\t'));
        assert_eq!(parse_byte("\\t"), Ok(b'\t'));
        assert_eq!(parse_byte("\t"), Ok(b'\t'));
        assert_eq!(parse_byte("\\x1f"), Ok(0x1f));
        assert!(parse_byte("").is_err());
        assert!(parse_byte(";;").is_err());
        assert!(parse_byte("\u{e9}").is_err());
        assert!(parse_byte("\\xzz").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("128K"), Ok(128 << 10));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert_eq!(parse_buffer_size("1G"), Ok(MAX_BUFFER_SIZE));
        assert_eq!(parse_buffer_size("1073741824"), Ok(MAX_BUFFER_SIZE));
        assert!(parse_buffer_size("1073741825").unwrap_err().contains("at most 1G"));
        assert!(parse_buffer_size("1000G").is_err());
        assert!(parse_buffer_size("0").is_err());
    }

    #[test]
    fn tab_separated_by_name() {
        use std::path::Path;
        assert_eq!(input_delimiter(None, Some(Path::new("a.tsv"))), b'\t');
        assert_eq!(input_delimiter(None, Some(Path::new("dir/a.TAB"))), b'\t');
        assert_eq!(input_delimiter(None, Some(Path::new("a.csv"))), b',');
        assert_eq!(input_delimiter(None, Some(Path::new("tsv"))), b',');
        assert_eq!(input_delimiter(None, None), b',');
        assert_eq!(input_delimiter(Some(b';'), Some(Path::new("a.tsv"))), b';');
    }

    #[test]
    fn headers_takes_j_with_a_number() {
        let v = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        let f = |a: &[&str]| headers_jobs(v(a));
        assert_eq!(
            f(&["x", "headers", "-j", "2", "a.csv"]),
            v(&["x", "headers", "--jobs", "2", "a.csv"])
        );
        assert_eq!(f(&["x", "headers", "-j3", "a.csv"]), v(&["x", "headers", "--jobs=3", "a.csv"]));
        assert_eq!(f(&["x", "headers", "-j", "0"]), v(&["x", "headers", "--jobs", "0"]));
        // xsv's `-j`: just the names.
        assert_eq!(f(&["x", "headers", "-j", "a.csv"]), v(&["x", "headers", "-j", "a.csv"]));
        assert_eq!(f(&["x", "headers", "-j"]), v(&["x", "headers", "-j"]));
        assert_eq!(f(&["x", "headers", "--", "-j", "2"]), v(&["x", "headers", "--", "-j", "2"]));
        // Other commands parse `-j N` themselves.
        assert_eq!(f(&["x", "count", "-j", "2"]), v(&["x", "count", "-j", "2"]));
    }

    #[test]
    fn clap_definitions_are_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
