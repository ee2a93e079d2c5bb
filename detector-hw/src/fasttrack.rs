//! FastTrack (Flanagan & Freund, PLDI 2009): the canonical algorithm with
//! *epochs* instead of per-location vector clocks. This is the default
//! software detector.
//!
//! # Representation
//!
//! Shadow memory ([`PagedShadow`] of [`units::UnitPage`]s) holds the
//! history of every byte (or history unit, see [`Granularity`]), one cell
//! per *access unit*: bytes that have always been accessed together (an
//! aligned 1, 2, 4 or 8-byte unit) share one cell, split exactly when an
//! access covers part of a unit (module [`units`]). A cell holds
//!
//! * the last write as an epoch `t@c` (plus its PC; the thread and PC
//!   share one word, module `cell`: a cell is 32 bytes, half a host cache
//!   line);
//! * the reads as either one epoch `t@c` (*exclusive*: the reads since the
//!   last write are totally ordered and the last one stands for all) or, once
//!   two concurrent reads happened, a *read vector clock* (*read-shared*:
//!   one epoch and PC per reading thread, in a side table whose sets of up
//!   to four readers fill one host cache line, module `readset`).
//!
//! # Rules (`t` accesses with vector clock `C`, `E(t) = t@C[t]`)
//!
//! * Any access: the last write `u@c` races unless `u == t` or `c <= C[u]`.
//!   This O(1) check is never skipped, so the verdict does not depend on
//!   which fast path the update takes.
//! * Read, reads exclusive by `t` itself: replace the epoch (same-thread fast
//!   path). Exclusive by `u@c` with `c <= C[u]`: `u`'s read happens before
//!   this one, replace it by `E(t)`. Otherwise: switch to read-shared
//!   `{u, t}`. Read-shared: set `t`'s entry.
//! * Write: check the read epoch, or every entry of the read vector clock
//!   (skipping `t`'s own), then record the write epoch and reset the reads to
//!   empty (read-shared storage is freed). When the last write and reads are
//!   `t`'s own (or absent) this is a couple of comparisons and a store.
//!
//! # Agreement with [`Canonical`](crate::canonical::Canonical)
//!
//! For every access, whether it is racy and the set of [`RaceKind`]s are the
//! same as Canonical's whenever the vector clocks describe happens-before,
//! i.e. WriteVC is used as a runtime implements synchronization (acquire
//! joins a released clock, release publishes the clock then increments the
//! own entry, as [`crate::trace::SyncModel`] does), so that an identity's
//! own entry never decreases and `C[u] >= c` implies `C` includes what `u`
//! knew at time `c`. The last write and the per-thread reads kept are the
//! same, with one exception, which makes FastTrack's list of earlier accesses
//! a *subset* of Canonical's: when `t` reads a byte whose reads are
//! exclusive to `u` and `u`'s read happens before `t`'s, FastTrack forgets
//! `u`'s read while Canonical keeps it until the next write. A later write
//! that races with both reports `ReadWrite` naming only `t` in FastTrack, `u`
//! and `t` in Canonical. The verdict and kinds agree: if `t`'s read happens
//! before the write, so does `u`'s (`u ⊑ t ⊑ w`); if not, `t`'s read already
//! gives the `ReadWrite` race. (Threads replacing their own read, or reads
//! of one byte within one thread, are treated identically by both: each
//! keeps one last read per thread.)
//!
//! With arbitrary WriteVC values (clocks lowered, entries set without the
//! knowledge they stand for) this transitivity fails and FastTrack may miss
//! a race with a forgotten read that Canonical reports.

use crate::clock::{ClockRef, ClockTable, ThreadIdx};
use crate::detector::{history_units, Detector, Granularity};
use crate::event::{Access, AccessKind, LardOp, Origin, ProgramEvent, ThreadKey};
use crate::lard::{self, HistoryOp};
use crate::race::{Race, RaceCollector, RaceKind};
use crate::shadow::{page_chunks, PagedShadow, PAGE_SIZE};

mod cell;
mod hint;
mod readset;
mod units;

use cell::{Cell, Who, Wide, EMPTY, NONE, SHARED, WHO_SHARED};
use readset::{ReadClocks, ReadEntry};
use units::{UnitPage, GRANULE};

/// Which rule one cell's check took: the check paths whose measured cost
/// the LARDISH cost models charge (`docs/lardish.md`, "The FastTrack cost").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtPath {
    /// Read; the reads since the last write are this thread's own or none
    /// (FastTrack's same-epoch / same-thread fast path).
    ReadSameEpoch,
    /// Read; another thread's exclusive read happens before it and is
    /// replaced.
    ReadExclusive,
    /// Read; a concurrent exclusive read: the cell becomes read-shared (a
    /// read vector clock is allocated).
    ReadShare,
    /// Read of a read-shared cell: the thread's entry of the read vector
    /// clock is set (a scan of its entries).
    ReadShared,
    /// Write; the reads are exclusive or none.
    Write,
    /// Write after read-shared: every entry of the read vector clock is
    /// checked, then it is freed.
    WriteShared,
}

impl FtPath {
    /// Every path, in [`FtWork::cells`] order.
    pub const ALL: [FtPath; 6] = [
        FtPath::ReadSameEpoch,
        FtPath::ReadExclusive,
        FtPath::ReadShare,
        FtPath::ReadShared,
        FtPath::Write,
        FtPath::WriteShared,
    ];

    /// Short name (reports, JSON).
    pub fn name(self) -> &'static str {
        match self {
            FtPath::ReadSameEpoch => "read_same_epoch",
            FtPath::ReadExclusive => "read_exclusive",
            FtPath::ReadShare => "read_share",
            FtPath::ReadShared => "read_shared",
            FtPath::Write => "write",
            FtPath::WriteShared => "write_shared",
        }
    }
}

/// The work of FastTrack's last access: cells per [`FtPath`] and read
/// vector clock entries visited, per byte (`cells`, `shared_entries`: what a
/// per-byte detector does, the same for every shadow layout) and per access
/// unit (`units`, `unit_entries`: the cells this detector actually visits,
/// module `units`; the inputs of the shared FastTrack cost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtWork {
    /// Cells checked, one per history unit (byte, or item with
    /// [`Granularity::TypeSafe`]), indexed like [`FtPath::ALL`].
    pub cells: [u32; 6],
    /// Read vector clock entries visited by `ReadShared` and `WriteShared`
    /// cells (the scan of a read-shared history), per cell.
    pub shared_entries: u32,
    /// Shadow cells visited (one per access unit, which stands for its
    /// bytes' cells), indexed like [`FtPath::ALL`].
    pub units: [u32; 6],
    /// Read vector clock entries visited, per shadow cell visited.
    pub unit_entries: u32,
}

impl FtWork {
    /// Counts one visited cell standing for `bytes` cells that took
    /// `path`, visiting `entries` read vector clock entries each.
    #[inline]
    fn add(&mut self, path: FtPath, entries: usize, bytes: usize) {
        self.cells[path as usize] += bytes as u32;
        self.shared_entries += (entries * bytes) as u32;
        self.units[path as usize] += 1;
        self.unit_entries += entries as u32;
    }

    /// The per-byte work (`cells`, `shared_entries`) alone: equal for
    /// every shadow layout.
    pub fn per_byte(&self) -> ([u32; 6], u32) {
        (self.cells, self.shared_entries)
    }

    /// Cells checked on any path.
    pub fn total_cells(&self) -> u32 {
        self.cells.iter().sum()
    }
}

/// Bytes of one FastTrack shadow cell (the history of one byte, or of one
/// access unit of up to 8 bytes).
pub const SHADOW_CELL_BYTES: u64 = std::mem::size_of::<Cell>() as u64;
/// Bytes of one read vector clock entry.
pub const READ_ENTRY_BYTES: u64 = std::mem::size_of::<ReadEntry>() as u64;

/// The FastTrack detector; see the module docs.
#[derive(Clone, Debug)]
pub struct FastTrack {
    clocks: ClockTable,
    shadow: PagedShadow<UnitPage>,
    reads: ReadClocks,
    /// The wide epochs of the cells (module `cell`).
    wide: Wide,
    granularity: Granularity,
    races: RaceCollector,
    work: FtWork,
    /// Whether [`FastTrack::last_work`] is kept (the cost models read it;
    /// a plain detection run does not).
    track_work: bool,
}

impl Default for FastTrack {
    fn default() -> Self {
        FastTrack::new()
    }
}

/// What one access needs while walking its cells.
struct Ctx<'a> {
    clocks: &'a ClockTable,
    clock: ClockRef<'a>,
    /// Unpacks the cells' epochs.
    wide: &'a Wide,
    t: ThreadIdx,
    /// `t` and `pc` packed, as stored in a cell.
    me: Who,
    now: u64,
}

impl Ctx<'_> {
    /// True if an access by `u` at `clock` races with the current access.
    #[inline]
    fn races_with(&self, u: ThreadIdx, clock: u64) -> bool {
        u != self.t && clock > self.clock.get(u)
    }

    /// Checks and records the access on bytes `bytes` of `page` (offsets
    /// in one page), unit by unit; with `WORK`, each unit counts as its
    /// bytes in `work`.
    #[inline(always)]
    fn visit<const WORK: bool>(
        &self,
        kind: AccessKind,
        page: &mut UnitPage,
        bytes: std::ops::Range<usize>,
        reads: &mut ReadClocks,
        races: &mut RaceCollector,
        work: &mut FtWork,
    ) {
        // The common access: one whole unit of a granule that is already
        // split as it needs (every aligned access made with one size).
        if let Some((cell, u)) = page.whole_unit(bytes.start, bytes.end) {
            let (path, entries) = self.rule(kind, cell, reads, races);
            if WORK {
                work.add(path, entries, u);
            }
            return;
        }
        self.visit_units::<WORK>(kind, page, bytes, reads, races, work);
    }

    /// [`Ctx::visit`] for any access: splits, merges and compact granules.
    #[inline(never)]
    fn visit_units<const WORK: bool>(
        &self,
        kind: AccessKind,
        page: &mut UnitPage,
        bytes: std::ops::Range<usize>,
        reads: &mut ReadClocks,
        races: &mut RaceCollector,
        work: &mut FtWork,
    ) {
        let (mut at, end) = (bytes.start, bytes.end);
        while at < end {
            let g = at / GRANULE;
            let base = g * GRANULE;
            let (lo, hi) = (at - base, (end - base).min(GRANULE));
            let u = page.units_covering(g, lo, hi, reads);
            if page.is_compact(g) {
                if kind == AccessKind::Read {
                    // Byte by byte: the granule's write, the byte's reads.
                    for i in lo..hi {
                        let (path, entries) = if i == 0 {
                            self.read(page.cell_mut(base), reads, races)
                        } else {
                            let mut cell = page.compact_cell(g, i);
                            let taken = self.read(&mut cell, reads, races);
                            page.set_compact_reads(g, i, &cell);
                            taken
                        };
                        if WORK {
                            work.add(path, entries, 1);
                        }
                    }
                    at = base + hi;
                    continue;
                }
                page.expand(g);
            }
            // (A `while`, not `step_by(u)`: that divides by `u` for the
            // count, a division per access on the hot path.)
            let mut i = base + lo;
            while i < base + hi {
                let cell = page.cell_mut(i);
                let (path, entries) = self.rule(kind, cell, reads, races);
                if WORK {
                    work.add(path, entries, u);
                }
                i += u;
            }
            if kind == AccessKind::Write && lo == 0 && hi == GRANULE && u < GRANULE {
                page.written_whole(g);
            }
            at = base + hi;
        }
    }

    /// Checks and records an access of `kind` on one cell: the read or
    /// the write rule; returns the path taken and the read vector clock
    /// entries visited.
    #[inline(always)]
    fn rule(
        &self,
        kind: AccessKind,
        cell: &mut Cell,
        reads: &mut ReadClocks,
        races: &mut RaceCollector,
    ) -> (FtPath, usize) {
        match kind {
            AccessKind::Read => self.read(cell, reads, races),
            AccessKind::Write => self.write(cell, reads, races),
        }
    }

    /// Checks and records a read; returns the path taken and the read
    /// vector clock entries visited. (Always inlined: `visit` calls it for
    /// cells and for compact granules' bytes, and a call per cell costs
    /// more than the rule.)
    #[inline(always)]
    fn read(
        &self,
        cell: &mut Cell,
        reads: &mut ReadClocks,
        races: &mut RaceCollector,
    ) -> (FtPath, usize) {
        let w = self.wide.tid(cell.w);
        if self.races_with(w, cell.w_clock) {
            races.push(
                RaceKind::WriteRead,
                self.clocks.key(w),
                self.wide.pc(cell.w),
                cell.w_clock,
            );
        }
        if cell.r == WHO_SHARED {
            let entries = reads.set(cell.r_clock, self.wide, self.me, self.now);
            return (FtPath::ReadShared, entries);
        }
        let r = self.wide.tid(cell.r);
        if r == self.t || r == NONE {
            // A repeated read (same epoch and PC) leaves the cell as it
            // is: no store, so its cache line stays clean.
            if cell.r != self.me || cell.r_clock != self.now {
                cell.r = self.me;
                cell.r_clock = self.now;
            }
            (FtPath::ReadSameEpoch, 0)
        } else if cell.r_clock <= self.clock.get(r) {
            // The exclusive read happens before this one: it is subsumed.
            cell.r = self.me;
            cell.r_clock = self.now;
            (FtPath::ReadExclusive, 0)
        } else {
            let shared = [
                ReadEntry {
                    who: cell.r,
                    clock: cell.r_clock,
                },
                ReadEntry {
                    who: self.me,
                    clock: self.now,
                },
            ];
            cell.r = WHO_SHARED;
            cell.r_clock = reads.alloc(&shared);
            (FtPath::ReadShare, 0)
        }
    }

    /// Checks and records a write; returns the path taken and the read
    /// vector clock entries visited.
    #[inline]
    fn write(
        &self,
        cell: &mut Cell,
        reads: &mut ReadClocks,
        races: &mut RaceCollector,
    ) -> (FtPath, usize) {
        let w = self.wide.tid(cell.w);
        if self.races_with(w, cell.w_clock) {
            races.push(
                RaceKind::WriteWrite,
                self.clocks.key(w),
                self.wide.pc(cell.w),
                cell.w_clock,
            );
        }
        let mut taken = (FtPath::Write, 0);
        if cell.r == WHO_SHARED {
            let set = reads.get(cell.r_clock);
            for e in set {
                let u = self.wide.tid(e.who);
                if self.races_with(u, e.clock) {
                    races.push(
                        RaceKind::ReadWrite,
                        self.clocks.key(u),
                        self.wide.pc(e.who),
                        e.clock,
                    );
                }
            }
            taken = (FtPath::WriteShared, set.len());
            reads.release(cell.r_clock);
        } else if cell.r != 0 {
            let r = self.wide.tid(cell.r);
            if self.races_with(r, cell.r_clock) {
                races.push(
                    RaceKind::ReadWrite,
                    self.clocks.key(r),
                    self.wide.pc(cell.r),
                    cell.r_clock,
                );
            }
        }
        *cell = Cell {
            w_clock: self.now,
            w: self.me,
            ..EMPTY
        };
        taken
    }
}

impl FastTrack {
    /// A FastTrack detector with byte granularity.
    pub fn new() -> FastTrack {
        FastTrack::with_granularity(Granularity::Byte)
    }

    /// A FastTrack detector with the given access-history granularity.
    pub fn with_granularity(granularity: Granularity) -> FastTrack {
        FastTrack::with_pages(granularity, UnitPage::coarse())
    }

    /// A byte-granular FastTrack detector that keeps one cell per byte (no
    /// access units, module `units`) and every epoch's thread and PC in a
    /// side table (no packed words, module `cell`): the straightforward
    /// shadow layout, slower, for differential tests of the unit layout and
    /// the cell packing. Every verdict, report and per-byte [`FtWork`]
    /// ([`FtWork::per_byte`]) is the same as [`FastTrack::new`]'s.
    pub fn per_byte_reference() -> FastTrack {
        FastTrack {
            wide: Wide::always_wide(),
            ..FastTrack::with_pages(Granularity::Byte, UnitPage::per_byte())
        }
    }

    fn with_pages(granularity: Granularity, empty: UnitPage) -> FastTrack {
        FastTrack {
            clocks: ClockTable::new(),
            shadow: PagedShadow::new(empty),
            reads: ReadClocks::default(),
            wide: Wide::default(),
            granularity,
            races: RaceCollector::new(),
            work: FtWork::default(),
            track_work: true,
        }
    }

    /// The same detector without [`FastTrack::last_work`] (always zero):
    /// the same verdicts and reports, without counting the work of every
    /// access. What a detection run uses; the cost models need the work.
    pub fn without_work(self) -> FastTrack {
        FastTrack {
            track_work: false,
            work: FtWork::default(),
            ..self
        }
    }

    /// The work of the last access (all zero if it was not checked, or if
    /// the detector was built [`FastTrack::without_work`]).
    pub fn last_work(&self) -> &FtWork {
        &self.work
    }

    /// Entry `entry` of identity `who`'s vector clock.
    pub fn clock_entry(&self, who: ThreadKey, entry: ThreadKey) -> u64 {
        self.clocks.entry(who, entry)
    }

    /// The dense index of identity `key` (interned if new): what
    /// [`FastTrack::access_as`] takes. An index never changes.
    pub fn identity_index(&mut self, key: ThreadKey) -> ThreadIdx {
        self.clocks.identity(key)
    }

    /// [`Detector::access`] by the identity with index `t`, which must be
    /// [`FastTrack::identity_index`] of `a`'s LARD identity: the same
    /// verdict, report and work, without looking the identity up again
    /// (the clock-owning variants keep the index of each of theirs).
    #[inline]
    pub fn access_as(&mut self, t: ThreadIdx, a: &Access) -> Option<Race> {
        if self.track_work {
            self.work = FtWork::default();
        }
        if !lard::is_checked(a) {
            return None;
        }
        let key = lard::identity(&a.origin);
        debug_assert_eq!(self.clocks.key(t), key);
        self.check(t, key, a)
    }

    /// [`Detector::access`] of a detector made [`FastTrack::without_work`]:
    /// the same verdict and report, with the one copy of the check that
    /// counts no work, so that the emulator's detector observer inlines it
    /// on the per-access path.
    #[inline]
    pub fn access_without_work(&mut self, a: &Access) -> Option<Race> {
        debug_assert!(
            !self.track_work,
            "access_without_work on a counting FastTrack"
        );
        if !lard::is_checked(a) {
            return None;
        }
        let key = lard::identity(&a.origin);
        let t = self.clocks.identity(key);
        self.check_counting::<false>(t, key, a)
    }

    /// Checks and records checked access `a` by identity `t` (key `key`).
    #[inline]
    fn check(&mut self, t: ThreadIdx, key: ThreadKey, a: &Access) -> Option<Race> {
        if self.track_work {
            self.check_counting::<true>(t, key, a)
        } else {
            self.check_counting::<false>(t, key, a)
        }
    }

    /// [`FastTrack::check`], counting the work in `self.work` with `WORK`.
    #[inline(always)]
    fn check_counting<const WORK: bool>(
        &mut self,
        t: ThreadIdx,
        key: ThreadKey,
        a: &Access,
    ) -> Option<Race> {
        let me = self.wide.pack(t, a.pc);
        let clock = self.clocks.clock(t);
        let now = clock.get(t);
        let ctx = Ctx {
            clocks: &self.clocks,
            clock,
            wide: &self.wide,
            t,
            me,
            now,
        };
        let (first, count) = history_units(a, self.granularity);
        let (page, off) = PagedShadow::<UnitPage>::split(first);
        let n = count as usize;
        if off + n <= PAGE_SIZE as usize {
            // Common case: the access lies in one page.
            ctx.visit::<WORK>(
                a.kind,
                self.shadow.page_mut(page),
                off..off + n,
                &mut self.reads,
                &mut self.races,
                &mut self.work,
            );
        } else {
            for (page, off, n) in page_chunks(first, u64::from(count)) {
                ctx.visit::<WORK>(
                    a.kind,
                    self.shadow.page_mut(page),
                    off..off + n,
                    &mut self.reads,
                    &mut self.races,
                    &mut self.work,
                );
            }
        }
        self.races.finish(key, now, a)
    }

    /// Number of 4 KiB shadow pages allocated.
    pub fn shadow_pages(&self) -> usize {
        self.shadow.pages()
    }

    /// Empties one cell, freeing its read vector clock.
    fn clear_cell(reads: &mut ReadClocks, cell: &mut Cell) {
        if cell.is_shared() {
            reads.release(cell.r_clock);
        }
        *cell = EMPTY;
    }

    fn apply_history_op(&mut self, op: HistoryOp) {
        match op {
            HistoryOp::Clear { addr, len } => {
                for (page, off, n) in page_chunks(addr, len) {
                    if let Some(page) = self.shadow.existing_page_mut(page) {
                        let mut at = off;
                        while at < off + n {
                            let base = at / GRANULE * GRANULE;
                            let hi = (off + n - base).min(GRANULE);
                            page.clear(at / GRANULE, at - base, hi, &mut self.reads);
                            at = base + hi;
                        }
                    }
                }
            }
            HistoryOp::Copy { src, dst, len } => {
                // Snapshot (with private read clocks) before touching dst:
                // the regions may overlap.
                let mut copied = Vec::with_capacity(len as usize);
                for (page, off, n) in page_chunks(src, len) {
                    match self.shadow.existing_page_mut(page) {
                        Some(page) => copied.extend((off..off + n).map(|i| page.byte(i))),
                        None => copied.resize(copied.len() + n, EMPTY),
                    }
                }
                for cell in &mut copied {
                    *cell = self.reads.duplicate(*cell);
                }
                let mut from = copied.into_iter();
                for (page, off, n) in page_chunks(dst, len) {
                    let all_empty = from.as_slice().iter().take(n).all(|c| *c == EMPTY);
                    let page = if all_empty {
                        // Do not allocate a page just to store empty cells.
                        match self.shadow.existing_page_mut(page) {
                            Some(page) => page,
                            None => {
                                from.by_ref().take(n).for_each(drop);
                                continue;
                            }
                        }
                    } else {
                        self.shadow.page_mut(page)
                    };
                    for (i, new) in (off..off + n).zip(from.by_ref()) {
                        page.set_byte(i, new, &mut self.reads);
                    }
                }
            }
        }
    }
}

impl Detector for FastTrack {
    fn accepts_floors(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "fasttrack"
    }

    fn history(&self, addr: u64) -> Option<Vec<crate::detector::Remembered>> {
        use crate::detector::Remembered;
        let (page, off) = PagedShadow::<UnitPage>::split(addr);
        let mut v = Vec::new();
        let Some(c) = self
            .shadow
            .existing_page(page)
            .and_then(|p| p.history_of(off / GRANULE, off % GRANULE))
        else {
            return Some(v);
        };
        let mut add = |t: ThreadIdx, clock: u64, pc: u64, write: bool| {
            if t != NONE && t != SHARED {
                v.push(Remembered {
                    thread: self.clocks.key(t),
                    clock,
                    pc,
                    write,
                });
            }
        };
        if c.w != 0 {
            add(self.wide.tid(c.w), c.w_clock, self.wide.pc(c.w), true);
        }
        if c.is_shared() {
            for e in self.reads.get(c.r_clock) {
                add(self.wide.tid(e.who), e.clock, self.wide.pc(e.who), false);
            }
        } else if c.r != 0 {
            add(self.wide.tid(c.r), c.r_clock, self.wide.pc(c.r), false);
        }
        Some(v)
    }

    #[inline]
    fn access(&mut self, a: &Access) -> Option<Race> {
        if self.track_work {
            self.work = FtWork::default();
        }
        if !lard::is_checked(a) {
            return None;
        }
        let key = lard::identity(&a.origin);
        let t = self.clocks.identity(key);
        self.check(t, key, a)
    }

    /// Byte granularity only: a coarser history unit is shared by accesses
    /// to different granules. (Module docs: a repeated read re-stores its
    /// own epoch and PC, a repeated write its own write epoch, PC and no
    /// reads; the units are already split or merged as the access needs.)
    fn repeats_in_epoch_are_noops(&self) -> bool {
        self.granularity == Granularity::Byte
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
