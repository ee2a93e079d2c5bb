//! The detector/observer interface: how the emulator delivers events.
//!
//! Events are delivered synchronously, on the emulation thread, *before* the
//! instruction that caused them takes effect (for Tracked accesses and LARD
//! ops) or at the system call (for kernel-visible synchronization), so an
//! observer can stop the guest before a racy access happens.

use crate::cpu::stacks::StackMap;
use crate::observe::stats::AccessTally;
pub use crate::observe::stream_hash::Simd;
use crate::observe::stream_hash::{self, access_term, finish, fold, origin_word, K0, K3};
use lard_detector_hw::event::{
    Access, AccessKind, Event, EventKind, Origin, ProgramEvent, ThreadKey,
};
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
    /// Whether every detector behind the observer applies clock floors
    /// (`Detector::accepts_floors`): binary mode's runtime then raises
    /// them and leaves floored entries out of new clocks. Off by default.
    fn accepts_floors(&self) -> bool {
        false
    }
    /// The epoch clocks of language thread `t`'s accesses in the races
    /// found so far (0 where a race does not know it): the emulator keeps
    /// the names of the OpenMP units that ran them when clock floors let it
    /// forget the rest (`LangUnits::prune`). An observer that reports races
    /// and applies floors must say.
    fn race_clocks(&self, _t: ThreadKey) -> Vec<u64> {
        Vec::new()
    }
    /// Whether [`Observer::event`] may return [`Control::Stop`] for an
    /// access. When it never does, the emulator may deliver accesses in
    /// batches, after they happened (unicorn patch 0008: cheaper per access),
    /// still in program order and before every later event; observers that
    /// stop before a racy access must keep the default.
    fn stops_on_access(&self) -> bool {
        true
    }
    /// One event.
    fn event(&mut self, e: &Event) -> Control;
    /// One access event: the same as [`Observer::event`] of
    /// `EventKind::Access(*a)` at `pc` with origin `a.origin` (the
    /// default), for an observer that can check an access without the
    /// event around it (a detector's, on the path of every checked access).
    #[inline]
    fn access(&mut self, pc: u64, a: &Access) -> Control {
        self.event(&Event {
            pc,
            origin: a.origin,
            kind: EventKind::Access(*a),
        })
    }
    /// [`Observer::access`] of a checked access, and whether it is
    /// *repeatable* (module [`repeats`](crate::observe::repeats)): made again
    /// by the same thread and instruction, before any other event (a context
    /// switch aside) and before another access with a byte in common that is
    /// not repeatable, it would change nothing the observer keeps and report
    /// nothing, so that the emulator may count it without delivering it; and
    /// this access changes nothing another thread's repeat would do. The
    /// default: never.
    #[inline]
    fn access_repeatable(&mut self, pc: u64, a: &Access) -> (Control, bool) {
        (self.access(pc, a), false)
    }
    /// Access events that already happened, from an emulator that batches
    /// them (only for an observer that does not
    /// [stop on accesses](Observer::stops_on_access)): the same as one
    /// [`Observer::event`] per record, with the record's PC as the event's
    /// ([`AccessRecord::access`]). Read the records with
    /// [`AccessBatch::for_each`] (one pass that also completes them) or
    /// [`AccessBatch::records`].
    fn accesses(&mut self, batch: &mut AccessBatch) {
        let origin = batch.origin;
        for r in batch.records() {
            self.event(&Event {
                pc: r.pc,
                origin,
                kind: EventKind::Access(r.access(origin)),
            });
        }
    }
    /// Called once when the run has ended, however it ended (exit, fault,
    /// deadlock, exception), before any report is read.
    fn finish(&mut self) {}
    /// The guest is about to fork: the process is copied with only the
    /// emulation thread, so an observer with threads of its own must stop
    /// them (and restart them in [`Observer::forked`]), or refuse with the
    /// reason (the guest's fork then fails with `EAGAIN`).
    fn prepare_fork(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// The fork happened: called in the parent (`child == false`) and in
    /// the child (`true`), which goes on with a copy of this observer.
    fn forked(&mut self, child: bool) {
        let _ = child;
    }
    /// The races found so far, every event delivered up to now checked
    /// first, if the observer runs a detector that logs races (what the
    /// guest's `lard_note_report_count` asks).
    fn race_log(
        &mut self,
    ) -> Option<std::rc::Rc<std::cell::RefCell<crate::observe::detect::RaceLog>>> {
        None
    }
    /// Moves into `out` the data addresses of the races logged since the
    /// last call (new racy PC pairs, and pairs whose reported access
    /// changed), for naming them while their stack frames exist
    /// (observe::locals).
    fn fresh_race_addrs(&mut self, out: &mut Vec<u64>) {
        let _ = out;
    }
    /// A hash of the whole event stream so far, if the observer keeps one.
    fn stream_hash(&self) -> Option<u64> {
        None
    }
    /// The detector's access history of byte `addr`, if it keeps one
    /// (`monitor history` under `lard run --gdb`).
    fn history(&self, addr: u64) -> Option<Vec<lard_detector_hw::Remembered>> {
        let _ = addr;
        None
    }
}

pub use crate::cpu::uc::AccessRecord;

/// Accesses that already happened, oldest first, all made by one thread
/// ([`Observer::accesses`]).
///
/// The records come as translated code wrote them, without their
/// [`AccessRecord::STACK`] flag: the batch completes each one (the stack
/// test, [`StackMap::cached`](crate::cpu::stacks::StackMap)) and counts it
/// by class as the observer reads it, so an every-access run makes one pass
/// over the records instead of two (the emulator's, then the observer's).
/// Whatever the observer reads, the emulator reads the counts afterwards
/// ([`AccessBatch::counts`]).
#[derive(Debug)]
pub struct AccessBatch<'a> {
    /// Who made them.
    pub origin: Origin,
    records: &'a mut [AccessRecord],
    stacks: &'a StackMap,
    state: BatchState,
    /// The counts, once counted.
    classes: [[u64; 2]; 3],
}

/// How far an [`AccessBatch`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchState {
    /// As translated code wrote the records.
    Raw,
    /// Counted, the records still without their stack flags
    /// ([`AccessBatch::stream_terms`]).
    Counted,
    /// Counted, and the records complete.
    Complete,
}

impl<'a> AccessBatch<'a> {
    /// A batch of `records` made by `origin`, whose stack flags `stacks`
    /// decides (records must not have [`AccessRecord::STACK`] set, and at
    /// most [`AccessTally::MAX`] of them).
    pub fn new(
        origin: Origin,
        records: &'a mut [AccessRecord],
        stacks: &'a StackMap,
    ) -> AccessBatch<'a> {
        debug_assert!(records.len() as u64 <= AccessTally::MAX);
        AccessBatch {
            origin,
            records,
            stacks,
            state: BatchState::Raw,
            classes: [[0; 2]; 3],
        }
    }

    /// Calls `f` with each record, oldest first, complete (its stack flag
    /// set), counting it on the way: the one pass of a batch.
    #[inline(always)]
    pub fn for_each(&mut self, mut f: impl FnMut(&AccessRecord)) {
        match self.state {
            BatchState::Complete => {
                for r in self.records.iter() {
                    f(r);
                }
                return;
            }
            BatchState::Counted => {
                self.complete();
                for r in self.records.iter() {
                    f(r);
                }
                return;
            }
            BatchState::Raw => {}
        }
        let mut tally = AccessTally::default();
        let mut cache = self.stacks.cache();
        for r in self.records.iter_mut() {
            debug_assert_eq!(r.bits & AccessRecord::STACK, 0);
            // (No branch on the answer: stack and other accesses alternate.)
            let stack = self.stacks.classify(&mut cache, r.addr);
            r.bits |= u64::from(stack) * AccessRecord::STACK;
            tally.add_bits(r.bits);
            f(r);
        }
        self.classes = tally.classes();
        self.state = BatchState::Complete;
    }

    /// Sets the stack flags of counted records.
    #[cold]
    fn complete(&mut self) {
        let mut cache = self.stacks.cache();
        for r in self.records.iter_mut() {
            r.bits |= u64::from(self.stacks.classify(&mut cache, r.addr)) * AccessRecord::STACK;
        }
        self.state = BatchState::Complete;
    }

    /// The counting observer's pass ([`CountingObserver`]): the wrapping
    /// sum of the stream-hash terms of the records, complete, the first at
    /// position key `key + K0` and each next one `K0` further, and the last
    /// record's key; counts the records on the way as [`AccessBatch::for_each`]
    /// does, but does not write their stack flags back (eight records at a
    /// time with AVX-512, four with AVX2, as `simd` says: `observe::stream_hash`).
    pub fn stream_terms(&mut self, key: u64, simd: Simd) -> (u64, u64) {
        let ow = origin_word(&self.origin);
        if self.state == BatchState::Raw {
            let s = stream_hash::count_and_sum(self.records, self.stacks, ow, key, simd);
            self.classes = s.classes;
            self.state = BatchState::Counted;
            return (s.sum, s.key);
        }
        let (mut sum, mut key) = (0u64, key);
        for r in self.records() {
            key = key.wrapping_add(K0);
            sum = sum.wrapping_add(access_term(r, ow, key));
        }
        (sum, key)
    }

    /// The records, oldest first, complete.
    pub fn records(&mut self) -> &[AccessRecord] {
        self.for_each(|_| {});
        self.records
    }

    /// `[reads, writes]` of the Tracked, untracked non-stack and untracked
    /// stack accesses of the batch.
    pub fn counts(&mut self) -> [[u64; 2]; 3] {
        if self.state == BatchState::Raw {
            self.for_each(|_| {});
        }
        self.classes
    }
}

/// Counts events by kind and hashes the whole stream (every field of every
/// event, in order), so two runs can be compared event for event.
///
/// The hash is a position-keyed sum: event *i* contributes
/// `finish(word_i ^ key_i)`, where `word_i` combines the event's fields and
/// `key_i` its position. Unlike a chain (`h = mix(h ^ word)`), no event's
/// arithmetic waits for the previous one's: the per-access path keeps one
/// add on its serial path (a chain of multiply-xorshifts was the bound of
/// an every-access run, a few ns per access). Reordering, dropping or
/// changing any event changes the sum but for a 2^-64-ish accident.
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
    /// Hash of the stream so far (the sum; [`Observer::stream_hash`]
    /// finishes it).
    pub hash: u64,
    /// The position key of the next event.
    key: u64,
    /// The form of the every-access pass.
    simd: Simd,
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
            hash: 0,
            key: 0,
            simd: Simd::best(),
        }
    }

    /// The counter with the every-access pass done by `simd` (default: the
    /// fastest this CPU has, [`Simd::best`]; a form it lacks means the
    /// scalar loop). Every form gives the same counts and hash.
    pub fn with_simd(mut self, simd: Simd) -> Self {
        self.simd = simd;
        self
    }

    /// Adds the next event's word to the stream hash.
    #[inline]
    fn add(&mut self, word: u64) {
        self.key = self.key.wrapping_add(K0);
        self.hash = self.hash.wrapping_add(finish(word ^ self.key));
    }

    /// Counts an access by class.
    #[inline]
    fn count(&mut self, a: &Access) {
        let w = usize::from(a.kind == AccessKind::Write);
        if a.tracked {
            self.tracked[w] += 1;
        } else if a.stack {
            self.stack[w] += 1;
        } else {
            self.untracked[w] += 1;
        }
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
        E::FloorVc { .. } => OpKind::FloorVc,
    }
}

impl Observer for CountingObserver {
    fn access_mode(&self) -> AccessMode {
        self.mode
    }

    fn wants_sync(&self) -> bool {
        self.sync
    }

    fn stops_on_access(&self) -> bool {
        false
    }

    fn accesses(&mut self, batch: &mut AccessBatch) {
        // As `event` once per record (the event's PC is the access's), in
        // the batch's one pass; the counts come with the batch.
        let (sum, key) = batch.stream_terms(self.key, self.simd);
        self.hash = self.hash.wrapping_add(sum);
        self.key = key;
        let [tracked, untracked, stack] = batch.counts();
        for w in 0..2 {
            self.tracked[w] += tracked[w];
            self.untracked[w] += untracked[w];
            self.stack[w] += stack[w];
        }
    }

    fn event(&mut self, e: &Event) -> Control {
        let o = e.origin;
        let head = fold(
            fold(e.pc, u64::from(o.kthread) << 16 | u64::from(o.core)),
            o.lthread.unwrap_or(u64::MAX),
        );
        let word = match &e.kind {
            EventKind::Access(a) => {
                self.count(a);
                // (The origin of an access event is the access's.)
                self.key = self.key.wrapping_add(K0);
                let term = access_term(&AccessRecord::new(a), origin_word(&a.origin), self.key);
                self.hash = self
                    .hash
                    .wrapping_add(term ^ (e.pc ^ a.pc).wrapping_mul(K3));
                return Control::Continue;
            }
            EventKind::Lard(op) => {
                let k = op_kind(op);
                *self.ops.entry(k).or_default() += 1;
                fold(head, k as u64 | 0x1a00)
            }
            EventKind::Sync(_) => {
                self.sync_events += 1;
                fold(head, 0x5e)
            }
            EventKind::ContextSwitch => {
                self.switches += 1;
                fold(head, 0xc5)
            }
            EventKind::Program(p) => {
                self.program_events += 1;
                let (a, b) = match *p {
                    ProgramEvent::Alloc { addr, size, .. } => (addr, size),
                    ProgramEvent::Free { addr } => (addr, 0),
                    ProgramEvent::Acquire { lock, mode } => (lock, mode as u64),
                    ProgramEvent::Release { lock } => (lock, 2),
                    ProgramEvent::ThreadExit => (3, 0),
                    ProgramEvent::Block => (4, 0),
                    ProgramEvent::Wake => (5, 0),
                };
                fold(fold(fold(head, 0x9e), a), b)
            }
        };
        self.add(word);
        Control::Continue
    }

    fn stream_hash(&self) -> Option<u64> {
        Some(finish(self.hash ^ finish(self.key)))
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

    /// Always true: recording keeps the emulator's synchronous delivery,
    /// one call per access (the trace costs more than the call), so a
    /// recorded run is also an oracle for batched delivery — the counting
    /// observer's stream hash must come out the same with and without
    /// `--record-trace` (tests/tests/run_programs.rs).
    fn stops_on_access(&self) -> bool {
        true
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

    fn prepare_fork(&mut self) -> Result<(), String> {
        self.inner.prepare_fork()
    }

    /// The trace is the first process's: a child drops its copy of the
    /// writer unwritten (what it buffered is the parent's to write).
    fn forked(&mut self, child: bool) {
        if child {
            self.writer = None;
        }
        self.inner.forked(child);
    }

    fn stream_hash(&self) -> Option<u64> {
        self.inner.stream_hash()
    }

    fn history(&self, addr: u64) -> Option<Vec<lard_detector_hw::Remembered>> {
        self.inner.history(addr)
    }
}

impl RecordingObserver {
    /// True when every event was written.
    pub fn complete(&self) -> bool {
        !self.failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch completes each record with the stack map's answer and
    /// counts it by class, read in one pass or as a slice, and hands the
    /// observer the same records either way.
    #[test]
    fn a_batch_completes_and_counts_its_records() {
        let mut stacks = StackMap::default();
        stacks.add(0x7000, 0x8000);
        stacks.add(0x9000, 0xa000);
        let addrs = [0x7ff8, 0x1000, 0x9000, 0x8000, 0x6fff, 0x7000, 0x9fff];
        let raw: Vec<AccessRecord> = addrs
            .iter()
            .enumerate()
            .map(|(i, &addr)| AccessRecord {
                addr,
                pc: 0x400000 + i as u64,
                bits: AccessRecord::pack(8, i % 2 == 1, i == 1, false),
            })
            .collect();
        let origin = Origin {
            kthread: 4001,
            lthread: None,
            core: 1,
        };
        let want: Vec<AccessRecord> = raw
            .iter()
            .map(|r| AccessRecord {
                bits: r.bits | (u64::from(stacks.search(r.addr)) * AccessRecord::STACK),
                ..*r
            })
            .collect();
        // [tracked, untracked non-stack, untracked stack] x [reads, writes]
        let counts = [[0, 1], [1, 1], [3, 1]];
        let mut a = raw.clone();
        let mut batch = AccessBatch::new(origin, &mut a, &stacks);
        let mut seen = Vec::new();
        batch.for_each(|r| seen.push(*r));
        assert_eq!(seen, want);
        assert_eq!(batch.records(), &want[..]);
        assert_eq!(batch.counts(), counts);
        let mut b = raw.clone();
        let mut batch = AccessBatch::new(origin, &mut b, &stacks);
        assert_eq!(batch.counts(), counts);
        assert_eq!(batch.records(), &want[..]);
    }
}
