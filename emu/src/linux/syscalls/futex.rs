//! `futex`: waits and wakes on guest words, emulated (a word in shared
//! memory is waited on by retrying, as another process may wake it).

use super::{Call, Made, Ret, Val, EAGAIN, EFAULT, EINVAL, ENOSYS, ETIMEDOUT};
use crate::linux::kernel::{Kernel, Notice};
use crate::machine::Stop;
use crate::machine::{ThreadState, Wait};
use syscalls::Sysno;

impl Kernel<'_> {
    /// The futex call.
    pub(super) fn futex_call(&mut self, c: &mut Call) -> Made {
        let (a, pc) = (c.a, c.pc);
        Ok(match c.sys {
            Sysno::futex => self.sys_futex(a, pc),
            _ => return self.unsupported(c),
        })
    }

    /// Wakes up to `n` futex waiters on `addr` whose mask intersects `bitset`.
    pub fn futex_wake(&mut self, addr: u64, n: u64, bitset: u32, pc: u64) -> u64 {
        // Oldest wait first.
        let threads = &self.cpu.threads;
        let waiters: Vec<(u64, usize)> = self
            .cpu
            .sets
            .futex_waiters(addr)
            .filter(|&(_, i)| {
                matches!(threads[i].state,
                    ThreadState::Blocked(Wait::Futex { bitset: b, .. }) if b & bitset != 0)
            })
            .take(n.min(usize::MAX as u64) as usize)
            .collect();
        // The waker's release comes before the woken threads' acquires.
        if !waiters.is_empty() {
            self.notify(Notice::FutexWake { addr, pc });
        }
        for &(_, i) in &waiters {
            self.wake(i, 0, pc);
        }
        waiters.len() as u64
    }

    fn sys_futex(&mut self, a: [u64; 6], pc: u64) -> Ret {
        let [uaddr, op, val, timeout, uaddr2, val3] = a;
        let cmd = op & 0x7f;
        let realtime = op & 256 != 0;
        match cmd {
            // WAIT, WAIT_BITSET
            0 | 9 => {
                let Some(cur) = self.cpu.mem.read_u32(uaddr) else {
                    return Val(-EFAULT);
                };
                if cur != val as u32 {
                    return Val(-EAGAIN);
                }
                let bitset = if cmd == 9 { val3 as u32 } else { u32::MAX };
                if bitset == 0 {
                    return Val(-EINVAL);
                }
                let deadline = if timeout == 0 {
                    None
                } else {
                    let Some(t) = self.read_timespec(timeout) else {
                        return Val(-EFAULT);
                    };
                    Some(if cmd == 0 {
                        self.cpu.vtime.saturating_add(t)
                    } else if realtime {
                        t.saturating_sub(self.process.realtime_base)
                    } else {
                        t
                    })
                };
                // A futex word in shared memory may be woken by another
                // process: the wait is made again every few milliseconds
                // (a wait may end early: callers check the word again).
                if self.cpu.mem.is_shared(uaddr) {
                    let deadline = match self.cpu.threads[self.cpu.cur].restart_deadline.take() {
                        Some(d) => Some(d),
                        None => deadline,
                    };
                    return self.block(Wait::Retry {
                        deadline,
                        expired: -ETIMEDOUT,
                    });
                }
                self.process.futex_seq += 1;
                self.block(Wait::Futex {
                    addr: uaddr,
                    bitset,
                    deadline,
                    seq: self.process.futex_seq,
                })
            }
            // WAKE, WAKE_BITSET
            1 | 10 => {
                let bitset = if cmd == 10 { val3 as u32 } else { u32::MAX };
                let woken = self.futex_wake(uaddr, val, bitset, pc);
                if woken > 0
                    && self.cpu.stop.is_none()
                    && self.cpu.sched.preempt_on_wake(self.cpu.clock.blocks_left())
                {
                    self.cpu.stop = Some(Stop::Preempt);
                    self.cpu.uc.stop();
                }
                Val(woken as i64)
            }
            // REQUEUE, CMP_REQUEUE
            3 | 4 => {
                if cmd == 4 {
                    let Some(cur) = self.cpu.mem.read_u32(uaddr) else {
                        return Val(-EFAULT);
                    };
                    if cur != val3 as u32 {
                        return Val(-EAGAIN);
                    }
                }
                let woken = self.futex_wake(uaddr, val, u32::MAX, pc);
                // The first waiters in thread order move.
                let mut waiting: Vec<usize> =
                    self.cpu.sets.futex_waiters(uaddr).map(|(_, i)| i).collect();
                waiting.sort_unstable();
                waiting.truncate(timeout.min(usize::MAX as u64) as usize);
                let moved = waiting.len() as u64;
                for i in waiting {
                    if let ThreadState::Blocked(mut w @ Wait::Futex { .. }) =
                        self.cpu.threads[i].state
                    {
                        if let Wait::Futex { addr, .. } = &mut w {
                            *addr = uaddr2;
                        }
                        self.cpu.set_state(i, ThreadState::Blocked(w));
                    }
                }
                Val((woken + if cmd == 4 { moved } else { 0 }) as i64)
            }
            // WAKE_OP
            5 => {
                let Some(old) = self.cpu.mem.read_u32(uaddr2) else {
                    return Val(-EFAULT);
                };
                let (opk, cmp) = ((val3 >> 28) & 0xf, (val3 >> 24) & 0xf);
                let mut oparg = ((val3 >> 12) & 0xfff) as u32;
                let cmparg = (val3 & 0xfff) as u32;
                if opk & 8 != 0 {
                    oparg = 1u32.checked_shl(oparg).unwrap_or(0);
                }
                let new = match opk & 7 {
                    0 => oparg,
                    1 => old.wrapping_add(oparg),
                    2 => old | oparg,
                    3 => old & !oparg,
                    4 => old ^ oparg,
                    _ => return Val(-ENOSYS),
                };
                if self.cpu.mem.write(uaddr2, &new.to_le_bytes()).is_none() {
                    return Val(-EFAULT);
                }
                let mut n = self.futex_wake(uaddr, val, u32::MAX, pc);
                let hit = match cmp {
                    0 => old == cmparg,
                    1 => old != cmparg,
                    2 => (old as i32) < cmparg as i32,
                    3 => (old as i32) <= cmparg as i32,
                    4 => (old as i32) > cmparg as i32,
                    5 => (old as i32) >= cmparg as i32,
                    _ => false,
                };
                if hit {
                    n += self.futex_wake(uaddr2, timeout, u32::MAX, pc);
                }
                Val(n as i64)
            }
            _ => self.warn_unknown(Sysno::futex as u64, pc),
        }
    }
}
