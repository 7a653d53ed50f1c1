//! Surviving truncation of a mapped file.
//!
//! BE ADVISED: this file installs a process-wide signal handler. Read this
//! before changing it.
//!
//! # The hazard
//!
//! When another process truncates a file that we have mapped, the pages of
//! the mapping past the new end of file no longer have anything behind
//! them, and the first access to one raises `SIGBUS`. The default action
//! kills the process. Buffered reading has no such hazard: `read()` simply
//! returns fewer bytes.
//!
//! # The approach
//!
//! * Every live [`Mapped`](super::Mapped) registers its address range in a
//!   small, fixed, lock-free registry ([`REGISTRY`], [`SLOTS`] entries). A
//!   mapping that cannot get a slot is not used: the reader falls back to
//!   buffered reading ([`SourceReason::MapFailed`](crate::SourceReason)).
//! * The first registration installs, once per process, a `SIGBUS` handler
//!   with `sigaction(SA_SIGINFO | SA_ONSTACK)`, after saving the previous
//!   action.
//! * The handler looks up `si_addr` in the registry. If the address lies in
//!   a registered mapping, it maps anonymous zero-filled memory
//!   (`mmap(MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE)`) over the faulting page
//!   *and the rest of that mapping*, sets the mapping's `changed` flag and
//!   returns: the faulting load is restarted and reads zeros. One fault per
//!   truncation, not one per page.
//! * Otherwise the fault is not ours: the handler calls the previous
//!   handler (Rust's own stack-overflow handler, or the application's), or,
//!   if there was none, restores the default action and returns, so that
//!   the restarted access kills the process exactly as before.
//! * The reader checks the flag (one relaxed atomic load per record, after a
//!   compiler fence) before it hands out a record, and compares the file's
//!   current size with the mapping's length before it reports the end. Either
//!   one turns into [`ErrorKind::FileChanged`](crate::ErrorKind::FileChanged).
//!
//! # Limits
//!
//! * `mmap` is not on POSIX's list of async-signal-safe functions. On Linux,
//!   glibc's and musl's `mmap` are thin wrappers around the system call (no
//!   locks, no allocation), which is what makes calling it here sound in
//!   practice; `errno` is saved and restored around it. This module is
//!   compiled on Linux only; elsewhere mapped files are not protected (and
//!   the documentation of [`SourceChoice`](crate::SourceChoice) says so).
//! * A rewrite in place (same size, or truncated and written again before
//!   we reach the affected pages) raises no signal and is not detected; the
//!   parser then sees the new bytes, which is memory-safe for a parser that
//!   validates every byte it reads.
//! * The kernel also raises `SIGBUS` when it cannot read a mapped page
//!   (an I/O error, a network filesystem gone away); that is reported the
//!   same way, as `FileChanged`.
//! * A row already handed out may read zeros if the file is truncated while
//!   the caller still holds it; the next call to the reader reports it.
//! * If the application later installs its own `SIGBUS` handler without
//!   chaining to ours, faults in mappings are no longer survived.
//! * Mappings live at most as long as their owner (a reader, or the
//!   splitter's one pass over a file, `source::map_path`), and faults come
//!   only from the threads that owner uses (the splitter's workers are
//!   scoped: they have ended before its mapping is dropped), so a fault can
//!   never race with the removal of its own registration.

use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// How many mappings may be live at once. A mapping beyond this falls back
/// to buffered reading.
pub(crate) const SLOTS: usize = 64;

const FREE: u8 = 0;
const BUSY: u8 = 1;
const LIVE: u8 = 2;

struct Slot {
    state: AtomicU8,
    /// A sequence lock over `start` and `end`: odd while they are being
    /// written, so that the handler never acts on a range torn between two
    /// registrations.
    seq: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    changed: AtomicBool,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            state: AtomicU8::new(FREE),
            seq: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            changed: AtomicBool::new(false),
        }
    }
}

/// The registry of live mappings. Writers claim a slot with a CAS
/// (`FREE → BUSY`), fill it in under the slot's sequence lock, and publish
/// it with a release store of `LIVE`; the handler reads only `LIVE` slots
/// whose sequence number is even and unchanged across its reads.
static REGISTRY: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];

/// The `SIGBUS` action that was in place before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
/// Page size, read once outside the handler (`sysconf` is not
/// async-signal-safe).
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A live mapping's entry in the registry; removing it on drop.
pub(crate) struct Registration {
    idx: usize,
}

impl Registration {
    /// Registers `[start, start + len)`. `None` when the handler could not
    /// be installed or every slot is taken; the caller then must not use
    /// the mapping.
    pub(crate) fn new(start: *const u8, len: usize) -> Option<Registration> {
        install();
        if !INSTALLED.load(Ordering::Acquire) {
            return None;
        }
        for (idx, slot) in REGISTRY.iter().enumerate() {
            if slot.state.compare_exchange(FREE, BUSY, Ordering::Acquire, Ordering::Relaxed).is_ok()
            {
                let start = start as usize;
                slot.seq.fetch_add(1, Ordering::Relaxed);
                fence(Ordering::Release);
                slot.start.store(start, Ordering::Relaxed);
                slot.end.store(start.saturating_add(len), Ordering::Relaxed);
                slot.changed.store(false, Ordering::Relaxed);
                slot.seq.fetch_add(1, Ordering::Release);
                slot.state.store(LIVE, Ordering::Release);
                return Some(Registration { idx });
            }
        }
        None
    }

    /// True once a page of this mapping has been replaced by zeros because
    /// the file shrank under it.
    #[inline]
    pub(crate) fn changed(&self) -> bool {
        // The flag is written by a signal handler running on this thread,
        // in the middle of an earlier load from the mapping. The fence
        // keeps the compiler from moving this load before those loads.
        compiler_fence(Ordering::SeqCst);
        REGISTRY[self.idx].changed.load(Ordering::Relaxed)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        REGISTRY[self.idx].state.store(FREE, Ordering::Release);
    }
}

/// Installs the handler once per process.
fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE_SIZE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: an all-zero `sigaction` is a valid value (SIG_DFL, empty
        // mask, no flags).
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only queries the current one into `old`,
        // a valid, writable `sigaction`.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
            return;
        }
        let _ = PREVIOUS.set(old);
        // SAFETY: as above, all-zero is a valid `sigaction`.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        let h: Handler = handler;
        new.sa_sigaction = h as libc::sighandler_t;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `new.sa_mask` is a valid `sigset_t` to initialise.
        unsafe { libc::sigemptyset(&mut new.sa_mask) };
        // SAFETY: `new` is fully initialised and `handler` has the
        // signature `SA_SIGINFO` requires; it only touches atomics, calls
        // async-signal-safe functions (and `mmap`, see the module docs) and
        // chains to the saved action.
        if unsafe { libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) } == 0 {
            INSTALLED.store(true, Ordering::Release);
        }
    });
}

/// The signature of an `SA_SIGINFO` handler.
type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// The `SIGBUS` handler. See the module documentation.
extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for an SA_SIGINFO handler;
    // for SIGBUS `si_addr` is the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in &REGISTRY {
        if slot.state.load(Ordering::Acquire) != LIVE {
            continue;
        }
        let seq = slot.seq.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Relaxed);
        let end = slot.end.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let stable = seq % 2 == 0
            && slot.seq.load(Ordering::Relaxed) == seq
            && slot.state.load(Ordering::Relaxed) == LIVE;
        if !stable || addr < start || addr >= end {
            continue;
        }
        let page = PAGE_SIZE.load(Ordering::Relaxed);
        let from = addr & !(page - 1);
        let len = end - from;
        // SAFETY: `__errno_location` returns this thread's errno, which we
        // save and restore so the interrupted code never sees our mmap's.
        let errno = unsafe { *libc::__errno_location() };
        // SAFETY: `[from, end)` lies inside a mapping that this crate owns
        // (registered and not yet unmapped: its reader is the code that just
        // faulted on this thread). Replacing it with private anonymous
        // memory of the same protection only changes what those bytes read
        // as; the reader learns about it through `changed`.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
        if p == libc::MAP_FAILED {
            break;
        }
        slot.changed.store(true, Ordering::Relaxed);
        return;
    }
    chain(sig, info, ctx);
}

/// Passes a fault that is not ours to the previous action.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if let Some(prev) = PREVIOUS.get() {
        let h = prev.sa_sigaction;
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            if prev.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous action was installed with SA_SIGINFO,
                // so `h` is a handler of this signature.
                let f: Handler = unsafe { std::mem::transmute::<libc::sighandler_t, Handler>(h) };
                f(sig, info, ctx);
            } else {
                // SAFETY: without SA_SIGINFO the handler takes the signal
                // number only.
                let f = unsafe {
                    std::mem::transmute::<libc::sighandler_t, extern "C" fn(libc::c_int)>(h)
                };
                f(sig);
            }
            return;
        }
    }
    // No handler before ours: restore the default action and return. The
    // faulting access is restarted and the kernel then kills the process
    // with SIGBUS, as if we had never been installed.
    // SAFETY: an all-zero sigaction is SIG_DFL with an empty mask;
    // `sigaction` is async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_claims_and_frees_slots() {
        let data = [0u8; 16];
        let a = Registration::new(data.as_ptr(), data.len()).unwrap();
        let b = Registration::new(data.as_ptr(), data.len()).unwrap();
        assert_ne!(a.idx, b.idx);
        assert!(!a.changed());
        let idx = a.idx;
        drop(a);
        assert_eq!(REGISTRY[idx].state.load(Ordering::Acquire), FREE);
    }
}
