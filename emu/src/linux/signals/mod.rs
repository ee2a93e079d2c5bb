//! Signals, as the kernel gives them to a process (docs/processes.md):
//!
//! * [`frame`]: the kernel-layout signal frame a handler runs on, and
//!   `rt_sigreturn`; a fault runs its handler at once;
//! * [`deliver`]: signals sent to the process or to one of its threads —
//!   by itself (`kill`, `tgkill`, `raise`), by another process (through
//!   the host, [`host`]) or by a timer ([`timers`]) — pending until a
//!   thread that does not block them runs, then delivered to the guest's
//!   handler, ignored, or taking their default action; the masks
//!   (`rt_sigprocmask`), `rt_sigsuspend`, `pause`, `rt_sigpending` and
//!   `rt_sigtimedwait` (a signal taken instead of delivered);
//!   a thread waiting in a system call is interrupted (`EINTR`, or the
//!   call made again after the handler when it asked for `SA_RESTART`);
//! * [`timers`]: `alarm`, `setitimer` and POSIX timers in virtual time;
//! * [`host`]: the lard process's own handlers, mirroring the guest's
//!   dispositions so that a signal from another process reaches the guest.

mod deliver;
mod frame;
pub(crate) use frame::RED_ZONE;
pub mod host;
mod timers;

use crate::cpu::uc::Context;

/// The bit of signal `sig` (1..=64) in a signal set.
pub fn bit(sig: i32) -> u64 {
    if (1..=64).contains(&sig) {
        1u64 << (sig - 1)
    } else {
        0
    }
}

/// SIGKILL and SIGSTOP: never blocked, caught or ignored.
pub const UNBLOCKABLE: u64 = (1 << (libc::SIGKILL - 1)) | (1 << (libc::SIGSTOP - 1));

/// What a handler's `siginfo` says beyond the signal: `si_code` and the
/// two words after it (the fault address; the sender's pid and uid; a
/// timer's id, overrun and value).
#[derive(Clone, Copy, Debug)]
pub struct SigInfo {
    /// The signal.
    pub signal: i32,
    /// `si_code`.
    pub code: i32,
    /// The word at offset 16.
    pub word16: u64,
    /// The word at offset 24.
    pub word24: u64,
}

/// What caused a fault, for `siginfo`.
#[derive(Clone, Copy, Debug)]
pub struct FaultInfo {
    /// The signal.
    pub signal: i32,
    /// `si_code` (`SEGV_MAPERR`, `SEGV_ACCERR`, `ILL_ILLOPN`, …).
    pub code: i32,
    /// `si_addr`: the data address of a memory fault, else the PC.
    pub addr: u64,
}

/// A thread's signal state.
#[derive(Clone, Debug, Default)]
pub struct ThreadSignals {
    /// Blocked signals.
    pub mask: u64,
    /// Signals sent to this thread (`tgkill`, a timer's `SIGEV_THREAD_ID`,
    /// or a process-directed signal routed to it).
    pub pending: u64,
    /// `rt_sigsuspend`'s mask replaced this one until a handler runs.
    pub saved_mask: Option<u64>,
    /// The system call a signal interrupted (its number), made again after
    /// the handler when the handler has `SA_RESTART` and the call allows it.
    pub interrupted: Option<u64>,
}

impl ThreadSignals {
    /// A new thread's: its creator's mask, nothing pending.
    pub fn inherited(&self) -> ThreadSignals {
        ThreadSignals {
            mask: self.mask,
            ..ThreadSignals::default()
        }
    }
}

/// Per process: pending signals, timers, alternate stacks and the frames
/// being handled.
#[derive(Default)]
pub struct SignalState {
    /// `sigaltstack` of each thread: (tid, base, size).
    altstacks: Vec<(u32, u64, u64)>,
    /// The register context of each frame being handled: (tid, address
    /// of the frame's `ucontext`, the context at the fault).
    frames: Vec<(u32, u64, Context)>,
    /// An `rt_sigreturn` made in the system call hook, finished once the
    /// CPU has stopped: (the saved context, the frame's `ucontext`).
    pending_return: Option<(Context, u64)>,
    /// Signals sent to the process, not yet routed to a thread.
    pending: u64,
    /// The sender of each pending signal, for `siginfo`.
    info: Vec<SigInfo>,
    /// Interval timers and POSIX timers.
    timers: timers::Timers,
}

pub use deliver::Delivery;
