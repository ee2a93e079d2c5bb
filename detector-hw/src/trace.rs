//! Seeded random multithreaded traces for differential tests, the hardware
//! model and benchmarks.
//!
//! [`random_trace`] plays a small language runtime: several language threads
//! multiplexed on fewer kernel threads (Thread ops), lock acquire/release
//! expressed through ReadVC/WriteVC sequences ([`SyncModel`]), tracked and
//! untracked accesses of sizes 1/2/4/8/16 at random alignments in a small
//! address range (so that accesses conflict), ClearHistory/CopyHistory inside
//! one 4 KiB page, and ignored low-level synchronization and context
//! switches. The same seed and parameters always give the same trace.
//!
//! # Trace files
//!
//! Recorded event streams (`lard run --record-trace FILE`, or
//! [`write_trace`]) use a compact little-endian binary format, written by
//! [`TraceWriter`] and read back, streaming, by [`TraceReader`]:
//!
//! * header: the 8 bytes [`TRACE_MAGIC`] (`"LARDTRC\0"`), then the format
//!   version [`TRACE_VERSION`] (2) as a `u32` (version 1 files, which
//!   have no program events, read the same);
//! * one record per event: a tag byte, then fixed-width little-endian
//!   fields. Tag bits 0–1 give the event kind (0 access, 1 LARDx86 op,
//!   2 low-level sync, 3 other), bit 2 says that the origin has a language
//!   thread, bits 3–7 are the kind's sub-tag. Every record continues with
//!   `pc: u64, kthread: u32, core: u16` and, if bit 2 is set,
//!   `lthread: u64`. Then:
//!   * access: the sub-tag bits are `write`, `tracked`, `stack`, "own pc"
//!     and "own origin"; fields `addr: u64, size: u32`, then the access's
//!     pc (`u64`) and origin (`kthread: u32, core: u16, has_lthread: u8,
//!     [lthread: u64]`) only if they differ from the event's (the emulator
//!     reports them equal, so they are normally omitted);
//!   * LARDx86 op, sub-tag 0 `Thread {id}`, 1 `ReadVc {tid, value}`,
//!     2 `WriteVc {tid, value}`, 3 `ClearHistory {addr, len}`,
//!     4 `CopyHistory {src, dst, len}` (all `u64`);
//!   * sync, sub-tag 0 `AtomicRmw {addr: u64, size: u32}`,
//!     1 `FutexWake {addr: u64}`, 2 `FutexWaitDone {addr: u64}`,
//!     3 `ThreadCreate {child: u32}`, 4 `ThreadExit`,
//!     5 `ThreadJoin {child: u32}`;
//!   * other, sub-tag 0: `ContextSwitch` (no fields); sub-tags 1–7 are
//!     program events (version 2): 1 `Alloc {addr: u64, size: u64,
//!     site: u64, kind: u8}` (kind 0 heap, 1 static), 2 `Free {addr: u64}`,
//!     3 `Acquire {lock: u64, mode: u8}` (mode 0 exclusive, 1 shared),
//!     4 `Release {lock: u64}`, 5 `ThreadExit`, 6 `Block`, 7 `Wake`.
//! * the end record: tag byte `0xFB` (kind 3, sub-tag 31) and the number of
//!   events as a `u64`, then end of input.
//!
//! An access record is 27 bytes (35 with a language thread). Reading never
//! panics: a file without its end record (a writer that was not
//! [`finish`](TraceWriter::finish)ed, a cut file) yields its complete
//! events and then [`TraceError::Truncated`]; a record that does not parse,
//! a wrong event count or bytes after the end record give
//! [`TraceError::Corrupt`]; a foreign file gives [`TraceError::BadMagic`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{self, Read, Write};

use crate::clock::INITIAL_OWN_CLOCK;
use crate::event::{
    Access, AccessKind, Event, EventKind, KernelThreadId, LangThreadId, LardOp, LockMode,
    LowLevelSync, ObjectKind, Origin, ProgramEvent,
};
pub use crate::rng::SplitMix64;

/// The runtime side of lock synchronization through LARDx86 vector-clock
/// instructions: it owns the architectural clock values of language threads
/// and locks and emits the ReadVC/WriteVC sequences a runtime would execute.
///
/// * acquire: join the lock's clock into the thread's clock, entry by entry
///   (ReadVC each entry the lock knows, WriteVC those that grow);
/// * release: the lock's clock becomes the thread's clock (ReadVC of every
///   entry), then the thread's own entry is incremented (WriteVC).
///
/// Language threads start with own entry [`INITIAL_OWN_CLOCK`], like the
/// detector's clocks. Only language threads can synchronise this way (WriteVC
/// names language-thread entries only), so both operations emit nothing for
/// an origin without a language thread.
#[derive(Clone, Debug, Default)]
pub struct SyncModel {
    threads: BTreeMap<LangThreadId, BTreeMap<LangThreadId, u64>>,
    locks: BTreeMap<u64, BTreeMap<LangThreadId, u64>>,
}

impl SyncModel {
    /// No threads, no locks.
    pub fn new() -> SyncModel {
        SyncModel::default()
    }

    fn clock_mut(&mut self, t: LangThreadId) -> &mut BTreeMap<LangThreadId, u64> {
        self.threads
            .entry(t)
            .or_insert_with(|| BTreeMap::from([(t, INITIAL_OWN_CLOCK)]))
    }

    /// Entry `entry` of language thread `t`'s clock.
    pub fn entry(&self, t: LangThreadId, entry: LangThreadId) -> u64 {
        match self.threads.get(&t) {
            Some(c) => c.get(&entry).copied().unwrap_or(0),
            None if t == entry => INITIAL_OWN_CLOCK,
            None => 0,
        }
    }

    /// The events of `origin`'s language thread acquiring `lock` at `pc`.
    pub fn acquire(&mut self, origin: Origin, lock: u64, pc: u64) -> Vec<Event> {
        let Some(t) = origin.lthread else {
            return Vec::new();
        };
        let lock_clock = self.locks.get(&lock).cloned().unwrap_or_default();
        let clock = self.clock_mut(t);
        let mut events = Vec::new();
        let mut op = |op: LardOp| events.push(lard_event(origin, pc, op));
        for (&tid, &value) in &lock_clock {
            let mine = clock.get(&tid).copied().unwrap_or(0);
            op(LardOp::ReadVc { tid, value: mine });
            if value > mine {
                op(LardOp::WriteVc { tid, value });
                clock.insert(tid, value);
            }
        }
        events
    }

    /// The events of `origin`'s language thread releasing `lock` at `pc`.
    pub fn release(&mut self, origin: Origin, lock: u64, pc: u64) -> Vec<Event> {
        let Some(t) = origin.lthread else {
            return Vec::new();
        };
        let clock = self.clock_mut(t);
        let mut events: Vec<Event> = clock
            .iter()
            .map(|(&tid, &value)| lard_event(origin, pc, LardOp::ReadVc { tid, value }))
            .collect();
        let snapshot = clock.clone();
        let own = clock.entry(t).or_insert(INITIAL_OWN_CLOCK);
        *own = own.saturating_add(1);
        let value = *own;
        events.push(lard_event(origin, pc, LardOp::WriteVc { tid: t, value }));
        self.locks.insert(lock, snapshot);
        events
    }
}

fn lard_event(origin: Origin, pc: u64, op: LardOp) -> Event {
    Event {
        pc,
        origin,
        kind: EventKind::Lard(op),
    }
}

/// Parameters of [`random_trace`]. Percentages are per generated step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceParams {
    /// Number of events to generate (the trace has exactly this many).
    pub events: usize,
    /// Kernel threads (at least 1).
    pub kernel_threads: u32,
    /// Language threads (at least `kernel_threads`, so a switch always finds
    /// an idle one); ids are `100, 101, ...`.
    pub lang_threads: u32,
    /// Locks; a thread holding lock `l` mostly accesses `l`'s part of the
    /// address range, so that lock-protected accesses are race-free.
    pub locks: u32,
    /// First byte of the accessed address range.
    pub base: u64,
    /// Length of the accessed address range.
    pub span: u64,
    /// Percentage of accesses aligned to their size.
    pub aligned_percent: u32,
    /// Percentage of accesses that are tracked.
    pub tracked_percent: u32,
    /// Percentage of accesses that are writes.
    pub write_percent: u32,
    /// Percentage of steps that acquire or release a lock.
    pub lock_percent: u32,
    /// Percentage of steps that switch a kernel thread to another language
    /// thread (Thread op).
    pub switch_percent: u32,
    /// Percentage of steps that issue ClearHistory.
    pub clear_percent: u32,
    /// Percentage of steps that issue CopyHistory.
    pub copy_percent: u32,
    /// Percentage of steps that emit ignored events (low-level sync,
    /// context switch).
    pub noise_percent: u32,
    /// Percentage of accesses made by a kernel thread before it declares a
    /// language thread (kernel identities never synchronise).
    pub kernel_identity_percent: u32,
    /// Type-safe mode: every address belongs to one item of fixed size and
    /// alignment, always accessed whole, and histories are cleared/copied in
    /// whole 32-byte blocks, so [`crate::Granularity::TypeSafe`] is exact.
    pub type_safe: bool,
}

impl Default for TraceParams {
    fn default() -> Self {
        TraceParams {
            events: 10_000,
            kernel_threads: 3,
            lang_threads: 5,
            locks: 3,
            // Straddles a page boundary so accesses and shadow lookups cross pages.
            base: 0x10_0000 - 256,
            span: 512,
            aligned_percent: 70,
            tracked_percent: 90,
            write_percent: 45,
            lock_percent: 10,
            switch_percent: 3,
            clear_percent: 1,
            copy_percent: 1,
            noise_percent: 1,
            kernel_identity_percent: 30,
            type_safe: false,
        }
    }
}

/// Access sizes the generator uses.
pub const ACCESS_SIZES: [u32; 5] = [1, 2, 4, 8, 16];

/// Item layouts of a 16-byte block in type-safe mode: `(offset, size)`.
/// Even blocks use the first layout, odd blocks the second.
const TYPE_SAFE_LAYOUTS: [&[(u64, u32)]; 2] =
    [&[(0, 8), (8, 4), (12, 2), (14, 1), (15, 1)], &[(0, 16)]];

const PAGE: u64 = 4096;
const LANG_BASE: LangThreadId = 100;
const PC_BASE: u64 = 0x40_0000;
const PC_SITES: u64 = 24;

/// The generator's state: the runtime's view of threads and locks.
struct Generator<'p> {
    p: &'p TraceParams,
    rng: SplitMix64,
    sync: SyncModel,
    /// Language thread last declared on each kernel thread.
    running: Vec<Option<LangThreadId>>,
    /// Lock → holding language thread.
    holder: BTreeMap<u64, LangThreadId>,
    /// Language thread → locks it holds.
    held: BTreeMap<LangThreadId, BTreeSet<u64>>,
    events: Vec<Event>,
}

/// A random trace of exactly `params.events` events; see the module docs.
pub fn random_trace(seed: u64, params: &TraceParams) -> Vec<Event> {
    let kernel_threads = params.kernel_threads.max(1);
    let mut g = Generator {
        p: params,
        rng: SplitMix64::new(seed),
        sync: SyncModel::new(),
        running: vec![None; kernel_threads as usize],
        holder: BTreeMap::new(),
        held: BTreeMap::new(),
        events: Vec::with_capacity(params.events.saturating_add(64)),
    };
    while g.events.len() < params.events {
        g.step();
    }
    g.events.truncate(params.events);
    g.events
}

impl Generator<'_> {
    fn pc(&mut self) -> u64 {
        PC_BASE + 4 * self.rng.below(PC_SITES)
    }

    fn push(&mut self, origin: Origin, pc: u64, kind: EventKind) {
        self.events.push(Event { pc, origin, kind });
    }

    fn step(&mut self) {
        let k = self.rng.below(self.running.len() as u64) as usize;
        let origin = Origin {
            kthread: k as KernelThreadId,
            lthread: self.running[k],
            core: k as u16,
        };
        let roll = self.rng.below(100) as u32;
        let p = self.p;
        let mut threshold = p.switch_percent;
        let needs_thread = origin.lthread.is_none() && !self.rng.percent(p.kernel_identity_percent);
        if roll < threshold || needs_thread {
            return self.switch(k, origin);
        }
        threshold += p.lock_percent;
        if roll < threshold {
            return self.lock_op(origin);
        }
        threshold += p.clear_percent;
        if roll < threshold {
            return self.clear(origin);
        }
        threshold += p.copy_percent;
        if roll < threshold {
            return self.copy(origin);
        }
        threshold += p.noise_percent;
        if roll < threshold {
            return self.noise(origin);
        }
        self.access(origin);
    }

    /// Thread op: kernel thread `k` now runs an idle language thread.
    fn switch(&mut self, k: usize, origin: Origin) {
        let lang_threads = u64::from(self.p.lang_threads.max(self.running.len() as u32));
        let idle: Vec<LangThreadId> = (0..lang_threads)
            .map(|i| LANG_BASE + i)
            .filter(|l| !self.running.contains(&Some(*l)))
            .collect();
        let Some(next) = self.rng.pick(&idle) else {
            return;
        };
        self.running[k] = Some(next);
        let origin = Origin {
            lthread: Some(next),
            ..origin
        };
        let pc = self.pc();
        self.push(origin, pc, EventKind::Lard(LardOp::Thread { id: next }));
    }

    fn lock_op(&mut self, origin: Origin) {
        let Some(t) = origin.lthread else {
            return;
        };
        let held: Vec<u64> = self
            .held
            .get(&t)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        let pc = self.pc();
        if !held.is_empty() && (held.len() >= 2 || self.rng.percent(50)) {
            let lock = self.rng.pick(&held).unwrap_or(0);
            self.holder.remove(&lock);
            if let Some(s) = self.held.get_mut(&t) {
                s.remove(&lock);
            }
            let events = self.sync.release(origin, lock, pc);
            self.events.extend(events);
        } else {
            let lock = self.rng.below(u64::from(self.p.locks.max(1)));
            if self.holder.contains_key(&lock) {
                return; // Held by someone: this thread would block.
            }
            self.holder.insert(lock, t);
            self.held.entry(t).or_default().insert(lock);
            let events = self.sync.acquire(origin, lock, pc);
            self.events.extend(events);
        }
    }

    /// A random address, biased to the region of a lock `origin` holds.
    fn address(&mut self, origin: Origin) -> u64 {
        let span = self.p.span.max(1);
        let locks = u64::from(self.p.locks.max(1));
        let held = origin
            .lthread
            .and_then(|t| self.held.get(&t))
            .map(|s| s.iter().copied().collect::<Vec<u64>>())
            .unwrap_or_default();
        let region = span / (locks + 1);
        match self.rng.pick(&held) {
            Some(lock) if region > 0 && self.rng.percent(80) => {
                self.p.base + lock * region + self.rng.below(region)
            }
            _ => self.p.base + self.rng.below(span),
        }
    }

    fn access(&mut self, origin: Origin) {
        let mut addr = self.address(origin);
        let size;
        if self.p.type_safe {
            let block = addr & !15;
            let layout = TYPE_SAFE_LAYOUTS[((block >> 4) & 1) as usize];
            let off = addr & 15;
            let (item_off, item_size) = layout
                .iter()
                .copied()
                .rfind(|(o, _)| *o <= off)
                .unwrap_or((0, 1));
            addr = block + item_off;
            size = item_size;
        } else {
            size = self.rng.pick(&ACCESS_SIZES).unwrap_or(1);
            if self.rng.percent(self.p.aligned_percent) {
                addr &= !(u64::from(size) - 1);
            }
        }
        let kind = if self.rng.percent(self.p.write_percent) {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let pc = self.pc();
        let access = Access {
            pc,
            addr,
            size,
            kind,
            tracked: self.rng.percent(self.p.tracked_percent),
            stack: false,
            origin,
        };
        self.push(origin, pc, EventKind::Access(access));
    }

    /// A region start and length inside one page (type-safe: whole blocks).
    fn region(&mut self, origin: Origin) -> (u64, u64) {
        let addr = self.address(origin);
        if self.p.type_safe {
            let len = 32 * (1 + self.rng.below(2));
            let start = addr & !31;
            let room = PAGE - start % PAGE;
            return (start, len.min(room));
        }
        let len = match self.rng.below(50) {
            0 => 0,
            1 => PAGE,
            _ => 1 + self.rng.below(48),
        };
        let room = PAGE - addr % PAGE;
        (addr, len.min(room))
    }

    fn clear(&mut self, origin: Origin) {
        let (addr, len) = self.region(origin);
        let pc = self.pc();
        self.push(
            origin,
            pc,
            EventKind::Lard(LardOp::ClearHistory { addr, len }),
        );
    }

    fn copy(&mut self, origin: Origin) {
        let (src, len) = self.region(origin);
        let (mut dst, _) = self.region(origin);
        if self.p.type_safe {
            // Same block parity, so item layouts line up.
            dst = (dst & !31) | (src & 16);
        }
        let len = len.min(PAGE - dst % PAGE);
        let pc = self.pc();
        self.push(
            origin,
            pc,
            EventKind::Lard(LardOp::CopyHistory { src, dst, len }),
        );
    }

    fn noise(&mut self, origin: Origin) {
        let pc = self.pc();
        let kind = match self.rng.below(3) {
            0 => EventKind::ContextSwitch,
            1 => EventKind::Sync(LowLevelSync::AtomicRmw {
                addr: self.p.base,
                size: 4,
            }),
            _ => EventKind::Sync(LowLevelSync::FutexWake { addr: self.p.base }),
        };
        self.push(origin, pc, kind);
    }
}

/// The first 8 bytes of a trace file.
pub const TRACE_MAGIC: [u8; 8] = *b"LARDTRC\0";

/// The trace format version this crate writes and reads.
pub const TRACE_VERSION: u32 = 2;

const KIND_ACCESS: u8 = 0;
const KIND_LARD: u8 = 1;
const KIND_SYNC: u8 = 2;
const KIND_OTHER: u8 = 3;
const TAG_LTHREAD: u8 = 1 << 2;
const SUB_SHIFT: u32 = 3;
const SUB_END: u8 = 31;
/// The tag byte of the end record.
const TAG_END: u8 = KIND_OTHER | (SUB_END << SUB_SHIFT);
const ACC_WRITE: u8 = 1;
const ACC_TRACKED: u8 = 2;
const ACC_STACK: u8 = 4;
const ACC_OWN_PC: u8 = 8;
const ACC_OWN_ORIGIN: u8 = 16;
/// Bytes of the header: magic and version.
const HEADER: usize = 12;
/// Largest record: an access with its own pc and origin, both with a
/// language thread (tag, common fields, addr/size, pc, origin).
const MAX_RECORD: usize = 1 + 22 + 12 + 8 + 15;
/// Bytes the writer buffers before writing to its sink.
const WRITE_BUFFER: usize = 64 << 10;
/// Bytes the reader buffers.
const READ_BUFFER: usize = 64 << 10;

/// Why a trace could not be read.
#[derive(Debug)]
pub enum TraceError {
    /// The underlying reader failed.
    Io(io::Error),
    /// The input does not start with [`TRACE_MAGIC`].
    BadMagic,
    /// The format version is not [`TRACE_VERSION`].
    UnsupportedVersion(u32),
    /// The input ended inside the header or a record, or before the end
    /// record.
    Truncated {
        /// Bytes read (the length of the input).
        offset: u64,
    },
    /// A record does not parse, or the end record is wrong.
    Corrupt {
        /// Offset of the offending record.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "trace I/O error: {e}"),
            TraceError::BadMagic => write!(f, "not a LARD trace (bad magic)"),
            TraceError::UnsupportedVersion(v) => write!(
                f,
                "unsupported trace version {v} (this reader supports {TRACE_VERSION})"
            ),
            TraceError::Truncated { offset } => {
                write!(f, "trace truncated after {offset} bytes")
            }
            TraceError::Corrupt { offset, reason } => {
                write!(f, "corrupt trace at byte {offset}: {reason}")
            }
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TraceError {
    fn from(e: io::Error) -> TraceError {
        TraceError::Io(e)
    }
}

/// Appends the encoding of `e` (at most [`MAX_RECORD`] bytes) to `out`.
fn encode(e: &Event, out: &mut Vec<u8>) {
    let (kind, sub) = match &e.kind {
        EventKind::Access(a) => {
            let mut f = 0;
            if a.kind == AccessKind::Write {
                f |= ACC_WRITE;
            }
            if a.tracked {
                f |= ACC_TRACKED;
            }
            if a.stack {
                f |= ACC_STACK;
            }
            if a.pc != e.pc {
                f |= ACC_OWN_PC;
            }
            if a.origin != e.origin {
                f |= ACC_OWN_ORIGIN;
            }
            (KIND_ACCESS, f)
        }
        EventKind::Lard(op) => (
            KIND_LARD,
            match op {
                LardOp::Thread { .. } => 0,
                LardOp::ReadVc { .. } => 1,
                LardOp::WriteVc { .. } => 2,
                LardOp::ClearHistory { .. } => 3,
                LardOp::CopyHistory { .. } => 4,
                LardOp::FloorVc { .. } => 5,
            },
        ),
        EventKind::Sync(s) => (
            KIND_SYNC,
            match s {
                LowLevelSync::AtomicRmw { .. } => 0,
                LowLevelSync::FutexWake { .. } => 1,
                LowLevelSync::FutexWaitDone { .. } => 2,
                LowLevelSync::ThreadCreate { .. } => 3,
                LowLevelSync::ThreadExit => 4,
                LowLevelSync::ThreadJoin { .. } => 5,
            },
        ),
        EventKind::ContextSwitch => (KIND_OTHER, 0),
        EventKind::Program(p) => (
            KIND_OTHER,
            match p {
                ProgramEvent::Alloc { .. } => 1,
                ProgramEvent::Free { .. } => 2,
                ProgramEvent::Acquire { .. } => 3,
                ProgramEvent::Release { .. } => 4,
                ProgramEvent::ThreadExit => 5,
                ProgramEvent::Block => 6,
                ProgramEvent::Wake => 7,
            },
        ),
    };
    let lt = if e.origin.lthread.is_some() {
        TAG_LTHREAD
    } else {
        0
    };
    out.push(kind | lt | (sub << SUB_SHIFT));
    out.extend_from_slice(&e.pc.to_le_bytes());
    out.extend_from_slice(&e.origin.kthread.to_le_bytes());
    out.extend_from_slice(&e.origin.core.to_le_bytes());
    if let Some(l) = e.origin.lthread {
        out.extend_from_slice(&l.to_le_bytes());
    }
    let mut u64s = |vs: &[u64]| {
        for v in vs {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    match &e.kind {
        EventKind::Access(a) => {
            u64s(&[a.addr]);
            out.extend_from_slice(&a.size.to_le_bytes());
            if a.pc != e.pc {
                out.extend_from_slice(&a.pc.to_le_bytes());
            }
            if a.origin != e.origin {
                out.extend_from_slice(&a.origin.kthread.to_le_bytes());
                out.extend_from_slice(&a.origin.core.to_le_bytes());
                match a.origin.lthread {
                    Some(l) => {
                        out.push(1);
                        out.extend_from_slice(&l.to_le_bytes());
                    }
                    None => out.push(0),
                }
            }
        }
        EventKind::Lard(op) => match *op {
            LardOp::Thread { id } => u64s(&[id]),
            LardOp::ReadVc { tid, value }
            | LardOp::WriteVc { tid, value }
            | LardOp::FloorVc { tid, value } => u64s(&[tid, value]),
            LardOp::ClearHistory { addr, len } => u64s(&[addr, len]),
            LardOp::CopyHistory { src, dst, len } => u64s(&[src, dst, len]),
        },
        EventKind::Sync(s) => match *s {
            LowLevelSync::AtomicRmw { addr, size } => {
                u64s(&[addr]);
                out.extend_from_slice(&size.to_le_bytes());
            }
            LowLevelSync::FutexWake { addr } | LowLevelSync::FutexWaitDone { addr } => {
                u64s(&[addr])
            }
            LowLevelSync::ThreadCreate { child } | LowLevelSync::ThreadJoin { child } => {
                out.extend_from_slice(&child.to_le_bytes())
            }
            LowLevelSync::ThreadExit => {}
        },
        EventKind::ContextSwitch => {}
        EventKind::Program(p) => match *p {
            ProgramEvent::Alloc {
                addr,
                size,
                site,
                kind,
            } => {
                u64s(&[addr, size, site]);
                out.push(match kind {
                    ObjectKind::Heap => 0,
                    ObjectKind::Static => 1,
                });
            }
            ProgramEvent::Free { addr } | ProgramEvent::Release { lock: addr } => u64s(&[addr]),
            ProgramEvent::Acquire { lock, mode } => {
                u64s(&[lock]);
                out.push(match mode {
                    LockMode::Exclusive => 0,
                    LockMode::Shared => 1,
                });
            }
            ProgramEvent::ThreadExit | ProgramEvent::Block | ProgramEvent::Wake => {}
        },
    }
}

/// Streams events into a trace file (see the module docs for the format).
///
/// Records are buffered internally (no `BufWriter` needed) and written to
/// the sink in 64 KiB chunks; [`TraceWriter::finish`] writes the end record
/// and flushes. A writer dropped without `finish` writes nothing more: the
/// file then reads as its complete records followed by
/// [`TraceError::Truncated`].
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    sink: W,
    buf: Vec<u8>,
    events: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace on `sink` (the header goes out with the first chunk).
    pub fn new(sink: W) -> TraceWriter<W> {
        let mut buf = Vec::with_capacity(WRITE_BUFFER + MAX_RECORD);
        buf.extend_from_slice(&TRACE_MAGIC);
        buf.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        TraceWriter {
            sink,
            buf,
            events: 0,
        }
    }

    /// Appends one event.
    #[inline]
    pub fn push(&mut self, e: &Event) -> io::Result<()> {
        encode(e, &mut self.buf);
        self.events += 1;
        if self.buf.len() >= WRITE_BUFFER {
            self.sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Events pushed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Writes the end record, flushes and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.buf.push(TAG_END);
        self.buf.extend_from_slice(&self.events.to_le_bytes());
        self.sink.write_all(&self.buf)?;
        self.buf.clear();
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// Writes `events` as a complete trace file to `w`.
pub fn write_trace(w: &mut impl Write, events: &[Event]) -> io::Result<()> {
    let mut tw = TraceWriter::new(w);
    for e in events {
        tw.push(e)?;
    }
    tw.finish()?;
    Ok(())
}

/// Reads a whole trace into memory.
pub fn read_trace(r: impl Read) -> Result<Vec<Event>, TraceError> {
    TraceReader::new(r)?.collect()
}

/// A bounds-checked little-endian cursor over one record.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    #[inline]
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.i..self.i + N)?;
        self.i += N;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Some(out)
    }
    #[inline]
    fn u8(&mut self) -> Option<u8> {
        self.bytes::<1>().map(|b| b[0])
    }
    #[inline]
    fn u16(&mut self) -> Option<u16> {
        self.bytes().map(u16::from_le_bytes)
    }
    #[inline]
    fn u32(&mut self) -> Option<u32> {
        self.bytes().map(u32::from_le_bytes)
    }
    #[inline]
    fn u64(&mut self) -> Option<u64> {
        self.bytes().map(u64::from_le_bytes)
    }
}

/// Why one record did not decode.
enum Bad {
    /// The input ended inside it.
    Short,
    /// It is malformed.
    Corrupt(&'static str),
}

/// What one record holds.
enum Record {
    Event(Event),
    End(u64),
}

/// Decodes one record from the start of `b`; returns it and its length.
fn decode(b: &[u8]) -> Result<(Record, usize), Bad> {
    let mut c = Cursor { b, i: 0 };
    let short = || Bad::Short;
    let tag = c.u8().ok_or_else(short)?;
    if tag == TAG_END {
        let n = c.u64().ok_or_else(short)?;
        return Ok((Record::End(n), c.i));
    }
    let kind = tag & 3;
    let sub = tag >> SUB_SHIFT;
    let pc = c.u64().ok_or_else(short)?;
    let kthread = c.u32().ok_or_else(short)?;
    let core = c.u16().ok_or_else(short)?;
    let lthread = if tag & TAG_LTHREAD != 0 {
        Some(c.u64().ok_or_else(short)?)
    } else {
        None
    };
    let origin = Origin {
        kthread,
        lthread,
        core,
    };
    let kind = match kind {
        KIND_ACCESS => {
            let addr = c.u64().ok_or_else(short)?;
            let size = c.u32().ok_or_else(short)?;
            let apc = if sub & ACC_OWN_PC != 0 {
                c.u64().ok_or_else(short)?
            } else {
                pc
            };
            let aorigin = if sub & ACC_OWN_ORIGIN != 0 {
                let kthread = c.u32().ok_or_else(short)?;
                let core = c.u16().ok_or_else(short)?;
                let lthread = match c.u8().ok_or_else(short)? {
                    0 => None,
                    1 => Some(c.u64().ok_or_else(short)?),
                    _ => return Err(Bad::Corrupt("bad language-thread flag")),
                };
                Origin {
                    kthread,
                    lthread,
                    core,
                }
            } else {
                origin
            };
            EventKind::Access(Access {
                pc: apc,
                addr,
                size,
                kind: if sub & ACC_WRITE != 0 {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                },
                tracked: sub & ACC_TRACKED != 0,
                stack: sub & ACC_STACK != 0,
                origin: aorigin,
            })
        }
        KIND_LARD => {
            let op = match sub {
                0 => LardOp::Thread {
                    id: c.u64().ok_or_else(short)?,
                },
                1 | 2 => {
                    let tid = c.u64().ok_or_else(short)?;
                    let value = c.u64().ok_or_else(short)?;
                    if sub == 1 {
                        LardOp::ReadVc { tid, value }
                    } else {
                        LardOp::WriteVc { tid, value }
                    }
                }
                3 => LardOp::ClearHistory {
                    addr: c.u64().ok_or_else(short)?,
                    len: c.u64().ok_or_else(short)?,
                },
                4 => LardOp::CopyHistory {
                    src: c.u64().ok_or_else(short)?,
                    dst: c.u64().ok_or_else(short)?,
                    len: c.u64().ok_or_else(short)?,
                },
                5 => LardOp::FloorVc {
                    tid: c.u64().ok_or_else(short)?,
                    value: c.u64().ok_or_else(short)?,
                },
                _ => return Err(Bad::Corrupt("unknown LARDx86 op")),
            };
            EventKind::Lard(op)
        }
        KIND_SYNC => {
            let s = match sub {
                0 => LowLevelSync::AtomicRmw {
                    addr: c.u64().ok_or_else(short)?,
                    size: c.u32().ok_or_else(short)?,
                },
                1 => LowLevelSync::FutexWake {
                    addr: c.u64().ok_or_else(short)?,
                },
                2 => LowLevelSync::FutexWaitDone {
                    addr: c.u64().ok_or_else(short)?,
                },
                3 => LowLevelSync::ThreadCreate {
                    child: c.u32().ok_or_else(short)?,
                },
                4 => LowLevelSync::ThreadExit,
                5 => LowLevelSync::ThreadJoin {
                    child: c.u32().ok_or_else(short)?,
                },
                _ => return Err(Bad::Corrupt("unknown low-level sync")),
            };
            EventKind::Sync(s)
        }
        _ => match sub {
            0 => EventKind::ContextSwitch,
            1 => {
                let addr = c.u64().ok_or_else(short)?;
                let size = c.u64().ok_or_else(short)?;
                let site = c.u64().ok_or_else(short)?;
                let kind = match c.u8().ok_or_else(short)? {
                    0 => ObjectKind::Heap,
                    1 => ObjectKind::Static,
                    _ => return Err(Bad::Corrupt("bad object kind")),
                };
                EventKind::Program(ProgramEvent::Alloc {
                    addr,
                    size,
                    site,
                    kind,
                })
            }
            2 => EventKind::Program(ProgramEvent::Free {
                addr: c.u64().ok_or_else(short)?,
            }),
            3 => {
                let lock = c.u64().ok_or_else(short)?;
                let mode = match c.u8().ok_or_else(short)? {
                    0 => LockMode::Exclusive,
                    1 => LockMode::Shared,
                    _ => return Err(Bad::Corrupt("bad lock mode")),
                };
                EventKind::Program(ProgramEvent::Acquire { lock, mode })
            }
            4 => EventKind::Program(ProgramEvent::Release {
                lock: c.u64().ok_or_else(short)?,
            }),
            5 => EventKind::Program(ProgramEvent::ThreadExit),
            6 => EventKind::Program(ProgramEvent::Block),
            7 => EventKind::Program(ProgramEvent::Wake),
            _ => return Err(Bad::Corrupt("unknown record tag")),
        },
    };
    Ok((Record::Event(Event { pc, origin, kind }), c.i))
}

/// Reads a trace file event by event (see the module docs for the format).
///
/// It reads through its own 64 KiB buffer, so a raw `File` is fine. As an
/// iterator it yields `Ok(event)` per event and ends after the end record,
/// or after yielding one `Err`.
#[derive(Debug)]
pub struct TraceReader<R: Read> {
    src: R,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// Input offset of `buf[pos]`.
    offset: u64,
    events: u64,
    done: bool,
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header of the trace on `src`.
    pub fn new(src: R) -> Result<TraceReader<R>, TraceError> {
        let mut r = TraceReader {
            src,
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            pos: 0,
            end: 0,
            offset: 0,
            events: 0,
            done: false,
        };
        r.fill(HEADER)?;
        let got = &r.buf[..r.end.min(HEADER)];
        let magic = &got[..got.len().min(TRACE_MAGIC.len())];
        if magic != &TRACE_MAGIC[..magic.len()] {
            return Err(TraceError::BadMagic);
        }
        if got.len() < HEADER {
            return Err(TraceError::Truncated {
                offset: got.len() as u64,
            });
        }
        let version = u32::from_le_bytes([got[8], got[9], got[10], got[11]]);
        if !(1..=TRACE_VERSION).contains(&version) {
            return Err(TraceError::UnsupportedVersion(version));
        }
        r.pos = HEADER;
        r.offset = HEADER as u64;
        Ok(r)
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Makes at least `n` bytes available in `buf[pos..end]` unless the
    /// input ends first.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < n {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next event, `Ok(None)` after the end record.
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let r = self.next_record();
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        r
    }

    fn next_record(&mut self) -> Result<Option<Event>, TraceError> {
        self.fill(MAX_RECORD)?;
        let avail = &self.buf[self.pos..self.end];
        let at = self.offset;
        match decode(avail) {
            Ok((Record::Event(e), n)) => {
                self.pos += n;
                self.offset += n as u64;
                self.events += 1;
                Ok(Some(e))
            }
            Ok((Record::End(count), n)) => {
                self.pos += n;
                self.offset += n as u64;
                if count != self.events {
                    return Err(TraceError::Corrupt {
                        offset: at,
                        reason: "end record's event count differs",
                    });
                }
                self.fill(1)?;
                if self.end > self.pos {
                    return Err(TraceError::Corrupt {
                        offset: self.offset,
                        reason: "data after the end record",
                    });
                }
                Ok(None)
            }
            Err(Bad::Short) => Err(TraceError::Truncated {
                offset: at + avail.len() as u64,
            }),
            Err(Bad::Corrupt(reason)) => Err(TraceError::Corrupt { offset: at, reason }),
        }
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event kind, with and without a language thread, and accesses
    /// whose pc/origin differ from the event's.
    fn every_kind() -> Vec<Event> {
        let o = Origin {
            kthread: 3,
            lthread: Some(u64::MAX - 1),
            core: 7,
        };
        let k = Origin {
            kthread: u32::MAX,
            lthread: None,
            core: u16::MAX,
        };
        let access = |kind, tracked, stack, pc, origin| {
            EventKind::Access(Access {
                pc,
                addr: 0xdead_beef_0000_0001,
                size: 16,
                kind,
                tracked,
                stack,
                origin,
            })
        };
        let kinds = vec![
            access(AccessKind::Read, true, false, 0x40_0000, o),
            access(AccessKind::Write, false, true, 0x40_0000, o),
            access(AccessKind::Write, true, true, 5, k),
            access(AccessKind::Read, false, false, 0x40_0000, k),
            EventKind::Lard(LardOp::Thread { id: 9 }),
            EventKind::Lard(LardOp::ReadVc { tid: 1, value: 2 }),
            EventKind::Lard(LardOp::WriteVc {
                tid: 3,
                value: u64::MAX,
            }),
            EventKind::Lard(LardOp::ClearHistory { addr: 4, len: 5 }),
            EventKind::Lard(LardOp::CopyHistory {
                src: 6,
                dst: 7,
                len: 8,
            }),
            EventKind::Lard(LardOp::FloorVc { tid: 9, value: 10 }),
            EventKind::Sync(LowLevelSync::AtomicRmw { addr: 1, size: 8 }),
            EventKind::Sync(LowLevelSync::FutexWake { addr: 2 }),
            EventKind::Sync(LowLevelSync::FutexWaitDone { addr: 3 }),
            EventKind::Sync(LowLevelSync::ThreadCreate { child: 4 }),
            EventKind::Sync(LowLevelSync::ThreadExit),
            EventKind::Sync(LowLevelSync::ThreadJoin { child: 5 }),
            EventKind::ContextSwitch,
            EventKind::Program(ProgramEvent::Alloc {
                addr: u64::MAX,
                size: 64,
                site: 0x40_1234,
                kind: ObjectKind::Heap,
            }),
            EventKind::Program(ProgramEvent::Alloc {
                addr: 0x4b_c340,
                size: 8,
                site: 0,
                kind: ObjectKind::Static,
            }),
            EventKind::Program(ProgramEvent::Free { addr: 9 }),
            EventKind::Program(ProgramEvent::Acquire {
                lock: 10,
                mode: LockMode::Exclusive,
            }),
            EventKind::Program(ProgramEvent::Acquire {
                lock: 11,
                mode: LockMode::Shared,
            }),
            EventKind::Program(ProgramEvent::Release { lock: 12 }),
            EventKind::Program(ProgramEvent::ThreadExit),
            EventKind::Program(ProgramEvent::Block),
            EventKind::Program(ProgramEvent::Wake),
        ];
        let mut out = Vec::new();
        for origin in [o, k] {
            for kind in &kinds {
                out.push(Event {
                    pc: 0x40_0000,
                    origin,
                    kind: *kind,
                });
            }
        }
        out
    }

    fn encoded(events: &[Event]) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_trace(&mut bytes, events).unwrap();
        bytes
    }

    #[test]
    fn trace_file_round_trip() {
        let mut events = every_kind();
        events.extend(random_trace(
            3,
            &TraceParams {
                events: 20_000,
                ..TraceParams::default()
            },
        ));
        let bytes = encoded(&events);
        assert_eq!(&bytes[..8], b"LARDTRC\0");
        assert_eq!(read_trace(&bytes[..]).unwrap(), events);
        // Byte-at-a-time input (short reads) and the streaming API.
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match (self.0.split_first(), buf.first_mut()) {
                    (Some((b, rest)), Some(out)) => {
                        *out = *b;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let mut r = TraceReader::new(Dribble(&bytes)).unwrap();
        let mut n = 0;
        while let Some(e) = r.next_event().unwrap() {
            assert_eq!(e, events[n]);
            n += 1;
        }
        assert_eq!(n, events.len());
        assert_eq!(r.events(), n as u64);
        assert!(r.next().is_none());
        // The empty trace.
        assert_eq!(read_trace(&encoded(&[])[..]).unwrap(), vec![]);
        // The writer streams; pushes equal write_trace.
        let mut w = TraceWriter::new(Vec::new());
        for e in &events {
            w.push(e).unwrap();
        }
        assert_eq!(w.events(), events.len() as u64);
        assert_eq!(w.finish().unwrap(), bytes);
    }

    #[test]
    fn truncated_traces_are_errors() {
        let events = every_kind();
        let bytes = encoded(&events);
        for cut in 0..bytes.len() {
            let mut got = 0usize;
            let mut err = None;
            match TraceReader::new(&bytes[..cut]) {
                Err(e) => err = Some(e),
                Ok(r) => {
                    for x in r {
                        match x {
                            Ok(e) => {
                                assert_eq!(e, events[got], "cut {cut}");
                                got += 1;
                            }
                            Err(e) => err = Some(e),
                        }
                    }
                }
            }
            match err {
                Some(TraceError::Truncated { offset }) => assert_eq!(offset, cut as u64),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // A writer dropped without finish: complete events, then Truncated.
        let mut w = TraceWriter::new(Vec::new());
        for e in &events {
            w.push(e).unwrap();
        }
        let unfinished = w.buf.clone();
        let all: Vec<_> = TraceReader::new(&unfinished[..]).unwrap().collect();
        assert_eq!(all.len(), events.len() + 1);
        assert!(matches!(
            all.last(),
            Some(Err(TraceError::Truncated { .. }))
        ));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            TraceReader::new(&b"ELF\x7f not a trace"[..]),
            Err(TraceError::BadMagic)
        ));
        assert!(matches!(
            TraceReader::new(&b"LARX"[..]),
            Err(TraceError::BadMagic)
        ));
        for v in [0, TRACE_VERSION + 1] {
            let mut bad = TRACE_MAGIC.to_vec();
            bad.extend_from_slice(&v.to_le_bytes());
            assert!(matches!(
                TraceReader::new(&bad[..]),
                Err(TraceError::UnsupportedVersion(w)) if w == v
            ));
        }
        let good = encoded(&every_kind());
        // Bytes after the end record, a wrong count, unknown tags.
        let mut extra = good.clone();
        extra.push(0);
        assert!(matches!(
            read_trace(&extra[..]),
            Err(TraceError::Corrupt { .. })
        ));
        let mut count = good.clone();
        let n = count.len();
        count[n - 8] ^= 1;
        assert!(matches!(
            read_trace(&count[..]),
            Err(TraceError::Corrupt { .. })
        ));
        let mut header = TRACE_MAGIC.to_vec();
        header.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        for tag in [
            KIND_LARD | 7 << SUB_SHIFT,
            KIND_SYNC | 6 << SUB_SHIFT,
            KIND_OTHER | 8 << SUB_SHIFT,
        ] {
            let mut bad = header.clone();
            bad.push(tag);
            bad.extend_from_slice(&[0; 64]);
            assert!(
                matches!(read_trace(&bad[..]), Err(TraceError::Corrupt { .. })),
                "tag {tag:#x}"
            );
        }
        // Random bytes after a valid header, and random flips of a valid
        // trace: any result but a panic; every error displays.
        let mut rng = SplitMix64::new(42);
        for round in 0..2_000 {
            let mut input = if round % 2 == 0 {
                let mut v = header.clone();
                let len = rng.below(300) as usize;
                v.extend((0..len).map(|_| rng.next_u64() as u8));
                v
            } else {
                let mut v = good.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(v.len() as u64) as usize;
                    v[i] = rng.next_u64() as u8;
                }
                v
            };
            if round % 7 == 0 {
                input.truncate(rng.below(input.len() as u64 + 1) as usize);
            }
            if let Err(e) = read_trace(&input[..]) {
                assert!(!e.to_string().is_empty());
            }
        }
    }

    #[test]
    fn version_1_files_still_read() {
        // Version 1 had no program events; its records are unchanged.
        let events: Vec<Event> = every_kind()
            .into_iter()
            .filter(|e| !matches!(e.kind, EventKind::Program(_)))
            .collect();
        let mut bytes = encoded(&events);
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(read_trace(&bytes[..]).unwrap(), events);
        bytes[8..12].copy_from_slice(&(TRACE_VERSION + 1).to_le_bytes());
        assert!(matches!(
            read_trace(&bytes[..]),
            Err(TraceError::UnsupportedVersion(_))
        ));
    }

    #[test]
    fn deterministic_and_exact_length() {
        let p = TraceParams {
            events: 5000,
            ..TraceParams::default()
        };
        let a = random_trace(7, &p);
        let b = random_trace(7, &p);
        let c = random_trace(8, &p);
        assert_eq!(a.len(), 5000);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn type_safe_accesses_are_whole_items() {
        let p = TraceParams {
            events: 5000,
            type_safe: true,
            ..TraceParams::default()
        };
        for e in random_trace(1, &p) {
            if let EventKind::Access(a) = e.kind {
                assert_eq!(a.addr % u64::from(a.size), 0, "{a:?}");
            }
        }
    }
}
