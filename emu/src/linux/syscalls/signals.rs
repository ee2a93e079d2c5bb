//! Signal calls: `rt_sigaction` here, the others made by
//! [`crate::linux::signals`] (masks, pending and waited-for signals, the
//! alternate stack, `rt_sigreturn`, `alarm`, itimers and POSIX timers,
//! `tkill`/`tgkill`).

use super::{host, Call, Fault, Made, Val, EINVAL};
use crate::linux::kernel::Kernel;
use syscalls::Sysno;

impl Kernel<'_> {
    /// The signal calls.
    pub(super) fn signals_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let a = c.a;
        Ok(match sys {
            Sysno::rt_sigaction => {
                let sig = a[0] as usize;
                if sig == 0 || sig > 64 {
                    return Ok(Val(-EINVAL));
                }
                if self.process.sigactions.len() <= sig {
                    self.process.sigactions.resize(65, [0; 32]);
                }
                let old = self.process.sigactions[sig];
                if a[2] != 0 && self.cpu.mem.write(a[2], &old).is_none() {
                    return Err(Fault);
                }
                if a[1] != 0 {
                    if sig == libc::SIGKILL as usize || sig == libc::SIGSTOP as usize {
                        return Ok(Val(-EINVAL));
                    }
                    let Some(new) = self.cpu.mem.slice(a[1], 32) else {
                        return Err(Fault);
                    };
                    self.process.sigactions[sig].copy_from_slice(new);
                    self.sigaction_changed(sig as i32);
                }
                Val(0)
            }
            Sysno::rt_sigprocmask => self.sys_rt_sigprocmask(a[0], a[1], a[2], a[3]),
            Sysno::rt_sigpending => self.sys_rt_sigpending(a[0], a[1]),
            Sysno::rt_sigtimedwait => self.sys_rt_sigtimedwait(a[0], a[1], a[2], a[3]),
            Sysno::rt_sigsuspend => self.sys_rt_sigsuspend(a[0], a[1]),
            Sysno::pause => self.sys_pause(),
            Sysno::alarm => self.sys_alarm(a[0]),
            Sysno::getitimer => self.sys_getitimer(a[0], a[1]),
            Sysno::setitimer => self.sys_setitimer(a[0], a[1], a[2]),
            Sysno::timer_create => self.sys_timer_create(a[0], a[1], a[2]),
            Sysno::timer_settime => self.sys_timer_settime(a[0], a[1], a[2], a[3]),
            Sysno::timer_gettime => self.sys_timer_gettime(a[0], a[1]),
            Sysno::timer_getoverrun => self.sys_timer_getoverrun(a[0]),
            Sysno::timer_delete => self.sys_timer_delete(a[0]),
            Sysno::tkill => self.sys_tgkill(a[0] as u32, a[1] as i32),
            Sysno::tgkill if a[0] as u32 == self.config.process.pid => {
                self.sys_tgkill(a[1] as u32, a[2] as i32)
            }
            Sysno::tgkill => Val(host(
                sys,
                [
                    self.config.process.to_host(a[0] as i32 as i64) as u64,
                    a[1],
                    a[2],
                    0,
                    0,
                    0,
                ],
            )),
            Sysno::sigaltstack => self.sys_sigaltstack(a[0], a[1]),
            Sysno::rt_sigreturn => self.sys_rt_sigreturn(),
            _ => return self.unsupported(c),
        })
    }
}
