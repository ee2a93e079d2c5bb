//! The host descriptors lard keeps for itself while a guest runs.
//!
//! Guest file descriptors *are* host descriptors (I/O passes through), so a
//! guest that closes every descriptor it did not open — daemons do, and so
//! does any program that calls `closefrom(3)` — would otherwise close lard's
//! trace file and its copy of stderr, and the report would be lost. Like
//! Valgrind, lard moves what it owns to high, close-on-exec descriptors and
//! pretends to the guest that they are not open: `close` of one fails with
//! `EBADF`, and `dup2`/`dup3` onto one fail with `EBADF` instead of replacing
//! it (`Config::host_fds` lists them; see [`crate::linux::syscalls`]).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};

/// The lowest descriptor lard uses for itself: far above what guests open.
pub const MIN_FD: i32 = 900;

/// Moves `file` to a descriptor ≥ [`MIN_FD`] (close-on-exec).
pub fn move_high(file: File) -> io::Result<File> {
    // SAFETY: fcntl on a descriptor this process owns; failure returns -1.
    let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, MIN_FD) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// A copy of lard's stderr on a high descriptor, put back on fd 2 after the
/// guest ran: a guest that closed or redirected fd 2 (every coreutils
/// program closes it at exit) must not swallow the report.
#[derive(Debug)]
pub struct StderrCopy(i32);

impl StderrCopy {
    /// Saves the current fd 2 (if it cannot be copied, `restore` is a no-op).
    pub fn save() -> StderrCopy {
        // SAFETY: fcntl on a descriptor number; failure returns -1.
        StderrCopy(unsafe { libc::fcntl(2, libc::F_DUPFD_CLOEXEC, MIN_FD) })
    }

    /// Takes over `fd`, a copy of stderr that the lard which exec'd this
    /// one kept open for its reports (it becomes close-on-exec again).
    pub fn adopt(fd: i32) -> StderrCopy {
        // SAFETY: fcntl on a descriptor number; failure returns -1.
        let ok = unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0;
        if ok {
            StderrCopy(fd)
        } else {
            StderrCopy::save()
        }
    }

    /// The copy's descriptor, if there is one.
    pub fn fd(&self) -> Option<i32> {
        (self.0 >= 0).then_some(self.0)
    }

    /// Puts the copy back on fd 2 and closes it.
    pub fn restore(self) {
        if self.0 >= 0 {
            // SAFETY: dup2/close on descriptors this process owns.
            unsafe {
                libc::dup2(self.0, 2);
                libc::close(self.0);
            }
        }
    }
}

/// Writes a report in one piece to lard's descriptor `fd` (its stderr
/// copy while a guest runs), or to stderr when `None`.
pub fn write_report(text: &str, fd: Option<i32>) {
    use std::io::Write;
    if text.is_empty() {
        return;
    }
    match fd {
        Some(fd) => {
            // SAFETY: fd is a descriptor lard owns for the whole run;
            // ManuallyDrop keeps it open.
            let mut f = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
            });
            let _ = f.write_all(text.as_bytes());
        }
        None => {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

/// Writes to the descriptor its cell holds (lard's log: its stderr copy
/// while a guest runs, fd 2 otherwise).
#[derive(Debug)]
pub struct FdWriter(pub std::sync::Arc<std::sync::atomic::AtomicI32>);

impl io::Write for FdWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fd = self.0.load(std::sync::atomic::Ordering::Relaxed);
        // SAFETY: write from a valid buffer to a descriptor number.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
