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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::event::ThreadKey;

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
    keys: Vec<ThreadKey>,
    /// A direct-mapped cache of recent look-ups (empty until first use):
    /// events come from few threads, so most look-ups skip the hash map.
    cache: Vec<Option<(ThreadKey, ThreadIdx)>>,
    /// The last look-up, checked before the cache: consecutive events are
    /// usually one thread's, and this needs no load outside the index.
    last: Option<(ThreadKey, ThreadIdx)>,
}

/// Entries of [`ThreadIndex`]'s look-up cache (a power of two).
const INDEX_CACHE: usize = 64;

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
        let (idx, fresh) = match self.map.get(&key) {
            Some(&i) => (i, false),
            None => {
                self.map.insert(key, next);
                self.keys.push(key);
                (next, true)
            }
        };
        if self.cache.is_empty() {
            self.cache = vec![None; INDEX_CACHE];
        }
        self.cache[slot] = Some((key, idx));
        (idx, fresh)
    }

    /// The index of `key` if it has one.
    pub fn get(&self, key: ThreadKey) -> Option<ThreadIdx> {
        self.map.get(&key).copied()
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

/// One vector clock per thread identity, created on first use with the
/// initialisation rule of this module.
#[derive(Clone, Debug, Default)]
pub struct ClockTable {
    index: ThreadIndex,
    clocks: Vec<VectorClock>,
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
        let mut clock = VectorClock::new();
        clock.set(idx, INITIAL_OWN_CLOCK);
        self.clocks.push(clock);
    }

    /// The vector clock of identity `idx` (the all-zero clock if unknown).
    #[inline]
    pub fn clock(&self, idx: ThreadIdx) -> &VectorClock {
        static ZERO: VectorClock = VectorClock::new();
        self.clocks.get(idx as usize).unwrap_or(&ZERO)
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
