//! Metadata granularity learned from the program's accesses (RADISH §5.2,
//! "type safety optimizations").
//!
//! A type-safe program accesses every location between allocation and
//! deallocation at one width, so RADISH learns each location's *item*
//! lazily: the first access after allocation (here: after ClearHistory, or
//! before any history) sets the granularity of the bytes it covers to its
//! width. [`ItemMap`] keeps, per 64-byte block, which bytes have a learned
//! granularity and where each item starts; an item ends at the next start
//! or at the first byte without a granularity.
//!
//! A C program may break the assumption: an access that covers only part of
//! an item, several items, or learned and unlearned bytes together is a
//! *granularity conflict* ([`Learn::Conflict`]). The block then falls back
//! to byte metadata (every learned byte its own item) for the rest of its
//! life ([`ItemMap::fall_back`]). Verdicts never depend on any of this: they
//! come from the exact per-byte histories; granularity only decides what the
//! hardware stores and what a software check costs.

use super::probemap::ProbeMap;

/// Bytes per block of the map (items never span a block: an access that
/// crosses a block boundary is one item on each side).
pub const BLOCK: u64 = 64;

/// Items of at least this many bytes keep their clocks as offsets from a
/// per-core base clock in their coarsened metadata; smaller ones use the
/// reference-counted clock table (RADISH §5.2).
pub const COARSE_ITEM_BYTES: u64 = 4;

/// The learned items of one block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Block {
    /// Bytes whose granularity is learned.
    learned: u64,
    /// First bytes of items (a subset of `learned`).
    starts: u64,
    /// A granularity conflict happened: byte metadata from now on.
    bytes: bool,
}

/// Bits `off..off + k` (`off + k <= 64`).
#[inline]
fn mask(off: u64, k: u64) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        ((1u64 << k) - 1) << off
    }
}

impl Block {
    /// Width of the item holding learned byte `off`.
    #[inline]
    fn width(&self, off: u64) -> u64 {
        if self.bytes || self.learned & (1 << off) == 0 {
            return 1;
        }
        let below = self.starts & mask(0, off + 1);
        debug_assert!(below != 0, "a learned byte outside any item");
        let s = 63 - u64::from(below.leading_zeros()).min(63);
        let above = (self.starts | !self.learned) & !mask(0, s + 1);
        let e = if above == 0 {
            64
        } else {
            u64::from(above.trailing_zeros())
        };
        e - s
    }

    /// True if byte `b` (0..=64) begins a new item or none (not inside the
    /// item of byte `b - 1`).
    #[inline]
    fn boundary(&self, b: u64) -> bool {
        b == 0 || b >= 64 || self.learned & (1 << b) == 0 || self.starts & (1 << b) != 0
    }
}

/// What an access found out about the bytes it covers in one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learn {
    /// The access is one item of `width` bytes (learned now if `fresh`).
    Item {
        /// The item's width (1 in a block with byte metadata).
        width: u64,
        /// The granularity was learned by this access.
        fresh: bool,
    },
    /// The access does not match the items learned before: the block must
    /// fall back to byte metadata ([`ItemMap::fall_back`]).
    Conflict,
}

/// The learned items of every block with any (see the module docs).
#[derive(Debug, Default)]
pub struct ItemMap {
    blocks: ProbeMap<Block>,
}

impl ItemMap {
    /// Block key and offset of byte `x`.
    #[inline]
    fn split(x: u64) -> (u64, u64) {
        (x / BLOCK, x % BLOCK)
    }

    /// The access to the `k` bytes from `x` (all in one block): learns their
    /// granularity if none is learned, else checks it.
    #[inline]
    pub fn access(&mut self, x: u64, k: u64) -> Learn {
        let (key, off) = Self::split(x);
        let b = self.blocks.get_or_insert_with(key, Block::default);
        let m = mask(off, k);
        if b.bytes {
            b.learned |= m;
            b.starts |= m;
            return Learn::Item {
                width: 1,
                fresh: false,
            };
        }
        if b.learned & m == 0 {
            b.learned |= m;
            b.starts |= 1 << off;
            if off + k < 64 && b.learned & (1 << (off + k)) != 0 {
                // The next byte was learned before this one: it begins its
                // own item.
                b.starts |= 1 << (off + k);
            }
            return Learn::Item {
                width: k,
                fresh: true,
            };
        }
        if b.learned & m == m && b.starts & m == 1 << off && b.boundary(off + k) {
            return Learn::Item {
                width: k,
                fresh: false,
            };
        }
        Learn::Conflict
    }

    /// Block `key` (of byte `key * BLOCK`) falls back to byte metadata:
    /// every learned byte becomes its own item, for good (until a
    /// ClearHistory of the whole block).
    pub fn fall_back(&mut self, x: u64) {
        let b = self
            .blocks
            .get_or_insert_with(Self::split(x).0, Block::default);
        b.starts = b.learned;
        b.bytes = true;
    }

    /// Width of the item holding byte `x` (1 where none is learned or the
    /// block has byte metadata).
    #[inline]
    pub fn width(&self, x: u64) -> u64 {
        let (key, off) = Self::split(x);
        self.blocks.get(key).map_or(1, |b| b.width(off))
    }

    /// True if byte `x`'s records use the reference-counted clock table
    /// (items narrower than [`COARSE_ITEM_BYTES`]).
    #[inline]
    pub fn counted(&self, x: u64) -> bool {
        self.width(x) < COARSE_ITEM_BYTES
    }

    /// True if byte `x` begins an item, is in a block with byte metadata,
    /// or has no item learned: its history is a record of its own.
    #[inline]
    pub fn is_record_start(&self, x: u64) -> bool {
        let (key, off) = Self::split(x);
        self.blocks
            .get(key)
            .is_none_or(|b| b.bytes || b.boundary(off))
    }

    /// The first bytes of the items among the `n` bytes from `start` (all in
    /// one block), in order.
    pub fn item_starts(&self, start: u64, n: u64) -> impl Iterator<Item = u64> {
        let (key, off) = Self::split(start);
        let mut bits = self
            .blocks
            .get(key)
            .map_or(0, |b| b.starts & b.learned & mask(off, n.min(BLOCK - off)));
        let base = start - off;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = u64::from(bits.trailing_zeros());
            bits &= bits - 1;
            Some(base + i)
        })
    }

    /// A byte of each block whose item an end of `[addr, addr + len)` cuts
    /// (a history operation on the region would change the width of an
    /// item with bytes outside it): those blocks must fall back first.
    pub fn cut_blocks(&self, addr: u64, len: u64) -> Vec<u64> {
        let mut out = Vec::new();
        if len == 0 {
            return out;
        }
        for end in [addr, addr.wrapping_add(len)] {
            let (key, off) = Self::split(end);
            if off == 0 {
                continue;
            }
            if let Some(b) = self.blocks.get(key) {
                let prev = off - 1;
                if !b.boundary(off) && b.learned & (1 << prev) != 0 && !out.contains(&end) {
                    out.push(end);
                }
            }
        }
        out
    }

    /// ClearHistory of `[addr, addr + len)`: its bytes have no granularity
    /// any more (a block left with none is fresh again).
    pub fn clear(&mut self, addr: u64, len: u64) {
        let mut i = 0;
        while i < len {
            let x = addr.wrapping_add(i);
            let (key, off) = Self::split(x);
            let k = (BLOCK - off).min(len - i);
            if let Some(b) = self.blocks.get_mut(key) {
                let m = mask(off, k);
                b.learned &= !m;
                b.starts &= !m;
                if b.learned == 0 {
                    self.blocks.remove(key);
                }
            }
            i += k;
        }
    }

    /// CopyHistory of `len` bytes from `src` to `dst`: the copied bytes
    /// carry their granularity (an item the source range cuts starts at the
    /// range's first byte; with byte metadata each byte is an item).
    pub fn copy(&mut self, src: u64, dst: u64, len: u64) {
        let bits: Vec<(bool, bool)> = (0..len)
            .map(|i| {
                let (key, off) = Self::split(src.wrapping_add(i));
                self.blocks.get(key).map_or((false, false), |b| {
                    let learned = b.learned & (1 << off) != 0;
                    let start = b.starts & (1 << off) != 0 || b.bytes || i == 0;
                    (learned, learned && start)
                })
            })
            .collect();
        self.clear(dst, len);
        for (i, (learned, start)) in bits.into_iter().enumerate() {
            if !learned {
                continue;
            }
            let (key, off) = Self::split(dst.wrapping_add(i as u64));
            let b = self.blocks.get_or_insert_with(key, Block::default);
            b.learned |= 1 << off;
            // (An item never spans blocks: one the copy would carry across
            // a block boundary becomes two.)
            if start || b.bytes || off == 0 {
                b.starts |= 1 << off;
            }
        }
        // The byte after the range begins its own item if it has one.
        let (key, off) = Self::split(dst.wrapping_add(len));
        if let Some(b) = self.blocks.get_mut(key) {
            if b.learned & (1 << off) != 0 {
                b.starts |= 1 << off;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_access_sets_the_width() {
        let mut m = ItemMap::default();
        assert_eq!(
            m.access(0x1008, 8),
            Learn::Item {
                width: 8,
                fresh: true
            }
        );
        assert_eq!(
            m.access(0x1008, 8),
            Learn::Item {
                width: 8,
                fresh: false
            }
        );
        assert_eq!(
            m.access(0x1010, 4),
            Learn::Item {
                width: 4,
                fresh: true
            }
        );
        assert_eq!(m.width(0x100b), 8);
        assert_eq!(m.width(0x1012), 4);
        assert!(!m.counted(0x1008));
        assert_eq!(
            m.access(0x1006, 2),
            Learn::Item {
                width: 2,
                fresh: true
            }
        );
        assert!(m.counted(0x1007));
        assert_eq!(
            m.width(0x1008),
            8,
            "a neighbour learned later keeps the item"
        );
        assert_eq!(
            m.item_starts(0x1000, 64).collect::<Vec<_>>(),
            vec![0x1006, 0x1008, 0x1010]
        );
    }

    #[test]
    fn mixed_widths_conflict_and_fall_back() {
        let mut m = ItemMap::default();
        m.access(0x2000, 8);
        assert_eq!(m.access(0x2004, 1), Learn::Conflict, "part of an item");
        assert_eq!(m.access(0x2000, 4), Learn::Conflict, "a prefix of an item");
        m.access(0x2008, 4);
        m.access(0x200c, 4);
        assert_eq!(m.access(0x2008, 8), Learn::Conflict, "two items");
        assert_eq!(
            m.access(0x2006, 4),
            Learn::Conflict,
            "learned and unlearned"
        );
        m.fall_back(0x2000);
        assert_eq!(
            m.access(0x2000, 8),
            Learn::Item {
                width: 1,
                fresh: false
            }
        );
        assert_eq!(m.width(0x2003), 1);
        assert!(m.counted(0x2003));
        assert_eq!(m.item_starts(0x2000, 16).count(), 16);
    }

    #[test]
    fn history_operations_reset_and_carry_granularity() {
        let mut m = ItemMap::default();
        m.access(0x3000, 8);
        m.access(0x3008, 8);
        assert_eq!(m.cut_blocks(0x3004, 8), vec![0x3004, 0x300c]);
        assert!(m.cut_blocks(0x3000, 16).is_empty());
        m.copy(0x3000, 0x5008, 16);
        assert_eq!(m.width(0x5008), 8);
        assert_eq!(m.width(0x5017), 8);
        assert_eq!(
            m.access(0x5010, 8),
            Learn::Item {
                width: 8,
                fresh: false
            }
        );
        m.clear(0x3000, 8);
        assert_eq!(
            m.access(0x3000, 2),
            Learn::Item {
                width: 2,
                fresh: true
            }
        );
        m.clear(0x3000, 64);
        assert_eq!(
            m.access(0x3000, 1),
            Learn::Item {
                width: 1,
                fresh: true
            }
        );
    }
}
