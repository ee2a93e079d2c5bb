//! The CPU part of the machine.

use super::GuestFault;
use super::Machine;
use super::Stop;
use super::Thread;
use super::ThreadState;
use crate::cpu::memory::Memory;
use crate::cpu::sched::Scheduler;
use crate::cpu::thread_sets::ThreadSets;
use crate::cpu::uc::Clock;
use crate::cpu::uc::UcRef;
use crate::cpu::vclock::VcFile;
use lard_detector_hw::clock::Endings;
use lard_detector_hw::event::Origin;

/// The CPU part of the machine ([`Machine::cpu`]): the unicorn engine,
/// guest memory, the guest's threads multiplexed on it, scheduling,
/// virtual time and the LARDx86 units' architectural clocks.
pub struct Cpu {
    /// The CPU.
    pub uc: UcRef,
    /// Guest memory.
    pub mem: Memory,
    /// All threads ever created (exited ones stay, for statistics). Their
    /// states change through [`Cpu::set_state`] only.
    pub threads: Vec<Thread>,
    /// The threads in each state looked up often ([`ThreadSets`]).
    pub sets: ThreadSets,
    /// Index of the running thread.
    pub cur: usize,
    /// Scheduler.
    pub sched: Scheduler,
    /// Architectural vector clocks (ReadVC/WriteVC state).
    pub vc: VcFile,
    /// Identities that ended and still run on their kernel thread: their
    /// architectural clocks go as the detectors' do (`Endings`).
    pub endings: Endings,
    /// Instruction count and quantum, kept by translated code.
    pub clock: Clock,
    /// `clock.insns()` when the counters below last caught up with it.
    pub clock_seen: u64,
    /// Virtual time in nanoseconds (1 ns per instruction plus sleeps).
    pub vtime: u64,
    /// Stop once this many instructions have retired (`--max-insns`;
    /// `u64::MAX` when unlimited).
    pub insn_limit: u64,
    /// Set to a signal number when lard is asked to stop (SIGINT, SIGTERM:
    /// [`crate::run::RunLimits::interrupt`]): a system call then waits for
    /// nothing, the run loop stops first.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
    /// Set when the run's wall-clock limit passed (`--timeout`; set by the
    /// run's watchdog, crate::run): a system call then waits for nothing,
    /// the run loop stops first.
    pub timed_out: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Why emulation stopped, set by hooks.
    pub stop: Option<Stop>,
    /// Last invalid memory access (address, kind) seen by the fault hook.
    pub bad_access: Option<(u64, &'static str)>,
}

impl Cpu {
    /// Puts thread `i` in `state`, in [`Cpu::sets`] too.
    pub fn set_state(&mut self, i: usize, state: ThreadState) {
        let t = &mut self.threads[i];
        let old = std::mem::replace(&mut t.state, state);
        self.sets.leave(i, &old);
        self.sets.enter(i, &t.state, t.clear_child_tid);
    }

    /// Adds a thread; returns its index.
    pub fn push_thread(&mut self, t: Thread) -> usize {
        let i = self.threads.len();
        self.sets.enter(i, &t.state, t.clear_child_tid);
        self.threads.push(t);
        i
    }
}

impl Machine {
    /// The origin of events from the running thread.
    #[inline]
    pub fn origin(&self) -> Origin {
        self.cpu.threads[self.cpu.cur].origin()
    }

    /// Credits the instructions translated code has counted since the last
    /// call to the running thread, the statistics and virtual time. Called
    /// where they are read: at system calls and when `uc_emu_start` returns
    /// (threads switch only then).
    #[inline]
    pub fn sync_clock(&mut self) {
        if let Some(c) = self.obs.binary.as_mut().and_then(|rt| rt.counted.as_mut()) {
            self.obs.stats.sync_events += c.take_atomics();
        }
        let now = self.cpu.clock.insns();
        let n = now - self.cpu.clock_seen;
        self.cpu.clock_seen = now;
        self.cpu.threads[self.cpu.cur].insns += n;
        self.obs.stats.insns += n;
        self.cpu.vtime += n;
    }

    /// Why translated code stopped by itself, if it did: the instruction
    /// limit (checked first, at block granularity: the run stops at the
    /// first block entry at or past it) or the end of the quantum.
    pub fn clock_stop(&self) -> Option<Stop> {
        if self.obs.stats.insns >= self.cpu.insn_limit {
            Some(Stop::InsnLimit)
        } else if self.cpu.clock.blocks_left() <= 0 {
            Some(Stop::Preempt)
        } else {
            None
        }
    }

    /// Stops emulation with a guest fault.
    pub fn fault(&mut self, f: GuestFault) {
        if self.cpu.stop.is_none() {
            self.cpu.stop = Some(Stop::Fault(f));
        }
        self.cpu.uc.stop();
    }
}
