//! Compressed input: gzip, zstd, bzip2 and xz, known by their first bytes
//! (never by the file's name), decoded as the bytes are read.
//!
//! A compressed file is never mapped: its bytes are not the CSV. The
//! decoder is a [`Read`] that the reader's `read()` buffer pulls from; with
//! read-ahead (the default on two or more CPUs) that happens on the helper
//! thread, so decompression overlaps parsing.
//!
//! Which bytes mean which format: see [`Codec`].
//!
//! # Errors
//!
//! A decoder error (corrupt data, a stream cut short, trailing bytes that
//! are not another member) becomes
//! [`ErrorKind::Decompress`](crate::ErrorKind::Decompress) with the offset
//! in the compressed input that the decoder had consumed up to: rows are
//! never silently cut short. Several gzip members, zstd frames, bzip2
//! streams or xz streams one after another decode as one input, as
//! `gzip -dc`, `zstd -dc`, `bzip2 -dc` and `xz -dc` do. Zero bytes after a
//! gzip member (a file padded to a block size, as tape and some archive
//! tools pad it) are skipped, as `gzip -d` and Python's `gzip` module (so
//! pandas) skip them; any other bytes there must begin a member.

use std::io::{self, BufRead, BufReader, Chain, Cursor, Read};

pub use crate::codec::Codec;
pub(crate) use crate::codec::DecompressError;
use crate::codec::{undecided, MAGIC_LEN};

/// Whether a reader decompresses its input (see
/// [`ReaderBuilder::decompress`](crate::ReaderBuilder::decompress)).
///
/// ```
/// use fastcsv::{Codec, Decompress};
/// assert_eq!(Decompress::default(), Decompress::Auto);
/// assert_eq!(Decompress::parse("off"), Some(Decompress::Off));
/// assert_eq!(Decompress::parse("gzip"), Some(Decompress::Force(Codec::Gzip)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Decompress {
    /// Decompress input whose first bytes are a known format's magic
    /// sequence ([`Codec::detect`]); read anything else as it is.
    #[default]
    Auto,
    /// Read the bytes as they are.
    Off,
    /// Decode the input as this format, whatever its first bytes (input
    /// that is not in it fails with
    /// [`ErrorKind::Decompress`](crate::ErrorKind::Decompress)).
    Force(Codec),
}

impl Decompress {
    /// Parses `auto`, `off` (or `none`) or a codec name ([`Codec::parse`]).
    ///
    /// ```
    /// assert_eq!(fastcsv::Decompress::parse("auto"), Some(fastcsv::Decompress::Auto));
    /// ```
    pub fn parse(s: &str) -> Option<Decompress> {
        match s {
            "auto" => Some(Decompress::Auto),
            "off" | "none" => Some(Decompress::Off),
            _ => Codec::parse(s).map(Decompress::Force),
        }
    }
}

/// The message for a ZIP archive.
pub(crate) const ZIP_MESSAGE: &str = "zip archives are not supported; unzip first";

/// Smallest chunk the read-ahead thread decodes into at a time (the
/// reader's buffer size when larger): a decoder fills a chunk far faster
/// than a disk does, and with 128 KiB chunks the hand-overs between the
/// threads cost a tenth of the time of counting a gzip or zstd file
/// (docs/BENCHMARKS.md, "Compressed input").
pub(crate) const DECODED_CHUNK: usize = 1024 * 1024;

/// Size of the buffer of compressed bytes in front of a decoder.
const INPUT_BUFFER: usize = 128 * 1024;

/// A buffered reader that counts the bytes the decoder consumed.
struct Counted<R> {
    buf: BufReader<R>,
    consumed: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.buf.read(out)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: Read> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.buf.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.buf.consume(n);
        self.consumed += n as u64;
    }
}

/// gzip members one after another, with zero bytes skipped between them
/// and after the last (see the module's documentation).
enum GzMembers<R: Read> {
    /// Decoding a member (boxed: the decoder's state is large).
    Member(Box<flate2::bufread::GzDecoder<Counted<R>>>),
    /// After a member: zero bytes, the end, or the next member.
    Between(Counted<R>),
    /// Only while the state moves on.
    Moving,
}

impl<R: Read> GzMembers<R> {
    fn consumed(&self) -> u64 {
        match self {
            GzMembers::Member(d) => d.get_ref().consumed,
            GzMembers::Between(src) => src.consumed,
            GzMembers::Moving => 0,
        }
    }
}

impl<R: Read> Read for GzMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            match self {
                GzMembers::Member(d) => {
                    let n = d.read(out)?;
                    if n > 0 || out.is_empty() {
                        return Ok(n);
                    }
                    // The member ended (its trailer checked): the source
                    // is right after it.
                    if let GzMembers::Member(d) = std::mem::replace(self, GzMembers::Moving) {
                        *self = GzMembers::Between(d.into_inner());
                    }
                }
                GzMembers::Between(src) => {
                    let buf = src.fill_buf()?;
                    if buf.is_empty() {
                        return Ok(0);
                    }
                    let zeros = buf.iter().take_while(|&&b| b == 0).count();
                    if zeros > 0 {
                        src.consume(zeros);
                        continue;
                    }
                    // Anything else must be a member, which starts with
                    // the magic bytes (the decoder checks the rest).
                    if buf[0] != 0x1f || buf.get(1).is_some_and(|&b| b != 0x8b) {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "bytes after a gzip member are not another member",
                        ));
                    }
                    if let GzMembers::Between(src) = std::mem::replace(self, GzMembers::Moving) {
                        *self = GzMembers::Member(Box::new(flate2::bufread::GzDecoder::new(src)));
                    }
                }
                GzMembers::Moving => unreachable!("the state is put back before any return"),
            }
        }
    }
}

enum Inner<R: Read> {
    Gzip(GzMembers<R>),
    Zstd(zstd::stream::read::Decoder<'static, Counted<R>>),
    Bzip2(bzip2::bufread::MultiBzDecoder<Counted<R>>),
    Xz(liblzma::bufread::XzDecoder<Counted<R>>),
    /// Fails on the first read.
    Zip,
}

/// Decodes `R`, a compressed stream of one [`Codec`], into the bytes it
/// holds. Errors carry a [`DecompressError`].
pub(crate) struct Decoder<R: Read> {
    inner: Inner<R>,
    codec: Codec,
    /// Offset of `R`'s first byte in the compressed file (a file read from
    /// its current position), added to the offsets in errors.
    base: u64,
    /// An error was returned: every later read returns one too.
    failed: bool,
}

impl<R: Read> Decoder<R> {
    /// A decoder of `codec` over `rdr`, whose first byte is at `base` in
    /// the compressed input.
    pub(crate) fn new(rdr: R, codec: Codec, base: u64) -> io::Result<Decoder<R>> {
        let src = Counted { buf: BufReader::with_capacity(INPUT_BUFFER, rdr), consumed: 0 };
        let inner = match codec {
            Codec::Gzip => {
                Inner::Gzip(GzMembers::Member(Box::new(flate2::bufread::GzDecoder::new(src))))
            }
            Codec::Zstd => Inner::Zstd(zstd::stream::read::Decoder::with_buffer(src)?),
            Codec::Bzip2 => Inner::Bzip2(bzip2::bufread::MultiBzDecoder::new(src)),
            Codec::Xz => Inner::Xz(liblzma::bufread::XzDecoder::new_multi_decoder(src)),
            Codec::Zip => Inner::Zip,
        };
        Ok(Decoder { inner, codec, base, failed: false })
    }

    /// Compressed bytes consumed so far.
    fn consumed(&self) -> u64 {
        match &self.inner {
            Inner::Gzip(d) => d.consumed(),
            Inner::Zstd(d) => d.get_ref().consumed,
            Inner::Bzip2(d) => d.get_ref().consumed,
            Inner::Xz(d) => d.get_ref().consumed,
            Inner::Zip => 0,
        }
    }

    fn error(&mut self, message: String) -> io::Error {
        self.failed = true;
        let offset = self.base + self.consumed();
        DecompressError { codec: self.codec, offset, message }.into_io()
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Err(self.error("the input could not be decoded".into()));
        }
        let got = match &mut self.inner {
            Inner::Gzip(d) => d.read(out),
            Inner::Zstd(d) => d.read(out),
            Inner::Bzip2(d) => d.read(out),
            Inner::Xz(d) => d.read(out),
            Inner::Zip => return Err(self.error(ZIP_MESSAGE.into())),
        };
        match got {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                // A decoder that ran out of input says "unexpected end of
                // file" or similar; name the cause plainly.
                let message = if e.kind() == io::ErrorKind::UnexpectedEof {
                    format!("the compressed stream is truncated ({e})")
                } else {
                    e.to_string()
                };
                Err(self.error(message))
            }
        }
    }
}

/// Input read ahead of the decoder (to look at its first bytes) put back in
/// front of the rest.
pub(crate) type Prefixed<R> = Chain<Cursor<Vec<u8>>, R>;

/// Reads from `rdr` into `head` until its first bytes decide the format
/// (see [`undecided`]): at most [`MAGIC_LEN`] bytes, fewer at its end or
/// when they cannot begin a magic sequence. After an error, `head` keeps
/// what was read, and a new call goes on from there.
fn read_prefix<R: Read>(rdr: &mut R, head: &mut Vec<u8>) -> io::Result<()> {
    let mut buf = [0; MAGIC_LEN];
    while head.is_empty() || (head.len() < MAGIC_LEN && undecided(head)) {
        match rdr.read(&mut buf[..MAGIC_LEN - head.len()]) {
            Ok(0) => break,
            Ok(k) => head.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The codec `mode` asks for, given the input's first bytes.
pub(crate) fn codec_for(mode: Decompress, prefix: &[u8]) -> Option<Codec> {
    match mode {
        Decompress::Auto => Codec::detect(prefix),
        Decompress::Off => None,
        Decompress::Force(c) => Some(c),
    }
}

/// The codec of a regular file from byte `offset` on, looked at with a
/// positioned read (the file's position does not move).
#[cfg(unix)]
pub(crate) fn sniff_file(file: &std::fs::File, offset: u64) -> io::Result<Option<Codec>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0; MAGIC_LEN];
    let mut n = 0;
    while n < MAGIC_LEN {
        match file.read_at(&mut head[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Codec::detect(&head[..n]))
}

/// The codec of a regular file from its current position on (the position
/// is put back).
#[cfg(not(unix))]
pub(crate) fn sniff_file(file: &std::fs::File, offset: u64) -> io::Result<Option<Codec>> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    let mut head = Vec::with_capacity(MAGIC_LEN);
    (&mut f).take(MAGIC_LEN as u64).read_to_end(&mut head)?;
    f.seek(SeekFrom::Start(offset))?;
    Ok(Codec::detect(&head))
}

/// A stream that is decoded or passed through as its first bytes (and the
/// [`Decompress`] mode) say, decided at the first read: so that making it
/// reads nothing (a pipe may not have data yet) and cannot fail.
pub(crate) enum Sniff<R: Read> {
    /// The first bytes read so far (kept when a read fails, so that a
    /// caller may read on after an error).
    Start(Option<R>, Decompress, Vec<u8>),
    Plain(Prefixed<R>),
    Decoding(Box<Decoder<Prefixed<R>>>),
}

impl<R: Read> Sniff<R> {
    pub(crate) fn new(rdr: R, mode: Decompress) -> Sniff<R> {
        Sniff::Start(Some(rdr), mode, Vec::with_capacity(MAGIC_LEN))
    }

    fn start(&mut self) -> io::Result<()> {
        let Sniff::Start(rdr, mode, head) = self else { return Ok(()) };
        let Some(r) = rdr.as_mut() else {
            return Err(io::Error::other("the input could not be decoded"));
        };
        read_prefix(r, head)?;
        let (mode, head) = (*mode, std::mem::take(head));
        let codec = codec_for(mode, &head);
        let Some(r) = rdr.take() else { unreachable!("checked above") };
        let rest = Cursor::new(head).chain(r);
        *self = match codec {
            Some(c) => Sniff::Decoding(Box::new(Decoder::new(rest, c, 0)?)),
            None => Sniff::Plain(rest),
        };
        Ok(())
    }
}

impl<R: Read> Read for Sniff<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if let Sniff::Start(..) = self {
            self.start()?;
        }
        match self {
            Sniff::Start(..) => unreachable!("started above"),
            Sniff::Plain(r) => r.read(out),
            Sniff::Decoding(d) => d.read(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_sequences_must_be_whole() {
        assert_eq!(Codec::detect(b""), None);
        assert_eq!(Codec::detect(b"\x1f\x8b\x08"), None);
        assert_eq!(Codec::detect(b"\x1f\x8b\x08\xff"), None);
        assert_eq!(Codec::detect(b"BZh9"), None);
        assert_eq!(Codec::detect(b"BZh91AY&S"), None);
        assert_eq!(Codec::detect(b"BZh0" as &[u8]), None);
        assert_eq!(Codec::detect(b"BZh1\x17\x72\x45\x38\x50\x90"), Some(Codec::Bzip2));
        assert_eq!(Codec::detect(b"\x28\xb5\x2f\xfd"), Some(Codec::Zstd));
        assert_eq!(Codec::detect(b"\x5a\x2a\x4d\x18"), Some(Codec::Zstd));
        assert_eq!(Codec::detect(b"\x60\x2a\x4d\x18"), None);
        assert_eq!(Codec::detect(b"PK\x03\x04"), Some(Codec::Zip));
        assert_eq!(Codec::detect(b"PK,name\n"), None);
        assert_eq!(Codec::detect(b"\xfd7zXZ"), None);
    }

    #[test]
    fn reading_the_first_bytes_stops_once_they_decide() {
        /// Gives one byte a call and counts the calls.
        struct OneByOne<'a>(&'a [u8], usize);
        impl Read for OneByOne<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.1 += 1;
                let n = self.0.len().min(1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        for (input, reads) in
            [(&b"a,b\n1\n"[..], 1), (b"BZh9,x\n", 5), (b"BZh91AY&SY..", 10), (b"PK,", 3)]
        {
            let mut r = OneByOne(input, 0);
            let mut head = Vec::new();
            read_prefix(&mut r, &mut head).unwrap();
            assert_eq!((head.len(), r.1), (reads, reads), "{input:?}");
        }
        let mut head = Vec::new();
        read_prefix(&mut &b""[..], &mut head).unwrap();
        assert!(head.is_empty());
    }

    #[test]
    fn a_failed_first_read_loses_no_bytes() {
        /// Gives `BZ`, fails once, then gives the rest.
        struct FailOnce(&'static [u8], bool);
        impl Read for FailOnce {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.len() == 4 && !self.1 {
                    self.1 = true;
                    return Err(io::Error::other("not now"));
                }
                let n = self.0.len().min(2).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut s = Sniff::new(FailOnce(b"BZh,x\n", false), Decompress::Auto);
        let mut out = [0; 16];
        assert!(s.read(&mut out).is_err());
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"BZh,x\n");
    }

    #[test]
    fn sniff_passes_plain_bytes_through_whole() {
        for input in [&b""[..], b"a", b"a,b\n1,2\n", b"BZh9,x\n1,2\n"] {
            let mut out = Vec::new();
            Sniff::new(input, Decompress::Auto).read_to_end(&mut out).unwrap();
            assert_eq!(out, input);
        }
    }

    #[test]
    fn a_zip_archive_fails_with_the_message() {
        let mut out = Vec::new();
        let e = Sniff::new(&b"PK\x03\x04rest"[..], Decompress::Auto).read_to_end(&mut out);
        let e = e.unwrap_err();
        let inner = e.get_ref().unwrap().downcast_ref::<DecompressError>().unwrap();
        assert_eq!((inner.codec, inner.message.as_str()), (Codec::Zip, ZIP_MESSAGE));
    }

    #[test]
    fn gzip_members_decode_one_after_another() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let gz = |s: &[u8]| {
            let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(s).unwrap();
            e.finish().unwrap()
        };
        let mut both = gz(b"a\n1\n");
        both.extend(gz(b"2\n"));
        let mut out = Vec::new();
        Sniff::new(&both[..], Decompress::Auto).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"a\n1\n2\n");
        // Cut short: an error with an offset, never fewer bytes.
        let cut = &both[..both.len() - 5];
        let e = Sniff::new(cut, Decompress::Auto).read_to_end(&mut Vec::new()).unwrap_err();
        let inner = e.get_ref().unwrap().downcast_ref::<DecompressError>().unwrap();
        assert_eq!(inner.codec, Codec::Gzip);
        assert!(inner.offset <= cut.len() as u64);
    }
}
