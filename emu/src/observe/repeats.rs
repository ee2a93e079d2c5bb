//! Repeated accesses: FastTrack's same-epoch rule, taken before the
//! access reaches the detector.
//!
//! Most checked accesses of a loop repeat an access its thread made a
//! moment before: the same instruction, the same bytes, the same kind, in
//! the same epoch. FastTrack (Flanagan and Freund, PLDI 2009, "same epoch"
//! rules) leaves its state unchanged on such a repeat and reports nothing,
//! provided nothing changed the history of those bytes in between and the
//! first access reported nothing. The detector still pays for finding the
//! shadow cell to learn that; binary mode's classification and the
//! observer's dispatch before it cost as much again. [`RepeatFilter`]
//! remembers, per kernel thread, the last access the detector declared
//! repeatable in each 8-byte granule
//! ([`Observer::access_repeatable`](crate::observe::observer::Observer::access_repeatable)),
//! and the access callback counts a repeat instead of delivering it.
//!
//! Exact by construction: an entry is forgotten
//! * when an access of its own thread with a byte in common reaches the
//!   detector ([`RepeatFilter::touched_by`]);
//! * when any thread's access with a byte in common reaches the detector
//!   and the detector does not call it repeatable, so that it may change
//!   another thread's repeat ([`RepeatFilter::touched`]; for FastTrack, an
//!   access that reports a race: one that reports none leaves other
//!   threads' repeats as they were, DetectorObserver's `access_repeatable`);
//! * at every event but a context switch (which changes no history and no
//!   clock), every system call and every atomic instruction: whatever may
//!   change a thread's identity or clock, or how an access is classified
//!   ([`RepeatFilter::forget_all`]).
//!
//! So a repeat is an access whose delivery would change nothing: the same
//! verdicts, reports, histories and counts (the caller counts a repeat as
//! the access it stands for). Where a program's accesses do not repeat (it
//! streams through its data), remembering them costs without paying: a
//! window of accesses that finds few repeats turns remembering off for a
//! while.

/// Slots per thread: one per 8-byte granule, direct-mapped (256 KiB).
const SLOTS: usize = 1 << 14;
/// Kernel threads (by index) with a cache of their own; later ones are
/// delivered every access.
const THREADS: usize = 32;
/// Granules an access delivered to the detector may span for its entries
/// to be forgotten one by one; a longer one (a range) forgets everything.
const SPAN: u64 = 16;
/// One remembered access: `key` = address, size and kind; `at` = PC and
/// the generation it was remembered in (0: empty).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    at: u64,
}

/// Accesses remembered between two looks at how many repeats were found.
#[cfg(not(test))]
const WINDOW: u32 = 1 << 16;
/// Scheduling quanta run without remembering when a window found fewer
/// repeats than it remembered accesses: a program that streams through
/// its data, or walks it at random, pays for remembering (a slot that is
/// rarely in the host's caches) and finds too few repeats to gain. Each
/// pause that follows another is twice as long, up to [`PAUSE_MAX`].
#[cfg(not(test))]
const PAUSE: u32 = 256;
/// The longest pause.
#[cfg(not(test))]
const PAUSE_MAX: u32 = 8192;
/// (Short windows and pauses, so that the tests cross many of both.)
#[cfg(test)]
const WINDOW: u32 = 1 << 7;
#[cfg(test)]
const PAUSE: u32 = 4;
#[cfg(test)]
const PAUSE_MAX: u32 = 16;

/// The repeated-access filter of binary mode (module docs). An access is
/// remembered when it lies within one 8-byte granule (a vector access is
/// delivered as 8-byte parts), in that granule's slot.
pub struct RepeatFilter {
    /// Accesses remembered, and repeats found, in this window.
    remembered: u32,
    found: u32,
    /// Remembering and looking up (on, and not paused).
    active: bool,
    /// Quanta still to run before remembering again (0: not paused).
    paused: u32,
    /// The next pause's length.
    pause: u32,
    /// Entries of another generation are forgotten; 0 is never current.
    generation: u16,
    /// Per kernel thread index, allocated at its first repeatable access.
    caches: Vec<Option<Box<[Slot]>>>,
}

impl RepeatFilter {
    /// A filter that never finds a repeat.
    pub fn off() -> RepeatFilter {
        RepeatFilter {
            active: false,
            remembered: 0,
            found: 0,
            paused: 0,
            pause: PAUSE,
            generation: 1,
            caches: Vec::new(),
        }
    }

    /// A filter that remembers repeatable accesses.
    pub fn on() -> RepeatFilter {
        RepeatFilter {
            active: true,
            ..RepeatFilter::off()
        }
    }

    /// True when the filter remembers and looks up accesses (it is on and
    /// not paused): only then need an access go through it.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// A scheduling quantum ended: counts down a pause.
    #[inline]
    pub fn quantum_ended(&mut self) {
        if self.paused != 0 {
            self.paused -= 1;
            self.active = self.paused == 0;
        }
    }

    #[inline]
    fn key(addr: u64, size: u32, write: bool) -> u64 {
        addr << 8 | u64::from(size) << 1 | u64::from(write)
    }

    #[inline]
    fn slot(granule: u64) -> usize {
        (granule as usize) & (SLOTS - 1)
    }

    /// True if kernel thread `thread` at `pc` accessing `size` bytes at
    /// `addr` (a write if `write`) repeats an access remembered since.
    #[inline]
    pub fn is_repeat(&mut self, thread: usize, pc: u64, addr: u64, size: u32, write: bool) -> bool {
        if !self.active {
            return false;
        }
        let Some(Some(cache)) = self.caches.get(thread) else {
            return false;
        };
        let s = &cache[Self::slot(addr >> 3)];
        let found =
            s.key == Self::key(addr, size, write) && s.at == pc << 16 | u64::from(self.generation);
        // (Wrapping: a window that finds 2^32 repeats may pause once.)
        self.found = self.found.wrapping_add(u32::from(found));
        found
    }

    /// An access of `size` bytes at `addr` reaches the detector: forgets
    /// every thread's entries that share a byte with it.
    #[inline]
    pub fn touched(&mut self, addr: u64, size: u32) {
        if self.caches.is_empty() || !self.active {
            return;
        }
        self.touched_slow(addr, u64::from(size.max(1)));
    }

    #[inline(never)]
    fn touched_slow(&mut self, addr: u64, size: u64) {
        if ((addr + size - 1) >> 3) - (addr >> 3) >= SPAN {
            self.forget_all();
            return;
        }
        for cache in self.caches.iter_mut().flatten() {
            Self::forget_in(cache, addr, size);
        }
    }

    /// An access of `size` bytes at `addr` by kernel thread `thread`
    /// reaches the detector and disturbs no other thread's repeats: forgets
    /// that thread's entries that share a byte with it.
    #[inline]
    pub fn touched_by(&mut self, thread: usize, addr: u64, size: u32) {
        if !self.active {
            return;
        }
        if let Some(Some(cache)) = self.caches.get_mut(thread) {
            Self::forget_in(cache, addr, u64::from(size.max(1)));
        }
    }

    /// Forgets `cache`'s entries that share a byte with `addr .. addr+size`
    /// (a remembered access lies in one granule, held by that granule's
    /// slot).
    #[inline]
    fn forget_in(cache: &mut [Slot], addr: u64, size: u64) {
        let end = addr.saturating_add(size);
        let (first, last) = (addr >> 3, (end - 1) >> 3);
        for g in first..=last.min(first + SLOTS as u64 - 1) {
            let s = &mut cache[Self::slot(g)];
            if s.key >> 11 == g {
                s.at = 0;
            }
        }
    }

    /// Remembers that kernel thread `thread`'s access (as
    /// [`RepeatFilter::is_repeat`]'s arguments), just delivered, is
    /// repeatable. Accesses the slots cannot hold are not remembered.
    #[inline]
    pub fn remember(&mut self, thread: usize, pc: u64, addr: u64, size: u32, write: bool) {
        if !self.active
            || thread >= THREADS
            || size == 0
            || (addr & 7) + u64::from(size) > 8
            || pc >> 48 != 0
            || addr >> 56 != 0
        {
            return;
        }
        self.remembered += 1;
        if self.remembered == WINDOW {
            let pause = self.found < self.remembered;
            (self.remembered, self.found) = (0, 0);
            if !pause {
                self.pause = PAUSE;
            } else {
                // Nothing remembered before is valid after the pause, so
                // nothing need be forgotten during it.
                self.paused = self.pause;
                self.active = false;
                self.pause = (self.pause * 2).min(PAUSE_MAX);
                self.forget_all();
                return;
            }
        }
        if self.caches.len() <= thread {
            self.caches.resize_with(thread + 1, || None);
        }
        let cache = self.caches[thread]
            .get_or_insert_with(|| vec![Slot::default(); SLOTS].into_boxed_slice());
        cache[Self::slot(addr >> 3)] = Slot {
            key: Self::key(addr, size, write),
            at: pc << 16 | u64::from(self.generation),
        };
    }

    /// Forgets every entry (another event, a system call, anything that
    /// may change a later access's classification, identity or clock).
    #[inline]
    pub fn forget_all(&mut self) {
        if self.caches.is_empty() {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Entries of the generation about to come again must go.
            for cache in self.caches.iter_mut().flatten() {
                cache.fill(Slot::default());
            }
            self.generation = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lard_detector_hw::event::{AccessKind, Event, EventKind, ThreadKey};
    use lard_detector_hw::lard::identity;
    use lard_detector_hw::rng::SplitMix64;
    use lard_detector_hw::trace::{random_trace, TraceParams};
    use lard_detector_hw::{Detector, FastTrack};
    use std::collections::HashMap;

    /// `trace` with copies of recent accesses inserted after them (each
    /// the same access by the same origin), so that repeats occur, some
    /// across other threads' accesses and other events.
    fn with_repeats(trace: Vec<Event>, seed: u64) -> Vec<Event> {
        let mut rng = SplitMix64::new(seed ^ 0x5eed);
        let mut recent: Vec<Event> = Vec::new();
        let mut out = Vec::new();
        for e in trace {
            if matches!(e.kind, EventKind::Access(_)) {
                recent.push(e);
                if recent.len() > 8 {
                    recent.remove(0);
                }
            }
            out.push(e);
            while !recent.is_empty() && rng.next_u64() % 100 < 45 {
                out.push(recent[(rng.next_u64() % recent.len() as u64) as usize]);
            }
        }
        out
    }

    #[test]
    fn fasttrack_behind_the_filter_reports_and_remembers_what_fasttrack_does() {
        let (mut skipped, mut paused) = (0, 0);
        for seed in 0..200 {
            let params = TraceParams {
                events: 3000,
                span: 64 + 32 * (seed % 4),
                ..TraceParams::default()
            };
            let trace = with_repeats(random_trace(seed, &params), seed);
            let mut every = FastTrack::new().without_work();
            let mut behind = FastTrack::new().without_work();
            let mut filter = RepeatFilter::on();
            // The filter's threads: one per detector identity (the
            // emulator's kernel threads, which change identity only at an
            // event; the copies above may make an access from an identity's
            // earlier kernel thread).
            let mut ids: HashMap<ThreadKey, usize> = HashMap::new();
            for (i, e) in trace.iter().enumerate() {
                if i % 16 == 0 {
                    filter.quantum_ended();
                }
                let all = every.event(e);
                let EventKind::Access(a) = &e.kind else {
                    if !matches!(e.kind, EventKind::ContextSwitch) {
                        filter.forget_all();
                    }
                    assert_eq!(behind.event(e), all, "seed {seed} event {i}");
                    continue;
                };
                let n = ids.len();
                let t = *ids.entry(identity(&a.origin)).or_insert(n);
                let write = a.kind == AccessKind::Write;
                if a.tracked && filter.is_repeat(t, a.pc, a.addr, a.size, write) {
                    assert_eq!(all, None, "seed {seed} event {i}: a repeat raced");
                    skipped += 1;
                    continue;
                }
                let race = behind.access_without_work(a);
                assert_eq!(race, all, "seed {seed} event {i}");
                // (DetectorObserver::access_repeatable's rule; untracked
                // accesses never reach it.)
                if !a.tracked {
                    continue;
                }
                if race.is_none() {
                    filter.touched_by(t, a.addr, a.size);
                    let active = filter.is_active();
                    filter.remember(t, a.pc, a.addr, a.size, write);
                    paused += u32::from(active && !filter.is_active());
                } else {
                    filter.touched(a.addr, a.size);
                }
            }
            for addr in params.base - 64..params.base + params.span + 64 {
                assert_eq!(
                    behind.history(addr),
                    every.history(addr),
                    "seed {seed} byte {addr:#x}"
                );
            }
        }
        assert!(skipped > 10_000, "only {skipped} repeats skipped");
        assert!(paused > 10, "only {paused} pauses");
    }

    #[test]
    fn a_repeat_is_the_same_thread_pc_bytes_and_kind() {
        let mut f = RepeatFilter::on();
        f.remember(1, 0x401000, 0x1000, 8, false);
        assert!(f.is_repeat(1, 0x401000, 0x1000, 8, false));
        for (t, pc, addr, size, write) in [
            (0, 0x401000, 0x1000, 8, false),
            (2, 0x401000, 0x1000, 8, false),
            (1, 0x401004, 0x1000, 8, false),
            (1, 0x401000, 0x1004, 4, false),
            (1, 0x401000, 0x1000, 4, false),
            (1, 0x401000, 0x1000, 8, true),
        ] {
            assert!(
                !f.is_repeat(t, pc, addr, size, write),
                "{t} {pc:x} {addr:x} {size} {write}"
            );
        }
    }

    #[test]
    fn any_delivered_access_to_its_bytes_forgets_it_in_every_thread() {
        // (start, size) of the remembered access; (start, size) touched;
        // whether it is forgotten.
        let table = [
            ((0x1000, 8), (0x1000, 8), true),
            ((0x1000, 8), (0x1007, 1), true),
            ((0x1000, 8), (0x1008, 1), false),
            ((0x1000, 8), (0x0fff, 1), false),
            ((0x1000, 8), (0x0ff8, 16), true),
            ((0x1000, 8), (0x0fff, 2), true),
            ((0x1004, 4), (0x1000, 4), true),
            ((0x1004, 4), (0x0f00, 0x200), true),
            ((0x1006, 2), (0x1008, 8), false),
            // (A range longer than SPAN granules forgets everything.)
            ((0x1006, 2), (0x0f00, 0x100), true),
            ((0x1006, 2), (0x0f80, 0x80), false),
        ];
        for ((a, n), (b, m), gone) in table {
            let mut f = RepeatFilter::on();
            f.remember(0, 0x400000, a, n, true);
            f.remember(3, 0x400000, a, n, false);
            f.touched(b, m);
            for (t, w) in [(0, true), (3, false)] {
                assert_eq!(
                    !f.is_repeat(t, 0x400000, a, n, w),
                    gone,
                    "{a:x}+{n} touched by {b:x}+{m}"
                );
            }
        }
    }

    #[test]
    fn every_other_event_forgets_everything_across_generations() {
        let mut f = RepeatFilter::on();
        f.remember(0, 0x400000, 0x2000, 4, false);
        f.forget_all();
        assert!(!f.is_repeat(0, 0x400000, 0x2000, 4, false));
        // Entries of an old generation stay forgotten when the generation
        // counter wraps around to their value.
        f.remember(0, 0x400000, 0x3000, 4, false);
        for _ in 0..=u16::MAX as u32 {
            f.forget_all();
        }
        assert!(!f.is_repeat(0, 0x400000, 0x3000, 4, false));
        f.remember(0, 0x400000, 0x3000, 4, false);
        assert!(f.is_repeat(0, 0x400000, 0x3000, 4, false));
    }

    #[test]
    fn what_the_slots_cannot_hold_is_not_remembered_and_off_finds_nothing() {
        let mut f = RepeatFilter::on();
        for (t, pc, addr, size) in [
            (THREADS, 0x400000, 0x1000, 8),
            (0, 1 << 48, 0x1000, 8),
            (0, 0x400000, 1 << 56, 8),
            (0, 0x400000, 0x1000, 16),
            (0, 0x400000, 0x1004, 8),
        ] {
            f.remember(t, pc, addr, size, false);
            assert!(!f.is_repeat(t, pc, addr, size, false));
        }
        let mut off = RepeatFilter::off();
        assert!(!off.is_active());
        off.touched(0x1000, 8);
        off.forget_all();
        assert!(!off.is_repeat(0, 0x400000, 0x1000, 8, false));
    }
}
