//! What the Linux process may touch while it makes a system call, delivers
//! a signal or waits on the host: the [`Kernel`], a view of the machine
//! with the CPU, the process, the configuration, the loaded objects (read
//! only) and the observer's fork hooks — and nothing else of observation.
//!
//! What the machine's other parts must learn leaves as [`Notice`]s, in the
//! order the kernel made them: the machine acts on them
//! (`emu/src/machine/kernel.rs`) when the call returns, before any guest
//! instruction runs and before the run loop switches threads, so each
//! notice still sees the thread and the memory it was made for.

use crate::binary::objects::{LoadedObject, ObjectRegistry};
use crate::machine::{Config, Cpu, Process};

/// What the Linux process tells the machine's other parts.
pub enum Notice {
    /// Kernel thread `child` (an index into the threads) was created by the
    /// running thread at `pc`, on the stack at `stack` (0: its creator's).
    ThreadCreated {
        /// The new thread.
        child: usize,
        /// Its stack pointer (0: it shares its creator's stack).
        stack: u64,
        /// The `clone`.
        pc: u64,
    },
    /// The running thread is about to exit, at `pc`.
    ThreadExiting {
        /// The `exit`.
        pc: u64,
    },
    /// The running thread is about to block in a system call.
    ThreadBlocking,
    /// Thread `thread` was woken at `pc` with its call's result `ret`;
    /// `futex` is the word it waited on, if it waited on one.
    ThreadWoken {
        /// The thread woken.
        thread: usize,
        /// The futex word it waited on.
        futex: Option<u64>,
        /// Its call's result.
        ret: i64,
        /// The waking call (0: a timeout or a signal).
        pc: u64,
    },
    /// The running thread woke waiters of the futex at `addr`, at `pc`.
    FutexWake {
        /// The futex word.
        addr: u64,
        /// The `futex` call.
        pc: u64,
    },
    /// An ELF object was mapped (by ld.so or `dlopen`).
    ObjectLoaded(Box<LoadedObject>),
    /// `[start, start+len)` is about to be unmapped.
    Unmapped {
        /// First byte.
        start: u64,
        /// Length in bytes.
        len: u64,
    },
    /// Executable memory `[start, start+len)` appeared (`mmap`, `mprotect`).
    CodeMapped {
        /// First byte.
        start: u64,
        /// Length in bytes.
        len: u64,
    },
}

/// The observer's part in a `fork`: observers with threads of their own
/// stop them before the host forks (the child gets only the emulation
/// thread); an observer that cannot fork says why.
pub trait ForkHooks {
    /// The process is about to fork on the host.
    fn prepare_fork(&mut self) -> Result<(), String>;
    /// The host fork happened; `child` in the new process.
    fn forked(&mut self, child: bool);
}

/// The machine as the Linux process sees it.
pub struct Kernel<'m> {
    /// Registers, memory, threads, scheduling, clocks.
    pub cpu: &'m mut Cpu,
    /// Signals, pids, descriptors, exec state.
    pub process: &'m mut Process,
    /// The run's configuration (the process identity changes in a forked
    /// child).
    pub config: &'m mut Config,
    /// The loaded objects: their names in `/proc/self/maps`, where a call
    /// was made from.
    pub objects: &'m ObjectRegistry,
    /// The observer's part in a `fork`.
    pub fork: &'m mut dyn ForkHooks,
    /// System calls made so far, this one included (seeds `getrandom`).
    pub syscalls: u64,
    /// Instructions retired so far (the process's CPU time).
    pub insns: u64,
    /// What the machine's other parts must learn, oldest first.
    pub notices: Vec<Notice>,
}

impl Kernel<'_> {
    /// Tells the machine's other parts: see [`Notice`].
    pub fn notify(&mut self, n: Notice) {
        self.notices.push(n);
    }
}
