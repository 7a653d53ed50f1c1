//! Parsing ahead: a second thread that loads [`Batch`]es while the
//! calling thread builds the Python objects of the previous one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use fastcsv::{Error as CoreError, ErrorKind};

use crate::batch::{Batch, ROW_BATCH};
use crate::dialect::field_limit;
use crate::errors::{map_error, text_error, PyErrStash};
use crate::source::{Cancel, HeldReader, SIGNAL_CHECK};
use crate::strings::StrMaker;
use crate::text::{FeedCell, Resume};

/// What the read-ahead thread of a row-by-row reader tells the calling
/// thread. (One message per batch: its size does not matter.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Msg {
    /// A filled batch and how it ended.
    Filled(Batch, Result<bool, CoreError>),
    /// It read every byte fed so far and waits for more (see [`FedText`](crate::text::FedText)).
    Need,
}

/// What [`Ahead::next_row`] found.
pub(crate) enum Next<'py> {
    Row(Bound<'py, PyList>),
    End,
    /// (Text streams only.) The next row or error may be different under
    /// the field size limit now in force: parse again from this byte of
    /// the text, whose line is this one (1-based).
    Reparse(u64, u64),
}

/// A row-by-row reader's rows scanned ahead: batches of rows decoded by a
/// second thread (once the input proved larger than one batch) while the
/// calling thread makes lists of the rows before them. The rows, errors
/// and `line_num` are those of reading row by row: a batch ends at an
/// error, which is raised after its rows, and reading goes on after it as
/// the core reader does.
///
/// A text stream's reader (`reader::TextAheadSource`) is fed by the
/// calling thread ([`Feeder`](crate::text::Feeder)): while its batches
/// are scanned here, the scan reads the stream itself; a thread, once
/// started, is kept fed while the calling thread waits for its batches.
pub(crate) struct Ahead {
    /// The reader while no thread has it.
    rdr: Option<HeldReader>,
    /// Messages from the thread, once it runs. (In a `Mutex` only to make
    /// the reader `Sync`, as Python classes must be; it is never locked:
    /// every access has `&mut self`.)
    full: Option<Mutex<mpsc::Receiver<Msg>>>,
    /// Batches given back to the thread to fill again.
    empty: Option<mpsc::Sender<Batch>>,
    /// The channel for `full` when made before the thread (a fed reader's
    /// [`FedText`](crate::text::FedText) holds the other end).
    chan: Option<(mpsc::Sender<Msg>, Mutex<mpsc::Receiver<Msg>>)>,
    /// The batch being handed out, its next row, and how it ended.
    cur: Batch,
    next: usize,
    end: Option<Result<bool, CoreError>>,
    /// `line_num`: lines consumed up to the last row handed out.
    pub(crate) line: u64,
    /// Nothing more to read.
    done: bool,
    /// The calling thread waits for the next batch (see `Batch::load_for`).
    waiting: Arc<AtomicBool>,
    /// (Text streams only.) Where to leave the stream if the reader goes
    /// away now, as `TextState::resume`.
    pub(crate) resume: Option<Resume>,
    /// Stops the thread's wait for input (a FIFO) when this reader goes
    /// away.
    cancel: Option<Cancel>,
    /// Whether a second thread scans batches ahead (see [`Plan`]).
    plan: Plan,
    /// (Text streams only.) On while the scan reads the stream itself
    /// (see [`FedText`](crate::text::FedText)): turned off before the
    /// reader moves to a thread.
    inline: Option<Arc<AtomicBool>>,
}

/// Whether a reader over a path or descriptor scans its batches on a
/// second thread, ahead of the rows' objects, and which thread decodes
/// the fields past ASCII.
///
/// A second thread saves wall time only where scanning is a large share
/// of the calling thread's work; it always costs CPU time (the batches it
/// fills are read from the other core's cache, and each hand-over wakes a
/// thread). Where the caller's loop does real work per row, or the rows'
/// objects cost far more than their scan (short repeated values), it
/// would only add CPU time. Decoding on the second thread saves more wall
/// time still, for more CPU time: a pass to find the fields past ASCII,
/// and their code units written there and copied here.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plan {
    /// `threads=1`: every batch on the calling thread.
    Solo,
    /// `threads` of 2 or more: a thread once the input proves larger than
    /// one batch, which decodes fields past ASCII too while the calling
    /// thread is busy with the rows before (see `Batch::load_for`).
    Ahead,
    /// `threads=None`: the first [`AUTO_BATCHES`] batches are scanned and
    /// decoded here and timed, with the time the caller spends on their
    /// rows; a thread starts if scanning and decoding took at least
    /// [`AUTO_SHARE`] of the two in [`AUTO_HEAVY`] of those batches or
    /// more, and the plan becomes [`Plan::Lean`].
    Auto(Timing),
    /// What [`Plan::Auto`] decides for where a thread pays: a thread that
    /// scans batches only; the calling thread decodes fields past ASCII as
    /// it makes their objects. (The timing counts decoding with scanning:
    /// a large share of both is input whose bytes take real work, long
    /// quoted fields, where the scan alone is worth handing over.)
    Lean,
}

/// What `FASTCSV_AUTO_THREAD` (for tests and measurements) makes every
/// [`Plan::Auto`] decide after its first batch, without timing: `always`
/// a thread ([`Plan::Lean`]), `never` none. Read once; anything else
/// leaves the decision to the timing.
fn auto_decided() -> Option<bool> {
    use std::sync::OnceLock;
    static DECIDED: OnceLock<Option<bool>> = OnceLock::new();
    *DECIDED.get_or_init(|| match std::env::var("FASTCSV_AUTO_THREAD").as_deref() {
        Ok("always") => Some(true),
        Ok("never") => Some(false),
        _ => None,
    })
}

/// Batches timed before [`Plan::Auto`] decides.
const AUTO_BATCHES: u32 = 6;

/// The share of the calling thread's time that scanning and decoding
/// must take in a batch for [`Plan::Auto`] to count it (as a fraction:
/// numerator, denominator). (The bench files' shares are in
/// docs/BENCHMARKS.md: well below this where the thread would save
/// little, above it for quoted text.)
const AUTO_SHARE: (u32, u32) = (2, 5);

/// How many of the [`AUTO_BATCHES`] timed batches must pass
/// [`AUTO_SHARE`] for [`Plan::Auto`] to start a thread: a count rather
/// than the share of all of them together, so that one batch slowed by
/// something else (this thread descheduled while it scanned, say) does
/// not decide.
const AUTO_HEAVY: u32 = 4;

/// What [`Plan::Auto`] measured so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timing {
    /// The batches timed so far, and how many of them passed
    /// [`AUTO_SHARE`].
    batches: u32,
    heavy: u32,
    /// When the last scan ended (the caller's time on its rows began).
    last: Option<Instant>,
}

impl Plan {
    /// The plan for `threads=` (`None`: decide by timing).
    pub(crate) fn for_threads(threads: Option<usize>) -> Plan {
        match threads {
            Some(1) => Plan::Solo,
            Some(_) => Plan::Ahead,
            None => Plan::Auto(Timing::default()),
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        if let Some(c) = &self.cancel {
            c.set();
        }
    }
}

impl Ahead {
    /// A reader with nothing (more) to give.
    pub(crate) fn new_done() -> Ahead {
        let mut a = Ahead::new_fed(None, None, Plan::Solo, None);
        a.done = true;
        a
    }

    pub(crate) fn new(rdr: HeldReader, plan: Plan) -> Ahead {
        Ahead::new_fed(Some(rdr), None, plan, None)
    }

    /// Whether a second thread scans batches ahead (or will, once the
    /// input proves larger than one batch).
    pub(crate) fn parses_ahead(&self) -> bool {
        self.full.is_some() || matches!(self.plan, Plan::Ahead)
    }

    /// A reader whose thread, once started by `plan`, will send on
    /// `chan`'s sender; `inline`: a text stream's flag (see
    /// [`FedText`](crate::text::FedText)), on until then.
    pub(crate) fn new_fed(
        rdr: Option<HeldReader>,
        chan: Option<(mpsc::Sender<Msg>, mpsc::Receiver<Msg>)>,
        plan: Plan,
        inline: Option<Arc<AtomicBool>>,
    ) -> Ahead {
        Ahead {
            rdr,
            full: None,
            empty: None,
            chan: chan.map(|(tx, rx)| (tx, Mutex::new(rx))),
            cur: Batch::default(),
            next: 0,
            end: None,
            line: 0,
            done: false,
            waiting: Arc::default(),
            resume: None,
            cancel: None,
            plan,
            inline,
        }
    }

    /// The next row, as `NativeSource::next` gives it. With `fed` (a text
    /// stream), errors are `csv`'s and each row and error is first checked
    /// against the field size limit, which the thread does not apply.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn next_row<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
        stash: &PyErrStash,
        fed: Option<&FeedCell>,
    ) -> PyResult<Next<'py>> {
        loop {
            if self.next < self.cur.rows.len() {
                let r = self.next;
                if fed.is_some() {
                    // A row without a field longer (in bytes, so at least
                    // in characters) than the limit is as `csv` reads it.
                    // No field is longer than the record's bytes, up to the
                    // next record: the fields are looked at only when those
                    // are more than the limit.
                    let limit = field_limit(py)?;
                    let (fields, pos) = self.cur.row_fields(r);
                    let next = self.cur.rows.get(r + 1).map_or(self.cur.end_byte, |(_, p)| p.byte);
                    if (next < pos.byte || (next - pos.byte) as i64 > limit)
                        && self.cur.longest(fields) as i64 > limit
                    {
                        return Ok(Next::Reparse(pos.byte, pos.line));
                    }
                }
                self.next += 1;
                self.line = self.cur.lines[r];
                if fed.is_some() {
                    // The next record starts where the next row does.
                    self.resume = Some(match self.cur.rows.get(r + 1) {
                        Some((_, p)) => Resume::At { at: p.byte, lf: false },
                        None => Resume::At { at: self.cur.end_byte, lf: self.cur.end_lf },
                    });
                }
                return self.cur.row_list(py, r, nonnumeric, strs, name).map(Next::Row);
            }
            match self.end.take() {
                Some(Err(e)) => {
                    if fed.is_some() {
                        // Likewise for the record the error stopped in.
                        if let (Some((at, line)), Some(p)) = (self.cur.err_start, e.position()) {
                            if (p.byte.saturating_sub(at)) as i64 > field_limit(py)? {
                                return Ok(Next::Reparse(at, line));
                            }
                        }
                        self.line = self.cur.end_line;
                        // As in `NativeSource::next`.
                        self.resume = match e.position() {
                            Some(p)
                                if e.is_data() && !matches!(e.kind(), ErrorKind::UnexpectedEof) =>
                            {
                                Some(Resume::LineOf(p.byte))
                            }
                            _ => None,
                        };
                        return Err(text_error(py, e, stash));
                    }
                    self.line = self.cur.end_line;
                    return Err(map_error(e, stash));
                }
                Some(Ok(false)) => {
                    self.line = self.cur.end_line;
                    self.done = true;
                }
                Some(Ok(true)) | None => {}
            }
            if self.done {
                self.resume = None;
                return Ok(Next::End);
            }
            self.fetch(py, nonnumeric, strs.joins(), fed)?;
            if let Some(f) = fed.map(lock).as_mut().and_then(|f| f.as_mut()) {
                f.forget_before(self.cur.start_byte);
                f.stream.origins.need_from(self.cur.start_byte);
            }
        }
    }

    /// Replaces the handed-out batch with the next one: from the thread if
    /// it runs, else scanned here (GIL released), and then the thread is
    /// started if there is more to read and the plan says so. A fed reader
    /// whose plan is [`Plan::Ahead`] starts its thread at once, and keeps
    /// it fed while it waits.
    fn fetch(
        &mut self,
        py: Python<'_>,
        nonnumeric: bool,
        joins: bool,
        fed: Option<&FeedCell>,
    ) -> PyResult<()> {
        let spent = std::mem::take(&mut self.cur);
        self.next = 0;
        if fed.is_some()
            && self.full.is_none()
            && self.rdr.is_some()
            && matches!(self.plan, Plan::Ahead)
        {
            self.start_thread(nonnumeric, joins);
        }
        if let Some(full) = self.full.take() {
            let mut full = full.into_inner().unwrap_or_else(|e| e.into_inner());
            if let Some(empty) = &self.empty {
                let _ = empty.send(spent);
            }
            self.waiting.store(true, Ordering::Relaxed);
            let mut top_up = true;
            let got = loop {
                if let Some(f) = fed.filter(|_| top_up) {
                    if let Some(f) = lock(f).as_mut() {
                        f.top_up(py);
                    }
                }
                top_up = false;
                // The receiver goes to the GIL-free closure and comes back.
                let (back, got) = py.allow_threads(move || {
                    let got = full.recv_timeout(SIGNAL_CHECK);
                    (full, got)
                });
                full = back;
                match got {
                    Ok(Msg::Need) => top_up = true,
                    Ok(Msg::Filled(b, end)) => break Some((b, end)),
                    // Ctrl-C while the thread waits for input (a FIFO): the
                    // exception now; the batch is taken on the next call.
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if let Err(e) = py.check_signals() {
                            self.waiting.store(false, Ordering::Relaxed);
                            self.full = Some(Mutex::new(full));
                            return Err(e);
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                }
            };
            self.waiting.store(false, Ordering::Relaxed);
            self.full = Some(Mutex::new(full));
            let Some((mut b, end)) = got else {
                self.done = true;
                return Err(PyRuntimeError::new_err("fastcsv: the read-ahead thread stopped"));
            };
            if !b.prepared {
                py.allow_threads(|| b.prepare());
            }
            self.cur = b;
            self.end = Some(end);
            return Ok(());
        }
        let Some(rdr) = &mut self.rdr else {
            self.done = true;
            return Ok(());
        };
        let mut b = spent;
        let began = Instant::now();
        // (A fed reader's scan takes the GIL back to read the stream.)
        // Without a thread, fields are decoded as their objects are made;
        // the first batch of `threads=2` is prepared as its thread
        // prepares the rest, and the first batches of an automatic plan
        // too, so that their timing counts all the work a thread could
        // take off this one.
        let late = matches!(self.plan, Plan::Solo | Plan::Lean);
        let end = py.allow_threads(|| {
            let end = b.load(rdr, nonnumeric, joins, ROW_BATCH);
            if late {
                b.prepare_late();
            } else {
                b.prepare();
            }
            end
        });
        let more = matches!(end, Ok(true));
        self.cur = b;
        self.end = Some(end);
        if more && self.thread_pays(began) {
            self.start_thread(nonnumeric, joins);
        }
        Ok(())
    }

    /// After a batch scanned here from `began` to now: whether to start
    /// the thread (see [`Plan`]). An automatic plan that decides against it
    /// stays on this thread.
    fn thread_pays(&mut self, began: Instant) -> bool {
        let t = match &mut self.plan {
            Plan::Solo => return false,
            Plan::Ahead | Plan::Lean => return true,
            Plan::Auto(t) => t,
        };
        if let Some(pays) = auto_decided() {
            self.plan = if pays { Plan::Lean } else { Plan::Solo };
            return pays;
        }
        let now = Instant::now();
        // The first batch is not timed: it pays for first touches (the
        // mapping, the buffers) that the rest do not.
        if let Some(last) = t.last {
            let rows = began.saturating_duration_since(last);
            let scan = now.saturating_duration_since(began);
            let (num, den) = AUTO_SHARE;
            t.heavy += u32::from(scan * den >= (scan + rows) * num);
            t.batches += 1;
        }
        t.last = Some(now);
        if t.batches < AUTO_BATCHES {
            return false;
        }
        let pays = t.heavy >= AUTO_HEAVY;
        self.plan = if pays { Plan::Lean } else { Plan::Solo };
        pays
    }

    /// Hands the reader to a new read-ahead thread. If no thread can be
    /// started, reading goes on here.
    fn start_thread(&mut self, nonnumeric: bool, joins: bool) {
        let (rdr_tx, rdr_rx) = mpsc::channel::<HeldReader>();
        let (full_tx, full_rx) = match self.chan.take() {
            Some((tx, rx)) => (tx, rx.into_inner().unwrap_or_else(|e| e.into_inner())),
            None => mpsc::channel::<Msg>(),
        };
        let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
        let waiting = self.waiting.clone();
        let late = matches!(self.plan, Plan::Lean);
        let spawned =
            std::thread::Builder::new().name("fastcsv-read-ahead".into()).spawn(move || {
                let Ok(mut rdr) = rdr_rx.recv() else {
                    return;
                };
                // Reads on after an error, as the row-by-row reader does,
                // until the input ends or the Python reader is dropped.
                while let Ok(mut b) = empty_rx.recv() {
                    let end = b.load_for(&mut rdr, nonnumeric, joins, &waiting, late, ROW_BATCH);
                    let last = matches!(end, Ok(false));
                    if full_tx.send(Msg::Filled(b, end)).is_err() || last {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            return;
        }
        if let Some(on) = &self.inline {
            // Before the reader moves: the thread must not call Python.
            on.store(false, Ordering::Relaxed);
        }
        let rdr = self.rdr.take().expect("the reader is here until now");
        self.cancel = Some(rdr.cancel());
        if rdr_tx.send(rdr).is_err() {
            return; // the thread is gone already (cannot happen)
        }
        // Two batches to fill while the current one is handed out; made
        // here, so that the thread allocates nothing of its own.
        for _ in 0..2 {
            let _ = empty_tx.send(Batch::reserved(ROW_BATCH));
        }
        self.full = Some(Mutex::new(full_rx));
        self.empty = Some(empty_tx);
    }
}

/// The feeder in `cell`, locked (a panic while it was held leaves it as
/// it was).
fn lock(cell: &FeedCell) -> std::sync::MutexGuard<'_, Option<crate::text::Feeder>> {
    cell.lock().unwrap_or_else(|e| e.into_inner())
}
