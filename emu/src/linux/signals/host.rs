//! The lard process's own signal handlers. A signal another process sends
//! to a guest process arrives at the lard process that emulates it; for
//! every signal the guest handles, lard handles it on the host and makes
//! it pending for the guest; for one the guest ignores, the host ignores
//! it; for one at its default action, the host's action before the guest
//! changed it comes back (the default action: the lard process dies of the
//! signal, as the guest would; for `SIGINT` and `SIGTERM`, lard's own
//! handler, which stops the run and prints the reports).
//!
//! Not mirrored: the signals of faults (lard's own), `SIGPIPE` (lard
//! ignores it and sends it to the guest itself) and the real-time signals
//! (the C library's own, for lard's threads).
//!
//! A C signal handler has no context argument: what it records is in the
//! statics below, the only process-wide state of the emulator.

use super::bit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Signals received and not yet taken by the run loop.
static RECEIVED: AtomicU64 = AtomicU64::new(0);
/// Signals whose host handler is installed.
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// The host's actions the mirroring replaced, restored when the guest
/// goes back to the default action.
static ORIGINAL: Mutex<Vec<(i32, libc::sigaction)>> = Mutex::new(Vec::new());

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.fetch_or(bit(sig), Ordering::SeqCst);
}

/// Whether lard mirrors the guest's disposition of `sig` on the host.
fn mirrored(sig: i32) -> bool {
    (1..32).contains(&sig)
        && ![
            libc::SIGKILL,
            libc::SIGSTOP,
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGTRAP,
            libc::SIGPIPE,
        ]
        .contains(&sig)
}

/// Installs on the host the disposition the guest gave `sig`: `handler`
/// 0 (`SIG_DFL`), 1 (`SIG_IGN`) or an address (a handler).
pub fn mirror(sig: i32, handler: u64) {
    if !mirrored(sig) {
        return;
    }
    let mut original = ORIGINAL.lock().unwrap_or_else(|e| e.into_inner());
    let saved = original.iter().position(|o| o.0 == sig);
    if handler == 0 {
        if let Some(i) = saved {
            let (_, old) = original.remove(i);
            // SAFETY: `old` is an action sigaction returned.
            unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) };
        }
    } else {
        let action = if handler == 1 {
            libc::SIG_IGN
        } else {
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t
        };
        // SAFETY: a zeroed sigaction is valid; the handler only does an
        // atomic or (async-signal-safe). No SA_RESTART: a host call lard is
        // blocked in returns EINTR, so the guest's handler runs promptly.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = action;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, &sa, &mut old);
            if saved.is_none() {
                original.push((sig, old));
            }
        }
    }
    if handler > 1 {
        HANDLED.fetch_or(bit(sig), Ordering::SeqCst);
    } else {
        HANDLED.fetch_and(!bit(sig), Ordering::SeqCst);
    }
}

/// Takes the signals received since the last call.
pub fn take() -> u64 {
    if RECEIVED.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    RECEIVED.swap(0, Ordering::SeqCst)
}

/// Whether a signal was received and not yet taken.
pub fn any() -> bool {
    RECEIVED.load(Ordering::Relaxed) != 0
}

/// Whether the guest handles a signal another process may send: the run
/// loop then waits for one instead of declaring a deadlock.
pub fn handled() -> bool {
    HANDLED.load(Ordering::Relaxed) != 0
}

/// The guest dispositions a new program inherits from the host: a signal
/// ignored across `execve` stays ignored (`nohup`, a shell's background
/// jobs). Returns the ignored signals.
pub fn inherited_ignored() -> u64 {
    let mut set = 0;
    for sig in 1..32 {
        if !mirrored(sig) {
            continue;
        }
        // SAFETY: a query; `old` is written by the kernel.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        };
        if ignored {
            set |= bit(sig);
        }
    }
    set
}

/// Before an `execve`: blocks `mask` on the host, where the new program
/// (or the lard that emulates it) finds it, as the kernel keeps a mask
/// across `execve`.
pub fn block_for_exec(mask: u64) {
    // SAFETY: a signal set built with sigemptyset/sigaddset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in 1..=64 {
            if mask & bit(sig) != 0 {
                libc::sigaddset(&mut set, sig);
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// Before an `execve` of a program run natively: every signal with a
/// handler on the host (lard's own, or one mirroring the guest's) goes
/// back to its default action, as the exec will do.
pub fn default_handled() {
    for sig in 1..32 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: querying an action, and setting SIG_DFL.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_IGN
                && old.sa_sigaction != libc::SIG_DFL
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
}

/// At the start of a program: the signal mask it inherited (what an
/// `execve` kept blocked on the host), which becomes its first thread's;
/// the host's is cleared (lard blocks nothing itself).
pub fn inherited_mask() -> u64 {
    let mut mask = 0;
    // SAFETY: querying and clearing this thread's mask with valid sets.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, &mut old);
        for sig in 1..=64 {
            if libc::sigismember(&old, sig) == 1 {
                mask |= bit(sig);
            }
        }
    }
    mask & !super::UNBLOCKABLE
}
