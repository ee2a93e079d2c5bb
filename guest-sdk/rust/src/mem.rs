// SPDX-License-Identifier: MIT OR Apache-2.0
//! Program memory: forgetting access histories when memory is reused
//! (Rule 3) and carrying them along when data moves (Rule 4).
//!
//! None of these functions creates a happens-before edge, and none reads or
//! writes the memory it names except [`move_bytes`] (an untracked copy).
//! ClearHistory and CopyHistory regions must lie within one 4 KiB page and be
//! non-empty (docs/lardx86.md §3); the functions here split any region into
//! such pieces ([`clear_pieces`], [`copy_pieces`]) and issue nothing for
//! length 0.
//!
//! ```
//! let buf = vec![0u8; 10_000];
//! // Forget every access to buf (3 or 4 ClearHistory ops, one per page).
//! lard::mem::clear_history(buf.as_ptr(), buf.len());
//! let copy = vec![0u8; 10_000];
//! // copy[i] now has buf[i]'s history (none, here).
//! lard::mem::copy_history(buf.as_ptr(), copy.as_ptr(), buf.len());
//! ```

use crate::{lard_op, PAGE_SIZE};
use core::alloc::{GlobalAlloc, Layout};

#[inline(always)]
fn page_left(a: usize) -> usize {
    PAGE_SIZE - (a & (PAGE_SIZE - 1))
}

/// The pieces `(addr, len)` in which [`clear_history`] splits
/// `[addr, addr+len)`: one per page touched, in address order, all
/// non-empty; none for `len == 0`.
///
/// ```
/// let p: Vec<_> = lard::mem::clear_pieces(4000, 5000).collect();
/// assert_eq!(p, [(4000, 96), (4096, 4096), (8192, 808)]);
/// ```
pub fn clear_pieces(addr: usize, len: usize) -> impl Iterator<Item = (usize, usize)> {
    let (mut a, mut left) = (addr, len);
    core::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let n = page_left(a).min(left);
        let piece = (a, n);
        a = a.wrapping_add(n);
        left -= n;
        Some(piece)
    })
}

/// The pieces `(src, dst, len)` in which [`copy_history`] splits a copy of
/// `len` bytes from `src` to `dst`: each piece lies within one page on both
/// sides and is non-empty; none for `len == 0`. When the regions overlap with
/// `dst` above `src`, the pieces come from the end (like `memmove`), so that
/// no piece reads a history an earlier piece already overwrote.
///
/// ```
/// let p: Vec<_> = lard::mem::copy_pieces(4090, 8190, 20).collect();
/// assert_eq!(p, [(4090, 8190, 2), (4092, 8192, 4), (4096, 8196, 14)]);
/// let back: Vec<_> = lard::mem::copy_pieces(4090, 4100, 20).collect();
/// assert_eq!(back, [(4096, 4106, 14), (4090, 4100, 6)]);
/// ```
pub fn copy_pieces(
    src: usize,
    dst: usize,
    len: usize,
) -> impl Iterator<Item = (usize, usize, usize)> {
    let backward = dst > src && dst - src < len;
    let (mut s, mut d, mut left) = if backward {
        (src + len, dst + len, len) // exclusive ends
    } else {
        (src, dst, len)
    };
    core::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        if backward {
            let n = ((s - 1) & (PAGE_SIZE - 1)) + 1;
            let m = ((d - 1) & (PAGE_SIZE - 1)) + 1;
            let n = n.min(m).min(left);
            s -= n;
            d -= n;
            left -= n;
            Some((s, d, n))
        } else {
            let n = page_left(s).min(page_left(d)).min(left);
            let piece = (s, d, n);
            s = s.wrapping_add(n);
            d = d.wrapping_add(n);
            left -= n;
            Some(piece)
        }
    })
}

/// One ClearHistory op (`lard.clearhistory rdi, rsi`). The region must lie
/// within one page and `len > 0`, else a LARD CPU faults (SIGILL); use
/// [`clear_history`] unless you split yourself.
#[inline(always)]
pub fn clear_history_1(addr: *const u8, len: usize) {
    #[cfg(test)]
    crate::shadow::on_clear(addr as usize, len);
    // SAFETY: a reserved NOP that touches no memory (a detector op on LARD).
    unsafe {
        lard_op!(crate::encoding::CLEARHISTORY_RDI_RSI, in("rdi") addr, in("rsi") len,
                 options(nostack, preserves_flags))
    }
}

/// One CopyHistory op (`lard.copyhistory rdi, rsi, rdx`). Each region must lie
/// within one page and `len > 0`; use [`copy_history`] unless you split
/// yourself.
#[inline(always)]
pub fn copy_history_1(src: *const u8, dst: *const u8, len: usize) {
    #[cfg(test)]
    crate::shadow::on_copy(src as usize, dst as usize, len);
    // SAFETY: a reserved NOP that touches no memory (a detector op on LARD).
    unsafe {
        lard_op!(crate::encoding::COPYHISTORY_RDI_RSI_RDX, in("rdi") src, in("rsi") dst,
                 in("rdx") len, options(nostack, preserves_flags))
    }
}

/// Discards the access histories of `[ptr, ptr+len)` (Rule 3): later
/// accesses race with nothing that happened there before. Any length and
/// alignment: one ClearHistory per page touched; `len == 0` issues nothing.
/// Safe: the memory itself is never accessed. No edge.
#[inline]
pub fn clear_history(ptr: *const u8, len: usize) {
    for (a, n) in clear_pieces(ptr as usize, len) {
        clear_history_1(a as *const u8, n);
    }
}

/// [`clear_history`] over the bytes of `*value`.
///
/// ```
/// let x = lard::Tracked::new(1u64);
/// lard::mem::clear_history_of(&x);
/// ```
#[inline]
pub fn clear_history_of<T: ?Sized>(value: &T) {
    clear_history((value as *const T).cast(), core::mem::size_of_val(value));
}

/// Gives each byte `dst+i` the access history of `src+i`, `0 <= i < len`
/// (Rule 4); the source histories are unchanged. Any length, alignment and
/// overlap (behaves like `memmove`); `len == 0` issues nothing. Safe: the
/// memory itself is never accessed. No edge.
#[inline]
pub fn copy_history(src: *const u8, dst: *const u8, len: usize) {
    for (s, d, n) in copy_pieces(src as usize, dst as usize, len) {
        copy_history_1(s as *const u8, d as *const u8, n);
    }
}

/// Moves `len` bytes from `src` to `dst` as a runtime (e.g. a copying
/// collector) moves program data, like the C SDK's `lard_move`: copies the
/// access histories, copies the data (untracked, like `memmove`), then clears
/// the histories of the part of `src` that is not also part of `dst`. A later
/// access at `dst` races with earlier unordered accesses at `src`. No edge.
///
/// # Safety
/// As for [`core::ptr::copy`]: `src` valid for reads and `dst` for writes of
/// `len` bytes. The caller makes the move atomic with respect to the
/// program's accesses (as a collector stops the world).
///
/// ```
/// let from = Box::new(lard::Tracked::new(41u64));
/// let to = Box::new(lard::Tracked::new(0u64));
/// unsafe {
///     lard::mem::move_bytes((&*from as *const lard::Tracked<u64>).cast(),
///                           to.as_ptr().cast(), 8);
/// }
/// assert_eq!(to.load(), 41);
/// ```
pub unsafe fn move_bytes(src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (src as usize, dst as usize);
    if len == 0 || s == d {
        return;
    }
    copy_history(src, dst, len);
    core::ptr::copy(src, dst, len);
    if d >= s + len || s >= d + len {
        clear_history(src, len); // disjoint
    } else if d > s {
        clear_history(src, d - s); // the head of src stays behind
    } else {
        clear_history(dst.add(len), s - d); // the tail of src stays behind
    }
}

/// A global allocator wrapper that clears the access histories of every
/// block it frees (Rule 3), so that accesses to a block's old and new
/// occupants never race, and that moves histories along when `realloc` moves
/// a block (Rule 4). Like the C SDK's `lard_free`. Use it whenever heap memory
/// holds [`Tracked`](crate::Tracked) data:
///
/// ```
/// #[global_allocator]
/// static ALLOC: lard::mem::ClearOnFree = lard::mem::ClearOnFree::new(std::alloc::System);
/// # fn main() { drop(Box::new(lard::Tracked::new(1u8))); }
/// ```
pub struct ClearOnFree<A = std::alloc::System> {
    inner: A,
}

impl<A> ClearOnFree<A> {
    /// Wraps `inner`.
    pub const fn new(inner: A) -> Self {
        ClearOnFree { inner }
    }
}

// SAFETY: every call is forwarded to `inner`; the extra ops touch no memory.
unsafe impl<A: GlobalAlloc> GlobalAlloc for ClearOnFree<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.inner.alloc(layout)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.inner.alloc_zeroed(layout)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        clear_history(ptr, layout.size());
        self.inner.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Allocate, move (histories and data), free: the old block's
        // histories are cleared before anyone can get it again.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let new = self.inner.alloc(new_layout);
        if !new.is_null() {
            move_bytes(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random numbers (SplitMix64).
    fn rng(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn clear_pieces_zero_length_is_empty() {
        assert_eq!(clear_pieces(4095, 0).count(), 0);
        assert_eq!(copy_pieces(1, 2, 0).count(), 0);
    }

    #[test]
    fn clear_pieces_examples() {
        assert_eq!(clear_pieces(0, 4096).collect::<Vec<_>>(), [(0, 4096)]);
        assert_eq!(
            clear_pieces(4095, 2).collect::<Vec<_>>(),
            [(4095, 1), (4096, 1)]
        );
        assert_eq!(clear_pieces(100, 10).collect::<Vec<_>>(), [(100, 10)]);
        assert_eq!(
            clear_pieces(4096, 3 * 4096).collect::<Vec<_>>(),
            [(4096, 4096), (8192, 4096), (12288, 4096)]
        );
    }

    fn same_page(a: usize, n: usize) -> bool {
        n > 0 && a / PAGE_SIZE == (a + n - 1) / PAGE_SIZE
    }

    #[test]
    fn clear_pieces_cover_exactly_within_pages() {
        let mut seed = 1;
        for _ in 0..5000 {
            let a = (rng(&mut seed) % (5 * PAGE_SIZE as u64)) as usize + PAGE_SIZE;
            let len = (rng(&mut seed) % (3 * PAGE_SIZE as u64)) as usize;
            let mut next = a;
            for (p, n) in clear_pieces(a, len) {
                assert_eq!(p, next);
                assert!(same_page(p, n), "{p} {n}");
                next = p + n;
            }
            assert_eq!(next, a + len);
            // minimal: one piece per page touched
            let pages = if len == 0 {
                0
            } else {
                (a + len - 1) / PAGE_SIZE - a / PAGE_SIZE + 1
            };
            assert_eq!(clear_pieces(a, len).count(), pages);
        }
    }

    /// Replays the pieces on a model of per-byte histories and checks the
    /// result is a memmove of histories, each piece within one page on both
    /// sides.
    #[test]
    fn copy_pieces_behave_like_memmove() {
        let mut seed = 7;
        for i in 0..3000 {
            let size = 4 * PAGE_SIZE;
            let src = (rng(&mut seed) % (2 * PAGE_SIZE as u64)) as usize;
            let dst = if i % 2 == 0 {
                // overlapping, either direction
                (src as i64 + (rng(&mut seed) % 200) as i64 - 100).max(0) as usize
            } else {
                (rng(&mut seed) % (2 * PAGE_SIZE as u64)) as usize
            };
            let len = (rng(&mut seed) % (2 * PAGE_SIZE as u64 - 1)) as usize;
            let mut model: Vec<u32> = (0..size as u32).collect();
            let mut want = model.clone();
            want.copy_within(src..src + len, dst);
            for (s, d, n) in copy_pieces(src, dst, len) {
                assert!(same_page(s, n) && same_page(d, n), "{s} {d} {n}");
                assert_eq!(s as i64 - d as i64, src as i64 - dst as i64);
                // a single CopyHistory copies from unchanged sources
                let piece: Vec<u32> = model[s..s + n].to_vec();
                model[d..d + n].copy_from_slice(&piece);
            }
            assert_eq!(model, want, "src {src} dst {dst} len {len}");
            assert_eq!(copy_pieces(src, dst, len).map(|p| p.2).sum::<usize>(), len);
        }
    }

    #[test]
    fn ops_are_harmless_natively() {
        let buf = vec![7u8; 3 * PAGE_SIZE];
        clear_history(buf.as_ptr(), buf.len());
        clear_history(buf.as_ptr(), 0);
        copy_history(buf.as_ptr(), buf.as_ptr().wrapping_add(10), 2 * PAGE_SIZE);
        // Invalid pointers too: the ops never touch memory.
        clear_history_1(8 as *const u8, 8);
        copy_history_1(16 as *const u8, 32 as *const u8, 8);
        assert!(buf.iter().all(|&b| b == 7));
    }

    #[test]
    fn move_bytes_moves_data_with_overlap() {
        let mut v: Vec<u8> = (0..100).collect();
        unsafe { move_bytes(v.as_ptr(), v.as_mut_ptr().add(10), 50) };
        assert_eq!(&v[10..60], &(0..50).collect::<Vec<u8>>()[..]);
        let mut w: Vec<u8> = (0..100).collect();
        unsafe { move_bytes(w.as_ptr().add(10), w.as_mut_ptr(), 50) };
        assert_eq!(&w[0..50], &(10..60).collect::<Vec<u8>>()[..]);
    }

    #[test]
    fn clear_on_free_allocates() {
        let a = ClearOnFree::new(std::alloc::System);
        unsafe {
            let l = Layout::from_size_align(100, 8).unwrap();
            let p = a.alloc(l);
            for i in 0..100 {
                *p.add(i) = i as u8;
            }
            let q = a.realloc(p, l, 10_000);
            assert!((0..100).all(|i| *q.add(i) == i as u8));
            a.dealloc(q, Layout::from_size_align(10_000, 8).unwrap());
        }
    }
}
