//! The compressed formats a reader recognises by their first bytes (the
//! decoding itself is `source::decompress`). A leaf module, so that errors
//! and sources can both name a [`Codec`] without depending on each other.

use std::fmt;
use std::io::{self, Read};

/// A compressed format recognised by its first bytes.
///
/// # Which bytes mean which format
///
/// A plain CSV may begin with any text, so each format is recognised by
/// its whole magic sequence, as long as the format defines one
/// (see [`Codec::detect`]):
///
/// | format | first bytes |
/// |---|---|
/// | gzip | `1F 8B 08` (deflate, the only method defined), then a flags byte whose reserved bits 5-7 are clear |
/// | zstd | `28 B5 2F FD` (a frame), or `5? 2A 4D 18` (a skippable frame) |
/// | bzip2 | `BZh`, a block size `1`-`9`, then the block magic `31 41 59 26 53 59` (or the end-of-stream magic `17 72 45 38 50 90` of an empty stream): 10 bytes |
/// | xz | `FD 37 7A 58 5A 00` |
/// | zip | `PK 03 04` or `PK 05 06` (an empty archive): recognised, not read |
///
/// Every sequence but bzip2's holds a byte that is not printable text.
/// bzip2's block sequence is printable (`BZh91AY&SY`), so all 10 bytes are
/// required: a CSV whose first field is `BZh9` stays a CSV, and only text
/// that begins with exactly those 10 characters would be taken for bzip2
/// (read it with [`Decompress::Off`](crate::Decompress::Off)). A file shorter than a sequence
/// is not of that format. ZIP is recognised so that an archive is an error
/// rather than rows of binary: reading one member of an archive is left to
/// `unzip`.
///
/// ```
/// use fastcsv::Codec;
/// assert_eq!(Codec::detect(b"\x1f\x8b\x08\x00rest"), Some(Codec::Gzip));
/// assert_eq!(Codec::detect(b"BZh9,name\n"), None);
/// assert_eq!(Codec::Zstd.to_string(), "zstd");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// gzip (RFC 1952), one member or several.
    Gzip,
    /// Zstandard, one frame or several.
    Zstd,
    /// bzip2, one stream or several.
    Bzip2,
    /// xz, one stream or several.
    Xz,
    /// A ZIP archive: recognised so that it is not read as CSV, but not
    /// read (reading fails with
    /// [`ErrorKind::Decompress`](crate::ErrorKind::Decompress): unzip it
    /// first).
    Zip,
}

/// The most bytes [`Codec::detect`] looks at (bzip2's 10).
pub(crate) const MAGIC_LEN: usize = 10;

/// Each format's magic sequences, a range of allowed values per byte (see
/// the table on [`Codec`]).
const MAGIC: &[(Codec, &[(u8, u8)])] = &[
    // The flags byte: reserved bits 5-7 clear.
    (Codec::Gzip, &[(0x1f, 0x1f), (0x8b, 0x8b), (0x08, 0x08), (0x00, 0x1f)]),
    (Codec::Zstd, &[(0x28, 0x28), (0xb5, 0xb5), (0x2f, 0x2f), (0xfd, 0xfd)]),
    // A skippable frame.
    (Codec::Zstd, &[(0x50, 0x5f), (0x2a, 0x2a), (0x4d, 0x4d), (0x18, 0x18)]),
    // A block size, then the first block's magic, or the end-of-stream
    // magic of an empty stream.
    (Codec::Bzip2, &BZIP2_BLOCK),
    (Codec::Bzip2, &BZIP2_END),
    (Codec::Xz, &[(0xfd, 0xfd), (b'7', b'7'), (b'z', b'z'), (b'X', b'X'), (b'Z', b'Z'), (0, 0)]),
    (Codec::Zip, &[(b'P', b'P'), (b'K', b'K'), (3, 3), (4, 4)]),
    // An empty archive.
    (Codec::Zip, &[(b'P', b'P'), (b'K', b'K'), (5, 5), (6, 6)]),
];

const fn bzip2(tail: [u8; 6]) -> [(u8, u8); 10] {
    let mut m = [
        (b'B', b'B'),
        (b'Z', b'Z'),
        (b'h', b'h'),
        (b'1', b'9'),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 0),
    ];
    let mut i = 0;
    while i < 6 {
        m[4 + i] = (tail[i], tail[i]);
        i += 1;
    }
    m
}

const BZIP2_BLOCK: [(u8, u8); 10] = bzip2([0x31, 0x41, 0x59, 0x26, 0x53, 0x59]);
const BZIP2_END: [(u8, u8); 10] = bzip2([0x17, 0x72, 0x45, 0x38, 0x50, 0x90]);

/// Whether the bytes of `prefix` (as far as both go) fit `magic`.
fn matches_start(magic: &[(u8, u8)], prefix: &[u8]) -> bool {
    magic.iter().zip(prefix).all(|(&(lo, hi), &b)| (lo..=hi).contains(&b))
}

/// Whether more bytes after `prefix` could still make a magic sequence:
/// `prefix` is shorter than some sequence and fits it so far. Reading the
/// first bytes of a stream stops as soon as this is false, so that a pipe
/// of plain text is not held back waiting for bytes that cannot change the
/// answer.
pub(crate) fn undecided(prefix: &[u8]) -> bool {
    MAGIC.iter().any(|(_, m)| prefix.len() < m.len() && matches_start(m, prefix))
}

impl Codec {
    /// The format whose magic sequence `prefix` starts with (see the
    /// table on [`Codec`]); `None` for anything
    /// else, including a prefix shorter than the sequence. Pass the first
    /// 10 bytes of the input (or all of it when shorter).
    ///
    /// ```
    /// use fastcsv::Codec;
    /// assert_eq!(Codec::detect(b"\xfd7zXZ\x00\x00"), Some(Codec::Xz));
    /// assert_eq!(Codec::detect(b"BZh91AY&SY"), Some(Codec::Bzip2));
    /// assert_eq!(Codec::detect(b"\x1f\x8b"), None);
    /// assert_eq!(Codec::detect(b"a,b\n"), None);
    /// ```
    pub fn detect(prefix: &[u8]) -> Option<Codec> {
        MAGIC
            .iter()
            .find(|(_, m)| matches_start(m, prefix) && prefix.len() >= m.len())
            .map(|&(c, _)| c)
    }

    /// The format of the file at `path`, from its first bytes.
    ///
    /// ```
    /// let p = std::env::temp_dir().join("fastcsv-doc-codec-of-path.csv");
    /// std::fs::write(&p, "a,b\n").unwrap();
    /// assert_eq!(fastcsv::Codec::of_path(&p).unwrap(), None);
    /// ```
    pub fn of_path(path: impl AsRef<std::path::Path>) -> io::Result<Option<Codec>> {
        let mut f = std::fs::File::open(path)?;
        let mut head = Vec::with_capacity(MAGIC_LEN);
        (&mut f).take(MAGIC_LEN as u64).read_to_end(&mut head)?;
        Ok(Codec::detect(&head))
    }

    /// The format's usual name: `gzip`, `zstd`, `bzip2`, `xz`, `zip`.
    ///
    /// ```
    /// assert_eq!(fastcsv::Codec::Bzip2.name(), "bzip2");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
            Codec::Zip => "zip",
        }
    }

    /// Parses a name as [`Codec::name`] writes it (`gz`, `zst`, `bz2`
    /// also accepted).
    ///
    /// ```
    /// assert_eq!(fastcsv::Codec::parse("gz"), Some(fastcsv::Codec::Gzip));
    /// ```
    pub fn parse(s: &str) -> Option<Codec> {
        match s {
            "gzip" | "gz" => Some(Codec::Gzip),
            "zstd" | "zst" => Some(Codec::Zstd),
            "bzip2" | "bz2" => Some(Codec::Bzip2),
            "xz" => Some(Codec::Xz),
            "zip" => Some(Codec::Zip),
            _ => None,
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoder failure, carried inside an `io::Error` through the read
/// buffers and turned into
/// [`ErrorKind::Decompress`](crate::ErrorKind::Decompress) by the
/// `From<io::Error>` conversion.
#[derive(Debug)]
pub(crate) struct DecompressError {
    pub(crate) codec: Codec,
    /// Bytes of compressed input consumed when the decoder failed.
    pub(crate) offset: u64,
    pub(crate) message: String,
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} data at byte {}: {}", self.codec, self.offset, self.message)
    }
}

impl std::error::Error for DecompressError {}

impl DecompressError {
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }
}
