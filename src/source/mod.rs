//! Input sources: an in-memory slice, a memory-mapped file, or a
//! `read()`-buffered stream, and the automatic choice between them.
//!
//! The crate's only `unsafe` for mapping files lives in this module.

mod buffer;
mod checked;
pub(crate) mod decompress;
#[cfg(target_os = "linux")]
mod faultahead;
mod readahead;
#[cfg(target_os = "linux")]
mod sigbus;

pub(crate) use buffer::ReadBuffer;
pub(crate) use checked::{CheckedFile, CheckedStream};
pub use decompress::{Codec, Decompress};
pub(crate) use readahead::Input;

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

use crate::error::Error;

/// Default size of the `read()` buffer: 128 KiB, as coreutils `cp` uses.
pub const DEFAULT_BUFFER_SIZE: usize = 128 * 1024;

/// Default cap on buffer growth for one huge record: 512 MiB.
pub const DEFAULT_MAX_BUFFER_SIZE: usize = 512 * 1024 * 1024;

/// Which source to use for a path.
///
/// Mapping is the fast path for regular files, with one hazard: another
/// process truncating the file while it is mapped. On Linux the reader
/// survives that (it installs a `SIGBUS` handler that covers its own
/// mappings only) and fails with
/// [`ErrorKind::FileChanged`](crate::ErrorKind::FileChanged); a file
/// rewritten in place without shrinking is not detected. On other systems a
/// truncation while mapped kills the process with `SIGBUS`: choose
/// [`SourceChoice::Buffered`] there if files may shrink under you.
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
    /// Smaller than [`SMALL_FILE`]: one `read()` is cheaper than mapping.
    SmallFile,
    /// The input is a slice or a generic reader.
    NotAFile,
    /// A compressed file (known by its first bytes, see [`Codec::detect`],
    /// or as [`Decompress::Force`] says): decoded into the `read()`
    /// buffer, never mapped, since its bytes are not the CSV.
    Compressed(Codec),
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
            SourceReason::SmallFile => "small file",
            SourceReason::NotAFile => "not a file",
            SourceReason::Compressed(c) => return write!(f, "{c}-compressed file"),
        })
    }
}

/// Mapped files at least this large release the pages behind the cursor
/// (see [`ReaderBuilder::release_threshold`](crate::ReaderBuilder::release_threshold)):
/// 64 MiB.
pub const DEFAULT_RELEASE_THRESHOLD: u64 = 64 * 1024 * 1024;

/// Regular files smaller than this are read, not mapped, under
/// [`SourceChoice::Auto`]: 64 KiB. Below this size, the fixed cost of
/// `mmap` + `munmap` + a page fault per page is larger than one `read()`
/// into the buffer (see `docs/mmap-vs-read.md`).
pub const SMALL_FILE: u64 = 64 * 1024;

/// Under automatic read-ahead (see
/// [`ReaderBuilder::read_ahead`](crate::ReaderBuilder::read_ahead)), regular
/// files with fewer bytes than this left to read are read on the parsing
/// thread: 4 MiB. Below it, starting the thread, faulting in its buffers
/// and waking the parser for the first chunk cost more than the overlap
/// saves (`docs/BENCHMARKS.md`). When other processes keep every core busy, the thread
/// costs time at any size: turn it off there with `read_ahead(false)`.
pub const READ_AHEAD_MIN: u64 = 4 * 1024 * 1024;

/// True when this process may run two threads at once (cached: the first
/// call reads cgroup limits).
pub(crate) fn parallel() -> bool {
    use std::sync::OnceLock;
    static PARALLEL: OnceLock<bool> = OnceLock::new();
    *PARALLEL.get_or_init(|| crate::pool::cpus() >= 2)
}

/// How often pages behind the cursor are released: every 16 MiB parsed.
pub(crate) const RELEASE_EVERY: usize = 16 * 1024 * 1024;

/// How far ahead of the parser a mapped file's pages are mapped in while
/// rows are read (see `faultahead`)...
pub(crate) const MAP_AHEAD: usize = 32 * 1024 * 1024;

/// ... raised each time the parser has gone this far.
const MAP_AHEAD_EVERY: usize = 4 * 1024 * 1024;

/// A mapped file, registered with the `SIGBUS` guard (on Linux), that can
/// release the pages it has already parsed.
pub(crate) struct Mapped {
    // Field order is drop order: stop the fault-ahead thread, unregister,
    // then unmap.
    #[cfg(target_os = "linux")]
    ahead: Option<faultahead::FaultAhead>,
    #[cfg(target_os = "linux")]
    guard: sigbus::Registration,
    /// Whether `fault_in_rest` may start a helper thread.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    may_fault_ahead: bool,
    /// Whether the helper waits for a probe of the parser's own page
    /// faults to show that it pays (see `faultahead::helper_pays`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    probe_first: bool,
    map: Mmap,
    /// Bytes of the map the reader sees (a part of a split file ends
    /// before the file does).
    end: usize,
    file: File,
    /// Release pages below this offset once the cursor passes it
    /// (`usize::MAX`: never).
    next_release: usize,
    /// Let the fault-ahead helper go further once the cursor passes this
    /// offset (`usize::MAX`: no helper for rows).
    next_window: usize,
    /// Check that the `SIGBUS` guard's handler is still in front once the
    /// cursor passes this offset (`usize::MAX`: not on this system).
    next_guard: usize,
    /// Also drop released pages from the page cache (files larger than the
    /// memory available: they would not stay cached anyway).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    evict_cache: bool,
}

impl Mapped {
    /// Maps `file` read-only, advises sequential access and registers the
    /// mapping with the `SIGBUS` guard. Fails (and the caller reads the file
    /// instead) when `mmap` fails or the guard has no free slot.
    pub(crate) fn open(file: File, release_threshold: u64, avail: u64) -> std::io::Result<Mapped> {
        // SAFETY: the mapping is read-only and private to this reader. The
        // hazard of mapping a file is that another process changes it while
        // mapped. Truncation makes accesses past the new end raise SIGBUS:
        // on Linux the `sigbus` guard registered below replaces those pages
        // with zeros and the reader reports `FileChanged` instead of
        // returning their contents. Rewrites in place show up as changed
        // bytes, which is still memory-safe for a parser that validates
        // every byte it reads; this limit is documented on `SourceChoice`.
        let map = unsafe { Mmap::map(&file)? };
        #[cfg(target_os = "linux")]
        let guard = sigbus::Registration::new(map.as_ptr(), map.len()).ok_or_else(|| {
            std::io::Error::other("no free slot in the SIGBUS guard for another mapping")
        })?;
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        // Pages the kernel reads in for this mapping (a file not in the page
        // cache yet) come in 2 MiB folios whatever the order of the faults:
        // without it, faults that jump (a parallel read's cuts and workers)
        // make it read the file in 4 KiB folios, which stay in the page
        // cache and make every later pass over the file, mapped or read,
        // cost more CPU. It changes nothing for pages cached already. Not
        // all kernels have it; it is only advice.
        #[cfg(target_os = "linux")]
        {
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        let len = map.len() as u64;
        let next_release = if len >= release_threshold { RELEASE_EVERY } else { usize::MAX };
        Ok(Mapped {
            #[cfg(target_os = "linux")]
            ahead: None,
            #[cfg(target_os = "linux")]
            guard,
            may_fault_ahead: false,
            probe_first: false,
            end: map.len(),
            map,
            file,
            next_release,
            next_window: usize::MAX,
            #[cfg(target_os = "linux")]
            next_guard: sigbus::CHECK_EVERY,
            #[cfg(not(target_os = "linux"))]
            next_guard: usize::MAX,
            evict_cache: len > avail,
        })
    }

    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map[..self.end]
    }

    /// Makes the reader see only the first `end` bytes of the file.
    pub(crate) fn limit(&mut self, end: usize) {
        self.end = end.min(self.map.len());
    }

    /// Lets [`Mapped::fault_in_rest`] start a helper thread (the
    /// reader's read-ahead rule decides; see
    /// [`ReaderBuilder::read_ahead`](crate::ReaderBuilder::read_ahead));
    /// with `probe`, only once a probe of [`faultahead::PROBE`] bytes (the
    /// second MiB from where the reader starts) shows that it saves the
    /// parser faults (the automatic rule; `read_ahead(true)` starts it
    /// without asking).
    pub(crate) fn allow_fault_ahead(&mut self, on: bool, probe: bool) {
        self.may_fault_ahead = on;
        self.probe_first = on && probe;
        self.next_window = if on && cfg!(target_os = "linux") { 0 } else { usize::MAX };
    }

    /// For a pass from `offset` that hands out no rows until it ends
    /// (counting records): when allowed, starts a helper thread that has
    /// the kernel map the rest of the pages while the parser goes (see
    /// `faultahead`; Linux only, elsewhere nothing).
    pub(crate) fn fault_in_rest(&mut self, offset: usize) {
        #[cfg(target_os = "linux")]
        if self.may_fault_ahead {
            self.next_window = usize::MAX;
            self.map_ahead(offset, self.end);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = offset;
    }

    /// Has the helper thread (started here if need be) map the pages from
    /// `offset` up to `upto`.
    #[cfg(target_os = "linux")]
    fn map_ahead(&mut self, offset: usize, upto: usize) {
        // The bytes the reader sees (a part of a file ends before it).
        let len = self.end;
        if offset >= len {
            return;
        }
        match &self.ahead {
            Some(a) => a.map_up_to(upto),
            None => {
                let mut from = offset;
                if self.probe_first {
                    // Asked once, about the MiB after the next: where the
                    // kernel's read-ahead started reading the file, its
                    // first folios are small whatever the rest. The parser
                    // maps the probe's pages (and the MiB before them)
                    // itself, and the helper, if it pays, starts after them.
                    self.probe_first = false;
                    let page = page_size();
                    let start = (offset & !(page - 1)).saturating_add(faultahead::PROBE);
                    let end = start.saturating_add(faultahead::PROBE);
                    let end = if end >= len { len } else { end };
                    // SAFETY: `start..end` lies inside the mapping (`end <=
                    // len <= map.len()`), which `self` keeps mapped during
                    // the call; the mapping starts on a page boundary, and
                    // so does `start`.
                    if !unsafe { faultahead::helper_pays(self.map.as_ptr(), start, end) } {
                        self.may_fault_ahead = false;
                        self.next_window = usize::MAX;
                        return;
                    }
                    from = end;
                }
                // SAFETY: `self.map` is a private read-only file mapping of
                // at least `len` bytes starting on a page boundary (`mmap`
                // returns one), and it stays mapped until `self` is dropped, which
                // drops `ahead` (declared first) and so joins the thread
                // before unmapping.
                self.ahead =
                    unsafe { faultahead::FaultAhead::start(self.map.as_ptr(), len, from, upto) };
                if self.ahead.is_none() {
                    self.next_window = usize::MAX;
                }
            }
        }
    }

    /// Whether a helper thread has been started to map the pages in ahead
    /// of the parser.
    pub(crate) fn faults_ahead(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.ahead.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// True when the file shrank under the mapping: a page past its new end
    /// was touched (and replaced by zeros), or, with `check_size`, the file
    /// is now shorter than the mapping.
    #[inline]
    pub(crate) fn changed(&self, check_size: bool) -> bool {
        #[cfg(target_os = "linux")]
        if self.guard.changed() {
            return true;
        }
        check_size && self.file.metadata().is_ok_and(|m| m.len() < self.map.len() as u64)
    }

    /// Whether records that end at `end` (their bytes `..end`, already
    /// parsed) may hold bytes of a changed file, so must not be handed
    /// out: the guard's flag is set, or the byte at `end - 1` now reads as
    /// zero and the file is shorter than the mapping.
    ///
    /// Why this suffices. A file cut to `m` bytes reads as zeros past `m`:
    /// up to the end of the page holding `m` without any fault, and past
    /// it after a fault whose handler sets the flag before the faulting
    /// load is restarted. Suppose the parse read a zero that stands for a
    /// byte at `i >= m` (`i < end`): the cut came before that read, so
    /// before this call, and `end - 1 >= i >= m`. The byte at `end - 1` is
    /// loaded again here (a volatile load: the compiler may neither drop
    /// it nor reuse a value loaded before): in `m`'s page it reads zero,
    /// which sends us to the file's size (shorter than the mapping); in a
    /// later page it reads zero from a page replaced by an earlier fault
    /// (on this thread: the flag is set; on another thread, whose handler
    /// may not have set it yet: zero, and the size) or faults now, and
    /// the handler runs and sets the flag before the load completes. The
    /// flag is read after that load: `Registration::changed` puts a
    /// compiler fence before its load, and a fault's handler runs on the
    /// faulting thread, in program order. A terminator of 0 or a record
    /// that ends in a NUL byte costs an `fstat`, nothing worse.
    #[inline]
    pub(crate) fn changed_before(&self, end: usize) -> bool {
        let last = match end.checked_sub(1) {
            Some(i) if i < self.end => {
                // SAFETY: `i < self.end <= self.map.len()`: a byte of the
                // mapping, which stays mapped while `self` lives (a page
                // past the file's end faults and is replaced by zeros by
                // the guard, so the load completes).
                unsafe { std::ptr::read_volatile(self.map.as_ptr().add(i)) }
            }
            _ => 1,
        };
        self.changed(last == 0)
    }

    /// Called with the offset of the current record's first byte; every
    /// 16 MiB, drops the pages wholly before it from this process
    /// (`MADV_DONTNEED`) and, for files larger than memory, from the page
    /// cache (`POSIX_FADV_DONTNEED`). Rows borrow only the current record,
    /// which starts at or after `offset`, so no live borrow points into
    /// released pages. Released pages would read back from the file if
    /// touched again; nothing here touches them.
    ///
    /// With the fault-ahead helper allowed (started by the first call), it
    /// also lets the helper map the pages up to [`MAP_AHEAD`] bytes past
    /// `offset`, every `MAP_AHEAD_EVERY` bytes of progress, so that the
    /// parser takes no page faults.
    #[inline]
    pub(crate) fn release_before(&mut self, offset: usize) {
        if offset < self.next_release && offset < self.next_window && offset < self.next_guard {
            return;
        }
        self.release_and_map_ahead(offset);
    }

    #[cold]
    fn release_and_map_ahead(&mut self, offset: usize) {
        #[cfg(target_os = "linux")]
        if offset >= self.next_guard {
            self.next_guard = offset.saturating_add(sigbus::CHECK_EVERY);
            sigbus::keep_in_front();
        }
        #[cfg(target_os = "linux")]
        if offset >= self.next_window {
            self.next_window = offset.saturating_add(MAP_AHEAD_EVERY);
            self.map_ahead(offset, offset.saturating_add(MAP_AHEAD));
        }
        if offset >= self.next_release {
            self.next_release = offset.saturating_add(RELEASE_EVERY);
            self.release(offset);
        }
    }

    /// Whether `release_before` drops pages at all (files of at least the
    /// release threshold).
    pub(crate) fn releases(&self) -> bool {
        self.next_release != usize::MAX
    }

    /// Drops the pages wholly before `offset` (see `release_before`). A
    /// parallel read calls it with the start of the records it has not
    /// handed out yet; a worker may still look at bytes just before that
    /// (the end of the record before its chunk), which then read back from
    /// the file.
    pub(crate) fn release(&self, offset: usize) {
        // Linux only: elsewhere (no posix_fadvise on macOS) pages stay until
        // the kernel reclaims them.
        #[cfg(target_os = "linux")]
        {
            let page = page_size();
            let end = offset.min(self.map.len()) & !(page - 1);
            if end == 0 {
                return;
            }
            // SAFETY: `[0, end)` lies inside the mapping (`end <= len`).
            // MADV_DONTNEED on a private, read-only file mapping only drops
            // the page-table entries: no byte changes, and a later access
            // (which the callers avoid, and which would be harmless) faults
            // the file's bytes back in.
            let _ = unsafe {
                self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, end)
            };
            if self.evict_cache {
                use std::os::fd::AsRawFd;
                // SAFETY: posix_fadvise takes a file descriptor that
                // `self.file` keeps open; it only affects caching.
                unsafe {
                    libc::posix_fadvise(
                        self.file.as_raw_fd(),
                        0,
                        end as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    )
                };
            }
        }
    }
}

/// The system's page size.
#[cfg(target_os = "linux")]
fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// Settings [`choose`] needs.
pub(crate) struct Limits {
    /// Under `Auto`, files larger than this are read, not mapped.
    pub(crate) map_limit: u64,
    /// Mapped files at least this large release parsed pages.
    pub(crate) release_threshold: u64,
    /// Memory available now.
    pub(crate) avail: u64,
}

/// The decision for a file: the kind to use and why, with the mapping when
/// it is mapped; otherwise the file is handed back to be read.
pub(crate) fn choose(
    file: File,
    choice: SourceChoice,
    limits: &Limits,
) -> (SourceKind, SourceReason, Result<Mapped, File>) {
    choose_with(file, choice, limits, |f| Mapped::open(f, limits.release_threshold, limits.avail))
}

/// [`choose`] with the mapping step passed in (tests make it fail).
pub(crate) fn choose_with(
    file: File,
    choice: SourceChoice,
    limits: &Limits,
    map: impl FnOnce(File) -> std::io::Result<Mapped>,
) -> (SourceKind, SourceReason, Result<Mapped, File>) {
    use SourceReason as R;
    let buffered = |reason, file| (SourceKind::Buffered, reason, Err(file));
    if choice == SourceChoice::Buffered {
        return buffered(R::Requested, file);
    }
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(_) => return buffered(R::NotRegular, file),
    };
    if !meta.is_file() {
        return buffered(R::NotRegular, file);
    }
    if meta.len() == 0 {
        return buffered(R::ZeroSize, file);
    }
    if choice == SourceChoice::Auto {
        if meta.len() > limits.map_limit {
            return buffered(R::TooLarge, file);
        }
        if meta.len() < SMALL_FILE {
            return buffered(R::SmallFile, file);
        }
    }
    // `map` consumes the file; keep a second handle to read from if it
    // fails.
    let spare = match file.try_clone() {
        Ok(f) => f,
        Err(_) => return buffered(R::MapFailed, file),
    };
    match map(file) {
        Ok(m) => {
            let reason = if choice == SourceChoice::Mmap { R::Requested } else { R::RegularFile };
            (SourceKind::Mapped, reason, Ok(m))
        }
        Err(_) => buffered(R::MapFailed, spare),
    }
}

/// Memory free now (`_SC_AVPHYS_PAGES`, Linux's `MemFree`: one cheap
/// `sysinfo` call, unlike reading `MemAvailable` from `/proc/meminfo`, which
/// costs as much as mapping a small file), used as the default mapping limit
/// and to decide whether released pages also leave the page cache.
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
pub(crate) fn open_path(path: &Path) -> crate::error::Result<File> {
    File::open(path).map_err(|e| Error::from(e).with_path(path))
}

/// The whole file at `path`, mapped for one short pass (the splitter's):
/// registered with the `SIGBUS` guard like a reader's mapping, never
/// released behind. `None` for an empty file (nothing to map). Check
/// [`Mapped::changed`] before trusting what was read. Anything but a
/// regular file (a pipe, a FIFO, a device) is a configuration error: it
/// has no byte ranges, and its size of 0 would pass for an empty file.
pub(crate) fn map_path(path: &Path) -> crate::error::Result<Option<Mapped>> {
    let file = open_path(path)?;
    let meta = file.metadata().map_err(|e| Error::from(e).with_path(path))?;
    if !meta.is_file() {
        return Err(Error::config(
            "not a regular file: byte ranges need a file that can be read again",
        )
        .with_path(path));
    }
    let len = meta.len();
    if len == 0 {
        return Ok(None);
    }
    Mapped::open(file, u64::MAX, u64::MAX).map(Some).map_err(|e| Error::from(e).with_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { map_limit: u64::MAX, release_threshold: u64::MAX, avail: u64::MAX }
    }

    #[test]
    fn a_failed_map_hands_the_file_back_at_its_position() {
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![b'x'; SMALL_FILE as usize]).unwrap();
        f.seek(SeekFrom::Start(10)).unwrap();
        let fail = |_: File| Err(std::io::Error::other("no mapping today"));
        let (kind, reason, src) = choose_with(f, SourceChoice::Auto, &limits(), fail);
        assert_eq!((kind, reason), (SourceKind::Buffered, SourceReason::MapFailed));
        let mut rest = Vec::new();
        src.err().unwrap().read_to_end(&mut rest).unwrap();
        assert_eq!(rest.len(), SMALL_FILE as usize - 10);
    }

    /// The `VmFlags` line of this process's mapping that starts at `addr`.
    #[cfg(target_os = "linux")]
    fn vm_flags(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let start = format!("{addr:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&start));
        lines.find_map(|l| l.strip_prefix("VmFlags:")).unwrap().to_string()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mappings_are_advised_sequential_and_huge_pages() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![b'x'; 1 << 20]).unwrap();
        let m = Mapped::open(f, u64::MAX, u64::MAX).unwrap();
        let flags = vm_flags(m.bytes().as_ptr() as usize);
        let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
        assert!(has("sr"), "sequential read: {flags}");
        // Kernels built without transparent huge pages refuse the advice.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(has("hg"), "huge pages: {flags}");
        }
    }

    #[test]
    fn release_behind_keeps_the_bytes_readable() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3 * RELEASE_EVERY + 100).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let mut m = Mapped::open(f, 0, u64::MAX).unwrap();
        let sum = |m: &Mapped| m.bytes().iter().map(|&b| u64::from(b)).sum::<u64>();
        let want = sum(&m);
        for off in (0..data.len()).step_by(1 << 20) {
            m.release_before(off);
        }
        // Released pages fault back in from the file if ever touched.
        assert_eq!(sum(&m), want);
        assert!(!m.changed(true));
    }
}
