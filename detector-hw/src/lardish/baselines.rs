//! The baseline cost models of [`Lardish`](super::Lardish): software
//! FastTrack's ([`Models`]: its cache hierarchy and the software FastTrack
//! detector whose work it charges) and the no-detection machine's
//! ([`NoDetection`]: its cache hierarchy). They run on the [`Pool`]'s
//! lanes: software FastTrack's on a second host thread, the no-detection
//! hierarchy on whichever of the two threads has time (docs/lardish.md).
//!
//! Nothing LARDISH decides depends on these models: they only sum the
//! latencies that `cycles_fasttrack` and `cycles_no_detection` add, and
//! FastTrack's cost of the accesses LARDISH checks in software. So the
//! model hands them their work as operations in order, in batches, and
//! collects the sums when its statistics are read ([`Baselines::take`]).
//! Each model sees the same events in the same order as on one thread, and
//! sums do not depend on when they are added, so every statistic is the
//! one-thread model's; [`Baselines::inline_reference`] (the reference
//! model) runs them on the caller's thread.

use super::cache::Hierarchy;
use super::config::{HwConfig, MdGranularity};
use super::ftcost::FtCost;
use super::lanes::{Model, Pool};
use super::layout::Layout;
use crate::detector::{history_units, Detector, Granularity};
use crate::event::{Access, AccessKind, LardOp, LowLevelSync, Origin};
use crate::fasttrack::{FastTrack, FtPath};

/// How many operations ahead a batch's runner prefetches (docs/lardish.md,
/// "Speed").
const AHEAD: usize = 4;

/// One piece of work for the baseline models, in event order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Access `a` on core `c`: the software FastTrack detector, the data
    /// access in FastTrack's hierarchy, then (`tracked`) FastTrack's
    /// instructions, shadow cells and read vector clocks.
    Access {
        /// Core index.
        c: u32,
        /// A checked (Tracked) access.
        tracked: bool,
        /// LARDISH checked it in software: FastTrack's instruction cycles
        /// for it are part of that check's cost ([`Sums::sw_checks`]).
        sw_check: bool,
        /// The access.
        a: Access,
    },
    /// A LARD operation, for the software FastTrack detector.
    Lard(Origin, LardOp),
    /// A low-level synchronization, for the software FastTrack detector.
    Sync(Origin, LowLevelSync),
    /// 64 bits of the records the next `History` reads and writes (bit
    /// `i % 64` of the `i / 64`-th `Held`: byte `i` of the first region,
    /// then of the second, holds a record the operation reads (cleared or
    /// copied from) or writes (copied to)), as LARDISH's variable map found
    /// them.
    Held(u64),
    /// A line of the presence structure the next `History` reads (the
    /// scan LARDISH's software manager makes, [`Layout::presence_scan`]:
    /// both hold the same histories).
    Scanned(u64),
    /// FastTrack's memory traffic of ClearHistory (`b` empty) or
    /// CopyHistory (`a` the source, `b` the destination) as one sequence of
    /// writes by core `c`: `(addr, len)` ranges; the `Held` before it say
    /// which bytes hold a history.
    History {
        /// Core index.
        c: u32,
        /// First range.
        a: (u64, u64),
        /// Second range (length 0: none).
        b: (u64, u64),
    },
}

/// What the baseline models summed since the last [`Baselines::take`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Sums {
    /// Cycles of the software-FastTrack model.
    pub fasttrack: u64,
    /// FastTrack's instruction cycles of the accesses LARDISH checked in
    /// software synchronously (`Op::Access::sw_check`): charged to those
    /// checks when the statistics are read, so the model need not wait for
    /// the worker at each one.
    pub sw_checks: u64,
    /// Cycles of the no-detection machine's data accesses.
    pub no_detection: u64,
}

/// The software-FastTrack hierarchy, the software FastTrack detector, and
/// the cycles they summed since the last [`Models::take`].
#[derive(Clone, Debug)]
pub(super) struct Models {
    ft: Hierarchy,
    detector: FastTrack,
    cost: FtCost,
    instruction_cycles: u64,
    /// FastTrack's instruction cycles for the last access.
    last_instructions: u64,
    layout: Layout,
    /// FastTrack's history granularity: the metadata granularity of the
    /// LARDISH machine (type-safe items: an aligned power-of-two access is
    /// one unit), so both detectors assume the same of the program.
    granularity: Granularity,
    shadow_bytes: u64,
    entry_bytes: u64,
    sums: Sums,
    /// Scratch list of read-vector-clock lines.
    rvc: Vec<u64>,
    /// The `Op::Held` words since the last `Op::History`.
    held: Vec<u64>,
    /// The `Op::Scanned` lines since the last `Op::History`.
    scanned: Vec<u64>,
}

impl Models {
    fn new(cfg: &HwConfig, reference: bool) -> Models {
        let h = || {
            if reference {
                Hierarchy::reference(cfg)
            } else {
                Hierarchy::new(cfg)
            }
        };
        let granularity = match cfg.granularity {
            MdGranularity::TypeSafe => Granularity::TypeSafe,
            MdGranularity::Byte => Granularity::Byte,
        };
        Models {
            ft: h(),
            detector: FastTrack::with_granularity(granularity),
            granularity,
            cost: cfg.ft,
            instruction_cycles: u64::from(cfg.instruction_cycles),
            last_instructions: 0,
            layout: Layout::new(cfg.line_bytes),
            shadow_bytes: cfg.ft.shadow_bytes,
            entry_bytes: cfg.ft.entry_bytes,
            sums: Sums::default(),
            rvc: Vec::new(),
            held: Vec::new(),
            scanned: Vec::new(),
        }
    }

    /// The cycles summed since the last call.
    fn take(&mut self) -> Sums {
        std::mem::take(&mut self.sums)
    }

    /// Prefetches ([`crate::prefetch::line`]) what the operations `next`
    /// and `later` will look up: for `next` the L3 set of its data line in
    /// FastTrack's hierarchy and, when checked, of its shadow lines in
    /// FastTrack's and its FastTrack shadow cell (stage two of
    /// [`FastTrack::hint_cell`]); for `later`, checked, the unit word that
    /// stage needs ([`FastTrack::hint_unit`]). Hints: no state changes, so
    /// no statistic moves.
    #[inline]
    fn prefetch(&self, next: Option<&Op>, later: Option<&Op>) {
        if let Some(Op::Access {
            tracked: true, a, ..
        }) = later
        {
            self.detector.hint_unit(a);
        }
        let Some(&Op::Access { tracked, ref a, .. }) = next else {
            return;
        };
        let line = self.layout.data_line(a.addr);
        self.ft.prefetch_l3(line);
        if tracked {
            self.detector.hint_cell(a);
            let (first, count) = history_units(a, self.granularity);
            let (layout, cell) = (self.layout, self.shadow_bytes);
            let (l0, l1) = (
                layout.ft_line(first, cell),
                layout.ft_line(first.wrapping_add(u64::from(count.max(1)) - 1), cell),
            );
            // At most a few lines (count × cell bytes); a wrapped range
            // prefetches its first line only.
            for l in (l0..=l1.max(l0)).take(4) {
                self.ft.prefetch_l3(l);
            }
        }
    }

    fn run(&mut self, op: &Op) {
        match *op {
            Op::Access {
                c,
                tracked,
                sw_check,
                ref a,
            } => {
                let c = c as usize;
                let _ = self.detector.access(a);
                let work = *self.detector.last_work();
                self.last_instructions =
                    self.cost.access_instructions(&work, a.kind) * self.instruction_cycles;
                if sw_check {
                    self.sums.sw_checks += self.last_instructions;
                }
                let write = a.kind == AccessKind::Write;
                let mut ft_lat = 0u32;
                for line in self.layout.data_lines(a.addr, a.size) {
                    ft_lat = ft_lat.max(self.ft.data_access(c, line, write).1);
                }
                self.sums.fasttrack += u64::from(ft_lat);
                if tracked {
                    let (first, count) = history_units(a, self.granularity);
                    let shared = work.cells[FtPath::ReadShared as usize]
                        + work.cells[FtPath::WriteShared as usize];
                    self.sums.fasttrack += self.last_instructions
                        + self.ft_shadow(c, first, count, shared, work.shared_entries);
                }
            }
            Op::Lard(origin, op) => self.detector.lard(&origin, &op),
            Op::Sync(origin, sync) => self.detector.sync(&origin, &sync),
            Op::Held(bits) => self.held.push(bits),
            Op::Scanned(line) => self.scanned.push(line),
            Op::History { c, a, b } => {
                let lines = self.history_lines(a, b);
                self.held.clear();
                self.scanned.clear();
                self.sums.fasttrack += soft_accesses(&mut self.ft, c as usize, lines, true);
            }
        }
    }

    /// Cycles of software FastTrack's shadow accesses: one cell per byte,
    /// and for read-shared cells the entries of a read vector clock
    /// (modelled at a fixed address per byte, as a per-location
    /// allocation).
    fn ft_shadow(&mut self, c: usize, first: u64, count: u32, shared: u32, entries: u32) -> u64 {
        let layout = self.layout;
        let mut cycles = self.ft_cells(c, first, u64::from(count));
        if shared > 0 && entries > 0 {
            let line_bytes = 1u64 << layout.shift;
            let per_cell = u64::from(entries).div_ceil(u64::from(shared));
            let span = (per_cell * self.entry_bytes).div_ceil(line_bytes);
            let mut rvc = std::mem::take(&mut self.rvc);
            rvc.clear();
            for i in 0..u64::from(shared) {
                let base = layout.rvc_line(first.wrapping_add(i));
                rvc.extend((0..span).map(|k| base.wrapping_add(k)));
            }
            cycles += soft_accesses(&mut self.ft, c, rvc.iter().copied(), true);
            self.rvc = rvc;
        }
        cycles
    }
}

impl Models {
    /// Software FastTrack's memory traffic of ClearHistory (`b` empty) or
    /// CopyHistory (`a` the source, `b` the destination): the presence
    /// structure's lines it scans (`Op::Scanned`), then the shadow cell of each record the
    /// operation reads and writes (`Op::Held`); the walk LARDISH's
    /// software manager makes over its variable map
    /// (`Lardish::history_op`).
    fn history_lines(&self, a: (u64, u64), b: (u64, u64)) -> Vec<u64> {
        let (layout, cell) = (self.layout, self.shadow_bytes);
        let held = |i: u64| {
            self.held
                .get((i / 64) as usize)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        };
        let mut lines: Vec<u64> = self.scanned.clone();
        for i in (0..a.1).filter(|&i| held(i)) {
            lines.push(layout.ft_line(a.0.wrapping_add(i), cell));
        }
        for i in (0..b.1).filter(|&i| held(a.1 + i)) {
            lines.push(layout.ft_line(b.0.wrapping_add(i), cell));
        }
        lines
    }

    /// [`soft_accesses`] (writes) of the shadow lines of the `n` cells from
    /// byte `first` on, one cell per byte. When the cells lie in one
    /// stretch of the shadow (no address wraps) and a cell is no larger
    /// than a line, their lines are every line from the first cell's to
    /// the last's, each a run of consecutive cells: each line costs its
    /// latency and every other cell 1, as the per-cell walk charges.
    #[inline]
    fn ft_cells(&mut self, c: usize, first: u64, n: u64) -> u64 {
        let (layout, cell) = (self.layout, self.shadow_bytes);
        const LOW48: u64 = (1 << 48) - 1;
        let a0 = first & LOW48;
        let one_stretch = n > 0
            && cell <= 1 << layout.shift
            && a0
                .checked_add(n - 1)
                .filter(|&last| last <= LOW48)
                .and_then(|last| last.checked_mul(cell))
                .and_then(|off| off.checked_add(super::layout::FT_BASE))
                .is_some();
        if !one_stretch {
            let lines = (0..n).map(|i| layout.ft_line(first.wrapping_add(i), cell));
            return soft_accesses(&mut self.ft, c, lines, true);
        }
        let l0 = layout.ft_line(first, cell);
        let l1 = layout.ft_line(first.wrapping_add(n - 1), cell);
        let mut total = n - (l1 - l0 + 1);
        for l in l0..=l1 {
            total += u64::from(self.ft.data_access(c, l, true).1);
        }
        total
    }
}

/// Sum of latencies of the lines `lines` (sequential software accesses,
/// writes if `write`) of core `c` in `h`; a line equal to the previous one
/// costs 1. Shared by the software-FastTrack model and LARDISH's software
/// checks, so the two price software metadata traffic the same way.
pub(super) fn soft_accesses(
    h: &mut Hierarchy,
    c: usize,
    lines: impl IntoIterator<Item = u64>,
    write: bool,
) -> u64 {
    let mut total = 0u64;
    let mut last = u64::MAX;
    for l in lines {
        if l == last {
            total += 1;
            continue;
        }
        last = l;
        total += u64::from(h.data_access(c, l, write).1);
    }
    total
}

impl Model for Models {
    type Op = Op;
    const FILLER: Op = Op::History {
        c: 0,
        a: (0, 0),
        b: (0, 0),
    };

    fn run_batch(&mut self, ops: &[Op]) {
        for (i, op) in ops.iter().enumerate() {
            self.prefetch(ops.get(i + AHEAD), ops.get(i + 2 * AHEAD));
            self.run(op);
        }
    }
}

/// One access of the no-detection machine: the data lines of `size` bytes
/// at `addr`, read or written by core `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseOp {
    /// First byte.
    pub addr: u64,
    /// Bytes.
    pub size: u32,
    /// Core index.
    pub c: u16,
    /// A write.
    pub write: bool,
}

/// The no-detection machine's hierarchy and the cycles its data accesses
/// took since the last [`NoDetection::take`].
#[derive(Clone, Debug)]
pub(super) struct NoDetection {
    hier: Hierarchy,
    layout: Layout,
    cycles: u64,
}

impl NoDetection {
    fn new(cfg: &HwConfig, reference: bool) -> NoDetection {
        NoDetection {
            hier: if reference {
                Hierarchy::reference(cfg)
            } else {
                Hierarchy::new(cfg)
            },
            layout: Layout::new(cfg.line_bytes),
            cycles: 0,
        }
    }

    /// The access's latency: its slowest line's.
    #[inline]
    fn run(&mut self, op: &BaseOp) {
        let mut lat = 0u32;
        for line in self.layout.data_lines(op.addr, op.size) {
            lat = lat.max(self.hier.data_access(usize::from(op.c), line, op.write).1);
        }
        self.cycles += u64::from(lat);
    }

    fn take(&mut self) -> u64 {
        std::mem::take(&mut self.cycles)
    }
}

impl Model for NoDetection {
    type Op = BaseOp;
    const FILLER: BaseOp = BaseOp {
        addr: 0,
        size: 0,
        c: 0,
        write: false,
    };

    fn run_batch(&mut self, ops: &[BaseOp]) {
        for (i, op) in ops.iter().enumerate() {
            if let Some(next) = ops.get(i + AHEAD) {
                self.hier.prefetch_l3(self.layout.data_line(next.addr));
            }
            self.run(op);
        }
    }
}

/// The baseline cost models, on the pool's lanes or inline.
pub(super) enum Baselines {
    /// Run on the caller's thread (the reference model).
    Inline(Box<Models>, Box<NoDetection>),
    /// Run in batches on the pool's two threads.
    Threaded(Box<Pool<Models, NoDetection>>),
    /// Between [`Baselines::park`] or [`Baselines::unpark`]'s two steps
    /// (never seen outside them).
    Moving,
}

impl Baselines {
    /// The models of `cfg` on the pool's lanes (inline if no thread can be
    /// started).
    pub fn threaded(cfg: &HwConfig) -> Baselines {
        let models = || Box::new(Models::new(cfg, false));
        let base = || Box::new(NoDetection::new(cfg, false));
        match Pool::try_spawn("lardish-baselines", *models(), *base()) {
            Ok(p) => Baselines::Threaded(Box::new(p)),
            Err((m, b)) => Baselines::Inline(Box::new(m), Box::new(b)),
        }
    }

    /// Moves threaded models inline (a process about to fork keeps no
    /// thread the child would lack); returns whether they were threaded.
    pub fn park(&mut self) -> bool {
        if !matches!(self, Baselines::Threaded(_)) {
            return false;
        }
        let Baselines::Threaded(pool) = std::mem::replace(self, Baselines::Moving) else {
            unreachable!("checked above");
        };
        let (models, base) = pool.into_models();
        *self = Baselines::Inline(Box::new(models), Box::new(base));
        true
    }

    /// Puts inline models back on a pool's threads (they stay inline if no
    /// thread can be started).
    pub fn unpark(&mut self) {
        if !matches!(self, Baselines::Inline(..)) {
            return;
        }
        let Baselines::Inline(models, base) = std::mem::replace(self, Baselines::Moving) else {
            unreachable!("checked above");
        };
        *self = match Pool::try_spawn("lardish-baselines", *models, *base) {
            Ok(p) => Baselines::Threaded(Box::new(p)),
            Err((models, base)) => Baselines::Inline(Box::new(models), Box::new(base)),
        };
    }

    /// The reference models of `cfg` (every cache speed-up off), inline.
    pub fn inline_reference(cfg: &HwConfig) -> Baselines {
        Baselines::Inline(
            Box::new(Models::new(cfg, true)),
            Box::new(NoDetection::new(cfg, true)),
        )
    }

    /// [`Baselines::push`] of `Op::Access { c, tracked, sw_check, a: *a }`,
    /// written straight into its slot of the batch: an `Op` built on the
    /// stack and then copied was read back with wider loads than the
    /// stores that wrote it, a store-forwarding stall per access.
    #[inline(always)]
    pub fn push_access(&mut self, c: u32, tracked: bool, sw_check: bool, a: &Access) {
        match self {
            Baselines::Inline(m, _) => m.run(&Op::Access {
                c,
                tracked,
                sw_check,
                a: *a,
            }),
            Baselines::Threaded(p) => {
                *p.slot_a() = Op::Access {
                    c,
                    tracked,
                    sw_check,
                    a: *a,
                }
            }
            Baselines::Moving => moving(),
        }
    }

    /// Runs `op` after every earlier one.
    #[inline]
    pub fn push(&mut self, op: Op) {
        match self {
            Baselines::Inline(m, _) => m.run(&op),
            Baselines::Threaded(p) => *p.slot_a() = op,
            Baselines::Moving => moving(),
        }
    }

    /// The data access of `a` by core `c` in the no-detection machine,
    /// after every earlier one.
    #[inline(always)]
    pub fn push_no_detection(&mut self, c: usize, a: &Access) {
        let op = BaseOp {
            addr: a.addr,
            size: a.size,
            c: c as u16,
            write: a.kind == AccessKind::Write,
        };
        match self {
            Baselines::Inline(_, b) => b.run(&op),
            Baselines::Threaded(p) => *p.slot_b() = op,
            Baselines::Moving => moving(),
        }
    }

    /// The sums since the last call, after every operation pushed so far.
    pub fn take(&mut self) -> Sums {
        match self {
            Baselines::Inline(m, b) => Sums {
                no_detection: b.take(),
                ..m.take()
            },
            Baselines::Threaded(p) => {
                let no_detection = p.with_b(|b| b.take());
                Sums {
                    no_detection,
                    ..p.with_a(|m| m.take())
                }
            }
            Baselines::Moving => moving(),
        }
    }

    /// Software FastTrack's instruction cycles (its measured cost) for the
    /// last [`Op::Access`] pushed.
    pub fn last_access_cycles(&mut self) -> u64 {
        match self {
            Baselines::Inline(m, _) => m.last_instructions,
            Baselines::Threaded(p) => p.with_a(|m| m.last_instructions),
            Baselines::Moving => moving(),
        }
    }
}

/// [`Baselines::Moving`] is only seen inside park/unpark.
#[cold]
fn moving() -> ! {
    unreachable!("the baseline models are being moved")
}

impl std::fmt::Debug for Baselines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Baselines::Inline(m, b) => f.debug_tuple("Inline").field(m).field(b).finish(),
            Baselines::Threaded(p) => f
                .debug_struct("Threaded")
                .field("filling", &p.filling())
                .finish(),
            Baselines::Moving => f.write_str("Moving"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shadow lines' cost by stretches is the per-cell walk's, cycle
    /// for cycle and state for state, for cells smaller than, equal to and
    /// larger than a line, and for ranges crossing the top of the 48-bit
    /// address space.
    #[test]
    fn shadow_stretches_cost_what_the_cell_walk_costs() {
        let top = (1u64 << 48) - 3;
        for line_bytes in [8u64, 64] {
            for cell in [1u64, 3, 8, 64, 100] {
                let mut cfg = HwConfig {
                    line_bytes,
                    ..HwConfig::default()
                };
                cfg.ft.shadow_bytes = cell;
                let (mut fast, mut walk) = (Models::new(&cfg, false), Models::new(&cfg, false));
                let cases = [
                    (0u64, 1u64),
                    (5, 8),
                    (1000, 64),
                    (top, 8),
                    (u64::MAX - 2, 8),
                    (77, 0),
                ];
                for (k, &(first, n)) in cases.iter().cycle().take(60).enumerate() {
                    let first = first.wrapping_add(k as u64 * 13);
                    let c = k % 2;
                    let by_stretch = fast.ft_cells(c, first, n);
                    let layout = walk.layout;
                    let lines = (0..n).map(|i| layout.ft_line(first.wrapping_add(i), cell));
                    let by_cell = soft_accesses(&mut walk.ft, c, lines, true);
                    assert_eq!(
                        by_stretch, by_cell,
                        "line {line_bytes} cell {cell} first {first:#x} n {n}"
                    );
                }
                assert_eq!(fast.ft.occupancy(), walk.ft.occupancy());
            }
        }
    }
}
