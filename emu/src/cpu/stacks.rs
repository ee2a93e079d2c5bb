//! The threads' stack mappings, and the "is this address on a stack?" test
//! every observed access makes (docs/events.md: `Access::stack`).
//!
//! The test is on the hottest path of `--observe all` (once per guest
//! access), so [`StackMap::is_stack`] answers from three cached intervals
//! before it searches: the last stack interval hit (usually the running
//! thread's own stack) and the last two non-stack intervals hit (usually
//! the heap or data the thread works on). Each cached interval is a maximal
//! range of addresses on which the search gives one answer, so a cache hit
//! gives exactly the search's answer; adding a stack drops them all.

use std::cell::Cell;

/// A half-open address range `[lo, lo + len)`; `len == 0` is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Interval {
    lo: u64,
    len: u64,
}

impl Interval {
    #[inline]
    fn contains(self, addr: u64) -> bool {
        addr.wrapping_sub(self.lo) < self.len
    }
}

/// The cached intervals of a [`StackMap`], copied out for a loop
/// ([`StackMap::cache`], [`StackMap::classify`]).
#[derive(Clone, Copy, Debug)]
pub struct StackCache {
    stack: Interval,
    other: Interval,
}

impl StackCache {
    /// `[(lo, len)]` of the stack interval and of the non-stack interval:
    /// `addr` is in one when `addr.wrapping_sub(lo) < len` (for a vector
    /// form of [`StackMap::classify`]).
    #[inline]
    pub fn bounds(&self) -> [(u64, u64); 2] {
        [
            (self.stack.lo, self.stack.len),
            (self.other.lo, self.other.len),
        ]
    }
}

/// Stack mappings `(start, end)` of all threads, sorted, with the lookup
/// caches.
#[derive(Clone, Debug, Default)]
pub struct StackMap {
    ranges: Vec<(u64, u64)>,
    /// Last interval found to be stack.
    hit_stack: Cell<Interval>,
    /// Last interval found not to be stack.
    hit_other: Cell<Interval>,
    /// The non-stack interval hit before `hit_other`: a thread often works
    /// on two regions a stack mapping separates (a heap arena and an
    /// `mmap`ed buffer), and would otherwise search at every switch.
    hit_other2: Cell<Interval>,
}

impl StackMap {
    /// The recorded stack mappings, sorted by start.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Records the stack mapping `[start, end)` (once).
    pub fn add(&mut self, start: u64, end: u64) {
        if let Err(at) = self.ranges.binary_search(&(start, end)) {
            self.ranges.insert(at, (start, end));
            self.hit_stack.set(Interval::default());
            self.hit_other.set(Interval::default());
            self.hit_other2.set(Interval::default());
        }
    }

    /// True when `addr` lies in some thread's stack mapping: the answer of
    /// [`StackMap::search`], from the caches when they hold `addr`.
    #[inline]
    pub fn is_stack(&self, addr: u64) -> bool {
        if self.hit_stack.get().contains(addr) {
            return true;
        }
        if self.hit_other.get().contains(addr) {
            return false;
        }
        self.miss_other(addr)
    }

    /// [`StackMap::is_stack`] after the two first cached intervals missed:
    /// the second non-stack interval (swapped to the front when hit), then
    /// the search.
    #[inline]
    fn miss_other(&self, addr: u64) -> bool {
        let second = self.hit_other2.get();
        if second.contains(addr) {
            self.hit_other2.set(self.hit_other.get());
            self.hit_other.set(second);
            return false;
        }
        self.miss(addr)
    }

    /// A copy of the two cached intervals, for a loop over many addresses
    /// ([`StackMap::classify`]): in locals, the compiler keeps them in
    /// registers instead of reloading the `Cell`s at every address.
    #[inline]
    pub fn cache(&self) -> StackCache {
        StackCache {
            stack: self.hit_stack.get(),
            other: self.hit_other.get(),
        }
    }

    /// [`StackMap::is_stack`] with the caches in `c` (from
    /// [`StackMap::cache`]; refreshed after a miss). Both intervals are
    /// tested, so the only branch is the rare miss: which of the two holds
    /// `addr` changes from access to access (stack, heap, stack, …) and
    /// would be mispredicted as a branch.
    #[inline(always)]
    pub fn classify(&self, c: &mut StackCache, addr: u64) -> bool {
        // (Bitwise, not `||`: no branch on which interval holds it.)
        let stack = u8::from(c.stack.contains(addr));
        if stack | u8::from(c.other.contains(addr)) != 0 {
            return stack != 0;
        }
        let stack = self.miss(addr);
        *c = self.cache();
        stack
    }

    /// Searches and caches the interval around `addr`.
    #[cold]
    #[inline(never)]
    fn miss(&self, addr: u64) -> bool {
        let (stack, iv) = self.interval(addr);
        if stack {
            self.hit_stack.set(iv);
        } else {
            self.hit_other2.set(self.hit_other.get());
            self.hit_other.set(iv);
        }
        stack
    }

    /// The answer for `addr` by binary search over the sorted mappings: the
    /// last mapping starting at or below `addr` decides.
    pub fn search(&self, addr: u64) -> bool {
        let i = self.ranges.partition_point(|&(s, _)| s <= addr);
        i > 0 && addr < self.ranges[i - 1].1
    }

    /// The search's answer for `addr` and the largest interval around it on
    /// which the search answers the same: between the start of the deciding
    /// mapping (i − 1) and the next start, split at the deciding mapping's
    /// end.
    fn interval(&self, addr: u64) -> (bool, Interval) {
        let r = &self.ranges;
        let i = r.partition_point(|&(s, _)| s <= addr);
        // [from, to): addresses decided by mapping i − 1 (by none if i = 0);
        // `to` = u64::MAX stands for "to the end of the address space" (the
        // last address is then left out of the interval, which only costs a
        // search).
        let from = if i > 0 { r[i - 1].0 } else { 0 };
        let to = r.get(i).map_or(u64::MAX, |&(s, _)| s);
        let end = if i > 0 {
            r[i - 1].1.clamp(from, to)
        } else {
            from
        };
        let iv = |lo: u64, hi: u64| Interval { lo, len: hi - lo };
        if addr < end {
            (true, iv(from, end))
        } else {
            (false, iv(end, to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cached answer equals the search for every address near every
    /// boundary, in an order that exercises hits and misses of both caches,
    /// with overlapping and nested mappings and ones at the ends of the
    /// address space.
    #[test]
    fn a_new_stack_inside_a_cached_interval_is_seen() {
        let mut m = StackMap::default();
        m.add(0x10_000, 0x20_000);
        // Cache two non-stack intervals, below and above the stack.
        assert!(!m.is_stack(0x5_000));
        assert!(!m.is_stack(0x30_000));
        assert!(!m.is_stack(0x5_000));
        m.add(0x4_000, 0x6_000);
        m.add(0x2f_000, 0x31_000);
        assert!(m.is_stack(0x5_000));
        assert!(m.is_stack(0x30_000));
        assert!(!m.is_stack(0x8_000));
    }

    #[test]
    fn cached_answers_equal_the_search() {
        let sets: &[&[(u64, u64)]] = &[
            &[],
            &[(0x1000, 0x2000)],
            &[(0x1000, 0x2000), (0x2000, 0x3000)],
            &[(0x1000, 0x5000), (0x2000, 0x3000)],
            &[(0x1000, 0x3000), (0x2000, 0x5000), (0x2000, 0x2800)],
            &[(0, 0x10), (u64::MAX - 0x10, u64::MAX)],
            &[(0x7f00_0000, 0x7f80_0000), (0x7ff0_0000, 0x8000_0000)],
        ];
        for set in sets {
            let mut m = StackMap::default();
            for &(s, e) in *set {
                m.add(s, e);
            }
            let mut probes: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1];
            for &(s, e) in *set {
                for b in [s, e] {
                    for d in [0u64, 1, 2, 0x7ff] {
                        probes.push(b.wrapping_add(d));
                        probes.push(b.wrapping_sub(d));
                    }
                }
            }
            // Forward, backward and interleaved orders.
            let mut order = probes.clone();
            order.extend(probes.iter().rev());
            for (a, b) in probes.iter().zip(probes.iter().rev()) {
                order.push(*a);
                order.push(*b);
            }
            for &a in &order {
                assert_eq!(m.is_stack(a), m.search(a), "{set:x?} at {a:#x}");
            }
            // The loop form, with its copy of the caches.
            let m = {
                let mut m = StackMap::default();
                for &(s, e) in *set {
                    m.add(s, e);
                }
                m
            };
            let mut c = m.cache();
            for &a in &order {
                assert_eq!(m.classify(&mut c, a), m.search(a), "{set:x?} at {a:#x}");
            }
        }
    }

    /// Adding a mapping drops cached answers that it changes.
    #[test]
    fn adding_a_stack_drops_the_caches() {
        let mut m = StackMap::default();
        m.add(0x1000, 0x2000);
        assert!(!m.is_stack(0x3000));
        assert!(m.is_stack(0x1800));
        m.add(0x2800, 0x4000);
        assert!(m.is_stack(0x3000));
        assert!(!m.is_stack(0x2400));
        m.add(0x2000, 0x2800);
        assert!(m.is_stack(0x2400));
    }
}
