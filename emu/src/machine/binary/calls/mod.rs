//! Binary mode's intercepted library calls, one module per family
//! ([`Family`]), each call's action at entry and at return side by side.
//! This module catches a call at its entry and its return and hands it to
//! its family: [`Machine::binary_entry`] reads the arguments and, for a
//! call that acts on return, keeps it pending with a hook on its return
//! address; [`Machine::binary_return`] matches the return against the
//! thread's pending calls by stack pointer.

mod heap;
mod omp_sync;
mod omp_tasks;
mod omp_teams;
mod omp_work;
mod pthread;
mod ranges;

use super::{page_chunks, Pending};
use crate::cpu::uc::Reg;
use crate::intercept::libs::{Family, LibCall, OMP_ORDERED};
use crate::machine::{call, Machine};
use lard_detector_hw::event::{EventKind, LardOp as EvOp};

/// An intercepted call at its entry: what its family's entry action reads
/// and what it leaves for the return.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The entry address.
    pc: u64,
    /// The return address.
    ret: u64,
    /// The stack pointer at entry (the return address's slot).
    sp: u64,
    /// The calling kernel thread (index).
    cur: usize,
    /// The first three arguments; what is kept pending for the return.
    args: [u64; 3],
    /// The task creation the call belongs to (`u64::MAX`: none).
    task: u64,
    /// A body that became a language thread of its own: (the encountering
    /// language thread, the body's).
    task_ids: Option<(u64, u64)>,
}

/// An intercepted call at its return.
#[derive(Clone, Copy, Debug)]
struct Return {
    /// The return address.
    pc: u64,
    /// The returning kernel thread (index).
    cur: usize,
    /// The return value.
    rax: u64,
    /// The return value's low 32 bits are 0 (success for most calls).
    ok: bool,
}

impl Machine {
    /// Entry of an intercepted library function at `pc`.
    pub fn binary_entry(&mut self, pc: u64) {
        let Some(call) = self.obs.binary.as_ref().and_then(|r| r.call_at(pc)) else {
            return;
        };
        let uc = self.cpu.uc;
        let sp = uc.reg(Reg::RSP);
        let ret = self.cpu.mem.read_u64(sp).unwrap_or(0);
        let args = [uc.reg(Reg::RDI), uc.reg(Reg::RSI), uc.reg(Reg::RDX)];
        let cur = self.cpu.cur;
        // A jump back to the first instruction of a function whose call is
        // pending (a task body that starts with a loop: `while (!flag);`
        // compiles to `je <body>`) is not a call: the innermost pending
        // call is that very one, at the same stack pointer.
        if self
            .rt()
            .thread(cur)
            .pending
            .last()
            .is_some_and(|p| p.entry == pc && p.sp == sp)
        {
            return;
        }
        // A malloc-family call inside another one (operator new → malloc,
        // realloc → free) is part of the outer one.
        if call.is_heap()
            && self
                .rt()
                .thread(cur)
                .pending
                .iter()
                .any(|p| p.call.is_heap())
        {
            return;
        }
        // An allocator linked into the executable is system code: the
        // calls it makes (its own locks, `malloc` under `__rust_alloc`)
        // are part of the allocation, not the program's synchronization.
        if self.rt().allocator.contains(ret) {
            return;
        }
        // A loop or ordered call made by a loop call (`GOMP_loop_runtime_start`
        // → `gomp_loop_dynamic_start`, `GOMP_loop_start` →
        // `GOMP_loop_runtime_next`, `gomp_loop_ordered_dynamic_next` →
        // `gomp_ordered_sync`: libgomp's aliases share entries, and
        // `gomp_ordered_sync` is `GOMP_ordered_start`'s) is part of the
        // outer one: the chunk's ordered regions are the program's own
        // calls, not libgomp's handing out the next chunk.
        if matches!(
            call,
            LibCall::OmpLoop { .. }
                | LibCall::OmpDoacrossLoop { .. }
                | LibCall::OmpEnter(OMP_ORDERED)
                | LibCall::OmpExit(OMP_ORDERED)
        ) && self.rt().thread(cur).pending.iter().any(|p| {
            matches!(
                p.call,
                LibCall::OmpLoop { .. } | LibCall::OmpDoacrossLoop { .. }
            )
        }) {
            return;
        }
        // Memory a library function touches is the program's only when
        // program code called it (libc's own calls are system code).
        if matches!(call, LibCall::Range(_)) && !self.rt().program.contains(ret) {
            return;
        }
        self.rt().calls += 1;
        let mut e = Entry {
            pc,
            ret,
            sp,
            cur,
            args,
            task: u64::MAX,
            task_ids: None,
        };
        match call.family() {
            Family::Pthread => self.pthread_entry(call, &mut e),
            Family::Heap => self.heap_entry(call, &mut e),
            Family::OmpTeams => self.omp_teams_entry(call, &mut e),
            Family::OmpTasks => self.omp_tasks_entry(call, &mut e),
            Family::OmpWork => self.omp_work_entry(call, &mut e),
            Family::OmpSync => self.omp_sync_entry(call, &mut e),
            Family::Ranges => self.ranges_entry(call, &mut e),
        }
        let Entry {
            args,
            task,
            task_ids,
            ..
        } = e;
        let args = match (call, task_ids) {
            (LibCall::OmpTaskBody | LibCall::OmpTeamBody, Some((prev, id))) => [id, prev, pc],
            (LibCall::OmpRegion, _) => [args[0], args[1], pc],
            _ => args,
        };
        if call.acts_on_return() {
            let rt = self.rt();
            rt.thread(cur).pending.push(Pending {
                ret,
                sp,
                call,
                args,
                task,
                entry: pc,
            });
            if rt.hooked_returns.insert(ret, ()).is_none() {
                self.call_at(ret, call::RETURN);
            }
        }
    }

    /// An outlined body is entered with the stack pointer at `sp`: the
    /// stack below it holds only dead frames of earlier tasks and calls on
    /// this kernel thread, whose histories go (Rule 3), or bodies that reuse
    /// the same stack addresses would race with each other. The
    /// return-address slot at `sp` goes too: system code's call just wrote
    /// it unchecked, so its history is an earlier frame's (the body's `ret`
    /// would race with that frame).
    pub(super) fn clear_dead_frames(&mut self, sp: u64, pc: u64) {
        let cur = self.cpu.cur;
        let low = std::mem::replace(&mut self.rt().thread(cur).stack_low, 0);
        let low = if low != 0 && low < sp { low } else { sp };
        self.rt().atomic_locations.forget(low, sp + 8 - low);
        for (a, len) in page_chunks(low, sp + 8 - low) {
            self.emit(pc, EventKind::Lard(EvOp::ClearHistory { addr: a, len }));
        }
    }

    /// Intercepts an outlined OpenMP body at `pc` (found as an argument of
    /// a GOMP call) from now on.
    pub(super) fn intercept_body(&mut self, pc: u64, body: LibCall) {
        let rt = self.rt();
        if let std::collections::hash_map::Entry::Vacant(e) = rt.by_entry.entry(pc) {
            e.insert(body);
            self.call_at(pc, call::INTERCEPT);
        }
    }

    /// A thread reached `pc`, the return address of some intercepted call.
    pub(super) fn binary_return(&mut self, pc: u64) {
        let sp = self.cpu.uc.reg(Reg::RSP);
        let cur = self.cpu.cur;
        let found = {
            let t = self.rt().thread(cur);
            let mut found = None;
            while let Some(top) = t.pending.last().copied() {
                if top.ret == pc && top.sp.wrapping_add(8) == sp {
                    t.pending.pop();
                    found = Some(top);
                    break;
                }
                if top.sp.wrapping_add(8) < sp {
                    t.pending.pop(); // abandoned (longjmp)
                } else {
                    break;
                }
            }
            found
        };
        let Some(p) = found else {
            return;
        };
        let rax = self.cpu.uc.reg(Reg::RAX);
        let r = Return {
            pc,
            cur,
            rax,
            ok: rax as u32 == 0,
        };
        match p.call.family() {
            Family::Pthread => self.pthread_return(&p, &r),
            Family::Heap => self.heap_return(&p, &r),
            Family::OmpTeams => self.omp_teams_return(&p, &r),
            Family::OmpTasks => self.omp_tasks_return(&p, &r),
            Family::OmpWork => self.omp_work_return(&p, &r),
            Family::OmpSync => self.omp_sync_return(&p, &r),
            Family::Ranges => self.ranges_return(&p, &r),
        }
    }

    /// The instruction call at `pc`, a return address of an intercepted call.
    pub fn binary_return_call(&mut self, pc: u64) {
        if self.cpu.stop.is_some() || self.obs.binary.is_none() {
            return;
        }
        self.binary_return(pc);
    }
}
