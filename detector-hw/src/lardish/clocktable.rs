//! The per-core clock table of RADISH §5.1: hardware metadata stores 6-bit
//! pointers into a table of full logical clocks with reference counts.
//!
//! The simulator does not maintain reference counts incrementally: when a
//! new clock needs an entry and the table is full, it recomputes which
//! entries are referenced by valid hardware-held records (the caller passes
//! them in), which frees exactly the entries whose reference count would be
//! zero. If every entry is still referenced, the table overflows and the
//! caller performs an epoch rollover.

/// One core's clock table.
#[derive(Clone, Debug)]
pub struct HwClockTable {
    entries: Vec<u64>,
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

    /// True if `clock` has an entry.
    pub fn contains(&self, clock: u64) -> bool {
        self.entries.contains(&clock)
    }

    /// True if a new clock needs a garbage collection first.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    /// Adds `clock` if there is room; returns whether it has an entry.
    #[inline]
    pub fn insert(&mut self, clock: u64) -> bool {
        // The clock inserted last is the usual one (a thread's current
        // clock on every access).
        if self.entries.last() == Some(&clock) || self.contains(clock) {
            return true;
        }
        if self.is_full() {
            return false;
        }
        self.entries.push(clock);
        true
    }

    /// Keeps only entries for which `live` holds (reference count > 0).
    pub fn collect(&mut self, live: impl Fn(u64) -> bool) {
        self.entries.retain(|c| live(*c));
    }

    /// Frees every entry (after a rollover evicted all metadata).
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
