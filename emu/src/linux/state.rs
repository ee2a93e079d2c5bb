//! The Linux process's own state: what the kernel keeps for the guest
//! beyond its threads' registers — signal dispositions, pids, the
//! executable, exit status, warnings given.

use std::collections::HashSet;

/// The Linux process part of the machine ([`crate::machine::Machine::process`]).
pub struct Process {
    /// Next kernel thread id.
    pub next_tid: u32,
    /// Sequence number for futex FIFO order.
    pub futex_seq: u64,
    /// Signal dispositions set by the guest (`struct k_sigaction`, by
    /// signal number); faults are delivered to handlers (linux::signals).
    pub sigactions: Vec<[u8; 32]>,
    /// Alternate signal stacks and the signal frames being handled.
    pub signals: super::signals::SignalState,
    /// Host wall-clock time at start (for CLOCK_REALTIME).
    pub realtime_base: u64,
    /// Absolute path of the guest executable (for /proc/self/exe).
    pub exe_path: Vec<u8>,
    /// Status of the last thread that exited (the process status if it was the last).
    pub last_exit_status: i32,
    /// Load bias of the executable (non-zero for static-PIE).
    pub load_bias: u64,
    /// Unknown system calls already warned about.
    pub warned: HashSet<u64>,
    /// Rounds of retried host waits since the start (the retry interval
    /// grows after the first few).
    pub host_retry_rounds: u32,
    /// Writes to fds 1 and 2 succeed without output: a replay under
    /// `lard run --gdb` re-executing what the guest already wrote
    /// (emu/src/gdb/replay.rs).
    pub quiet_output: bool,
}
