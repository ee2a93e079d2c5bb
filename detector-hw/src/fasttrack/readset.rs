//! Read vector clocks of read-shared cells: one [`ReadSet`] per cell whose
//! reads several threads made since its last write, with slot reuse.
//!
//! A set's entries are in insertion order (reports name the readers in
//! that order). Each entry is a reader's epoch as a cell holds it: the
//! thread and PC packed in one [`Who`] word (module `cell`) and the clock.
//! The first [`INLINE_READERS`] entries fill exactly one 64-byte host cache
//! line, so the read-shared path (a read of such a cell: find the reader's
//! entry, set it) costs one host cache miss besides the cell's. Sets that
//! outgrow the line *spill*: their entries move to a side table and the
//! line holds only the spill's index.

use super::cell::{Cell, Who, Wide, WHO_SHARED};

/// Entries a set holds in its cache line before it spills.
pub(super) const INLINE_READERS: usize = 4;

/// One entry of a read vector clock: a reader's thread and PC packed as in
/// a cell, and the clock of its read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ReadEntry {
    /// Thread and PC ([`Wide::pack`]); 0 in an unused inline entry.
    pub(super) who: Who,
    /// The read's clock.
    pub(super) clock: u64,
}

/// Entry 0's `who` of a spilled set (never an epoch's word); its `clock`
/// is the index of the entries in [`ReadClocks`]' spill table.
const SPILLED: Who = WHO_SHARED;

/// One read vector clock in one host cache line: up to
/// [`INLINE_READERS`] entries, the used ones first, or a spill index.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct ReadSet([ReadEntry; INLINE_READERS]);

impl ReadSet {
    /// Entries used in place (not for a spilled set).
    #[inline]
    fn len(&self) -> usize {
        self.0.iter().take_while(|e| e.who != 0).count()
    }

    /// The spill index, if the set spilled.
    #[inline]
    fn spill(&self) -> Option<usize> {
        (self.0[0].who == SPILLED).then_some(self.0[0].clock as usize)
    }
}

/// The read vector clocks of a FastTrack shadow, indexed by the `r_clock`
/// of read-shared cells.
#[derive(Clone, Debug, Default)]
pub(super) struct ReadClocks {
    sets: Vec<ReadSet>,
    free: Vec<u64>,
    /// Entries of spilled sets.
    spills: Vec<Vec<ReadEntry>>,
    free_spills: Vec<usize>,
}

impl ReadClocks {
    /// A new set holding `entries` (in order); returns its index.
    pub(super) fn alloc(&mut self, entries: &[ReadEntry]) -> u64 {
        let set = if entries.len() <= INLINE_READERS {
            let mut set = ReadSet::default();
            set.0[..entries.len()].copy_from_slice(entries);
            set
        } else {
            self.spilled(entries.to_vec())
        };
        match self.free.pop() {
            Some(i) => {
                self.sets[i as usize] = set;
                i
            }
            None => {
                self.sets.push(set);
                (self.sets.len() - 1) as u64
            }
        }
    }

    /// A set whose entries are `entries`, in the spill table.
    #[cold]
    #[inline(never)]
    fn spilled(&mut self, entries: Vec<ReadEntry>) -> ReadSet {
        let k = match self.free_spills.pop() {
            Some(k) => {
                self.spills[k] = entries;
                k
            }
            None => {
                self.spills.push(entries);
                self.spills.len() - 1
            }
        };
        let mut set = ReadSet::default();
        set.0[0] = ReadEntry {
            who: SPILLED,
            clock: k as u64,
        };
        set
    }

    /// Frees set `i`.
    pub(super) fn release(&mut self, i: u64) {
        let Some(set) = self.sets.get_mut(i as usize) else {
            return;
        };
        if let Some(k) = set.spill() {
            self.spills[k] = Vec::new();
            self.free_spills.push(k);
        }
        *set = ReadSet::default();
        self.free.push(i);
    }

    /// Set `i`'s entries, in insertion order.
    pub(super) fn get(&self, i: u64) -> &[ReadEntry] {
        let Some(set) = self.sets.get(i as usize) else {
            return &[];
        };
        match set.spill() {
            Some(k) => &self.spills[k],
            None => &set.0[..set.len()],
        }
    }

    /// Sets the entry of `me`'s thread in set `i` to `me` at `clock`
    /// (appending it if the thread has none); returns the entries visited.
    #[inline(always)]
    pub(super) fn set(&mut self, i: u64, wide: &Wide, me: Who, clock: u64) -> usize {
        // The common case: a thread with a direct code (module `cell`), whose
        // entry, if any, carries the same code, in a set that did not spill.
        if let (Some(set), Some(code)) = (self.sets.get_mut(i as usize), Wide::direct_code(me)) {
            if set.0[0].who != SPILLED {
                for (k, e) in set.0.iter_mut().enumerate() {
                    if e.who == 0 || Wide::code(e.who) == code {
                        *e = ReadEntry { who: me, clock };
                        return k + 1;
                    }
                }
            }
        }
        self.set_slow(i, wide, me, clock)
    }

    /// [`ReadClocks::set`] for any reader and set: spilled sets, a fifth
    /// reader, big and wide epochs.
    #[cold]
    #[inline(never)]
    fn set_slow(&mut self, i: u64, wide: &Wide, me: Who, clock: u64) -> usize {
        let Some(set) = self.sets.get_mut(i as usize) else {
            return 0;
        };
        if let Some(k) = set.spill() {
            return Self::set_in(&mut self.spills[k], wide, me, clock);
        }
        for (k, e) in set.0.iter_mut().enumerate() {
            if e.who == 0 || wide.same_thread(e.who, me) {
                *e = ReadEntry { who: me, clock };
                return k + 1;
            }
        }
        self.spill_with(i as usize, ReadEntry { who: me, clock })
    }

    /// Spills full in-place set `i` with a new last entry `e`; returns the
    /// entries it then has.
    #[cold]
    #[inline(never)]
    fn spill_with(&mut self, i: usize, e: ReadEntry) -> usize {
        let mut entries = self.sets[i].0.to_vec();
        entries.push(e);
        let n = entries.len();
        self.sets[i] = self.spilled(entries);
        n
    }

    /// [`ReadClocks::set`] on a spilled set's entries.
    #[cold]
    #[inline(never)]
    fn set_in(entries: &mut Vec<ReadEntry>, wide: &Wide, me: Who, clock: u64) -> usize {
        let e = ReadEntry { who: me, clock };
        match entries.iter().position(|x| wide.same_thread(x.who, me)) {
            Some(k) => {
                entries[k] = e;
                k + 1
            }
            None => {
                entries.push(e);
                entries.len()
            }
        }
    }

    /// A copy of `cell` whose read vector clock (if any) is a fresh copy.
    pub(super) fn duplicate(&mut self, cell: Cell) -> Cell {
        if !cell.is_shared() {
            return cell;
        }
        let entries = self.get(cell.r_clock).to_vec();
        Cell {
            r_clock: self.alloc(&entries),
            ..cell
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_their_order_in_place_and_spilled() {
        assert_eq!(std::mem::size_of::<ReadSet>(), 64);
        assert_eq!(std::mem::align_of::<ReadSet>(), 64);
        let mut wide = Wide::default();
        let mut always = Wide::always_wide();
        for wide in [&mut wide, &mut always] {
            let mut r = ReadClocks::default();
            let who: Vec<Who> = (0..9)
                .map(|t| wide.pack(t, 0x1000 + u64::from(t)))
                .collect();
            let e = |t: usize, clock: u64| ReadEntry { who: who[t], clock };
            let i = r.alloc(&[e(0, 1), e(1, 2)]);
            assert_eq!(r.get(i), &[e(0, 1), e(1, 2)]);
            let mut want = vec![e(0, 1), e(1, 2)];
            for (t, &w) in who.iter().enumerate().skip(2) {
                assert_eq!(r.set(i, wide, w, 10), t + 1, "a new reader goes last");
                want.push(e(t, 10));
                assert_eq!(r.get(i), &want[..]);
            }
            // A thread's entry is replaced in place, with its new PC.
            let again = wide.pack(3, 0x2000);
            assert_eq!(r.set(i, wide, again, 11), 4);
            want[3] = ReadEntry {
                who: again,
                clock: 11,
            };
            assert_eq!(r.get(i), &want[..]);
            // Freed sets and spills are reused; a fresh set is empty.
            let j = r.alloc(&want[..3]);
            let d = r.duplicate(Cell {
                r: WHO_SHARED,
                r_clock: i,
                ..super::super::EMPTY
            });
            assert_eq!(r.get(d.r_clock), &want[..]);
            r.release(i);
            r.release(d.r_clock);
            assert_eq!(r.alloc(&want), d.r_clock);
            assert_eq!(r.spills.len(), 2);
            assert_eq!(r.alloc(&[]), i);
            assert!(r.get(i).is_empty());
            assert_eq!(r.get(j), &want[..3]);
        }
    }
}
