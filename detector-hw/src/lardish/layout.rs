//! Where metadata and software structures live in the simulated physical
//! address space (RADISH Figure 4): metadata of data byte `x` for core `p`
//! is at `MD_BIT | p << CORE_SHIFT | 2x` (expanded: two metadata lines per
//! data line) or, for a compact (1:1) data line, in the first of those two
//! lines. The software manager's variable map and FastTrack's shadow memory
//! are ordinary data at fixed bases.

/// Marks metadata line numbers.
pub const MD_BIT: u64 = 1 << 62;
/// Position of the owner core in a metadata line number.
pub const CORE_SHIFT: u32 = 50;
/// Base byte address of the software manager's variable map.
pub const SW_BASE: u64 = 1 << 56;
/// Base byte address of FastTrack's shadow memory.
pub const FT_BASE: u64 = 1 << 57;
/// Base byte address of FastTrack's read vector clocks (256 bytes per data
/// byte, above the shadow cells).
pub const RVC_BASE: u64 = 3 << 56;

/// Address geometry for one line size.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// log2 of the line size.
    pub shift: u32,
}

impl Layout {
    /// The layout for `line_bytes` (a power of two).
    pub fn new(line_bytes: u64) -> Layout {
        Layout {
            shift: line_bytes.trailing_zeros(),
        }
    }

    /// Data line number of byte `addr`.
    #[inline]
    pub fn data_line(&self, addr: u64) -> u64 {
        (addr & ((1 << 48) - 1)) >> self.shift
    }

    /// Data lines of `[addr, addr + size)` (at least the first byte's).
    #[inline]
    pub fn data_lines(&self, addr: u64, size: u32) -> std::ops::RangeInclusive<u64> {
        let last = addr.wrapping_add(u64::from(size.max(1)) - 1);
        let (a, b) = (self.data_line(addr), self.data_line(last));
        if b >= a {
            a..=b
        } else {
            a..=a
        }
    }

    /// Metadata line of `core` holding byte `addr`'s metadata.
    #[inline]
    pub fn md_line(&self, core: usize, addr: u64, expanded: bool) -> u64 {
        let a = addr & ((1 << 48) - 1);
        let offset = if expanded {
            (2 * a) >> self.shift
        } else {
            2 * (a >> self.shift)
        };
        MD_BIT | ((core as u64) << CORE_SHIFT) | offset
    }

    /// The second (odd) metadata line of an expanded data line.
    #[inline]
    pub fn md_second_half(&self, md_line: u64) -> u64 {
        md_line | 1
    }

    /// Owner core of a metadata line.
    #[inline]
    pub fn md_core(md_line: u64) -> usize {
        ((md_line & !MD_BIT) >> CORE_SHIFT) as usize
    }

    /// First data byte described by metadata line `md_line` and how many.
    pub fn md_covers(&self, md_line: u64, expanded: bool) -> (u64, u64) {
        let off = md_line & ((1 << CORE_SHIFT) - 1);
        let line = 1u64 << self.shift;
        if expanded {
            ((off << self.shift) / 2, line / 2)
        } else {
            ((off / 2) << self.shift, line)
        }
    }

    /// Line of the variable-map entry of byte `addr` (`bytes` per location).
    #[inline]
    pub fn sw_line(&self, addr: u64, bytes: u64) -> u64 {
        SW_BASE.wrapping_add((addr & ((1 << 48) - 1)).wrapping_mul(bytes)) >> self.shift
    }

    /// First line of FastTrack's read vector clock of byte `addr` (read-
    /// shared cells; 256 bytes reserved per byte).
    #[inline]
    pub fn rvc_line(&self, addr: u64) -> u64 {
        RVC_BASE.wrapping_add((addr & ((1 << 48) - 1)).wrapping_mul(256)) >> self.shift
    }

    /// Line of FastTrack's shadow cell of byte `addr`.
    #[inline]
    pub fn ft_line(&self, addr: u64, bytes: u64) -> u64 {
        FT_BASE.wrapping_add((addr & ((1 << 48) - 1)).wrapping_mul(bytes)) >> self.shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_mapping() {
        let l = Layout::new(64);
        let a = 0x1000 + 40;
        let e = l.md_line(3, a, true);
        let c = l.md_line(3, a, false);
        assert_eq!(Layout::md_core(e), 3);
        assert_eq!(e, l.md_second_half(c));
        assert_eq!(l.md_line(3, 0x1000 + 5, true), c);
        assert_eq!(l.md_covers(e, true), (0x1000 + 32, 32));
        assert_eq!(l.md_covers(c, false), (0x1000, 64));
        assert_ne!(l.md_line(2, a, true), e);
    }
}
