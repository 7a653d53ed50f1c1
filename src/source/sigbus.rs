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
//! * The first registration installs a `SIGBUS` handler with
//!   `sigaction(SA_SIGINFO | SA_ONSTACK | SA_NODEFER)`, after saving the
//!   previous action. Every later registration, and the reader every
//!   [`CHECK_EVERY`] bytes of a mapping, checks that it is still the one in
//!   place and puts it back in front if not (see "Other handlers" below).
//! * The handler looks up `si_addr` in the registry. If the address lies in
//!   a registered mapping, it maps anonymous zero-filled memory
//!   (`mmap(MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE)`) over the faulting page
//!   *and the rest of that mapping*, sets the mapping's `changed` flag and
//!   returns: the faulting load is restarted and reads zeros. One fault per
//!   truncation, not one per page.
//! * Otherwise the fault is not ours: the handler calls the previous
//!   handler (Rust's own stack-overflow handler, or the application's), or,
//!   if there was none, restores the default action and returns, so that
//!   the restarted access kills the process exactly as before (a signal
//!   sent by a process is sent again, to take the default action). Only faults
//!   raised by the kernel (`si_code > 0`) are looked up: a signal sent by a
//!   process carries a pid where a fault carries its address.
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
//! * A `SIGBUS` that the process sends itself (`kill`, `raise`) while one
//!   of our mappings is live is taken for a forwarded fault and dropped
//!   (see below); one sent by another process is passed on as before.
//! * A handler installed after ours that neither chains to the previous
//!   action nor forwards with `raise` (it ends the process itself, say)
//!   still wins until the next check puts ours back in front.
//! * Mappings live at most as long as their owner (a reader, or the
//!   splitter's one pass over a file, `source::map_path`), and faults come
//!   only from the threads that owner uses (the splitter's workers are
//!   scoped: they have ended before its mapping is dropped), so a fault can
//!   never race with the removal of its own registration.
//! * At most [`MAX_PREVIOUS`] actions are recorded to chain to; past that,
//!   a handler found in front of ours keeps its place.
//!
//! # Other handlers
//!
//! Other code may install a `SIGBUS` handler after ours. The common case is
//! CPython's `faulthandler.enable()` (also run by pytest and `-X
//! faulthandler`): its handler, installed with `SA_NODEFER`, writes the
//! Python traceback, puts back the action it replaced (ours), and calls
//! `raise(SIGBUS)` to reach it. That signal is sent by the process itself,
//! so it has no fault address, and before this module knew of it, it was
//! passed on to the action before ours (the default) and the process died
//! although the fault was in one of our mappings. Two measures cover it,
//! both needed: the first keeps faults from reaching such a handler at
//! all (no false "fatal error" report), but cannot close the window
//! between that handler's installation and the next check; the second
//! closes it, at the price of that report:
//!
//! * *Put back in front.* Each new mapping and every [`CHECK_EVERY`] bytes
//!   of mapped reading, [`keep_in_front`] reads the current action with
//!   `sigaction(SIGBUS, NULL, &cur)` (one system call) and, if it is not
//!   ours, records it as the next action to chain to and installs ours
//!   again. A fault then reaches us first and is survived silently; one
//!   that is not ours goes to that handler, which still writes its report.
//! * *A forwarded fault repeats.* If a fault reaches the other handler
//!   before such a check (it was installed a moment before the truncation),
//!   that handler forwards it to us with `raise`: a `SIGBUS` with `si_code`
//!   `SI_TKILL` or `SI_USER` from our own pid. While any of our mappings is
//!   live, the handler returns without doing anything: when the other
//!   handler returns in turn, the faulting load runs again and faults
//!   again, now with its address, and reaches the handler in place, which
//!   is ours again (faulthandler put it back) or one that forwards again.
//!   If the fault is ours it is survived (faulthandler has written a
//!   "Fatal Python error: Bus error" report that turns out not to be
//!   fatal); if not, it is chained as below and ends the process.
//!
//! Chaining must not loop: a handler installed after ours (faulthandler)
//! forwards by `raise` to the action it replaced, which is ours, so when we
//! chain a foreign fault to it, the forwarded signal comes straight back.
//! The actions we chain to form a stack ([`PREVIOUS`]: the action before our
//! first installation, then each one found in front of ours); while this
//! thread runs the handler at depth `k` of that stack ([`CHAINING`]), a
//! signal the process sent itself is taken as that handler forwarding to
//! its predecessor and is chained to depth `k - 1`, and below depth 0 to
//! the default action. Our handler is installed with `SA_NODEFER` so that
//! such a forwarded signal arrives at once, while the chaining state is
//! still set, rather than after our handler returns.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{
    compiler_fence, fence, AtomicBool, AtomicI32, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::{Mutex, Once, PoisonError};

/// How many mappings may be live at once. A mapping beyond this falls back
/// to buffered reading.
pub(crate) const SLOTS: usize = 64;

/// How often (in bytes of a mapping read) the reader checks that our
/// handler is still the one in place ([`keep_in_front`]).
pub(crate) const CHECK_EVERY: usize = 1 << 20;

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

/// How many actions [`PREVIOUS`] can hold; once full, our handler is no
/// longer put back in front (the one in front keeps its place).
const MAX_PREVIOUS: usize = 16;

/// The actions to chain to, oldest first: the one in place before our
/// first installation, then each one [`keep_in_front`] found in front of
/// ours. Append-only: an entry is written once, before `count` publishes
/// it, and never again, so the handler reads it without a lock.
struct Previous {
    actions: [UnsafeCell<MaybeUninit<libc::sigaction>>; MAX_PREVIOUS],
    count: AtomicUsize,
}

// SAFETY: an entry is written only by `keep_in_front`, under `FRONT`, and
// only while it is not yet published (`index >= count`); it is published
// with a release store of `count` and read only at indices below an
// acquired `count`. So no entry is ever read while it is written.
unsafe impl Sync for Previous {}

static PREVIOUS: Previous = Previous {
    actions: [const { UnsafeCell::new(MaybeUninit::uninit()) }; MAX_PREVIOUS],
    count: AtomicUsize::new(0),
};

impl Previous {
    /// The action at depth `k` (a copy), if published.
    fn get(&self, k: usize) -> Option<libc::sigaction> {
        if k >= self.count.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: entries below the acquired `count` are initialised and
        // never written again (see the `Sync` impl).
        Some(unsafe { (*self.actions[k].get()).assume_init() })
    }

    /// Appends `a` (caller holds `FRONT`); false when full.
    fn push(&self, a: libc::sigaction) -> bool {
        let n = self.count.load(Ordering::Relaxed);
        if n >= MAX_PREVIOUS {
            return false;
        }
        // SAFETY: entry `n` is unpublished (`n == count`) and only this
        // thread, holding `FRONT`, writes entries.
        unsafe { (*self.actions[n].get()).write(a) };
        self.count.store(n + 1, Ordering::Release);
        true
    }
}

/// How many threads may chain a signal at once (see [`CHAINING`]); a
/// thread beyond this one chains straight to the default action.
const CHAIN_SLOTS: usize = 8;

/// Per thread that is running a chained handler: its thread id (0: free)
/// and the depth in [`PREVIOUS`] of the handler it runs.
static CHAINING: [(AtomicI32, AtomicUsize); CHAIN_SLOTS] =
    [const { (AtomicI32::new(0), AtomicUsize::new(0)) }; CHAIN_SLOTS];

/// Serialises installing and [`keep_in_front`] (never taken by the
/// handler).
static FRONT: Mutex<()> = Mutex::new(());
/// Page size, read once outside the handler (`sysconf` is not
/// async-signal-safe).
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
static PAGE_ONCE: Once = Once::new();
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
        keep_in_front();
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

/// Makes sure our handler is the `SIGBUS` action in place: installs it the
/// first time; later, if another action has replaced it (see "Other
/// handlers" in the module documentation), records that action as the
/// next one to chain to and installs ours in front of it again. One
/// `sigaction` query when nothing changed.
pub(crate) fn keep_in_front() {
    PAGE_ONCE.call_once(|| {
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE_SIZE.store(page as usize, Ordering::Relaxed);
        }
    });
    let _g = FRONT.lock().unwrap_or_else(PoisonError::into_inner);
    // SAFETY: an all-zero `sigaction` is a valid value (SIG_DFL, empty
    // mask, no flags).
    let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries the current one into `cur`,
    // a valid, writable `sigaction`.
    if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut cur) } != 0 {
        return;
    }
    let h: Handler = handler;
    if cur.sa_sigaction == h as libc::sighandler_t {
        return;
    }
    // Not ours (or not yet): chain to it from now on. When the stack is
    // full, the action in front keeps its place.
    if !PREVIOUS.push(cur) {
        return;
    }
    // SAFETY: as above, all-zero is a valid `sigaction`.
    let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
    new.sa_sigaction = h as libc::sighandler_t;
    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
    // SAFETY: `new.sa_mask` is a valid `sigset_t` to initialise.
    unsafe { libc::sigemptyset(&mut new.sa_mask) };
    // SAFETY: `new` is fully initialised and `handler` has the signature
    // `SA_SIGINFO` requires; it only touches atomics, calls
    // async-signal-safe functions (and `mmap`, see the module docs) and
    // chains to the recorded actions.
    if unsafe { libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) } == 0 {
        INSTALLED.store(true, Ordering::Release);
    }
}

/// The signature of an `SA_SIGINFO` handler.
type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// The `SIGBUS` handler. See the module documentation.
extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    if code > 0 {
        // A fault: `si_addr` is the faulting address.
        // SAFETY: as above; for a fault the union holds the address.
        let addr = unsafe { (*info).si_addr() } as usize;
        if zero_fill(addr) {
            return;
        }
        let top = PREVIOUS.count.load(Ordering::Acquire);
        chain(sig, info, ctx, top.checked_sub(1), code);
        return;
    }
    // Sent by a process (`kill`, `raise`, `sigqueue`).
    // SAFETY: gettid has no preconditions and is async-signal-safe.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
    if let Some(depth) = chaining_depth(tid) {
        // A handler we chained to forwards to its predecessor by `raise`:
        // go one step down the stack instead of back to it.
        chain(sig, info, ctx, depth.checked_sub(1), code);
        return;
    }
    // SAFETY: for SI_USER and SI_TKILL the union holds the sender's pid;
    // getpid is async-signal-safe.
    let from_self = matches!(code, libc::SI_USER | libc::SI_TKILL)
        && unsafe { (*info).si_pid() } == unsafe { libc::getpid() };
    if from_self && any_live() {
        // A handler in front of ours forwarding a fault: the faulting load
        // runs again when it returns and reaches us with its address.
        return;
    }
    let top = PREVIOUS.count.load(Ordering::Acquire);
    chain(sig, info, ctx, top.checked_sub(1), code);
}

/// If `addr` lies in a registered mapping: maps zeros over its page and the
/// rest of that mapping, sets the mapping's flag, and returns true.
fn zero_fill(addr: usize) -> bool {
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
            return false;
        }
        slot.changed.store(true, Ordering::Relaxed);
        return true;
    }
    false
}

/// Whether any mapping is registered.
fn any_live() -> bool {
    REGISTRY.iter().any(|s| s.state.load(Ordering::Acquire) != FREE)
}

/// The depth of the handler thread `tid` is running through [`chain`].
fn chaining_depth(tid: i32) -> Option<usize> {
    CHAINING
        .iter()
        .find(|(t, _)| t.load(Ordering::Acquire) == tid)
        .map(|(_, d)| d.load(Ordering::Relaxed))
}

/// Passes a signal that is not ours to the action at `depth` in
/// [`PREVIOUS`] (`None`: below the first, the default action).
fn chain(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
    depth: Option<usize>,
    code: libc::c_int,
) {
    let prev = depth.and_then(|k| Some((k, PREVIOUS.get(k)?)));
    if let Some((k, prev)) = prev {
        let h = prev.sa_sigaction;
        if h == libc::SIG_IGN && code <= 0 {
            return; // a sent signal, ignored as before us
        }
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
            let Some(mark) = ChainMark::set(tid, k) else {
                // No room to tell a forwarded signal from a new one: the
                // default action rather than a possible loop.
                return default_action(sig, code);
            };
            if prev.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the action was installed with SA_SIGINFO, so `h`
                // is a handler of this signature.
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
            drop(mark);
            return;
        }
    }
    default_action(sig, code)
}

/// No handler to chain to: restores the default action. A fault (`code >
/// 0`) then returns: the faulting access is restarted and the kernel kills
/// the process with `SIGBUS`, as if we had never been installed. A sent
/// signal is sent again, to take its default action now.
fn default_action(sig: libc::c_int, code: libc::c_int) {
    // SAFETY: an all-zero sigaction is SIG_DFL with an empty mask;
    // `sigaction` and `raise` are async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        if code <= 0 {
            libc::raise(sig);
        }
    }
}

/// This thread's entry in [`CHAINING`] while it runs a chained handler;
/// puts back what was there (an outer depth, or nothing) on drop.
struct ChainMark {
    slot: usize,
    outer: Option<usize>,
}

impl ChainMark {
    fn set(tid: i32, depth: usize) -> Option<ChainMark> {
        if let Some(slot) = CHAINING.iter().position(|(t, _)| t.load(Ordering::Acquire) == tid) {
            let outer = CHAINING[slot].1.swap(depth, Ordering::Relaxed);
            return Some(ChainMark { slot, outer: Some(outer) });
        }
        for (slot, (t, d)) in CHAINING.iter().enumerate() {
            // Only this thread reads its own entry's depth, so the depth
            // may follow the claim.
            if t.compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                d.store(depth, Ordering::Relaxed);
                return Some(ChainMark { slot, outer: None });
            }
        }
        None
    }
}

impl Drop for ChainMark {
    fn drop(&mut self) {
        let (t, d) = &CHAINING[self.slot];
        match self.outer {
            Some(outer) => d.store(outer, Ordering::Relaxed),
            None => t.store(0, Ordering::Release),
        }
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

    /// The action a forwarding handler replaced (ours).
    static FORWARDED_TO: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    static FORWARDS: AtomicUsize = AtomicUsize::new(0);

    /// What CPython's `faulthandler` does on a fatal signal: put back the
    /// action it replaced and `raise` the signal again.
    extern "C" fn forwarder(sig: libc::c_int) {
        FORWARDS.fetch_add(1, Ordering::Relaxed);
        if let Some(&old) = FORWARDED_TO.get() {
            // SAFETY: `old` points to a leaked, initialised `sigaction`;
            // `sigaction` and `raise` are async-signal-safe.
            unsafe {
                libc::sigaction(sig, old as *const libc::sigaction, std::ptr::null_mut());
                libc::raise(sig);
            }
        }
    }

    /// In a child process (this test binary again, as the crash would
    /// take the test run with it): a forwarding handler installed after
    /// the first mapping, then the file truncated under the reader. The
    /// reader must report `FileChanged`, and the process live.
    #[test]
    fn a_handler_installed_after_ours_that_forwards_by_raise() {
        const CHILD: &str = "FASTCSV_SIGBUS_FORWARDER_CHILD";
        if let Some(path) = std::env::var_os(CHILD) {
            let path = std::path::PathBuf::from(path);
            let mut rdr = crate::ReaderBuilder::new()
                .source(crate::SourceChoice::Mmap)
                .from_path(&path)
                .unwrap();
            assert_eq!(rdr.source_kind(), crate::SourceKind::Mapped);
            for _ in 0..10 {
                rdr.read_row().unwrap().unwrap();
            }
            // SAFETY: all-zero is a valid `sigaction`; the old action is
            // leaked so that the handler can read it at any time.
            unsafe {
                let old: &'static mut libc::sigaction = Box::leak(Box::new(std::mem::zeroed()));
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = forwarder as extern "C" fn(libc::c_int) as libc::sighandler_t;
                new.sa_flags = libc::SA_NODEFER;
                assert_eq!(libc::sigaction(libc::SIGBUS, &new, old), 0);
                FORWARDED_TO.set(old as *const libc::sigaction as usize).unwrap();
            }
            std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(1 << 20).unwrap();
            let e = loop {
                match rdr.read_row() {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("the cut file read as if whole"),
                    Err(e) => break e,
                }
            };
            assert!(matches!(e.kind(), crate::ErrorKind::FileChanged), "{e}");
            println!("FileChanged after {} forwards", FORWARDS.load(Ordering::Relaxed));
            return;
        }
        let path = std::env::temp_dir()
            .join(format!("fastcsv-sigbus-forwarder-{}.csv", std::process::id()));
        let row = b"12345,some text,more text,0.5\n";
        std::fs::write(&path, row.repeat((4 << 20) / row.len())).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "source::sigbus::tests::a_handler_installed_after_ours_that_forwards_by_raise",
            ])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, &path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{:?}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The fault went through the forwarder (the path under test).
        assert!(
            stdout.contains("FileChanged after") && !stdout.contains("after 0 forwards"),
            "{stdout}"
        );
    }
}
