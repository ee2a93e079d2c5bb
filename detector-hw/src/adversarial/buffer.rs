//! A monitored location's write buffer and the [READ] rule's visible set.

use crate::clock::{ClockRef, VectorClock};
use std::collections::VecDeque;
use std::rc::Rc;

/// Largest write buffer (the visible-set computation keeps one bit per entry).
pub const MAX_ENTRIES: usize = 64;

/// One write: the value and the writer's vector clock (`None` is ⊥, the
/// clock of the value memory held when monitoring began).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value written (little-endian bytes of the location).
    pub value: u64,
    /// The writer's vector clock at the write; `None` is ⊥. Shared by the
    /// writes a thread makes between two changes of its clock.
    pub clock: Option<Rc<VectorClock>>,
}

/// `a ⊑ b` with ⊥ below everything.
#[inline]
fn leq(a: &Option<Rc<VectorClock>>, b: &Option<Rc<VectorClock>>) -> bool {
    match (a, b) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(a), Some(b)) => Rc::ptr_eq(a, b) || a.leq(b),
    }
}

/// The write buffer `v1@K1 · … · vn@Kn` of one location (oldest first),
/// never empty, with what the heuristics remember about past reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBuffer {
    size: u32,
    entries: VecDeque<Entry>,
    last_read: Option<u64>,
    stale_streak: u32,
}

impl WriteBuffer {
    /// A buffer for a `size`-byte location holding `initial` at ⊥.
    pub fn new(size: u32, initial: u64) -> WriteBuffer {
        let mut entries = VecDeque::with_capacity(4);
        entries.push_back(Entry {
            value: initial,
            clock: None,
        });
        WriteBuffer {
            size,
            entries,
            last_read: None,
            stale_streak: 0,
        }
    }

    /// The location's size in bytes.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Number of entries (at least 1).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Always false: a buffer holds at least its initial entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i` (0 is the oldest). Panics if out of range.
    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    /// The value last returned by a read of this location, if any.
    pub fn last_read(&self) -> Option<u64> {
        self.last_read
    }

    /// Consecutive reads that returned a value other than the latest.
    pub fn stale_streak(&self) -> u32 {
        self.stale_streak
    }

    /// Records that a read returned `value` (`latest`: the newest entry's).
    pub fn note_read(&mut self, value: u64, latest: bool) {
        self.last_read = Some(value);
        self.stale_streak = if latest { 0 } else { self.stale_streak + 1 };
    }

    /// Appends `value@clock` ([WRITE]); applies [GC2] (an earlier entry
    /// with the same value and clock is redundant) and, past `capacity`
    /// entries (at most [`MAX_ENTRIES`]), [REMOVE OLDEST]. Returns true if an
    /// entry was evicted.
    pub fn push(&mut self, value: u64, clock: Option<Rc<VectorClock>>, capacity: usize) -> bool {
        self.entries
            .retain(|e| !(e.value == value && e.clock == clock));
        self.entries.push_back(Entry { value, clock });
        if self.entries.len() > capacity.clamp(1, MAX_ENTRIES) {
            self.entries.pop_front();
            true
        } else {
            false
        }
    }

    /// The visible set of a read at clock `now` ([READ]): the indices `i`
    /// such that no later entry `j` has `Ki ⊑ Kj ⊑ now`, oldest first, into
    /// `out` (cleared first). Always ends with the newest entry.
    pub fn visible(&self, now: ClockRef<'_>, out: &mut Vec<usize>) {
        out.clear();
        let n = self.entries.len().min(MAX_ENTRIES);
        // Bit j: entry j happens before the read (Kj ⊑ now).
        let mut before_now = 0u64;
        for (j, e) in self.entries.iter().take(n).enumerate() {
            if e.clock.as_ref().is_none_or(|k| k.leq_by(|i| now.get(i))) {
                before_now |= 1 << j;
            }
        }
        for i in 0..n {
            let ki = &self.entries[i].clock;
            let mut later = before_now & !((2u64 << i) - 1);
            let mut hidden = false;
            while later != 0 {
                let j = later.trailing_zeros() as usize;
                later &= later - 1;
                if leq(ki, &self.entries[j].clock) {
                    hidden = true;
                    break;
                }
            }
            if !hidden {
                out.push(i);
            }
        }
    }
}
