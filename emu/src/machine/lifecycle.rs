//! A guest thread's life as the machine's other parts learn of it: the
//! notification points the Linux process's notices reach (`kernel.rs`)
//! when a thread is created, blocks, is woken or exits, beside
//! `object_mapped` and `unmapped` for code. Every mechanism that acts on a
//! thread's life runs from here: its stack mapping, the low-level
//! synchronization and object events, binary mode's language threads.

use super::{Machine, Stop};
use crate::cpu::uc::Reg;
use lard_detector_hw::event::{EventKind, LowLevelSync, ProgramEvent};

impl Machine {
    /// Kernel thread `child` (an index into the threads) was just created
    /// by the running thread at `pc`, on the stack at `stack` (0: it shares
    /// its creator's).
    pub fn thread_created(&mut self, child: usize, stack: u64, pc: u64) {
        if stack != 0 {
            self.add_stack(stack);
        }
        self.thread_added();
        let tid = self.cpu.threads[child].tid;
        self.emit_sync(pc, LowLevelSync::ThreadCreate { child: tid });
        if self.obs.binary.is_some() {
            self.binary_clone(child, pc);
        }
    }

    /// The running thread is about to exit, at `pc`.
    pub fn thread_exiting(&mut self, pc: u64) {
        self.emit_sync(pc, LowLevelSync::ThreadExit);
        if self.obs.binary.is_some() {
            self.binary_exit(pc);
        }
    }

    /// The running thread is about to block in a system call.
    pub fn thread_blocking(&mut self) {
        if self.obs.report_objects {
            let pc = self.cpu.uc.reg(Reg::RIP);
            self.obs.stats.program_events += 1;
            self.emit(pc, EventKind::Program(ProgramEvent::Block));
        }
    }

    /// Thread `i` was woken at `pc` with its call's result `ret`; `futex`
    /// is the word it waited on, if it waited on one. A futex wait that
    /// returns 0 synchronizes with the wake, and with the exit of the
    /// thread whose `clear_child_tid` the word is (a join).
    pub fn thread_woken(&mut self, i: usize, futex: Option<u64>, ret: i64, pc: u64) {
        let origin = self.cpu.threads[i].origin();
        if self.obs.report_objects {
            self.obs.stats.program_events += 1;
            self.emit_from(origin, pc, EventKind::Program(ProgramEvent::Wake));
        }
        if let (Some(addr), 0) = (futex, ret) {
            // The last thread to exit with that word.
            let joined = self
                .cpu
                .sets
                .exited_ctid
                .get(&addr)
                .map(|&c| self.cpu.threads[c].tid);
            let mut events = vec![LowLevelSync::FutexWaitDone { addr }];
            if let Some(child) = joined {
                events.push(LowLevelSync::ThreadJoin { child });
            }
            for s in events {
                self.obs.stats.sync_events += 1;
                if self.obs.report_sync {
                    self.emit_from(origin, pc, EventKind::Sync(s));
                }
            }
        }
    }

    /// A thread was created: a quantum that began with its creator alone
    /// ends after the `clone` (emu/src/cpu/sched.rs).
    fn thread_added(&mut self) {
        if self.cpu.sched.created_in_quantum() && self.cpu.stop.is_none() {
            self.cpu.stop = Some(Stop::Contended);
            self.cpu.uc.stop();
        }
    }
}
