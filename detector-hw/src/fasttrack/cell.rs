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
//! | `1 ..= 0xFFFD` | thread `code − 1` | the PC |
//! | `0xFFFE` (*wide*) | a thread or PC that does not fit | an index into [`Wide`] |
//! | `0xFFFF` | read-shared ([`SHARED`]; reads only) | 0 |
//!
//! Every x86-64 user-space PC is below 2^47 and runs have far fewer than
//! 65,533 identities, so the wide code is the exact fallback for other
//! values (a hash-consed table of `(thread, PC)` pairs, bounded by the
//! distinct pairs): packing and unpacking are a bijection, so every report
//! names the same thread and PC as an unpacked cell would. The 40-byte
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
/// Code of a wide epoch (an index into [`Wide`]).
const CODE_WIDE: u64 = 0xFFFE;
/// The read-shared word (code `0xFFFF`, no PC).
pub(super) const WHO_SHARED: Who = 0xFFFF;
/// Threads below this index are stored directly (code = thread + 1).
const DIRECT_TIDS: u64 = CODE_WIDE - 1;
/// PCs below this are stored directly.
const DIRECT_PC_LIMIT: u64 = 1 << (64 - CODE_BITS);

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

/// The `(thread, PC)` pairs of wide epochs, hash-consed (so equal epochs
/// pack to equal words), and the packing itself.
#[derive(Clone, Debug, Default)]
pub(super) struct Wide {
    pairs: Vec<(ThreadIdx, u64)>,
    index: FxHashMap<(ThreadIdx, u64), u64>,
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
        if u64::from(t) < DIRECT_TIDS && pc < DIRECT_PC_LIMIT && !self.always {
            pc << CODE_BITS | (u64::from(t) + 1)
        } else {
            self.pack_wide(t, pc)
        }
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

    /// The thread of `w` ([`NONE`] for 0, [`SHARED`] for [`WHO_SHARED`]).
    #[inline]
    pub(super) fn tid(&self, w: Who) -> ThreadIdx {
        let code = w & CODE_MASK;
        if code < CODE_WIDE {
            // Code 0 wraps to NONE.
            (code as ThreadIdx).wrapping_sub(1)
        } else {
            self.tid_wide(w)
        }
    }

    #[cold]
    fn tid_wide(&self, w: Who) -> ThreadIdx {
        if w & CODE_MASK == CODE_WIDE {
            self.pairs[(w >> CODE_BITS) as usize].0
        } else {
            SHARED
        }
    }

    /// The PC of `w` (0 for none or read-shared).
    #[inline]
    pub(super) fn pc(&self, w: Who) -> u64 {
        if w & CODE_MASK == CODE_WIDE {
            self.pairs[(w >> CODE_BITS) as usize].1
        } else if w == WHO_SHARED {
            0
        } else {
            w >> CODE_BITS
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
        let tids = [0, 1, 0xFFFB, 0xFFFC, 0xFFFD, 0xFFFE, 1 << 20, SHARED - 1];
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
                let direct = u64::from(t) < DIRECT_TIDS && pc < DIRECT_PC_LIMIT;
                assert_eq!(w & CODE_MASK != CODE_WIDE, direct);
            }
        }
    }
}
