//! LARDISH: the RADISH hybrid hardware/software race detector (Devietti et
//! al., ISCA 2012) extended for LARDx86 (LARD §4.2, §5.3), as a simulation.
//!
//! [`Lardish`] implements [`Detector`]. Its verdicts come from the exact
//! access histories of the software manager's variable map
//! ([`history`]), so they are those of
//! [`Canonical`](crate::canonical::Canonical); the hardware structures —
//! caches with metadata lines ([`cache`], [`layout`]), in-hardware status,
//! local permissions, per-core clock tables ([`clocktable`]) — only decide
//! *which stage* (permission check, hardware check, software check) resolves
//! each access and what it costs. [`HwStats`] reports simulated cycles with no
//! detection, under LARDISH and under a FastTrack-in-software cost model,
//! plus RADISH's Table 2 / Figure 10 / Figure 11 statistics.
//!
//! See `docs/lardish.md` for the model, the cost models, every configuration
//! key and every simplification.

mod baselines;
pub mod cache;
pub mod clocktable;
pub mod config;
pub mod ftcost;
pub mod granularity;
pub mod history;
pub mod inline;
mod lanes;
pub mod layout;
pub mod probemap;
pub mod stats;
pub mod varmap;

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use crate::clock::{ClockRef, ClockTable, FxHashMap, FxHasher, ThreadIdx};

/// A `HashSet` using [`FxHasher`].
type FxHashSet<T> = HashSet<T, BuildHasherDefault<FxHasher>>;
use crate::detector::{history_units, Detector, Granularity};
use crate::event::{
    Access, AccessKind, Event, EventKind, LardOp, LowLevelSync, Origin, ProgramEvent, ThreadKey,
};
use crate::lard::{self, HistoryOp};
use crate::race::{Race, RaceCollector, RaceKind};

use baselines::{Baselines, Op};
use cache::{Hierarchy, LineKind};
use clocktable::HwClockTable;
pub use config::{CacheGeom, ConfigError, HwConfig, MdGranularity};
pub use ftcost::FtCost;
use granularity::{ItemMap, Learn, BLOCK};
use history::ByteMeta;
pub use history::{Holder, HwStatus, Perm};
use layout::Layout;
use probemap::ProbeMap;

/// How many events ahead [`Lardish::events`] prefetches.
const AHEAD: usize = 4;
pub use stats::{HwCause, HwStats, Mechanism, OccupancySample, SwCause};
use varmap::VarMap;

/// A byte's complete history: last reads `(thread, clock)`, last write.
pub type HistorySnapshot = (Vec<(ThreadKey, u64)>, Option<(ThreadKey, u64)>);

/// Which mechanism resolved a checked access (RADISH Figure 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Local permissions allowed it.
    Permission,
    /// A hardware race check decided it.
    Hardware,
    /// A software race check was needed.
    Software,
}

/// A [`View`] built from disjoint field borrows (so other fields stay
/// mutable).
macro_rules! view {
    ($s:ident) => {
        View {
            layout: $s.layout,
            resident: &$s.resident,
            expanded: &$s.expanded,
            compact: $s.cfg.compact_metadata,
            gens: &$s.gens,
            memo: $s.memo.as_ref().map(|m| m.fresh($s.changes)),
        }
    };
}

/// Lookups of [`View`]s remembered while what they depend on does not
/// change: whether the data line last asked about is expanded, and the
/// fill id of each core's metadata line for the metadata offset last asked
/// about. Exact because every answer is a function of `resident`,
/// `expanded` and `gens` alone, which a view borrows immutably (nothing
/// changes while it lives), and every change of them between views bumps
/// [`Lardish`]'s `changes`, which starts a new generation
/// ([`Memo::fresh`]). The bytes of one access share their metadata line,
/// and consecutive accesses mostly share it too, so this turns a dozen
/// hash lookups per byte into about one per line.
#[derive(Clone, Debug)]
struct Memo {
    /// Incremented by every change of what answers depend on and by every
    /// new key; entries of older generations are stale.
    generation: Cell<u64>,
    /// [`Lardish`]'s `changes` when the generation started.
    changes: Cell<u64>,
    dline: Cell<(u64, u64, bool)>,
    /// Metadata line offset (line without core) of `fills`, and its
    /// generation.
    key: Cell<(u64, u64)>,
    /// Per core: (generation, fill id or `NO_FILL`).
    fills: Vec<Cell<(u64, u64)>>,
    /// The last question and its answer: (generation, core, byte, fill id
    /// or `NO_FILL`). The check of one granule asks about the same byte
    /// and mostly the same core 4–5 times.
    last: Cell<(u64, usize, u64, u64)>,
}

/// A metadata line not resident (fill ids start at 1 and only grow).
const NO_FILL: u64 = u64::MAX;

impl Memo {
    fn new(cores: usize) -> Memo {
        Memo {
            generation: Cell::new(1),
            changes: Cell::new(0),
            dline: Cell::new((0, 0, false)),
            key: Cell::new((0, 0)),
            fills: vec![Cell::new((0, 0)); cores],
            last: Cell::new((0, 0, 0, 0)),
        }
    }

    /// The memo for a new view: forgets everything if `resident`,
    /// `expanded` or `gens` changed since the generation started
    /// (`changes` is [`Lardish`]'s count of their changes).
    fn fresh(&self, changes: u64) -> &Memo {
        if self.changes.get() != changes {
            self.changes.set(changes);
            self.generation.set(self.generation.get() + 1);
        }
        self
    }
}

#[derive(Clone, Debug)]
struct Core {
    ident: Option<ThreadKey>,
    table: HwClockTable,
    /// LARDISH cycles of this core (for asynchronous checks).
    time: u64,
    /// Completion time of this core's outstanding asynchronous checks.
    outstanding: u64,
}

/// Validity of hardware-held state, from disjoint borrows of [`Lardish`].
struct View<'a> {
    layout: Layout,
    resident: &'a ProbeMap<u64>,
    expanded: &'a FxHashSet<u64>,
    compact: bool,
    gens: &'a [u32],
    /// `None` in the reference model.
    memo: Option<&'a Memo>,
}

impl View<'_> {
    #[inline(always)]
    fn is_expanded(&self, addr: u64) -> bool {
        if !self.compact {
            return true;
        }
        let d = self.layout.data_line(addr);
        let Some(m) = self.memo else {
            return self.expanded.contains(&d);
        };
        let g = m.generation.get();
        let (mg, md, e) = m.dline.get();
        if mg == g && md == d {
            return e;
        }
        let e = !self.expanded.is_empty() && self.expanded.contains(&d);
        m.dline.set((g, d, e));
        e
    }

    #[inline(always)]
    fn md_line(&self, core: usize, addr: u64) -> u64 {
        self.layout.md_line(core, addr, self.is_expanded(addr))
    }

    #[inline(always)]
    fn fill(&self, core: usize, addr: u64) -> Option<u64> {
        let m = match self.memo {
            Some(m) if core < m.fills.len() => m,
            _ => return self.resident.get(self.md_line(core, addr)).copied(),
        };
        // Any answer of this view stays right while it lives; generations
        // only grow, so an older view's answer never matches.
        let (lg, lc, lx, lf) = m.last.get();
        if lg == m.generation.get() && lc == core && lx == addr {
            return (lf != NO_FILL).then_some(lf);
        }
        let found = self.fill_memo(m, core, self.md_line(core, addr));
        // Stamped after the lookup, which may start a new generation.
        m.last
            .set((m.generation.get(), core, addr, found.unwrap_or(NO_FILL)));
        found
    }

    /// [`View::fill`] through the memo's per-core fill ids of one line.
    #[inline(always)]
    fn fill_memo(&self, m: &Memo, core: usize, line: u64) -> Option<u64> {
        let offset = line & ((1 << layout::CORE_SHIFT) - 1);
        let mut g = m.generation.get();
        let (kg, key) = m.key.get();
        if kg != g || key != offset {
            // A new line: entries of the previous one become stale.
            g += 1;
            m.generation.set(g);
            m.key.set((g, offset));
        }
        let (fg, fill) = m.fills[core].get();
        if fg == g {
            return (fill != NO_FILL).then_some(fill);
        }
        let found = self.resident.get(line).copied();
        m.fills[core].set((g, found.unwrap_or(NO_FILL)));
        found
    }

    #[inline(always)]
    fn holder_valid(&self, addr: u64, h: &Holder) -> bool {
        let core = h.core as usize;
        self.gens.get(core) == Some(&h.gen) && self.fill(core, addr) == Some(h.fill)
    }

    fn holder(&self, core: usize, addr: u64) -> Option<Holder> {
        self.fill(core, addr).map(|fill| Holder {
            core: core as u16,
            gen: self.gens[core],
            fill,
        })
    }

    /// Core `core`'s permission for `addr`: the stored one if still valid
    /// (same thread generation, metadata line not refilled since), else
    /// `None`. The fill-time broadcast of RADISH §4.4 is modeled as the
    /// hardware check of the first access after the fill.
    fn perm(&self, m: &ByteMeta, core: usize, addr: u64) -> Perm {
        Self::perm_of(m, core, self.holder(core, addr))
    }

    /// [`View::perm`] from the core's holder for the byte ([`View::holder`]):
    /// the slot is valid if it was granted under the holder's generation
    /// and fill.
    #[inline(always)]
    fn perm_of(m: &ByteMeta, core: usize, holder: Option<Holder>) -> Perm {
        let s = m.perm_slot(core);
        match holder {
            Some(h) if s.gen == h.gen && s.fill == h.fill => s.perm,
            _ => Perm::None,
        }
    }
}

/// The LARDISH hardware model; see the module docs.
#[derive(Debug)]
pub struct Lardish {
    cfg: HwConfig,
    layout: Layout,
    clocks: ClockTable,
    bytes: VarMap,
    races: RaceCollector,
    hier: Hierarchy,
    /// The baseline machines, run later in batches ([`baselines`],
    /// [`lanes`]): the no-detection hierarchy, the software-FastTrack
    /// hierarchy and the software FastTrack detector whose work (paths per
    /// cell) the FastTrack cost model and LARDISH's software checks charge
    /// at the measured [`FtCost`]. What they add to `cycles_no_detection`,
    /// `cycles_fasttrack` and `cycles_lardish` reaches `stats` in
    /// [`Lardish::stats`].
    baselines: Baselines,
    /// The baselines left their thread for a fork ([`Lardish::prepare_fork`]).
    parked: bool,
    /// Resident metadata line → its fill id.
    resident: ProbeMap<u64>,
    /// Why each metadata line fill left the hierarchy (fill id → cause):
    /// the cause of later software checks (statistics only).
    lost: FxHashMap<u64, SwCause>,
    /// Data lines whose history ClearHistory/CopyHistory changed
    /// (statistics only).
    history_lines: FxHashSet<u64>,
    next_fill: u64,
    expanded: FxHashSet<u64>,
    /// The learned item of every byte (type safety optimizations; empty
    /// with byte granularity, where every byte is an item).
    items: ItemMap,
    /// `cfg.granularity` is [`MdGranularity::TypeSafe`].
    type_safe: bool,
    /// True once the variable map holds a byte at or above 2^48 (where
    /// metadata lines alias; see [`Lardish::live_clocks`]).
    wide_addrs: bool,
    gens: Vec<u32>,
    cores: Vec<Core>,
    async_busy: Vec<u64>,
    /// Lookups remembered across views (`None`: the reference model).
    memo: Option<Memo>,
    /// Free clock-table entries by recomputing their references from the
    /// records ([`Lardish::live_clocks`]) instead of by the incremental
    /// reference counts (the reference model).
    scan_clocks: bool,
    /// Changes of `resident`, `expanded` and `gens` so far (every one is
    /// counted: [`Memo::fresh`] relies on it).
    changes: u64,
    /// The event count at which the next occupancy sample is taken
    /// (`u64::MAX`: none, `sample_every` is 0).
    next_sample: u64,
    stats: HwStats,
}

impl Default for Lardish {
    fn default() -> Self {
        Lardish::new(HwConfig::default())
    }
}

impl Lardish {
    /// A model of the machine `cfg` (panics if `cfg` fails
    /// [`HwConfig::validate`]; configurations parsed by
    /// [`HwConfig::from_toml_str`] are validated).
    pub fn new(cfg: HwConfig) -> Lardish {
        if let Err(e) = cfg.validate() {
            panic!("invalid HwConfig: {e}");
        }
        let cores = cfg.cores as usize;
        Lardish {
            layout: Layout::new(cfg.line_bytes),
            clocks: ClockTable::new(),
            bytes: VarMap::default(),
            races: RaceCollector::new(),
            hier: Hierarchy::new(&cfg),
            baselines: Baselines::threaded(&cfg),
            parked: false,
            resident: ProbeMap::new(),
            lost: FxHashMap::default(),
            history_lines: FxHashSet::default(),
            next_fill: 1,
            expanded: FxHashSet::default(),
            items: ItemMap::default(),
            type_safe: cfg.granularity == MdGranularity::TypeSafe,
            wide_addrs: false,
            gens: vec![0; cores],
            cores: (0..cores)
                .map(|_| Core {
                    ident: None,
                    table: HwClockTable::new(cfg.clock_table_entries as usize),
                    time: 0,
                    outstanding: 0,
                })
                .collect(),
            async_busy: vec![0; cfg.async_cores as usize],
            memo: Some(Memo::new(cores)),
            scan_clocks: false,
            changes: 0,
            next_sample: match cfg.sample_every {
                0 => u64::MAX,
                n => n,
            },
            stats: HwStats::default(),
            cfg,
        }
    }

    /// The straightforward model, for tests only: every speed-up of the
    /// model (the chunked variable map, the caches' directory and
    /// most-recently-used shortcut, ...) is switched off, so the
    /// optimized model ([`Lardish::new`]) can be checked against it
    /// statistic by statistic on the same trace.
    #[doc(hidden)]
    pub fn reference(cfg: HwConfig) -> Lardish {
        let mut l = Lardish::new(cfg);
        l.use_per_byte_variable_map();
        l.hier = Hierarchy::reference(&l.cfg);
        l.baselines = Baselines::inline_reference(&l.cfg);
        l.memo = None;
        l.scan_clocks = true;
        l
    }

    /// Stores the variable map one hash entry per byte (the reference
    /// layout, see [`varmap`]); call before the first event. Tests use it to
    /// check that the chunked layout changes no statistic.
    #[doc(hidden)]
    pub fn use_per_byte_variable_map(&mut self) {
        assert!(self.bytes.is_empty(), "the variable map is not empty");
        self.bytes = VarMap::per_byte();
    }

    /// Before the process forks: the baseline cost models leave their
    /// worker thread (which the child would not have) and run inline
    /// until [`Lardish::forked`]. Their results are the same either way.
    pub fn prepare_fork(&mut self) {
        self.parked |= self.baselines.park();
    }

    /// After a fork, in the parent and in the child: parked baseline
    /// models go back to a worker thread of this process's own.
    pub fn forked(&mut self) {
        if std::mem::take(&mut self.parked) {
            self.baselines.unpark();
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HwConfig {
        &self.cfg
    }

    /// The statistics so far (waits for the baseline cost models to
    /// catch up).
    pub fn stats(&mut self) -> &HwStats {
        let sums = self.baselines.take();
        self.stats.cycles_no_detection += sums.no_detection;
        self.stats.cycles_fasttrack += sums.fasttrack;
        // FastTrack's cost of the accesses LARDISH checked in software
        // (synchronously): part of those checks' cost.
        self.stats.cycles_lardish += sums.sw_checks;
        self.stats.cycles_by_mechanism[Mechanism::SwCheck as usize] += sums.sw_checks;
        &self.stats
    }

    /// Accounts `n` retired non-memory instructions on `core` (1 cycle
    /// each by default) in all three cost models.
    pub fn add_instructions(&mut self, core: u16, n: u64) {
        let c = self.core_index(core);
        let cycles = n * u64::from(self.cfg.instruction_cycles);
        self.stats.instructions += n;
        self.stats.cycles_no_detection += cycles;
        self.stats.cycles_fasttrack += cycles;
        self.charge(c, cycles, Mechanism::Base);
    }

    fn view(&self) -> View<'_> {
        view!(self)
    }

    /// The events `events` in order, exactly as one [`Detector::event`]
    /// each (every report and statistic the same), calling `race` with the
    /// index and report of each racy access. Meanwhile the host is asked
    /// ([`crate::prefetch::line`]) for what the access [`AHEAD`] events later
    /// will look up — its L3 sets and its granule of the variable map —
    /// so that those host cache misses overlap the work in between
    /// (docs/lardish.md, "Speed"); and, for the access
    /// twice as far ahead, the slots its lookups of the variable map's
    /// chunk index and of the resident metadata start at
    /// ([`Lardish::prefetch_slots`]), which the granule's hint then reads.
    pub fn events(&mut self, events: &[Event], mut race: impl FnMut(usize, Race)) {
        for (i, e) in events.iter().enumerate() {
            if let Some(far) = events.get(i + 2 * AHEAD) {
                self.prefetch_slots(far);
            }
            if let Some(later) = events.get(i + AHEAD) {
                self.prefetch(later);
            }
            if let Some(r) = self.event(e) {
                race(i, r);
            }
        }
    }

    /// True if data line `dline`'s metadata is expanded (no hash lookup
    /// while none is).
    #[inline]
    fn is_expanded_line(&self, dline: u64) -> bool {
        !self.expanded.is_empty() && self.expanded.contains(&dline)
    }

    /// The hints of [`Lardish::events`] for one later event.
    #[inline]
    fn prefetch(&self, e: &Event) {
        let EventKind::Access(a) = &e.kind else {
            return;
        };
        let dline = self.layout.data_line(a.addr);
        self.hier.prefetch_l3(dline);
        if lard::is_checked(a) {
            let c = self.core_index(a.origin.core);
            let expanded = self.is_expanded_line(dline);
            self.hier
                .prefetch_l3(self.layout.md_line(c, a.addr, expanded));
            self.bytes.prefetch(a.addr);
        }
    }

    /// Hands access `a` of core `c` to the software-FastTrack cost model
    /// (its machine and the software FastTrack detector itself, whose
    /// verdict is not used: verdicts come from the exact variable map);
    /// `sw_check`: LARDISH checked it in
    /// software and the baselines sum FastTrack's cost of it for the check.
    #[inline]
    fn push_access(&mut self, c: usize, a: &Access, tracked: bool, sw_check: bool) {
        self.baselines.push_access(c as u32, tracked, sw_check, a);
    }

    /// The first stage of the hints of [`Lardish::events`]: the slots of
    /// the chunk index and of the resident-metadata map ([`ProbeMap`]) a
    /// checked access will probe, found by arithmetic on its address.
    #[inline]
    fn prefetch_slots(&self, e: &Event) {
        let EventKind::Access(a) = &e.kind else {
            return;
        };
        if lard::is_checked(a) {
            let c = self.core_index(a.origin.core);
            let expanded = self.is_expanded_line(self.layout.data_line(a.addr));
            self.resident
                .prefetch(self.layout.md_line(c, a.addr, expanded));
            self.bytes.prefetch_index(a.addr);
        }
    }

    fn core_index(&self, core: u16) -> usize {
        usize::from(core) % self.cores.len()
    }

    fn charge(&mut self, c: usize, cycles: u64, why: Mechanism) {
        self.stats.cycles_lardish += cycles;
        self.stats.cycles_by_mechanism[why as usize] += cycles;
        self.cores[c].time += cycles;
    }

    fn begin_event(&mut self) {
        self.stats.events += 1;
        self.stats.instructions += 1;
        // Every `sample_every`-th event (a countdown, not a division per
        // event).
        if self.stats.events == self.next_sample {
            self.sample();
            self.next_sample = self.next_sample.saturating_add(self.cfg.sample_every);
        }
    }

    /// Records one cache-occupancy sample now.
    pub fn sample(&mut self) {
        let (counts, cap) = self.hier.occupancy();
        self.stats.occupancy.push(OccupancySample {
            event: self.stats.events,
            data: counts[0],
            compact_md: counts[1],
            expanded_md: counts[2],
            invalid: cap.saturating_sub(counts.iter().sum()),
        });
    }

    /// The thread on core `c` becomes `key`: flush/swap per-core state.
    fn switch_to(&mut self, c: usize, key: ThreadKey) {
        if self.cores[c].ident == Some(key) {
            return;
        }
        if self.cores[c].ident.is_some() {
            self.stats.context_switches += 1;
            let cost = u64::from(self.cfg.context_switch_cycles);
            self.charge(c, cost, Mechanism::ContextSwitch);
        }
        self.cores[c].ident = Some(key);
        self.flush_core(c);
    }

    /// Invalidates core `c`'s permissions and hardware-held records (the
    /// old thread's metadata is flushed lazily; see docs).
    fn flush_core(&mut self, c: usize) {
        self.gens[c] = self.gens[c].wrapping_add(1);
        self.changes += 1;
        self.cores[c].table.clear();
    }

    /// Metadata line `line` leaves the hierarchy because of `cause`;
    /// returns whether it was resident.
    fn lose(&mut self, line: u64, cause: SwCause) -> bool {
        match self.resident.remove(line) {
            Some(fill) => {
                self.changes += 1;
                self.lost.insert(fill, cause);
                self.release_line(line, fill);
                true
            }
            None => false,
        }
    }

    /// Metadata line `line` (fill `fill`) left the hierarchy: the records
    /// it held release their clock-table entries (RADISH §5.1).
    fn release_line(&mut self, line: u64, fill: u64) {
        let core = Layout::md_core(line);
        let Some(table) = self.cores.get_mut(core).map(|k| &mut k.table) else {
            return;
        };
        if table.is_empty() {
            // Nothing can reference an entry (after a switch or rollover).
            return;
        }
        let gen = self.gens[core];
        let expanded = !self.cfg.compact_metadata || {
            let (s, _) = self.layout.md_covers(line, true);
            !self.expanded.is_empty() && self.expanded.contains(&self.layout.data_line(s))
        };
        let (start, n) = self.layout.md_covers(line, expanded);
        for i in 0..n {
            let x = start.wrapping_add(i);
            if !self.items.counted(x) {
                continue;
            }
            if let Some(m) = self.bytes.get(x) {
                for r in m.write.iter().chain(&m.reads) {
                    if let Some(h) = &r.holder {
                        if h.fill == fill && h.gen == gen && h.core as usize == core {
                            table.release(r.clock, 1);
                        }
                    }
                }
            }
        }
    }

    /// Byte `x`'s records in `m` leave the variable map (ClearHistory,
    /// CopyHistory's destination): those held in hardware release their
    /// clock-table entries.
    fn release_records(&mut self, x: u64, m: &ByteMeta) {
        if !self.items.counted(x) {
            return;
        }
        let v = view!(self);
        release_valid(&mut self.cores, m.write.iter().chain(&m.reads), 1, &|h| {
            v.holder_valid(x, h)
        });
    }

    fn drain_md_evictions(&mut self, c: usize) {
        while self.hier.has_md_evictions() {
            for line in self.hier.take_md_evictions() {
                self.lose(line, SwCause::Evicted);
                self.stats.md_evictions += 1;
                let cost = u64::from(self.cfg.md_evict_cycles);
                self.charge(c, cost, Mechanism::MdEviction);
            }
        }
    }

    /// Accesses metadata line `line` of core `c`; returns the latency.
    fn touch_md(&mut self, c: usize, line: u64, kind: LineKind) -> u32 {
        let (_, cycles, fresh) = self.hier.md_access(c, line, kind);
        if fresh {
            self.resident.insert(line, self.next_fill);
            self.changes += 1;
            self.next_fill += 1;
        }
        self.drain_md_evictions(c);
        cycles
    }

    /// A byte access to compact data line `dline` expands its metadata
    /// (RADISH §5.2) in every core that caches it.
    fn inflate(&mut self, c: usize, dline: u64) -> u32 {
        self.expanded.insert(dline);
        self.changes += 1;
        let addr = dline << self.layout.shift;
        let mut cycles = 0;
        for p in 0..self.cores.len() {
            let first = self.layout.md_line(p, addr, true);
            let Some(&fill) = self.resident.get(first) else {
                continue;
            };
            self.stats.inflations += 1;
            self.hier.retag(first, LineKind::MdExpanded);
            let second = self.layout.md_second_half(first);
            let (_, lat, fresh) = self.hier.md_access(p, second, LineKind::MdExpanded);
            if fresh {
                // Same fill id: the records of the upper half stay valid.
                self.resident.insert(second, fill);
                self.changes += 1;
            }
            cycles = cycles.max(lat);
        }
        self.drain_md_evictions(c);
        cycles
    }

    /// Type safety: learns or checks the items of the `count` bytes from
    /// `first` (one item per 64-byte block they touch), turning a block
    /// whose items the access breaks to byte metadata first. Returns
    /// whether any of them uses the clock table (an item narrower than
    /// [`granularity::COARSE_ITEM_BYTES`]).
    fn learn_items(&mut self, c: usize, first: u64, count: u64) -> bool {
        let mut counted = false;
        let mut i = 0;
        while i < count {
            let x = first.wrapping_add(i);
            let k = (BLOCK - x % BLOCK).min(count - i);
            let width = match self.items.access(x, k) {
                Learn::Item { width, .. } => width,
                Learn::Conflict => {
                    self.granularity_conflict(c, x);
                    self.items.access(x, k);
                    1
                }
            };
            counted |= width < granularity::COARSE_ITEM_BYTES;
            i += k;
        }
        counted
    }

    /// A granularity conflict in the block of byte `x`: every core's
    /// metadata lines of its data lines go to software through the
    /// eviction handler (their records are in software from now on), the
    /// block turns to byte metadata and its data lines to expanded
    /// metadata. Costs the transition and one eviction per resident line.
    fn granularity_conflict(&mut self, c: usize, x: u64) {
        self.stats.granularity_conflicts += 1;
        let block = x - x % BLOCK;
        let half = 1u64 << (self.layout.shift - 1);
        let mut cost = u64::from(self.cfg.transition_cycles);
        for dline in self.layout.data_lines(block, BLOCK as u32) {
            let addr = dline << self.layout.shift;
            let expanded = !self.cfg.compact_metadata || self.is_expanded_line(dline);
            for p in 0..self.cores.len() {
                let mut lines = vec![self.layout.md_line(p, addr, expanded)];
                if expanded {
                    lines.push(self.layout.md_line(p, addr + half, true));
                }
                for line in lines {
                    if self.lose(line, SwCause::Granularity) {
                        self.hier.invalidate(line);
                        self.stats.md_evictions += 1;
                        cost += u64::from(self.cfg.md_evict_cycles);
                    }
                }
            }
            if self.cfg.compact_metadata && !expanded {
                self.expanded.insert(dline);
                self.changes += 1;
            }
        }
        // After the lines released their records under the old widths.
        self.items.fall_back(x);
        self.drain_md_evictions(c);
        self.charge(c, cost, Mechanism::MdEviction);
    }

    /// Before a history operation on `[addr, addr + len)`: a block whose
    /// item the region's ends cut falls back to byte metadata (a
    /// granularity conflict), so no item changes width while hardware
    /// holds its records.
    fn uncut_items(&mut self, c: usize, addr: u64, len: u64) {
        if self.type_safe {
            for x in self.items.cut_blocks(addr, len) {
                self.granularity_conflict(c, x);
            }
        }
    }

    /// A Tracked access the hardware treats as thread-local (a stack
    /// access): checked and recorded exactly in the variable map, so the
    /// verdict is the canonical one, but held in no hardware slot; other
    /// cores' permissions for its bytes are downgraded as by any access.
    fn software_record(&mut self, c: usize, a: &Access) -> Option<Race> {
        let t = self.clocks.identity(lard::identity(&a.origin));
        let key = lard::identity(&a.origin);
        self.switch_to(c, key);
        let (first, count) = history_units(a, Granularity::Byte);
        if first.wrapping_add(u64::from(count)) >> 48 != 0 || first >> 48 != 0 {
            self.wide_addrs = true;
        }
        let v = view!(self);
        let clock = self.clocks.clock(t);
        let (clocks, races, cores, items) =
            (&self.clocks, &mut self.races, &mut self.cores, &self.items);
        self.bytes
            .for_range_mut(first, u64::from(count), ByteMeta::new, |x, n, m| {
                let recorded = check_and_record(m, clocks, races, t, clock, a, None);
                if items.counted(x) {
                    if let Some(gone) = recorded.replaced {
                        release_valid(cores, gone.iter(), n, &|h| v.holder_valid(x, h));
                    }
                }
                m.downgrade_others(c, a.kind);
            });
        let race = self.races.finish(key, self.clocks.clock(t).get(t), a);
        if race.is_some() {
            self.stats.racy += 1;
        }
        race
    }

    /// Makes sure core `c`'s clock table has an entry for `clock`; on
    /// overflow, garbage-collects, then (if allowed) rolls over.
    fn ensure_clock(&mut self, c: usize, clock: u64, allow_rollover: bool) -> bool {
        if self.cores[c].table.insert(clock) {
            return true;
        }
        if self.scan_clocks || self.wide_addrs {
            // Records above 2^48 alias metadata lines, so a line leaving
            // does not name all the records it invalidates: recount.
            let live = self.live_clocks(c);
            self.cores[c].table.collect(|v| live.contains(&v));
        } else {
            #[cfg(debug_assertions)]
            {
                let live = self.live_clocks(c);
                let table = &self.cores[c].table;
                for v in table.clocks() {
                    assert_eq!(
                        table.references(v) > 0,
                        live.contains(&v),
                        "core {c}: clock {v} has {} references",
                        table.references(v)
                    );
                }
                assert!(live.iter().all(|v| table.contains(*v)));
            }
            self.cores[c].table.collect_unreferenced();
        }
        if self.cores[c].table.insert(clock) {
            return true;
        }
        if !allow_rollover {
            return false;
        }
        self.rollover(c);
        self.cores[c].table.insert(clock)
    }

    /// Clock values referenced by valid records held by core `c`.
    ///
    /// A valid record of core `c` lies in a byte whose core-`c` metadata
    /// line is resident, i.e. in a data line of one of those lines (when no
    /// byte lies above 2^48, where data lines alias). When those data lines
    /// hold fewer bytes than the variable map, only they are scanned.
    fn live_clocks(&self, c: usize) -> FxHashSet<u64> {
        let v = self.view();
        let mut live = FxHashSet::default();
        let items = &self.items;
        let mut add = |addr: u64, m: &ByteMeta| {
            if !items.counted(addr) {
                return;
            }
            for r in m.write.iter().chain(&m.reads) {
                if let Some(h) = &r.holder {
                    if h.core as usize == c && v.holder_valid(addr, h) {
                        live.insert(r.clock);
                    }
                }
            }
        };
        if !self.wide_addrs {
            let line_bytes = 1u64 << self.layout.shift;
            let mut dlines: Vec<u64> = Vec::new();
            let budget = self.bytes.len() as u64 / line_bytes;
            for l in self.resident.keys() {
                if Layout::md_core(l) == c {
                    dlines.push((l & ((1 << layout::CORE_SHIFT) - 1)) >> 1);
                    if dlines.len() as u64 > 2 * budget {
                        break;
                    }
                }
            }
            dlines.sort_unstable();
            dlines.dedup();
            if (dlines.len() as u64) <= budget {
                for d in dlines {
                    let start = d << self.layout.shift;
                    for x in start..start + line_bytes {
                        if let Some(m) = self.bytes.get(x) {
                            add(x, m);
                        }
                    }
                }
                return live;
            }
        }
        self.bytes.for_each(|addr, m| add(addr, m));
        live
    }

    /// Epoch rollover: evict all of core `c`'s metadata, reset its table.
    fn rollover(&mut self, c: usize) {
        self.stats.rollovers += 1;
        let cost = self.cfg.rollover_cycles;
        self.charge(c, cost, Mechanism::Rollover);
        let lines = self.hier.md_lines_where(|l| Layout::md_core(l) == c);
        for line in lines {
            self.hier.invalidate(line);
            self.lose(line, SwCause::Rollover);
            self.stats.md_evictions += 1;
        }
        self.cores[c].table.clear();
    }

    /// Sum of latencies of the lines `lines` (sequential software
    /// accesses) in the LARDISH hierarchy; a line equal to the previous
    /// one costs 1.
    fn soft_accesses(
        &mut self,
        c: usize,
        lines: impl IntoIterator<Item = u64>,
        write: bool,
    ) -> u64 {
        let total = baselines::soft_accesses(&mut self.hier, c, lines, write);
        self.drain_md_evictions(c);
        total
    }

    /// Cost of a software race check of core `c`'s thread `t` that
    /// triggered on `addr`: it checks and imports the whole metadata line
    /// (RADISH §4.5). The check of the access itself costs what software
    /// FastTrack pays for it (`access_cycles`, or 0 when the baselines
    /// charge it later: [`Lardish::stats`]); every other location
    /// of the line costs FastTrack's write check of its history; plus the
    /// transition and the variable-map (shadow) lines through the caches.
    fn software_check(
        &mut self,
        c: usize,
        t: ThreadIdx,
        addr: u64,
        own: (u64, u64),
        access_cycles: u64,
    ) -> u64 {
        let v = self.view();
        let expanded = v.is_expanded(addr);
        let line = v.md_line(c, addr);
        let (start, n) = self.layout.md_covers(line, expanded);
        let bytes = self.cfg.ft.shadow_bytes;
        // The locations the check covers: every byte, or (type safety) the
        // first byte of every item learned in the line.
        let locations: Vec<u64> = if self.type_safe {
            (0..n)
                .step_by(BLOCK as usize)
                .flat_map(|i| {
                    let x = start.wrapping_add(i);
                    self.items.item_starts(x, (n - i).min(BLOCK))
                })
                .collect()
        } else {
            (0..n).map(|i| start.wrapping_add(i)).collect()
        };
        let lines: Vec<u64> = locations
            .iter()
            .map(|&x| self.layout.sw_line(x, bytes))
            .collect();
        let mut instructions = 0;
        for &x in &locations {
            if x.wrapping_sub(own.0) >= own.1 {
                let readers = self.bytes.get(x).map_or(0, |m| m.reads.len());
                instructions += self.cfg.ft.location_check_instructions(readers);
            }
        }
        let mut cost = u64::from(self.cfg.transition_cycles)
            + access_cycles
            + instructions * u64::from(self.cfg.instruction_cycles);
        cost += self.soft_accesses(c, lines, false);
        // Import t's records into this core's metadata, within clock-table
        // capacity, then set status and exact permissions.
        let clock = self.clocks.clock(t).to_owned();
        for i in 0..n {
            let x = start.wrapping_add(i);
            // A location without history is checked too (RADISH §4.5: every
            // location of the line): it gets status Everything and exact
            // (Write) permission, so the line's other fresh bytes need no
            // software check of their own.
            let holder = self.view().holder(c, x);
            let Some(h) = holder else {
                self.bytes.for_range_mut(x, 1, ByteMeta::new, |_, _, _| {});
                continue;
            };
            // Thread t's records (its last write, its last read), imported
            // one at a time: each needs its clock's entry (which may
            // collect unreferenced entries, counting every record stored
            // so far) before it is stored.
            let own: [Option<u64>; 2] = match self.bytes.get(x) {
                None => [None, None],
                Some(m) => [
                    m.write.filter(|r| r.thread == t).map(|r| r.clock),
                    m.reads.iter().find(|r| r.thread == t).map(|r| r.clock),
                ],
            };
            // Records of items with base+offset clocks need no entry.
            let counted = self.items.counted(x);
            for (which, clock) in own.into_iter().enumerate() {
                let Some(clock) = clock else { continue };
                let ok = !counted || self.ensure_clock(c, clock, false);
                let v = view!(self);
                let cores = &mut self.cores;
                self.bytes.for_range_mut(x, 1, ByteMeta::new, |_, _, m| {
                    let r = if which == 0 {
                        m.write.as_mut()
                    } else {
                        m.reads.iter_mut().find(|r| r.thread == t)
                    };
                    let Some(r) = r else { return };
                    let old_valid = r.holder.is_some_and(|o| v.holder_valid(x, &o));
                    if ok {
                        if counted {
                            if old_valid {
                                release_valid(cores, std::iter::once(&*r), 1, &|_| true);
                            }
                            cores[c].table.add_ref(r.clock, 1);
                        }
                        r.holder = Some(h);
                    } else if !old_valid {
                        // Not in hardware either way; remembered as the
                        // cause of later software checks.
                        r.holder = Some(history::REFUSED);
                    }
                });
            }
            let v = view!(self);
            self.bytes.for_range_mut(x, 1, ByteMeta::new, |_, _, m| {
                m.import_status(h, &|hh| v.holder_valid(x, hh));
                let perm = m.exact_perm(t, clock.as_ref());
                m.set_perm_slot(c, history::PermSlot::granted(perm, h));
            });
        }
        cost
    }

    /// Charges a software check of `cost` cycles, synchronously or on the
    /// asynchronous checking cores.
    fn charge_software(&mut self, c: usize, cost: u64) {
        if self.async_busy.is_empty() {
            self.charge(c, cost, Mechanism::SwCheck);
            return;
        }
        let enqueue = u64::from(self.cfg.async_enqueue_cycles);
        self.charge(c, enqueue, Mechanism::Async);
        let now = self.cores[c].time;
        let (i, _) = self
            .async_busy
            .iter()
            .enumerate()
            .min_by_key(|(_, b)| **b)
            .unwrap_or((0, &0));
        let done = self.async_busy[i].max(now) + cost;
        self.async_busy[i] = done;
        self.cores[c].outstanding = self.cores[c].outstanding.max(done);
    }

    /// Synchronization waits for this core's outstanding async checks.
    fn wait_async(&mut self, c: usize) {
        let (time, out) = (self.cores[c].time, self.cores[c].outstanding);
        if out > time {
            self.stats.async_stall_cycles += out - time;
            self.charge(c, out - time, Mechanism::Async);
        }
    }

    /// The in-hardware status of byte `addr` now.
    pub fn status(&self, addr: u64) -> HwStatus {
        let v = self.view();
        self.bytes.get(addr).map_or(HwStatus::InSoftware, |m| {
            m.effective_status(&|h| v.holder_valid(addr, h))
        })
    }

    /// Core `core`'s local permission for byte `addr` for the thread it
    /// runs (what a permission check would see now).
    pub fn permission(&self, core: u16, addr: u64) -> Perm {
        let c = self.core_index(core);
        let (Some(key), Some(m)) = (self.cores[c].ident, self.bytes.get(addr)) else {
            return Perm::None;
        };
        let _ = key;
        self.view().perm(m, c, addr)
    }

    /// Read and write clocks of byte `addr` held in core `core`'s hardware
    /// metadata (`None`: no valid entry, the paper's 0).
    pub fn hw_clocks(&self, core: u16, addr: u64) -> (Option<u64>, Option<u64>) {
        let c = self.core_index(core);
        let v = self.view();
        let Some(m) = self.bytes.get(addr) else {
            return (None, None);
        };
        let held = |r: &history::Rec| {
            r.holder
                .is_some_and(|h| h.core as usize == c && v.holder_valid(addr, &h))
        };
        let read = m.reads.iter().find(|r| held(r)).map(|r| r.clock);
        let write = m.write.as_ref().filter(|r| held(r)).map(|r| r.clock);
        (read, write)
    }

    /// The complete (software-manager) history of byte `addr`: last reads
    /// `(thread, clock)` and last write.
    pub fn history(&self, addr: u64) -> HistorySnapshot {
        match self.bytes.get(addr) {
            None => (Vec::new(), None),
            Some(m) => (
                m.reads
                    .iter()
                    .map(|r| (self.clocks.key(r.thread), r.clock))
                    .collect(),
                m.write.map(|w| (self.clocks.key(w.thread), w.clock)),
            ),
        }
    }

    /// Entry `entry` of the vector clock of the thread core `core` runs.
    pub fn core_clock(&self, core: u16, entry: ThreadKey) -> u64 {
        let c = self.core_index(core);
        match self.cores[c].ident {
            Some(k) => self.clocks.entry(k, entry),
            None => 0,
        }
    }

    /// Clock-table entries in use on `core`.
    pub fn clock_table_len(&self, core: u16) -> usize {
        self.cores[self.core_index(core)].table.len()
    }

    /// Evicts core `core`'s metadata line for `addr` from the hierarchy
    /// through the eviction handler (as an LLC eviction would).
    pub fn evict_metadata(&mut self, core: u16, addr: u64) {
        let c = self.core_index(core);
        let line = self.view().md_line(c, addr);
        if self.lose(line, SwCause::Evicted) {
            self.hier.invalidate(line);
            self.stats.md_evictions += 1;
            let cost = u64::from(self.cfg.md_evict_cycles);
            self.charge(c, cost, Mechanism::MdEviction);
        }
    }

    /// Evicts every metadata line (an eager flush of all hardware state).
    pub fn flush_metadata(&mut self) {
        for line in self.hier.md_lines_where(|_| true) {
            self.hier.invalidate(line);
            self.lose(line, SwCause::Evicted);
            self.stats.md_evictions += 1;
        }
    }

    fn region_md_lines(&self, core: usize, addr: u64, len: u64) -> Vec<(u64, bool)> {
        let v = self.view();
        let mut out: Vec<(u64, bool)> = Vec::new();
        for i in 0..len {
            let x = addr.wrapping_add(i);
            let line = v.md_line(core, x);
            if out.last().map(|l| l.0) != Some(line) {
                // Fully covered if the region spans the line's data range.
                let (s, n) = self.layout.md_covers(line, v.is_expanded(x));
                let full = s >= addr && s.wrapping_add(n) <= addr.wrapping_add(len);
                out.push((line, full));
            }
        }
        out
    }

    /// Software-manager lookups and invalidation of cached metadata for a
    /// region; `evict` persists it via the eviction handler (CopyHistory's
    /// source) instead of discarding it. Returns the cycles.
    fn invalidate_region(&mut self, c: usize, addr: u64, len: u64, evict: bool) -> u64 {
        let mut cycles = 0u64;
        for p in 0..self.cores.len() {
            for (line, full) in self.region_md_lines(p, addr, len) {
                // The manager's record of what may be cached.
                let (s, _) = self.layout.md_covers(line, true);
                let track = self.layout.sw_line(s, self.cfg.ft.shadow_bytes);
                cycles += u64::from(self.hier.data_access(c, track, false).1);
                if !self.resident.contains_key(line) {
                    continue;
                }
                if let Some(level) = self.hier.level_of(p, line) {
                    cycles += u64::from(self.hier.latency(level));
                }
                self.stats.history_invalidations += 1;
                if evict {
                    self.stats.md_evictions += 1;
                    cycles += u64::from(self.cfg.md_evict_cycles);
                }
                if full || evict {
                    self.hier.invalidate(line);
                    self.lose(line, SwCause::HistoryOp);
                }
            }
        }
        self.drain_md_evictions(c);
        cycles
    }

    /// Marks the data lines of `[addr, addr+len)` as changed by a history
    /// operation (statistics only).
    fn touch_history_lines(&mut self, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (a, b) = (
            self.layout.data_line(addr),
            self.layout.data_line(addr.wrapping_add(len - 1)),
        );
        let mut l = a;
        loop {
            self.history_lines.insert(l);
            if l == b {
                break;
            }
            l = l.wrapping_add(1);
        }
    }

    /// ClearHistory/CopyHistory. Both cost models charge FastTrack's
    /// measured instructions for the operation and its shadow lines;
    /// LARDISH adds its transition and the invalidation of cached metadata.
    fn history_op(&mut self, c: usize, op: HistoryOp) {
        let swb = self.cfg.ft.shadow_bytes;
        let instr = u64::from(self.cfg.instruction_cycles);
        let mut cost = u64::from(self.cfg.transition_cycles);
        let ft_cost = match op {
            HistoryOp::Clear { addr, len } => {
                self.stats.clear_ops += 1;
                self.uncut_items(c, addr, len);
                self.touch_history_lines(addr, len);
                let per_op = self.cfg.ft.history_instructions(false, len) * instr;
                cost += self.invalidate_region(c, addr, len, false);
                for i in 0..len {
                    let x = addr.wrapping_add(i);
                    if let Some(m) = self.bytes.remove(x) {
                        self.release_records(x, &m);
                    }
                }
                let lines: Vec<u64> = (0..len)
                    .map(|i| self.layout.sw_line(addr.wrapping_add(i), swb))
                    .collect();
                self.items.clear(addr, len);
                cost += self.soft_accesses(c, lines, true) + per_op;
                self.baselines.push(Op::History {
                    c: c as u32,
                    a: (addr, len),
                    b: (0, 0),
                });
                per_op
            }
            HistoryOp::Copy { src, dst, len } => {
                self.stats.copy_ops += 1;
                self.uncut_items(c, dst, len);
                self.touch_history_lines(dst, len);
                let per_op = self.cfg.ft.history_instructions(true, len) * instr;
                cost += self.invalidate_region(c, src, len, true);
                cost += self.invalidate_region(c, dst, len, false);
                let copied: Vec<Option<ByteMeta>> = (0..len)
                    .map(|i| {
                        self.bytes
                            .get(src.wrapping_add(i))
                            .map(|m| m.software_copy())
                    })
                    .collect();
                for (i, m) in (0..len).zip(copied) {
                    let at = dst.wrapping_add(i);
                    if let Some(old) = self.bytes.remove(at) {
                        self.release_records(at, &old);
                    }
                    match m {
                        Some(m) => {
                            self.wide_addrs |= at >> 48 != 0;
                            self.bytes.insert(at, m);
                        }
                        None => {
                            self.bytes.remove(at);
                        }
                    }
                }
                self.items.copy(src, dst, len);
                let mut lines = Vec::with_capacity(2 * len as usize);
                for i in 0..len {
                    lines.push(self.layout.sw_line(src.wrapping_add(i), swb));
                }
                for i in 0..len {
                    lines.push(self.layout.sw_line(dst.wrapping_add(i), swb));
                }
                cost += self.soft_accesses(c, lines, true) + per_op;
                self.baselines.push(Op::History {
                    c: c as u32,
                    a: (src, len),
                    b: (dst, len),
                });
                per_op
            }
        };
        self.charge(c, cost, Mechanism::HistoryOp);
        self.stats.cycles_fasttrack += ft_cost;
    }
}

impl Detector for Lardish {
    fn accepts_floors(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "lardish"
    }

    fn access(&mut self, a: &Access) -> Option<Race> {
        self.begin_event();
        self.stats.accesses += 1;
        let c = self.core_index(a.origin.core);
        let write = a.kind == AccessKind::Write;
        let tracked = lard::is_checked(a);
        // The data access in the LARDISH machine and (summed later, see
        // `stats`) in the no-detection one.
        let mut data_lat = 0u32;
        for line in self.layout.data_lines(a.addr, a.size) {
            data_lat = data_lat.max(self.hier.data_access(c, line, write).1);
        }
        self.baselines.push_no_detection(c, a);
        self.drain_md_evictions(c);
        if !tracked {
            self.push_access(c, a, false, false);
            self.stats.untracked += 1;
            self.charge(c, u64::from(data_lat), Mechanism::Base);
            return None;
        }
        if a.stack && self.cfg.stack_thread_local {
            self.push_access(c, a, false, false);
            self.stats.stack_accesses += 1;
            self.charge(c, u64::from(data_lat), Mechanism::Base);
            return self.software_record(c, a);
        }
        // (Interned before the switch, which touches other state, so that
        // the key is not kept on the stack across it and read back wider
        // than it was written: a store-forwarding stall.)
        let t = self.clocks.identity(lard::identity(&a.origin));
        let key = lard::identity(&a.origin);
        self.switch_to(c, key);
        let now = self.clocks.clock(t).get(t);
        let (first, count) = history_units(a, Granularity::Byte);
        // Items narrower than 4 bytes (all, with byte granularity) keep
        // their clocks in the clock table.
        if !self.type_safe || self.learn_items(c, first, u64::from(count)) {
            self.ensure_clock(c, now, true);
        }

        // Metadata lines (inflating compact ones on a byte access).
        let mut md_lat = 0u32;
        if self.cfg.compact_metadata && count == 1 {
            let dline = self.layout.data_line(first);
            if !self.expanded.contains(&dline) {
                md_lat = self.inflate(c, dline);
            }
        }
        // By data line ([`Layout::data_line_parts`]): expanded or not is a
        // property of the data line (touching metadata does not change it).
        let mut last_line = u64::MAX;
        for (x, k) in self.layout.data_line_parts(first, u64::from(count)) {
            let expanded = self.view().is_expanded(x);
            let kind = if expanded {
                LineKind::MdExpanded
            } else {
                LineKind::MdCompact
            };
            for line in self.layout.md_lines_of_part(c, x, k, expanded) {
                if line != last_line {
                    last_line = line;
                    md_lat = md_lat.max(self.touch_md(c, line, kind));
                }
            }
        }
        // Metadata is looked up in parallel with the data.
        self.charge(c, u64::from(data_lat), Mechanism::Base);
        self.charge(
            c,
            u64::from(md_lat.saturating_sub(data_lat)),
            Mechanism::Metadata,
        );

        // Stage decision (on the state before the access), exact check and
        // record, permission maintenance.
        let clock = self.clocks.clock(t);
        let mut stage = Stage::Permission;
        let mut sw_addr = first;
        let mut sw_cause = SwCause::Cold;
        let mut hw_cause = HwCause::NoPermission;
        if first.wrapping_add(u64::from(count)) >> 48 != 0 || first >> 48 != 0 {
            self.wide_addrs = true;
        }
        let v = view!(self);
        let (clocks, races, stats) = (&self.clocks, &mut self.races, &mut self.stats);
        let cores = &mut self.cores;
        let items = &self.items;
        let (lost, history_lines) = (&self.lost, &self.history_lines);
        let new = ByteMeta::new;
        // `n` bytes from `x` on share `m` (a uniform granule of the variable
        // map): everything below depends on the byte only through `m` and
        // its metadata line, which they share, so one pass stands for `n`.
        // Only the per-byte count needs `n`; the later bytes of a granule
        // reach the same stage as its first (which alone can raise `stage`)
        // and push the same races (the collector removes duplicates).
        self.bytes
            .for_range_mut(first, u64::from(count), new, |x, n, m| {
                // This core's holder now: valid by definition, so a record
                // held there needs no generation or fill lookup.
                let holder = v.holder(c, x);
                let valid = |h: &Holder| holder.as_ref() == Some(h) || v.holder_valid(x, h);
                let perm = View::perm_of(m, c, holder);
                let allowed = match a.kind {
                    AccessKind::Read => perm >= Perm::Read,
                    AccessKind::Write => perm == Perm::Write,
                };
                let byte_stage = if allowed {
                    Stage::Permission
                } else if m.hw_decidable(a.kind, t, clock, &valid) {
                    Stage::Hardware
                } else {
                    Stage::Software
                };
                if byte_stage > stage {
                    stage = byte_stage;
                    match byte_stage {
                        Stage::Software => {
                            sw_addr = x;
                            sw_cause = self::sw_cause(&v, lost, history_lines, x, m);
                        }
                        Stage::Hardware => hw_cause = self::hw_cause(&v, c, x, m),
                        Stage::Permission => {}
                    }
                }
                let raced = check_and_record(m, clocks, races, t, clock, a, holder);
                if items.counted(x) {
                    if let Some(gone) = raced.replaced {
                        release_valid(cores, gone.iter(), n, &valid);
                    }
                    if let Some(h) = holder {
                        cores[h.core as usize].table.add_ref(now, n);
                    }
                }
                let raced = raced.raced;
                if raced && byte_stage == Stage::Permission {
                    stats.permission_violations += n;
                }
                if write {
                    m.status = HwStatus::Everything;
                    m.anchor = holder;
                }
                m.downgrade_others(c, a.kind);
                if let Some(h) = holder {
                    // After a write recorded with a holder of this view,
                    // hardware holds everything (status, anchor and the
                    // write are `h`, no reads) and the write is the
                    // thread's own: Write, as `hw_perm` computes.
                    let perm = if write {
                        debug_assert_eq!(m.hw_perm(t, clock, &valid), Perm::Write);
                        Perm::Write
                    } else {
                        m.hw_perm(t, clock, &valid)
                    };
                    m.set_perm_slot(c, history::PermSlot::granted(perm, h));
                }
            });
        // Synchronous software checks charge FastTrack's cost of this
        // access when the baselines have computed it (`deferred`, summed in
        // `stats`); asynchronous ones need it now, to schedule the check.
        let deferred = self.async_busy.is_empty();
        self.push_access(c, a, true, deferred && stage == Stage::Software);
        match stage {
            Stage::Permission => self.stats.permission_hits += 1,
            Stage::Hardware => {
                self.stats.hw_checks += 1;
                self.stats.hw_causes[hw_cause as usize] += 1;
                let cost = u64::from(self.cfg.hw_check_cycles);
                self.charge(c, cost, Mechanism::HwCheck);
            }
            Stage::Software => {
                self.stats.sw_checks += 1;
                self.stats.sw_causes[sw_cause as usize] += 1;
                let hw = u64::from(self.cfg.hw_check_cycles);
                self.charge(c, hw, Mechanism::SwCheck);
                let own = (first, u64::from(count));
                // What software FastTrack pays for this access: later
                // (`deferred`), or now (waits for the baselines to reach it).
                let ft_cycles = if deferred {
                    0
                } else {
                    self.baselines.last_access_cycles()
                };
                let cost = self.software_check(c, t, sw_addr, own, ft_cycles);
                self.charge_software(c, cost);
            }
        }

        let race = self.races.finish(key, self.clocks.clock(t).get(t), a);
        if race.is_some() {
            self.stats.racy += 1;
        }
        race
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        self.begin_event();
        self.baselines.push(Op::Lard(*origin, *op));
        let c = self.core_index(origin.core);
        let me = lard::identity(origin);
        self.switch_to(c, me);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.stats.cycles_no_detection += instr;
        match *op {
            LardOp::ReadVc { tid, .. } | LardOp::WriteVc { tid, .. } => {
                self.wait_async(c);
                let on_chip = self
                    .cores
                    .iter()
                    .any(|k| k.ident == Some(ThreadKey::Lang(tid)))
                    || me == ThreadKey::Lang(tid);
                // In software: the transition plus FastTrack's own cost of
                // the operation (the same the FastTrack model charges).
                let ft_vc = u64::from(self.cfg.ft.vc_op) * u64::from(self.cfg.instruction_cycles);
                let cost = if on_chip {
                    u64::from(self.cfg.vc_hw_cycles)
                } else {
                    u64::from(self.cfg.transition_cycles) + ft_vc
                };
                self.charge(c, cost, Mechanism::VcOp);
                self.stats.cycles_fasttrack += ft_vc;
                if let LardOp::WriteVc { tid, value } = *op {
                    // Lowering an entry invalidates memoized permissions.
                    if value < self.clocks.entry(me, ThreadKey::Lang(tid)) {
                        self.flush_core(c);
                    }
                }
            }
            // A floor is the runtime's statement about every clock: the
            // hardware holds only its cores' clocks, each already above it.
            LardOp::Thread { .. } | LardOp::FloorVc { .. } => {
                self.charge(c, instr, Mechanism::Base);
                self.stats.cycles_fasttrack +=
                    u64::from(self.cfg.ft.vc_op) * u64::from(self.cfg.instruction_cycles);
            }
            LardOp::ClearHistory { .. } | LardOp::CopyHistory { .. } => {
                self.stats.cycles_fasttrack += instr;
            }
        }
        if let Some(h) = lard::apply_clock_effects(&mut self.clocks, origin, op) {
            self.history_op(c, h);
        }
    }

    /// An identity's end drops its clock (`lard::apply_program_event`);
    /// the hardware does nothing (a library call, not an instruction).
    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, _pc: u64) {
        lard::apply_program_event(&mut self.clocks, origin, ev);
    }

    fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        self.baselines.push(Op::Sync(*origin, *s));
        self.begin_event();
        let c = self.core_index(origin.core);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.stats.cycles_no_detection += instr;
        self.stats.cycles_fasttrack += instr;
        self.charge(c, instr, Mechanism::Base);
    }

    fn context_switch(&mut self, origin: &Origin) {
        self.begin_event();
        let c = self.core_index(origin.core);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.stats.cycles_no_detection += instr;
        self.stats.cycles_fasttrack += instr;
        self.charge(c, instr, Mechanism::Base);
        self.switch_to(c, lard::identity(origin));
    }
}

/// Why the deciding byte `x` (history `m`, before the access) of a software
/// check was not decidable in hardware: the first record or status slot
/// found missing (status anchor, last write, last reads). `lost` and
/// `history_lines` are [`Lardish`]'s fields of those names.
fn sw_cause(
    v: &View,
    lost: &FxHashMap<u64, SwCause>,
    history_lines: &FxHashSet<u64>,
    x: u64,
    m: &ByteMeta,
) -> SwCause {
    let touched = || history_lines.contains(&v.layout.data_line(x));
    let untouched_cause = |otherwise: SwCause| {
        if touched() {
            SwCause::HistoryOp
        } else {
            otherwise
        }
    };
    if (m.write.is_none() && m.reads.is_empty()) || m.anchor.is_none() {
        // Nothing of it was ever set in hardware.
        return untouched_cause(SwCause::Cold);
    }
    let why = |h: &Option<Holder>| -> Option<SwCause> {
        let Some(h) = h else {
            // Records without a slot come from CopyHistory (or were made
            // while their line was being evicted).
            return Some(untouched_cause(SwCause::Evicted));
        };
        if *h == history::REFUSED {
            return Some(SwCause::ClockTable);
        }
        if v.holder_valid(x, h) {
            return None;
        }
        if v.gens.get(h.core as usize) != Some(&h.gen) {
            return Some(SwCause::ThreadSwitch);
        }
        // Fill ids are unique: either that fill left the hierarchy (`lost`
        // says why) or the byte's metadata line changed by inflation.
        Some(lost.get(&h.fill).copied().unwrap_or(SwCause::Inflated))
    };
    m.anchor
        .iter()
        .map(|a| why(&Some(*a)))
        .chain(m.write.iter().map(|r| why(&r.holder)))
        .chain(m.reads.iter().map(|r| why(&r.holder)))
        .flatten()
        .next()
        .unwrap_or(SwCause::StaleStatus)
}

/// Why byte `x`'s permission slot of core `c` did not allow the access.
fn hw_cause(v: &View, c: usize, x: u64, m: &ByteMeta) -> HwCause {
    let slot = m.perm_slot(c);
    if slot.gen != v.gens[c] || v.fill(c, x) != Some(slot.fill) {
        HwCause::NoPermission
    } else if slot.downgraded {
        HwCause::RemoteAccess
    } else if m.effective_status(&|h| v.holder_valid(x, h)) != HwStatus::Everything {
        HwCause::PartialStatus
    } else {
        HwCause::Unordered
    }
}

/// `n` bytes' records `recs` leave hardware: each one held in a valid slot
/// (`valid`) releases its owner core's clock-table entry (RADISH §5.1).
#[inline]
fn release_valid<'r>(
    cores: &mut [Core],
    recs: impl Iterator<Item = &'r history::Rec>,
    n: u64,
    valid: &impl Fn(&Holder) -> bool,
) {
    for r in recs {
        if let Some(h) = &r.holder {
            if valid(h) {
                cores[h.core as usize].table.release(r.clock, n);
            }
        }
    }
}

/// What [`check_and_record`] did to a byte.
struct Recorded {
    /// The byte raced.
    raced: bool,
    /// The records the new one replaced (`None`: none).
    replaced: Option<history::Reads>,
}

/// The canonical check-then-record of one byte (identical to
/// [`Canonical`](crate::canonical::Canonical)'s), storing `holder` with the
/// new record. Returns whether the byte raced and the records replaced.
fn check_and_record(
    m: &mut ByteMeta,
    clocks: &ClockTable,
    races: &mut RaceCollector,
    t: ThreadIdx,
    c: ClockRef<'_>,
    a: &Access,
    holder: Option<Holder>,
) -> Recorded {
    let races_with = |u: ThreadIdx, clock: u64| u != t && clock > c.get(u);
    let mut raced = false;
    if let Some(w) = m.write {
        if races_with(w.thread, w.clock) {
            let kind = match a.kind {
                AccessKind::Write => RaceKind::WriteWrite,
                AccessKind::Read => RaceKind::WriteRead,
            };
            races.push(kind, clocks.key(w.thread), w.pc, w.clock);
            raced = true;
        }
    }
    let rec = history::Rec {
        thread: t,
        clock: c.get(t),
        pc: a.pc,
        holder,
    };
    let mut replaced = None;
    let mut gone = |r: history::Rec| {
        if r.holder.is_some() {
            replaced.get_or_insert_with(history::Reads::default).push(r);
        }
    };
    match a.kind {
        AccessKind::Read => match m.reads.iter_mut().find(|r| r.thread == t) {
            Some(r) => gone(std::mem::replace(r, rec)),
            None => m.reads.push(rec),
        },
        AccessKind::Write => {
            for r in &m.reads {
                if races_with(r.thread, r.clock) {
                    races.push(RaceKind::ReadWrite, clocks.key(r.thread), r.pc, r.clock);
                    raced = true;
                }
            }
            if let Some(w) = m.write.replace(rec) {
                gone(w);
            }
            for r in m.reads.iter() {
                gone(*r);
            }
            m.reads.clear();
        }
    }
    Recorded { raced, replaced }
}
