//! Every thread the core starts is started here.
//!
//! * [`spawn`]: a named helper thread that outlives the call that starts
//!   it (read-ahead, fault-ahead, the workers of
//!   [`ParColumns`](crate::arrow::ParColumns)); [`join`] turns its panic
//!   into an error.
//! * [`scope`]: named workers borrowing the caller's data beside work on
//!   the calling thread; every worker has ended when it returns, and the
//!   first panic of a worker is handed back as a value, for the caller to
//!   turn into an error ([`panic_error`]) or to re-raise (a panic in the
//!   caller's own closure).
//! * [`map`]: a function over items on every CPU, results in order, a
//!   panicking worker reported as an error.
//!
//! Threads are named `fastcsv-<what>` so that a debugger or `top -H`
//! tells them apart.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::{Builder, JoinHandle};

use crate::error::{Error, Result};

/// A panic's payload, as `std::thread` hands it back.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// CPUs this process may use (1 when that is unknown).
pub(crate) fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Starts a helper thread named `fastcsv-<name>`; `Err` when the system
/// cannot start one (the caller then does the work itself or fails).
pub(crate) fn spawn<F, T>(name: &str, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().name(format!("fastcsv-{name}")).spawn(f)
}

/// Waits for a thread started by [`spawn`]; a panic in it becomes an
/// error naming the thread.
pub(crate) fn join<T>(h: JoinHandle<T>) -> Result<T> {
    let name = h.thread().name().unwrap_or("fastcsv worker").to_string();
    h.join().map_err(|p| panic_error(&name, &p))
}

/// The error that reports a worker's panic (its message, when it has one).
pub(crate) fn panic_error(what: &str, p: &Panic) -> Error {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    Error::config(format!("a {what} thread panicked: {msg}"))
}

/// Runs up to `threads` workers named `fastcsv-<name>`, each calling
/// `worker`, beside `main` on the calling thread, which is told how many
/// workers started (0 when the system could start none: `main` must then
/// not wait for them). Returns once every worker has ended: `main`'s
/// result, or the first worker panic's payload (`main`'s own panic goes
/// on unwinding).
pub(crate) fn scope<W, M, R>(
    name: &str,
    threads: usize,
    worker: W,
    main: M,
) -> std::result::Result<R, Panic>
where
    W: Fn() + Sync,
    M: FnOnce(usize) -> R,
{
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map_while(|_| {
                Builder::new().name(format!("fastcsv-{name}")).spawn_scoped(s, &worker).ok()
            })
            .collect();
        let r = main(handles.len());
        let mut first = None;
        for h in handles {
            if let Err(p) = h.join() {
                first.get_or_insert(p);
            }
        }
        match first {
            Some(p) => Err(p),
            None => Ok(r),
        }
    })
}

/// `f` over `items` on at most `threads` threads (at most one per item),
/// results in order; the first error in item order wins, and a panicking
/// worker is an error. Runs on the calling thread alone with one thread,
/// or when no thread can be started.
pub(crate) fn map_on<T, U, F>(name: &str, threads: usize, items: &[T], f: F) -> Result<Vec<U>>
where
    T: Sync,
    U: Send,
    F: Fn(&T) -> Result<U> + Sync,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<U>>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(k) else { break };
        let r = f(item);
        out.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(r);
    };
    let started = scope(name, threads, work, |n| {
        if n == 0 {
            // No thread could be started: the calling thread does it all.
            work();
        }
    });
    started.map_err(|p| panic_error(name, &p))?;
    let out = out.into_inner().unwrap_or_else(|e| e.into_inner());
    out.into_iter().map(|r| r.expect("every item was mapped")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_order_and_the_first_error() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(map_on("test", 4, &items, |&k| Ok(k * 2)).unwrap()[99], 198);
        let r = map_on("test", 4, &items, |&k| {
            if k >= 40 {
                Err(Error::config(format!("item {k}")))
            } else {
                Ok(k)
            }
        });
        assert!(r.unwrap_err().to_string().contains("item 40"));
    }

    #[test]
    fn a_panicking_worker_is_an_error() {
        // Two items on up to four threads: each on a worker of its own.
        let items = [0u32, 1];
        let r = map_on("test-panics", 4, &items, |&k| -> Result<u32> {
            if k == 1 {
                panic!("boom {k}");
            }
            Ok(k)
        });
        let e = r.unwrap_err().to_string();
        assert!(e.contains("test-panics") && e.contains("boom 1"), "{e}");
    }

    #[test]
    fn scope_hands_back_a_worker_panic_and_joins_every_worker() {
        let done = AtomicUsize::new(0);
        let r = scope(
            "test-scope",
            3,
            || {
                if done.fetch_add(1, Ordering::SeqCst) == 1 {
                    panic!("second worker");
                }
            },
            |n| n,
        );
        assert_eq!(done.load(Ordering::SeqCst), 3);
        let p = r.unwrap_err();
        assert!(panic_error("x", &p).to_string().contains("second worker"));
    }

    #[test]
    fn spawned_threads_are_named_and_joined() {
        let h = spawn("test-name", || std::thread::current().name().map(str::to_string)).unwrap();
        assert_eq!(join(h).unwrap().as_deref(), Some("fastcsv-test-name"));
        let h = spawn("test-panic", || panic!("gone")).unwrap();
        let e: Result<()> = join(h);
        assert!(e.unwrap_err().to_string().contains("fastcsv-test-panic"));
    }
}
