//! OpenMP worksharing: barriers, `sections`, loop chunks, the end of a
//! worksharing construct, `omp_get_thread_num`. Each call's action at entry
//! and at return, side by side.

use super::{Entry, Pending, Return};
use crate::cpu::uc::Reg;
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::LibCall;
use crate::intercept::names::LangUnit;
use crate::machine::Machine;

impl Machine {
    /// A worksharing call's entry ([`Machine::binary_entry`]).
    pub(super) fn omp_work_entry(&mut self, call: LibCall, e: &mut Entry) {
        let Entry {
            ret,
            sp,
            cur,
            ref mut args,
            ..
        } = *e;
        match call {
            LibCall::OmpBarrier => {
                self.unit_end(ret);
                self.rt().thread(cur).loop_site = 0;
                let team = self.current_team();
                self.release(SyncKey::Barrier(team), ret);
            }
            LibCall::OmpSections | LibCall::OmpWorkEnd => {
                self.unit_end(ret);
                self.rt().thread(cur).loop_site = 0;
            }
            LibCall::OmpLoop { istart, .. } => {
                self.unit_end(ret);
                // Keep where the chunk's bounds go: `istart`, `iend`.
                *args = [self.arg(sp, istart), self.arg(sp, istart + 1), 0];
            }
            LibCall::OmpDoacrossLoop { istart, .. } => {
                self.unit_end(ret);
                self.doacross_begin(cur);
                *args = [self.arg(sp, istart), self.arg(sp, istart + 1), 0];
            }
            LibCall::OmpDoacrossPost => {
                let ptr = self.arg(sp, 0);
                let v: Vec<u64> = (0..self.doacross_dims(cur))
                    .map(|i| {
                        self.cpu
                            .mem
                            .read_u64(ptr + 8 * i as u64)
                            .unwrap_or(u64::MAX)
                    })
                    .collect();
                if let Some(key) = self.doacross_key(cur, &v) {
                    self.release(key, ret);
                }
            }
            LibCall::OmpDoacrossWait => {
                let v: Vec<u64> = (0..self.doacross_dims(cur))
                    .map(|i| self.arg(sp, i as u8))
                    .collect();
                if let Some(SyncKey::Doacross(l, i)) = self.doacross_key(cur, &v) {
                    *args = [l, i, 1];
                }
            }
            LibCall::OmpThreadNum if self.rt().program.contains(ret) => self.thread_num_asked(),
            _ => {}
        }
    }

    /// Argument `i` (0-based, integer class) of a call entered with the
    /// stack pointer at `sp`.
    fn arg(&self, sp: u64, i: u8) -> u64 {
        match i {
            0 => self.cpu.uc.reg(Reg::RDI),
            1 => self.cpu.uc.reg(Reg::RSI),
            2 => self.cpu.uc.reg(Reg::RDX),
            3 => self.cpu.uc.reg(Reg::RCX),
            4 => self.cpu.uc.reg(Reg::R8),
            5 => self.cpu.uc.reg(Reg::R9),
            n => self
                .cpu
                .mem
                .read_u64(sp.wrapping_add(8 * (u64::from(n) - 5)))
                .unwrap_or(0),
        }
    }

    /// Kernel thread `cur` starts its next doacross loop in its team
    /// (`GOMP_loop_doacross_*_start(n, counts, ...)`): every member's k-th
    /// doacross loop of a team instance is the same loop.
    fn doacross_begin(&mut self, cur: usize) {
        let (n, counts) = (self.cpu.uc.reg(Reg::RDI) as u32, self.cpu.uc.reg(Reg::RSI));
        let dims: Vec<u64> = (0..u64::from(n.min(64)))
            .map(|i| self.cpu.mem.read_u64(counts + 8 * i).unwrap_or(0))
            .collect();
        let team = self.current_team();
        let t = self.rt().thread(cur);
        let seq = match t.doacross_seq.iter_mut().find(|(tm, _)| *tm == team) {
            Some((_, k)) => {
                *k += 1;
                *k
            }
            None => {
                t.doacross_seq.push((team, 0));
                0
            }
        };
        t.doacross = Some(((team << 16) | (seq & 0xffff), dims));
    }

    /// The dimensions of the doacross loop kernel thread `cur` runs.
    fn doacross_dims(&mut self, cur: usize) -> usize {
        self.rt()
            .thread(cur)
            .doacross
            .as_ref()
            .map_or(0, |(_, d)| d.len())
    }

    /// The sync object of iteration vector `v` of the doacross loop kernel
    /// thread `cur` runs; `None` outside its iteration space.
    fn doacross_key(&mut self, cur: usize, v: &[u64]) -> Option<SyncKey> {
        let (l, dims) = self.rt().thread(cur).doacross.as_ref()?;
        let mut index: u64 = 0;
        for (&x, &d) in v.iter().zip(dims) {
            if x >= d {
                return None;
            }
            index = index.checked_mul(d)?.checked_add(x)?;
        }
        Some(SyncKey::Doacross(*l, index))
    }

    /// A worksharing call's return ([`Machine::binary_return`]).
    pub(super) fn omp_work_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, cur, rax, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::OmpSections if rax as u32 != 0 => {
                let n = rax as u32;
                self.unit_begin(pc, LangUnit::Section { site: pc, n });
            }
            // A bool: true with a chunk to run (a generic `GOMP_loop_start`
            // without `istart` only set the loop up).
            LibCall::OmpDoacrossWait if a[2] != 0 => {
                self.acquire(SyncKey::Doacross(a[0], a[1]), pc);
            }
            LibCall::OmpLoop { istart, ull } | LibCall::OmpDoacrossLoop { istart, ull }
                if rax as u8 != 0 && a[0] != 0 =>
            {
                let bound = |v: u64| {
                    if ull {
                        i128::from(v)
                    } else {
                        i128::from(v as i64)
                    }
                };
                let lo = bound(self.cpu.mem.read_u64(a[0]).unwrap_or(0));
                let hi = bound(self.cpu.mem.read_u64(a[1]).unwrap_or(0));
                // `_next` (istart is its first argument) continues the loop
                // the last `_start` began.
                let t = self.rt().thread(cur);
                if istart != 0 || t.loop_site == 0 {
                    t.loop_site = pc;
                }
                let site = t.loop_site;
                self.unit_begin(pc, LangUnit::Chunk { site, lo, hi });
            }
            LibCall::OmpBarrier => {
                let team = self.current_team();
                self.raise_floors_at_barrier(pc, team);
                self.acquire(SyncKey::Barrier(team), pc);
                self.acquire(SyncKey::Tasks(team), pc);
                self.raise_floors(pc);
            }
            _ => {}
        }
    }
}
