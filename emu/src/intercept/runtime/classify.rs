//! Binary mode's access rules in one place: which instructions translated
//! code observes and how ([`BinaryRuntime::decide`]), and what each
//! observed access is ([`BinaryRuntime::classify`]): checked, delivered
//! unchecked, synchronization on an atomic object, or nothing.

use super::BinaryRuntime;
use crate::binary::atomics::pcs::MemOrder;
use crate::binary::prune::Pruned;
use crate::intercept::counted;
use crate::machine::Observe;
use lard_detector_hw::event::AccessKind;

/// What binary mode makes of one observed access
/// ([`BinaryRuntime::classify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Not delivered.
    Drop,
    /// A program access the detectors check (delivered Tracked).
    Checked,
    /// Delivered unchecked: the observer asked for every access.
    Unchecked,
    /// A plain access of an object DWARF types as atomic: synchronization
    /// ([`Machine::binary_plain_atomic`](crate::machine::Machine::binary_plain_atomic)),
    /// then delivered unchecked when `deliver`.
    PlainAtomic {
        /// The observer asked for every access.
        deliver: bool,
        /// Its memory order.
        order: MemOrder,
    },
}

impl BinaryRuntime {
    /// What translated code does at `pc` in binary mode, besides an
    /// instruction call registered there (`call`): program code's accesses
    /// (not an atomic instruction's own, which are synchronization), pruned
    /// or not, are observed — counted inline where counting is all their
    /// accesses need; other code's only for an observer that asked for
    /// every access. `atomic`: `pc` is an atomic instruction's site;
    /// `counted_atomic`: it is translated counted instead of with its call
    /// ([`Machine::counted_atomic`](crate::machine::Machine::counted_atomic)).
    pub fn decide(&self, pc: u64, call: bool, atomic: bool, counted_atomic: bool) -> Observe {
        let program = !atomic && self.program.contains(pc);
        if atomic && counted_atomic {
            return Observe {
                call: false,
                mem: self.all,
                tag: (counted::ATOMICS as u16) << 8,
                count_insn: true,
                ..Observe::default()
            };
        }
        if let Some(slot) = self.counted_slot(pc).filter(|_| program) {
            return Observe {
                call,
                mem: true,
                // (A C helper's access still calls on_access, which sees a
                // program-code access as before.)
                tag: Observe::TRACKED | (slot as u16) << 8,
                count: true,
                ..Observe::default()
            };
        }
        let mut tag = match program {
            true if self.is_pruned(pc) => Observe::TRACKED,
            true => Observe::TRACKED | Observe::UNPRUNED,
            false => 0,
        };
        if program && self.atomic_pcs.order(pc).is_some() {
            tag |= Observe::INLINED_ATOMIC;
        }
        Observe {
            call,
            mem: program || self.all,
            tag,
            ..Observe::default()
        }
    }

    /// What an access of `size` bytes at `addr` by the instruction at `pc`
    /// (its decision's `tag`, [`BinaryRuntime::decide`]) is, about to
    /// happen on kernel thread `cur`; `stack`: `addr` is in a thread's
    /// stack. Program code's accesses are checked unless static pruning
    /// removed the instruction, the process has had one thread only, or
    /// they write the executable's read-only segments; plain accesses of
    /// atomic objects are synchronization; system code's are not checked.
    /// Counts what it decides (the pruning table). (Always inlined: the
    /// access callback has two paths through it.)
    #[inline(always)]
    pub fn classify(
        &mut self,
        pc: u64,
        addr: u64,
        kind: AccessKind,
        tag: u16,
        stack: bool,
        cur: usize,
    ) -> Class {
        if tag & Observe::TRACKED != 0 {
            if stack {
                self.note_stack(cur, addr);
            }
            let checked = if tag & Observe::INLINED_ATOMIC != 0
                || self.atomic_objects.contains(addr)
                || self.atomic_locations.contains(addr)
            {
                return self.plain_atomic(pc);
            } else if self.single_threaded {
                self.single_threaded_accesses += 1;
                false
            } else if tag & Observe::UNPRUNED != 0 {
                self.observe_unpruned(addr, kind)
            } else {
                self.observe_checked(pc, addr, kind)
            };
            if checked {
                return Class::Checked;
            }
        }
        if self.all {
            Class::Unchecked
        } else {
            Class::Drop
        }
    }

    /// The class of an atomic access at `pc`: with the memory order of the
    /// inlined atomic operation around it, else (an atomic object's
    /// access) acquire/release.
    #[cold]
    #[inline(never)]
    fn plain_atomic(&mut self, pc: u64) -> Class {
        let order = match self.atomic_pcs.order(pc) {
            Some(o) => {
                self.inlined_atomics += 1;
                o
            }
            None => MemOrder::AcqRel,
        };
        Class::PlainAtomic {
            deliver: self.all,
            order,
        }
    }

    /// A program-code access at `pc` of `addr` is about to be delivered:
    /// false when it is not checked — a write to the executable's read-only
    /// segments (checked by no mode), or an instruction static pruning
    /// removed (counted per analysis).
    #[inline]
    fn observe_checked(&mut self, pc: u64, addr: u64, kind: AccessKind) -> bool {
        match self.pruning.pcs.get(&pc) {
            None => self.observe_unpruned(addr, kind),
            Some(_) if self.writes_readonly(addr, kind) => false,
            Some(p) => {
                self.pruned[p.index()] += 1;
                false
            }
        }
    }

    /// [`BinaryRuntime::observe_checked`] for an instruction static pruning
    /// kept ([`BinaryRuntime::is_pruned`] false): the same answer and
    /// counts without the pruning table.
    #[inline]
    fn observe_unpruned(&mut self, addr: u64, kind: AccessKind) -> bool {
        if self.writes_readonly(addr, kind) {
            return false;
        }
        self.checked_accesses += 1;
        true
    }

    /// True for a write into the executable's read-only segments.
    #[inline]
    fn writes_readonly(&self, addr: u64, kind: AccessKind) -> bool {
        kind == AccessKind::Write && self.readonly.iter().any(|&(s, e)| addr >= s && addr < e)
    }

    /// True when static pruning removed program-code instruction `pc`
    /// (fixed once the object holding `pc` is loaded).
    fn is_pruned(&self, pc: u64) -> bool {
        self.pruning.pcs.contains_key(&pc)
    }

    /// The [`PrunedCounts`] slot program-code instruction `pc` is counted in,
    /// when its accesses need nothing but counting: it was pruned, and
    /// * frame, private stack: no OpenMP task can start (their stack
    ///   accesses would set the range a task start clears); these accesses
    ///   are `rsp`/`rbp`-based into a frame the analyses proved private,
    ///   so they are not taken for accesses of atomic objects nor for
    ///   writes into the executable's read-only segments (a private stack
    ///   is neither);
    /// * read-only data: no atomic object lies in a read-only segment (the
    ///   address is fixed and read-only);
    /// * redundant: never (the address is an earlier write's, which may be an
    ///   atomic object's).
    fn counted_slot(&self, pc: u64) -> Option<usize> {
        if self.counted.is_none() || !self.prune || self.all {
            return None;
        }
        let k = *self.pruning.pcs.get(&pc)?;
        let ok = match k {
            Pruned::Frame | Pruned::PrivateStack => !self.tasks_possible,
            Pruned::ReadOnly => !self
                .readonly
                .iter()
                .any(|&(s, e)| self.atomic_objects.overlaps(s, e)),
            Pruned::Redundant => false,
        };
        if ok {
            counted::slot(k)
        } else {
            None
        }
    }

    /// Program code on kernel thread `cur` accessed stack address `addr`.
    #[inline]
    fn note_stack(&mut self, cur: usize, addr: u64) {
        if let Some(t) = self.threads.get_mut(cur) {
            if t.stack_low == 0 || addr < t.stack_low {
                t.stack_low = addr;
            }
        }
    }
}
