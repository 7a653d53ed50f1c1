//! Reading only the records the block scanner takes
//! ([`Reader::read_regular`]), for a caller that reads the others row by
//! row.

use crate::error::Result;
use crate::select::{Batch, Selection};

use super::Reader;

impl Reader<'_> {
    /// The records from the current position on that the block scanner
    /// takes, within the next `max_bytes` bytes of the input, as
    /// [`Reader::read_batch`] gives them; `Ok(None)` when the next record
    /// is not one of them (or there is none): [`Reader::read_row`] reads
    /// that one, or reports the end or an error. A caller that alternates
    /// the two this way reads every record once, with the fields, errors,
    /// positions and [`Reader::line`] of reading row by row, and builds
    /// no span for the records the block scanner took.
    ///
    /// After a batch, [`Reader::line`] counts the lines through its last
    /// record; a record's [`SelectedRow::position`](crate::SelectedRow::position)
    /// gives its first line, so the lines through each record but the last
    /// are the next one's first line less one.
    ///
    /// ```
    /// use fastcsv::{Dialect, Reader, Selection};
    /// let d = Dialect::builder().headers(false).strict(false).build().unwrap();
    /// let input = b"a,b\n\"x\" y,z\n1,\"2\"\n";
    /// let mut rdr = Reader::builder().dialect(d).from_slice(input);
    /// let mut sel = Selection::all();
    /// let mut rows: Vec<Vec<Vec<u8>>> = Vec::new();
    /// loop {
    ///     if let Some(b) = rdr.read_regular(&mut sel, usize::MAX).unwrap() {
    ///         rows.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect()));
    ///         continue;
    ///     }
    ///     // Text after a closing quote: the state machine's.
    ///     match rdr.read_row().unwrap() {
    ///         Some(row) => rows.push(row.iter().map(<[u8]>::to_vec).collect()),
    ///         None => break,
    ///     }
    /// }
    /// let want: Vec<Vec<Vec<u8>>> = vec![
    ///     vec![b"a".to_vec(), b"b".to_vec()],
    ///     vec![b"x y".to_vec(), b"z".to_vec()],
    ///     vec![b"1".to_vec(), b"2".to_vec()],
    /// ];
    /// assert_eq!(rows, want);
    /// assert_eq!(rdr.line(), 3);
    /// ```
    pub fn read_regular<'s>(
        &'s mut self,
        sel: &'s mut Selection,
        max_bytes: usize,
    ) -> Result<Option<Batch<'s>>> {
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        sel.clear();
        // As a call of `read_row` that succeeds: no error record.
        self.err_record = None;
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.start()?;
        }
        loop {
            if self.select_regular(sel, max_bytes)? {
                return Ok(Some(self.batch(sel)));
            }
            // The buffer ends inside a record the block scanner can take:
            // refill and go on with it.
            if !self.refill_for_block_scan()? {
                return Ok(None);
            }
            sel.clear();
        }
    }
}
