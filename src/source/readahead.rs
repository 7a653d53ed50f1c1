//! The read-ahead source: a helper thread reads the next chunks while the
//! reader parses the current one, so the kernel's copy into user memory
//! overlaps parsing instead of adding to it. For a regular file the parser
//! also shares the copying: when the next chunk is not there yet, it reads
//! a later one itself, at its offset, instead of waiting.
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
//! * **Where the bytes live.** Each ring buffer is `slack + chunk` bytes;
//!   a chunk is read into `[slack, slack + chunk)`. A chunk is at least
//!   [`MIN_READ`] bytes whatever `cap`: a small buffer size bounds what
//!   `refill` hands out, not the reads. On refill the tail is
//!   copied into the bytes just before the next unread byte (the slack of a
//!   fresh buffer, or already-parsed bytes of a partly used one), so data
//!   stays contiguous with one copy of the tail only. A tail longer than
//!   that room goes to an owned buffer (`cur_owned`), which new bytes are
//!   then copied into, until a tail fits a ring buffer again.
//! * **Chunks are delivered in the order they were claimed.** Whoever reads
//!   a chunk first claims the next sequence number (and, for a file, the
//!   next offset) under the lock, reads without it, and stores the result
//!   in that sequence's slot; the parser takes slots from the front only.
//! * **A stream** (pipe, terminal, any [`Read`]) is read by the thread
//!   alone, one chunk per `read()` call that returned data, then exactly
//!   one end (`Eof` or `Error`), after which the thread exits. Short reads
//!   are passed on at once, so a pipe streams as the synchronous buffer
//!   does. `Interrupted` is retried.
//! * **A file** ([`Input::At`]) is read with positioned reads (`pread`), so
//!   the thread and the parser can read different chunks at once. A chunk
//!   is read until full or until a read returns 0 (the end) or fails. A
//!   chunk that is not full (the end of the file, a file that grew or
//!   shrank while read, a failure after some bytes) makes every chunk
//!   claimed after it useless: when the parser takes it, it *resyncs*: the
//!   next claim reads from just after it, and a new *epoch* begins; chunks
//!   of an older epoch are dropped when they reach the front. So the bytes
//!   delivered are exactly those a sequence of `read()`s would have
//!   returned, and the end is a read that returned 0 at the next offset.
//!   Until that resync, a chunk that was not full *pauses* claiming, so
//!   nobody reads on past the end of a file.
//! * **Few wake-ups.** Handing over a chunk must not cost a sleep and a
//!   wake-up each time (with 128 KiB chunks that is 8192 per GiB). The
//!   thread, once out of free buffers, sleeps until half of them are free
//!   and then reads them back to back; the parser, when it cannot read a
//!   chunk itself, polls for a short while ([`SPIN`]) before it sleeps.
//!   Both sides wake the other only when it sleeps.
//! * **Stopping.** Dropping [`ReadAhead`] (or taking the end) marks the
//!   queue hung up and wakes the thread; the thread exits when it next
//!   looks at the queue (after the read in progress, or at once if
//!   waiting), so it reads at most one more chunk. For regular files the
//!   drop then joins the thread (a read of a regular file finishes), so
//!   the descriptor is closed and the thread's CPU time is counted when the
//!   drop returns. A thread blocked reading a pipe or terminal is left
//!   detached: it exits when its `read()` returns.
//! * If you add a message kind, a stream must still end with exactly one
//!   of `Eof` or `Error`, and `refill` must still append nothing after one.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::buffer::{out_of_memory, zeroed, MIN_READ};
use crate::error::{Error, ErrorKind, Result};

/// What the ring buffers of a reader may hold together: as many buffers as
/// fit, from [`RING_MIN`] to [`RING_MAX`] (32 of 128 KiB chunks with their
/// slack). A deep ring lets the thread run ahead through the parser's slow
/// moments (a record with many fields, a descheduled CPU) instead of
/// stopping (32 buffers against 8: docs/BENCHMARKS.md).
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

/// A source that reads at explicit offsets, from any thread (a regular
/// file: `pread`).
pub(crate) trait ReadAt: Send + Sync {
    /// Reads into `buf` from byte `offset`, as [`std::os::unix::fs::FileExt::read_at`].
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

/// What the read-ahead buffer reads.
pub(crate) enum Input {
    /// A stream, read by the thread alone.
    Stream(Box<dyn Read + Send>),
    /// A file read at offsets, by the thread and by the parser, from the
    /// given offset on.
    At(Arc<dyn ReadAt>, u64),
}

impl Input {
    /// The same bytes as one `Read`, for the synchronous buffer.
    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        match self {
            Input::Stream(r) => r,
            Input::At(src, offset) => Box::new(AtReader { src, offset }),
        }
    }
}

/// Reads a [`ReadAt`] in order from `offset`.
struct AtReader {
    src: Arc<dyn ReadAt>,
    offset: u64,
}

impl Read for AtReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// How a chunk's read ended: `n` bytes read into a ring buffer at `slack`,
/// or the end.
enum Msg {
    Data(Vec<u8>, usize),
    Eof,
    Error(io::Error),
}

/// A chunk read, with where it was read from (files only).
struct Chunk {
    epoch: u64,
    offset: u64,
    msg: Msg,
}

/// A claim on the next chunk: its sequence number, epoch and offset, and a
/// ring buffer to read it into (or the error allocating one).
struct Claim {
    seq: u64,
    epoch: u64,
    offset: u64,
    buf: io::Result<Vec<u8>>,
}

/// The queues between the parser and the thread.
struct Shared {
    state: Mutex<State>,
    /// Signalled when the front chunk arrives while the parser sleeps.
    to_parser: Condvar,
    /// Signalled when `wake_at` buffers are free, a resync ends a pause,
    /// or the parser hangs up, while the thread sleeps.
    to_reader: Condvar,
    /// How many free buffers wake the thread: half the ring.
    wake_at: usize,
    /// 1 when the front chunk is there, for the parser to poll without the
    /// lock.
    ready: AtomicUsize,
    /// How many ring buffers may be made.
    ring: usize,
    slack: usize,
    size: usize,
    /// Reading a file at offsets (see the module documentation).
    at: bool,
}

struct State {
    /// Claimed chunks in order, from sequence number `head`: `None` while
    /// being read.
    slots: VecDeque<Option<Chunk>>,
    head: u64,
    /// Parsed ring buffers. The thread takes the one given back first: its
    /// bytes have more likely left the parser's CPU cache than the last
    /// one's, so writing them does not first take the lines back from that
    /// cache (measured faster than taking the last one: docs/BENCHMARKS.md).
    /// The parser, which
    /// parses what it reads at once, takes the last one.
    free: VecDeque<Vec<u8>>,
    /// Ring buffers made so far.
    made: usize,
    /// Files: where the next claim reads, and the current epoch.
    next_offset: u64,
    epoch: u64,
    /// Files: a chunk of this epoch was not full; nothing more is claimed
    /// until the parser takes it.
    paused: bool,
    parser_sleeps: bool,
    reader_sleeps: bool,
    /// The parser is gone or has taken the end: the thread stops.
    hung_up: bool,
    /// The thread has ended (by a return or a panic).
    ended: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent queues (every
        // critical section is a push or a pop), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims the next chunk, if a buffer is free (or may be made) and
    /// reading is neither paused nor stopped. `hot`: take the buffer given
    /// back last (for the parser).
    fn claim(&self, st: &mut State, hot: bool) -> Option<Claim> {
        if st.hung_up || st.paused {
            return None;
        }
        let free = if hot { st.free.pop_back() } else { st.free.pop_front() };
        let buf = match free {
            Some(b) => Ok(b),
            None if st.made < self.ring => {
                st.made += 1;
                // A buffer that cannot be allocated is a failed read.
                self.slack
                    .checked_add(self.size)
                    .ok_or_else(|| out_of_memory(usize::MAX))
                    .and_then(zeroed)
            }
            None => return None,
        };
        let seq = st.head + st.slots.len() as u64;
        st.slots.push_back(None);
        let offset = st.next_offset;
        if self.at {
            st.next_offset += self.size as u64;
        }
        Some(Claim { seq, epoch: st.epoch, offset, buf })
    }

    /// Reads a claimed chunk (without the lock). Returns the chunk and a
    /// buffer to give back when it holds no data.
    fn read(&self, input: &mut Input, claim: Claim) -> (Chunk, Option<Vec<u8>>) {
        let (epoch, offset) = (claim.epoch, claim.offset);
        let (msg, spare) = match claim.buf {
            Err(e) => (Msg::Error(e), None),
            Ok(mut buf) => {
                let (slack, size) = (self.slack, self.size);
                let end = match input {
                    Input::Stream(src) => loop {
                        match src.read(&mut buf[slack..slack + size]) {
                            Ok(n) => break Ok(n),
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => break Err(e),
                        }
                    },
                    Input::At(src, _) => {
                        let mut got = 0;
                        loop {
                            if got == size {
                                break Ok(got);
                            }
                            match src
                                .read_at(&mut buf[slack + got..slack + size], offset + got as u64)
                            {
                                Ok(0) => break Ok(got),
                                Ok(n) => got += n,
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                                // The bytes read are delivered; the chunk
                                // is short, so the failing read is tried
                                // again after the resync.
                                Err(_) if got > 0 => break Ok(got),
                                Err(e) => break Err(e),
                            }
                        }
                    }
                };
                match end {
                    Ok(0) => (Msg::Eof, Some(buf)),
                    Ok(n) => (Msg::Data(buf, n), None),
                    Err(e) => (Msg::Error(e), Some(buf)),
                }
            }
        };
        (Chunk { epoch, offset, msg }, spare)
    }

    /// Stores a chunk read in its slot (and the spare buffer in the free
    /// list); pauses claiming for a file's chunk that is not full. Returns
    /// true when the front chunk is now there.
    fn store(&self, st: &mut State, seq: u64, chunk: Chunk, spare: Option<Vec<u8>>) -> bool {
        if let Some(b) = spare {
            st.free.push_back(b);
        }
        let full = matches!(chunk.msg, Msg::Data(_, n) if n == self.size);
        if self.at && !full && chunk.epoch == st.epoch {
            st.paused = true;
        }
        let i = (seq - st.head) as usize;
        st.slots[i] = Some(chunk);
        let front = i == 0;
        if front {
            self.ready.store(1, Ordering::Release);
        }
        front
    }

    /// Takes the front chunk, if it is there.
    fn pop(&self, st: &mut State) -> Option<Chunk> {
        if !matches!(st.slots.front(), Some(Some(_))) {
            return None;
        }
        let chunk = st.slots.pop_front().flatten();
        st.head += 1;
        let ready = matches!(st.slots.front(), Some(Some(_)));
        self.ready.store(ready as usize, Ordering::Release);
        chunk
    }

    /// Wakes the thread if it sleeps and could claim a chunk.
    fn wake_reader(&self, st: &mut State, enough: usize) {
        if st.reader_sleeps && !st.paused && (st.free.len() >= enough || st.made < self.ring) {
            st.reader_sleeps = false;
            self.to_reader.notify_one();
        }
    }
}

/// Marks the thread ended however it exits (a panic included), so that a
/// parser waiting for a chunk wakes up.
struct EndGuard(Arc<Shared>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.lock().ended = true;
        self.0.to_parser.notify_one();
    }
}

/// A ring buffer whose bytes `[pos, fill)` are not yet appended to the data
/// (only while the data is in the owned buffer).
struct Next {
    buf: Vec<u8>,
    pos: usize,
    fill: usize,
}

/// The read-ahead buffer; see the module documentation.
pub(crate) struct ReadAhead {
    shared: Arc<Shared>,
    /// The parser's handle on a file read at offsets (`None` for a stream).
    at: Option<Input>,
    /// Files: the offset of the next byte to deliver, and the epoch of
    /// the chunks that may be delivered.
    offset: u64,
    epoch: u64,
    /// The end (`Eof` or `Error`) has been taken.
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
    /// Starts the thread reading `input` in chunks of `size` bytes (at
    /// least [`MIN_READ`]), for a logical capacity of `size`. Hands
    /// `input` back when the thread cannot be started.
    ///
    /// `join_on_drop`: wait for the thread when dropped (only for sources
    /// whose reads cannot block forever, i.e. regular files).
    pub(crate) fn spawn(
        input: Input,
        size: usize,
        max: usize,
        join_on_drop: bool,
    ) -> std::result::Result<ReadAhead, Input> {
        // `size` is the logical capacity; chunks are read at least
        // `MIN_READ` bytes at a time whatever it is (see `MIN_READ`).
        let cap = size.max(1);
        let size = cap.max(MIN_READ);
        let slack = size.min(MAX_SLACK);
        let ring = ring_len(slack.saturating_add(size));
        let (at, offset) = match &input {
            Input::Stream(_) => (None, 0),
            Input::At(src, offset) => (Some(Input::At(src.clone(), *offset)), *offset),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                slots: VecDeque::with_capacity(ring + 2),
                head: 0,
                free: VecDeque::with_capacity(ring),
                made: 0,
                next_offset: offset,
                epoch: 0,
                paused: false,
                parser_sleeps: false,
                reader_sleeps: false,
                hung_up: false,
                ended: false,
            }),
            to_parser: Condvar::new(),
            to_reader: Condvar::new(),
            wake_at: ring.div_ceil(2),
            ready: AtomicUsize::new(0),
            ring,
            slack,
            size,
            at: at.is_some(),
        });
        // The input goes to the thread once it runs, so that a failed spawn
        // leaves it here to read synchronously.
        let (src_tx, src_rx) = mpsc::sync_channel::<Input>(1);
        let theirs = shared.clone();
        let spawned = crate::pool::spawn("read-ahead", move || {
            let guard = EndGuard(theirs);
            if let Ok(input) = src_rx.recv() {
                fill_loop(input, &guard.0);
            }
        });
        let thread = match spawned {
            Ok(t) => t,
            Err(_) => return Err(input),
        };
        if let Err(e) = src_tx.send(input) {
            // The thread is alive until it receives: unreachable, but hand
            // the input back all the same.
            return Err(e.0);
        }
        Ok(ReadAhead {
            shared,
            at,
            offset,
            epoch: 0,
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
            cap,
            max: max.max(cap),
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

    /// The next chunk of data, `None` at the end of input.
    fn receive(&mut self) -> Result<Option<Next>> {
        loop {
            if self.finished {
                return Ok(None);
            }
            let chunk = self.next_chunk()?;
            if chunk.epoch != self.epoch {
                // Claimed before the last resync: bytes already delivered
                // or past a short chunk.
                if let Msg::Data(buf, _) = chunk.msg {
                    self.give_back(buf);
                }
                continue;
            }
            match chunk.msg {
                Msg::Data(buf, n) => {
                    if self.at.is_some() {
                        debug_assert_eq!(chunk.offset, self.offset);
                        self.offset += n as u64;
                        if n < self.shared.size {
                            self.resync();
                        }
                    }
                    return Ok(Some(Next { buf, pos: self.slack, fill: self.slack + n }));
                }
                Msg::Eof => {
                    self.finish();
                    return Ok(None);
                }
                Msg::Error(e) => {
                    self.finish();
                    return Err(e.into());
                }
            }
        }
    }

    /// The front chunk: taken when there, else read here (a file's next
    /// chunk, when a buffer is free), else waited for.
    fn next_chunk(&mut self) -> Result<Chunk> {
        let sh = &*self.shared;
        let mut spun = false;
        loop {
            {
                let mut st = sh.lock();
                if let Some(chunk) = sh.pop(&mut st) {
                    return Ok(chunk);
                }
                if let Some(input) = &mut self.at {
                    if let Some(claim) = sh.claim(&mut st, true) {
                        // The thread may sleep with buffers free: wake it
                        // to read alongside.
                        sh.wake_reader(&mut st, 1);
                        drop(st);
                        let seq = claim.seq;
                        let (chunk, spare) = sh.read(input, claim);
                        sh.store(&mut sh.lock(), seq, chunk, spare);
                        continue;
                    }
                }
                if st.ended {
                    // The thread ended with the front chunk unread (or,
                    // for a stream, without its last message): it panicked.
                    drop(st);
                    self.finish();
                    return Err(io::Error::other("the read-ahead thread stopped").into());
                }
                if spun {
                    st.parser_sleeps = true;
                    while st.parser_sleeps && !st.ended {
                        st = sh.to_parser.wait(st).unwrap_or_else(|e| e.into_inner());
                        if matches!(st.slots.front(), Some(Some(_))) {
                            break;
                        }
                    }
                    st.parser_sleeps = false;
                    continue;
                }
            }
            // Poll a little before sleeping: the front chunk is usually
            // close.
            let start = Instant::now();
            let mut k = 0u32;
            while sh.ready.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
                k += 1;
                if k.is_multiple_of(64) && start.elapsed() > SPIN {
                    break;
                }
            }
            spun = true;
        }
    }

    /// After a chunk that was not full: later claims read from the next
    /// byte to deliver, in a new epoch.
    fn resync(&mut self) {
        let sh = &*self.shared;
        let mut st = sh.lock();
        st.epoch += 1;
        self.epoch = st.epoch;
        st.next_offset = self.offset;
        st.paused = false;
        sh.wake_reader(&mut st, 1);
    }

    /// The end is taken: the thread stops.
    fn finish(&mut self) {
        self.finished = true;
        self.shared.lock().hung_up = true;
        self.shared.to_reader.notify_one();
    }

    /// Returns a parsed ring buffer, waking the thread when it sleeps and
    /// enough buffers are free.
    fn give_back(&self, buf: Vec<u8>) {
        if self.finished {
            return;
        }
        let mut st = self.shared.lock();
        st.free.push_back(buf);
        self.shared.wake_reader(&mut st, self.shared.wake_at);
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

/// The thread: claims chunks and reads them (making up to `ring` buffers),
/// until the parser hangs up or, for a stream, the end.
fn fill_loop(mut input: Input, sh: &Shared) {
    loop {
        let claim = {
            let mut st = sh.lock();
            loop {
                if st.hung_up {
                    return;
                }
                if let Some(c) = sh.claim(&mut st, false) {
                    break c;
                }
                st.reader_sleeps = true;
                st = sh.to_reader.wait(st).unwrap_or_else(|e| e.into_inner());
                st.reader_sleeps = false;
            }
        };
        let seq = claim.seq;
        let (chunk, spare) = sh.read(&mut input, claim);
        let last = !sh.at && !matches!(chunk.msg, Msg::Data(..));
        let mut st = sh.lock();
        if st.hung_up {
            return;
        }
        if sh.store(&mut st, seq, chunk, spare) && st.parser_sleeps {
            st.parser_sleeps = false;
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

    /// What a reader sees of the synchronous buffer over `sync` and of the
    /// read-ahead buffer over `ahead` (the same bytes), driven the same way.
    fn both(
        sync: Box<dyn Read + Send>,
        ahead: Input,
        size: usize,
        max: usize,
        t: u8,
    ) -> [(Vec<Vec<u8>>, String, usize); 2] {
        use std::cell::RefCell;
        let a = RefCell::new(SyncBuffer::new(sync, size, max));
        let want = drive(
            &|| a.borrow().data().to_vec(),
            &mut |k| a.borrow_mut().refill(k),
            &|| a.borrow().is_eof(),
            &|| a.borrow().capacity(),
            t,
        );
        let b = RefCell::new(ReadAhead::spawn(ahead, size, max, true).ok().unwrap());
        let got = drive(
            &|| b.borrow().data().to_vec(),
            &mut |k| b.borrow_mut().refill(k),
            &|| b.borrow().is_eof(),
            &|| b.borrow().capacity(),
            t,
        );
        [got, want]
    }

    /// Driven the same way, both buffers deliver the same records, the
    /// same error (I/O or `RecordTooLarge`) after the same bytes, and
    /// reach the same capacity.
    #[test]
    fn same_records_errors_and_capacities_as_the_synchronous_buffer() {
        for seed in 1..600u64 {
            let steps = script(seed);
            let size = [1, 2, 3, 7, 64, 100, 4096][(seed % 7) as usize];
            let max = if seed % 5 == 0 { size * 4 } else { usize::MAX };
            let t = (seed % 64) as u8 + 1;
            let sync = Box::new(Script(copy(&steps)));
            let ahead = Input::Stream(Box::new(Script(copy(&steps))));
            let [got, want] = both(sync, ahead, size, max, t);
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
        let mut b =
            ReadAhead::spawn(Input::Stream(Box::new(Panics)), 16, usize::MAX, true).ok().unwrap();
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
        let mut b = ReadAhead::spawn(
            Input::Stream(Box::new(Endless { reads: reads.clone() })),
            16,
            usize::MAX,
            true,
        )
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

    /// A buffer of one byte still reads in chunks of at least `MIN_READ`
    /// bytes (one `read()` a byte made a small buffer very slow), with
    /// the logical capacity of a one-byte buffer.
    #[test]
    fn a_tiny_buffer_reads_large_chunks() {
        use std::sync::atomic::Ordering;
        let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let endless = Box::new(Endless { reads: reads.clone() });
        let len = 1 << 20;
        let mut b = ReadAhead::spawn(
            Input::Stream(Box::new(endless.take(len as u64))),
            1,
            usize::MAX,
            true,
        )
        .ok()
        .unwrap();
        let mut got = 0;
        loop {
            let n = b.data().len();
            assert!(n <= b.capacity());
            got += n;
            b.refill(n).unwrap();
            if b.is_eof() && b.data().is_empty() {
                break;
            }
        }
        assert_eq!((got, b.capacity()), (len, 1));
        let n = reads.load(Ordering::SeqCst);
        assert!(n <= len / MIN_READ + 1, "{n} reads");
    }

    /// A file read at offsets: `data`, with reads cut short at random
    /// (never to 0 before the end), and failing at byte `bad` (reads that
    /// start before it stop there, as at a bad sector).
    struct Disk {
        data: Vec<u8>,
        bad: Option<u64>,
        rnd: Mutex<u64>,
    }

    impl ReadAt for Disk {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            if self.bad == Some(offset) {
                return Err(io::Error::other("bad sector"));
            }
            let x = {
                let mut r = self.rnd.lock().unwrap();
                *r ^= *r << 13;
                *r ^= *r >> 7;
                *r ^= *r << 17;
                *r
            };
            if x % 11 == 0 {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let mut end = (self.data.len() as u64).min(offset + buf.len() as u64);
            if let Some(bad) = self.bad.filter(|&b| b > offset) {
                end = end.min(bad);
            }
            let mut n = end.saturating_sub(offset) as usize;
            if n > 1 && x % 3 == 0 {
                n = (x >> 8) as usize % n + 1;
            }
            if n > 0 {
                let at = offset as usize;
                buf[..n].copy_from_slice(&self.data[at..at + n]);
            }
            Ok(n)
        }
    }

    fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// Read at offsets by the thread and the parser, with short reads,
    /// interruptions and a failing byte, a file gives the same records,
    /// error and capacity as the synchronous buffer reading it in order.
    #[test]
    fn files_read_at_offsets_match_the_synchronous_buffer() {
        for seed in 1..400u64 {
            let len = (seed * 37 % 3000) as usize;
            let data = random_bytes(seed, len);
            let size = [1, 2, 3, 7, 64, 100, 4096][(seed % 7) as usize];
            let max = if seed % 5 == 0 { size * 4 } else { usize::MAX };
            let t = (seed % 64) as u8 + 1;
            let bad = (seed % 3 == 0 && len > 0).then(|| seed * 101 % len as u64);
            let start = if seed % 4 == 0 { (seed % 50).min(len as u64) } else { 0 };
            let disk = |s: u64| -> Arc<dyn ReadAt> {
                Arc::new(Disk { data: data.clone(), bad, rnd: Mutex::new(s | 1) })
            };
            let sync = Input::At(disk(seed), start).into_reader();
            let [got, want] = both(sync, Input::At(disk(seed * 7), start), size, max, t);
            assert_eq!(got, want, "seed {seed}, size {size}, max {max}, bad {bad:?}");
        }
    }

    /// A file whose length changes while it is read (grows and shrinks at
    /// random, its bytes unchanged): what is delivered is always a prefix of
    /// its bytes, ending where a read found the end.
    #[test]
    fn a_file_that_changes_length_gives_a_prefix_of_its_bytes() {
        struct Changing {
            data: Vec<u8>,
            len: AtomicUsize,
            rnd: Mutex<u64>,
        }
        impl ReadAt for Changing {
            fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
                let x = {
                    let mut r = self.rnd.lock().unwrap();
                    *r ^= *r << 13;
                    *r ^= *r >> 7;
                    *r ^= *r << 17;
                    *r
                };
                let len = (self.data.len() as u64).min(x % (self.data.len() as u64 + 200));
                let old = self.len.swap(len as usize, Ordering::SeqCst) as u64;
                let len = if x % 4 == 0 { len } else { old.max(len) };
                self.len.store(len as usize, Ordering::SeqCst);
                let n = len.saturating_sub(offset).min(buf.len() as u64) as usize;
                if n > 0 {
                    let at = offset as usize;
                    buf[..n].copy_from_slice(&self.data[at..at + n]);
                }
                Ok(n)
            }
        }
        for seed in 1..300u64 {
            let data = random_bytes(seed, 500 + (seed * 13 % 2000) as usize);
            let size = [1, 5, 64, 256][(seed % 4) as usize];
            let src =
                Changing { data: data.clone(), len: AtomicUsize::new(0), rnd: Mutex::new(seed) };
            let mut b =
                ReadAhead::spawn(Input::At(Arc::new(src), 0), size, usize::MAX, true).ok().unwrap();
            let mut got = Vec::new();
            while !b.is_eof() {
                got.extend_from_slice(b.data());
                let n = b.data().len();
                b.refill(n).unwrap();
            }
            got.extend_from_slice(b.data());
            assert_eq!(got[..], data[..got.len()], "seed {seed}, size {size}");
        }
    }

    /// An endless file, counting its reads.
    struct EndlessAt {
        reads: Arc<AtomicUsize>,
    }

    impl ReadAt for EndlessAt {
        fn read_at(&self, out: &mut [u8], _: u64) -> io::Result<usize> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            out.fill(b'x');
            Ok(out.len())
        }
    }

    #[test]
    fn dropping_stops_reading_a_file_after_at_most_a_few_reads() {
        let reads = Arc::new(AtomicUsize::new(0));
        let src = Arc::new(EndlessAt { reads: reads.clone() });
        let mut b = ReadAhead::spawn(Input::At(src, 0), 16, usize::MAX, true).ok().unwrap();
        for _ in 0..10 {
            let n = b.data().len();
            b.refill(n).unwrap();
        }
        assert_eq!(b.data().len(), 16);
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(b);
        let n = reads.load(Ordering::SeqCst);
        // Ten chunks parsed, one per ring buffer ahead, one in progress.
        assert!(n <= 10 + ring_len(32) + 1, "{n} reads");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(reads.load(Ordering::SeqCst), n, "the thread went on reading");
    }
}
