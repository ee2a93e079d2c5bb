//! Memory a library function touched for a lard-cc program's call
//! (`lardcc_note_ranges`, guest-sdk/cc/libc.c): the ranges the table gives
//! ([`crate::intercept::ranges`], the one binary mode uses) are checked as
//! Tracked accesses of the calling thread at the program's call, a cache
//! line at a time.

use super::{call_before, Machine};
use crate::intercept::ranges::{self, Touch};
use crate::observe::callstack;
use crate::observe::observation::Policy;
use crate::observe::observer::Control;
use lard_detector_hw::event::Access;

/// A ranged access is delivered as accesses of at most this many bytes,
/// each within one cache line.
const LINE: u64 = 64;

impl Machine {
    /// The lard-cc runtime's note at `note`: `struct lardcc_ranges_note`
    /// (index, three arguments, result, return address, call-stack id).
    pub(super) fn note_ranges(&mut self, note: u64) {
        let delivered = matches!(
            self.obs.policy,
            Policy::LardTracked | Policy::LardAll | Policy::Adversarial { deliver: true }
        );
        if !delivered {
            return;
        }
        let word = |i: u64| self.cpu.mem.read_u64(note + 8 * i);
        let (Some(index), Some(a0), Some(a1), Some(a2), Some(result), Some(ret), Some(stack)) = (
            word(0),
            word(1),
            word(2),
            word(3),
            word(4),
            word(5),
            word(6),
        ) else {
            return;
        };
        let Some(f) = usize::try_from(index)
            .ok()
            .and_then(|i| ranges::table().get(i))
        else {
            return;
        };
        let call = call_before(&self.cpu.mem, ret);
        let pc = if self.obs.call_stacks != 0 {
            callstack::site(call, stack as u32)
        } else {
            call
        };
        self.flush_accesses();
        for t in ranges::touches(f, &[a0, a1, a2], result, &self.cpu.mem) {
            if self.tracked_range(pc, &t) == Control::Stop {
                return;
            }
        }
    }

    /// One ranged Tracked access at `pc`, a cache line at a time.
    fn tracked_range(&mut self, pc: u64, t: &Touch) -> Control {
        for (at, n) in lines(t) {
            let stack = self.is_stack(at);
            if self.range_access(pc, at, n, t, stack) == Control::Stop {
                return Control::Stop;
            }
        }
        Control::Continue
    }

    /// Delivers `n` bytes at `at` of range `t` as a checked access of the
    /// running thread at `pc` (`stack`: the bytes are a thread's stack).
    pub(super) fn range_access(
        &mut self,
        pc: u64,
        at: u64,
        n: u64,
        t: &Touch,
        stack: bool,
    ) -> Control {
        self.obs.stats.count_access(true, stack, t.kind);
        let a = Access {
            pc,
            addr: at,
            size: n as u32,
            kind: t.kind,
            tracked: true,
            stack,
            origin: self.origin(),
        };
        self.emit_access(pc, a)
    }
}

/// The pieces of range `t` a cache line ([`LINE`] bytes) each: (first
/// byte, bytes).
pub(super) fn lines(t: &Touch) -> impl Iterator<Item = (u64, u64)> {
    let end = t.addr.saturating_add(t.len);
    let mut at = t.addr;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let n = (LINE - at % LINE).min(end - at);
        let piece = (at, n);
        at += n;
        Some(piece)
    })
}
