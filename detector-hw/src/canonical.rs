//! The canonical vector-clock race detector of LARD Appendix A (RADISH §3.1),
//! written for clarity: it is the oracle the other detectors are tested
//! against.
//!
//! # State
//!
//! * One vector clock per thread identity ([`ClockTable`]); WriteVC sets
//!   entries, nothing else changes them (see [`crate::lard`]).
//! * One *access history* per byte (or per unit, see [`Granularity`]): the
//!   last write (thread, clock, pc) by any thread, and for each thread its
//!   last read (clock, pc).
//!
//! # Check, then record
//!
//! On an access by thread `t` with vector clock `C`:
//!
//! * any access checks the last write `(u, c)`: it races unless `u == t` or
//!   `c <= C[u]` (WriteWrite or WriteRead);
//! * a write also checks every last read `(u, c)`: it races unless `u == t`
//!   or `c <= C[u]` (ReadWrite);
//! * then the access is recorded, even if it raced: a read sets the reader's
//!   last read to `(C[t], pc)`; a write sets the last write to
//!   `(t, C[t], pc)` and clears all last reads.
//!
//! # Why clearing the reads on a write does not change which accesses race
//!
//! Appendix A calls clearing the last reads on a write an optimisation. If
//! the write `w` is race-free, every read `r` it clears happens before it
//! (`r ⊑ w`). A later write `a` that `r` would race with (`r ⋢ a`) cannot
//! have `w ⊑ a` (happens-before is transitive), so `a` races with `w`, or
//! with the write that replaced `w` in the history (if the chain of
//! intervening writes is race-free, each one is likewise not ordered before
//! `a`). So clearing changes no racy/non-racy verdict while writes are
//! race-free; it can only drop `ReadWrite` entries from the report of an
//! access that is racy anyway because of a `WriteWrite` race.
//!
//! After a *racy* write, the history no longer describes all earlier accesses
//! whatever we do: keeping only the last write already forgets the write it
//! raced with. Clearing the reads there (all of them, racing or not) can hide
//! later races with those reads, exactly as overwriting the last write can
//! hide later races with it. This is the behaviour of the algorithm as
//! FastTrack implements it (a write resets the read state), which is why the
//! oracle does the same: [`crate::fasttrack::FastTrack`] must match it.
//! [`Canonical::with_read_clearing`] turns clearing off, to study this.

use std::collections::{BTreeMap, HashMap};

use crate::clock::{ClockRef, ClockTable, ThreadIdx};
use crate::detector::{history_units, Detector, Granularity};
use crate::event::{Access, AccessKind, LardOp, Origin, ProgramEvent, ThreadKey};
use crate::lard::{self, HistoryOp};
use crate::race::{Race, RaceCollector, RaceKind};

/// The last write to a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WriteRecord {
    thread: ThreadIdx,
    clock: u64,
    pc: u64,
}

/// One thread's last read of a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ReadRecord {
    clock: u64,
    pc: u64,
}

/// The access history of one byte (or unit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct AccessHistory {
    last_write: Option<WriteRecord>,
    last_reads: BTreeMap<ThreadIdx, ReadRecord>,
}

impl AccessHistory {
    fn is_empty(&self) -> bool {
        self.last_write.is_none() && self.last_reads.is_empty()
    }
}

/// The canonical (textbook) vector-clock detector; see the module docs.
#[derive(Clone, Debug)]
pub struct Canonical {
    clocks: ClockTable,
    histories: HashMap<u64, AccessHistory>,
    granularity: Granularity,
    clear_reads_on_write: bool,
    races: RaceCollector,
}

impl Default for Canonical {
    fn default() -> Self {
        Canonical::new()
    }
}

impl Canonical {
    /// A canonical detector with byte granularity.
    pub fn new() -> Canonical {
        Canonical::with_granularity(Granularity::Byte)
    }

    /// A canonical detector with the given access-history granularity.
    pub fn with_granularity(granularity: Granularity) -> Canonical {
        Canonical {
            clocks: ClockTable::new(),
            histories: HashMap::new(),
            granularity,
            clear_reads_on_write: true,
            races: RaceCollector::new(),
        }
    }

    /// Whether a write clears the last reads (default `true`, the algorithm
    /// every other detector implements). `false` keeps each thread's last
    /// read until that thread reads again; see the module docs.
    pub fn with_read_clearing(mut self, clear: bool) -> Canonical {
        self.clear_reads_on_write = clear;
        self
    }

    /// Entry `entry` of identity `who`'s vector clock.
    pub fn clock_entry(&self, who: ThreadKey, entry: ThreadKey) -> u64 {
        self.clocks.entry(who, entry)
    }

    /// Checks one byte's history for `kind` by thread `t` with clock `c`,
    /// reporting races into `races`, then records the access.
    #[allow(clippy::too_many_arguments)]
    fn check_and_record(
        history: &mut AccessHistory,
        clocks: &ClockTable,
        races: &mut RaceCollector,
        t: ThreadIdx,
        c: ClockRef<'_>,
        kind: AccessKind,
        pc: u64,
        clear_reads_on_write: bool,
    ) {
        let races_with = |u: ThreadIdx, clock: u64| u != t && clock > c.get(u);
        if let Some(w) = history.last_write {
            if races_with(w.thread, w.clock) {
                let race_kind = match kind {
                    AccessKind::Write => RaceKind::WriteWrite,
                    AccessKind::Read => RaceKind::WriteRead,
                };
                races.push(race_kind, clocks.key(w.thread), w.pc, w.clock);
            }
        }
        let now = c.get(t);
        match kind {
            AccessKind::Read => {
                history.last_reads.insert(t, ReadRecord { clock: now, pc });
            }
            AccessKind::Write => {
                for (&u, r) in &history.last_reads {
                    if races_with(u, r.clock) {
                        races.push(RaceKind::ReadWrite, clocks.key(u), r.pc, r.clock);
                    }
                }
                history.last_write = Some(WriteRecord {
                    thread: t,
                    clock: now,
                    pc,
                });
                if clear_reads_on_write {
                    history.last_reads.clear();
                }
            }
        }
    }

    fn apply_history_op(&mut self, op: HistoryOp) {
        match op {
            HistoryOp::Clear { addr, len } => {
                for i in 0..len {
                    self.histories.remove(&addr.wrapping_add(i));
                }
            }
            HistoryOp::Copy { src, dst, len } => {
                // Snapshot the source first: the regions may overlap.
                let copied: Vec<Option<AccessHistory>> = (0..len)
                    .map(|i| self.histories.get(&src.wrapping_add(i)).cloned())
                    .collect();
                for (i, h) in (0..len).zip(copied) {
                    let at = dst.wrapping_add(i);
                    match h {
                        Some(h) => {
                            self.histories.insert(at, h);
                        }
                        None => {
                            self.histories.remove(&at);
                        }
                    }
                }
            }
        }
    }
}

impl Detector for Canonical {
    fn accepts_floors(&self) -> bool {
        true
    }

    /// Byte granularity only (other granularities keep histories per unit).
    fn history(&self, addr: u64) -> Option<Vec<crate::detector::Remembered>> {
        use crate::detector::Remembered;
        if self.granularity != Granularity::Byte {
            return None;
        }
        let Some(h) = self.histories.get(&addr) else {
            return Some(Vec::new());
        };
        let w = h.last_write.iter().map(|w| Remembered {
            thread: self.clocks.key(w.thread),
            clock: w.clock,
            pc: w.pc,
            write: true,
        });
        let r = h.last_reads.iter().map(|(&t, r)| Remembered {
            thread: self.clocks.key(t),
            clock: r.clock,
            pc: r.pc,
            write: false,
        });
        Some(w.chain(r).collect())
    }

    fn name(&self) -> &'static str {
        "canonical"
    }

    fn access(&mut self, a: &Access) -> Option<Race> {
        if !lard::is_checked(a) {
            return None;
        }
        let key = lard::identity(&a.origin);
        let t = self.clocks.identity(key);
        let (first, count) = history_units(a, self.granularity);
        let c = self.clocks.clock(t);
        for i in 0..u64::from(count) {
            let addr = first.wrapping_add(i);
            let history = self.histories.entry(addr).or_default();
            Self::check_and_record(
                history,
                &self.clocks,
                &mut self.races,
                t,
                c,
                a.kind,
                a.pc,
                self.clear_reads_on_write,
            );
            debug_assert!(!history.is_empty());
        }
        self.races.finish(key, c.get(t), a)
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        if let Some(h) = lard::apply_clock_effects(&mut self.clocks, origin, op) {
            self.apply_history_op(h);
        }
    }

    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, _pc: u64) {
        lard::apply_program_event(&mut self.clocks, origin, ev);
    }
}
