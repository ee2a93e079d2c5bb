//! The heap: allocations are program events, a free clears the block's
//! histories (Rule 3), `realloc` moves them (Rule 4). Each call's action at
//! entry and at return, side by side.

use super::{Entry, Pending, Return};
use crate::cpu::uc::Reg;
use crate::intercept::libs::LibCall;
use crate::intercept::runtime::copy_chunks;
use crate::intercept::runtime::page_chunks;
use crate::intercept::runtime::HeapBlock;
use crate::machine::Machine;
use lard_detector_hw::event::EventKind;
use lard_detector_hw::event::LardOp as EvOp;
use lard_detector_hw::event::ObjectKind;
use lard_detector_hw::event::ProgramEvent;

impl Machine {
    /// A heap call's entry ([`Machine::binary_entry`]).
    pub(super) fn heap_entry(&mut self, call: LibCall, e: &mut Entry) {
        let Entry {
            ret, ref mut args, ..
        } = *e;
        match call {
            LibCall::Free => self.heap_free(args[0], ret),
            // `__rust_realloc(p, old_size, align, new_size)`: the new size
            // is the fourth argument; the block moves at return.
            LibCall::RustRealloc => args[1] = self.cpu.uc.reg(Reg::RCX),
            LibCall::Realloc if args[0] != 0 => {
                // The block's contents move at return; nothing now.
            }
            _ => {}
        }
    }

    /// A heap call's return ([`Machine::binary_return`]).
    pub(super) fn heap_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, rax, ok, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::Malloc => self.heap_alloc(rax, a[0], pc),
            LibCall::Calloc => self.heap_alloc(rax, a[0].wrapping_mul(a[1]), pc),
            LibCall::AlignedAlloc => self.heap_alloc(rax, a[1], pc),
            LibCall::PosixMemalign if ok => {
                if let Some(addr) = self.cpu.mem.read_u64(a[0]) {
                    self.heap_alloc(addr, a[2], pc);
                }
            }
            LibCall::Realloc | LibCall::RustRealloc => self.heap_realloc(a[0], a[1], rax, pc),
            _ => {}
        }
    }

    fn heap_alloc(&mut self, addr: u64, size: u64, pc: u64) {
        if addr == 0 {
            return;
        }
        let thread = self.origin().lard_key();
        let owner = if self.rt().program.contains(pc) {
            self.own_task()
        } else {
            None
        };
        if let Some(o) = owner {
            *self.rt().owned.entry(o).or_insert(0) += 1;
        }
        // A block libgomp allocates inside GOMP_task holds the task and
        // the copy of its data, which its body gets as argument.
        let cur = self.cpu.cur;
        let creating = self
            .rt()
            .thread(cur)
            .pending
            .last()
            .filter(|p| matches!(p.call, LibCall::OmpTask | LibCall::OmpTaskLoop))
            .map(|p| p.task);
        if let Some(id) = creating {
            self.rt().tasks.block_allocated(id, addr, size);
        }
        self.rt().heap.insert(
            addr,
            HeapBlock {
                addr,
                size,
                site: pc,
                thread,
                live: true,
                owner,
            },
        );
        self.program(
            pc,
            ProgramEvent::Alloc {
                addr,
                size,
                site: pc,
                kind: ObjectKind::Heap,
            },
        );
    }

    /// Forgets a block: Free event, then ClearHistory of its bytes (Rule 3).
    fn heap_free(&mut self, addr: u64, pc: u64) {
        let Some(b) = self.rt().heap.get_mut(&addr).filter(|b| b.live) else {
            return;
        };
        b.live = false;
        let (size, owner) = (b.size, b.owner);
        if let Some(c) = owner.and_then(|o| self.rt().owned.get_mut(&o)) {
            *c = c.saturating_sub(1);
        }
        self.rt().tasks.block_freed(addr);
        self.rt().atomic_locations.forget(addr, size);
        self.rt().sync.forget_range(addr, size);
        self.program(pc, ProgramEvent::Free { addr });
        for (a, len) in page_chunks(addr, size) {
            self.emit(pc, EventKind::Lard(EvOp::ClearHistory { addr: a, len }));
        }
    }

    /// realloc: the contents move with their histories (Rule 4), then the
    /// old block is forgotten.
    fn heap_realloc(&mut self, old: u64, size: u64, new: u64, pc: u64) {
        if new == 0 {
            return; // failed (old block untouched) or realloc(p, 0) freed it
        }
        let old_block = self.rt().heap.get(&old).copied().filter(|b| b.live);
        if let Some(b) = old_block {
            if new != old {
                let kept = b.size.min(size);
                self.rt().atomic_locations.moved(old, kept, new);
                for (s, d, len) in copy_chunks(old, new, kept) {
                    self.emit(
                        pc,
                        EventKind::Lard(EvOp::CopyHistory {
                            src: s,
                            dst: d,
                            len,
                        }),
                    );
                }
                self.heap_free(old, pc);
            } else {
                self.rt().heap.remove(&old);
                self.program(pc, ProgramEvent::Free { addr: old });
            }
        }
        self.heap_alloc(new, size, pc);
    }
}
