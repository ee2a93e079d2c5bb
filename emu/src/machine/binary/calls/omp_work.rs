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
                let arg = |m: &Machine, i: u8| match i {
                    0 => m.cpu.uc.reg(Reg::RDI),
                    1 => m.cpu.uc.reg(Reg::RSI),
                    2 => m.cpu.uc.reg(Reg::RDX),
                    3 => m.cpu.uc.reg(Reg::RCX),
                    4 => m.cpu.uc.reg(Reg::R8),
                    5 => m.cpu.uc.reg(Reg::R9),
                    n => m
                        .cpu
                        .mem
                        .read_u64(sp.wrapping_add(8 * (u64::from(n) - 5)))
                        .unwrap_or(0),
                };
                *args = [arg(self, istart), arg(self, istart + 1), 0];
            }
            LibCall::OmpThreadNum if self.rt().program.contains(ret) => self.thread_num_asked(),
            _ => {}
        }
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
            LibCall::OmpLoop { istart, ull } if rax as u8 != 0 && a[0] != 0 => {
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
