//! Timers that send signals, in the process's virtual time (the time its
//! clocks read): `alarm`, `setitimer`/`getitimer` (`ITIMER_REAL`,
//! `ITIMER_VIRTUAL` and `ITIMER_PROF` all count virtual time) and POSIX
//! timers (`timer_create` with `SIGEV_SIGNAL`, `SIGEV_THREAD_ID` or
//! `SIGEV_NONE`). A timer that expires while every thread waits moves
//! virtual time to its deadline, as a sleep does.

use super::{deliver::SI_USER, SigInfo};
use crate::linux::kernel::Kernel;
use crate::linux::syscalls::Ret::{self, Val};
use crate::machine::ThreadState;

const NS: u64 = 1_000_000_000;
const EINVAL: i64 = libc::EINVAL as i64;
const EFAULT: i64 = libc::EFAULT as i64;
/// `si_code` of a POSIX timer.
const SI_TIMER: i32 = -2;
/// `sigev_notify` values.
const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;
/// `timer_settime` flag: the value is an absolute time.
const TIMER_ABSTIME: u64 = 1;
/// Signals of the three interval timers.
const ITIMER_SIGNALS: [i32; 3] = [libc::SIGALRM, libc::SIGVTALRM, libc::SIGPROF];

/// An armed timer: its next expiry (virtual ns) and its period.
#[derive(Clone, Copy, Debug, Default)]
struct Armed {
    deadline: u64,
    interval: u64,
}

/// A POSIX timer.
#[derive(Clone, Copy, Debug)]
struct PosixTimer {
    clock: u64,
    signo: i32,
    notify: i32,
    tid: u32,
    value: u64,
    armed: Option<Armed>,
    overrun: u64,
}

/// The process's timers.
#[derive(Clone, Debug, Default)]
pub struct Timers {
    itimers: [Option<Armed>; 3],
    posix: Vec<Option<PosixTimer>>,
}

/// Remaining time and period of `a` at `now`, in ns.
fn remaining(a: Option<Armed>, now: u64) -> (u64, u64) {
    a.map_or((0, 0), |a| {
        (a.deadline.saturating_sub(now).max(1), a.interval)
    })
}

impl crate::linux::state::Process {
    /// The earliest timer deadline, if a timer is armed.
    pub fn next_timer_deadline(&self) -> Option<u64> {
        let t = &self.signals.timers;
        t.itimers
            .iter()
            .flatten()
            .map(|a| a.deadline)
            .chain(
                t.posix
                    .iter()
                    .flatten()
                    .filter_map(|p| p.armed.map(|a| a.deadline)),
            )
            .min()
    }
}

impl Kernel<'_> {
    /// Sends the signals of the timers whose deadline passed and re-arms
    /// the periodic ones.
    pub(super) fn expire_signal_timers(&mut self) {
        let now = self.cpu.vtime;
        if self.process.next_timer_deadline().is_none_or(|d| d > now) {
            return;
        }
        let pid = u64::from(self.config.process.pid);
        for (which, sig) in ITIMER_SIGNALS.iter().enumerate() {
            let Some(a) = self.process.signals.timers.itimers[which] else {
                continue;
            };
            if a.deadline > now {
                continue;
            }
            self.process.signals.timers.itimers[which] = (a.interval > 0).then(|| Armed {
                deadline: a.deadline + a.interval * ((now - a.deadline) / a.interval + 1),
                ..a
            });
            self.send_process_signal(SigInfo {
                signal: *sig,
                code: SI_USER,
                word16: pid,
                word24: 0,
            });
        }
        for id in 0..self.process.signals.timers.posix.len() {
            let Some(mut t) = self.process.signals.timers.posix[id] else {
                continue;
            };
            let Some(a) = t.armed else { continue };
            if a.deadline > now {
                continue;
            }
            let missed = (now - a.deadline).checked_div(a.interval).unwrap_or(0);
            t.overrun = missed;
            t.armed = (a.interval > 0).then(|| Armed {
                deadline: a.deadline + a.interval * (missed + 1),
                ..a
            });
            self.process.signals.timers.posix[id] = Some(t);
            let info = SigInfo {
                signal: t.signo,
                code: SI_TIMER,
                word16: id as u64 | (missed.min(u64::from(u32::MAX)) << 32),
                word24: t.value,
            };
            match t.notify {
                SIGEV_SIGNAL => self.send_process_signal(info),
                SIGEV_THREAD_ID => {
                    let i = self
                        .cpu
                        .threads
                        .iter()
                        .position(|th| th.tid == t.tid && th.state != ThreadState::Exited);
                    match i {
                        Some(i) => self.send_thread_signal(i, info),
                        None => self.send_process_signal(info),
                    }
                }
                _ => {}
            }
        }
    }

    fn write_pair(&mut self, addr: u64, a: u64, b: u64) -> bool {
        let mut buf = [0u8; 16];
        buf[..8].copy_from_slice(&a.to_le_bytes());
        buf[8..].copy_from_slice(&b.to_le_bytes());
        self.cpu.mem.write(addr, &buf).is_some()
    }

    /// Writes (period, remaining) as a `struct itimerval` (`usec`) or
    /// `struct itimerspec` (`nsec`).
    fn write_timer(&mut self, addr: u64, rem: u64, interval: u64, usec: bool) -> bool {
        let div = if usec { 1000 } else { 1 };
        self.write_pair(addr, interval / NS, (interval % NS) / div)
            && self.write_pair(addr + 16, rem / NS, (rem % NS) / div)
    }

    /// Reads a `struct itimerval` (`usec`) or `struct itimerspec`: (period,
    /// value) in ns.
    fn read_timer(&self, addr: u64, usec: bool) -> Option<(u64, u64)> {
        let mul = if usec { 1000 } else { 1 };
        let w = |o: u64| self.cpu.mem.read_u64(addr + o);
        let interval = w(0)?
            .saturating_mul(NS)
            .saturating_add(w(8)?.saturating_mul(mul));
        let value = w(16)?
            .saturating_mul(NS)
            .saturating_add(w(24)?.saturating_mul(mul));
        Some((interval, value))
    }

    /// `alarm(seconds)`: the seconds left of the previous alarm.
    pub(in crate::linux) fn sys_alarm(&mut self, secs: u64) -> Ret {
        let now = self.cpu.vtime;
        let (left, _) = remaining(self.process.signals.timers.itimers[0], now);
        self.process.signals.timers.itimers[0] = (secs > 0).then(|| Armed {
            deadline: now + secs.saturating_mul(NS),
            interval: 0,
        });
        Val(left.div_ceil(NS) as i64)
    }

    /// `getitimer(which, value)`.
    pub(in crate::linux) fn sys_getitimer(&mut self, which: u64, out: u64) -> Ret {
        let Some(&t) = self.process.signals.timers.itimers.get(which as usize) else {
            return Val(-EINVAL);
        };
        let (rem, interval) = remaining(t, self.cpu.vtime);
        if !self.write_timer(out, rem, interval, true) {
            return Val(-EFAULT);
        }
        Val(0)
    }

    /// `setitimer(which, new, old)`.
    pub(in crate::linux) fn sys_setitimer(&mut self, which: u64, new: u64, old: u64) -> Ret {
        let Some(&t) = self.process.signals.timers.itimers.get(which as usize) else {
            return Val(-EINVAL);
        };
        let now = self.cpu.vtime;
        let set = if new != 0 {
            match self.read_timer(new, true) {
                Some(v) => Some(v),
                None => return Val(-EFAULT),
            }
        } else {
            None
        };
        if old != 0 {
            let (rem, interval) = remaining(t, now);
            if !self.write_timer(old, rem, interval, true) {
                return Val(-EFAULT);
            }
        }
        if let Some((interval, value)) = set {
            self.process.signals.timers.itimers[which as usize] = (value > 0).then_some(Armed {
                deadline: now + value,
                interval,
            });
        }
        Val(0)
    }

    /// `timer_create(clockid, sevp, timerid)`.
    pub(in crate::linux) fn sys_timer_create(&mut self, clock: u64, sevp: u64, idp: u64) -> Ret {
        if self.clock_ns(clock).is_none() {
            return Val(-EINVAL);
        }
        let id = self.process.signals.timers.posix.len();
        let (value, signo, notify, tid) = if sevp == 0 {
            (id as u64, libc::SIGALRM, SIGEV_SIGNAL, 0)
        } else {
            let Some(b) = self.cpu.mem.slice(sevp, 20).map(<[u8]>::to_vec) else {
                return Val(-EFAULT);
            };
            let w32 = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
            let value = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
            (value, w32(8), w32(12), w32(16) as u32)
        };
        match notify {
            SIGEV_SIGNAL | SIGEV_THREAD_ID if !(1..=64).contains(&signo) => return Val(-EINVAL),
            SIGEV_SIGNAL | SIGEV_NONE | SIGEV_THREAD_ID => {}
            _ => return Val(-EINVAL),
        }
        if self
            .cpu
            .mem
            .write(idp, &(id as i32).to_le_bytes())
            .is_none()
        {
            return Val(-EFAULT);
        }
        self.process.signals.timers.posix.push(Some(PosixTimer {
            clock,
            signo,
            notify,
            tid,
            value,
            armed: None,
            overrun: 0,
        }));
        Val(0)
    }

    fn posix_timer(&self, id: u64) -> Option<PosixTimer> {
        self.process
            .signals
            .timers
            .posix
            .get(id as usize)
            .copied()
            .flatten()
    }

    /// `timer_settime(timerid, flags, new, old)`.
    pub(in crate::linux) fn sys_timer_settime(
        &mut self,
        id: u64,
        flags: u64,
        new: u64,
        old: u64,
    ) -> Ret {
        let Some(mut t) = self.posix_timer(id) else {
            return Val(-EINVAL);
        };
        let Some((interval, value)) = self.read_timer(new, false) else {
            return Val(-EFAULT);
        };
        let now = self.cpu.vtime;
        if old != 0 {
            let (rem, iv) = remaining(t.armed, now);
            if !self.write_timer(old, rem, iv, false) {
                return Val(-EFAULT);
            }
        }
        t.armed = (value > 0).then(|| {
            let delay = if flags & TIMER_ABSTIME != 0 {
                value.saturating_sub(self.clock_ns(t.clock).unwrap_or(0))
            } else {
                value
            };
            Armed {
                deadline: now + delay,
                interval,
            }
        });
        self.process.signals.timers.posix[id as usize] = Some(t);
        Val(0)
    }

    /// `timer_gettime(timerid, value)`.
    pub(in crate::linux) fn sys_timer_gettime(&mut self, id: u64, out: u64) -> Ret {
        let Some(t) = self.posix_timer(id) else {
            return Val(-EINVAL);
        };
        let (rem, iv) = remaining(t.armed, self.cpu.vtime);
        if !self.write_timer(out, rem, iv, false) {
            return Val(-EFAULT);
        }
        Val(0)
    }

    /// `timer_getoverrun(timerid)`.
    pub(in crate::linux) fn sys_timer_getoverrun(&mut self, id: u64) -> Ret {
        match self.posix_timer(id) {
            Some(t) => Val(t.overrun.min(i32::MAX as u64) as i64),
            None => Val(-EINVAL),
        }
    }

    /// `timer_delete(timerid)`.
    pub(in crate::linux) fn sys_timer_delete(&mut self, id: u64) -> Ret {
        match self.process.signals.timers.posix.get_mut(id as usize) {
            Some(t @ Some(_)) => {
                *t = None;
                Val(0)
            }
            _ => Val(-EINVAL),
        }
    }
}
