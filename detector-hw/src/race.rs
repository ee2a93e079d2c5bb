//! Race reports: what a detector returns for a racy access.
//!
//! A *race* is reported on the second (current) access of a conflicting,
//! concurrent pair. The report names the current access and, for each earlier
//! conflicting access found in the access history, the thread identity that
//! made it, its PC and the [`RaceKind`]. An access is racy iff any of its
//! bytes races; the earlier accesses are deduplicated across bytes, so a
//! report lists each distinct `(thread, pc, kind)` triple once.

use crate::event::{Access, ThreadKey};

/// The kind of a race: the first word names the *earlier* access, the second
/// the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RaceKind {
    /// An earlier write races with the current write.
    WriteWrite,
    /// An earlier write races with the current read.
    WriteRead,
    /// An earlier read races with the current write.
    ReadWrite,
}

impl RaceKind {
    /// All kinds, in their `Ord` order.
    pub const ALL: [RaceKind; 3] = [
        RaceKind::WriteWrite,
        RaceKind::WriteRead,
        RaceKind::ReadWrite,
    ];

    fn bit(self) -> u8 {
        match self {
            RaceKind::WriteWrite => 1,
            RaceKind::WriteRead => 2,
            RaceKind::ReadWrite => 4,
        }
    }
}

/// A set of [`RaceKind`]s (a three-bit set), e.g. the kinds of one report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RaceKinds(u8);

impl RaceKinds {
    /// The empty set.
    pub const EMPTY: RaceKinds = RaceKinds(0);

    /// Adds `kind` to the set.
    pub fn insert(&mut self, kind: RaceKind) {
        self.0 |= kind.bit();
    }

    /// True if `kind` is in the set.
    pub fn contains(self, kind: RaceKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// True if the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The kinds in the set, in `Ord` order.
    pub fn iter(self) -> impl Iterator<Item = RaceKind> {
        RaceKind::ALL.into_iter().filter(move |k| self.contains(*k))
    }
}

/// One earlier access that races with the current access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PriorAccess {
    /// The kind of race (earlier access first).
    pub kind: RaceKind,
    /// The identity (LARD: language thread if declared) that made the earlier access.
    pub thread: ThreadKey,
    /// The PC of the earlier access.
    pub pc: u64,
}

/// A racy access and the earlier accesses it races with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The identity the detector attributed the current access to.
    pub thread: ThreadKey,
    /// The current (second) access, as the emulator reported it.
    pub access: Access,
    /// The distinct earlier conflicting accesses, sorted and deduplicated;
    /// never empty.
    pub priors: Vec<PriorAccess>,
}

impl Race {
    /// The set of race kinds among [`Race::priors`].
    pub fn kinds(&self) -> RaceKinds {
        let mut set = RaceKinds::EMPTY;
        for p in &self.priors {
            set.insert(p.kind);
        }
        set
    }
}

/// Collects the earlier accesses found while checking one access, across all
/// its bytes, and builds the deduplicated [`Race`] report.
///
/// Detectors keep one collector and reuse it, so race-free accesses allocate
/// nothing.
#[derive(Clone, Debug, Default)]
pub struct RaceCollector {
    found: Vec<PriorAccess>,
}

impl RaceCollector {
    /// An empty collector.
    pub fn new() -> RaceCollector {
        RaceCollector::default()
    }

    /// Records one earlier conflicting access (duplicates are fine).
    #[inline]
    pub fn push(&mut self, kind: RaceKind, thread: ThreadKey, pc: u64) {
        // Consecutive bytes usually report the same earlier access: skip the
        // most common duplicate cheaply, the rest are removed in `finish`.
        let prior = PriorAccess { kind, thread, pc };
        if self.found.last() != Some(&prior) {
            self.found.push(prior);
        }
    }

    /// Builds the report for `access` (made by `thread`) if anything was
    /// pushed, and empties the collector.
    #[inline]
    pub fn finish(&mut self, thread: ThreadKey, access: &Access) -> Option<Race> {
        if self.found.is_empty() {
            return None;
        }
        self.report(thread, access)
    }

    #[cold]
    fn report(&mut self, thread: ThreadKey, access: &Access) -> Option<Race> {
        let mut priors = std::mem::take(&mut self.found);
        priors.sort_unstable();
        priors.dedup();
        Some(Race {
            thread,
            access: *access,
            priors,
        })
    }
}
