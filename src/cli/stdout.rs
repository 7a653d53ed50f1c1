//! Standard output, with every write's error reported.
//!
//! `std::io::stdout()` treats `EBADF` as success (a program whose standard
//! output is closed then runs as if writing to `/dev/null`), so a command
//! run with `>&-` or `1</dev/null` would exit 0 having written nothing.
//! The commands write to descriptor 1 through [`Stdout`] instead, whose
//! writes fail with the operating system's error, and `main` closes the
//! descriptor with [`close`] at the end, which reports errors that only
//! show then (a full disk behind NFS).

use std::fs::File;
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether descriptor 1 was open when the program started (and is not
/// yet closed by [`close`]). Set once by [`init`], before any file is
/// opened: a file opened later while it is closed may get descriptor 1,
/// which must then not be written to.
static OPEN: AtomicBool = AtomicBool::new(false);

/// Notes whether standard output is open; called first thing in `main`.
///
/// Rust's runtime opens `/dev/null` (read-write) on any of descriptors
/// 0-2 found closed at startup, before `main`: descriptor 1 open read-write
/// on `/dev/null` is taken for one that was closed (a shell's `>/dev/null`
/// opens it write-only; `1<>/dev/null` is taken for a closed output too).
pub fn init() {
    OPEN.store(open_at_start(), Ordering::Relaxed);
}

#[cfg(unix)]
fn open_at_start() -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    // SAFETY: `F_GETFL` only reads the descriptor's status flags; it fails
    // with EBADF when descriptor 1 is not open.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    if flags == -1 {
        return false;
    }
    if flags & libc::O_ACCMODE != libc::O_RDWR {
        return true;
    }
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return false;
    };
    let (Ok(out), Ok(null)) = (File::from(fd).metadata(), std::fs::metadata("/dev/null")) else {
        return true;
    };
    !(out.dev() == null.dev() && out.ino() == null.ino())
}

#[cfg(not(unix))]
fn open_at_start() -> bool {
    true
}

/// Descriptor 1 as a writer; unbuffered (the commands wrap it in a
/// `BufWriter`). Writes after standard output was found closed fail with
/// `EBADF`.
pub struct Stdout(Option<ManuallyDrop<File>>);

impl Stdout {
    /// Standard output as it was at [`init`].
    #[cfg(unix)]
    pub fn new() -> Stdout {
        if !OPEN.load(Ordering::Relaxed) {
            return Stdout(None);
        }
        use std::os::fd::FromRawFd;
        // SAFETY: descriptor 1 was open at `init` and nothing closes it
        // before `close`, which `main` calls once the command (and so
        // every `Stdout`) is done; `ManuallyDrop` keeps this `File` from
        // closing it when dropped.
        let file = unsafe { File::from_raw_fd(1) };
        Stdout(Some(ManuallyDrop::new(file)))
    }

    /// Standard output as it was at [`init`] (elsewhere than Unix, a
    /// duplicate of its handle).
    #[cfg(not(unix))]
    pub fn new() -> Stdout {
        use std::os::windows::io::AsHandle;
        let file = io::stdout().as_handle().try_clone_to_owned().ok().map(File::from);
        Stdout(file.map(ManuallyDrop::new))
    }
}

impl Default for Stdout {
    fn default() -> Stdout {
        Stdout::new()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Some(f) => f.write(buf),
            None => Err(io::Error::from_raw_os_error(libc::EBADF)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        // Writes go straight to the descriptor.
        Ok(())
    }
}

/// Closes descriptor 1 (once) and returns the error the close reports;
/// `EINTR` is not an error (Linux has closed the descriptor anyway).
#[cfg(unix)]
pub fn close() -> io::Result<()> {
    if !OPEN.swap(false, Ordering::Relaxed) {
        return Ok(());
    }
    // SAFETY: descriptor 1 is open (`OPEN` was true) and no `Stdout` is
    // alive any more (see `Stdout::new`); after this nothing writes to it.
    if unsafe { libc::close(1) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::Interrupted {
        return Ok(());
    }
    Err(e)
}

/// Elsewhere than Unix the handle is left to the system.
#[cfg(not(unix))]
pub fn close() -> io::Result<()> {
    Ok(())
}
