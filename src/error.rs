//! The crate's one error type, with positions.
//!
//! Every error that comes from data carries a [`Position`] (1-based line,
//! 0-based record index, absolute byte offset) and, when the input was
//! opened from a path, that path. `Display` renders
//! `path:line: record N, byte B: message`, the form editors and terminals
//! recognise as a jump target.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Where in the input something happened.
///
/// ```
/// use fastcsv::Reader;
/// let mut rdr = Reader::from_slice(b"a,b\n1,2\n");
/// let row = rdr.read_row().unwrap().unwrap();
/// assert_eq!(row.position().line, 2);
/// assert_eq!(row.position().byte, 4);
/// assert_eq!(row.position().record, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    /// Absolute byte offset from the start of the input.
    pub byte: u64,
    /// 1-based line number (lines end at LF, CR or CRLF).
    pub line: u64,
    /// 0-based record index (the header row, if any, is record 0).
    pub record: u64,
}

/// What went wrong.
///
/// ```
/// use fastcsv::{Dialect, ErrorKind, Reader};
/// let d = Dialect::builder().strict(true).build().unwrap();
/// let mut rdr = Reader::builder().dialect(d).from_slice(b"\"a\"b\n");
/// let err = rdr.read_row().unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::QuoteExpected { .. }));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Input ended inside a quoted field (or after an escape) in strict mode.
    UnexpectedEof,
    /// Strict mode: a closing quote was followed by something other than
    /// a delimiter, a quote or a line end.
    QuoteExpected {
        /// The dialect's delimiter.
        delimiter: u8,
        /// The dialect's quote byte.
        quote: u8,
    },
    /// Line-fed input only: a line break inside an unquoted field was
    /// followed by more text on the same line.
    NewlineInUnquotedField,
    /// A field was longer than the configured limit (in characters).
    FieldTooLarge {
        /// The configured limit.
        limit: u64,
    },
    /// A single record outgrew the buffered source's maximum buffer size.
    RecordTooLarge {
        /// The configured maximum, in bytes.
        limit: usize,
    },
    /// A record had a different number of fields than the first one and
    /// the dialect is not flexible.
    RaggedRow {
        /// Number of fields of the first record.
        expected: usize,
        /// Number of fields of this record.
        found: usize,
    },
    /// Columns ([`crate::arrow::Columns`]): a record had more fields than
    /// there are columns.
    LongRow {
        /// The number of columns (of the file, whatever the selection).
        columns: usize,
        /// Number of fields of this record.
        found: usize,
        /// What fixed the number of columns.
        from: ColumnsFrom,
    },
    /// A field is not valid UTF-8 (reported only when text is requested).
    Utf8 {
        /// 0-based index of the field in its record.
        field: usize,
        /// Offset within the field of the first invalid byte.
        valid_up_to: usize,
    },
    /// A value does not fit the type asked for its column (Arrow columns
    /// with types: [`crate::arrow::DataType`]).
    Value {
        /// 0-based index of the field in its record.
        field: usize,
        /// The type's name (`int64`, `float64`, `bool`).
        expected: &'static str,
        /// The value (its first 40 characters, invalid UTF-8 replaced).
        value: String,
    },
    /// A mapped file shrank while it was being read.
    FileChanged,
    /// A dialect or reader setting is invalid.
    Config(String),
    /// An I/O error.
    Io(io::Error),
    /// Compressed input could not be decoded: corrupt, cut short, or a
    /// format that is recognised but not read (a ZIP archive). Rows read
    /// before it are whole; no row is made of a partly decoded tail.
    Decompress {
        /// The input's format.
        codec: crate::codec::Codec,
        /// Bytes of the compressed input the decoder had consumed when it
        /// failed, from the start of the file.
        offset: Option<u64>,
        /// What the decoder reported.
        message: String,
    },
}

/// What fixed the number of columns of a read into columns, named by a
/// [`ErrorKind::LongRow`] error.
///
/// ```
/// use fastcsv::{ColumnsFrom, ErrorKind};
/// let k = ErrorKind::LongRow { columns: 2, found: 3, from: ColumnsFrom::Names };
/// assert_eq!(k.to_string(), "found record with 3 fields, but 2 column names were given");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnsFrom {
    /// The header row.
    Header,
    /// The names the caller gave.
    Names,
    /// The first record (no header row).
    FirstRecord,
}

struct Inner {
    kind: ErrorKind,
    pos: Option<Position>,
    path: Option<PathBuf>,
}

/// The error type of every fallible operation in this crate.
///
/// ```
/// use fastcsv::{Dialect, Reader};
/// let d = Dialect::builder().strict(true).headers(false).build().unwrap();
/// let mut rdr = Reader::builder().dialect(d).from_slice(b"x\n\"open");
/// rdr.read_row().unwrap();
/// let err = rdr.read_row().unwrap_err();
/// assert_eq!(err.to_string(), "line 2: record 1, byte 2: unexpected end of data");
/// assert_eq!(rdr.line(), 2);
/// ```
pub struct Error(Box<Inner>);

/// Shorthand for `std::result::Result<T, fastcsv::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds an error of the given kind with no position.
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::UnexpectedEof);
    /// assert!(e.position().is_none());
    /// ```
    pub fn new(kind: ErrorKind) -> Error {
        Error(Box::new(Inner { kind, pos: None, path: None }))
    }

    pub(crate) fn config(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Config(msg.into()))
    }

    /// Attaches a position.
    ///
    /// ```
    /// use fastcsv::{Error, ErrorKind, Position};
    /// let p = Position { byte: 7, line: 2, record: 1 };
    /// let e = Error::new(ErrorKind::UnexpectedEof).with_position(p);
    /// assert_eq!(e.position(), Some(p));
    /// ```
    pub fn with_position(mut self, pos: Position) -> Error {
        self.0.pos = Some(pos);
        self
    }

    /// Attaches the path of the input.
    ///
    /// ```
    /// use fastcsv::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::UnexpectedEof).with_path("x.csv");
    /// assert_eq!(e.path().unwrap().to_str(), Some("x.csv"));
    /// ```
    pub fn with_path(mut self, path: impl AsRef<Path>) -> Error {
        self.0.path = Some(path.as_ref().to_path_buf());
        self
    }

    /// The kind of error.
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
    /// assert!(matches!(e.kind(), fastcsv::ErrorKind::FileChanged));
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Consumes the error, returning its kind.
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
    /// assert!(matches!(e.into_kind(), fastcsv::ErrorKind::FileChanged));
    /// ```
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// Where the error happened, if it came from data.
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
    /// assert_eq!(e.position(), None);
    /// ```
    pub fn position(&self) -> Option<Position> {
        self.0.pos
    }

    /// The path of the input, when it was opened from one.
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
    /// assert!(e.path().is_none());
    /// ```
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The message alone, without path or position (e.g. the text the
    /// Python `csv` module would raise).
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::FieldTooLarge { limit: 5 });
    /// assert_eq!(e.message(), "field larger than field limit (5)");
    /// ```
    pub fn message(&self) -> String {
        self.0.kind.to_string()
    }

    /// True for errors in the data itself (as opposed to I/O or settings).
    ///
    /// ```
    /// let e = fastcsv::Error::new(fastcsv::ErrorKind::UnexpectedEof);
    /// assert!(e.is_data());
    /// ```
    pub fn is_data(&self) -> bool {
        !matches!(self.0.kind, ErrorKind::Io(_) | ErrorKind::Config(_))
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnexpectedEof => f.write_str("unexpected end of data"),
            ErrorKind::QuoteExpected { delimiter, quote } => {
                write!(f, "'{}' expected after '{}'", char::from(*delimiter), char::from(*quote))
            }
            ErrorKind::NewlineInUnquotedField => f.write_str(
                "new-line character seen in unquoted field - \
                 do you need to open the file with newline=''?",
            ),
            ErrorKind::FieldTooLarge { limit } => {
                write!(f, "field larger than field limit ({limit})")
            }
            ErrorKind::RecordTooLarge { limit } => {
                write!(f, "record larger than the maximum buffer size ({limit} bytes)")
            }
            ErrorKind::RaggedRow { expected, found } => write!(
                f,
                "found record with {found} fields, but the previous record \
                 has {expected} fields"
            ),
            ErrorKind::LongRow { columns, found, from } => {
                write!(f, "found record with {found} fields, but ")?;
                match from {
                    ColumnsFrom::Header => write!(f, "the header row has {columns} fields"),
                    ColumnsFrom::Names => write!(f, "{columns} column names were given"),
                    ColumnsFrom::FirstRecord => {
                        write!(f, "the first record has {columns} fields")
                    }
                }
            }
            ErrorKind::Utf8 { field, valid_up_to } => {
                write!(f, "invalid UTF-8 in field {field} at byte {valid_up_to} of the field")
            }
            ErrorKind::Value { field, expected, value } => {
                write!(f, "field {field} is not a valid {expected}: {value:?}")
            }
            ErrorKind::FileChanged => f.write_str("file changed while reading"),
            ErrorKind::Config(msg) => f.write_str(msg),
            ErrorKind::Io(e) => write!(f, "{e}"),
            ErrorKind::Decompress { codec, offset: Some(at), message } => {
                write!(f, "{codec} data, at byte {at} of the compressed input: {message}")
            }
            ErrorKind::Decompress { codec, offset: None, message } => {
                write!(f, "{codec} data: {message}")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.0.path {
            write!(f, "{}:", p.display())?;
        }
        match self.0.pos {
            Some(pos) => {
                if self.0.path.is_some() {
                    write!(f, "{}: ", pos.line)?;
                } else {
                    write!(f, "line {}: ", pos.line)?;
                }
                write!(f, "record {}, byte {}: {}", pos.record, pos.byte, self.0.kind)
            }
            None => {
                if self.0.path.is_some() {
                    f.write_str(" ")?;
                }
                write!(f, "{}", self.0.kind)
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("pos", &self.0.pos)
            .field("path", &self.0.path)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        use crate::codec::DecompressError;
        // A decoder's failure travels through the read buffers as an
        // `io::Error`; give it its own kind back.
        if e.get_ref().is_some_and(|i| i.is::<DecompressError>()) {
            let Some(Ok(d)) = e.into_inner().map(|i| i.downcast::<DecompressError>()) else {
                unreachable!("the payload was checked to be a DecompressError");
            };
            let DecompressError { codec, offset, message } = *d;
            return Error::new(ErrorKind::Decompress { codec, offset: Some(offset), message });
        }
        Error::new(ErrorKind::Io(e))
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e.0.kind {
            ErrorKind::Io(inner) if e.0.path.is_none() => inner,
            _ => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_path() {
        let p = Position { byte: 10, line: 3, record: 2 };
        let e = Error::new(ErrorKind::UnexpectedEof).with_position(p);
        assert_eq!(e.to_string(), "line 3: record 2, byte 10: unexpected end of data");
        let e = e.with_path("data.csv");
        assert_eq!(e.to_string(), "data.csv:3: record 2, byte 10: unexpected end of data");
        let io = Error::from(io::Error::new(io::ErrorKind::NotFound, "nope")).with_path("x.csv");
        assert_eq!(io.to_string(), "x.csv: nope");
    }

    #[test]
    fn quote_expected_message_matches_python() {
        let k = ErrorKind::QuoteExpected { delimiter: b',', quote: b'"' };
        assert_eq!(k.to_string(), "',' expected after '\"'");
    }
}
