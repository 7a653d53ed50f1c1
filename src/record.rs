//! Rows: a borrowed view ([`Row`]) and an owned copy ([`RowBuf`]).

use crate::error::{Error, ErrorKind, Position, Result};
use crate::scan::Fields;

/// One record, borrowing the input (the mapped file, the slice or the read
/// buffer) for fields that needed no unescaping, and the reader's scratch
/// buffer for those that did. Valid until the next call to the reader.
///
/// ```
/// let mut rdr = fastcsv::Reader::from_slice(b"h1,h2\n\"x\"\"y\",z\n");
/// let row = rdr.read_row().unwrap().unwrap();
/// assert_eq!(row.len(), 2);
/// assert_eq!(row.get(0), Some(&b"x\"y"[..]));
/// assert_eq!(row.get_str(1).unwrap(), "z");
/// assert_eq!(row.iter().count(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct Row<'r> {
    input: &'r [u8],
    fields: &'r Fields,
    pos: Position,
    /// Every structural byte of the dialect is ASCII, so field boundaries
    /// are character boundaries and one UTF-8 check of the record's bytes
    /// covers all of its fields.
    ascii_structure: bool,
    /// The record's own bytes in `input` (from its start): `input[..len]`.
    len: usize,
}

impl<'r> Row<'r> {
    pub(crate) fn new(
        input: &'r [u8],
        len: usize,
        fields: &'r Fields,
        pos: Position,
        ascii_structure: bool,
    ) -> Row<'r> {
        Row { input, fields, pos, ascii_structure, len: len.min(input.len()) }
    }

    /// The record's input bytes, from its first byte through its line end
    /// (or the end of input), as read: quotes and escapes included.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(b"\"x\"\"y\",z\r\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert_eq!(row.raw(), &b"\"x\"\"y\",z\r\n"[..]);
    /// assert_eq!(row.get(0), Some(&b"x\"y"[..]));
    /// ```
    pub fn raw(&self) -> &'r [u8] {
        &self.input[..self.len]
    }

    /// True when decoding the record's bytes as UTF-8 and then splitting
    /// the text could give other fields than splitting the bytes and then
    /// decoding each field, as Python's `csv` over a decoded file does:
    /// some field was unescaped (quote or escape bytes taken out between
    /// its pieces, which may join two invalid pieces into a valid
    /// character), is not ASCII, and the record's bytes are not UTF-8.
    ///
    /// A reader that must give the fields of the decoded text decodes
    /// [`raw`](Self::raw) and splits that for such a record.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// // The closing quote is taken out between `\xc3` and `\x80`: the
    /// // field is a valid "À", the record's bytes are not UTF-8.
    /// let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(b"\"\xc3\"\x80,b\n\"\xc3\x80\",b\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert_eq!(row.get(0), Some("À".as_bytes()));
    /// assert!(row.unescaping_may_join_invalid_utf8());
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert!(!row.unescaping_may_join_invalid_utf8());
    /// ```
    pub fn unescaping_may_join_invalid_utf8(&self) -> bool {
        let scratch = self.fields.scratch();
        self.fields.spans().iter().any(|s| s.is_owned() && !s.bytes(self.input, scratch).is_ascii())
            && simdutf8::basic::from_utf8(self.raw()).is_err()
    }

    /// Number of fields (0 for an empty line).
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(b"\n");
    /// assert_eq!(rdr.read_row().unwrap().unwrap().len(), 0);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// True for a row with no fields (an empty line).
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(b"\n");
    /// assert!(rdr.read_row().unwrap().unwrap().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Field `i`'s bytes, or `None` past the end.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert_eq!(row.get(0), Some(&b"1"[..]));
    /// assert_eq!(row.get(1), None);
    /// ```
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'r [u8]> {
        if i < self.fields.len() {
            Some(self.fields.get(self.input, i))
        } else {
            None
        }
    }

    /// Field `i` as text, validating UTF-8 only now. `Ok(None)` past the end.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n\xff,\xc3\xa9\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert!(row.get_str(0).is_err());
    /// assert_eq!(row.get_str(1).unwrap(), "\u{e9}");
    /// ```
    pub fn get_str(&self, i: usize) -> Result<&'r str> {
        let Some(b) = self.get(i) else {
            return Err(Error::config(format!("no field {i} in a row of {}", self.len())));
        };
        simdutf8::compat::from_utf8(b).map_err(|e| {
            Error::new(ErrorKind::Utf8 { field: i, valid_up_to: e.valid_up_to() })
                .with_position(self.pos)
        })
    }

    /// True when field `i` began with a quote.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n\"1\",2\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert!(row.is_quoted(0) && !row.is_quoted(1));
    /// ```
    pub fn is_quoted(&self, i: usize) -> bool {
        i < self.len() && self.fields.span(i).is_quoted()
    }

    /// True when field `i` began with an ordinary byte (what Python's
    /// `QUOTE_NONNUMERIC` converts to `float`).
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b,c\n1,,\"2\"\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert!(row.is_numeric(0) && !row.is_numeric(1) && !row.is_numeric(2));
    /// ```
    pub fn is_numeric(&self, i: usize) -> bool {
        i < self.len() && self.fields.span(i).is_numeric()
    }

    /// Where the record starts.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// assert_eq!(rdr.read_row().unwrap().unwrap().position().line, 2);
    /// ```
    pub fn position(&self) -> Position {
        self.pos
    }

    /// The fields in order.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n1,2\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// let v: Vec<&[u8]> = row.iter().collect();
    /// assert_eq!(v, vec![&b"1"[..], &b"2"[..]]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'r [u8]> + 'r {
        let (input, fields) = (self.input, self.fields);
        fields.spans().iter().map(move |s| s.bytes(input, fields.scratch()))
    }

    /// All fields as UTF-8 strings.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n1,2\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert_eq!(row.to_strings().unwrap(), vec!["1", "2"]);
    /// ```
    pub fn to_strings(&self) -> Result<Vec<&'r str>> {
        Ok(self.str_iter()?.collect())
    }

    /// The fields as `&str`, validating the record's UTF-8 once (not field
    /// by field) when the dialect's structural bytes are ASCII. The error
    /// names the first invalid field.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n\"x\"\"y\",\xc3\xa9\n1,\xff\n");
    /// let row = rdr.read_row().unwrap().unwrap();
    /// let v: Vec<&str> = row.str_iter().unwrap().collect();
    /// assert_eq!(v, vec!["x\"y", "\u{e9}"]);
    /// let row = rdr.read_row().unwrap().unwrap();
    /// let e = row.str_iter().err().unwrap();
    /// assert!(matches!(e.kind(), fastcsv::ErrorKind::Utf8 { field: 1, .. }));
    /// ```
    pub fn str_iter(&self) -> Result<impl ExactSizeIterator<Item = &'r str> + 'r> {
        if !self.record_is_utf8() {
            // Find and report the first bad field.
            for i in 0..self.len() {
                self.get_str(i)?;
            }
        }
        let (input, fields) = (self.input, self.fields);
        Ok(fields.spans().iter().map(move |s| {
            let b = s.bytes(input, fields.scratch());
            debug_assert!(simdutf8::compat::from_utf8(b).is_ok());
            // SAFETY: `record_is_utf8` returned true, or every field passed
            // `get_str` above. A true `record_is_utf8` means every owned
            // field is valid UTF-8, and so is the input range that all
            // borrowed spans lie in; each borrowed span starts and ends next
            // to an ASCII structural byte (the dialect's are all ASCII) or at
            // the edge of that range, hence on a character boundary, so each
            // borrowed field is valid UTF-8 too.
            unsafe { std::str::from_utf8_unchecked(b) }
        }))
    }

    /// One UTF-8 check for the whole record (see `ascii_structure`).
    fn record_is_utf8(&self) -> bool {
        if !self.ascii_structure {
            return (0..self.len())
                .all(|i| self.get(i).is_some_and(|b| simdutf8::compat::from_utf8(b).is_ok()));
        }
        let spans = self.fields.spans();
        let mut lo = usize::MAX;
        let mut hi = 0;
        for s in spans {
            if s.is_owned() {
                // Unescaped fields sit side by side in scratch, where a
                // boundary need not be a character boundary: check each.
                if simdutf8::compat::from_utf8(s.bytes(self.input, self.fields.scratch())).is_err()
                {
                    return false;
                }
            } else {
                let r = s.range();
                lo = lo.min(r.start);
                hi = hi.max(r.end);
            }
        }
        lo >= hi || simdutf8::compat::from_utf8(&self.input[lo..hi]).is_ok()
    }

    /// Copies the row into an owned [`RowBuf`].
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n1,2\n");
    /// let owned = rdr.read_row().unwrap().unwrap().to_owned();
    /// assert_eq!(owned.get(1), Some(&b"2"[..]));
    /// ```
    #[allow(clippy::wrong_self_convention, clippy::should_implement_trait)]
    pub fn to_owned(&self) -> RowBuf {
        let mut rb = RowBuf::default();
        rb.set_from(self);
        rb
    }
}

impl std::fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|b| String::from_utf8_lossy(b))).finish()
    }
}

/// An owned record, reusable across reads.
///
/// ```
/// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n1,2\n3,4\n");
/// let rows: Vec<fastcsv::RowBuf> = rdr.rows().collect::<Result<_, _>>().unwrap();
/// assert_eq!(rows.len(), 2);
/// assert_eq!(rows[1].get(0), Some(&b"3"[..]));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RowBuf {
    data: Vec<u8>,
    ends: Vec<usize>,
    flags: Vec<u8>,
    pos: Position,
}

impl RowBuf {
    /// Replaces the contents with a copy of `row`.
    ///
    /// ```
    /// let mut buf = fastcsv::RowBuf::default();
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\nx\n");
    /// buf.set_from(&rdr.read_row().unwrap().unwrap());
    /// assert_eq!(buf.get(0), Some(&b"x"[..]));
    /// ```
    pub fn set_from(&mut self, row: &Row<'_>) {
        self.data.clear();
        self.ends.clear();
        self.flags.clear();
        for (i, f) in row.iter().enumerate() {
            self.data.extend_from_slice(f);
            self.ends.push(self.data.len());
            let mut fl = 0;
            if row.is_quoted(i) {
                fl |= 1;
            }
            if row.is_numeric(i) {
                fl |= 2;
            }
            self.flags.push(fl);
        }
        self.pos = row.position();
    }

    /// Number of fields.
    ///
    /// ```
    /// assert_eq!(fastcsv::RowBuf::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no fields.
    ///
    /// ```
    /// assert!(fastcsv::RowBuf::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Field `i`'s bytes.
    ///
    /// ```
    /// assert_eq!(fastcsv::RowBuf::default().get(0), None);
    /// ```
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.data[start..end])
    }

    /// Field `i` as text.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n\xc3\xa9\n");
    /// let row = rdr.rows().next().unwrap().unwrap();
    /// assert_eq!(row.get_str(0).unwrap(), "\u{e9}");
    /// ```
    pub fn get_str(&self, i: usize) -> Result<&str> {
        let b = self
            .get(i)
            .ok_or_else(|| Error::config(format!("no field {i} in a row of {}", self.len())))?;
        simdutf8::compat::from_utf8(b).map_err(|e| {
            Error::new(ErrorKind::Utf8 { field: i, valid_up_to: e.valid_up_to() })
                .with_position(self.pos)
        })
    }

    /// True when field `i` began with a quote.
    ///
    /// ```
    /// assert!(!fastcsv::RowBuf::default().is_quoted(0));
    /// ```
    pub fn is_quoted(&self, i: usize) -> bool {
        self.flags.get(i).is_some_and(|f| f & 1 != 0)
    }

    /// True when field `i` began with an ordinary byte.
    ///
    /// ```
    /// assert!(!fastcsv::RowBuf::default().is_numeric(0));
    /// ```
    pub fn is_numeric(&self, i: usize) -> bool {
        self.flags.get(i).is_some_and(|f| f & 2 != 0)
    }

    /// Where the record started.
    ///
    /// ```
    /// assert_eq!(fastcsv::RowBuf::default().position().line, 0);
    /// ```
    pub fn position(&self) -> Position {
        self.pos
    }

    /// The fields in order.
    ///
    /// ```
    /// assert_eq!(fastcsv::RowBuf::default().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i).unwrap_or_default())
    }
}

impl std::fmt::Debug for RowBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|b| String::from_utf8_lossy(b))).finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Dialect, ReaderBuilder, SourceChoice};

    /// Every record's raw bytes without line-end bytes around them (where
    /// the LF of a CRLF goes differs between sources) and whether unescaping may join
    /// invalid UTF-8, from a slice and from a buffer of `n` bytes.
    fn raws(input: &[u8], n: usize) -> Vec<(Vec<u8>, bool)> {
        let d = Dialect::builder().headers(false).build().unwrap();
        let trim = |r: &[u8]| {
            let eol = |c: &&u8| **c == b'\n' || **c == b'\r';
            let k = r.iter().take_while(eol).count();
            let e = r.len() - r.iter().rev().take_while(eol).count();
            r[k..e.max(k)].to_vec()
        };
        let mut out = Vec::new();
        let mut rdr = ReaderBuilder::new().dialect(d.clone()).from_slice(input);
        while let Ok(Some(row)) = rdr.read_row() {
            out.push((trim(row.raw()), row.unescaping_may_join_invalid_utf8()));
        }
        let mut b = ReaderBuilder::new();
        b.dialect(d).source(SourceChoice::Buffered).buffer_size(n);
        let mut rdr = b.from_reader(input);
        let mut again = Vec::new();
        while let Ok(Some(row)) = rdr.read_row() {
            again.push((trim(row.raw()), row.unescaping_may_join_invalid_utf8()));
        }
        assert_eq!(out, again, "buffer of {n}");
        out
    }

    #[test]
    fn raw_is_the_record_as_read() {
        let input = b"a,b\r\n\"x\"\"y\",z\n\n\"q\nr\",s";
        for n in [1, 2, 7, 64] {
            let got = raws(input, n);
            let want: Vec<&[u8]> = vec![b"a,b", b"\"x\"\"y\",z", b"", b"\"q\nr\",s"];
            assert_eq!(got.iter().map(|(r, _)| r.as_slice()).collect::<Vec<_>>(), want);
            assert!(got.iter().all(|(_, j)| !j));
        }
    }

    #[test]
    fn unescaping_that_may_join_invalid_utf8_is_found() {
        // `"\xc3"\x80`: the closing quote is taken out and the two invalid
        // pieces make a valid "À".
        let got = raws(b"\"\xc3\"\x80,\xff\n\"\xc3\xa9\"\"\",b\n\"a\"\"\xff\",c\n", 3);
        let flags: Vec<bool> = got.iter().map(|(_, j)| *j).collect();
        // Unescaped + non-ASCII + invalid record: yes; valid record: no;
        // invalid record whose unescaped field is non-ASCII: yes.
        assert_eq!(flags, [true, false, true]);
    }
}
