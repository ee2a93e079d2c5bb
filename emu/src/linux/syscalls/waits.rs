//! Guest threads that wait in a system call: blocking one, waking one with
//! its call's result, and ending waits whose virtual-time deadline passed.

use super::{NoReturn, Ret, EAGAIN, ETIMEDOUT};
use crate::cpu::uc::Reg;
use crate::linux::kernel::{Kernel, Notice};
use crate::machine::{Stop, ThreadState, Wait};

impl Kernel<'_> {
    /// Blocks the current thread; the run loop picks another.
    pub(in crate::linux) fn block(&mut self, w: Wait) -> Ret {
        self.notify(Notice::ThreadBlocking);
        self.cpu.set_state(self.cpu.cur, ThreadState::Blocked(w));
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
        self.cpu.set_state(i, ThreadState::Runnable);
        self.cpu.threads[i].ctx.set_reg(Reg::RAX, ret as u64);
        self.cpu.threads[i].ctx_changed = true;
        self.notify(Notice::ThreadWoken {
            thread: i,
            futex: addr,
            ret,
            pc,
        });
    }

    /// Wakes threads whose timed wait expired at the current virtual time,
    /// in thread order.
    pub fn expire_timeouts(&mut self) {
        let now = self.cpu.vtime;
        let mut due: Vec<usize> = self
            .cpu
            .sets
            .timed
            .iter()
            .take_while(|&&(d, _)| d <= now)
            .map(|&(_, i)| i)
            .collect();
        due.sort_unstable();
        for i in due {
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
