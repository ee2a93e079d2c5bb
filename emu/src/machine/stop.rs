//! Why emulation stopped, and guest faults.

use crate::linux::process::ExecRequest;

/// Why `uc_emu_start` returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The quantum expired.
    Preempt,
    /// The running thread created one in a quantum that began with it
    /// alone: it goes on in a new quantum (emu/src/cpu/sched.rs).
    Contended,
    /// The current thread blocked in a system call.
    Blocked,
    /// The current thread exited.
    ThreadExit,
    /// The process exited with this status.
    ExitGroup(i32),
    /// The process was killed by a signal (e.g. abort → SIGABRT).
    Killed(i32),
    /// A fault at this PC.
    Fault(GuestFault),
    /// An unknown system call under --strict-syscalls.
    StrictSyscall(u64),
    /// An observer asked to stop before the instruction at this PC.
    ObserverStop(u64),
    /// The instruction limit (`--max-insns`) was reached.
    InsnLimit,
    /// The process called `execve` of a runnable program: lard hands it
    /// over to a new lard ([`crate::linux::process`]).
    Exec(Box<ExecRequest>),
    /// A debugger stopped the running thread before the instruction at its
    /// RIP (`lard run --gdb`, emu/src/gdb/); the run can resume.
    Debug,
}

/// A guest fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestFault {
    /// Signal a kernel would deliver.
    pub signal: i32,
    /// Faulting instruction.
    pub pc: u64,
    /// Faulting data address, for memory faults.
    pub addr: Option<u64>,
    /// What happened, in words.
    pub what: String,
}
