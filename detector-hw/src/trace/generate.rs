//! The seeded random trace generator ([`random_trace`]).

use std::collections::{BTreeMap, BTreeSet};

use super::SyncModel;
use crate::event::{
    Access, AccessKind, Event, EventKind, KernelThreadId, LangThreadId, LardOp, LowLevelSync,
    Origin,
};
use crate::rng::SplitMix64;

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

/// A random trace of exactly `params.events` events; see [`crate::trace`].
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

#[cfg(test)]
mod tests {
    use super::*;

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
