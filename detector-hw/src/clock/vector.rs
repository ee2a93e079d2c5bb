//! [`VectorClock`]: dense for the first [`DENSE`] thread indices (the
//! SDK's `LARD_MAX_THREADS`), sparse beyond.
//!
//! A run with a few threads keeps every clock a plain array (one bounds
//! check per lookup, as before). A run with thousands of logical threads
//! (recursive OpenMP tasks: one per task) would make every clock as long as
//! the highest index it names — quadratic memory, 2.6 GB for `fib(20)`'s
//! 21,891 tasks — although each names few threads (its ancestors and the
//! tasks it waited for): entries at index [`DENSE`] and above are therefore
//! kept as a hash map of the non-zero ones. A map rather than a sorted list,
//! because such clocks are built one WriteVC at a time in no particular
//! order: an insertion into a sorted list moves its tail, which made the
//! joins of a task tree's big clocks quadratic; a map's is constant, and a
//! join costs what the smaller operand names.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::{ClockRef, FxHashMap, FxHasher, ThreadIdx};

/// Thread indices below this are stored densely.
pub const DENSE: usize = 64;

/// A vector clock over dense thread indices; entries never set are 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorClock {
    /// Entries `0..entries.len()` (`len <= DENSE`).
    entries: Vec<u64>,
    /// Non-zero entries at index `DENSE` and above.
    sparse: FxHashMap<ThreadIdx, u64>,
}

impl VectorClock {
    /// The all-zero clock.
    pub const fn new() -> VectorClock {
        VectorClock {
            entries: Vec::new(),
            sparse: HashMap::with_hasher(BuildHasherDefault::<FxHasher>::new()),
        }
    }

    /// The clock read with no floors ([`ClockRef`]).
    pub fn as_ref(&self) -> ClockRef<'_> {
        static NO_FLOORS: FxHashMap<ThreadIdx, u64> =
            HashMap::with_hasher(BuildHasherDefault::<FxHasher>::new());
        ClockRef::new(self, &NO_FLOORS)
    }

    /// Entry `idx`.
    #[inline]
    pub fn get(&self, idx: ThreadIdx) -> u64 {
        match self.entries.get(idx as usize) {
            Some(&v) => v,
            None if self.sparse.is_empty() => 0,
            None => self.get_sparse(idx),
        }
    }

    #[cold]
    fn get_sparse(&self, idx: ThreadIdx) -> u64 {
        self.sparse.get(&idx).copied().unwrap_or(0)
    }

    /// Sets entry `idx` to `value`.
    pub fn set(&mut self, idx: ThreadIdx, value: u64) {
        let i = idx as usize;
        if i >= DENSE {
            if value == 0 {
                self.sparse.remove(&idx);
            } else {
                self.sparse.insert(idx, value);
            }
            return;
        }
        if i >= self.entries.len() {
            if value == 0 {
                return;
            }
            self.entries.resize(i + 1, 0);
        }
        self.entries[i] = value;
    }

    /// Entry-wise maximum with `other` (the vector-clock *union*).
    pub fn join(&mut self, other: &VectorClock) {
        if other.entries.len() > self.entries.len() {
            self.entries.resize(other.entries.len(), 0);
        }
        for (mine, theirs) in self.entries.iter_mut().zip(&other.entries) {
            *mine = (*mine).max(*theirs);
        }
        if other.sparse.is_empty() {
            return;
        }
        self.sparse.reserve(other.sparse.len());
        for (&idx, &v) in &other.sparse {
            let mine = self.sparse.entry(idx).or_insert(0);
            *mine = (*mine).max(v);
        }
    }

    /// True if every entry of `self` is `<=` the same entry of `other`
    /// (the *happens-before* comparison `self ⊑ other`).
    pub fn leq(&self, other: &VectorClock) -> bool {
        self.leq_by(|i| other.get(i))
    }

    /// True if every entry of `self` is `<=` what `other` gives for it.
    pub fn leq_by(&self, other: impl Fn(ThreadIdx) -> u64) -> bool {
        self.entries
            .iter()
            .enumerate()
            .all(|(i, v)| *v <= other(i as ThreadIdx))
            && self.sparse.iter().all(|(&i, &v)| v <= other(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_indices_are_sparse_and_behave_like_dense_ones() {
        let hi = DENSE as ThreadIdx + 20_000;
        let mut a = VectorClock::new();
        a.set(3, 2);
        a.set(hi, 5);
        a.set(hi - 7, 1);
        assert_eq!(a.entries.len(), 4, "no dense storage for high indices");
        assert_eq!(a.sparse, FxHashMap::from_iter([(hi - 7, 1), (hi, 5)]));
        assert_eq!(
            (a.get(hi), a.get(hi - 7), a.get(hi - 1), a.get(3)),
            (5, 1, 0, 2)
        );
        let mut b = VectorClock::new();
        b.set(hi, 4);
        b.set(hi + 1, 9);
        assert!(!a.leq(&b) && !b.leq(&a));
        b.join(&a);
        assert_eq!(
            b.sparse,
            FxHashMap::from_iter([(hi - 7, 1), (hi, 5), (hi + 1, 9)])
        );
        assert!(a.leq(&b));
        b.set(hi + 1, 0);
        assert_eq!(b.get(hi + 1), 0);
        assert_eq!(b.sparse.len(), 2);
        let mut c = VectorClock::new();
        c.join(&b);
        assert_eq!(c, b);
    }
}
