//! Input sources: an in-memory slice, a memory-mapped file, or a
//! `read()`-buffered stream, and the automatic choice between them.
//!
//! The crate's only `unsafe` for mapping files lives in this module.

mod buffer;

pub(crate) use buffer::ReadBuffer;

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

/// Default size of the `read()` buffer: 128 KiB, as coreutils `cp` uses.
pub const DEFAULT_BUFFER_SIZE: usize = 128 * 1024;

/// Default cap on buffer growth for one huge record: 512 MiB.
pub const DEFAULT_MAX_BUFFER_SIZE: usize = 512 * 1024 * 1024;

/// Which source to use for a path.
///
/// ```
/// use fastcsv::SourceChoice;
/// assert_eq!(SourceChoice::parse("read"), Some(SourceChoice::Buffered));
/// assert_eq!(SourceChoice::default(), SourceChoice::Auto);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SourceChoice {
    /// Map regular files, buffer everything else (see [`SourceKind`]).
    #[default]
    Auto,
    /// Always try to map; falls back to buffered reading when mapping is
    /// impossible (pipes, special files, failed `mmap`).
    Mmap,
    /// Always use `read()` into a reused buffer.
    Buffered,
}

impl SourceChoice {
    /// Parses `auto`, `mmap` or `read`/`buffered`.
    ///
    /// ```
    /// assert_eq!(fastcsv::SourceChoice::parse("mmap"), Some(fastcsv::SourceChoice::Mmap));
    /// ```
    pub fn parse(s: &str) -> Option<SourceChoice> {
        match s {
            "auto" => Some(SourceChoice::Auto),
            "mmap" => Some(SourceChoice::Mmap),
            "read" | "buffered" => Some(SourceChoice::Buffered),
            _ => None,
        }
    }
}

/// The source actually used, and why.
///
/// ```
/// let mut rdr = fastcsv::Reader::from_slice(b"a\n");
/// assert_eq!(rdr.source_kind(), fastcsv::SourceKind::Slice);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// An in-memory slice given by the caller.
    Slice,
    /// A memory-mapped regular file.
    Mapped,
    /// `read()` into a buffer.
    Buffered,
}

/// Why a source was chosen (for `--verbose` output and the Python `source`
/// attribute).
///
/// ```
/// assert_eq!(fastcsv::SourceReason::Requested.to_string(), "requested");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceReason {
    /// The caller asked for this source.
    Requested,
    /// A regular, non-empty file: mapped.
    RegularFile,
    /// Not a regular file (pipe, FIFO, socket, character device, stdin).
    NotRegular,
    /// The file reports size 0 (e.g. `/proc` files), so it is read.
    ZeroSize,
    /// Larger than the mapping limit.
    TooLarge,
    /// `mmap` failed; buffered reading was used instead.
    MapFailed,
    /// The input is a slice or a generic reader.
    NotAFile,
}

impl std::fmt::Display for SourceReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SourceReason::Requested => "requested",
            SourceReason::RegularFile => "regular file",
            SourceReason::NotRegular => "not a regular file",
            SourceReason::ZeroSize => "file reports size 0",
            SourceReason::TooLarge => "file larger than the mapping limit",
            SourceReason::MapFailed => "mmap failed",
            SourceReason::NotAFile => "not a file",
        })
    }
}

/// A mapped file.
pub(crate) struct Mapped {
    map: Mmap,
}

impl Mapped {
    /// Maps `file` read-only and advises sequential access.
    pub(crate) fn open(file: &File) -> std::io::Result<Mapped> {
        // SAFETY: the mapping is read-only and private to this reader. The
        // hazard of mapping a file is that another process truncates or
        // rewrites it while mapped: rewrites show up as changed bytes (still
        // memory-safe for a byte parser, which validates everything it reads),
        // and truncation raises SIGBUS on access past the new end. The
        // reader documents this limit (see `ReaderBuilder::source`); callers
        // that cannot accept it choose `SourceChoice::Buffered`.
        let map = unsafe { Mmap::map(file)? };
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        Ok(Mapped { map })
    }

    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }
}

/// The decision for a path: returns the open file and the kind to use.
pub(crate) fn choose(
    file: &File,
    choice: SourceChoice,
    map_limit: u64,
) -> (SourceKind, SourceReason, Option<Mapped>) {
    if choice == SourceChoice::Buffered {
        return (SourceKind::Buffered, SourceReason::Requested, None);
    }
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(_) => return (SourceKind::Buffered, SourceReason::NotRegular, None),
    };
    if !meta.is_file() {
        return (SourceKind::Buffered, SourceReason::NotRegular, None);
    }
    if meta.len() == 0 {
        return (SourceKind::Buffered, SourceReason::ZeroSize, None);
    }
    if choice == SourceChoice::Auto && meta.len() > map_limit {
        return (SourceKind::Buffered, SourceReason::TooLarge, None);
    }
    match Mapped::open(file) {
        Ok(m) => {
            let reason = if choice == SourceChoice::Mmap {
                SourceReason::Requested
            } else {
                SourceReason::RegularFile
            };
            (SourceKind::Mapped, reason, Some(m))
        }
        Err(_) => (SourceKind::Buffered, SourceReason::MapFailed, None),
    }
}

/// Memory the machine has available, used as the default mapping limit.
pub(crate) fn default_map_limit() -> u64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no memory-safety preconditions.
        let pages = unsafe { libc::sysconf(libc::_SC_AVPHYS_PAGES) };
        // SAFETY: as above.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if pages > 0 && size > 0 {
            return (pages as u64).saturating_mul(size as u64);
        }
    }
    u64::MAX
}

/// Opens `path` for reading, with the path in the error.
pub(crate) fn open_path(path: &Path) -> crate::Result<File> {
    File::open(path).map_err(|e| crate::Error::from(e).with_path(path))
}
