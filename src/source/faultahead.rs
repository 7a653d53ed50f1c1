//! Faulting a mapped file's pages in ahead of the parser, on a helper
//! thread (Linux: `MADV_POPULATE_READ`, kernel 5.14 or later).
//!
//! Parsing a freshly mapped file takes a page fault every few pages (the
//! kernel maps 64 KiB around each fault): on the 1 GiB text file, counting
//! records over a fresh mapping took 0.05-0.11 s longer than over one
//! already faulted in (0.27-0.33 s against 0.22-0.25 s, `docs/BENCHMARKS.md`),
//! a fifth to a third of the count. A helper thread that asks the kernel to
//! map the pages just ahead of the parser takes those faults on another
//! core, as the buffered source's read-ahead thread takes the `read()`
//! copies. It stays at most [`AHEAD`] bytes past the position the parser
//! last reported, so that a mapping whose parsed pages are released (see
//! `Mapped::release_before`) never holds much more than that window.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How far past the parser's reported position the helper maps pages:
/// 4 MiB. The helper maps pages several times faster than the parser
/// parses them, so a short lead is enough, and keeps a mapping that
/// releases its parsed pages small (16 MiB behind the parser, this much
/// ahead).
const AHEAD: usize = 4 << 20;

/// Bytes mapped per `madvise` call: 1 MiB.
const STEP: usize = 1 << 20;

/// How often the parser reports its position: every 512 KiB it advances.
const REPORT_EVERY: usize = 512 << 10;

/// What the parser and the helper share.
struct Shared {
    /// The helper maps pages from this offset (the parser's position: a
    /// parser that jumps ahead, such as a parallel read handing over to
    /// the sequential one, leaves the pages it skipped alone)...
    from: AtomicUsize,
    /// ... up to this one.
    limit: AtomicUsize,
    /// Set when the reader is dropped.
    stop: AtomicBool,
}

/// The helper thread of one mapping. Dropping it stops and joins the
/// thread; the mapping must outlive it (`Mapped` declares it first, so it
/// is dropped first).
pub(crate) struct FaultAhead {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Report the parser's position again once it reaches this offset.
    next_report: usize,
}

impl FaultAhead {
    /// Starts a thread that maps the pages of the `len` bytes at `base`
    /// from offset `from` on, up to [`AHEAD`] bytes past `from` until told
    /// more. `None` when no thread could be started (the parser then takes
    /// the faults itself, as without this).
    ///
    /// # Safety
    ///
    /// `base..base + len` must be a private read-only file mapping, with
    /// `base` page-aligned, that stays mapped until the returned value is
    /// dropped.
    pub(crate) unsafe fn start(base: *const u8, len: usize, from: usize) -> Option<FaultAhead> {
        let shared = Arc::new(Shared {
            from: AtomicUsize::new(from),
            limit: AtomicUsize::new(from.saturating_add(AHEAD)),
            stop: AtomicBool::new(false),
        });
        let theirs = Arc::clone(&shared);
        // A raw pointer is not `Send`; its address is.
        let addr = base as usize;
        let thread = std::thread::Builder::new()
            .name("fastcsv-fault-ahead".into())
            .spawn(move || populate(addr, len, from, &theirs))
            .ok()?;
        Some(FaultAhead { shared, thread: Some(thread), next_report: from + REPORT_EVERY })
    }

    /// The parser is at `offset`: let the helper map up to [`AHEAD`] past
    /// it. Cheap when called often (a comparison, and a store and a wake-up
    /// every [`REPORT_EVERY`] bytes).
    #[inline]
    pub(crate) fn at(&mut self, offset: usize) {
        if offset >= self.next_report {
            self.next_report = offset.saturating_add(REPORT_EVERY);
            self.raise(offset, offset.saturating_add(AHEAD));
        }
    }

    /// The parser is at `offset`: let the helper map everything from there
    /// to the end (for a pass that reports no position until it ends, such
    /// as counting records).
    pub(crate) fn all(&mut self, offset: usize) {
        self.next_report = usize::MAX;
        self.raise(offset, usize::MAX);
    }

    fn raise(&self, from: usize, limit: usize) {
        self.shared.from.fetch_max(from, Ordering::Release);
        self.shared.limit.fetch_max(limit, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
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

/// The helper's loop: map pages in `STEP`s from `from` up to the limit,
/// park when there, end at the end of the mapping, on `stop`, or when the
/// kernel refuses (a kernel without `MADV_POPULATE_READ` says `EINVAL`; a
/// file truncated under the mapping, `EFAULT`: the parser then finds the
/// missing pages itself and reports the change).
fn populate(addr: usize, len: usize, from: usize, shared: &Shared) {
    let page = super::page_size();
    let mut done = from & !(page - 1);
    while done < len {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        done = done.max(shared.from.load(Ordering::Acquire) & !(page - 1));
        let limit = shared.limit.load(Ordering::Acquire).min(len);
        if done >= limit {
            // Woken by `raise` or `drop` (or spuriously): look again.
            std::thread::park();
            continue;
        }
        // Whole pages (but the mapping's last), so that `done` stays
        // page-aligned, as `madvise` wants.
        let n = ((STEP.min(limit - done) + page - 1) & !(page - 1)).min(len - done);
        // SAFETY: `addr + done .. addr + done + n` lies inside the mapping
        // (`done + n <= len`), which the owner keeps mapped until it has
        // joined this thread; `done` is page-aligned (offsets rounded down,
        // plus whole pages) and so is the mapping's start. Populating
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
