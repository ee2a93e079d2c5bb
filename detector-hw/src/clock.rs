//! Vector clocks indexed by thread identity.
//!
//! Thread identities ([`ThreadKey`]s) appear dynamically: a language thread
//! exists for the detector from the first event that names it. A
//! [`ThreadIndex`] maps each identity to a dense index (`ThreadIdx`) so that
//! [`VectorClock`]s are plain arrays. A [`ClockTable`] holds one vector clock
//! per identity and implements the clock initialisation rule:
//!
//! **A fresh identity's vector clock has its own entry = [`INITIAL_OWN_CLOCK`]
//! (1) and every other entry 0.** This deviates from LARD Appendix A
//! ("starting at zero") and follows RADISH §3.1 (`C_t(t) = 1`). Under LARD the
//! detector sees no fork event that would advance the parent's and child's
//! clocks; with own entries at 0 every access of a never-synchronised thread
//! would carry time 0 and so look ordered before everything (`0 <= C_u(t)` for
//! every `u`), hiding every race between threads that never synchronise.
//!
//! **An ended identity's clock is dropped** ([`ClockTable::ended`]): once a
//! language thread has reported its end (`ProgramEvent::ThreadExit`) and its
//! kernel thread runs another identity, nothing reads that clock again, so
//! only its own entry is kept. A program whose logical threads are
//! short-lived (one per OpenMP task: millions in a recursive task program)
//! then holds clocks for the identities that can still run, not for every
//! one that ever ran. Its entries in other identities' clocks stay, so every
//! verdict is the same. The own entry is kept so that an identity that runs
//! again (an id a runtime hands out anew) or breaks the contract and
//! accesses memory after its end is checked conservatively: with an
//! all-zero clock its accesses would look ordered before everyone's.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::event::{KernelThreadId, Origin, ThreadKey};

mod vector;
pub use vector::{VectorClock, DENSE};

/// The own entry of a fresh identity's vector clock (all other entries are 0).
///
/// The emulator, which owns the architectural clock values returned by
/// ReadVC, must start language threads at the same value.
pub const INITIAL_OWN_CLOCK: u64 = 1;

/// Dense index of a thread identity inside one detector.
pub type ThreadIdx = u32;

/// A small, fast, non-cryptographic hasher (the Fx hash of rustc) for
/// integer keys; detectors are not exposed to adversarial key choice that
/// matters for correctness, only for speed.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` using [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Maps thread identities to dense indices `0, 1, 2, ...` in order of first
/// appearance.
#[derive(Clone, Debug, Default)]
pub struct ThreadIndex {
    map: FxHashMap<ThreadKey, ThreadIdx>,
    /// The index + 1 of `Lang(l)` for `l` below [`DENSE_LANG`] (0: none):
    /// runtimes number their language threads densely from 0, and a
    /// recursive task program starts millions, so these skip the hash map.
    dense: Vec<ThreadIdx>,
    keys: Vec<ThreadKey>,
    /// A direct-mapped cache of recent look-ups (empty until first use):
    /// events come from few threads, so most look-ups skip the hash map.
    cache: Vec<Option<(ThreadKey, ThreadIdx)>>,
    /// The last look-up, checked before the cache: consecutive events are
    /// usually one thread's, and this needs no load outside the index.
    last: Option<(ThreadKey, ThreadIdx)>,
}

/// Entries of [`ThreadIndex`]'s look-up cache (a power of two).
const INDEX_CACHE: usize = 4096;
/// Language thread numbers below this are indexed without hashing.
const DENSE_LANG: u64 = 1 << 26;

#[inline]
fn cache_slot(key: ThreadKey) -> usize {
    let n = match key {
        ThreadKey::Kernel(k) => u64::from(k).wrapping_mul(2),
        ThreadKey::Lang(l) => l.wrapping_mul(2) | 1,
    };
    (n as usize) & (INDEX_CACHE - 1)
}

impl ThreadIndex {
    /// An empty index.
    pub fn new() -> ThreadIndex {
        ThreadIndex::default()
    }

    /// The index of `key`, assigning the next free one if `key` is new.
    /// The second value is true if `key` was new.
    #[inline]
    pub fn intern(&mut self, key: ThreadKey) -> (ThreadIdx, bool) {
        if let Some((k, i)) = self.last {
            if k == key {
                return (i, false);
            }
        }
        let slot = cache_slot(key);
        if let Some(Some((k, i))) = self.cache.get(slot) {
            if *k == key {
                let i = *i;
                self.last = Some((key, i));
                return (i, false);
            }
        }
        let (i, fresh) = self.intern_uncached(key, slot);
        self.last = Some((key, i));
        (i, fresh)
    }

    /// [`ThreadIndex::intern`] when `key` is not in cache slot `slot`.
    #[cold]
    fn intern_uncached(&mut self, key: ThreadKey, slot: usize) -> (ThreadIdx, bool) {
        let next = self.keys.len() as ThreadIdx;
        let (idx, fresh) = match key {
            ThreadKey::Lang(l) if l < DENSE_LANG => {
                let l = l as usize;
                if l >= self.dense.len() {
                    self.dense.resize((l + 1).next_power_of_two(), 0);
                }
                match self.dense[l] {
                    0 => {
                        self.dense[l] = next + 1;
                        self.keys.push(key);
                        (next, true)
                    }
                    i => (i - 1, false),
                }
            }
            _ => match self.map.get(&key) {
                Some(&i) => (i, false),
                None => {
                    self.map.insert(key, next);
                    self.keys.push(key);
                    (next, true)
                }
            },
        };
        if self.cache.is_empty() {
            self.cache = vec![None; INDEX_CACHE];
        }
        self.cache[slot] = Some((key, idx));
        (idx, fresh)
    }

    /// The index of `key` if it has one.
    pub fn get(&self, key: ThreadKey) -> Option<ThreadIdx> {
        match key {
            ThreadKey::Lang(l) if l < DENSE_LANG => match self.dense.get(l as usize) {
                Some(&i) if i != 0 => Some(i - 1),
                _ => None,
            },
            _ => self.map.get(&key).copied(),
        }
    }

    /// The identity with index `idx` (`None` if out of range).
    pub fn key(&self, idx: ThreadIdx) -> Option<ThreadKey> {
        self.keys.get(idx as usize).copied()
    }

    /// Number of identities seen.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True if no identity has been seen.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The rule for when an ended identity's clock goes, shared by the
/// detectors' [`ClockTable`] and the emulator's architectural clocks: an
/// identity that reported its end (`ProgramEvent::ThreadExit`) is gone once
/// its kernel thread runs another identity. The end is reported from inside
/// the thread, whose runtime may still write clock entries before it hands
/// the kernel thread over; an identity named again by a Thread op (a
/// runtime that hands ids out anew) is no longer ended.
#[derive(Clone, Debug, Default)]
pub struct Endings {
    /// Ended identities still on their kernel thread: at most one per
    /// kernel thread, so a short list.
    ended: Vec<(KernelThreadId, ThreadKey)>,
}

impl Endings {
    /// `origin`'s identity has ended.
    pub fn ended(&mut self, origin: &Origin) {
        let key = origin.lard_key();
        self.ended.retain(|&(k, _)| k != origin.kthread);
        self.ended.push((origin.kthread, key));
    }

    /// `origin`'s kernel thread now runs `origin`'s identity: returns the
    /// identity that ended there and is now gone, unless it is the one that
    /// runs now; an identity that runs again is no longer ended anywhere.
    #[inline]
    pub fn switched(&mut self, origin: &Origin) -> Option<ThreadKey> {
        if self.ended.is_empty() {
            return None;
        }
        self.switched_slow(origin)
    }

    #[cold]
    fn switched_slow(&mut self, origin: &Origin) -> Option<ThreadKey> {
        let now = origin.lard_key();
        let mut gone = None;
        self.ended.retain(|&(k, key)| {
            if k == origin.kthread && key != now {
                gone = Some(key);
            }
            k != origin.kthread && key != now
        });
        gone
    }
}

/// One vector clock per thread identity, created on first use with the
/// initialisation rule of this module.
///
/// **Clock floors** (`LardOp::FloorVc`, docs/lardx86.md): entry `t` of
/// every clock is at least `floor(t)`. A dense entry's floor is written
/// into every clock when it is raised and into every clock made later; a
/// sparse entry's is kept once and read through [`ClockRef`], so that a
/// runtime forking thousands of logical threads need not write the entries
/// every live clock already has into each of them.
#[derive(Clone, Debug, Default)]
pub struct ClockTable {
    index: ThreadIndex,
    clocks: Vec<VectorClock>,
    /// Identities that ended and still run on their kernel thread.
    endings: Endings,
    /// Clocks dropped so far.
    retired: u64,
    /// Per identity: its clock was dropped ([`ClockTable::live_min`]).
    dropped: Vec<bool>,
    /// The floors of dense entries (every clock holds them too).
    floor_dense: Vec<u64>,
    /// The floors of sparse entries.
    floor_sparse: FxHashMap<ThreadIdx, u64>,
}

/// A clock of a [`ClockTable`] as the table's floors make it read.
#[derive(Clone, Copy, Debug)]
pub struct ClockRef<'a> {
    clock: &'a VectorClock,
    floor: &'a FxHashMap<ThreadIdx, u64>,
}

impl<'a> ClockRef<'a> {
    /// `clock` read with the floors `floor`.
    pub(crate) fn new(clock: &'a VectorClock, floor: &'a FxHashMap<ThreadIdx, u64>) -> Self {
        ClockRef { clock, floor }
    }

    /// Entry `idx`.
    #[inline]
    pub fn get(self, idx: ThreadIdx) -> u64 {
        let v = self.clock.get(idx);
        if self.floor.is_empty() || (idx as usize) < DENSE {
            v
        } else {
            v.max(self.floor_of(idx))
        }
    }

    #[cold]
    fn floor_of(self, idx: ThreadIdx) -> u64 {
        self.floor.get(&idx).copied().unwrap_or(0)
    }

    /// The clock as it reads now, floors included (a snapshot that later
    /// floors do not change).
    pub fn to_owned(self) -> VectorClock {
        let mut c = self.clock.clone();
        for (&idx, &v) in self.floor {
            if v > c.get(idx) {
                c.set(idx, v);
            }
        }
        c
    }
}

impl ClockTable {
    /// An empty table.
    pub fn new() -> ClockTable {
        ClockTable::default()
    }

    /// The dense index of `key`, creating its clock (own entry
    /// [`INITIAL_OWN_CLOCK`], others 0) if `key` is new.
    #[inline]
    pub fn identity(&mut self, key: ThreadKey) -> ThreadIdx {
        let (idx, fresh) = self.index.intern(key);
        if fresh {
            self.add_clock(idx);
        }
        idx
    }

    /// The clock of new identity `idx` (rare: kept out of the inlined path).
    #[cold]
    fn add_clock(&mut self, idx: ThreadIdx) {
        let clock = self.floored(idx, INITIAL_OWN_CLOCK);
        self.clocks.push(clock);
    }

    /// A clock with own entry `own` and the dense floors.
    fn floored(&self, idx: ThreadIdx, own: u64) -> VectorClock {
        let mut clock = VectorClock::new();
        for (i, &v) in self.floor_dense.iter().enumerate() {
            if v != 0 {
                clock.set(i as ThreadIdx, v);
            }
        }
        clock.set(idx, own);
        clock
    }

    /// The vector clock of identity `idx` (the all-zero clock if unknown).
    #[inline]
    pub fn clock(&self, idx: ThreadIdx) -> ClockRef<'_> {
        static ZERO: VectorClock = VectorClock::new();
        ClockRef {
            clock: self.clocks.get(idx as usize).unwrap_or(&ZERO),
            floor: &self.floor_sparse,
        }
    }

    /// The floor of entry `idx` (0: none).
    fn floor_at(&self, idx: ThreadIdx) -> u64 {
        match self.floor_dense.get(idx as usize) {
            Some(&v) => v,
            None => self.floor_sparse.get(&idx).copied().unwrap_or(0),
        }
    }

    /// Entry `entry` of every clock is at least `value` from now on
    /// (`LardOp::FloorVc`).
    pub fn raise_floor(&mut self, entry: ThreadKey, value: u64) {
        let idx = self.identity(entry);
        let i = idx as usize;
        if i >= DENSE {
            let f = self.floor_sparse.entry(idx).or_insert(0);
            *f = (*f).max(value);
            return;
        }
        if self.floor_dense.len() <= i {
            self.floor_dense.resize(i + 1, 0);
        }
        if value <= self.floor_dense[i] {
            return;
        }
        self.floor_dense[i] = value;
        for c in &mut self.clocks {
            if c.get(idx) < value {
                c.set(idx, value);
            }
        }
    }

    /// Sets entry `entry` of `who`'s clock to `value` (creating both
    /// identities if new). This is WriteVC.
    pub fn set_entry(&mut self, who: ThreadKey, entry: ThreadKey, value: u64) {
        let who = self.identity(who);
        let entry = self.identity(entry);
        if let Some(clock) = self.clocks.get_mut(who as usize) {
            clock.set(entry, value);
        }
    }

    /// Entry `entry` of `who`'s clock, without creating anything: an unknown
    /// `who` reads as a fresh identity would, an unknown `entry` as 0.
    pub fn entry(&self, who: ThreadKey, entry: ThreadKey) -> u64 {
        match (self.index.get(who), self.index.get(entry)) {
            (Some(w), Some(e)) => self.clock(w).get(e),
            (None, _) if who == entry => INITIAL_OWN_CLOCK,
            (None, Some(e)) => self.floor_at(e),
            _ => 0,
        }
    }

    /// The identity with dense index `idx`.
    #[inline]
    pub fn key(&self, idx: ThreadIdx) -> ThreadKey {
        // Indices only come from `identity`, so this always succeeds; the
        // fallback keeps the function total.
        self.index.key(idx).unwrap_or(ThreadKey::Kernel(u32::MAX))
    }

    /// Number of identities seen.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True if no identity has been seen.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// `origin`'s identity has ended (`ProgramEvent::ThreadExit`): its clock
    /// goes once its kernel thread runs another identity
    /// ([`ClockTable::switched`]).
    pub fn ended(&mut self, origin: &Origin) {
        self.endings.ended(origin);
    }

    /// `origin`'s kernel thread now runs `origin`'s identity (the Thread
    /// op): the clock of the identity that ended there goes
    /// ([`Endings::switched`]).
    pub fn switched(&mut self, origin: &Origin) {
        if let Some(key) = self.endings.switched(origin) {
            self.retire(key);
        }
    }

    /// Drops `key`'s clock but for its own entry.
    fn retire(&mut self, key: ThreadKey) {
        let Some(idx) = self.index.get(key) else {
            return;
        };
        if let Some(own) = self.clocks.get(idx as usize).map(|c| c.get(idx)) {
            self.clocks[idx as usize] = self.floored(idx, own);
            self.retired += 1;
            if self.dropped.len() <= idx as usize {
                self.dropped.resize(idx as usize + 1, false);
            }
            self.dropped[idx as usize] = true;
        }
    }

    /// Entry `entry` of every clock not dropped but `entry`'s own (the
    /// identities that did not end, those that ended and still run on
    /// their kernel thread included), in identity order.
    pub fn live_entries(&self, entry: ThreadIdx) -> Vec<u64> {
        (0..self.clocks.len())
            .filter(|&i| i != entry as usize && !self.dropped.get(i).copied().unwrap_or(false))
            .map(|i| self.clock(i as ThreadIdx).get(entry))
            .collect()
    }

    /// How many ended identities' clocks were dropped.
    pub fn retired(&self) -> u64 {
        self.retired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_identity_owns_one() {
        let mut t = ClockTable::new();
        let a = t.identity(ThreadKey::Lang(7));
        let b = t.identity(ThreadKey::Kernel(7));
        assert_ne!(a, b);
        assert_eq!(t.clock(a).get(a), 1);
        assert_eq!(t.clock(a).get(b), 0);
        assert_eq!(t.entry(ThreadKey::Lang(9), ThreadKey::Lang(9)), 1);
        t.set_entry(ThreadKey::Lang(7), ThreadKey::Lang(3), 5);
        assert_eq!(t.entry(ThreadKey::Lang(7), ThreadKey::Lang(3)), 5);
        assert_eq!(t.entry(ThreadKey::Lang(3), ThreadKey::Lang(3)), 1);
    }

    /// A floor makes an entry read at least its value in every clock:
    /// those that store less (a clock that never synchronized), those made
    /// later, and an ended identity's when it runs again; a stored entry
    /// above it reads as stored; a snapshot keeps what it read. Dense and
    /// sparse entries alike.
    #[test]
    fn floors_raise_every_clock_and_every_later_one() {
        let sparse = DENSE as u64 + 10;
        for (entry, floor) in [(5u64, 7u64), (sparse, 9)] {
            let mut t = ClockTable::new();
            let (a, b) = (ThreadKey::Lang(1), ThreadKey::Lang(2));
            let e = ThreadKey::Lang(entry);
            let ia = t.identity(a);
            // Ids interned first: `entry`'s index is dense or sparse as its
            // number is.
            for l in 3..=entry {
                t.identity(ThreadKey::Lang(l));
            }
            let ie = t.identity(e);
            assert_eq!(ie as usize >= DENSE, entry >= DENSE as u64, "{entry}");
            t.set_entry(b, e, floor + 3);
            let snapshot = t.clock(ia).to_owned();
            t.raise_floor(e, floor);
            let ib = t.identity(b);
            assert_eq!(t.clock(ia).get(ie), floor, "a clock below the floor");
            assert_eq!(t.clock(ib).get(ie), floor + 3, "a clock above it");
            assert_eq!(t.entry(a, e), floor);
            assert_eq!(snapshot.get(ie), 0, "a snapshot taken before");
            assert_eq!(t.clock(ia).to_owned().get(ie), floor, "a snapshot after");
            let late = ThreadKey::Lang(900);
            assert_eq!(t.entry(late, e), floor, "an identity not seen yet");
            let il = t.identity(late);
            assert_eq!(t.clock(il).get(ie), floor, "a clock made later");
            assert_eq!(t.clock(il).get(il), INITIAL_OWN_CLOCK);
            // A lower floor changes nothing.
            t.raise_floor(e, floor - 2);
            assert_eq!(t.clock(ia).get(ie), floor);
            // An ended identity's clock keeps its own entry and the floors.
            t.ended(&on(1, 1));
            t.switched(&on(1, 2));
            assert_eq!(t.clock(ia).get(ie), floor);
        }
    }

    fn on(kthread: u32, lthread: u64) -> Origin {
        Origin {
            kthread,
            lthread: Some(lthread),
            core: 0,
        }
    }

    /// An ended identity keeps its clock until its kernel thread runs
    /// another one; then only its own entry stays. Running again (on any
    /// kernel thread) cancels the end.
    #[test]
    fn ended_identities_keep_only_their_own_entry() {
        let (a, b, c) = (
            ThreadKey::Lang(10),
            ThreadKey::Lang(11),
            ThreadKey::Lang(12),
        );
        let mut t = ClockTable::new();
        t.set_entry(a, b, 4);
        t.set_entry(a, a, 6);
        t.ended(&on(1, 10));
        // Still its kernel thread's identity: WriteVCs after the end count.
        t.set_entry(a, c, 2);
        t.switched(&on(2, 12));
        assert_eq!((t.entry(a, b), t.entry(a, c), t.retired()), (4, 2, 0));
        t.switched(&on(1, 11));
        assert_eq!((t.entry(a, a), t.entry(a, b), t.entry(a, c)), (6, 0, 0));
        assert_eq!(t.retired(), 1);
        // The others' clocks are untouched.
        assert_eq!(t.entry(b, b), 1);

        // An end then the same identity again on the same kernel thread:
        // nothing goes.
        t.set_entry(b, c, 3);
        t.ended(&on(1, 11));
        t.switched(&on(1, 11));
        t.switched(&on(1, 12));
        assert_eq!((t.entry(b, c), t.retired()), (3, 1));

        // An end, then the id runs again elsewhere before its old kernel
        // thread moves on: it is no longer ended.
        t.ended(&on(1, 12));
        t.switched(&on(2, 12));
        t.switched(&on(1, 10));
        t.set_entry(c, b, 9);
        assert_eq!((t.entry(c, b), t.retired()), (9, 1));
    }

    #[test]
    fn join_and_leq() {
        let mut a = VectorClock::new();
        a.set(0, 3);
        let mut b = VectorClock::new();
        b.set(2, 1);
        assert!(!a.leq(&b));
        b.join(&a);
        assert!(a.leq(&b));
        assert_eq!(b.get(0), 3);
        assert_eq!(b.get(2), 1);
        assert_eq!(b.get(99), 0);
    }
}
