//! Mapping a mapped file's pages in ahead of a counting pass, on a helper
//! thread (Linux: `MADV_POPULATE_READ`, kernel 5.14 or later).
//!
//! Parsing a freshly mapped file takes a page fault every few pages (the
//! kernel maps 64 KiB around each fault). Counting the records of the 1 GiB
//! text file over a fresh mapping took 0.328 s against 0.219 s over one
//! already faulted in (`docs/BENCHMARKS.md`, 2026-12-02 12:03 UTC): the
//! faults were a third of the count. A helper thread that asks the kernel
//! to map the rest of the file while the parser counts takes those faults
//! on another core, as the buffered source's read-ahead thread takes the
//! `read()` copies; the count then ran as fast as over the faulted-in
//! mapping (0.250 s against 0.247 s, 12:38 UTC). Only counting uses it: a
//! pass that hands out rows releases the pages behind it (see
//! `Mapped::release_before`), which a helper mapping the whole file would
//! defeat, and reading every field with a helper kept 4 MiB ahead of the
//! parser was no faster beyond the noise (0.716 s against 0.703 s without,
//! medians of 6 rounds in a slow phase).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes mapped per `madvise` call (the helper looks for `stop` between
/// calls): 2 MiB.
const STEP: usize = 2 << 20;

/// The helper thread of one mapping. Dropping it stops and joins the
/// thread; the mapping must outlive it (`Mapped` declares it first, so it
/// is dropped first).
pub(crate) struct FaultAhead {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FaultAhead {
    /// Starts a thread that maps the pages of the `len` bytes at `base`
    /// from offset `from` to the end. `None` when no thread could be
    /// started (the parser then takes the faults itself, as without this).
    ///
    /// # Safety
    ///
    /// `base..base + len` must be a private read-only file mapping, with
    /// `base` page-aligned, that stays mapped until the returned value is
    /// dropped.
    pub(crate) unsafe fn start(base: *const u8, len: usize, from: usize) -> Option<FaultAhead> {
        let stop = Arc::new(AtomicBool::new(false));
        let theirs = Arc::clone(&stop);
        // A raw pointer is not `Send`; its address is.
        let addr = base as usize;
        let thread = std::thread::Builder::new()
            .name("fastcsv-fault-ahead".into())
            .spawn(move || populate(addr, len, from, &theirs))
            .ok()?;
        Some(FaultAhead { stop, thread: Some(thread) })
    }
}

impl Drop for FaultAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            // The thread ends after the `madvise` in progress (at most
            // `STEP` bytes of page-table updates); it cannot panic but
            // for a bug, which the join then swallows rather than
            // unwinding through a drop.
            let _ = t.join();
        }
    }
}

/// The helper's loop: map pages in `STEP`s from `from` to `len`; end
/// there, on `stop`, or when the kernel refuses (a kernel without
/// `MADV_POPULATE_READ` says `EINVAL`; a file truncated under the mapping,
/// `EFAULT`: the parser then finds the missing pages itself and reports
/// the change).
fn populate(addr: usize, len: usize, from: usize, stop: &AtomicBool) {
    let page = super::page_size();
    let mut done = from & !(page - 1);
    while done < len && !stop.load(Ordering::Acquire) {
        let n = STEP.min(len - done);
        // SAFETY: `addr + done .. addr + done + n` lies inside the mapping
        // (`done + n <= len`), which the owner keeps mapped until it has
        // joined this thread; `done` is page-aligned (`from` rounded down,
        // plus whole `STEP`s) and so is the mapping's start. Populating
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
