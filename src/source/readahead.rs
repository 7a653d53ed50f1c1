//! The read-ahead source: a helper thread `read()`s the next chunks while
//! the reader parses the current one, so the kernel's copy into user
//! memory overlaps parsing instead of adding to it.
//!
//! ADVICE FOR HACKERS. The invariants:
//!
//! * **Same answers as the synchronous buffer.** [`ReadAhead`] behaves as a
//!   [`SyncBuffer`](super::buffer::SyncBuffer) of *logical capacity* `cap`
//!   would: `refill` drops `keep_from` bytes from the front, keeps the tail
//!   (the record in progress), doubles `cap` when the tail fills it, fails
//!   with `RecordTooLarge` when the tail fills `max`, and appends at most
//!   `cap - tail` new bytes. So `data().len() <= cap` always, and the
//!   reader sees the same records, errors and positions; only how many
//!   bytes arrive per refill differs (which the scanner does not see).
//! * **Where the bytes live.** Each ring buffer is `slack + chunk` bytes; the
//!   thread reads into `[slack, slack + chunk)`. On refill the tail is
//!   copied into the bytes just before the next unread byte (the slack of a
//!   fresh buffer, or already-parsed bytes of a partly used one), so data
//!   stays contiguous with one copy of the tail only. A tail longer than
//!   that room goes to an owned buffer (`cur_owned`), which new bytes are
//!   then copied into, until a tail fits a ring buffer again.
//! * **Messages arrive in read order,** one per `read()` call that returned
//!   data, then exactly one `Eof` or `Error`, after which the thread
//!   exits. An error is delivered at the first refill that needs bytes past
//!   those read before it, as the synchronous buffer reports it.
//!   `Interrupted` is retried on the thread.
//! * **Short reads are passed on at once**: one message per `read()`, so a
//!   pipe streams as the synchronous buffer does.
//! * **Few wake-ups.** Handing over a chunk must not cost a sleep and a
//!   wake-up each time (with 128 KiB chunks that is 8192 per GiB, and
//!   parsing and reading run at about the same speed when counting). The
//!   thread, once out of free buffers, sleeps until half of them are
//!   free and then reads them back to back; the parser, once out of filled
//!   buffers, polls for a short while ([`SPIN`]) before it sleeps. Both
//!   sides wake the other only when it sleeps.
//! * **Stopping.** Dropping [`ReadAhead`] marks the queue hung up and wakes
//!   the thread; the thread exits when it next looks at the queue (after
//!   the `read()` in progress, or at once if waiting), so it reads at most
//!   one more chunk. For regular files the drop then joins the
//!   thread (a read of a regular file finishes), so the descriptor is closed
//!   and the thread's CPU time is counted when the drop returns. A thread
//!   blocked reading a pipe or terminal is left detached: it exits when its
//!   `read()` returns.
//! * If you add a message kind, the thread must still end with exactly one
//!   of `Eof` or `Error`, and `refill` must still append nothing after one.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::buffer::{out_of_memory, zeroed};
use crate::error::{Error, ErrorKind, Result};

/// What the ring buffers of a reader may hold together: as many buffers as
/// fit, from [`RING_MIN`] to [`RING_MAX`] (32 of 128 KiB chunks with their
/// slack). A deep ring lets the thread run ahead through the parser's slow
/// moments (a record with many fields, a descheduled CPU) instead of
/// stopping; 32 buffers counted the 1 GiB text file in 0.30-0.34 s where 8
/// took 0.33-0.42 s (medians of 25 runs, docs/BENCHMARKS.md).
const RING_BYTES: usize = 6 << 20;

/// Fewest ring buffers: one held by the parser, one being filled.
const RING_MIN: usize = 2;

/// Most ring buffers, whatever the chunk size.
const RING_MAX: usize = 32;

/// How many ring buffers of `len` bytes a reader makes (at most).
fn ring_len(len: usize) -> usize {
    (RING_BYTES / len.max(1)).clamp(RING_MIN, RING_MAX)
}

/// How long the parser polls for the next chunk before it sleeps: about
/// what reading one 128 KiB chunk from the page cache takes.
const SPIN: Duration = Duration::from_micros(50);

/// Largest slack before each chunk. Tails (records in progress) up to this
/// long are copied into it; longer ones go to the owned buffer.
const MAX_SLACK: usize = 64 * 1024;

/// What the thread sends: a ring buffer with `n` bytes read at `slack`,
/// then the end.
enum Msg {
    Data(Vec<u8>, usize),
    Eof,
    Error(io::Error),
}

/// The queues between the parser and the thread.
struct Shared {
    state: Mutex<State>,
    /// Signalled when a message arrives while the parser sleeps.
    to_parser: Condvar,
    /// Signalled when `wake_at` buffers are free (or the parser hung up)
    /// while the thread sleeps.
    to_reader: Condvar,
    /// How many free buffers wake the thread: half the ring.
    wake_at: usize,
    /// `state.full.len()`, for the parser to poll without the lock.
    ready: AtomicUsize,
}

struct State {
    /// Filled ring buffers and the end, from the thread, in read order.
    full: VecDeque<Msg>,
    /// Parsed ring buffers, back to the thread, which takes the one given
    /// back first: its bytes have more likely left the parser's CPU cache
    /// than the last one's, so writing them does not first take the lines
    /// back from that cache (the count of the wide file 0.204-0.213 s
    /// against 0.219-0.234 s taking the last one, medians of 15 and 21
    /// runs).
    free: VecDeque<Vec<u8>>,
    parser_sleeps: bool,
    reader_sleeps: bool,
    /// The parser is gone: the thread stops.
    hung_up: bool,
    /// The thread has ended (after its last message, or by a panic).
    ended: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent queues (every
        // critical section is a push or a pop), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Marks the thread ended however it exits (a panic included), so that a
/// parser waiting for a message wakes up.
struct EndGuard(Arc<Shared>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.lock().ended = true;
        self.0.to_parser.notify_one();
    }
}

/// A ring buffer from the thread whose bytes `[pos, fill)` are not yet
/// appended to the data (only while the data is in the owned buffer).
struct Next {
    buf: Vec<u8>,
    pos: usize,
    fill: usize,
}

/// The read-ahead buffer; see the module documentation.
pub(crate) struct ReadAhead {
    shared: Arc<Shared>,
    /// The last message (`Eof` or `Error`) has been taken.
    finished: bool,
    thread: Option<JoinHandle<()>>,
    join_on_drop: bool,
    slack: usize,
    /// Where the data is: a ring buffer, or the owned buffer.
    cur: Vec<u8>,
    cur_owned: bool,
    /// `data()` is `cur[start..end]`.
    start: usize,
    end: usize,
    /// In a ring buffer, bytes `[end, fill)` were read but not yet appended
    /// (the logical capacity was reached).
    fill: usize,
    next: Option<Next>,
    /// The logical capacity (see the module documentation).
    cap: usize,
    max: usize,
    eof: bool,
}

impl ReadAhead {
    /// Starts the thread reading `rdr` in chunks of `size` bytes. Hands
    /// `rdr` back when the thread cannot be started.
    ///
    /// `join_on_drop`: wait for the thread when dropped (only for sources
    /// whose `read()` cannot block forever, i.e. regular files).
    pub(crate) fn spawn(
        rdr: Box<dyn Read + Send>,
        size: usize,
        max: usize,
        join_on_drop: bool,
    ) -> std::result::Result<ReadAhead, Box<dyn Read + Send>> {
        let size = size.max(1);
        let slack = size.min(MAX_SLACK);
        let ring = ring_len(slack.saturating_add(size));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                full: VecDeque::with_capacity(ring + 1),
                free: VecDeque::with_capacity(ring),
                parser_sleeps: false,
                reader_sleeps: false,
                hung_up: false,
                ended: false,
            }),
            to_parser: Condvar::new(),
            to_reader: Condvar::new(),
            wake_at: ring.div_ceil(2),
            ready: AtomicUsize::new(0),
        });
        // The source goes to the thread once it runs, so that a failed
        // spawn leaves it here to read synchronously.
        let (src_tx, src_rx) = mpsc::sync_channel::<Box<dyn Read + Send>>(1);
        let theirs = shared.clone();
        let spawned =
            std::thread::Builder::new().name("fastcsv-read-ahead".into()).spawn(move || {
                let guard = EndGuard(theirs);
                if let Ok(src) = src_rx.recv() {
                    fill_loop(src, &guard.0, slack, size, ring);
                }
            });
        let thread = match spawned {
            Ok(t) => t,
            Err(_) => return Err(rdr),
        };
        if let Err(e) = src_tx.send(rdr) {
            // The thread is alive until it receives: unreachable, but hand
            // the source back all the same.
            return Err(e.0);
        }
        Ok(ReadAhead {
            shared,
            finished: false,
            thread: Some(thread),
            join_on_drop,
            slack,
            cur: Vec::new(),
            cur_owned: true,
            start: 0,
            end: 0,
            fill: 0,
            next: None,
            cap: size,
            max: max.max(size),
            eof: false,
        })
    }

    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        &self.cur[self.start..self.end]
    }

    pub(crate) fn is_eof(&self) -> bool {
        self.eof
    }

    /// The logical capacity: what the synchronous buffer's size would be.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Drops `data()[..keep_from]`, keeps the rest at the front and appends
    /// what was read next; returns `keep_from`, or sets EOF when the source
    /// is exhausted.
    pub(crate) fn refill(&mut self, keep_from: usize) -> Result<usize> {
        debug_assert!(keep_from <= self.end - self.start);
        self.start += keep_from;
        let tail = self.end - self.start;
        if tail == self.cap {
            if self.cap >= self.max {
                return Err(Error::new(ErrorKind::RecordTooLarge { limit: self.max }));
            }
            self.cap = self.cap.saturating_mul(2).min(self.max);
        }
        let room = self.cap - tail;
        // Bytes already read into the current ring buffer come first.
        if !self.cur_owned && self.fill > self.end {
            self.end += (self.fill - self.end).min(room);
            return Ok(keep_from);
        }
        if self.next.is_none() {
            match self.receive()? {
                Some(next) => self.next = Some(next),
                None => {
                    self.eof = true;
                    return Ok(keep_from);
                }
            }
        }
        let Some(mut next) = self.next.take() else { unreachable!("`next` was just filled") };
        let take = (next.fill - next.pos).min(room);
        if tail <= next.pos {
            // The tail fits before the new bytes: move into that buffer.
            let at = next.pos - tail;
            next.buf[at..next.pos].copy_from_slice(&self.cur[self.start..self.end]);
            let old = std::mem::replace(&mut self.cur, next.buf);
            if !self.cur_owned {
                self.give_back(old);
            }
            self.cur_owned = false;
            (self.start, self.end, self.fill) = (at, next.pos + take, next.fill);
        } else {
            // A long tail: continue in the owned buffer.
            if self.cur_owned {
                self.cur.copy_within(self.start..self.end, 0);
            } else {
                let mut own = Vec::new();
                own.try_reserve_exact(self.cap).map_err(|_| out_of_memory(self.cap))?;
                own.extend_from_slice(&self.cur[self.start..self.end]);
                let old = std::mem::replace(&mut self.cur, own);
                self.give_back(old);
                self.cur_owned = true;
            }
            self.cur.truncate(tail);
            // The logical capacity may have doubled since the owned buffer
            // was made.
            self.cur.try_reserve(take).map_err(|_| out_of_memory(tail + take))?;
            self.cur.extend_from_slice(&next.buf[next.pos..next.pos + take]);
            (self.start, self.end, self.fill) = (0, tail + take, tail + take);
            next.pos += take;
            if next.pos < next.fill {
                self.next = Some(next);
            } else {
                self.give_back(next.buf);
            }
        }
        Ok(keep_from)
    }

    /// The next filled buffer from the thread, `None` at the end of input.
    fn receive(&mut self) -> Result<Option<Next>> {
        if self.finished {
            return Ok(None);
        }
        let sh = &*self.shared;
        // Poll a little before sleeping: the next chunk is usually close.
        if sh.ready.load(Ordering::Acquire) == 0 {
            let start = Instant::now();
            let mut k = 0u32;
            while sh.ready.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
                k += 1;
                if k.is_multiple_of(64) && start.elapsed() > SPIN {
                    break;
                }
            }
        }
        let msg = {
            let mut st = sh.lock();
            loop {
                if let Some(m) = st.full.pop_front() {
                    sh.ready.store(st.full.len(), Ordering::Release);
                    break Some(m);
                }
                if st.ended {
                    break None;
                }
                st.parser_sleeps = true;
                st = sh.to_parser.wait(st).unwrap_or_else(|e| e.into_inner());
                st.parser_sleeps = false;
            }
        };
        match msg {
            Some(Msg::Data(buf, n)) => {
                Ok(Some(Next { buf, pos: self.slack, fill: self.slack + n }))
            }
            Some(Msg::Eof) => {
                self.finished = true;
                Ok(None)
            }
            Some(Msg::Error(e)) => {
                self.finished = true;
                Err(e.into())
            }
            // The thread ended without a last message: it panicked.
            None => {
                self.finished = true;
                Err(io::Error::other("the read-ahead thread stopped").into())
            }
        }
    }

    /// Returns a parsed ring buffer to the thread, waking it when it sleeps
    /// and enough buffers are free.
    fn give_back(&self, buf: Vec<u8>) {
        if self.finished {
            return;
        }
        let mut st = self.shared.lock();
        st.free.push_back(buf);
        if st.reader_sleeps && st.free.len() >= self.shared.wake_at {
            st.reader_sleeps = false;
            drop(st);
            self.shared.to_reader.notify_one();
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Hang up: the thread stops when it next looks at the queue.
        self.shared.lock().hung_up = true;
        self.shared.to_reader.notify_one();
        if let Some(t) = self.thread.take() {
            if self.join_on_drop {
                let _ = t.join();
            }
        }
    }
}

/// The thread: fills free buffers (making up to `ring` of them) one
/// `read()` each, and queues them in order, until the end, an error, or the
/// parser hangs up.
fn fill_loop(mut src: Box<dyn Read + Send>, sh: &Shared, slack: usize, size: usize, ring: usize) {
    let mut made = 0;
    loop {
        let buf = {
            let mut st = sh.lock();
            loop {
                if st.hung_up {
                    return;
                }
                if let Some(b) = st.free.pop_front() {
                    break Ok(b);
                }
                if made < ring {
                    made += 1;
                    // A buffer that cannot be allocated ends the reading
                    // with an error, as a failed `read()` does.
                    break slack
                        .checked_add(size)
                        .ok_or_else(|| out_of_memory(usize::MAX))
                        .and_then(zeroed);
                }
                st.reader_sleeps = true;
                st = sh.to_reader.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        let msg = match buf {
            Err(e) => Msg::Error(e),
            Ok(mut buf) => loop {
                match src.read(&mut buf[slack..]) {
                    Ok(0) => break Msg::Eof,
                    Ok(n) => break Msg::Data(buf, n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => break Msg::Error(e),
                }
            },
        };
        let last = !matches!(msg, Msg::Data(..));
        let mut st = sh.lock();
        if st.hung_up {
            return;
        }
        st.full.push_back(msg);
        sh.ready.store(st.full.len(), Ordering::Release);
        if st.parser_sleeps {
            drop(st);
            sh.to_parser.notify_one();
        }
        if last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffer::SyncBuffer;
    use super::*;
    use std::collections::VecDeque;

    /// A scripted source: each step is a `read()` result (data is cut to
    /// the caller's buffer, the rest kept for the next call).
    struct Script(VecDeque<io::Result<Vec<u8>>>);

    impl Read for Script {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            match self.0.pop_front() {
                None => Ok(0),
                Some(Err(e)) => Err(e),
                Some(Ok(mut v)) => {
                    let n = v.len().min(out.len());
                    out[..n].copy_from_slice(&v[..n]);
                    if n < v.len() {
                        self.0.push_front(Ok(v.split_off(n)));
                    }
                    Ok(n)
                }
            }
        }
    }

    /// Random reads (with `Interrupted`s), sometimes ending in an error.
    /// Bytes below `seed % 64` end records, so records are short or long.
    fn script(seed: u64) -> Vec<io::Result<Vec<u8>>> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut steps = Vec::new();
        for _ in 0..(rnd() % 40) {
            if rnd() % 8 == 0 {
                steps.push(Err(io::Error::from(io::ErrorKind::Interrupted)));
            } else {
                let n = (rnd() % 300) as usize + 1;
                steps.push(Ok((0..n).map(|_| rnd() as u8).collect()));
            }
        }
        if seed.is_multiple_of(3) {
            steps.push(Err(io::Error::other("disk on fire")));
            steps.push(Ok(b"never read".to_vec()));
        }
        steps
    }

    fn copy(s: &[io::Result<Vec<u8>>]) -> VecDeque<io::Result<Vec<u8>>> {
        s.iter()
            .map(|r| match r {
                Ok(v) => Ok(v.clone()),
                Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
            })
            .collect()
    }

    /// What a reader would see: the records (ended by bytes below `t`),
    /// then how the input ended (EOF with the unended tail, or an error),
    /// and the final capacity.
    fn drive(
        data: &dyn Fn() -> Vec<u8>,
        refill: &mut dyn FnMut(usize) -> Result<usize>,
        eof: &dyn Fn() -> bool,
        cap: &dyn Fn() -> usize,
        t: u8,
    ) -> (Vec<Vec<u8>>, String, usize) {
        let mut records = Vec::new();
        for _ in 0..1_000_000 {
            let d = data();
            // Take the whole records, keep the one in progress.
            let mut from = 0;
            for (i, &b) in d.iter().enumerate() {
                if b < t {
                    records.push(d[from..=i].to_vec());
                    from = i + 1;
                }
            }
            if eof() {
                return (records, format!("eof, tail {:?}", &d[from..]), cap());
            }
            assert!(d.len() <= cap());
            match refill(from) {
                Ok(n) => assert_eq!(n, from),
                Err(e) => return (records, format!("error {e}"), cap()),
            }
        }
        panic!("no progress");
    }

    /// Driven the same way, both buffers deliver the same records, the
    /// same error (I/O or `RecordTooLarge`) after the same bytes, and
    /// reach the same capacity.
    #[test]
    fn same_records_errors_and_capacities_as_the_synchronous_buffer() {
        use std::cell::RefCell;
        for seed in 1..600u64 {
            let steps = script(seed);
            let size = [1, 2, 3, 7, 64, 100, 4096][(seed % 7) as usize];
            let max = if seed % 5 == 0 { size * 4 } else { usize::MAX };
            let t = (seed % 64) as u8 + 1;
            let a = RefCell::new(SyncBuffer::new(Box::new(Script(copy(&steps))), size, max));
            let want = drive(
                &|| a.borrow().data().to_vec(),
                &mut |k| a.borrow_mut().refill(k),
                &|| a.borrow().is_eof(),
                &|| a.borrow().capacity(),
                t,
            );
            let b = ReadAhead::spawn(Box::new(Script(copy(&steps))), size, max, true);
            let b = RefCell::new(b.ok().unwrap());
            let got = drive(
                &|| b.borrow().data().to_vec(),
                &mut |k| b.borrow_mut().refill(k),
                &|| b.borrow().is_eof(),
                &|| b.borrow().capacity(),
                t,
            );
            assert_eq!(got, want, "seed {seed}, size {size}, max {max}");
        }
    }

    struct Panics;

    impl Read for Panics {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            panic!("a source that panics (expected by the test)");
        }
    }

    #[test]
    fn a_panicking_source_is_an_error_not_a_hang() {
        let mut b = ReadAhead::spawn(Box::new(Panics), 16, usize::MAX, true).ok().unwrap();
        let e = b.refill(0).unwrap_err();
        assert!(e.to_string().contains("read-ahead thread stopped"), "{e}");
    }

    /// An endless source, counting its reads.
    struct Endless {
        reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            out.fill(b'x');
            Ok(out.len())
        }
    }

    #[test]
    fn dropping_stops_the_thread_after_at_most_a_few_reads() {
        use std::sync::atomic::Ordering;
        let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut b =
            ReadAhead::spawn(Box::new(Endless { reads: reads.clone() }), 16, usize::MAX, true)
                .ok()
                .unwrap();
        b.refill(0).unwrap();
        assert_eq!(b.data().len(), 16);
        drop(b);
        let n = reads.load(Ordering::SeqCst);
        // One per ring buffer plus the one in progress when the channel
        // closed; an endless source is not read to its end.
        assert!(n <= ring_len(32) + 2, "{n} reads");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(reads.load(Ordering::SeqCst), n, "the thread went on reading");
    }
}
