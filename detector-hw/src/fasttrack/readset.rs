//! One read vector clock of a read-shared cell: its entries in insertion
//! order, the first [`INLINE_READERS`] kept in place.
//!
//! The read-shared path (a read of a cell several threads read since its
//! last write) finds the reading thread's entry: with the entries in place
//! that is one host cache miss on the set (two adjacent lines) instead of
//! one on a `Vec` header and another on its heap buffer. Sets that outgrow
//! the inline room move to the heap and behave as before.

use super::ReadEntry;

/// Entries a set holds before it moves to the heap.
pub const INLINE_READERS: usize = 4;

const NO_ENTRY: ReadEntry = ReadEntry {
    tid: 0,
    clock: 0,
    pc: 0,
};

/// A read vector clock: entries in insertion order.
#[derive(Clone, Debug)]
pub enum ReadSet {
    /// Up to [`INLINE_READERS`] entries, the first `len` used.
    Inline {
        /// Entries used.
        len: u8,
        /// The entries.
        entries: [ReadEntry; INLINE_READERS],
    },
    /// More entries than fit in place.
    Heap(Vec<ReadEntry>),
}

impl Default for ReadSet {
    fn default() -> ReadSet {
        ReadSet::Inline {
            len: 0,
            entries: [NO_ENTRY; INLINE_READERS],
        }
    }
}

impl ReadSet {
    /// The entries, in insertion order.
    #[inline]
    pub fn as_slice(&self) -> &[ReadEntry] {
        match self {
            ReadSet::Inline { len, entries } => &entries[..*len as usize],
            ReadSet::Heap(v) => v,
        }
    }

    /// The entries, mutable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [ReadEntry] {
        match self {
            ReadSet::Inline { len, entries } => &mut entries[..*len as usize],
            ReadSet::Heap(v) => v,
        }
    }

    /// Appends an entry.
    #[inline]
    pub fn push(&mut self, e: ReadEntry) {
        match self {
            ReadSet::Inline { len, entries } if (*len as usize) < INLINE_READERS => {
                entries[*len as usize] = e;
                *len += 1;
            }
            ReadSet::Inline { entries, .. } => {
                let mut v = Vec::with_capacity(2 * INLINE_READERS);
                v.extend_from_slice(entries);
                v.push(e);
                *self = ReadSet::Heap(v);
            }
            ReadSet::Heap(v) => v.push(e),
        }
    }

    /// Appends entries.
    pub fn extend_from_slice(&mut self, es: &[ReadEntry]) {
        for &e in es {
            self.push(e);
        }
    }

    /// Removes every entry (back in place).
    pub fn clear(&mut self) {
        *self = ReadSet::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(tid: u32) -> ReadEntry {
        ReadEntry {
            tid: tid as _,
            clock: u64::from(tid) * 10,
            pc: u64::from(tid) + 0x1000,
        }
    }

    #[test]
    fn entries_keep_their_order_in_place_and_on_the_heap() {
        let mut s = ReadSet::default();
        assert!(s.as_slice().is_empty());
        let want: Vec<ReadEntry> = (1..=9).map(e).collect();
        for (k, &x) in want.iter().enumerate() {
            s.push(x);
            assert_eq!(s.as_slice(), &want[..=k]);
            assert_eq!(
                matches!(s, ReadSet::Inline { .. }),
                k < INLINE_READERS,
                "{k}"
            );
        }
        s.as_mut_slice()[2].clock = 99;
        assert_eq!(s.as_slice()[2].clock, 99);
        s.clear();
        assert!(s.as_slice().is_empty());
        s.extend_from_slice(&want[..2]);
        assert_eq!(s.as_slice(), &want[..2]);
    }
}
