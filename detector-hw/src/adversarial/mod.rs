//! Adversarial memory (JUMBLE, Flanagan & Freund, PLDI 2010): reads of
//! racy locations return any value the memory model still allows, chosen to
//! make the program misbehave, so that destructive races show up in testing.
//!
//! # Memory model (the Operational Progressive JMM, JUMBLE §4.1)
//!
//! * Each thread identity has a vector clock. The clocks are the LARD ones:
//!   a [`ClockTable`] driven by [`lard::apply_clock_effects`], the same
//!   definition of identity, WriteVC and the initialisation rule that every
//!   detector uses (there is no second happens-before definition here).
//! * Each *monitored location* (an address and a size of 1, 2, 4 or 8 bytes)
//!   has a [`WriteBuffer`] `v1@K1 · … · vn@Kn`: every Tracked write appends
//!   the value written with the writer's vector clock ([WRITE]).
//! * A location's buffer starts with the value memory holds when monitoring
//!   begins, at clock ⊥ (the paper's initial `0@⊥` entry): that value is
//!   visible to every reader until a write that happens before the reader
//!   hides it.
//! * A Tracked read of a monitored location by identity `t` with clock `Ct`
//!   may return `vi` iff no later entry `j > i` has `Ki ⊑ Kj ⊑ Ct` ([READ]);
//!   the latest value is always visible. The [`Heuristic`] picks one.
//! * Buffers are bounded ([`AdversarialConfig::capacity`], 32 by default):
//!   [GC2] drops an entry followed by an identical write (same value, same
//!   clock), then [REMOVE OLDEST] drops the oldest entry. Both only shrink
//!   the set of values the adversary may return; neither admits a value the
//!   model forbids.
//! * Memory reuse and movement keep their LARD meaning: **ClearHistory**
//!   starts the buffers of monitored locations in the region afresh with the
//!   value memory holds at that point, at ⊥; **CopyHistory** copies the
//!   buffers of monitored locations in the source to the same offsets in the
//!   destination (the data moved); a monitored destination location without
//!   a source buffer stops being monitored (it may be monitored again by a
//!   trigger).
//!
//! # Which locations are monitored
//!
//! [`Triggers`]: a Tracked access at one of the trigger PCs, or overlapping
//! one of the trigger address ranges, starts monitoring the location it
//! accesses (`lard run --adversarial-at SYMBOL|ADDR|PC`; by default the PCs
//! of the races a first FastTrack pass found). Once monitored, every Tracked
//! access to the location goes through the write buffer, whatever its PC.
//!
//! # What the emulator does
//!
//! The model only decides values. The emulator asks [`AdversarialMemory::involves`]
//! for each Tracked access (a couple of comparisons when nothing matches); for
//! a read it passes memory's current value to [`AdversarialMemory::read`] and
//! makes the instruction see the returned value; for a write it calls
//! [`AdversarialMemory::before_write`], lets the write happen and reports the
//! resulting memory contents with [`AdversarialMemory::after_write`]. Untracked
//! code never sees adversarial values.
//!
//! Accesses that overlap a monitored location without matching its address
//! and size exactly (partial or larger accesses) see memory as it is (the
//! latest value, always allowed); a partial write appends the location's
//! resulting value at the writer's clock.

mod buffer;
mod heuristic;
#[cfg(test)]
mod tests;

pub use buffer::{Entry, WriteBuffer, MAX_ENTRIES};
pub use heuristic::{Chooser, Heuristic, FAIRNESS_PERIOD};

use crate::clock::{ClockRef, ClockTable, ThreadIdx, VectorClock};
use crate::event::{LardOp, Origin};
use crate::lard::{self, HistoryOp};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Default bound on a location's write buffer (JUMBLE §4.1: 32).
pub const DEFAULT_CAPACITY: usize = 32;

/// Largest location the model holds values for (a `u64`).
const MAX_LOCATION: u64 = 8;

/// What starts monitoring a location.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Triggers {
    /// Tracked accesses at these PCs (sorted, deduplicated by [`Triggers::new`]).
    pcs: Vec<u64>,
    /// Tracked accesses overlapping these half-open ranges `[start, end)`.
    ranges: Vec<(u64, u64)>,
}

impl Triggers {
    /// Triggers from PCs and address ranges `[start, end)`.
    pub fn new(mut pcs: Vec<u64>, mut ranges: Vec<(u64, u64)>) -> Triggers {
        pcs.sort_unstable();
        pcs.dedup();
        ranges.retain(|(s, e)| s < e);
        ranges.sort_unstable();
        Triggers { pcs, ranges }
    }

    /// True if nothing can ever be monitored.
    pub fn is_empty(&self) -> bool {
        self.pcs.is_empty() && self.ranges.is_empty()
    }

    /// True if a Tracked access at `pc` to `[addr, addr+size)` starts monitoring.
    #[inline]
    pub fn fires(&self, pc: u64, addr: u64, size: u64) -> bool {
        if self.pcs.binary_search(&pc).is_ok() {
            return true;
        }
        let end = addr.saturating_add(size);
        self.ranges.iter().any(|&(s, e)| s < end && addr < e)
    }

    /// The trigger PCs.
    pub fn pcs(&self) -> &[u64] {
        &self.pcs
    }

    /// The trigger address ranges.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
}

/// Configuration of an adversarial memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdversarialConfig {
    /// How a read picks among the visible values.
    pub heuristic: Heuristic,
    /// Seed of the `random*` heuristics.
    pub seed: u64,
    /// Bound on each write buffer (1 to [`MAX_ENTRIES`]).
    pub capacity: usize,
    /// What starts monitoring a location.
    pub triggers: Triggers,
}

impl AdversarialConfig {
    /// `heuristic` with seed 0, the default capacity and no triggers.
    pub fn new(heuristic: Heuristic) -> AdversarialConfig {
        AdversarialConfig {
            heuristic,
            seed: 0,
            capacity: DEFAULT_CAPACITY,
            triggers: Triggers::default(),
        }
    }
}

/// Counters of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdversarialStats {
    /// Locations that were ever monitored.
    pub locations: u64,
    /// Tracked reads of monitored locations.
    pub reads: u64,
    /// Reads whose visible set had more than one value.
    pub choices: u64,
    /// Reads that returned a value other than the latest write's.
    pub stale: u64,
    /// Tracked writes recorded in a write buffer.
    pub writes: u64,
    /// Entries dropped because a buffer was full ([REMOVE OLDEST]).
    pub evicted: u64,
}

/// The adversarial memory: write buffers of monitored locations, the
/// threads' vector clocks and the heuristic; see the module docs.
#[derive(Clone, Debug)]
pub struct AdversarialMemory {
    clocks: ClockTable,
    /// Monitored locations by first byte.
    buffers: BTreeMap<u64, WriteBuffer>,
    triggers: Triggers,
    chooser: Chooser,
    capacity: usize,
    stats: AdversarialStats,
    /// Scratch for the visible set (kept to avoid allocating per read).
    visible: Vec<usize>,
    /// Per identity, a shared copy of its clock for write-buffer entries,
    /// taken at its first write after the clock last changed (so writes do
    /// not allocate).
    snapshots: Vec<Option<Rc<VectorClock>>>,
}

/// True for the location sizes the model holds values for.
#[inline]
fn modelled_size(size: u64) -> bool {
    matches!(size, 1 | 2 | 4 | 8)
}

impl AdversarialMemory {
    /// An adversarial memory with nothing monitored yet.
    pub fn new(config: AdversarialConfig) -> AdversarialMemory {
        AdversarialMemory {
            clocks: ClockTable::new(),
            buffers: BTreeMap::new(),
            triggers: config.triggers,
            chooser: Chooser::new(config.heuristic, config.seed),
            capacity: config.capacity.clamp(1, MAX_ENTRIES),
            stats: AdversarialStats::default(),
            visible: Vec::with_capacity(DEFAULT_CAPACITY),
            snapshots: Vec::new(),
        }
    }

    /// What starts monitoring a location.
    pub fn triggers(&self) -> &Triggers {
        &self.triggers
    }

    /// The heuristic in use.
    pub fn heuristic(&self) -> Heuristic {
        self.chooser.heuristic()
    }

    /// Counters so far.
    pub fn stats(&self) -> AdversarialStats {
        self.stats
    }

    /// The write buffer of the location starting at `addr`, if monitored.
    pub fn buffer(&self, addr: u64) -> Option<&WriteBuffer> {
        self.buffers.get(&addr)
    }

    /// Monitored locations `(addr, size)`, in address order.
    pub fn locations(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.buffers.iter().map(|(a, b)| (*a, b.size()))
    }

    /// True if a Tracked access at `pc` to `[addr, addr+size)` involves the
    /// adversarial memory (it touches a monitored location or a trigger
    /// fires). The emulator calls the other methods only when this is true.
    #[inline]
    pub fn involves(&self, pc: u64, addr: u64, size: u64) -> bool {
        self.overlaps_monitored(addr, size) || self.triggers.fires(pc, addr, size)
    }

    #[inline]
    fn overlaps_monitored(&self, addr: u64, size: u64) -> bool {
        if self.buffers.is_empty() {
            return false;
        }
        let end = addr.saturating_add(size);
        self.buffers
            .range(addr.saturating_sub(MAX_LOCATION - 1)..end)
            .any(|(a, b)| a + u64::from(b.size()) > addr)
    }

    /// Starts monitoring `(addr, size)` if a trigger fires and it overlaps
    /// no monitored location; the buffer starts with `current` at ⊥.
    fn maybe_monitor(&mut self, pc: u64, addr: u64, size: u64, current: u64) {
        if modelled_size(size)
            && !self.overlaps_monitored(addr, size)
            && self.triggers.fires(pc, addr, size)
        {
            self.buffers
                .insert(addr, WriteBuffer::new(size as u32, current));
            self.stats.locations += 1;
        }
    }

    /// A Tracked read at `pc` by `origin` of `size` bytes at `addr`, whose
    /// bytes in memory currently hold `current` (little-endian). Returns the
    /// value the read must return, or `None` to read memory as it is.
    pub fn read(
        &mut self,
        origin: &Origin,
        pc: u64,
        addr: u64,
        size: u64,
        current: u64,
    ) -> Option<u64> {
        self.read_as(origin, pc, addr, size, current, true)
    }

    /// [`AdversarialMemory::read`]; with `choose` false the read sees memory
    /// as it is (the emulator cannot apply another value at this site yet)
    /// and leaves the heuristic's state alone.
    pub fn read_as(
        &mut self,
        origin: &Origin,
        pc: u64,
        addr: u64,
        size: u64,
        current: u64,
        choose: bool,
    ) -> Option<u64> {
        if !self.buffers.contains_key(&addr) {
            self.maybe_monitor(pc, addr, size, current);
        }
        let buffer = self.buffers.get_mut(&addr)?;
        if u64::from(buffer.size()) != size {
            return None;
        }
        self.stats.reads += 1;
        if !choose {
            return None;
        }
        let t = self.clocks.identity(lard::identity(origin));
        let now = self.clocks.clock(t);
        buffer.visible(now, &mut self.visible);
        if self.visible.len() > 1 {
            self.stats.choices += 1;
        }
        let i = self.chooser.choose(buffer, &self.visible);
        let latest = buffer.len() - 1;
        if i != latest {
            self.stats.stale += 1;
        }
        let v = buffer.entry(i).value;
        buffer.note_read(v, i == latest);
        Some(v)
    }

    /// Before a Tracked write at `pc` to `[addr, addr+size)` whose bytes
    /// currently hold `current` (for sizes up to 8): starts monitoring if a
    /// trigger fires. Returns true if the emulator must report the result
    /// with [`AdversarialMemory::after_write`].
    pub fn before_write(&mut self, pc: u64, addr: u64, size: u64, current: u64) -> bool {
        if self.buffers.contains_key(&addr) {
            return true;
        }
        self.maybe_monitor(pc, addr, size, current);
        self.overlaps_monitored(addr, size)
    }

    /// After a Tracked write by `origin` to `[addr, addr+size)`: appends each
    /// overlapped monitored location's new contents (`memory(addr, size)`)
    /// at the writer's clock.
    pub fn after_write(
        &mut self,
        origin: &Origin,
        addr: u64,
        size: u64,
        mut memory: impl FnMut(u64, u32) -> Option<u64>,
    ) {
        let t = self.clocks.identity(lard::identity(origin));
        let clock = self.snapshot(t);
        let end = addr.saturating_add(size);
        for (a, buffer) in self
            .buffers
            .range_mut(addr.saturating_sub(MAX_LOCATION - 1)..end)
        {
            if a + u64::from(buffer.size()) <= addr {
                continue;
            }
            if let Some(v) = memory(*a, buffer.size()) {
                self.stats.writes += 1;
                if buffer.push(v, Some(Rc::clone(&clock)), self.capacity) {
                    self.stats.evicted += 1;
                }
            }
        }
    }

    /// The shared snapshot of identity `t`'s current clock.
    fn snapshot(&mut self, t: ThreadIdx) -> Rc<VectorClock> {
        let i = t as usize;
        if i >= self.snapshots.len() {
            self.snapshots.resize(i + 1, None);
        }
        let clocks = &self.clocks;
        Rc::clone(self.snapshots[i].get_or_insert_with(|| Rc::new(clocks.clock(t).to_owned())))
    }

    /// A LARDx86 operation by `origin`: clock effects (the LARD definition)
    /// and, for ClearHistory/CopyHistory, the write buffers' meaning above.
    /// `memory(addr, size)` reads guest memory for ClearHistory's fresh start.
    pub fn lard(
        &mut self,
        origin: &Origin,
        op: &LardOp,
        mut memory: impl FnMut(u64, u32) -> Option<u64>,
    ) {
        if let LardOp::WriteVc { .. } | LardOp::Thread { .. } = op {
            // The issuer's clock changes: its next write takes a new snapshot.
            let t = self.clocks.identity(lard::identity(origin)) as usize;
            if let Some(s) = self.snapshots.get_mut(t) {
                *s = None;
            }
        }
        let Some(h) = lard::apply_clock_effects(&mut self.clocks, origin, op) else {
            return;
        };
        if self.buffers.is_empty() {
            return;
        }
        match h {
            HistoryOp::Clear { addr, len } => {
                let end = addr.saturating_add(len);
                for (a, buffer) in self.buffers.range_mut(addr..end) {
                    if let Some(v) = memory(*a, buffer.size()) {
                        *buffer = WriteBuffer::new(buffer.size(), v);
                    }
                }
            }
            HistoryOp::Copy { src, dst, len } => {
                let moved: Vec<(u64, WriteBuffer)> = self
                    .buffers
                    .range(src..src.saturating_add(len))
                    .filter(|(a, b)| *a + u64::from(b.size()) <= src + len)
                    .map(|(a, b)| (a - src + dst, b.clone()))
                    .collect();
                let stale: Vec<u64> = self
                    .buffers
                    .range(dst..dst.saturating_add(len))
                    .map(|(a, _)| *a)
                    .collect();
                for a in stale {
                    self.buffers.remove(&a);
                }
                for (a, b) in moved {
                    self.buffers.insert(a, b);
                }
            }
        }
    }

    /// The vector clock of `origin`'s identity (for tests and reports).
    pub fn clock_of(&mut self, origin: &Origin) -> ClockRef<'_> {
        let t = self.clocks.identity(lard::identity(origin));
        self.clocks.clock(t)
    }
}
