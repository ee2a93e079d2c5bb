//! The system and the process's identity: `uname`, `sysinfo`, user and
//! group ids, resource limits and usage, capabilities (the host's), and
//! `getrandom` (from the seed), `pkey_alloc` (no protection keys).

use super::{host, Call, Fault, Made, Val, R, W};
use crate::cpu::sched::SplitMix64;
use crate::linux::kernel::Kernel;
use syscalls::Sysno;

impl Kernel<'_> {
    /// The system and identity calls.
    pub(super) fn system_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let a = c.a;
        Ok(match sys {
            Sysno::uname => Val(host(sys, [self.buf(c, a[0], 390, W)?, 0, 0, 0, 0, 0])),
            Sysno::getrlimit => Val(host(sys, [a[0], self.buf(c, a[1], 16, W)?, 0, 0, 0, 0])),
            Sysno::getrusage => Val(host(sys, [a[0], self.buf(c, a[1], 144, W)?, 0, 0, 0, 0])),
            Sysno::sysinfo => Val(host(sys, [self.buf(c, a[0], 112, W)?, 0, 0, 0, 0, 0])),
            Sysno::getuid | Sysno::getgid | Sysno::geteuid | Sysno::getegid => {
                Val(host(sys, [0; 6]))
            }
            Sysno::getgroups => {
                let n = a[0].min(65536);
                Val(host(sys, [n, self.buf(c, a[1], n * 4, W)?, 0, 0, 0, 0]))
            }
            // capget: the host's capabilities
            Sysno::capget => {
                let data = self.opt_buf(c, a[1], 24, W)?;
                Val(host(sys, [self.buf(c, a[0], 8, W)?, data, 0, 0, 0, 0]))
            }
            // pkey_alloc: no protection keys (as on a CPU without PKU)
            Sysno::pkey_alloc => Val(-libc::ENOSPC as i64),
            // setresuid, setresgid: the host's (they fail unless permitted)
            Sysno::setresuid | Sysno::setresgid => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::getresuid | Sysno::getresgid => Val(host(
                sys,
                [
                    self.buf(c, a[0], 4, W)?,
                    self.buf(c, a[1], 4, W)?,
                    self.buf(c, a[2], 4, W)?,
                    0,
                    0,
                    0,
                ],
            )),
            Sysno::prlimit64 => {
                let new = self.opt_buf(c, a[2], 16, R)?;
                let old = self.opt_buf(c, a[3], 16, W)?;
                let _ = new;
                Val(host(sys, [0, a[1], 0, old, 0, 0]))
            }
            Sysno::getrandom => {
                let Some(buf) = self.cpu.mem.slice_mut(a[0], a[1]) else {
                    return Err(Fault);
                };
                let mut rng = SplitMix64(self.config.seed ^ self.syscalls.wrapping_mul(0x9e37));
                for chunk in buf.chunks_mut(8) {
                    let v = rng.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&v[..chunk.len()]);
                }
                Val(a[1] as i64)
            }
            _ => return self.unsupported(c),
        })
    }
}
