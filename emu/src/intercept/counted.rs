//! Pruned accesses and system-code atomics counted by translated code
//! (binary mode).
//!
//! An instruction static pruning removed (emu/src/binary/prune.rs) is not
//! checked; its accesses only add to the pruning table's dynamic counts. For
//! the analyses where that is all an access does, the instruction is
//! translated *counted* ([`Machine::observes`](crate::machine::Machine::observes),
//! unicorn patch 0011): each access adds 1 to its analysis' slot inline,
//! with no call into the emulator. [`PrunedCounts::fold`] moves what the
//! slots gained into the table's counters: into the analysis' row while
//! the process has more than one thread, into "made before the process's
//! first thread" while it has one — so it runs before the process leaves
//! its single-threaded start, and the table reads [`PrunedCounts::folded`].
//!
//! Which analyses may be counted, and when, is
//! [`BinaryRuntime::decide`](crate::intercept::runtime::BinaryRuntime::decide)'s
//! decision (docs/binary-mode.md, "Static pruning").
//!
//! Slot [`ATOMICS`] counts atomic instructions of system code (libc's
//! locks), whose instruction call would only have counted a sync event for
//! `--stats` ([`Machine::counted_atomic`](crate::machine::Machine::counted_atomic));
//! [`PrunedCounts::take_atomics`] hands them over.

use crate::binary::prune::Pruned;
use crate::cpu::uc::{AccessCounters, UcRef};

/// Pruned slots: the analyses whose accesses can be counted, in
/// [`Pruned::index`] order (frame, private stack, read-only data).
/// Redundant accesses keep the observation call.
pub const PRUNED_SLOTS: usize = 3;
/// The slot of system-code atomic instructions.
pub const ATOMICS: usize = PRUNED_SLOTS;
/// All slots.
pub const SLOTS: usize = ATOMICS + 1;

/// The counters of counted pruned instructions and how much of them the
/// table's counters already hold.
pub struct PrunedCounts {
    counters: AccessCounters,
    folded: [u64; SLOTS],
}

impl PrunedCounts {
    /// Zeroed counters, handed to the engine.
    ///
    /// # Safety
    /// As [`AccessCounters::new`]: the counts must outlive every run of the
    /// engine, and an engine takes one set.
    pub unsafe fn new(uc: UcRef) -> PrunedCounts {
        PrunedCounts {
            counters: AccessCounters::new(uc, SLOTS),
            folded: [0; SLOTS],
        }
    }

    /// Adds what the slots gained since the last fold to `pruned` (per
    /// analysis) or, while `single_threaded`, to `single`.
    pub fn fold(&mut self, single_threaded: bool, pruned: &mut [u64; 4], single: &mut u64) {
        for (k, done) in self.folded[..PRUNED_SLOTS].iter_mut().enumerate() {
            let now = self.counters.get(k);
            let gained = now - *done;
            *done = now;
            if single_threaded {
                *single += gained;
            } else {
                pruned[k] += gained;
            }
        }
    }

    /// `(pruned, single)` as [`PrunedCounts::fold`] would leave them, without
    /// folding (for a report printed while the run may go on).
    pub fn folded(&self, single_threaded: bool, pruned: [u64; 4], single: u64) -> ([u64; 4], u64) {
        let (mut p, mut s) = (pruned, single);
        for (k, done) in self.folded[..PRUNED_SLOTS].iter().enumerate() {
            let gained = self.counters.get(k) - done;
            if single_threaded {
                s += gained;
            } else {
                p[k] += gained;
            }
        }
        (p, s)
    }

    /// True when no pruned access was counted yet.
    pub fn is_zero(&self) -> bool {
        (0..PRUNED_SLOTS).all(|k| self.counters.get(k) == 0)
    }

    /// The system-code atomic instructions counted since the last call.
    pub fn take_atomics(&mut self) -> u64 {
        let now = self.counters.get(ATOMICS);
        let gained = now - self.folded[ATOMICS];
        self.folded[ATOMICS] = now;
        gained
    }
}

/// The slot of analysis `k`, if it has one.
pub fn slot(k: Pruned) -> Option<usize> {
    (k.index() < PRUNED_SLOTS).then_some(k.index())
}
