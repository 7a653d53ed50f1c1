//! Mapping a mapped file's pages in ahead of the parser, on a helper
//! thread (Linux: `MADV_POPULATE_READ`, kernel 5.14 or later).
//!
//! Parsing a freshly mapped file takes a page fault every few pages (the
//! kernel maps 64 KiB around each fault), and on a fast parse those faults
//! are a large share of the time. A helper thread that asks the kernel to
//! map the pages while the parser works takes those faults on another
//! core, as the buffered source's read-ahead thread takes the `read()`
//! copies, so that a count over a fresh mapping runs about as fast as over
//! one already faulted in (measurements: `docs/BENCHMARKS.md` and
//! `docs/mmap-vs-read.md`).
//!
//! A count maps the rest of the file at once. A pass that hands out rows
//! releases the pages behind it (see `Mapped::release_before`), so there
//! the helper stays at most `MAP_AHEAD` (32 MiB) ahead of the parser and
//! waits (parked) for it to move on; a window that small still gains
//! (the window sizes tried are in `docs/BENCHMARKS.md`).
//!
//! Under the automatic rule the helper starts only when it can save
//! something ([`helper_pays`]). What a fault costs depends on the folios
//! that hold the file in the page cache, which depend on how the file got
//! there: read in by the kernel's read-ahead or written with large
//! `write()`s, it sits in large folios, and each fault maps a whole folio
//! (up to 1 MiB or more) at a small cost per page; written in small pieces
//! it sits in 4 KiB folios, and each fault maps 64 KiB at a larger cost per
//! page. `MADV_POPULATE_READ` walks the pages one by one: over large folios
//! it costs more CPU than the parser's own few faults, so the helper is
//! left out there (measurements: docs/BENCHMARKS.md, "Work notes of the fourth session").

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes mapped per `madvise` call (the helper looks for `stop` and a new
/// limit between calls): 2 MiB.
const STEP: usize = 2 << 20;

/// What the parser and the helper share.
struct Shared {
    stop: AtomicBool,
    /// The helper maps pages up to this offset, then waits (parked) for
    /// the parser to raise it.
    upto: AtomicUsize,
}

/// The helper thread of one mapping. Dropping it stops and joins the
/// thread; the mapping must outlive it (`Mapped` declares it first, so it
/// is dropped first).
pub(crate) struct FaultAhead {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl FaultAhead {
    /// Starts a thread that maps the pages of the `len` bytes at `base`
    /// from offset `from` up to offset `upto` (raised by
    /// [`FaultAhead::map_up_to`]). `None` when no thread could be started
    /// (the parser then takes the faults itself, as without this).
    ///
    /// # Safety
    ///
    /// `base..base + len` must be a private read-only file mapping, with
    /// `base` page-aligned, that stays mapped until the returned value is
    /// dropped.
    pub(crate) unsafe fn start(
        base: *const u8,
        len: usize,
        from: usize,
        upto: usize,
    ) -> Option<FaultAhead> {
        let shared =
            Arc::new(Shared { stop: AtomicBool::new(false), upto: AtomicUsize::new(upto) });
        let theirs = Arc::clone(&shared);
        // A raw pointer is not `Send`; its address is.
        let addr = base as usize;
        let thread =
            crate::pool::spawn("fault-ahead", move || populate(addr, len, from, &theirs)).ok()?;
        Some(FaultAhead { shared, thread: Some(thread) })
    }

    /// Lets the helper map pages up to offset `upto` (never lowers the
    /// limit), waking it if it waits.
    pub(crate) fn map_up_to(&self, upto: usize) {
        let old = self.shared.upto.fetch_max(upto, Ordering::AcqRel);
        if old < upto {
            if let Some(t) = &self.thread {
                t.thread().unpark();
            }
        }
    }
}

impl Drop for FaultAhead {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            // The thread ends after the `madvise` in progress (at most
            // `STEP` bytes of page-table updates); it cannot panic but
            // for a bug, which the join then swallows rather than
            // unwinding through a drop.
            let _ = t.join();
        }
    }
}

/// Bytes of the file the parsing thread maps in itself to find out
/// whether the helper pays ([`helper_pays`]), after as many that it maps
/// as it goes: 1 MiB.
pub(crate) const PROBE: usize = 1 << 20;

/// The helper pays when the parsing thread takes at least this many faults
/// per MiB (at most 128 KiB mapped per fault: 4 KiB folios, mapped 64 KiB
/// a fault, take 16).
const FAULTS_PER_MIB: u64 = 8;

/// Has the kernel map the pages of `base + from .. base + upto` on this
/// thread, as the parser would fault them in, and says whether a helper
/// mapping the rest would spare the parser much: the pages took
/// [`FAULTS_PER_MIB`] faults or more per MiB, or some had to be read from
/// the disk (a major fault: the file is not all in the page cache, and the
/// helper waits for the reads in the parser's stead). `false` when the
/// kernel refuses (no `MADV_POPULATE_READ` before Linux 5.14: `EINVAL`; a
/// file cut under the mapping: `EFAULT`, and the parser then finds the
/// missing pages itself and reports the change) or the faults cannot be
/// counted.
///
/// # Safety
///
/// `base..base + upto` must be part of a read-only file mapping, with
/// `base` page-aligned, that stays mapped during the call; `from` must
/// be a multiple of the page size (the kernel rounds `upto` up to a whole
/// page, which is still the mapping's).
pub(crate) unsafe fn helper_pays(base: *const u8, from: usize, upto: usize) -> bool {
    if upto <= from {
        return false;
    }
    let Some((minor, major)) = thread_faults() else {
        return false;
    };
    loop {
        // SAFETY: the range lies inside the mapping, which stays mapped
        // during this call, and starts on a page boundary (the caller's
        // contract). Populating reads nothing into this process's memory:
        // it only has the kernel fill page-table entries for a read-only
        // file mapping.
        let rc = unsafe {
            libc::madvise(
                base.add(from) as *mut libc::c_void,
                upto - from,
                libc::MADV_POPULATE_READ,
            )
        };
        if rc == 0 {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
    let Some((minor_after, major_after)) = thread_faults() else {
        return false;
    };
    let faults = minor_after.saturating_sub(minor);
    major_after > major
        || faults.saturating_mul(1 << 20) >= FAULTS_PER_MIB.saturating_mul((upto - from) as u64)
}

/// The minor and major page faults this thread has taken (`getrusage`'s
/// `RUSAGE_THREAD`; the kernel counts the faults `MADV_POPULATE_READ`
/// takes on the caller's behalf there too).
fn thread_faults() -> Option<(u64, u64)> {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable `rusage` for the call to fill.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let count = |n: libc::c_long| u64::try_from(n).unwrap_or(0);
    (rc == 0).then(|| (count(ru.ru_minflt), count(ru.ru_majflt)))
}

/// The helper's loop: map pages in `STEP`s from `from` up to the shared
/// limit, waiting (parked) while it has reached it; end at `len`, on
/// `stop`, or when the kernel refuses (a kernel without
/// `MADV_POPULATE_READ` says `EINVAL`; a file truncated under the mapping,
/// `EFAULT`: the parser then finds the missing pages itself and reports
/// the change).
fn populate(addr: usize, len: usize, from: usize, shared: &Shared) {
    let page = super::page_size();
    let mut done = from & !(page - 1);
    while done < len && !shared.stop.load(Ordering::Acquire) {
        // Whole pages, so that `done` stays page-aligned (the last step
        // ends at `len`, inside the mapping's last page).
        let upto = shared.upto.load(Ordering::Acquire);
        let upto = if upto >= len { len } else { upto & !(page - 1) };
        if done >= upto {
            // `map_up_to` and `drop` unpark after changing what is read
            // above, so a wake-up between the load and here is not lost
            // (the token makes this `park` return at once).
            std::thread::park();
            continue;
        }
        let n = STEP.min(upto - done);
        // SAFETY: `addr + done .. addr + done + n` lies inside the mapping
        // (`done + n <= upto <= len`), which the owner keeps mapped until it
        // has joined this thread; `done` is page-aligned (`from` rounded
        // down, plus steps of whole pages; only the last step, to `len`,
        // may end inside a page) and so is the mapping's start. Populating
        // reads nothing into this process's memory: it only has the kernel
        // fill page-table entries for a read-only private file mapping.
        let rc = unsafe {
            libc::madvise((addr + done) as *mut libc::c_void, n, libc::MADV_POPULATE_READ)
        };
        if rc != 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        done += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A fresh read-only mapping of a file of `mib` MiB written `piece`
    /// bytes at a time.
    fn mapped(mib: usize, piece: usize) -> memmap2::Mmap {
        let mut f = tempfile::tempfile().unwrap();
        let chunk: Vec<u8> = (0..piece).map(|i| b'a' + (i % 26) as u8).collect();
        for _ in 0..(mib << 20) / piece {
            f.write_all(&chunk).unwrap();
        }
        // SAFETY: a private temporary file that nothing else changes.
        unsafe { memmap2::Mmap::map(&f).unwrap() }
    }

    /// Whether this kernel has `MADV_POPULATE_READ` (Linux 5.14).
    fn populate_works() -> bool {
        let m = mapped(1, 4096);
        // SAFETY: the first page of a live read-only file mapping.
        let rc = unsafe {
            libc::madvise(m.as_ptr() as *mut libc::c_void, 4096, libc::MADV_POPULATE_READ)
        };
        rc == 0
    }

    #[test]
    fn the_probe_finds_many_faults_on_small_pieces_and_none_on_mapped_pages() {
        if !populate_works() {
            // The probe says no on such kernels: nothing to tell apart.
            let m = mapped(2, 4096);
            // SAFETY: the range is the whole live mapping, from its start.
            assert!(!unsafe { helper_pays(m.as_ptr(), 0, PROBE) });
            return;
        }
        // Written 4 KiB at a time, the file sits in 4 KiB folios: the
        // kernel maps 64 KiB a fault, 16 faults per MiB.
        let m = mapped(3, 4096);
        // SAFETY: `0..PROBE` and `PROBE..2 * PROBE` lie inside the live
        // 3 MiB mapping and start on page boundaries.
        assert!(unsafe { helper_pays(m.as_ptr(), 0, PROBE) });
        // Pages mapped already take no fault: nothing for a helper to do.
        let sum: u64 = m[PROBE..2 * PROBE].iter().step_by(4096).map(|&b| u64::from(b)).sum();
        assert!(sum > 0);
        // SAFETY: as above.
        assert!(!unsafe { helper_pays(m.as_ptr(), PROBE, 2 * PROBE) });
        // An empty range says no.
        // SAFETY: as above.
        assert!(!unsafe { helper_pays(m.as_ptr(), PROBE, PROBE) });
    }
}
