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

/// One core's clock table.
#[derive(Clone, Debug)]
pub struct HwClockTable {
    /// (clock, references) per entry in use.
    entries: Vec<(u64, u64)>,
    capacity: usize,
}

impl HwClockTable {
    /// An empty table of `capacity` entries.
    pub fn new(capacity: usize) -> HwClockTable {
        HwClockTable {
            entries: Vec::with_capacity(capacity),
            capacity: capacity.max(1),
        }
    }

    #[inline]
    fn position(&self, clock: u64) -> Option<usize> {
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
    }

    /// Keeps only entries for which `live` holds (the reference model's
    /// recomputed reference counts).
    pub fn collect(&mut self, live: impl Fn(u64) -> bool) {
        self.entries.retain(|e| live(e.0));
    }

    /// The clocks with an entry.
    pub fn clocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    /// Frees every entry (after a rollover evicted all metadata, or a
    /// thread switch made every record of the core invalid).
    pub fn clear(&mut self) {
        self.entries.clear();
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
}
