//! Setting up a process and running it to completion: `lard run`.
//! The emulator is set up in `setup.rs` and runs in `run_loop.rs`.

mod run_loop;
mod setup;
mod watchdog;

pub use setup::SetupError;

use crate::cpu::uc::Uc;
use crate::machine::{GuestFault, Machine};
use crate::observe::observer::AccessMode;
use crate::observe::stats::Report;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The process exited with this status.
    Exited(i32),
    /// The process was killed by a signal (abort) or faulted.
    Signaled {
        /// The signal.
        signal: i32,
        /// The fault, if the CPU raised one.
        fault: Option<GuestFault>,
    },
    /// Every live thread was blocked with no timeout pending.
    Deadlock(String),
    /// An unknown system call under `--strict-syscalls`.
    UnsupportedSyscall {
        /// System call number.
        nr: u64,
        /// Where it was made.
        pc: u64,
    },
    /// Under a debugger that asked for it ([`Emulator::stop_for_signals`]),
    /// the running thread is about to take `signal`: resuming delivers it,
    /// unless [`Emulator::discard_signal`] dropped it.
    SignalStop {
        /// The signal.
        signal: i32,
    },
    /// An observer stopped the guest before the instruction at `pc`.
    ObserverStop {
        /// The instruction that did not execute.
        pc: u64,
    },
    /// The process called `execve`: the caller runs the new program in
    /// this process's place ([`crate::linux::process`]).
    Exec(Box<crate::linux::process::ExecRequest>),
    /// lard stopped the guest from outside (a limit or a signal to lard);
    /// everything observed up to that point is reported.
    Stopped(StopReason),
    /// A debugger paused the guest (`lard run --gdb`): [`Emulator::resume`]
    /// continues it exactly where it stopped.
    Paused,
}

/// Why lard stopped a guest that had not ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `--max-insns`: this many instructions had retired.
    MaxInsns(u64),
    /// `--timeout`: the wall-clock limit passed.
    Timeout(Duration),
    /// lard received this signal (SIGINT or SIGTERM).
    Signal(i32),
}

/// Limits on a run, checked between quanta (wall clock, signals) and at
/// every basic block (instructions).
#[derive(Clone, Debug, Default)]
pub struct RunLimits {
    /// Stop after this many instructions (all threads).
    pub max_insns: Option<u64>,
    /// Stop after this much wall-clock time.
    pub timeout: Option<Duration>,
    /// Stop when this becomes non-zero (a signal number set by a signal
    /// handler the caller installed, e.g. with `signal_hook::flag`).
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// A loaded process, ready to run.
pub struct Emulator {
    // Field order matters: the machine (which holds contexts and host memory)
    // must be dropped before the engine is closed.
    machine: Box<Machine>,
    _uc: Uc,
    started: Option<Instant>,
    wall: Duration,
    limits: RunLimits,
    /// The thread whose registers are in the CPU (kept across a pause).
    live: usize,
    /// The scheduler must pick the next thread (kept across a pause).
    rotate: bool,
    /// Blocks left of the quantum a debugger's pause interrupted: the
    /// resumed quantum continues it rather than drawing a new one.
    paused_quantum: Option<i64>,
    /// A signal a thread is about to take stops the run first
    /// ([`Outcome::SignalStop`]).
    signal_stops: bool,
    /// The signal stop last reported (thread index, signal): the resumed
    /// run delivers it rather than stopping again.
    signal_reported: Option<(usize, i32)>,
    /// The wall-clock limit's watchdog while [`Emulator::resume`] runs,
    /// with the guest pid of the process it was started in.
    watchdog: Option<(u32, watchdog::Watchdog)>,
}

impl Emulator {
    /// The machine (statistics, symbols, observer) after or during a run.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The machine, mutably (to take the observer back, for instance).
    pub fn machine_mut(&mut self) -> &mut Machine {
        &mut self.machine
    }

    /// Sets the limits of the next [`Emulator::run`].
    pub fn set_limits(&mut self, limits: RunLimits) {
        self.machine.cpu.insn_limit = limits.max_insns.unwrap_or(u64::MAX);
        self.machine.cpu.interrupt = limits.interrupt.clone();
        self.limits = limits;
    }

    /// The signal lard received (SIGINT, SIGTERM), if one arrived since the
    /// limits were set (a caller waiting outside [`Emulator::resume`]).
    pub fn interrupted(&self) -> Option<i32> {
        let sig = self.limits.interrupt.as_ref()?.load(Ordering::Relaxed);
        (sig != 0).then_some(sig as i32)
    }

    /// Keeps a watchdog on the wall-clock limit ([`watchdog`]): a guest
    /// blocked in a host call is stopped at the deadline too. Started at
    /// the first quantum and again in a forked child (whose guest pid is
    /// new: fork copied only the emulating thread).
    fn keep_watchdog(&mut self, start: Instant) {
        let Some(t) = self.limits.timeout else {
            return;
        };
        let pid = self.machine.config.process.pid;
        if self.watchdog.as_ref().is_some_and(|w| w.0 == pid) {
            return;
        }
        self.watchdog = None;
        let flag = self.machine.cpu.timed_out.clone();
        self.watchdog = watchdog::Watchdog::start(start + t, flag).map(|w| (pid, w));
    }

    /// The reason to stop now, if a wall-clock or signal limit was hit.
    fn external_stop(&self, start: Instant) -> Option<StopReason> {
        if let Some(flag) = &self.limits.interrupt {
            let sig = flag.load(Ordering::Relaxed);
            if sig != 0 {
                return Some(StopReason::Signal(sig as i32));
            }
        }
        match self.limits.timeout {
            Some(t) if start.elapsed() >= t => Some(StopReason::Timeout(t)),
            _ => None,
        }
    }

    /// Runs until the process ends, deadlocks, faults or is stopped.
    pub fn run(&mut self) -> Outcome {
        let out = self.resume();
        self.finish();
        out
    }

    /// Runs until the process ends, deadlocks, faults, is stopped or a
    /// debugger pauses it ([`Outcome::Paused`]: call again to continue);
    /// [`Emulator::finish`] ends the run.
    pub fn resume(&mut self) -> Outcome {
        let start = *self.started.get_or_insert_with(Instant::now);
        let out = self.run_loop();
        self.watchdog = None;
        self.wall = start.elapsed();
        out
    }

    /// From now on, a signal a thread is about to take (one it handles,
    /// or one whose default action ends the process) stops the run first,
    /// as ptrace shows signals to gdb.
    pub fn stop_for_signals(&mut self) {
        self.signal_stops = true;
    }

    /// Drops the signal the last [`Outcome::SignalStop`] reported (gdb
    /// resumed without it: `signal 0`, `handle SIG nopass`).
    pub fn discard_signal(&mut self) {
        if let Some((i, sig)) = self.signal_reported.take() {
            self.machine.discard_signal(i, sig);
        }
    }

    /// Ends the run: the observer finishes (a detector thread drains).
    pub fn finish(&mut self) {
        self.machine.obs.observer.finish();
    }

    /// The index of the thread whose registers are in the CPU (the others'
    /// are in their saved contexts).
    pub fn live_thread(&self) -> usize {
        self.live
    }

    /// The statistics report of the finished run.
    pub fn report(&self) -> Report<'_> {
        let m = &self.machine;
        Report {
            stats: &m.obs.stats,
            threads: m
                .cpu
                .threads
                .iter()
                .map(|t| (t.tid, t.lthread, t.insns))
                .collect(),
            wall: self.wall,
            observed: match m.obs.policy.observed() {
                AccessMode::None => "none",
                AccessMode::Tracked => "tracked",
                AccessMode::All => "all",
            },
            event_hash: m.obs.observer.stream_hash(),
        }
    }

    /// Describes a code address: `symbol+off` and the disassembled instruction.
    pub fn describe(&self, pc: u64) -> String {
        self.machine.describe_pc(pc)
    }
}
