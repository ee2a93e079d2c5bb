//! Clocks and sleeps, in virtual time: 1 ns per retired instruction plus
//! virtual sleeps; the realtime clock is virtual time from the run's base.

use super::{host, Call, Fault, Made, Val, EINVAL, W};
use crate::linux::kernel::Kernel;
use crate::machine::Wait;
use syscalls::Sysno;

impl Kernel<'_> {
    /// The clock and sleep calls.
    pub(super) fn time_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let a = c.a;
        Ok(match sys {
            Sysno::nanosleep => {
                let Some(ns) = self.read_timespec(a[0]) else {
                    return Err(Fault);
                };
                self.block(Wait::Sleep {
                    deadline: self.cpu.vtime.saturating_add(ns),
                })
            }
            Sysno::times => {
                let buf = self.opt_buf(c, a[0], 32, W)?;
                Val(host(sys, [buf, 0, 0, 0, 0, 0]))
            }
            Sysno::gettimeofday => {
                if a[0] != 0 {
                    let ns = self.process.realtime_base + self.cpu.vtime;
                    let mut b = [0u8; 16];
                    b[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
                    b[8..].copy_from_slice(&((ns % 1_000_000_000) / 1000).to_le_bytes());
                    if self.cpu.mem.write(a[0], &b).is_none() {
                        return Err(Fault);
                    }
                }
                Val(0)
            }
            Sysno::time => {
                let secs = (self.process.realtime_base + self.cpu.vtime) / 1_000_000_000;
                if a[0] != 0 && self.cpu.mem.write(a[0], &secs.to_le_bytes()).is_none() {
                    return Err(Fault);
                }
                Val(secs as i64)
            }
            Sysno::clock_gettime => {
                let Some(ns) = self.clock_ns(a[0]) else {
                    return Ok(Val(-EINVAL));
                };
                if !self.write_timespec(a[1], ns) {
                    return Err(Fault);
                }
                Val(0)
            }
            Sysno::clock_getres => {
                if a[1] != 0 && !self.write_timespec(a[1], 1) {
                    return Err(Fault);
                }
                Val(0)
            }
            Sysno::clock_nanosleep => {
                let Some(req) = self.read_timespec(a[2]) else {
                    return Err(Fault);
                };
                let Some(now) = self.clock_ns(a[0]) else {
                    return Ok(Val(-EINVAL));
                };
                let ns = if a[1] & 1 != 0 {
                    req.saturating_sub(now)
                } else {
                    req
                };
                self.block(Wait::Sleep {
                    deadline: self.cpu.vtime.saturating_add(ns),
                })
            }
            _ => return self.unsupported(c),
        })
    }

    /// Virtual monotonic time in ns.
    pub fn monotonic_ns(&self) -> u64 {
        self.cpu.vtime
    }

    fn write_timespec(&self, addr: u64, ns: u64) -> bool {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        b[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
        self.cpu.mem.write(addr, &b).is_some()
    }

    pub(in crate::linux) fn read_timespec(&self, addr: u64) -> Option<u64> {
        let s = self.cpu.mem.read_u64(addr)?;
        let ns = self.cpu.mem.read_u64(addr + 8)?;
        Some(s.saturating_mul(1_000_000_000).saturating_add(ns))
    }

    pub(crate) fn clock_ns(&self, clock: u64) -> Option<u64> {
        match clock {
            0 | 5 | 8 => Some(self.process.realtime_base + self.cpu.vtime),
            1 | 4 | 6 | 7 | 9 => Some(self.cpu.vtime),
            2 => Some(self.insns),
            3 => Some(self.cpu.threads[self.cpu.cur].insns),
            _ => None,
        }
    }
}
