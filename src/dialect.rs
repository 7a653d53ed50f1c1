//! Dialect: how the bytes of a CSV file are to be read.

use crate::error::{Error, Result};

/// What ends a record.
///
/// ```
/// use fastcsv::{Dialect, Terminator};
/// let d = Dialect::builder().terminator(Terminator::Byte(b';')).build().unwrap();
/// assert_eq!(d.terminator(), Terminator::Byte(b';'));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Terminator {
    /// CR, LF and CRLF all end a record (the default, as in Python's `csv`).
    #[default]
    Any,
    /// Only this byte ends a record; CR and LF are ordinary data.
    Byte(u8),
}

/// Removal of non-visible characters from field contents.
///
/// The filter applies to field contents after unquoting, never to the
/// structure (delimiters, quotes, record terminators).
///
/// ```
/// use fastcsv::{Dialect, Filter, Reader};
/// let d = Dialect::builder().filter(Filter::Controls).headers(false).build().unwrap();
/// let mut rdr = Reader::builder().dialect(d).from_slice(b"a\x00b,\x07c\n");
/// let row = rdr.read_row().unwrap().unwrap();
/// assert_eq!(row.get(0), Some(&b"ab"[..]));
/// assert_eq!(row.get(1), Some(&b"c"[..]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Filter {
    /// Keep every byte (the default).
    #[default]
    Off,
    /// Remove ASCII control bytes 0x00-0x1F and 0x7F except TAB, LF and CR.
    Controls,
    /// Remove every ASCII control byte, TAB, LF and CR included (multi-line
    /// cells become one line).
    AllControls,
    /// `Controls` plus the Unicode format characters that render as nothing:
    /// U+00AD, U+200B-U+200F, U+202A-U+202E, U+2060-U+2064, U+2066-U+2069 and
    /// U+FEFF.
    Invisible,
}

impl Filter {
    /// Parses `off`, `controls`, `all-controls` or `invisible`.
    ///
    /// ```
    /// assert_eq!(fastcsv::Filter::parse("all-controls"), Some(fastcsv::Filter::AllControls));
    /// assert_eq!(fastcsv::Filter::parse("bogus"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Filter> {
        match s {
            "off" | "none" => Some(Filter::Off),
            "controls" => Some(Filter::Controls),
            "all-controls" | "all_controls" => Some(Filter::AllControls),
            "invisible" => Some(Filter::Invisible),
            _ => None,
        }
    }
}

/// A validated set of parsing options. Build one with [`Dialect::builder`].
///
/// The defaults follow Python's `csv` module reader (`excel` dialect):
/// comma, double quote, doubled quotes, no escape, CR/LF/CRLF terminators,
/// not strict; plus a header row and rectangular records as the Rust `csv`
/// crate expects.
///
/// ```
/// use fastcsv::Dialect;
/// let d = Dialect::builder().delimiter(b'\t').quote(None).build().unwrap();
/// assert_eq!(d.delimiter(), b'\t');
/// assert_eq!(d.quote(), None);
/// assert!(Dialect::builder().delimiter(b'\n').build().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    pub(crate) delimiter: u8,
    pub(crate) quote: Option<u8>,
    pub(crate) escape: Option<u8>,
    pub(crate) double_quote: bool,
    pub(crate) skip_initial_space: bool,
    pub(crate) strict: bool,
    pub(crate) comment: Option<u8>,
    pub(crate) terminator: Terminator,
    pub(crate) trim: bool,
    pub(crate) headers: bool,
    pub(crate) flexible: bool,
    pub(crate) skip_empty_lines: bool,
    pub(crate) strip_bom: bool,
    pub(crate) filter: Filter,
    pub(crate) field_limit: Option<u64>,
}

impl Default for Dialect {
    fn default() -> Dialect {
        Dialect {
            delimiter: b',',
            quote: Some(b'"'),
            escape: None,
            double_quote: true,
            skip_initial_space: false,
            strict: false,
            comment: None,
            terminator: Terminator::Any,
            trim: false,
            headers: true,
            flexible: false,
            skip_empty_lines: false,
            strip_bom: true,
            filter: Filter::Off,
            field_limit: None,
        }
    }
}

impl Dialect {
    /// A builder starting from the defaults.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().strict(true).build().unwrap();
    /// assert!(d.strict());
    /// ```
    pub fn builder() -> DialectBuilder {
        DialectBuilder { d: Dialect::default() }
    }

    /// A builder starting from this dialect's settings.
    ///
    /// ```
    /// let d = fastcsv::Dialect::default();
    /// let t = d.to_builder().delimiter(b'\t').build().unwrap();
    /// assert_eq!(t.delimiter(), b'\t');
    /// ```
    pub fn to_builder(&self) -> DialectBuilder {
        DialectBuilder { d: self.clone() }
    }

    /// Field delimiter.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().delimiter(), b',');
    /// ```
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }
    /// Quote byte, or `None` when quoting is off.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().quote(), Some(b'"'));
    /// ```
    pub fn quote(&self) -> Option<u8> {
        self.quote
    }
    /// Escape byte, if any.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().escape(), None);
    /// ```
    pub fn escape(&self) -> Option<u8> {
        self.escape
    }
    /// Whether `""` inside a quoted field stands for one quote.
    ///
    /// ```
    /// assert!(fastcsv::Dialect::default().double_quote());
    /// ```
    pub fn double_quote(&self) -> bool {
        self.double_quote
    }
    /// Whether spaces directly after a delimiter are ignored.
    ///
    /// ```
    /// assert!(!fastcsv::Dialect::default().skip_initial_space());
    /// ```
    pub fn skip_initial_space(&self) -> bool {
        self.skip_initial_space
    }
    /// Whether malformed quoting is an error.
    ///
    /// ```
    /// assert!(!fastcsv::Dialect::default().strict());
    /// ```
    pub fn strict(&self) -> bool {
        self.strict
    }
    /// Comment byte: a line starting with it is skipped.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().comment(), None);
    /// ```
    pub fn comment(&self) -> Option<u8> {
        self.comment
    }
    /// Record terminator.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().terminator(), fastcsv::Terminator::Any);
    /// ```
    pub fn terminator(&self) -> Terminator {
        self.terminator
    }
    /// Whether spaces and tabs around unquoted fields are trimmed.
    ///
    /// ```
    /// assert!(!fastcsv::Dialect::default().trim());
    /// ```
    pub fn trim(&self) -> bool {
        self.trim
    }
    /// Whether the first record is a header row.
    ///
    /// ```
    /// assert!(fastcsv::Dialect::default().headers());
    /// ```
    pub fn headers(&self) -> bool {
        self.headers
    }
    /// Whether records may have different numbers of fields.
    ///
    /// ```
    /// assert!(!fastcsv::Dialect::default().flexible());
    /// ```
    pub fn flexible(&self) -> bool {
        self.flexible
    }
    /// Whether empty lines are skipped (otherwise they are empty rows).
    ///
    /// ```
    /// assert!(!fastcsv::Dialect::default().skip_empty_lines());
    /// ```
    pub fn skip_empty_lines(&self) -> bool {
        self.skip_empty_lines
    }
    /// Whether a UTF-8 byte order mark at the start is removed.
    ///
    /// ```
    /// assert!(fastcsv::Dialect::default().strip_bom());
    /// ```
    pub fn strip_bom(&self) -> bool {
        self.strip_bom
    }
    /// The non-visible character filter.
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().filter(), fastcsv::Filter::Off);
    /// ```
    pub fn filter(&self) -> Filter {
        self.filter
    }
    /// Largest field allowed, in characters (`None`: unlimited).
    ///
    /// ```
    /// assert_eq!(fastcsv::Dialect::default().field_limit(), None);
    /// ```
    pub fn field_limit(&self) -> Option<u64> {
        self.field_limit
    }
}

/// Builds a [`Dialect`]; setters take and return `&mut Self`, and `build`
/// checks the combination.
///
/// ```
/// use fastcsv::Dialect;
/// let mut b = Dialect::builder();
/// b.delimiter(b';').escape(Some(b'\\')).double_quote(false);
/// let d = b.build().unwrap();
/// assert_eq!(d.escape(), Some(b'\\'));
/// ```
#[derive(Clone, Debug)]
pub struct DialectBuilder {
    d: Dialect,
}

macro_rules! setter {
    ($(#[$m:meta])* $name:ident: $ty:ty) => {
        $(#[$m])*
        pub fn $name(&mut self, v: $ty) -> &mut Self {
            self.d.$name = v;
            self
        }
    };
}

impl DialectBuilder {
    setter!(
        /// Field delimiter (any byte but CR, LF and the quote/escape bytes).
        delimiter: u8
    );
    setter!(
        /// Quote byte, or `None` to turn quoting off.
        quote: Option<u8>
    );
    setter!(
        /// Escape byte: the next byte is taken literally.
        escape: Option<u8>
    );
    setter!(
        /// Whether `""` in a quoted field stands for one quote.
        double_quote: bool
    );
    setter!(
        /// Ignore spaces directly after a delimiter.
        skip_initial_space: bool
    );
    setter!(
        /// Malformed quoting is an error instead of being repaired.
        strict: bool
    );
    setter!(
        /// Skip lines whose first byte is this one.
        comment: Option<u8>
    );
    setter!(
        /// What ends a record.
        terminator: Terminator
    );
    setter!(
        /// Trim spaces and tabs around unquoted fields.
        trim: bool
    );
    setter!(
        /// Treat the first record as a header row.
        headers: bool
    );
    setter!(
        /// Allow records with differing numbers of fields.
        flexible: bool
    );
    setter!(
        /// Skip empty lines instead of yielding empty rows.
        skip_empty_lines: bool
    );
    setter!(
        /// Remove a UTF-8 byte order mark at the start of the input.
        strip_bom: bool
    );
    setter!(
        /// Non-visible character filter.
        filter: Filter
    );
    setter!(
        /// Largest field allowed, in characters.
        field_limit: Option<u64>
    );

    /// Checks the settings and returns the dialect, or a
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) error naming the
    /// first bad setting.
    ///
    /// ```
    /// use fastcsv::Dialect;
    /// let e = Dialect::builder().quote(Some(b',')).build().unwrap_err();
    /// assert!(e.to_string().contains("delimiter and quote"));
    /// ```
    pub fn build(&self) -> Result<Dialect> {
        let d = &self.d;
        let newline = |b: u8| match d.terminator {
            Terminator::Any => b == b'\r' || b == b'\n',
            Terminator::Byte(t) => b == t,
        };
        if newline(d.delimiter) {
            return Err(Error::config("delimiter must not be a record terminator"));
        }
        if let Some(q) = d.quote {
            if newline(q) {
                return Err(Error::config("quote must not be a record terminator"));
            }
            if q == d.delimiter {
                return Err(Error::config("delimiter and quote must differ"));
            }
        }
        if let Some(e) = d.escape {
            if newline(e) {
                return Err(Error::config("escape must not be a record terminator"));
            }
            if e == d.delimiter {
                return Err(Error::config("delimiter and escape must differ"));
            }
            if Some(e) == d.quote && d.double_quote {
                return Err(Error::config("escape equal to quote needs double_quote(false)"));
            }
        }
        if let Some(c) = d.comment {
            if newline(c) || c == d.delimiter || Some(c) == d.quote {
                return Err(Error::config(
                    "comment must differ from delimiter, quote and terminator",
                ));
            }
        }
        if d.field_limit == Some(0) {
            return Err(Error::config("field_limit must be at least 1"));
        }
        Ok(d.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_each_have_a_message() {
        let cases: Vec<(DialectBuilder, &str)> = vec![
            (Dialect::builder().delimiter(b'\n').clone(), "delimiter"),
            (Dialect::builder().quote(Some(b'\r')).clone(), "quote"),
            (Dialect::builder().quote(Some(b',')).clone(), "delimiter and quote"),
            (Dialect::builder().escape(Some(b',')).clone(), "escape"),
            (Dialect::builder().escape(Some(b'"')).clone(), "double_quote"),
            (Dialect::builder().comment(Some(b'"')).clone(), "comment"),
            (Dialect::builder().field_limit(Some(0)).clone(), "field_limit"),
            (
                Dialect::builder().terminator(Terminator::Byte(b';')).delimiter(b';').clone(),
                "delimiter",
            ),
        ];
        for (b, needle) in cases {
            let e = b.build().unwrap_err();
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        }
    }

    #[test]
    fn custom_terminator_frees_newlines() {
        let d =
            Dialect::builder().terminator(Terminator::Byte(b';')).delimiter(b'\n').build().unwrap();
        assert_eq!(d.delimiter(), b'\n');
    }
}
