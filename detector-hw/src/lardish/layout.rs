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
/// Base byte address of the software manager's presence bitmap (one bit
/// per data byte: the byte holds an access history), which ClearHistory
/// and CopyHistory scan to find the histories that exist
/// (docs/lardish.md, "ClearHistory / CopyHistory").
pub const PRESENCE_BASE: u64 = 4 << 56;
/// Data bytes per presence word (one bit each, 64-bit words).
pub const PRESENCE_WORD_BYTES: u64 = 64;
/// Base byte address of the presence bitmap's summary: one bit per page of
/// [`PRESENCE_PAGE_BYTES`] data bytes, set while some byte of the page
/// holds a history, so that a scan skips the presence words of pages that
/// hold none.
pub const SUMMARY_BASE: u64 = 5 << 56;
/// Data bytes per summary bit.
pub const PRESENCE_PAGE_BYTES: u64 = 4096;

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

    /// The bytes `first` to `first + n - 1` cut at data-line boundaries:
    /// `(x, k)` for each run of `k` bytes from `x` in one data line, in
    /// order (addresses modulo 2^48, as [`Layout::data_line`] takes them).
    #[inline]
    pub fn data_line_parts(&self, first: u64, n: u64) -> impl Iterator<Item = (u64, u64)> {
        let line_bytes = 1u64 << self.shift;
        let mut i = 0u64;
        std::iter::from_fn(move || {
            if i >= n {
                return None;
            }
            let x = first.wrapping_add(i);
            let k = (line_bytes - (x & (line_bytes - 1) & ((1 << 48) - 1))).min(n - i);
            i += k;
            Some((x, k))
        })
    }

    /// The metadata lines of core `core` for the `k` bytes from `x`, all in
    /// one data line ([`Layout::data_line_parts`]): one line (compact) or
    /// one or two consecutive lines (expanded), in address order, so every
    /// line from the first byte's to the last's, as a walk byte by byte
    /// finds them.
    #[inline]
    pub fn md_lines_of_part(
        &self,
        core: usize,
        x: u64,
        k: u64,
        expanded: bool,
    ) -> std::ops::RangeInclusive<u64> {
        self.md_line(core, x, expanded)..=self.md_line(core, x.wrapping_add(k - 1), expanded)
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

    /// The lines of the presence bitmap words that cover `[addr, addr +
    /// len)`, and how many words (one bit per byte, 64-bit words; a range
    /// across the top of the 48-bit space is cut there).
    pub fn presence(&self, addr: u64, len: u64) -> (std::ops::Range<u64>, u64) {
        const LOW48: u64 = (1 << 48) - 1;
        let a = addr & LOW48;
        let last = a.saturating_add(len.max(1) - 1).min(LOW48);
        let (w0, w1) = (a / PRESENCE_WORD_BYTES, last / PRESENCE_WORD_BYTES);
        let line = |w: u64| PRESENCE_BASE.wrapping_add(w * 8) >> self.shift;
        if len == 0 {
            return (0..0, 0);
        }
        (line(w0)..line(w1) + 1, w1 - w0 + 1)
    }

    /// The pages (of [`PRESENCE_PAGE_BYTES`]) of `[addr, addr + len)`, each
    /// with the part of the region it holds, `(page, from, to)` with
    /// offsets `[from, to)` into the region (48-bit addresses, as
    /// [`Layout::presence`]).
    pub fn presence_pages(&self, addr: u64, len: u64) -> Vec<(u64, u64, u64)> {
        const LOW48: u64 = (1 << 48) - 1;
        if len == 0 {
            return Vec::new();
        }
        let a = addr & LOW48;
        let last = a.saturating_add(len - 1).min(LOW48);
        (a / PRESENCE_PAGE_BYTES..=last / PRESENCE_PAGE_BYTES)
            .map(|p| {
                let start = (p * PRESENCE_PAGE_BYTES).max(a);
                let end = ((p + 1) * PRESENCE_PAGE_BYTES - 1).min(last);
                (p, start - a, end - a + 1)
            })
            .collect()
    }

    /// What a history operation reads to find the histories of `[addr,
    /// addr + len)`: the summary words over its pages, then, for each page
    /// whose summary bit is set (`held[i]` for the `i`-th page of
    /// [`Layout::presence_pages`]), the presence words of the region's part
    /// of it. Returns the lines read and the words scanned.
    pub fn presence_scan(&self, addr: u64, len: u64, held: &[bool]) -> (Vec<u64>, u64) {
        let pages = self.presence_pages(addr, len);
        let (Some(first), Some(last)) = (pages.first(), pages.last()) else {
            return (Vec::new(), 0);
        };
        let (s0, s1) = (first.0 / 64, last.0 / 64);
        let line = |s: u64| SUMMARY_BASE.wrapping_add(s * 8) >> self.shift;
        let mut lines: Vec<u64> = (line(s0)..=line(s1)).collect();
        let mut words = s1 - s0 + 1;
        for (&(_, from, to), _) in pages.iter().zip(held).filter(|(_, &h)| h) {
            let (at, n) = self.presence(addr.wrapping_add(from), to - from);
            lines.extend(at);
            words += n;
        }
        (lines, words)
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

    /// The metadata lines met by data-line parts are the ones a walk byte
    /// by byte meets (each line once per run), for compact and expanded
    /// lines, lines of 8 to 4096 bytes and ranges across the top of the
    /// 48-bit and 64-bit address spaces.
    #[test]
    fn data_line_parts_meet_the_lines_of_a_byte_walk() {
        let expanded = |l: &Layout, x: u64| l.data_line(x) % 3 == 1;
        let top48 = 1u64 << 48;
        let starts = [
            0u64,
            5,
            63,
            64,
            1000,
            top48 - 70,
            top48 - 1,
            u64::MAX - 40,
            0x7fff_1234,
        ];
        for line_bytes in [8u64, 64, 4096] {
            let l = Layout::new(line_bytes);
            for &first in &starts {
                for n in [1u64, 2, 7, 8, 9, 63, 64, 65, 200, 5000] {
                    let mut walk = Vec::new();
                    for i in 0..n {
                        let x = first.wrapping_add(i);
                        let line = l.md_line(1, x, expanded(&l, x));
                        if walk.last() != Some(&line) {
                            walk.push(line);
                        }
                    }
                    let mut parts = Vec::new();
                    let mut bytes = 0;
                    for (x, k) in l.data_line_parts(first, n) {
                        assert_eq!(x, first.wrapping_add(bytes), "parts are contiguous");
                        assert_eq!(l.data_line(x), l.data_line(x.wrapping_add(k - 1)));
                        bytes += k;
                        for line in l.md_lines_of_part(1, x, k, expanded(&l, x)) {
                            if parts.last() != Some(&line) {
                                parts.push(line);
                            }
                        }
                    }
                    assert_eq!(bytes, n);
                    assert_eq!(parts, walk, "line {line_bytes} first {first:#x} n {n}");
                }
            }
        }
    }
}
