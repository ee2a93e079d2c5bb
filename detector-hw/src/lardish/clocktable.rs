//! The per-core clock table of RADISH §5.1: hardware metadata stores 6-bit
//! pointers into a table of full logical clocks with reference counts.
//!
//! Each entry counts the valid hardware records (per byte) that point to it,
//! kept incrementally as RADISH's hardware keeps them: a record stored in
//! hardware adds a reference ([`HwClockTable::add_ref`]); a record
//! overwritten, or whose metadata line leaves the hierarchy, releases one
//! ([`HwClockTable::release`]). When a new clock needs an entry and the
//! table is full, the entries with no reference are freed
//! ([`HwClockTable::collect_unreferenced`]); if none is free, the caller
//! performs an epoch rollover. [`HwClockTable::collect`] frees by a set of
//! live clocks computed by the caller instead (the reference model, which
//! recomputes them by scanning the records).
//!
//! **Merged entries** ([`HwClockTable::merge`]): before rolling over, the
//! software manager may merge entries into one that holds the greatest of
//! their clocks and stands for the range from the least to the greatest.
//! A clock in a merged range uses that entry; hardware compares it as the
//! entry's clock ([`HwClockTable::hw_clock`]), which is never below the
//! record's own, so hardware may find it unordered where it is ordered,
//! never the reverse.

/// One core's clock table.
#[derive(Clone, Debug)]
pub struct HwClockTable {
    /// (clock, references) per entry in use.
    entries: Vec<(u64, u64)>,
    /// The merged entries' ranges (least clock, the entry's clock), sorted.
    merged: Vec<(u64, u64)>,
    capacity: usize,
}

impl HwClockTable {
    /// An empty table of `capacity` entries.
    pub fn new(capacity: usize) -> HwClockTable {
        HwClockTable {
            entries: Vec::with_capacity(capacity),
            merged: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// The clock hardware compares for a record of clock `clock`: the
    /// clock of the merged entry whose range holds it, else its own.
    #[inline]
    pub fn hw_clock(&self, clock: u64) -> u64 {
        if self.merged.is_empty() {
            return clock;
        }
        let i = self.merged.partition_point(|r| r.1 < clock);
        match self.merged.get(i) {
            Some(&(lo, hi)) if lo <= clock => hi,
            _ => clock,
        }
    }

    /// True if some entry is merged.
    pub fn has_merged(&self) -> bool {
        !self.merged.is_empty()
    }

    #[inline]
    fn position(&self, clock: u64) -> Option<usize> {
        let clock = self.hw_clock(clock);
        // The clock inserted last is the usual one (a thread's current
        // clock on every access).
        let last = self.entries.len().checked_sub(1)?;
        if self.entries[last].0 == clock {
            return Some(last);
        }
        self.entries.iter().position(|e| e.0 == clock)
    }

    /// True if `clock` has an entry.
    pub fn contains(&self, clock: u64) -> bool {
        self.position(clock).is_some()
    }

    /// True if a new clock needs a garbage collection first.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    /// Adds `clock` if there is room; returns whether it has an entry.
    #[inline]
    pub fn insert(&mut self, clock: u64) -> bool {
        if self.position(clock).is_some() {
            return true;
        }
        if self.is_full() {
            return false;
        }
        self.entries.push((clock, 0));
        true
    }

    /// `n` more valid records point to `clock`'s entry (which must exist;
    /// ignored otherwise).
    #[inline]
    pub fn add_ref(&mut self, clock: u64, n: u64) {
        if let Some(i) = self.position(clock) {
            self.entries[i].1 += n;
        } else {
            debug_assert!(false, "a record stored with clock {clock} has no entry");
        }
    }

    /// `n` valid records pointing to `clock`'s entry are gone.
    #[inline]
    pub fn release(&mut self, clock: u64, n: u64) {
        if let Some(i) = self.position(clock) {
            let e = &mut self.entries[i].1;
            debug_assert!(*e >= n, "clock {clock}: releasing {n} of {e} references");
            *e = e.saturating_sub(n);
        }
    }

    /// The references of `clock`'s entry (0 without one).
    pub fn references(&self, clock: u64) -> u64 {
        self.position(clock).map_or(0, |i| self.entries[i].1)
    }

    /// Frees the entries no valid record points to (reference count 0).
    pub fn collect_unreferenced(&mut self) {
        self.entries.retain(|e| e.1 > 0);
        self.keep_merged();
    }

    /// Keeps only entries for which `live` holds (the reference model's
    /// recomputed reference counts: for a merged entry, `live` of its
    /// clock must say whether a live record's clock lies in its range,
    /// [`HwClockTable::range`]).
    pub fn collect(&mut self, live: impl Fn(u64) -> bool) {
        self.entries.retain(|e| live(e.0));
        self.keep_merged();
    }

    /// Forgets the ranges of merged entries that were freed.
    fn keep_merged(&mut self) {
        if self.merged.is_empty() {
            return;
        }
        let entries = &self.entries;
        self.merged.retain(|r| entries.iter().any(|e| e.0 == r.1));
    }

    /// The range of clocks entry `clock` stands for (itself unless merged).
    pub fn range(&self, clock: u64) -> (u64, u64) {
        match self.merged.binary_search_by_key(&clock, |r| r.1) {
            Ok(i) => self.merged[i],
            Err(_) => (clock, clock),
        }
    }

    /// Merges entries whose clocks fall in the same class of `class` (a
    /// function that never decreases) and are adjacent in clock order,
    /// each group into one entry holding its greatest clock, its range
    /// from its least clock, and the sum of its references; returns how
    /// many entries that freed.
    pub fn merge(&mut self, class: impl Fn(u64) -> usize) -> usize {
        let mut sorted: Vec<(u64, u64, u64)> = self
            .entries
            .iter()
            .map(|&(v, refs)| (self.range(v).0, v, refs))
            .collect();
        sorted.sort_unstable_by_key(|e| e.1);
        let before = sorted.len();
        let mut out: Vec<(u64, u64, u64)> = Vec::with_capacity(before);
        for e in sorted {
            match out.last_mut() {
                Some(last) if class(last.1) == class(e.1) => {
                    last.1 = e.1;
                    last.2 += e.2;
                }
                _ => out.push(e),
            }
        }
        self.entries = out.iter().map(|&(_, v, refs)| (v, refs)).collect();
        self.merged = out
            .iter()
            .filter(|e| e.0 < e.1)
            .map(|&(lo, hi, _)| (lo, hi))
            .collect();
        before - out.len()
    }

    /// The clocks with an entry.
    pub fn clocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    /// Frees every entry (after a rollover evicted all metadata, or a
    /// thread switch made every record of the core invalid).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.merged.clear();
    }

    /// Entries in use.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if no entry is in use.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unreferenced_entries_are_collected() {
        let mut t = HwClockTable::new(3);
        assert!(t.insert(5) && t.insert(6) && t.insert(7));
        assert!(!t.insert(8), "full");
        t.add_ref(5, 4);
        t.add_ref(7, 1);
        t.release(5, 1);
        assert_eq!(t.references(5), 3);
        t.collect_unreferenced();
        assert_eq!(t.clocks().collect::<Vec<_>>(), vec![5, 7]);
        assert!(t.insert(8));
        t.release(7, 1);
        t.collect_unreferenced();
        assert_eq!(t.clocks().collect::<Vec<_>>(), vec![5]);
    }

    /// Merging entries of one class keeps every comparison hardware makes
    /// against the thresholds the classes came from, and never makes
    /// hardware find ordered a clock that is not (table-driven over random
    /// tables, thresholds and later thresholds).
    #[test]
    fn merged_entries_compare_as_their_clocks() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        for _ in 0..500 {
            let cap = 2 + next(12) as usize;
            let mut t = HwClockTable::new(cap);
            let mut clocks = Vec::new();
            while !t.is_full() {
                let v = 1 + next(200);
                if t.insert(v) && !clocks.contains(&v) {
                    clocks.push(v);
                    t.add_ref(v, 1 + next(3));
                }
            }
            let refs: u64 = clocks.iter().map(|&v| t.references(v)).sum::<u64>();
            let mut seen: Vec<u64> = (0..next(5)).map(|_| next(220)).collect();
            seen.sort_unstable();
            let freed = t.merge(|v| seen.partition_point(|&e| e < v));
            assert_eq!(t.len() + freed, cap);
            // Every clock keeps an entry, references are kept.
            assert!(clocks.iter().all(|&v| t.contains(v)));
            let mut sum = 0;
            for v in t.clocks() {
                sum += t.references(v);
            }
            assert_eq!(sum, refs);
            for &v in &clocks {
                let hw = t.hw_clock(v);
                assert!(hw >= v, "a merged entry is never below its clocks");
                for &e in &seen {
                    assert_eq!(hw <= e, v <= e, "clock {v} as {hw} against {e}");
                }
                // Against a later threshold hardware may only be stricter.
                let later = next(220);
                assert!(hw > later || v <= later);
            }
            // A clock inside a merged range uses that entry; releasing
            // everything frees every entry.
            for &v in &clocks {
                let n = t.references(v);
                let own = clocks
                    .iter()
                    .filter(|&&w| t.hw_clock(w) == t.hw_clock(v))
                    .count() as u64;
                assert!(n >= own);
            }
            let entries: Vec<u64> = t.clocks().collect();
            for v in entries {
                let n = t.references(v);
                t.release(v, n);
            }
            t.collect_unreferenced();
            assert!(t.is_empty() && !t.has_merged());
            assert_eq!(t.hw_clock(7), 7);
        }
    }
}
