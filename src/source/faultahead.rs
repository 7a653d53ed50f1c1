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
