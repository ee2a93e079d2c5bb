//! Guest threads that wait in a system call: blocking one, waking one with
//! its call's result, and ending waits whose virtual-time deadline passed.

use super::{NoReturn, Ret, EAGAIN, ETIMEDOUT};
use crate::cpu::uc::Reg;
use crate::machine::{Machine, Stop, ThreadState, Wait};
use lard_detector_hw::event::{EventKind, LowLevelSync, ProgramEvent};

impl Machine {
    /// Blocks the current thread; the run loop picks another.
    pub(in crate::linux) fn block(&mut self, w: Wait) -> Ret {
        if self.obs.report_objects {
            let pc = self.cpu.uc.reg(Reg::RIP);
            self.obs.stats.program_events += 1;
            self.emit(pc, EventKind::Program(ProgramEvent::Block));
        }
        self.cpu.threads[self.cpu.cur].state = ThreadState::Blocked(w);
        self.cpu.stop = Some(Stop::Blocked);
        self.cpu.uc.stop();
        NoReturn
    }

    /// Makes thread `i` runnable with system-call result `ret`.
    /// Wakes waiting thread `i` with `ret` as its call's result (a
    /// signal's `EINTR`).
    pub(crate) fn wake_thread(&mut self, i: usize, ret: i64) {
        self.wake(i, ret, 0);
    }

    pub(super) fn wake(&mut self, i: usize, ret: i64, pc: u64) {
        let addr = match self.cpu.threads[i].state {
            ThreadState::Blocked(Wait::Futex { addr, .. }) => Some(addr),
            _ => None,
        };
        self.cpu.threads[i].state = ThreadState::Runnable;
        self.cpu.threads[i].ctx.set_reg(Reg::RAX, ret as u64);
        self.cpu.threads[i].ctx_changed = true;
        let origin = self.cpu.threads[i].origin();
        if self.obs.report_objects {
            self.obs.stats.program_events += 1;
            self.emit_from(origin, pc, EventKind::Program(ProgramEvent::Wake));
        }
        if let (Some(addr), 0) = (addr, ret) {
            let joined = self
                .cpu
                .threads
                .iter()
                .find(|c| c.state == ThreadState::Exited && c.clear_child_tid == addr)
                .map(|c| c.tid);
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

    /// Wakes threads whose timed wait expired at the current virtual time.
    pub fn expire_timeouts(&mut self) {
        let now = self.cpu.vtime;
        for i in 0..self.cpu.threads.len() {
            let deadline = match self.cpu.threads[i].state {
                ThreadState::Blocked(Wait::Futex {
                    deadline: Some(d), ..
                }) => Some((d, -ETIMEDOUT)),
                ThreadState::Blocked(Wait::Sleep { deadline }) => Some((deadline, 0)),
                ThreadState::Blocked(Wait::SigWait {
                    deadline: Some(d),
                    mask,
                    ..
                }) => {
                    if d <= now {
                        self.cpu.threads[i].sig.mask = mask;
                    }
                    Some((d, -EAGAIN))
                }
                // A host wait whose timeout passed returns 0 (nothing
                // ready), a futex wait in shared memory -ETIMEDOUT.
                ThreadState::Blocked(Wait::Io {
                    deadline: Some(d), ..
                }) => Some((d, 0)),
                ThreadState::Blocked(Wait::Retry {
                    deadline: Some(d),
                    expired,
                }) => Some((d, expired)),
                _ => None,
            };
            if let Some((d, ret)) = deadline {
                if d <= now {
                    self.wake(i, ret, 0);
                }
            }
        }
    }
}
