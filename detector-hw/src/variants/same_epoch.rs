//! Exact same-epoch filtering of repeated accesses for the clock-owning
//! adapter ([`super::Combined`]).
//!
//! An access that repeats the *last* access to its 8-byte granule — same
//! identity, same first byte, size, kind and PC, with the identity's vector
//! clock unchanged since, and that earlier access race-free — changes
//! nothing in an inner detector that declares
//! [`Detector::repeats_in_epoch_are_noops`](crate::Detector::repeats_in_epoch_are_noops)
//! (byte-granular FastTrack): its race check sees the same last write and
//! the same clock, so it is race-free too, and its update writes the values
//! the cells already hold (FastTrack, module docs: a read by `t` leaves
//! `t@now` and its PC as the exclusive read or as `t`'s read vector clock
//! entry; a write leaves `t@now`, its PC and no reads; the granule's units
//! are already split or merged as the access needs). So the adapter may
//! skip it: the verdict (no race) and every later verdict and report are
//! the same. `detector-hw/tests/variants.rs`,
//! `same_epoch_filter_changes_no_report`, checks this against the unfiltered
//! detector on random traces with injected repeats, down to the final
//! access histories.
//!
//! The table is direct-mapped by granule. The invariant: a valid entry for
//! granule `g` is the last access that touched `g` since the table was last
//! [invalidated](SameEpochFilter::invalidate) — every access that touches
//! `g` either becomes its entry or removes an entry for `g`. The owner
//! invalidates the table whenever the accessing identity or its clock
//! changes, and on every non-access event (synchronization, LARDx86
//! operations), so "the same epoch" never needs to be compared.

use crate::event::{Access, AccessKind};
use crate::lard::MAX_ACCESS_SIZE;

/// Bytes per granule of the filter (FastTrack's granule).
const GRANULE: u64 = 8;
/// Entries of the table (a power of two).
const SLOTS: usize = 1024;

/// One remembered access: the last one to its granule.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    addr: u64,
    pc: u64,
    /// `size << 1 | write`.
    shape: u32,
    /// The generation it belongs to (0: never valid).
    gen: u32,
}

/// The filter; see the module docs.
#[derive(Clone, Debug)]
pub(super) struct SameEpochFilter {
    slots: Box<[Entry]>,
    /// Current generation (entries of other generations are invalid).
    gen: u32,
    /// Accesses skipped so far.
    skipped: u64,
}

#[inline]
fn shape(a: &Access) -> u32 {
    a.size << 1 | u32::from(a.kind == AccessKind::Write)
}

#[inline]
fn slot(granule: u64) -> usize {
    granule as usize & (SLOTS - 1)
}

impl SameEpochFilter {
    pub(super) fn new() -> SameEpochFilter {
        SameEpochFilter {
            slots: vec![Entry::default(); SLOTS].into_boxed_slice(),
            gen: 1,
            skipped: 0,
        }
    }

    /// Forgets every access (a new epoch or another identity).
    #[inline]
    pub(super) fn invalidate(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            // Wrapped: entries of old generations could look valid again.
            self.slots.fill(Entry::default());
            self.gen = 1;
        }
    }

    /// True if `a` repeats the last access to its granule (see the module
    /// docs for what the caller guarantees); counts it as skipped.
    #[inline]
    pub(super) fn repeats(&mut self, a: &Access) -> bool {
        let e = &self.slots[slot(a.addr / GRANULE)];
        let hit = e.gen == self.gen && e.addr == a.addr && e.pc == a.pc && e.shape == shape(a);
        self.skipped += u64::from(hit);
        hit
    }

    /// Records access `a`, just checked by the inner detector (`race_free`:
    /// it reported no race).
    #[inline]
    pub(super) fn record(&mut self, a: &Access, race_free: bool) {
        let g = a.addr / GRANULE;
        let within = a.size >= 1 && a.addr % GRANULE + u64::from(a.size) <= GRANULE;
        if within && race_free {
            self.slots[slot(g)] = Entry {
                addr: a.addr,
                pc: a.pc,
                shape: shape(a),
                gen: self.gen,
            };
        } else {
            self.forget(a);
        }
    }

    /// Removes the entries of every granule `a` touches.
    #[cold]
    fn forget(&mut self, a: &Access) {
        let size = u64::from(a.size.min(MAX_ACCESS_SIZE));
        if size == 0 {
            return;
        }
        let (first, last) = (a.addr / GRANULE, a.addr.wrapping_add(size - 1) / GRANULE);
        let mut g = first;
        loop {
            let e = &mut self.slots[slot(g)];
            if e.addr / GRANULE == g {
                e.gen = 0;
            }
            if g == last {
                break;
            }
            g = g.wrapping_add(1) % (u64::MAX / GRANULE + 1);
        }
    }

    /// Accesses skipped so far.
    pub(super) fn skipped(&self) -> u64 {
        self.skipped
    }
}
