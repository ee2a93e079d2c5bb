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
//! [`UnitPage::per_byte`] pages never leave 1-byte units: the
//! straightforward per-byte shadow, which the differential tests compare
//! with this one.

use super::{Cell, ReadClocks, EMPTY};
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
    /// Whether granules may hold units larger than a byte.
    coarse: bool,
}

/// Bits of a granule's `meta` below its block index.
const META_BLOCK_SHIFT: u32 = 4;

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
            coarse: false,
        }
    }

    /// Unit size of granule `g`.
    #[inline]
    fn unit_size(&self, g: usize) -> usize {
        (self.meta[g] & ((1 << META_BLOCK_SHIFT) - 1)) as usize
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
        if u < GRANULE {
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
        // `u` is a power of two: a shift, not a division.
        let m = self.meta[g];
        let shift = m.trailing_zeros();
        let i = (m >> META_BLOCK_SHIFT) as usize + (at >> shift) - 1;
        &mut self.rest[i]
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

    /// The cell that holds byte `at` of granule `g` in the current layout,
    /// read-only and without splitting (for a prefetch hint; an access that
    /// splits the granule first visits other cells).
    #[inline]
    pub(super) fn cell_of(&self, g: usize, at: usize) -> Option<&Cell> {
        let m = *self.meta.get(g)?;
        // The unit size is a power of two in the low bits.
        let shift = m.trailing_zeros();
        let k = at >> shift;
        if k == 0 {
            return self.first.get(g);
        }
        self.rest.get((m >> META_BLOCK_SHIFT) as usize + k - 1)
    }

    /// The history of byte `off` (a copy of its unit's cell).
    pub(super) fn byte(&mut self, off: usize) -> Cell {
        let (g, at) = (off / GRANULE, off % GRANULE);
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
        let u = if whole {
            self.unit_size(g)
        } else {
            self.units_covering(g, lo, hi, reads)
        };
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
        let mut r = UnitPage::per_byte();
        assert_eq!(r.units_covering(1, 0, 8, &mut reads), 1);
        r.written_whole(1);
        assert_eq!(r.units_covering(1, 0, 8, &mut reads), 1);
    }
}
