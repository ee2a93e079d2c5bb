//! Locks held by a thread and the lockset of an object (Eraser-style
//! lockset refinement, as the object race detector applies it per object).
//!
//! A write is protected only by locks held exclusively; a read also by
//! locks held shared (a read-locked rwlock). Sets are tiny (the locks one
//! thread holds at once), so they are short vectors and refinement is an
//! in-place `retain`: no allocation on the access path.

use crate::event::{LockId, LockMode};

/// The locks one thread holds, with their mode and nesting depth.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldLocks {
    held: Vec<(LockId, LockMode, u32)>,
}

impl HeldLocks {
    /// The thread now holds `lock` in `mode` (again, if re-entrant).
    pub fn acquire(&mut self, lock: LockId, mode: LockMode) {
        match self.held.iter_mut().find(|(l, _, _)| *l == lock) {
            Some(e) => e.2 += 1,
            None => self.held.push((lock, mode, 1)),
        }
    }

    /// The thread releases `lock` once; unknown locks are ignored.
    pub fn release(&mut self, lock: LockId) {
        if let Some(i) = self.held.iter().position(|(l, _, _)| *l == lock) {
            self.held[i].2 -= 1;
            if self.held[i].2 == 0 {
                self.held.swap_remove(i);
            }
        }
    }

    /// True if the thread holds `lock` in a mode that protects an access
    /// (`write`: exclusive only).
    #[inline]
    pub fn protects(&self, lock: LockId, write: bool) -> bool {
        self.held
            .iter()
            .any(|&(l, m, _)| l == lock && (!write || m == LockMode::Exclusive))
    }

    /// The locks that protect an access (`write`: exclusive only), sorted.
    pub fn protecting(&self, write: bool) -> Vec<LockId> {
        let mut v: Vec<LockId> = self
            .held
            .iter()
            .filter(|&&(_, m, _)| !write || m == LockMode::Exclusive)
            .map(|&(l, _, _)| l)
            .collect();
        v.sort_unstable();
        v
    }

    /// True if no lock is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

/// The candidate lockset of a shared object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockSet {
    locks: Vec<LockId>,
}

impl LockSet {
    /// The lockset of an object that just became shared: the locks that
    /// protect the accessor's access.
    pub fn start(held: &HeldLocks, write: bool) -> LockSet {
        LockSet {
            locks: held.protecting(write),
        }
    }

    /// Refinement: keeps the locks `held` protects this access with.
    /// Returns true if the set is empty afterwards.
    #[inline]
    pub fn refine(&mut self, held: &HeldLocks, write: bool) -> bool {
        if !self.locks.is_empty() {
            self.locks.retain(|&l| held.protects(l, write));
        }
        self.locks.is_empty()
    }

    /// The locks, sorted.
    pub fn locks(&self) -> &[LockId] {
        &self.locks
    }

    /// True if no lock is left.
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refinement_respects_modes_and_nesting() {
        let mut h = HeldLocks::default();
        h.acquire(1, LockMode::Exclusive);
        h.acquire(2, LockMode::Shared);
        let mut read = LockSet::start(&h, false);
        assert_eq!(read.locks(), &[1, 2]);
        let write = LockSet::start(&h, true);
        assert_eq!(write.locks(), &[1]);
        // A write keeps only exclusively held locks.
        assert!(!read.refine(&h, true));
        assert_eq!(read.locks(), &[1]);
        // Re-entrant acquire: one release keeps the lock.
        h.acquire(1, LockMode::Exclusive);
        h.release(1);
        assert!(!read.refine(&h, false));
        h.release(1);
        assert!(read.refine(&h, false));
        h.release(99); // unknown: ignored
        assert!(!h.is_empty());
    }
}
