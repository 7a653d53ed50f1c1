//! Reads of a regular file checked against its size after each one.
//!
//! A `read()` or `pread()` that races a truncation can copy zeros: the
//! kernel reads the file's size before it copies the cached pages, and a
//! large folio cut in its middle has its tail zeroed rather than dropped.
//! So bytes a read returned past the file's current end are not handed
//! out: the read is cut at that end, and every later read returns 0. The
//! reader then finds the file shorter than at open and fails with
//! [`ErrorKind::FileChanged`](crate::ErrorKind::FileChanged) (see
//! `Reader::check_end`) instead of handing out rows of zeros.
//!
//! Only a file now shorter than it was at open is cut: a pseudo-file of
//! procfs states size 0 and reads bytes all the same, and a file that grew
//! was read as it was. One `fstat` per read (a chunk of 128 KiB or more on
//! the hot paths) costs well under 0.1% of the read.

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;

/// A regular file, its size at open, and whether a read found it cut.
pub(crate) struct CheckedFile {
    file: Arc<File>,
    opened: u64,
    cut: std::sync::atomic::AtomicBool,
}

impl CheckedFile {
    /// `opened` is the file's size when it was opened.
    pub(crate) fn new(file: Arc<File>, opened: u64) -> CheckedFile {
        CheckedFile { file, opened, cut: std::sync::atomic::AtomicBool::new(false) }
    }

    /// How many of the `n` bytes just read at `offset` may be handed out:
    /// all of them unless the file is now shorter than at open and than
    /// `offset + n`. Once a read is cut, none of any later read are.
    fn within(&self, offset: u64, n: usize) -> usize {
        use std::sync::atomic::Ordering;
        if n == 0 {
            return 0;
        }
        if self.cut.load(Ordering::Acquire) {
            return 0;
        }
        let end = offset.saturating_add(n as u64);
        match self.file.metadata() {
            Ok(m) if m.len() < self.opened && m.len() < end => {
                self.cut.store(true, Ordering::Release);
                // Less than `n`, so it fits a usize.
                m.len().saturating_sub(offset) as usize
            }
            // A failed `fstat` tells nothing: the read stands.
            _ => n,
        }
    }
}

#[cfg(unix)]
impl super::readahead::ReadAt for CheckedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = std::os::unix::fs::FileExt::read_at(&*self.file, buf, offset)?;
        Ok(self.within(offset, n))
    }
}

/// A [`CheckedFile`] read in order at the file's own position, which
/// starts at `pos`.
pub(crate) struct CheckedStream {
    file: Arc<CheckedFile>,
    pos: u64,
}

impl CheckedStream {
    pub(crate) fn new(file: Arc<CheckedFile>, pos: u64) -> CheckedStream {
        CheckedStream { file, pos }
    }
}

impl Read for CheckedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&*self.file.file).read(buf)?;
        let at = self.pos;
        self.pos = self.pos.saturating_add(n as u64);
        Ok(self.file.within(at, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    #[test]
    fn reads_past_a_new_end_are_cut_and_later_reads_return_nothing() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[b'x'; 1000]).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        let f = Arc::new(f);
        let checked = Arc::new(CheckedFile::new(Arc::clone(&f), 1000));
        let mut s = CheckedStream::new(Arc::clone(&checked), 0);
        let mut buf = [0u8; 400];
        assert_eq!(s.read(&mut buf).unwrap(), 400);
        // A read that returned bytes the file no longer has (as one racing
        // the truncation would): only those before the new end count.
        f.set_len(600).unwrap();
        assert_eq!(checked.within(400, 400), 200);
        assert_eq!(s.read(&mut buf).unwrap(), 0);
        // The file grows again: what was cut stays cut.
        f.set_len(2000).unwrap();
        assert_eq!(s.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn files_that_grew_or_state_no_size_are_read_as_they_are() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[b'x'; 100]).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        let f = Arc::new(f);
        // Opened when it was empty (as a procfs file states): never cut.
        let mut s = CheckedStream::new(Arc::new(CheckedFile::new(Arc::clone(&f), 0)), 0);
        let mut buf = [0u8; 64];
        assert_eq!(s.read(&mut buf).unwrap(), 64);
        assert_eq!(s.read(&mut buf).unwrap(), 36);
        assert_eq!(s.read(&mut buf).unwrap(), 0);
        #[cfg(unix)]
        {
            use super::super::readahead::ReadAt;
            let at = CheckedFile::new(Arc::clone(&f), 50);
            assert_eq!(at.read_at(&mut buf, 0).unwrap(), 64);
            assert_eq!(at.read_at(&mut buf, 64).unwrap(), 36);
        }
    }
}
