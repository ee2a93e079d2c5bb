//! The software-FastTrack cost model of [`Lardish`](super::Lardish) — its
//! cache hierarchy and the software FastTrack detector whose work it
//! charges — simulated on a second host thread. (The no-detection
//! hierarchy, the other baseline, stays on the model's thread: the two
//! threads then do about the same work, docs/lardish.md.)
//!
//! Nothing LARDISH decides depends on this model: it only sums the
//! latencies that `cycles_fasttrack` adds, and FastTrack's cost of the
//! accesses LARDISH checks in software. So the model hands it its work as
//! [`Op`]s in order, in batches, and collects the sums when its statistics
//! are read ([`Baselines::take`]). The hierarchy and the detector see the
//! same events in the same order as on one thread, and sums do not depend
//! on when they are added, so every statistic is the one-thread model's;
//! [`Baselines::inline_reference`] (the reference model) runs it on the
//! caller's thread.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::cache::Hierarchy;
use super::config::HwConfig;
use super::ftcost::FtCost;
use super::layout::Layout;
use crate::detector::{history_units, Detector, Granularity};
use crate::event::{Access, AccessKind, LardOp, LowLevelSync, Origin};
use crate::fasttrack::{FastTrack, FtPath};

/// Operations per batch handed to the worker.
const BATCH: usize = 1024;
/// How many operations ahead the worker prefetches (docs/lardish.md,
/// "Prefetching a batch ahead").
const AHEAD: usize = 4;
/// Batches in flight before the model waits for the worker.
const IN_FLIGHT: usize = 8;

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
    /// FastTrack's shadow lines of ClearHistory (`b` empty) or
    /// CopyHistory (`a` the source, `b` the destination) as one sequence of
    /// writes by core `c`: `(addr, len)` ranges.
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
    shadow_bytes: u64,
    entry_bytes: u64,
    sums: Sums,
    /// Scratch list of read-vector-clock lines.
    rvc: Vec<u64>,
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
        Models {
            ft: h(),
            detector: FastTrack::new(),
            cost: cfg.ft,
            instruction_cycles: u64::from(cfg.instruction_cycles),
            last_instructions: 0,
            layout: Layout::new(cfg.line_bytes),
            shadow_bytes: cfg.ft.shadow_bytes,
            entry_bytes: cfg.ft.entry_bytes,
            sums: Sums::default(),
            rvc: Vec::new(),
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
            let (first, count) = history_units(a, Granularity::Byte);
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
                    let (first, count) = history_units(a, Granularity::Byte);
                    let shared = work.cells[FtPath::ReadShared as usize]
                        + work.cells[FtPath::WriteShared as usize];
                    self.sums.fasttrack += self.last_instructions
                        + self.ft_shadow(c, first, count, shared, work.shared_entries);
                }
            }
            Op::Lard(origin, op) => self.detector.lard(&origin, &op),
            Op::Sync(origin, sync) => self.detector.sync(&origin, &sync),
            Op::History { c, a, b } => {
                let (layout, cell) = (self.layout, self.shadow_bytes);
                let lines = (0..a.1)
                    .map(move |i| layout.ft_line(a.0.wrapping_add(i), cell))
                    .chain((0..b.1).map(move |i| layout.ft_line(b.0.wrapping_add(i), cell)));
                self.sums.fasttrack += soft_accesses(&mut self.ft, c as usize, lines, true);
            }
        }
    }

    /// Cycles of software FastTrack's shadow accesses: one cell per byte,
    /// and for read-shared cells the entries of a read vector clock
    /// (modelled at a fixed address per byte, as a per-location
    /// allocation).
    fn ft_shadow(&mut self, c: usize, first: u64, count: u32, shared: u32, entries: u32) -> u64 {
        let (layout, cell) = (self.layout, self.shadow_bytes);
        let lines = (0..u64::from(count)).map(|i| layout.ft_line(first.wrapping_add(i), cell));
        let mut cycles = soft_accesses(&mut self.ft, c, lines, true);
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

/// A batch's slots before they are written (any operation: only the
/// first `n` of a [`Msg::Batch`] are read).
fn empty_batch() -> Box<[Op; BATCH]> {
    let filler = Op::History {
        c: 0,
        a: (0, 0),
        b: (0, 0),
    };
    vec![filler; BATCH]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has BATCH operations"))
}

/// A request to the worker thread.
enum Msg {
    /// Run the first `n` operations of the batch, in order.
    Batch(Box<[Op; BATCH]>, usize),
    /// Reply with the cycles summed since the last `Take`.
    Take,
    /// Reply with FastTrack's instruction cycles for the last access.
    LastInstructions,
}

/// The worker's answers.
enum Reply {
    /// To [`Msg::Take`].
    Cycles(Sums),
    /// To [`Msg::LastInstructions`].
    Instructions(u64),
}

/// The worker thread and its channels.
pub(super) struct Worker {
    /// The batch being filled: its first `len` operations are pending.
    /// A fixed array assigned slot by slot, so that an access's operation
    /// is written in place ([`Baselines::push_access`]).
    pending: Box<[Op; BATCH]>,
    len: usize,
    to: Option<SyncSender<Msg>>,
    /// Emptied batches coming back for reuse.
    spent: Receiver<Box<[Op; BATCH]>>,
    replies: Receiver<Reply>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts a worker owning `models`.
    fn spawn(mut models: Box<Models>) -> std::io::Result<Worker> {
        let (to, from_model) = mpsc::sync_channel::<Msg>(IN_FLIGHT);
        let (spent_to, spent) = mpsc::channel::<Box<[Op; BATCH]>>();
        let (reply_to, replies) = mpsc::channel::<Reply>();
        let handle = std::thread::Builder::new()
            .name("lardish-baselines".into())
            .spawn(move || {
                while let Ok(msg) = from_model.recv() {
                    match msg {
                        Msg::Batch(batch, n) => {
                            let ops = &batch[..n];
                            for (i, op) in ops.iter().enumerate() {
                                models.prefetch(ops.get(i + AHEAD), ops.get(i + 2 * AHEAD));
                                models.run(op);
                            }
                            let _ = spent_to.send(batch);
                        }
                        Msg::Take => {
                            if reply_to.send(Reply::Cycles(models.take())).is_err() {
                                return;
                            }
                        }
                        Msg::LastInstructions => {
                            let i = models.last_instructions;
                            if reply_to.send(Reply::Instructions(i)).is_err() {
                                return;
                            }
                        }
                    }
                }
            })?;
        Ok(Worker {
            pending: empty_batch(),
            len: 0,
            to: Some(to),
            spent,
            replies,
            handle: Some(handle),
        })
    }

    fn send(&mut self, msg: Msg) {
        let sent = self.to.as_ref().map(|to| to.send(msg));
        if !matches!(sent, Some(Ok(()))) {
            self.died();
        }
    }

    /// The batch's next slot (handing the batch over first if it is full).
    #[inline(always)]
    fn next_slot(&mut self) -> &mut Op {
        if self.len == BATCH {
            self.flush();
        }
        self.len += 1;
        &mut self.pending[self.len - 1]
    }

    /// Hands the pending operations to the worker.
    fn flush(&mut self) {
        if self.len == 0 {
            return;
        }
        let next = self.spent.try_recv().unwrap_or_else(|_| empty_batch());
        let batch = std::mem::replace(&mut self.pending, next);
        let n = std::mem::take(&mut self.len);
        self.send(Msg::Batch(batch, n));
    }

    fn ask(&mut self, msg: Msg) -> Reply {
        self.flush();
        self.send(msg);
        match self.replies.recv() {
            Ok(r) => r,
            Err(_) => self.died(),
        }
    }

    /// The worker stopped early: it panicked; so does the model.
    fn died(&mut self) -> ! {
        self.to = None;
        if let Some(h) = self.handle.take() {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
        panic!("the LARDISH baseline worker stopped");
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.to = None;
        if let Some(h) = self.handle.take() {
            // A panic of the worker is reported by the next `ask`; a model
            // dropped without asking ignores it.
            let _ = h.join();
        }
    }
}

/// The baseline cost models, on a worker thread or inline.
pub(super) enum Baselines {
    /// Run on the caller's thread (the reference model).
    Inline(Box<Models>),
    /// Run on a worker thread, in batches.
    Threaded(Worker),
}

impl Baselines {
    /// The models of `cfg` on a worker thread (inline if no thread can be
    /// started).
    pub fn threaded(cfg: &HwConfig) -> Baselines {
        match Worker::spawn(Box::new(Models::new(cfg, false))) {
            Ok(w) => Baselines::Threaded(w),
            Err(_) => Baselines::Inline(Box::new(Models::new(cfg, false))),
        }
    }

    /// The reference models of `cfg` (every cache speed-up off), inline.
    pub fn inline_reference(cfg: &HwConfig) -> Baselines {
        Baselines::Inline(Box::new(Models::new(cfg, true)))
    }

    /// [`Baselines::push`] of `Op::Access { c, tracked, sw_check, a: *a }`,
    /// written straight into its slot of the batch: an `Op` built on the
    /// stack and then copied was read back with wider loads than the
    /// stores that wrote it, a store-forwarding stall per access.
    #[inline(always)]
    pub fn push_access(&mut self, c: u32, tracked: bool, sw_check: bool, a: &Access) {
        match self {
            Baselines::Inline(m) => m.run(&Op::Access {
                c,
                tracked,
                sw_check,
                a: *a,
            }),
            Baselines::Threaded(w) => {
                *w.next_slot() = Op::Access {
                    c,
                    tracked,
                    sw_check,
                    a: *a,
                }
            }
        }
    }

    /// Runs `op` after every earlier one.
    #[inline]
    pub fn push(&mut self, op: Op) {
        match self {
            Baselines::Inline(m) => m.run(&op),
            Baselines::Threaded(w) => *w.next_slot() = op,
        }
    }

    /// The sums since the last call, after every operation pushed so far.
    pub fn take(&mut self) -> Sums {
        match self {
            Baselines::Inline(m) => m.take(),
            Baselines::Threaded(w) => match w.ask(Msg::Take) {
                Reply::Cycles(s) => s,
                Reply::Instructions(_) => unreachable!("Take is answered with cycles"),
            },
        }
    }

    /// Software FastTrack's instruction cycles (its measured cost) for the
    /// last [`Op::Access`] pushed.
    pub fn last_access_cycles(&mut self) -> u64 {
        match self {
            Baselines::Inline(m) => m.last_instructions,
            Baselines::Threaded(w) => match w.ask(Msg::LastInstructions) {
                Reply::Instructions(i) => i,
                Reply::Cycles(..) => unreachable!("LastInstructions is answered with instructions"),
            },
        }
    }
}

impl std::fmt::Debug for Baselines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Baselines::Inline(m) => f.debug_tuple("Inline").field(m).finish(),
            Baselines::Threaded(w) => f.debug_struct("Threaded").field("pending", &w.len).finish(),
        }
    }
}
