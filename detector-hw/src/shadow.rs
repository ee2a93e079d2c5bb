//! Paged shadow memory: one shadow page (of a detector-defined type, e.g.
//! one cell per byte) per 4 KiB page of the address space, allocated on
//! first use.
//!
//! A hash map finds a page's slot; a small direct-mapped cache of recently
//! used pages makes the common case a comparison.

use crate::clock::FxHashMap;

/// Bytes per shadow page (one 4 KiB virtual-memory page).
pub const PAGE_SIZE: u64 = 4096;

/// A shadow page of type `P` for every 4 KiB page; a page is a copy of the
/// `empty` page given to [`PagedShadow::new`] until changed.
#[derive(Clone, Debug)]
pub struct PagedShadow<P> {
    empty: P,
    slots: FxHashMap<u64, u32>,
    pages: Vec<P>,
    /// Direct-mapped cache page number → slot (empty until first use).
    cache: Vec<(u64, u32)>,
}

/// Entries of the page cache (a power of two).
const PAGE_CACHE: usize = 256;
/// A page number no address has (`u64::MAX / PAGE_SIZE` is the last page).
const NO_PAGE: u64 = u64::MAX;

impl<P: Clone> PagedShadow<P> {
    /// Shadow memory whose untouched pages are `empty`.
    pub fn new(empty: P) -> PagedShadow<P> {
        PagedShadow {
            empty,
            slots: FxHashMap::default(),
            pages: Vec::new(),
            cache: Vec::new(),
        }
    }

    /// The page number and offset of `addr`.
    #[inline]
    pub fn split(addr: u64) -> (u64, usize) {
        (addr / PAGE_SIZE, (addr % PAGE_SIZE) as usize)
    }

    /// Shadow page `page`, allocating it (a copy of `empty`) if needed.
    #[inline]
    pub fn page_mut(&mut self, page: u64) -> &mut P {
        let c = (page as usize) & (PAGE_CACHE - 1);
        let slot = match self.cache.get(c) {
            Some(&(p, s)) if p == page => s,
            _ => self.slot_uncached(page, c),
        };
        &mut self.pages[slot as usize]
    }

    /// The slot of page `page` (allocating it if new), when it is not in
    /// cache entry `c`; caches it there.
    #[cold]
    fn slot_uncached(&mut self, page: u64, c: usize) -> u32 {
        let next = self.pages.len() as u32;
        let slot = *self.slots.entry(page).or_insert(next);
        if slot == next {
            self.pages.push(self.empty.clone());
        }
        if self.cache.is_empty() {
            self.cache = vec![(NO_PAGE, 0); PAGE_CACHE];
        }
        self.cache[c] = (page, slot);
        slot
    }

    /// Shadow page `page` if it was ever allocated.
    #[inline]
    pub fn existing_page_mut(&mut self, page: u64) -> Option<&mut P> {
        let slot = match self.cache.get((page as usize) & (PAGE_CACHE - 1)) {
            Some(&(p, s)) if p == page => s,
            _ => *self.slots.get(&page)?,
        };
        self.pages.get_mut(slot as usize)
    }

    /// Shadow page `page` if it was ever allocated, found without changing
    /// anything (not even the page cache): for read-only hints.
    #[inline]
    pub fn existing_page(&self, page: u64) -> Option<&P> {
        let slot = match self.cache.get((page as usize) & (PAGE_CACHE - 1)) {
            Some(&(p, s)) if p == page => s,
            _ => *self.slots.get(&page)?,
        };
        self.pages.get(slot as usize)
    }

    /// Shadow page `page` (the empty page if it was never allocated).
    pub fn page(&self, page: u64) -> &P {
        match self.slots.get(&page) {
            Some(&slot) => &self.pages[slot as usize],
            None => &self.empty,
        }
    }

    /// Number of allocated pages.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
}

/// Splits the `len` bytes from `addr` (wrapping at the top of the address
/// space) into per-page chunks `(page, offset, length)`.
pub fn page_chunks(addr: u64, len: u64) -> impl Iterator<Item = (u64, usize, usize)> {
    let mut cur = addr;
    let mut remaining = len;
    std::iter::from_fn(move || {
        if remaining == 0 {
            return None;
        }
        let (page, off) = (cur / PAGE_SIZE, cur % PAGE_SIZE);
        let n = remaining.min(PAGE_SIZE - off);
        cur = cur.wrapping_add(n);
        remaining -= n;
        Some((page, off as usize, n as usize))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_at_pages_and_wrap() {
        let v: Vec<_> = page_chunks(0x1ffe, 4).collect();
        assert_eq!(v, vec![(1, 0xffe, 2), (2, 0, 2)]);
        let v: Vec<_> = page_chunks(u64::MAX - 1, 4).collect();
        assert_eq!(v, vec![(u64::MAX / PAGE_SIZE, 0xffe, 2), (0, 0, 2)]);
        assert_eq!(page_chunks(5, 0).count(), 0);
    }

    #[test]
    fn pages_allocate_on_demand() {
        let mut s = PagedShadow::new(vec![0u8; PAGE_SIZE as usize]);
        assert_eq!(s.page(3)[7], 0);
        assert!(s.existing_page_mut(3).is_none());
        s.page_mut(3)[7] = 9;
        s.page_mut(4)[0] = 1;
        assert_eq!(s.page(3)[7], 9);
        assert_eq!(s.page(5)[7], 0);
        assert_eq!(s.existing_page_mut(3).map(|p| p[7]), Some(9));
        assert_eq!(s.existing_page(3).map(|p| p[7]), Some(9));
        assert!(s.existing_page(5).is_none());
        assert_eq!(s.pages(), 2);
    }
}
