//! Memory a library function reads or writes on its caller's behalf (the
//! table of guest-sdk/cc/ranges.def, [`crate::intercept::ranges`]): a call
//! from program code is checked as ranged accesses of the calling thread,
//! attributed to the call instruction, a cache line at a time
//! ([`crate::machine::ranges`]) — at entry,
//! or at return when the result gives the ranges (`read`'s byte count,
//! `snprintf`'s length). An IFUNC resolver (glibc's `memcpy`, `strlen`, …)
//! is caught at its return: the implementation it picked is intercepted.

use super::{Entry, Pending, Return};
use crate::intercept::libs::LibCall;
use crate::intercept::ranges::{self, Touch};
use crate::intercept::runtime::Class;
use crate::machine::ranges::lines;
use crate::machine::{call, Machine, Observe};
use crate::observe::observer::Control;

impl Machine {
    /// A ranges call's entry ([`Machine::binary_entry`]): a function whose
    /// ranges its arguments give is checked now.
    pub(super) fn ranges_entry(&mut self, call: LibCall, e: &mut Entry) {
        let LibCall::Range(i) = call else {
            return;
        };
        let f = &ranges::table()[usize::from(i)];
        if f.shape.at_return() {
            return;
        }
        let touches = ranges::touches(f, &e.args, 0, &self.cpu.mem);
        self.check_ranges(e.ret, &touches);
    }

    /// A ranges call's return: the ranges its result gives are checked; a
    /// resolver's result is intercepted as its function.
    pub(super) fn ranges_return(&mut self, p: &Pending, r: &Return) {
        match p.call {
            LibCall::Resolver(i) => {
                let at = r.rax;
                let rt = self.rt();
                if at == 0 || rt.program.contains(at) {
                    return;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = rt.by_entry.entry(at) {
                    e.insert(LibCall::Range(i));
                    self.call_at(at, call::INTERCEPT);
                }
            }
            LibCall::Range(i) => {
                let f = &ranges::table()[usize::from(i)];
                let touches = ranges::touches(f, &p.args, r.rax, &self.cpu.mem);
                self.check_ranges(p.ret, &touches);
            }
            _ => {}
        }
    }

    /// Checks the ranges a call returning to `ret` touched, as accesses of
    /// the running thread at the call instruction.
    fn check_ranges(&mut self, ret: u64, touches: &[Touch]) {
        let pc = crate::machine::call_before(&self.cpu.mem, ret);
        for t in touches {
            if self.check_range(pc, t) == Control::Stop {
                return;
            }
        }
    }

    /// One ranged access, a cache line at a time, under binary mode's
    /// rules for program code's accesses.
    fn check_range(&mut self, pc: u64, t: &Touch) -> Control {
        let cur = self.cpu.cur;
        for (at, n) in lines(t) {
            let stack = self.is_stack(at);
            let tag = Observe::TRACKED | Observe::UNPRUNED;
            match self.rt().classify(pc, at, t.kind, tag, stack, cur) {
                Class::Checked => {
                    if self.range_access(pc, at, n, t, stack) == Control::Stop {
                        return Control::Stop;
                    }
                }
                Class::PlainAtomic { order, .. } => self.binary_plain_atomic(pc, at, t.kind, order),
                Class::Drop | Class::Unchecked => {}
            }
        }
        Control::Continue
    }
}
