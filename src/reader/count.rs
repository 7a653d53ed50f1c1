//! Counting and skipping records by their ends alone, without building
//! rows: [`Reader::count_rows`] and [`Reader::skip_rows`].

use super::*;

impl<'a> Reader<'a> {
    /// Counts the remaining records without building rows.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n2\n\n3");
    /// assert_eq!(rdr.count_rows().unwrap(), 4);
    /// ```
    pub fn count_rows(&mut self) -> Result<u64> {
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        // A mapped file's pages are mapped in ahead of the count on a
        // helper thread, when the read-ahead rule allows.
        let at = self.rec_start + self.pos;
        if let Src::Mapped(m) = &mut self.src {
            m.fault_in_rest(at);
        }
        let mut n = 0;
        loop {
            n += self.count_regular()?;
            if self.refill_for_block_scan()? {
                continue;
            }
            if !self.advance()? {
                return Ok(n);
            }
            n += 1;
        }
    }

    /// Skips up to `n` records, finding only where each ends (as
    /// [`Reader::count_rows`] does): the next [`Reader::read_row`] or
    /// [`Reader::read_batch`] gives record `n` of the rest. Returns how
    /// many were skipped (fewer than `n` at the input's end only). Errors,
    /// and the line and record numbers afterwards, are those of `n` calls
    /// to [`Reader::read_row`].
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"h\n0\n\"1\n1\"\n2\n3\n");
    /// assert_eq!(rdr.skip_rows(2).unwrap(), 2);
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"2"[..]));
    /// assert_eq!(rdr.line(), 5);
    /// assert_eq!(rdr.skip_rows(5).unwrap(), 1);
    /// ```
    pub fn skip_rows(&mut self, n: u64) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        let mut left = n;
        while left > 0 {
            // The block scanner counts every record that ends in what it
            // is given: give it no more bytes than `left` records can
            // fill. Each takes at least one byte (its terminator), and a
            // record held to a width of `w` fields at least `w` (its
            // delimiters and terminator; the input's last record may lack
            // the terminator, which leaves `left * w - 1`).
            let width = if self.dialect.flexible { None } else { self.expected };
            let per = width.unwrap_or(1).max(1);
            let window = usize::try_from(left).map_or(usize::MAX, |l| l.saturating_mul(per));
            let k = self.count_regular_within(window)?;
            left -= k;
            if k > 0 {
                continue;
            }
            if self.refill_for_block_scan()? {
                continue;
            }
            // A record the block scanner cannot take, or longer than the
            // window: the state machine reads it.
            if !self.advance()? {
                break;
            }
            left -= 1;
        }
        Ok(n - left)
    }

    /// Counts the records the block scanner can take without the state
    /// machine (see `scan::block`), from the current position up to the
    /// first one it cannot, which `advance` then reads.
    fn count_regular(&mut self) -> Result<u64> {
        self.count_regular_within(usize::MAX)
    }

    /// [`Reader::count_regular`] over at most `limit` bytes: only the
    /// records that end in them are counted. On a mapped file, the pages
    /// behind are given back as a row read does, and a file that changed
    /// is an error at the first record counted.
    fn count_regular_within(&mut self, limit: usize) -> Result<u64> {
        if self.done {
            return Ok(0);
        }
        if !self.started {
            self.start()?;
        }
        self.rec_start += self.pos;
        self.pos = 0;
        let data = match &self.src {
            Src::Slice(s) => &s[self.rec_start..],
            Src::Mapped(m) => &m.bytes()[self.rec_start..],
            Src::Read(b) => &b.data()[self.rec_start..],
        };
        let data = &data[..data.len().min(limit)];
        let check = !self.dialect.flexible;
        let (line, record) = (self.scanner.lines() + 1, self.records);
        let k = self.scanner.block_count(data, &mut self.pos, &mut self.expected, check);
        if k > 0 {
            self.records += k;
            self.err_line = None;
        }
        if limit != usize::MAX && k > 0 {
            let (start, end) = (self.rec_start, self.rec_start + self.pos);
            if let Src::Mapped(m) = &mut self.src {
                m.release_before(start);
                if m.changed_before(end) {
                    // What a row read finds in the zeros of a cut file.
                    self.done = true;
                    let byte = self.base + start as u64;
                    let pos = Position { byte, line, record };
                    let e = Error::new(ErrorKind::FileChanged).with_position(pos);
                    return Err(self.decorate(e));
                }
            }
        }
        Ok(k)
    }
}
