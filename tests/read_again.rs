//! A `read` of the input that fails once (a Python stream whose `read`
//! raised, an interrupted pipe): the reader reports it and, after
//! `Reader::resume_after_error`, reads again and goes on with the same
//! rows, as Python's `csv` does over a file object, at any point in a
//! record and any buffer size. Without it, the reader ends there.

use std::io::{self, Read};

use fastcsv::{Dialect, Reader, ReaderBuilder};

/// `data`, failing the read that would start at byte `fail_at` once.
struct FailsOnce {
    data: Vec<u8>,
    at: usize,
    fail_at: usize,
    failed: bool,
    /// The most bytes a read gives, so that reads end everywhere.
    step: usize,
}

impl Read for FailsOnce {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.failed && self.at >= self.fail_at {
            self.failed = true;
            return Err(io::Error::other("the stream's read raised"));
        }
        let mut n = buf.len().min(self.step).min(self.data.len() - self.at);
        if !self.failed {
            n = n.min(self.fail_at - self.at);
        }
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn builder(buffer: usize) -> ReaderBuilder {
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    let mut b = ReaderBuilder::new();
    b.dialect(d).buffer_size(buffer);
    b
}

/// A row's fields, and the line the reader is on after it.
type Line = (Vec<Vec<u8>>, u64);

/// Every row and its line, going on after errors; and the errors.
fn drain(rdr: &mut Reader<'_>) -> (Vec<Line>, Vec<String>) {
    let (mut rows, mut errors) = (Vec::new(), Vec::new());
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields = row.iter().map(<[u8]>::to_vec).collect();
                rows.push((fields, rdr.line()));
            }
            Ok(None) => return (rows, errors),
            Err(e) => {
                errors.push(e.to_string());
                assert!(errors.len() < 3, "{errors:?}");
                assert!(rdr.resume_after_error(), "{e}");
                assert!(!rdr.resume_after_error());
            }
        }
    }
}

const DATA: &[u8] = b"\xEF\xBB\xBFid,name\r\n1,\"a\nb\"\n2,plain\r\n\n3,\"x\"\"y\",z\n4,last";

#[test]
fn a_failed_read_is_reported_once_and_reading_goes_on() {
    for buffer in [1, 2, 3, 7, 64, 1 << 16] {
        let want = drain(&mut builder(buffer).from_reader(DATA)).0;
        assert_eq!(want.len(), 6);
        for fail_at in 0..=DATA.len() {
            for step in [1, 3, 1 << 20] {
                let src = FailsOnce { data: DATA.to_vec(), at: 0, fail_at, failed: false, step };
                let (rows, errors) = drain(&mut builder(buffer).from_reader(src));
                let at = format!("buffer {buffer}, fail at {fail_at}, step {step}");
                assert_eq!(rows, want, "{at}");
                // The read at the end (which finds it) fails too.
                assert_eq!(errors.len(), 1, "{at}: {errors:?}");
                assert!(errors[0].contains("the stream's read raised"), "{at}: {errors:?}");
            }
        }
    }
}

#[test]
fn without_resuming_the_reader_ends_at_a_failed_read() {
    let src = FailsOnce { data: DATA.to_vec(), at: 0, fail_at: 20, failed: false, step: 4 };
    let mut rdr = builder(4).from_reader(src);
    let mut rows = 0;
    let err = loop {
        match rdr.read_row() {
            Ok(Some(_)) => rows += 1,
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert!(err.to_string().contains("the stream's read raised"));
    assert!(rdr.read_row().unwrap().is_none());
    assert_eq!(rows, 2);
}

#[test]
fn a_data_error_is_not_a_failed_read() {
    let d = Dialect::builder().headers(false).strict(true).build().unwrap();
    let mut rdr = ReaderBuilder::new().dialect(d).from_reader(&b"\"a\"b\n1\n"[..]);
    assert!(rdr.read_row().is_err());
    assert!(!rdr.resume_after_error());
}
