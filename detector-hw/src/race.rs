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
///
/// Two priors are the same when kind, thread and PC are: `clock` says when
/// the earlier access was made, not which it was, so equality, order and
/// hash leave it out (a report lists an earlier access site once, with the
/// latest clock seen).
#[derive(Clone, Copy, Debug)]
pub struct PriorAccess {
    /// The kind of race (earlier access first).
    pub kind: RaceKind,
    /// The identity (LARD: language thread if declared) that made the earlier access.
    pub thread: ThreadKey,
    /// The PC of the earlier access.
    pub pc: u64,
    /// The clock of the earlier access's epoch (`clock@thread`): its
    /// thread's own entry when it was made; 0 when the detector does not
    /// keep it. A reused language thread id is told apart by it
    /// (docs/lard-cc.md, "Reports name the OpenMP units").
    pub clock: u64,
}

impl PriorAccess {
    /// The earlier access `pc` of `thread` at `clock`.
    pub fn new(kind: RaceKind, thread: ThreadKey, pc: u64, clock: u64) -> PriorAccess {
        PriorAccess {
            kind,
            thread,
            pc,
            clock,
        }
    }

    fn key(&self) -> (RaceKind, ThreadKey, u64) {
        (self.kind, self.thread, self.pc)
    }
}

impl PartialEq for PriorAccess {
    fn eq(&self, other: &PriorAccess) -> bool {
        self.key() == other.key()
    }
}

impl Eq for PriorAccess {}

impl std::hash::Hash for PriorAccess {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.key().hash(h);
    }
}

impl PartialOrd for PriorAccess {
    fn partial_cmp(&self, other: &PriorAccess) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PriorAccess {
    fn cmp(&self, other: &PriorAccess) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Sorts `priors` and keeps each earlier access site once, with the
/// latest clock it was seen at.
pub fn dedup_priors(priors: &mut Vec<PriorAccess>) {
    priors.sort_unstable_by(|a, b| a.cmp(b).then(b.clock.cmp(&a.clock)));
    priors.dedup();
}

/// A racy access and the earlier accesses it races with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The identity the detector attributed the current access to.
    pub thread: ThreadKey,
    /// The clock of the current access's epoch (its thread's own entry); 0
    /// when the detector does not keep it.
    pub clock: u64,
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

    /// Records one earlier conflicting access, made at `clock` of its
    /// thread (duplicates are fine).
    #[inline]
    pub fn push(&mut self, kind: RaceKind, thread: ThreadKey, pc: u64, clock: u64) {
        // Consecutive bytes usually report the same earlier access: skip the
        // most common duplicate cheaply, the rest are removed in `finish`.
        let prior = PriorAccess::new(kind, thread, pc, clock);
        match self.found.last_mut() {
            Some(last) if *last == prior => last.clock = last.clock.max(clock),
            _ => self.found.push(prior),
        }
    }

    /// Builds the report for `access` (made by `thread` at `clock`) if
    /// anything was pushed, and empties the collector.
    #[inline]
    pub fn finish(&mut self, thread: ThreadKey, clock: u64, access: &Access) -> Option<Race> {
        if self.found.is_empty() {
            return None;
        }
        self.report(thread, clock, access)
    }

    #[cold]
    fn report(&mut self, thread: ThreadKey, clock: u64, access: &Access) -> Option<Race> {
        let mut priors = std::mem::take(&mut self.found);
        dedup_priors(&mut priors);
        Some(Race {
            thread,
            clock,
            access: *access,
            priors,
        })
    }
}
