//! FastTrack's 32-byte shadow cell: two epochs whose thread and PC share
//! one word each, so that a cell is half a host cache line.
//!
//! A cell holds the last write `w_tid@w_clock` (PC `w_pc`) and the reads
//! (one exclusive epoch `r_tid@r_clock`, PC `r_pc`, or a read vector clock
//! index in `r_clock`). The thread and the PC of each epoch are packed into
//! one [`Who`] word: the low 16 bits are a *code*, the high 48 bits a PC.
//!
//! | code | meaning | high 48 bits |
//! |---|---|---|
//! | 0 | no epoch ([`NONE`]; the whole word is 0) | 0 |
//! | `1 ..= 0xFFFC` | thread `code − 1` | the PC if below 2^47, else 2^47 + its index among the *sites* of [`Wide`] |
//! | `0xFFFD` (*big*) | thread `0xFFFC + t` | `t` (24 bits), then the PC's index among the sites (24 bits) |
//! | `0xFFFE` (*wide*) | a thread or site beyond those | an index into [`Wide`]'s `(thread, PC)` pairs |
//! | `0xFFFF` | read-shared ([`SHARED`]; reads only) | 0 |
//!
//! Every x86-64 user-space PC is below 2^47. A larger one is a *site*: a
//! Tracked access in lard-cc's `lard_caller_pc` section carries its call
//! stack's id in the upper 17 bits (docs/lard-cc.md, "Call stacks"). Sites
//! are hash-consed once for all threads, so their table is bounded by the
//! program's distinct (PC, call stack) pairs, whatever the number of tasks
//! that run them. A run with more than 65,532 identities (a recursive task
//! program starts one per task) packs the next 2^24 as *big*: the PC is
//! interned as a site too, so a new task costs no table entry of its own.
//! The wide code is the exact fallback beyond (a hash-consed table of
//! `(thread, PC)` pairs). Packing and unpacking are a bijection, so every
//! report names the same thread and PC as an unpacked cell would. The 40-byte
//! cell this replaces straddled two host cache lines for half of the
//! granules; a 32-byte-aligned cell never does.

use crate::clock::{FxHashMap, ThreadIdx};

/// Thread slot of an empty epoch.
pub(super) const NONE: ThreadIdx = ThreadIdx::MAX;
/// Read thread slot meaning "read-shared": the read clock is an index into
/// the read vector clock table.
pub(super) const SHARED: ThreadIdx = ThreadIdx::MAX - 1;

/// A packed epoch thread and PC (module docs).
pub(super) type Who = u64;

/// Bits of a [`Who`] code.
const CODE_BITS: u32 = 16;
/// Mask of a [`Who`] code.
const CODE_MASK: u64 = (1 << CODE_BITS) - 1;
/// Code of a big epoch (thread offset and site index in the high bits).
const CODE_BIG: u64 = 0xFFFD;
/// Code of a wide epoch (an index into [`Wide`]).
const CODE_WIDE: u64 = 0xFFFE;
/// The read-shared word (code `0xFFFF`, no PC).
pub(super) const WHO_SHARED: Who = 0xFFFF;
/// Threads below this index are stored directly (code = thread + 1).
const DIRECT_TIDS: u64 = CODE_BIG - 1;
/// Bits of a big epoch's thread offset and of its site index.
const BIG_BITS: u32 = 24;
/// Mask of a big epoch's site index (in the high bits).
const BIG_MASK: u64 = (1 << BIG_BITS) - 1;
/// PCs below this are stored directly; in a direct word's high 48 bits,
/// this bit marks a site index instead.
const SITE: u64 = 1 << 47;

/// The shadow cell of one byte or access unit (module docs).
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cell {
    /// Clock of the last write (0 when none: never races).
    pub(super) w_clock: u64,
    /// Clock of the exclusive read, or the read vector clock index.
    pub(super) r_clock: u64,
    /// Last writer and its PC, or 0.
    pub(super) w: Who,
    /// Last reader (exclusive) and its PC, [`WHO_SHARED`] or 0.
    pub(super) r: Who,
}

/// The empty history (all zero).
pub(super) const EMPTY: Cell = Cell {
    w_clock: 0,
    r_clock: 0,
    w: 0,
    r: 0,
};

impl Cell {
    /// True if the reads are read-shared.
    #[inline]
    pub(super) fn is_shared(&self) -> bool {
        self.r == WHO_SHARED
    }
}

/// The sites and the `(thread, PC)` pairs of wide epochs, hash-consed (so
/// equal epochs pack to equal words), and the packing itself.
#[derive(Clone, Debug, Default)]
pub(super) struct Wide {
    pairs: Vec<(ThreadIdx, u64)>,
    index: FxHashMap<(ThreadIdx, u64), u64>,
    /// PCs of 2^47 and above, in the order first packed.
    sites: Vec<u64>,
    site_index: FxHashMap<u64, u64>,
    /// The last site packed and its high bits (0: none yet).
    last_site: (u64, u64),
    /// Pack every epoch wide (the reference layout of the differential
    /// tests: an independent encoding of the same histories).
    always: bool,
}

impl Wide {
    /// A table that packs every epoch wide.
    pub(super) fn always_wide() -> Wide {
        Wide {
            always: true,
            ..Wide::default()
        }
    }

    /// The word of an epoch by thread `t` (not [`NONE`] or [`SHARED`]) at `pc`.
    #[inline]
    pub(super) fn pack(&mut self, t: ThreadIdx, pc: u64) -> Who {
        if u64::from(t) < DIRECT_TIDS && !self.always {
            let high = if pc < SITE { pc } else { SITE | self.site(pc) };
            high << CODE_BITS | (u64::from(t) + 1)
        } else {
            self.pack_big(t, pc)
        }
    }

    /// A thread from [`DIRECT_TIDS`] on: big if it and the PC's site index
    /// fit, else wide.
    #[inline(never)]
    fn pack_big(&mut self, t: ThreadIdx, pc: u64) -> Who {
        let off = u64::from(t).wrapping_sub(DIRECT_TIDS);
        if !self.always && off <= BIG_MASK && t < SHARED {
            let site = self.site(pc);
            if site <= BIG_MASK {
                return (off << BIG_BITS | site) << CODE_BITS | CODE_BIG;
            }
        }
        self.pack_wide(t, pc)
    }

    /// The index of site `pc` (interned on first use).
    #[inline]
    fn site(&mut self, pc: u64) -> u64 {
        if self.last_site.0 == pc && self.last_site.1 != 0 {
            return self.last_site.1 - 1;
        }
        self.site_uncached(pc)
    }

    #[inline(never)]
    fn site_uncached(&mut self, pc: u64) -> u64 {
        let next = self.sites.len() as u64;
        let i = *self.site_index.entry(pc).or_insert(next);
        if i == next {
            self.sites.push(pc);
        }
        // The cached index is stored + 1 (0: none yet).
        self.last_site = (pc, i + 1);
        i
    }

    #[cold]
    fn pack_wide(&mut self, t: ThreadIdx, pc: u64) -> Who {
        let next = self.pairs.len() as u64;
        let i = *self.index.entry((t, pc)).or_insert(next);
        if i == next {
            self.pairs.push((t, pc));
        }
        i << CODE_BITS | CODE_WIDE
    }

    /// The code of `w` (its low 16 bits).
    #[inline]
    pub(super) fn code(w: Who) -> u64 {
        w & CODE_MASK
    }

    /// The code of `w` if it is direct (the thread is the code − 1, the
    /// same in every epoch of that thread): not empty, big, wide or
    /// read-shared.
    #[inline]
    pub(super) fn direct_code(w: Who) -> Option<u64> {
        let code = w & CODE_MASK;
        (code != 0 && code < CODE_BIG).then_some(code)
    }

    /// True if epochs `a` and `b` are by the same thread.
    #[inline]
    pub(super) fn same_thread(&self, a: Who, b: Who) -> bool {
        let (ca, cb) = (a & CODE_MASK, b & CODE_MASK);
        if ca < CODE_BIG && cb < CODE_BIG {
            // Direct codes: the code is the thread.
            ca == cb
        } else {
            self.tid(a) == self.tid(b)
        }
    }

    /// The thread of `w` ([`NONE`] for 0, [`SHARED`] for [`WHO_SHARED`]).
    #[inline]
    pub(super) fn tid(&self, w: Who) -> ThreadIdx {
        let code = w & CODE_MASK;
        if code < CODE_BIG {
            // Code 0 wraps to NONE.
            (code as ThreadIdx).wrapping_sub(1)
        } else {
            self.tid_wide(w)
        }
    }

    #[cold]
    fn tid_wide(&self, w: Who) -> ThreadIdx {
        match w & CODE_MASK {
            CODE_BIG => (DIRECT_TIDS + (w >> (CODE_BITS + BIG_BITS))) as ThreadIdx,
            CODE_WIDE => self.pairs[(w >> CODE_BITS) as usize].0,
            _ => SHARED,
        }
    }

    /// The PC of `w` (0 for none or read-shared).
    #[inline]
    pub(super) fn pc(&self, w: Who) -> u64 {
        let code = w & CODE_MASK;
        if code == CODE_WIDE {
            self.pairs[(w >> CODE_BITS) as usize].1
        } else if code == CODE_BIG {
            self.sites[((w >> CODE_BITS) & BIG_MASK) as usize]
        } else if w == WHO_SHARED {
            0
        } else {
            let high = w >> CODE_BITS;
            if high & SITE == 0 {
                high
            } else {
                self.sites[(high & !SITE) as usize]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_a_bijection_on_every_thread_and_pc() {
        assert_eq!(std::mem::size_of::<Cell>(), 32);
        assert_eq!(std::mem::align_of::<Cell>(), 32);
        let mut wide = Wide::default();
        let mut always = Wide::always_wide();
        assert_eq!(wide.tid(0), NONE);
        assert_eq!(wide.tid(WHO_SHARED), SHARED);
        assert_eq!(wide.pc(WHO_SHARED), 0);
        let tids = [
            0,
            1,
            0xFFFB,
            0xFFFC,
            0xFFFD,
            0xFFFE,
            1 << 20,
            0xFFFC + (1 << 24) - 1,
            0xFFFC + (1 << 24),
            SHARED - 1,
        ];
        let pcs = [
            0,
            1,
            0x40_1000,
            (1 << 47) - 1,
            (1 << 48) - 1,
            1 << 48,
            u64::MAX,
        ];
        let mut seen = std::collections::HashMap::new();
        for &t in &tids {
            for &pc in &pcs {
                for table in [&mut wide, &mut always] {
                    let w = table.pack(t, pc);
                    assert_ne!(w, 0);
                    assert_ne!(w, WHO_SHARED);
                    assert_eq!((table.tid(w), table.pc(w)), (t, pc));
                    assert_eq!(table.pack(t, pc), w, "equal epochs pack equal");
                }
                let w = wide.pack(t, pc);
                assert_eq!(
                    *seen.entry(w).or_insert((t, pc)),
                    (t, pc),
                    "one word per epoch"
                );
                let packed = u64::from(t) < DIRECT_TIDS + (1 << BIG_BITS);
                assert_eq!(w & CODE_MASK != CODE_WIDE, packed);
            }
        }
    }

    #[test]
    fn sites_are_interned_once_for_all_threads() {
        let mut wide = Wide::default();
        let site = |stack: u64| (stack << 47) | 0x40_1234;
        for t in 0..1000 {
            for stack in 1..4 {
                let w = wide.pack(t, site(stack));
                assert_eq!((wide.tid(w), wide.pc(w)), (t, site(stack)));
                assert_ne!(w & CODE_MASK, CODE_WIDE);
            }
        }
        assert_eq!(wide.sites.len(), 3);
        assert!(wide.pairs.is_empty());
        // The cached last site and an older one pack alike.
        let a = wide.pack(7, site(1));
        wide.pack(7, site(2));
        assert_eq!(wide.pack(7, site(1)), a);
    }
}
