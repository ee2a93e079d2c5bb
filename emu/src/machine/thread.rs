//! Guest threads and what a blocked one waits for.

use crate::cpu::uc::Context;
use lard_detector_hw::event::Origin;

/// What a blocked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A futex word, with the FUTEX_WAIT_BITSET mask and an optional deadline
    /// in virtual nanoseconds.
    Futex {
        /// Guest address of the futex word.
        addr: u64,
        /// Wake mask.
        bitset: u32,
        /// Virtual-time deadline.
        deadline: Option<u64>,
        /// FIFO order among waiters.
        seq: u64,
    },
    /// `pause` or `rt_sigsuspend`: until a signal is delivered.
    Signal,
    /// `rt_sigtimedwait`: until a signal of `set` is pending (taken instead
    /// of delivered), another signal is delivered, or the deadline.
    SigWait {
        /// The signals waited for.
        set: u64,
        /// Where the taken signal's `siginfo` goes (0: nowhere).
        info: u64,
        /// The thread's mask before the call (the kernel unblocks `set`
        /// while it waits).
        mask: u64,
        /// Virtual-time deadline (the call then fails with `EAGAIN`).
        deadline: Option<u64>,
    },
    /// A sleep until a virtual-time deadline.
    Sleep {
        /// Virtual-time deadline.
        deadline: u64,
    },
    /// A system call waiting for a host descriptor to be ready; made again
    /// when it is (docs/processes.md, linux::host_wait).
    Io {
        /// The descriptor.
        fd: i32,
        /// `poll` events.
        events: i16,
        /// Virtual-time deadline (the call then returns 0).
        deadline: Option<u64>,
    },
    /// A system call that would wait on the host and cannot be polled
    /// (`select`, `wait4`): made again every few milliseconds.
    Retry {
        /// Virtual-time deadline.
        deadline: Option<u64>,
        /// What the call returns at the deadline (0, or `-ETIMEDOUT` for a
        /// futex).
        expired: i64,
    },
}

/// Scheduling state of a guest thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Ready to run.
    Runnable,
    /// Blocked in a system call.
    Blocked(Wait),
    /// Gone.
    Exited,
}

impl ThreadState {
    /// The state in a few words, for `monitor threads` and gdb's thread
    /// list.
    pub fn describe(&self) -> String {
        match *self {
            ThreadState::Runnable => "runnable".into(),
            ThreadState::Exited => "exited".into(),
            ThreadState::Blocked(Wait::Futex { addr, .. }) => format!("futex wait on {addr:#x}"),
            ThreadState::Blocked(Wait::Sleep { .. }) => "sleeping".into(),
            ThreadState::Blocked(Wait::Signal | Wait::SigWait { .. }) => {
                "waits for a signal".into()
            }
            ThreadState::Blocked(Wait::Io { fd, .. }) => format!("waits on descriptor {fd}"),
            ThreadState::Blocked(Wait::Retry { .. }) => "waits on the host".into(),
        }
    }
}

/// One guest thread.
pub struct Thread {
    /// Kernel thread id.
    pub tid: u32,
    /// Saved registers while not running.
    pub ctx: Context,
    /// Scheduling state.
    pub state: ThreadState,
    /// CLONE_CHILD_CLEARTID / set_tid_address word.
    pub clear_child_tid: u64,
    /// The language thread declared with the Thread op, if any.
    pub lthread: Option<u64>,
    /// Simulated core.
    pub core: u16,
    /// Instructions retired.
    pub insns: u64,
    /// The thread that created it (for the join event), if any.
    pub parent: Option<u32>,
    /// The deadline of a host wait whose call is being made again
    /// (linux::host_wait): the new call keeps it.
    pub restart_deadline: Option<u64>,
    /// `ctx` was changed while the thread waited (a wake's return value, a
    /// restarted call's RIP): the run loop loads it into the CPU even if
    /// the CPU still holds this thread's registers.
    pub ctx_changed: bool,
    /// Its name (`prctl(PR_SET_NAME)`, the kernel's `comm`): NUL-padded,
    /// at most 15 bytes; a new thread starts with its creator's.
    pub name: [u8; 16],
    /// Its signal mask and the signals sent to it (linux::signals).
    pub sig: crate::linux::signals::ThreadSignals,
    /// A blocking pipe write made a part at a time (linux::host_wait):
    /// its buffer, its length and the bytes written so far.
    pub partial_write: Option<(u64, u64, u64)>,
}

impl Thread {
    /// The origin of the events this thread makes: its kernel thread, its
    /// current language thread and its core.
    #[inline]
    pub fn origin(&self) -> Origin {
        Origin {
            kthread: self.tid,
            lthread: self.lthread,
            core: self.core,
        }
    }
}

/// A thread name (`comm`) from `bytes`: the first 15, NUL-padded.
pub fn thread_name(bytes: &[u8]) -> [u8; 16] {
    let mut n = [0u8; 16];
    let len = bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(bytes.len())
        .min(15);
    n[..len].copy_from_slice(&bytes[..len]);
    n
}
