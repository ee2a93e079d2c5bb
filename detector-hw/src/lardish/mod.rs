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
mod model;
pub mod probemap;
pub mod profile;
pub mod stats;
pub mod varmap;

#[cfg(test)]
mod tests;

use crate::detector::{self, Detector};
use crate::event::{
    Access, Event, EventKind, LardOp, LowLevelSync, Origin, ProgramEvent, ThreadKey,
};
use crate::lard;
use crate::race::Race;

use baselines::{Baselines, Op};
use cache::{Hierarchy, LineKind};
pub use config::{CacheGeom, ConfigError, HwConfig, MdGranularity};
pub use ftcost::FtCost;
pub use history::{Holder, HwStatus, Perm};
use layout::Layout;
use model::{Accounting, Function, Timing, Validity};
pub use profile::{HwProfile, ProfileCounters};

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

/// The LARDISH hardware model; see the module docs.
///
/// Its state is in four parts (`model/`), so that each step borrows only
/// what it needs: the function (`Function`: the exact detection, and what
/// each core's hardware holds), the validity of hardware-held state
/// (`Validity`, read through `View`s while the function's state changes),
/// the timing model (`Timing`) and the accounting (`Accounting`).
#[derive(Debug)]
pub struct Lardish {
    cfg: HwConfig,
    layout: Layout,
    func: Function,
    hw: Validity,
    timing: Timing,
    acct: Accounting,
    /// The instruction-level profile, when asked for
    /// ([`Lardish::enable_profile`]).
    profile: Option<HwProfile>,
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
        let layout = Layout::new(cfg.line_bytes);
        Lardish {
            layout,
            func: Function::new(&cfg),
            hw: Validity::new(layout, cfg.compact_metadata, cores),
            timing: Timing::new(&cfg),
            acct: Accounting::new(&cfg),
            profile: None,
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
        l.timing.hier = Hierarchy::reference(&l.cfg);
        l.timing.baselines = Baselines::inline_reference(&l.cfg);
        l.hw.memo = None;
        l.func.scan_clocks = true;
        l
    }

    /// Stores the variable map one hash entry per byte (the reference
    /// layout, see [`varmap`]); call before the first event. Tests use it to
    /// check that the chunked layout changes no statistic.
    #[doc(hidden)]
    pub fn use_per_byte_variable_map(&mut self) {
        assert!(self.func.bytes.is_empty(), "the variable map is not empty");
        self.func.bytes = VarMap::per_byte();
    }

    /// Before the process forks: the baseline cost models leave their
    /// worker thread (which the child would not have) and run inline
    /// until [`Lardish::forked`]. Their results are the same either way.
    pub fn prepare_fork(&mut self) {
        self.timing.prepare_fork();
    }

    /// After a fork, in the parent and in the child: parked baseline
    /// models go back to a worker thread of this process's own.
    pub fn forked(&mut self) {
        self.timing.forked();
        if self.profile.is_some() {
            self.timing.baselines.park();
        }
    }

    /// Keeps an instruction-level profile from now on ([`Lardish::profile`];
    /// call before the first event). The baseline models then run inline,
    /// so that each event's cost is known when it ends (slower; every
    /// statistic the same).
    pub fn enable_profile(&mut self) {
        self.timing.baselines.park();
        self.profile = Some(HwProfile::default());
    }

    /// The instruction-level profile, if [`Lardish::enable_profile`] was
    /// called (its totals equal [`Lardish::stats`]' counters).
    pub fn profile(&mut self) -> Option<&HwProfile> {
        self.fold_baselines();
        self.profile.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &HwConfig {
        &self.cfg
    }

    /// The statistics so far (waits for the baseline cost models to
    /// catch up).
    pub fn stats(&mut self) -> &HwStats {
        self.fold_baselines();
        &self.acct.stats
    }

    /// Adds what the baseline models summed since the last call to the
    /// statistics.
    fn fold_baselines(&mut self) {
        let sums = self.timing.baselines.take();
        self.acct.stats.cycles_no_detection += sums.no_detection;
        self.acct.stats.cycles_fasttrack += sums.fasttrack;
        // FastTrack's cost of the accesses LARDISH checked in software
        // (synchronously): part of those checks' cost.
        self.acct.stats.cycles_lardish += sums.sw_checks;
        self.acct.stats.cycles_by_mechanism[Mechanism::SwCheck as usize] += sums.sw_checks;
    }

    /// Accounts `n` retired non-memory instructions on `core` (1 cycle
    /// each by default) in all three cost models.
    pub fn add_instructions(&mut self, core: u16, n: u64) {
        let c = self.core_index(core);
        let cycles = n * u64::from(self.cfg.instruction_cycles);
        self.acct.stats.instructions += n;
        self.acct.stats.cycles_no_detection += cycles;
        self.acct.stats.cycles_fasttrack += cycles;
        self.acct.charge(c, cycles, Mechanism::Base);
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

    /// The hints of [`Lardish::events`] for one later event.
    #[inline]
    fn prefetch(&self, e: &Event) {
        let EventKind::Access(a) = &e.kind else {
            return;
        };
        let dline = self.layout.data_line(a.addr);
        self.timing.hier.prefetch_l3(dline);
        if lard::is_checked(a) {
            let c = self.core_index(a.origin.core);
            let expanded = self.hw.is_expanded_line(dline);
            self.timing
                .hier
                .prefetch_l3(self.layout.md_line(c, a.addr, expanded));
            self.func.bytes.prefetch(a.addr);
        }
    }

    /// Hands access `a` of core `c` to the software-FastTrack cost model
    /// (its machine and the software FastTrack detector itself, whose
    /// verdict is not used: verdicts come from the exact variable map);
    /// `sw_check`: LARDISH checked it in
    /// software and the baselines sum FastTrack's cost of it for the check.
    #[inline]
    fn push_access(&mut self, c: usize, a: &Access, tracked: bool, sw_check: bool) {
        self.timing
            .baselines
            .push_access(c as u32, tracked, sw_check, a);
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
            let expanded = self.hw.is_expanded_line(self.layout.data_line(a.addr));
            self.hw
                .resident
                .prefetch(self.layout.md_line(c, a.addr, expanded));
            self.func.bytes.prefetch_index(a.addr);
        }
    }

    fn core_index(&self, core: u16) -> usize {
        usize::from(core) % self.func.cores.len()
    }

    fn begin_event(&mut self) {
        self.acct
            .begin_event(self.cfg.sample_every, &self.timing.hier);
    }

    /// Records one cache-occupancy sample now.
    pub fn sample(&mut self) {
        self.acct.sample(&self.timing.hier);
    }

    /// The thread on core `c` becomes `key`: flush/swap per-core state.
    fn switch_to(&mut self, c: usize, key: ThreadKey) {
        if self.func.cores[c].ident == Some(key) {
            return;
        }
        if self.func.cores[c].ident.is_some() {
            self.acct.stats.context_switches += 1;
            let cost = u64::from(self.cfg.context_switch_cycles);
            self.acct.charge(c, cost, Mechanism::ContextSwitch);
        }
        self.func.cores[c].ident = Some(key);
        self.flush_core(c);
    }

    /// Invalidates core `c`'s permissions and hardware-held records (the
    /// old thread's metadata is flushed lazily; see docs).
    fn flush_core(&mut self, c: usize) {
        self.hw.next_generation(c);
        self.func.cores[c].table.clear();
    }

    /// Metadata line `line` leaves the hierarchy because of `cause`;
    /// returns whether it was resident.
    fn lose(&mut self, line: u64, cause: SwCause) -> bool {
        match self.hw.remove(line) {
            Some(fill) => {
                self.acct.lost.insert(fill, cause);
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
        let Some(table) = self.func.cores.get_mut(core).map(|k| &mut k.table) else {
            return;
        };
        if table.is_empty() {
            // Nothing can reference an entry (after a switch or rollover).
            return;
        }
        let gen = self.hw.gens[core];
        let expanded = !self.cfg.compact_metadata || {
            let (s, _) = self.layout.md_covers(line, true);
            self.hw.is_expanded_line(self.layout.data_line(s))
        };
        let (start, n) = self.layout.md_covers(line, expanded);
        for i in 0..n {
            let x = start.wrapping_add(i);
            if !self.func.items.counted(x) {
                continue;
            }
            if let Some(m) = self.func.bytes.get(x) {
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

    fn drain_md_evictions(&mut self, c: usize) {
        while self.timing.hier.has_md_evictions() {
            for line in self.timing.hier.take_md_evictions() {
                self.lose(line, SwCause::Evicted);
                self.acct.stats.md_evictions += 1;
                let cost = u64::from(self.cfg.md_evict_cycles);
                self.acct.charge(c, cost, Mechanism::MdEviction);
            }
        }
    }

    /// Accesses metadata line `line` of core `c`; returns the latency.
    fn touch_md(&mut self, c: usize, line: u64, kind: LineKind) -> u32 {
        let (_, cycles, fresh) = self.timing.hier.md_access(c, line, kind);
        if fresh {
            self.hw.fill(line);
        }
        self.drain_md_evictions(c);
        cycles
    }

    /// A byte access to compact data line `dline` expands its metadata
    /// (RADISH §5.2) in every core that caches it.
    fn inflate(&mut self, c: usize, dline: u64) -> u32 {
        self.hw.expand(dline);
        let addr = dline << self.layout.shift;
        let mut cycles = 0;
        for p in 0..self.func.cores.len() {
            let first = self.layout.md_line(p, addr, true);
            let Some(&fill) = self.hw.resident.get(first) else {
                continue;
            };
            self.acct.stats.inflations += 1;
            self.timing.hier.retag(first, LineKind::MdExpanded);
            let second = self.layout.md_second_half(first);
            let (_, lat, fresh) = self.timing.hier.md_access(p, second, LineKind::MdExpanded);
            if fresh {
                // Same fill id: the records of the upper half stay valid.
                self.hw.fill_as(second, fill);
            }
            cycles = cycles.max(lat);
        }
        self.drain_md_evictions(c);
        cycles
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
        let total = baselines::soft_accesses(&mut self.timing.hier, c, lines, write);
        self.drain_md_evictions(c);
        total
    }

    /// The in-hardware status of byte `addr` now.
    pub fn status(&self, addr: u64) -> HwStatus {
        let v = self.hw.view();
        self.func.bytes.get(addr).map_or(HwStatus::InSoftware, |m| {
            m.effective_status(&|h| v.holder_valid(addr, h))
        })
    }

    /// Core `core`'s local permission for byte `addr` for the thread it
    /// runs (what a permission check would see now).
    pub fn permission(&self, core: u16, addr: u64) -> Perm {
        let c = self.core_index(core);
        let (Some(key), Some(m)) = (self.func.cores[c].ident, self.func.bytes.get(addr)) else {
            return Perm::None;
        };
        let _ = key;
        self.hw.view().perm(m, c, addr)
    }

    /// Read and write clocks of byte `addr` held in core `core`'s hardware
    /// metadata (`None`: no valid entry, the paper's 0).
    pub fn hw_clocks(&self, core: u16, addr: u64) -> (Option<u64>, Option<u64>) {
        let c = self.core_index(core);
        let v = self.hw.view();
        let Some(m) = self.func.bytes.get(addr) else {
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
        match self.func.bytes.get(addr) {
            None => (Vec::new(), None),
            Some(m) => (
                m.reads
                    .iter()
                    .map(|r| (self.func.clocks.key(r.thread), r.clock))
                    .collect(),
                m.write.map(|w| (self.func.clocks.key(w.thread), w.clock)),
            ),
        }
    }

    /// Entry `entry` of the vector clock of the thread core `core` runs.
    pub fn core_clock(&self, core: u16, entry: ThreadKey) -> u64 {
        let c = self.core_index(core);
        match self.func.cores[c].ident {
            Some(k) => self.func.clocks.entry(k, entry),
            None => 0,
        }
    }

    /// Clock-table entries in use on `core`.
    pub fn clock_table_len(&self, core: u16) -> usize {
        self.func.cores[self.core_index(core)].table.len()
    }

    /// Evicts core `core`'s metadata line for `addr` from the hierarchy
    /// through the eviction handler (as an LLC eviction would).
    pub fn evict_metadata(&mut self, core: u16, addr: u64) {
        let c = self.core_index(core);
        let line = self.hw.view().md_line(c, addr);
        if self.lose(line, SwCause::Evicted) {
            self.timing.hier.invalidate(line);
            self.acct.stats.md_evictions += 1;
            let cost = u64::from(self.cfg.md_evict_cycles);
            self.acct.charge(c, cost, Mechanism::MdEviction);
        }
    }

    /// Evicts every metadata line (an eager flush of all hardware state).
    pub fn flush_metadata(&mut self) {
        for line in self.timing.hier.md_lines_where(|_| true) {
            self.timing.hier.invalidate(line);
            self.lose(line, SwCause::Evicted);
            self.acct.stats.md_evictions += 1;
        }
    }
}

impl Detector for Lardish {
    fn accepts_floors(&self) -> bool {
        true
    }

    /// One event; under a profile, what it changed in the counters is
    /// charged to its PC.
    fn event(&mut self, e: &Event) -> Option<Race> {
        if self.profile.is_none() {
            return detector::dispatch(self, e);
        }
        self.fold_baselines();
        let before = ProfileCounters::of(&self.acct.stats);
        let race = detector::dispatch(self, e);
        self.fold_baselines();
        let after = ProfileCounters::of(&self.acct.stats);
        if let Some(p) = &mut self.profile {
            p.charge(e.pc, &before, &after);
        }
        race
    }

    fn name(&self) -> &'static str {
        "lardish"
    }

    fn access(&mut self, a: &Access) -> Option<Race> {
        self.on_access(a)
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        self.begin_event();
        self.timing.baselines.push(Op::Lard(*origin, *op));
        let c = self.core_index(origin.core);
        let me = lard::identity(origin);
        self.switch_to(c, me);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.acct.stats.cycles_no_detection += instr;
        match *op {
            LardOp::ReadVc { tid, .. } | LardOp::WriteVc { tid, .. } => {
                self.wait_async(c);
                let on_chip = self
                    .func
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
                self.acct.charge(c, cost, Mechanism::VcOp);
                self.acct.stats.cycles_fasttrack += ft_vc;
                if let LardOp::WriteVc { tid, value } = *op {
                    // Lowering an entry invalidates memoized permissions.
                    if value < self.func.clocks.entry(me, ThreadKey::Lang(tid)) {
                        self.flush_core(c);
                    }
                }
            }
            // A floor is the runtime's statement about every clock: the
            // hardware holds only its cores' clocks, each already above it.
            LardOp::Thread { .. } | LardOp::FloorVc { .. } => {
                self.acct.charge(c, instr, Mechanism::Base);
                self.acct.stats.cycles_fasttrack +=
                    u64::from(self.cfg.ft.vc_op) * u64::from(self.cfg.instruction_cycles);
            }
            LardOp::ClearHistory { .. } | LardOp::CopyHistory { .. } => {
                self.acct.stats.cycles_fasttrack += instr;
            }
        }
        if let Some(h) = lard::apply_clock_effects(&mut self.func.clocks, origin, op) {
            self.history_op(c, h);
        }
    }

    /// An identity's end drops its clock (`lard::apply_program_event`);
    /// the hardware does nothing (a library call, not an instruction).
    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, _pc: u64) {
        lard::apply_program_event(&mut self.func.clocks, origin, ev);
    }

    fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        self.timing.baselines.push(Op::Sync(*origin, *s));
        self.begin_event();
        let c = self.core_index(origin.core);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.acct.stats.cycles_no_detection += instr;
        self.acct.stats.cycles_fasttrack += instr;
        self.acct.charge(c, instr, Mechanism::Base);
    }

    fn context_switch(&mut self, origin: &Origin) {
        self.begin_event();
        let c = self.core_index(origin.core);
        let instr = u64::from(self.cfg.instruction_cycles);
        self.acct.stats.cycles_no_detection += instr;
        self.acct.stats.cycles_fasttrack += instr;
        self.acct.charge(c, instr, Mechanism::Base);
        self.switch_to(c, lard::identity(origin));
    }
}
