//! FastTrack's shadow page: one cell per *access unit* instead of one per
//! byte, with an exact per-byte fallback.
//!
//! A page is 512 granules of 8 bytes. Each granule has a unit size `u` (8,
//! 4, 2 or 1): its bytes form `8 / u` aligned units, and every byte of a
//! unit has the same access history, held once. A fresh page has 8-byte
//! units of the empty history.
//!
//! Storage is dense, so that the host caches and TLB hold the histories of
//! as much data as possible: the first unit of every granule lives in an
//! array of one cell per granule (4 shadow bytes per data byte when
//! granules keep 8-byte units, against 32 for a cell per byte); the other
//! `8 / u - 1` units of a split granule live in a block of that many cells
//! in the page's side arena (blocks of 1, 3 or 7 cells, reused through one
//! free list per size). A granule's unit size and block index share one
//! 32-bit word, so finding a unit's cell loads one word besides the cell.
//!
//! An access visits each unit it covers once, counting it as `u` bytes
//! ([`super::FtWork::cells`] is the per-byte work; [`super::FtWork::units`]
//! counts the cells visited, what the LARDISH cost models charge): a
//! per-byte detector would apply the same rule to `u` identical cells,
//! with identical outcomes and the same earlier accesses (the race
//! collector deduplicates them). An access
//! that covers only part of a unit first *splits* the granule into the
//! largest units that its bytes cover whole (a 1-byte access: 1-byte units),
//! copying each cell into the new units' slots (a read-shared history gets
//! its own copy of the read vector clock per unit, as it has per byte). A
//! write of a whole granule leaves its units identical and makes it one
//! 8-byte unit again; so does a ClearHistory of the whole granule.
//!
//! The common access — aligned, of size 1, 2, 4 or 8, always made with the
//! same size — therefore touches one 32-byte cell instead of one per byte:
//! on pigz, 3.8 cells per checked access become about one.
//!
//! *Compact byte granules.* A granule split into 1-byte units whose units
//! all hold the same last write (what splitting a larger unit gives: a
//! granule written whole, then read a byte at a time, as a byte stream or a
//! pixel row is) keeps that write once: its first cell holds the write and
//! byte 0's reads, and a block of 7 [`ReadHalf`]s (16 bytes each, in the
//! page's second arena) holds the reads of bytes 1–7: 144 shadow bytes for
//! the granule instead of 256. A read of such a byte checks the granule's
//! write and updates the byte's reads, exactly as on its own cell; the
//! first write to the granule *expands* it into ordinary 1-byte units (the
//! write is then checked and recorded per byte as before, and a whole
//! granule write merges it as above). Every byte's history, and so every
//! verdict, report and [`super::FtWork`], is the one of the 8-cell layout.
//!
//! [`UnitPage::per_byte`] pages never leave 1-byte units: the
//! straightforward per-byte shadow, which the differential tests compare
//! with this one.

use super::{Cell, ReadClocks, Who, EMPTY};
use crate::shadow::PAGE_SIZE;

/// Bytes per granule (the largest unit).
pub(super) const GRANULE: usize = 8;
/// Granules per page.
const GRANULES: usize = PAGE_SIZE as usize / GRANULE;

/// One 4 KiB page of FastTrack shadow memory; see the module docs.
#[derive(Clone, Debug)]
pub(super) struct UnitPage {
    /// Each granule's unit size (1, 2, 4 or 8; low 4 bits) and, above
    /// them, its block in `rest` (unused for 8-byte units): one load finds
    /// both.
    meta: Box<[u32]>,
    /// The history of each granule's first unit.
    first: Box<[Cell]>,
    /// Blocks of the other units of split granules, in unit order.
    rest: Vec<Cell>,
    /// Free blocks of 1, 3 and 7 cells (indexed by [`class`]).
    free: [Vec<u32>; 3],
    /// The reads of bytes 1–7 of compact byte granules, in blocks of 7.
    halves: Vec<ReadHalf>,
    /// Free blocks of `halves`.
    free_halves: Vec<u32>,
    /// Whether granules may hold units larger than a byte.
    coarse: bool,
}

/// The reads of one byte of a compact byte granule (module docs): a
/// [`Cell`]'s `r_clock` and `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub(super) struct ReadHalf {
    r_clock: u64,
    r: Who,
}

/// The reads of an empty history.
const NO_READS: ReadHalf = ReadHalf { r_clock: 0, r: 0 };

/// Bits of a granule's `meta` below its block index: the unit size (low 4
/// bits) and [`COMPACT`].
const META_BLOCK_SHIFT: u32 = 5;
/// `meta` flag of a compact byte granule (1-byte units; its block is in
/// `halves`).
const COMPACT: u32 = 1 << 4;
/// Mask of the unit size in `meta`.
const UNIT_MASK: u32 = COMPACT - 1;

/// The `meta` word of a granule with `u`-byte units and block `b`.
#[inline]
fn meta(u: usize, b: u32) -> u32 {
    b << META_BLOCK_SHIFT | u as u32
}

/// The largest unit size (≤ 8) that divides both `lo` and `hi`: the units a
/// granule needs for bytes `lo..hi` to be whole units.
#[inline]
fn unit_for(lo: usize, hi: usize) -> usize {
    1 << (lo | hi | GRANULE).trailing_zeros()
}

/// The free-list index of the blocks of a granule with `u`-byte units
/// (`u < 8`): blocks of `8 / u - 1` cells.
#[inline]
fn class(u: usize) -> usize {
    2 - u.trailing_zeros() as usize
}

impl UnitPage {
    /// An empty page with 8-byte units.
    pub(super) fn coarse() -> UnitPage {
        UnitPage {
            meta: vec![meta(GRANULE, 0); GRANULES].into_boxed_slice(),
            first: vec![EMPTY; GRANULES].into_boxed_slice(),
            rest: Vec::new(),
            free: Default::default(),
            halves: Vec::new(),
            free_halves: Vec::new(),
            coarse: true,
        }
    }

    /// An empty page that keeps one cell per byte (the reference layout).
    pub(super) fn per_byte() -> UnitPage {
        let rest = GRANULE - 1;
        UnitPage {
            meta: (0..GRANULES).map(|g| meta(1, (g * rest) as u32)).collect(),
            first: vec![EMPTY; GRANULES].into_boxed_slice(),
            rest: vec![EMPTY; GRANULES * rest],
            free: Default::default(),
            halves: Vec::new(),
            free_halves: Vec::new(),
            coarse: false,
        }
    }

    /// Unit size of granule `g`.
    #[inline]
    fn unit_size(&self, g: usize) -> usize {
        (self.meta[g] & UNIT_MASK) as usize
    }

    /// True if granule `g` is a compact byte granule (module docs).
    #[inline]
    pub(super) fn is_compact(&self, g: usize) -> bool {
        self.meta[g] & COMPACT != 0
    }

    /// The history of byte `at` (1–7) of compact granule `g`, as a cell:
    /// the granule's write and the byte's reads (byte 0's cell is
    /// [`UnitPage::cell_mut`]'s).
    #[inline]
    pub(super) fn compact_cell(&self, g: usize, at: usize) -> Cell {
        let half = self.halves[(self.meta[g] >> META_BLOCK_SHIFT) as usize + at - 1];
        Cell {
            r_clock: half.r_clock,
            r: half.r,
            ..self.first[g]
        }
    }

    /// Stores the reads of `cell`, the history of byte `at` (1–7) of
    /// compact granule `g` after a read, when they changed (a repeated
    /// read leaves the line clean).
    #[inline]
    pub(super) fn set_compact_reads(&mut self, g: usize, at: usize, cell: &Cell) {
        let half = &mut self.halves[(self.meta[g] >> META_BLOCK_SHIFT) as usize + at - 1];
        if cell.r != half.r || cell.r_clock != half.r_clock {
            *half = ReadHalf {
                r_clock: cell.r_clock,
                r: cell.r,
            };
        }
    }

    /// Turns compact granule `g` into ordinary 1-byte units (each byte's
    /// cell: the granule's write and the byte's reads, whose read vector
    /// clocks it takes over). No-op for other granules.
    #[cold]
    pub(super) fn expand(&mut self, g: usize) {
        if !self.is_compact(g) {
            return;
        }
        let hb = (self.meta[g] >> META_BLOCK_SHIFT) as usize;
        let b = self.alloc(1) as usize;
        let first = self.first[g];
        for k in 1..GRANULE {
            let h = self.halves[hb + k - 1];
            self.rest[b + k - 1] = Cell {
                r_clock: h.r_clock,
                r: h.r,
                ..first
            };
        }
        self.free_halves.push(hb as u32);
        self.meta[g] = meta(1, b as u32);
    }

    /// A free block of 7 [`ReadHalf`]s.
    fn alloc_halves(&mut self) -> u32 {
        if let Some(b) = self.free_halves.pop() {
            return b;
        }
        let b = self.halves.len() as u32;
        self.halves
            .resize(self.halves.len() + GRANULE - 1, NO_READS);
        b
    }

    /// Makes bytes `lo..hi` of granule `g` (`0 <= lo < hi <= 8`) whole
    /// units, splitting its units if needed, and returns the unit size.
    #[inline]
    pub(super) fn units_covering(
        &mut self,
        g: usize,
        lo: usize,
        hi: usize,
        reads: &mut ReadClocks,
    ) -> usize {
        let cur = self.unit_size(g);
        let need = unit_for(lo, hi);
        if need >= cur {
            return cur;
        }
        self.split(g, need, reads);
        need
    }

    /// A free block for a granule with `u`-byte units (`u < 8`).
    fn alloc(&mut self, u: usize) -> u32 {
        if let Some(b) = self.free[class(u)].pop() {
            return b;
        }
        let b = self.rest.len() as u32;
        self.rest.resize(self.rest.len() + GRANULE / u - 1, EMPTY);
        b
    }

    /// Gives granule `g`'s block back (its units must own no read vector
    /// clock any more, or have handed them on).
    fn release_block(&mut self, g: usize) {
        let u = self.unit_size(g);
        if self.is_compact(g) {
            self.free_halves.push(self.meta[g] >> META_BLOCK_SHIFT);
        } else if u < GRANULE {
            self.free[class(u)].push(self.meta[g] >> META_BLOCK_SHIFT);
        }
    }

    /// Splits granule `g` into units of `to` bytes (smaller than its
    /// current units): every new unit gets a copy of its old unit's history.
    #[cold]
    fn split(&mut self, g: usize, to: usize, reads: &mut ReadClocks) {
        let cur = self.unit_size(g);
        let mut old = [EMPTY; GRANULE];
        for (k, cell) in old.iter_mut().enumerate().take(GRANULE / cur) {
            *cell = *self.unit(g, k * cur);
        }
        self.release_block(g);
        let units = &old[..GRANULE / cur];
        if self.coarse
            && to == 1
            && units
                .iter()
                .all(|c| c.w == old[0].w && c.w_clock == old[0].w_clock)
        {
            // One write for all bytes: a compact byte granule. Byte 0's
            // cell is `first[g]`, unchanged.
            let b = self.alloc_halves() as usize;
            self.meta[g] = meta(1, b as u32) | COMPACT;
            for at in 1..GRANULE {
                let from = old[at / cur];
                let cell = if at % cur == 0 {
                    from
                } else {
                    reads.duplicate(from)
                };
                self.halves[b + at - 1] = ReadHalf {
                    r_clock: cell.r_clock,
                    r: cell.r,
                };
            }
            return;
        }
        let b = self.alloc(to) as usize;
        self.meta[g] = meta(to, b as u32);
        for at in (to..GRANULE).step_by(to) {
            let from = old[at / cur];
            // The first copy of an old unit keeps its read vector clock.
            let cell = if at % cur == 0 {
                from
            } else {
                reads.duplicate(from)
            };
            self.rest[b + at / to - 1] = cell;
        }
    }

    /// The cell of the unit starting at byte `at` of granule `g`.
    #[inline]
    fn unit(&mut self, g: usize, at: usize) -> &mut Cell {
        if at == 0 {
            return &mut self.first[g];
        }
        debug_assert!(
            !self.is_compact(g),
            "a compact granule has no cell per byte"
        );
        // `u` is a power of two: a shift, not a division.
        let m = self.meta[g];
        let shift = m.trailing_zeros();
        let i = (m >> META_BLOCK_SHIFT) as usize + (at >> shift) - 1;
        &mut self.rest[i]
    }

    /// The cell of bytes `start..end` (page offsets) and its unit size, if
    /// they are exactly one unit of a granule that is not compact: the
    /// common access, which needs no split.
    #[inline]
    pub(super) fn whole_unit(&mut self, start: usize, end: usize) -> Option<(&mut Cell, usize)> {
        let (g, lo) = (start / GRANULE, start % GRANULE);
        let m = *self.meta.get(g)?;
        let u = (m & UNIT_MASK) as usize;
        if m & COMPACT != 0 || end - start != u || lo & (u - 1) != 0 {
            return None;
        }
        Some((self.unit(g, lo), u))
    }

    /// The cell of the unit whose first byte is page offset `off`.
    #[inline]
    pub(super) fn cell_mut(&mut self, off: usize) -> &mut Cell {
        self.unit(off / GRANULE, off % GRANULE)
    }

    /// Granule `g`'s unit word, read-only (for a prefetch hint).
    #[inline]
    pub(super) fn unit_word(&self, g: usize) -> Option<&u32> {
        self.meta.get(g)
    }

    /// The cell that holds byte `at` of granule `g` in the current layout
    /// (of a compact granule: the cell holding its write), read-only and
    /// without splitting (for a prefetch hint; an access that splits the
    /// granule first visits other cells).
    #[inline]
    pub(super) fn cell_of(&self, g: usize, at: usize) -> Option<&Cell> {
        let m = *self.meta.get(g)?;
        if m & COMPACT != 0 {
            return self.first.get(g);
        }
        // The unit size is a power of two in the low bits.
        let shift = m.trailing_zeros();
        let k = at >> shift;
        if k == 0 {
            return self.first.get(g);
        }
        self.rest.get((m >> META_BLOCK_SHIFT) as usize + k - 1)
    }

    /// The history of byte `at` of granule `g`, read-only (`None` past the
    /// page).
    pub(super) fn history_of(&self, g: usize, at: usize) -> Option<Cell> {
        if g < GRANULES && self.is_compact(g) && at > 0 {
            let h = self.halves[(self.meta[g] >> META_BLOCK_SHIFT) as usize + at - 1];
            return Some(Cell {
                r_clock: h.r_clock,
                r: h.r,
                ..self.first[g]
            });
        }
        self.cell_of(g, at).copied()
    }

    /// The history of byte `off` (a copy of its unit's cell).
    pub(super) fn byte(&mut self, off: usize) -> Cell {
        let (g, at) = (off / GRANULE, off % GRANULE);
        if self.is_compact(g) {
            return self.history_of(g, at).unwrap_or(EMPTY);
        }
        let u = self.unit_size(g);
        *self.unit(g, at & !(u - 1))
    }

    /// After every unit of granule `g` was written by one access (so they
    /// are identical and own no read vector clock): one 8-byte unit again.
    #[inline]
    pub(super) fn written_whole(&mut self, g: usize) {
        if self.coarse {
            self.release_block(g);
            self.meta[g] = meta(GRANULE, 0);
        }
    }

    /// Empties bytes `lo..hi` of granule `g`, freeing read vector clocks.
    pub(super) fn clear(&mut self, g: usize, lo: usize, hi: usize, reads: &mut ReadClocks) {
        let whole = self.coarse && lo == 0 && hi == GRANULE;
        if whole && self.meta[g] == meta(GRANULE, 0) {
            // One 8-byte unit (a dead frame's granule, mostly already
            // empty): clear its cell, leaving an empty one's line clean.
            let cell = &mut self.first[g];
            if *cell != EMPTY {
                super::FastTrack::clear_cell(reads, cell);
            }
            return;
        }
        let u = if whole {
            self.unit_size(g)
        } else {
            self.units_covering(g, lo, hi, reads)
        };
        self.expand(g);
        for at in (lo..hi).step_by(u) {
            super::FastTrack::clear_cell(reads, self.unit(g, at));
        }
        if whole {
            self.release_block(g);
            self.meta[g] = meta(GRANULE, 0);
        }
    }

    /// Replaces the history of byte `off` by `cell` (whose read vector
    /// clock, if any, it takes over), freeing the old one's.
    pub(super) fn set_byte(&mut self, off: usize, cell: Cell, reads: &mut ReadClocks) {
        let (g, at) = (off / GRANULE, off % GRANULE);
        self.units_covering(g, at, at + 1, reads);
        self.expand(g);
        let slot = self.unit(g, at);
        super::FastTrack::clear_cell(reads, slot);
        *slot = cell;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granule_needs_the_largest_units_its_bytes_cover_whole() {
        assert_eq!(unit_for(0, 8), 8);
        assert_eq!(unit_for(0, 4), 4);
        assert_eq!(unit_for(4, 8), 4);
        assert_eq!(unit_for(2, 4), 2);
        assert_eq!(unit_for(6, 8), 2);
        assert_eq!(unit_for(0, 2), 2);
        assert_eq!(unit_for(1, 2), 1);
        assert_eq!(unit_for(0, 3), 1);
        assert_eq!(unit_for(4, 6), 2);
        assert_eq!(unit_for(7, 8), 1);
    }

    #[test]
    fn splitting_copies_each_unit_and_a_whole_write_merges() {
        let mut reads = ReadClocks::default();
        let mut p = UnitPage::coarse();
        p.cell_mut(8).w_clock = 5;
        assert_eq!(p.units_covering(1, 0, 8, &mut reads), 8);
        assert_eq!(p.units_covering(1, 4, 6, &mut reads), 2);
        for off in 8..16 {
            assert_eq!(p.byte(off).w_clock, 5);
        }
        // The read-only lookup finds the cells the access path uses
        // (2-byte units: bytes 4 and 5 share one).
        let at12: *const Cell = p.cell_mut(12);
        assert!(std::ptr::eq(p.cell_of(1, 4).unwrap(), at12));
        assert!(std::ptr::eq(p.cell_of(1, 5).unwrap(), at12));
        let at8: *const Cell = p.cell_mut(8);
        assert!(std::ptr::eq(p.cell_of(1, 0).unwrap(), at8));
        assert!(p.cell_of(GRANULES, 0).is_none());
        p.cell_mut(12).w_clock = 6;
        assert_eq!(p.units_covering(1, 5, 6, &mut reads), 1);
        assert_eq!((p.byte(12).w_clock, p.byte(13).w_clock), (6, 6));
        assert_eq!((p.byte(11).w_clock, p.byte(14).w_clock), (5, 5));
        assert_eq!(p.rest.len(), 3 + 7);
        p.written_whole(1);
        assert_eq!(p.units_covering(1, 0, 8, &mut reads), 8);
        // Blocks are reused.
        p.units_covering(2, 0, 1, &mut reads);
        assert_eq!(p.rest.len(), 3 + 7);
        p.units_covering(3, 0, 2, &mut reads);
        assert_eq!(p.rest.len(), 3 + 7);
        p.units_covering(4, 0, 2, &mut reads);
        assert_eq!(p.rest.len(), 3 + 7 + 3);
        // A granule whose units share one write splits to a compact byte
        // granule: one cell and 7 read halves; a write expands it.
        let mut c = UnitPage::coarse();
        c.cell_mut(16).w_clock = 7;
        c.cell_mut(16).r_clock = 3;
        assert_eq!(c.units_covering(2, 3, 4, &mut reads), 1);
        assert!(c.is_compact(2));
        assert_eq!((c.rest.len(), c.halves.len()), (0, 7));
        for at in 0..8 {
            assert_eq!(c.byte(16 + at), c.byte(16));
        }
        let mut b3 = c.compact_cell(2, 3);
        b3.r_clock = 9;
        c.set_compact_reads(2, 3, &b3);
        assert_eq!((c.byte(19).r_clock, c.byte(19).w_clock), (9, 7));
        assert_eq!(c.byte(20).r_clock, 3);
        assert_eq!(c.history_of(2, 3), Some(c.byte(19)));
        let before: Vec<Cell> = (16..24).map(|o| c.byte(o)).collect();
        c.expand(2);
        assert!(!c.is_compact(2));
        assert_eq!(c.rest.len(), 7);
        assert_eq!((16..24).map(|o| c.byte(o)).collect::<Vec<_>>(), before);
        // Its read block is reused by the next compact granule.
        c.units_covering(3, 0, 1, &mut reads);
        assert!(c.is_compact(3));
        assert_eq!(c.halves.len(), 7);
        // Units with different writes split into ordinary cells.
        c.units_covering(4, 0, 4, &mut reads);
        c.cell_mut(36).w_clock = 1;
        c.units_covering(4, 0, 1, &mut reads);
        assert!(!c.is_compact(4));
        let mut r = UnitPage::per_byte();
        assert_eq!(r.units_covering(1, 0, 8, &mut reads), 1);
        r.written_whole(1);
        assert_eq!(r.units_covering(1, 0, 8, &mut reads), 1);
    }
}
