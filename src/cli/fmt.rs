//! `fastcsv fmt`: rewrite CSV with another delimiter, quote, escape, line
//! end or quoting style, as `xsv fmt` does; and [`CsvOut`], the CSV writer
//! of the verbs that write as xsv writes (the `csv` crate's rules).

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;

use super::args::{parse_byte, InputArgs};
use super::output::CsvRewrite;
use super::{path_arg, Failure, Input};

/// `fastcsv fmt --help`'s text after the options.
pub const HELP: &str = "\
Reads every record (the header row too) with the input delimiter -d and
writes it with -t's delimiter, --quote's quote, doubled quotes or --escape's
escape (written before a quote and before itself), and LF (or --crlf, or with --ascii 0x1F and 0x1E). A field is quoted
when it holds the delimiter, the quote, the escape, CR or LF (or the --ascii
record separator), or always with --quote-always; a record of one empty field
is written \"\" (as xsv fmt writes it).

Examples:
  fastcsv fmt -t ';' export.csv
  fastcsv fmt -d tab --crlf --quote-always export.tsv -o for-excel.csv";

/// `fastcsv fmt`.
#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The field delimiter of the output.
    #[arg(short = 't', long, value_name = "BYTE", default_value = ",", value_parser = parse_byte)]
    pub out_delimiter: u8,
    /// End records with CR LF instead of LF.
    #[arg(long)]
    pub crlf: bool,
    /// ASCII separators: 0x1F between fields, 0x1E after each record.
    #[arg(long)]
    pub ascii: bool,
    /// The quote of the output.
    #[arg(long, value_name = "BYTE", default_value = "\"", value_parser = parse_byte)]
    pub quote: u8,
    /// Quote every field.
    #[arg(long)]
    pub quote_always: bool,
    /// Escape quotes in the output with this byte instead of doubling
    /// them.
    #[arg(long, value_name = "BYTE", value_parser = parse_byte)]
    pub escape: Option<u8>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// The options of the verbs that read CSV with a delimiter only, as xsv's
/// `fmt`, `table` and `fixlengths` do.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Common options")]
pub struct CommonArgs {
    /// Field delimiter of the input: one byte, `tab`, `\t` or `\xHH`
    /// (default: a comma, or a tab for a FILE named *.tsv or *.tab).
    #[arg(short, long, value_name = "BYTE", value_parser = parse_byte)]
    pub delimiter: Option<u8>,
    /// Records of the input may have different numbers of fields.
    #[arg(long)]
    pub flexible: bool,
    /// Write the output to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub par: super::args::ParallelArgs,
}

impl CommonArgs {
    /// The input options these stand for: the defaults (see
    /// [`default_input`]) with this delimiter, `--flexible`, `--quiet` and
    /// `-j`.
    pub fn input(&self) -> InputArgs {
        let mut a = default_input();
        a.delimiter = self.delimiter;
        a.flexible = self.flexible;
        a.quiet = self.quiet;
        a.jobs = self.par.jobs;
        a
    }
}

/// Every input option at its default.
pub fn default_input() -> InputArgs {
    use clap::FromArgMatches;
    let m = InputArgs::augment_args(clap::Command::new("input")).get_matches_from(["input"]);
    InputArgs::from_arg_matches(&m).expect("the input options have defaults")
}

/// How [`CsvOut`] writes: the settings of the `csv` crate's writer.
#[derive(Debug, Clone, Copy)]
pub struct CsvStyle {
    /// Between fields.
    pub delimiter: u8,
    /// Around fields that need it.
    pub quote: u8,
    /// Before a quote inside a field; `None`: quotes are doubled.
    pub escape: Option<u8>,
    /// After each record.
    pub terminator: Terminator,
    /// Quote every field.
    pub always: bool,
}

/// A record terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminator {
    /// CR LF.
    Crlf,
    /// One byte (LF by default).
    Byte(u8),
}

impl CsvStyle {
    /// The style of CSV written to `-o FILE` (`None`: standard output): a
    /// tab between fields for a name ending in `.tsv` or `.tab`, as xsv
    /// writes it, else a comma.
    pub fn for_output(path: Option<&std::path::Path>) -> CsvStyle {
        let tab = path.is_some_and(super::args::tab_separated_name);
        CsvStyle { delimiter: if tab { b'\t' } else { b',' }, ..CsvStyle::default() }
    }

    /// The bytes for which a field is quoted (unless every field is): the
    /// delimiter, the quote, the escape (when quotes are escaped), CR and
    /// LF (or the terminator when it is another byte).
    pub fn needs(&self) -> [bool; 256] {
        let mut needs = [false; 256];
        needs[self.delimiter as usize] = true;
        needs[self.quote as usize] = true;
        if let Some(e) = self.escape {
            needs[e as usize] = true;
        }
        match self.terminator {
            Terminator::Crlf | Terminator::Byte(b'\n' | b'\r') => {
                needs[b'\r' as usize] = true;
                needs[b'\n' as usize] = true;
            }
            Terminator::Byte(b) => needs[b as usize] = true,
        }
        needs
    }

    /// Whether CSV written in this style can be read back: the delimiter,
    /// the quote, the escape and the record end must be different bytes,
    /// and none of the first three CR or LF. A message for a usage error
    /// otherwise.
    pub fn check(&self) -> Result<(), String> {
        let name = |b: u8| match b {
            b'\r' => "CR".to_string(),
            b'\n' => "LF".to_string(),
            b if b.is_ascii_graphic() || b == b' ' => format!("`{}`", b as char),
            b => format!("\\x{b:02X}"),
        };
        let mut roles = vec![("delimiter", self.delimiter), ("quote", self.quote)];
        if let Some(e) = self.escape.filter(|&e| e != self.quote) {
            roles.push(("escape", e));
        }
        for (i, &(role, b)) in roles.iter().enumerate() {
            if let Some(&(other, _)) = roles[..i].iter().find(|&&(_, o)| o == b) {
                return Err(format!("the output's {other} and {role} are both {}", name(b)));
            }
            let term = match self.terminator {
                Terminator::Crlf => b == b'\r' || b == b'\n',
                Terminator::Byte(t) => b == t || b == b'\r' || b == b'\n',
            };
            if term {
                return Err(format!(
                    "the output's {role} cannot be {}, which ends records",
                    name(b)
                ));
            }
        }
        Ok(())
    }
}

impl Default for CsvStyle {
    fn default() -> CsvStyle {
        CsvStyle {
            delimiter: b',',
            quote: b'"',
            escape: None,
            terminator: Terminator::Byte(b'\n'),
            always: false,
        }
    }
}

/// A CSV writer with the `csv` crate's rules (so its output is xsv's byte
/// for byte): a field is quoted when it holds the delimiter, the quote,
/// the escape (when quotes are escaped), CR or LF (or the terminator when
/// it is another byte); a record with no bytes (one empty field) is
/// written `""`. Writes go straight to `out` (buffer it).
pub struct CsvOut<W: Write> {
    out: W,
    style: CsvStyle,
    needs: [bool; 256],
}

impl<W: Write> CsvOut<W> {
    /// A writer to `out` in `style`.
    pub fn new(out: W, style: CsvStyle) -> CsvOut<W> {
        CsvOut { out, style, needs: style.needs() }
    }

    /// Writes one record.
    pub fn record<F: AsRef<[u8]>>(
        &mut self,
        fields: impl IntoIterator<Item = F>,
    ) -> io::Result<()> {
        let mut bytes = false;
        for (i, f) in fields.into_iter().enumerate() {
            if i > 0 {
                self.out.write_all(&[self.style.delimiter])?;
                bytes = true;
            }
            bytes |= self.field(f.as_ref())?;
        }
        if !bytes {
            self.out.write_all(&[self.style.quote, self.style.quote])?;
        }
        match self.style.terminator {
            Terminator::Crlf => self.out.write_all(b"\r\n"),
            Terminator::Byte(b) => self.out.write_all(&[b]),
        }
    }

    /// Writes one field; whether it wrote any byte.
    fn field(&mut self, f: &[u8]) -> io::Result<bool> {
        if !self.style.always && !f.iter().any(|&b| self.needs[b as usize]) {
            self.out.write_all(f)?;
            return Ok(!f.is_empty());
        }
        let q = self.style.quote;
        self.out.write_all(&[q])?;
        // Before a quote, the escape (or a second quote); before the
        // escape itself too, so that it reads back as itself.
        let e = self.style.escape.unwrap_or(q);
        let mut rest = f;
        while let Some(i) = memchr::memchr2(q, e, rest) {
            self.out.write_all(&rest[..i])?;
            self.out.write_all(&[e, rest[i]])?;
            rest = &rest[i + 1..];
        }
        self.out.write_all(rest)?;
        self.out.write_all(&[q])?;
        Ok(true)
    }

    /// Gives the writer back (the tests read what was written).
    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Shortens `f` to `n` characters (bytes when it is not UTF-8) followed by
/// `...` when it is longer, as xsv's `--condense` does.
pub fn condense(f: &[u8], n: Option<usize>) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let Some(n) = n else { return Cow::Borrowed(f) };
    if let Ok(s) = std::str::from_utf8(f) {
        return match s.char_indices().nth(n) {
            None => Cow::Borrowed(f),
            Some((at, _)) => Cow::Owned([&f[..at], b"..."].concat()),
        };
    }
    if n >= f.len() {
        return Cow::Borrowed(f);
    }
    Cow::Owned([&f[..n], b"..."].concat())
}

/// Opens an input for the verbs that read every row as a record, header
/// row included (as xsv's `fmt`, `table`, `input`, `fixlengths` and `cat
/// columns` read): `--no-headers` is implied.
pub fn open_all_rows(file: Option<&std::path::Path>, args: &InputArgs) -> Result<Input, Failure> {
    let args = InputArgs { no_headers: true, ..args.clone() };
    Input::open(path_arg(file), &args, false)
}

/// `fastcsv fmt`.
pub fn run(a: &FmtArgs) -> Result<(), Failure> {
    let mut input = open_all_rows(a.file.as_deref(), &a.common.input())?;
    let paths = [path_arg(a.file.as_deref())];
    let mut style = CsvStyle {
        delimiter: a.out_delimiter,
        quote: a.quote,
        escape: a.escape,
        terminator: if a.crlf { Terminator::Crlf } else { Terminator::Byte(b'\n') },
        always: a.quote_always,
    };
    if a.ascii {
        style.delimiter = 0x1f;
        style.terminator = Terminator::Byte(0x1e);
    }
    style.check().map_err(Failure::Usage)?;
    let out = super::commands::sink(a.common.output.as_deref(), &paths)?;
    rewrite(&mut input, style, out)
}

/// Reading on the calling thread alone, handing the output over every
/// 256 KiB of input (while it is still in the cache).
pub fn one_thread() -> fastcsv::Parallel {
    fastcsv::Parallel::new().threads(1).chunk_size(256 << 10)
}

/// Writes every remaining record of `input` to `out` as CSV in `style`,
/// copying input bytes where they already are the output's (see
/// [`CsvRewrite`]); on one thread.
pub fn rewrite(input: &mut Input, style: CsvStyle, mut out: impl Write) -> Result<(), Failure> {
    let w = CsvRewrite::new(input.reader.dialect(), style, true);
    input.par_each_batch(
        &w.selection(),
        &one_thread(),
        Vec::new,
        |b, buf: &mut Vec<u8>| -> Result<(), Failure> {
            w.append(b, 0..b.len(), buf);
            Ok(())
        },
        |buf| {
            out.write_all(buf)?;
            buf.clear();
            Ok(())
        },
    )?;
    Ok(out.flush()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(style: CsvStyle, rows: &[&[&str]]) -> String {
        let mut w = CsvOut::new(Vec::new(), style);
        for r in rows {
            w.record(r.iter().map(|f| f.as_bytes())).unwrap();
        }
        String::from_utf8(w.into_inner()).unwrap()
    }

    #[test]
    fn quotes_as_the_csv_crate() {
        let d = CsvStyle::default();
        assert_eq!(render(d, &[&["a", "b,c", "d\"e", "f\rg"]]), "a,\"b,c\",\"d\"\"e\",\"f\rg\"\n");
        assert_eq!(render(d, &[&[""], &["", ""]]), "\"\"\n,\n");
        let e = CsvStyle { escape: Some(b'\\'), ..d };
        // The escape is escaped too (the csv crate's writer leaves it, and
        // its output then reads back without it).
        assert_eq!(render(e, &[&["a\"b", "c\\d"]]), "\"a\\\"b\",\"c\\\\d\"\n");
        let always = CsvStyle { always: true, terminator: Terminator::Crlf, ..d };
        assert_eq!(render(always, &[&["a", ""]]), "\"a\",\"\"\r\n");
        let ascii = CsvStyle { delimiter: 0x1f, terminator: Terminator::Byte(0x1e), ..d };
        assert_eq!(render(ascii, &[&["a\nb", "c"]]), "a\nb\x1fc\x1e");
    }

    #[test]
    fn condenses_characters_or_bytes() {
        assert_eq!(&*condense(b"abcdef", Some(3)), b"abc...");
        assert_eq!(&*condense(b"abc", Some(3)), b"abc");
        assert_eq!(&*condense("\u{e9}t\u{e9}".as_bytes(), Some(2)), "\u{e9}t...".as_bytes());
        assert_eq!(&*condense(b"\xff\xfeab", Some(2)), b"\xff\xfe...");
        assert_eq!(&*condense(b"abc", None), b"abc");
    }
}
