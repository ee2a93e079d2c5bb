//! The detector/observer interface: how the emulator delivers events.
//!
//! Events are delivered synchronously, on the emulation thread, *before* the
//! instruction that caused them takes effect (for Tracked accesses and LARD
//! ops) or at the system call (for kernel-visible synchronization), so an
//! observer can stop the guest before a racy access happens.

use lard_detector_hw::event::{AccessKind, Event, EventKind, ProgramEvent};
use lard_isa_ext::OpKind;
use std::collections::BTreeMap;

/// Which memory accesses an observer needs delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AccessMode {
    /// None: no per-access cost at all.
    None,
    /// Tracked accesses only (computed at the Tracked instruction; no memory hook).
    Tracked,
    /// Every data access, tracked or not (a memory hook on all accesses).
    All,
}

/// What the emulator should do after delivering an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Continue,
    /// Stop the guest before the instruction that caused the event executes.
    Stop,
}

/// Receives the event stream of one execution.
pub trait Observer {
    /// Which accesses to deliver.
    fn access_mode(&self) -> AccessMode;
    /// Whether to deliver low-level synchronization (atomics, futexes, clone).
    fn wants_sync(&self) -> bool {
        false
    }
    /// Whether to deliver the object-level facts only an object-based
    /// detector needs: an `Alloc {kind: Static}` per data symbol of the
    /// executable at start, `Block`/`Wake` when a thread blocks in the
    /// kernel and runs again, and `Sync(ThreadExit)` even without
    /// [`Observer::wants_sync`] (docs/events.md). Off by default, so the event
    /// stream of every other detector is unchanged.
    fn wants_objects(&self) -> bool {
        false
    }
    /// One event.
    fn event(&mut self, e: &Event) -> Control;
    /// Called once when the run has ended, however it ended (exit, fault,
    /// deadlock, exception), before any report is read.
    fn finish(&mut self) {}
    /// A hash of the whole event stream so far, if the observer keeps one.
    fn stream_hash(&self) -> Option<u64> {
        None
    }
}

/// Counts events by kind and hashes the whole stream (every field of every
/// event, in order; an access in two words), so two runs can be compared
/// event for event.
#[derive(Clone, Debug)]
pub struct CountingObserver {
    mode: AccessMode,
    sync: bool,
    /// Tracked reads and writes.
    pub tracked: [u64; 2],
    /// Untracked non-stack reads and writes.
    pub untracked: [u64; 2],
    /// Untracked stack reads and writes.
    pub stack: [u64; 2],
    /// LARD ops by kind.
    pub ops: BTreeMap<OpKind, u64>,
    /// Low-level synchronization events.
    pub sync_events: u64,
    /// Context switches.
    pub switches: u64,
    /// Program events (allocations, locks, thread ends).
    pub program_events: u64,
    /// Hash of the stream (a multiply-xorshift chain over words of the events).
    pub hash: u64,
}

impl CountingObserver {
    /// A counter for the given access mode.
    pub fn new(mode: AccessMode, sync: bool) -> Self {
        CountingObserver {
            mode,
            sync,
            tracked: [0; 2],
            untracked: [0; 2],
            stack: [0; 2],
            ops: BTreeMap::new(),
            sync_events: 0,
            switches: 0,
            program_events: 0,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }

    /// Folds one word into the stream hash (a multiply-xorshift step per
    /// word: the per-access path must stay cheap; FNV-1a over bytes cost
    /// ≈20% of an all-access run).
    #[inline]
    fn mix(&mut self, v: u64) {
        let x = (self.hash ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.hash = x ^ (x >> 29);
    }
}

/// The LARDx86 op kind of an event's op.
pub fn op_kind(op: &lard_detector_hw::event::LardOp) -> OpKind {
    use lard_detector_hw::event::LardOp as E;
    match op {
        E::Thread { .. } => OpKind::Thread,
        E::ReadVc { .. } => OpKind::ReadVc,
        E::WriteVc { .. } => OpKind::WriteVc,
        E::ClearHistory { .. } => OpKind::ClearHistory,
        E::CopyHistory { .. } => OpKind::CopyHistory,
    }
}

impl Observer for CountingObserver {
    fn access_mode(&self) -> AccessMode {
        self.mode
    }

    fn wants_sync(&self) -> bool {
        self.sync
    }

    fn event(&mut self, e: &Event) -> Control {
        // Two words per access event (the event's PC and origin, the
        // access's address, size, kind and flags; x86-64 user addresses
        // leave the top bits free for the rotated small fields): the chain
        // through the stream is serial, so each mix costs its latency.
        let thread = u64::from(e.origin.kthread) << 16 | u64::from(e.origin.core);
        let lthread = e.origin.lthread.unwrap_or(u64::MAX);
        self.mix(e.pc ^ thread.rotate_left(47) ^ lthread.rotate_left(23));
        match &e.kind {
            EventKind::Access(a) => {
                let w = usize::from(a.kind == AccessKind::Write);
                if a.tracked {
                    self.tracked[w] += 1;
                } else if a.stack {
                    self.stack[w] += 1;
                } else {
                    self.untracked[w] += 1;
                }
                let small = u64::from(a.size) << 3
                    | u64::from(a.tracked) << 2
                    | u64::from(a.stack) << 1
                    | w as u64;
                self.mix(a.addr ^ small.rotate_left(52));
            }
            EventKind::Lard(op) => {
                *self.ops.entry(op_kind(op)).or_default() += 1;
                self.mix(op_kind(op) as u64);
            }
            EventKind::Sync(_) => {
                self.sync_events += 1;
                self.mix(0x5e);
            }
            EventKind::ContextSwitch => {
                self.switches += 1;
                self.mix(0xc5);
            }
            EventKind::Program(p) => {
                self.program_events += 1;
                self.mix(0x9e);
                let (a, b) = match *p {
                    ProgramEvent::Alloc { addr, size, .. } => (addr, size),
                    ProgramEvent::Free { addr } => (addr, 0),
                    ProgramEvent::Acquire { lock, mode } => (lock, mode as u64),
                    ProgramEvent::Release { lock } => (lock, 2),
                    ProgramEvent::ThreadExit => (3, 0),
                    ProgramEvent::Block => (4, 0),
                    ProgramEvent::Wake => (5, 0),
                };
                self.mix(a);
                self.mix(b);
            }
        }
        Control::Continue
    }

    fn stream_hash(&self) -> Option<u64> {
        Some(self.hash)
    }
}

/// Writes every event it forwards to a trace file (`lard run --record-trace`),
/// in the format of `lard_detector_hw::trace` (replayable without emulation).
pub struct RecordingObserver {
    inner: Box<dyn Observer>,
    writer: Option<lard_detector_hw::trace::TraceWriter<std::fs::File>>,
    failed: bool,
}

impl RecordingObserver {
    /// Records to `file`, forwarding to `inner`.
    pub fn new(inner: Box<dyn Observer>, file: std::fs::File) -> Self {
        RecordingObserver {
            inner,
            writer: Some(lard_detector_hw::trace::TraceWriter::new(file)),
            failed: false,
        }
    }

    fn fail(&mut self, e: &std::io::Error) {
        if !self.failed {
            log::error!("cannot write the event trace: {e}; recording stopped");
        }
        self.failed = true;
        self.writer = None;
    }
}

impl Observer for RecordingObserver {
    fn access_mode(&self) -> AccessMode {
        self.inner.access_mode()
    }

    fn wants_sync(&self) -> bool {
        self.inner.wants_sync()
    }

    fn wants_objects(&self) -> bool {
        self.inner.wants_objects()
    }

    fn event(&mut self, e: &Event) -> Control {
        if let Some(w) = &mut self.writer {
            if let Err(err) = w.push(e) {
                self.fail(&err);
            }
        }
        self.inner.event(e)
    }

    fn finish(&mut self) {
        if let Some(w) = self.writer.take() {
            if let Err(err) = w.finish() {
                self.fail(&err);
            }
        }
        self.inner.finish();
    }

    fn stream_hash(&self) -> Option<u64> {
        self.inner.stream_hash()
    }
}

impl RecordingObserver {
    /// True when every event was written.
    pub fn complete(&self) -> bool {
        !self.failed
    }
}
