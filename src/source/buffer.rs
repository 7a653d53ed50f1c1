//! The rolling `read()` buffer.
//!
//! One buffer, reused. The unconsumed tail (the record in progress) is
//! moved to the front before each refill, so a record that straddles a
//! refill is copied once, not re-read; when a single record fills the whole
//! buffer, the buffer doubles, up to a limit past which reading fails with
//! [`ErrorKind::RecordTooLarge`](crate::ErrorKind::RecordTooLarge).

use std::io::{self, Read};

use crate::error::{Error, ErrorKind, Result};

pub(crate) struct ReadBuffer<'a> {
    rdr: Box<dyn Read + 'a>,
    buf: Vec<u8>,
    filled: usize,
    eof: bool,
    max: usize,
}

impl<'a> ReadBuffer<'a> {
    pub(crate) fn new(rdr: Box<dyn Read + 'a>, size: usize, max: usize) -> ReadBuffer<'a> {
        let size = size.max(1);
        ReadBuffer { rdr, buf: vec![0; size], filled: 0, eof: false, max: max.max(size) }
    }

    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    pub(crate) fn is_eof(&self) -> bool {
        self.eof
    }

    /// Moves `data()[keep_from..]` to the front and reads more. Returns how
    /// many bytes were dropped from the front (the caller shifts its
    /// offsets), or sets EOF when the reader is exhausted.
    pub(crate) fn refill(&mut self, keep_from: usize) -> Result<usize> {
        if keep_from > 0 {
            self.buf.copy_within(keep_from..self.filled, 0);
            self.filled -= keep_from;
        }
        if self.filled == self.buf.len() {
            if self.buf.len() >= self.max {
                return Err(Error::new(ErrorKind::RecordTooLarge { limit: self.max }));
            }
            let new = (self.buf.len() * 2).min(self.max);
            self.buf.resize(new, 0);
        }
        loop {
            match self.rdr.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.filled += n;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(keep_from)
    }
}
