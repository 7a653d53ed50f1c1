//! The rolling `read()` buffer.
//!
//! One buffer, reused. The unconsumed tail (the record in progress) is
//! moved to the front before each refill, so a record that straddles a
//! refill is copied once, not re-read; when a single record fills the whole
//! buffer, the buffer doubles, up to a limit past which reading fails with
//! [`ErrorKind::RecordTooLarge`](crate::ErrorKind::RecordTooLarge).
//! The buffer's size is a logical capacity (what the parser sees at a
//! time); reads ask for at least [`MIN_READ`] bytes whatever it is.
//!
//! [`ReadBuffer`] is either this synchronous buffer or the read-ahead one
//! (`readahead.rs`), which gives the same answers with the `read()`s done
//! on a helper thread.
//!
//! Every buffer is allocated fallibly ([`zeroed`], `try_reserve`): a size
//! the allocator refuses (`buffer_size(1 << 40)`) is an I/O error of kind
//! `OutOfMemory` from the first read, not an abort of the process.

use std::alloc::{self, Layout};
use std::io::{self, Read};

use super::readahead::{Input, ReadAhead};
use crate::error::{Error, ErrorKind, Result};

/// The buffered source: `read()` on the parsing thread, or on a
/// read-ahead thread. Both have the same contract: `data()` is what is
/// buffered, `refill(keep_from)` drops `data()[..keep_from]`, keeps the
/// rest at the front, appends more and returns `keep_from` (or sets EOF),
/// and fails with `RecordTooLarge` once the kept tail fills the largest
/// buffer allowed.
pub(crate) enum ReadBuffer<'a> {
    Sync(SyncBuffer<'a>),
    Ahead(ReadAhead),
}

impl<'a> ReadBuffer<'a> {
    /// The synchronous buffer.
    pub(crate) fn new(rdr: Box<dyn Read + Send + 'a>, size: usize, max: usize) -> ReadBuffer<'a> {
        ReadBuffer::Sync(SyncBuffer::new(rdr, size, max))
    }

    /// The read-ahead buffer, or the synchronous one if the thread cannot
    /// be started. `join_on_drop` as for [`ReadAhead::spawn`].
    pub(crate) fn read_ahead(
        input: Input,
        size: usize,
        max: usize,
        join_on_drop: bool,
    ) -> ReadBuffer<'a> {
        match ReadAhead::spawn(input, size, max, join_on_drop) {
            Ok(b) => ReadBuffer::Ahead(b),
            Err(input) => ReadBuffer::new(input.into_reader(), size, max),
        }
    }

    /// True when a read-ahead thread does the reading.
    pub(crate) fn is_read_ahead(&self) -> bool {
        matches!(self, ReadBuffer::Ahead(_))
    }

    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        match self {
            ReadBuffer::Sync(b) => b.data(),
            ReadBuffer::Ahead(b) => b.data(),
        }
    }

    pub(crate) fn is_eof(&self) -> bool {
        match self {
            ReadBuffer::Sync(b) => b.is_eof(),
            ReadBuffer::Ahead(b) => b.is_eof(),
        }
    }

    /// Current capacity (reported by `Reader::buffer_capacity`).
    pub(crate) fn capacity(&self) -> usize {
        match self {
            ReadBuffer::Sync(b) => b.capacity(),
            ReadBuffer::Ahead(b) => b.capacity(),
        }
    }

    /// See the type's documentation.
    pub(crate) fn refill(&mut self, keep_from: usize) -> Result<usize> {
        match self {
            ReadBuffer::Sync(b) => b.refill(keep_from),
            ReadBuffer::Ahead(b) => b.refill(keep_from),
        }
    }
}

/// The error for a buffer of `len` bytes that cannot be allocated.
pub(crate) fn out_of_memory(len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("cannot allocate a read buffer of {len} bytes"),
    )
}

/// A buffer of `len` zero bytes (at least one), or an `OutOfMemory` error
/// where `vec![0; len]` would abort the process. The allocator zeroes it
/// (`calloc`), as `vec!` has it do, so that pages no `read()` reaches are
/// never touched.
pub(crate) fn zeroed(len: usize) -> io::Result<Vec<u8>> {
    let len = len.max(1);
    let layout = Layout::array::<u8>(len).map_err(|_| out_of_memory(len))?;
    // SAFETY: `layout` has a non-zero size (`len >= 1`).
    let ptr = unsafe { alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(out_of_memory(len));
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of
    // `[u8; len]` (alignment 1, size `len`), which is what a `Vec<u8>` of
    // capacity `len` frees it with, and its `len` bytes are initialised
    // (zeroed).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The fewest bytes a `read()` asks for, whatever the buffer size: a
/// small `buffer_size` bounds how much of the input the parser sees at a
/// time (its logical capacity, which grows for a long record as before),
/// not the size of the system calls, which would otherwise be one per byte
/// or so with `buffer_size(1)`.
pub(crate) const MIN_READ: usize = 64 * 1024;

/// One reused buffer, filled by `read()` on the calling thread.
///
/// The buffer holds at least [`MIN_READ`] bytes; `data()` is at most
/// `cap` of them (the logical capacity): `buf[start..end]`, with bytes
/// already read but not yet handed out in `buf[end..filled]`, handed out
/// by the next refills before anything is read again.
pub(crate) struct SyncBuffer<'a> {
    rdr: Box<dyn Read + Send + 'a>,
    /// Empty only when its allocation failed (see [`SyncBuffer::new`]).
    buf: Vec<u8>,
    /// The size asked for.
    size: usize,
    /// The logical capacity: the most `data()` holds.
    cap: usize,
    start: usize,
    end: usize,
    filled: usize,
    eof: bool,
    max: usize,
    /// A `read` that failed after the tail moved to the front: reported
    /// by the next `refill`, before anything moves (see `refill`).
    failed: Option<io::Error>,
}

impl<'a> SyncBuffer<'a> {
    /// Allocates the buffer. This cannot fail (`from_reader` returns a
    /// reader, not a result): a buffer that cannot be allocated is left
    /// empty and tried again by the first [`refill`](Self::refill), which
    /// reports the error.
    pub(crate) fn new(rdr: Box<dyn Read + Send + 'a>, size: usize, max: usize) -> SyncBuffer<'a> {
        let size = size.max(1);
        let buf = zeroed(size.max(MIN_READ)).unwrap_or_default();
        SyncBuffer {
            rdr,
            buf,
            size,
            cap: size,
            start: 0,
            end: 0,
            filled: 0,
            eof: false,
            max: max.max(size),
            failed: None,
        }
    }

    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub(crate) fn is_eof(&self) -> bool {
        self.eof
    }

    /// Forgets the end: the next `refill` reads again (for a source that
    /// may have grown, see `Reader::resume_after_end`).
    pub(crate) fn clear_eof(&mut self) {
        self.eof = false;
    }

    /// Current capacity (reported by `Reader::buffer_capacity`).
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Drops `data()[..keep_from]`, keeps the rest at the front and adds
    /// more. Returns how many bytes were dropped from the front (the caller
    /// shifts its offsets), or sets EOF when the reader is exhausted.
    ///
    /// A failed `read` leaves the buffer as it was after the move: that
    /// call returns the shift, with no new bytes, and the next one the
    /// error, having moved nothing. So the caller's offsets stay right,
    /// and a later call reads again (a stream whose `read` was
    /// interrupted may go on, as Python's `csv` goes on).
    pub(crate) fn refill(&mut self, keep_from: usize) -> Result<usize> {
        if let Some(e) = self.failed.take() {
            return Err(e.into());
        }
        if self.buf.is_empty() {
            self.buf = zeroed(self.size.max(MIN_READ))?;
        }
        self.start += keep_from;
        let tail = self.end - self.start;
        if tail == self.cap {
            if self.cap >= self.max {
                return Err(Error::new(ErrorKind::RecordTooLarge { limit: self.max }));
            }
            self.cap = self.cap.saturating_mul(2).min(self.max);
        }
        // Bytes already read come first.
        if self.filled > self.end {
            self.end = self.filled.min(self.start + self.cap);
            return Ok(keep_from);
        }
        // Everything read was handed out: move the tail to the front and
        // read into the rest (the buffer grows with the capacity).
        self.buf.copy_within(self.start..self.end, 0);
        (self.start, self.end, self.filled) = (0, tail, tail);
        if self.buf.len() < self.cap {
            let new = self.cap;
            self.buf.try_reserve_exact(new - self.buf.len()).map_err(|_| out_of_memory(new))?;
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
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        self.end = self.filled.min(self.cap);
        Ok(keep_from)
    }
}

#[cfg(test)]
mod tests {
    /// Readers, and the columns built over them, move between threads
    /// (the Python binding parses on another thread than the caller's):
    /// every source they can hold is `Send`.
    #[test]
    fn readers_are_send() {
        fn send<T: Send>() {}
        send::<crate::reader::Reader<'static>>();
        send::<crate::arrow::Columns<'static>>();
    }
}
