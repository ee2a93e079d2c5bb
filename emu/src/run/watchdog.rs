//! The wall-clock limit (`--timeout`) of a run that may block in the host:
//! a guest thread waiting in a host call (a `read` of input that never
//! comes, an `accept`) does not return to the run loop, which checks the
//! limit. At the deadline a watchdog thread sets the run's flag
//! ([`crate::machine::Cpu::timed_out`]) and signals the emulating thread
//! with lard's own kick signal, whose handler does nothing and does not restart the call: the
//! call returns `EINTR`, and the system-call path sees the flag and stops
//! the guest before making it again, as for SIGINT and SIGTERM
//! (linux::syscalls). The kick repeats until the run returns, so a call
//! entered just after a kick is interrupted by the next.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the kick repeats until the run returns.
const KICK_EVERY: Duration = Duration::from_millis(50);

/// lard's own signal for interrupting a host call: the last real-time
/// signal, which neither the C library nor guest signal mirroring uses
/// (linux::signals::host).
fn kick_signal() -> libc::c_int {
    libc::SIGRTMAX()
}

extern "C" fn on_kick(_sig: libc::c_int) {}

fn install_kick_handler() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction is valid; the handler does nothing
        // (async-signal-safe). No SA_RESTART: a blocked call returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_kick as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(kick_signal(), &sa, std::ptr::null_mut());
        }
    });
}

/// A watchdog for one [`super::Emulator::resume`]: stops when dropped.
pub(super) struct Watchdog {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The host process it runs in: a forked child has no watchdog thread
    /// (fork copies only the emulating thread) and starts its own.
    pid: u32,
}

impl Watchdog {
    /// Watches the calling thread: at `deadline`, sets `flag` and kicks
    /// the thread until the watchdog is dropped.
    pub(super) fn start(deadline: Instant, flag: Arc<AtomicBool>) -> Option<Watchdog> {
        install_kick_handler();
        // SAFETY: the id of the calling thread, which outlives the
        // watchdog (dropped, and joined, before `resume` returns).
        let target = unsafe { libc::pthread_self() };
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::Builder::new()
            .name("lard-timeout".into())
            .spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let now = Instant::now();
                    if now < deadline {
                        std::thread::park_timeout(deadline - now);
                        continue;
                    }
                    flag.store(true, Ordering::SeqCst);
                    // SAFETY: `target` is alive until this thread is joined.
                    unsafe { libc::pthread_kill(target, kick_signal()) };
                    std::thread::park_timeout(KICK_EVERY);
                }
            })
            .ok()?;
        Some(Watchdog {
            done,
            thread: Some(thread),
            pid: std::process::id(),
        })
    }

    /// Whether its thread runs in this process (not in a forked child's
    /// copy of the parent's memory).
    pub(super) fn here(&self) -> bool {
        self.pid == std::process::id()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            if !self.here() {
                // The parent's thread: nothing to stop or join here.
                std::mem::forget(t);
                return;
            }
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
