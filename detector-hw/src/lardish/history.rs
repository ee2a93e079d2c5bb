//! The software manager's variable map: the exact access history of every
//! byte (the ground truth every verdict comes from), annotated with which
//! records hardware currently holds, the in-hardware status and each core's
//! local permission (RADISH §4.3–§4.4).
//!
//! Hardware never decides a verdict: it only decides which stage resolves an
//! access. A record is *held in hardware* when its [`Holder`] is still
//! valid: the owner core still runs the same thread (`gen`) and the owner's
//! metadata line is still resident with the same fill id (an eviction or a
//! rollover moves it to software).

use crate::clock::{ClockRef, ThreadIdx};
use crate::event::AccessKind;

use super::inline::{Filler, InlineVec};

/// Last reads of one byte: most bytes have one reader, kept inline.
pub type Reads = InlineVec<Rec, 1>;
/// Permission slots of one byte, one per core up to the highest core that
/// ever held one (inline up to 4).
pub type Perms = InlineVec<PermSlot, 4>;

/// Local permission of a core's thread for one byte (RADISH §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Perm {
    /// Every access needs a check.
    None,
    /// Reads need no check.
    Read,
    /// Reads and writes need no check.
    Write,
}

/// How much of a byte's history hardware holds (RADISH §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HwStatus {
    /// Software must be consulted.
    InSoftware,
    /// The last write is in hardware.
    LastWrite,
    /// All last reads are in hardware.
    AllLastReads,
    /// The last write and all last reads are in hardware.
    Everything,
}

impl HwStatus {
    /// The status from its two components (`AllLastReads` needs a read).
    pub fn from_parts(write: bool, reads: bool, any_read: bool) -> HwStatus {
        match (write, reads) {
            (true, true) => HwStatus::Everything,
            (true, false) => HwStatus::LastWrite,
            (false, true) if any_read => HwStatus::AllLastReads,
            _ => HwStatus::InSoftware,
        }
    }

    fn parts(self) -> (bool, bool) {
        match self {
            HwStatus::Everything => (true, true),
            HwStatus::LastWrite => (true, false),
            HwStatus::AllLastReads => (false, true),
            HwStatus::InSoftware => (false, false),
        }
    }
}

/// Where a record lives in hardware: core, thread generation of that core,
/// fill id of the metadata line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Owner core.
    pub core: u16,
    /// The core's thread generation when the record was stored.
    pub gen: u32,
    /// Fill id of the metadata line holding it.
    pub fill: u64,
}

/// One last access (write, or one thread's last read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    /// Accessing identity.
    pub thread: ThreadIdx,
    /// Its own clock entry at the time.
    pub clock: u64,
    /// PC of the access.
    pub pc: u64,
    /// The hardware slot holding it, if it was ever stored in hardware.
    pub holder: Option<Holder>,
}

impl Filler for Rec {
    const FILL: Rec = Rec {
        thread: 0,
        clock: 0,
        pc: 0,
        holder: None,
    };
}

/// A core's permission with the conditions under which it is still valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermSlot {
    /// The permission.
    pub perm: Perm,
    /// Core generation it was set under.
    pub gen: u32,
    /// Fill id of the core's metadata line it lives in.
    pub fill: u64,
    /// Lowered by another core's access since it was set (statistics only:
    /// the cause of a hardware check).
    pub downgraded: bool,
}

impl PermSlot {
    /// Permission `perm` granted to the core of `holder`, valid while that
    /// core's generation and metadata line are `holder`'s.
    #[inline]
    pub fn granted(perm: Perm, holder: Holder) -> PermSlot {
        PermSlot {
            perm,
            gen: holder.gen,
            fill: holder.fill,
            downgraded: false,
        }
    }
}

const NO_PERM: PermSlot = PermSlot {
    perm: Perm::None,
    gen: u32::MAX,
    fill: u64::MAX,
    downgraded: false,
};

impl Filler for PermSlot {
    const FILL: PermSlot = NO_PERM;
}

/// A record that a software check could not import into hardware for lack
/// of a clock-table entry (never valid: no core has this index; statistics
/// use it as the cause of later software checks).
pub const REFUSED: Holder = Holder {
    core: u16::MAX,
    gen: u32::MAX,
    fill: u64::MAX,
};

/// History, status and permissions of one byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteMeta {
    /// Last write.
    pub write: Option<Rec>,
    /// Last read of each thread since the last write.
    pub reads: Reads,
    /// Status as last set by a write or a software check.
    pub status: HwStatus,
    /// The metadata slot whose status bits hold `status`.
    pub anchor: Option<Holder>,
    /// One permission slot per core; cores beyond its length have none
    /// (`NO_PERM`: most bytes are only ever accessed from a few cores, and
    /// a slot without permission cannot be downgraded, so it need not be
    /// stored). Read with [`ByteMeta::perm_slot`].
    pub perms: Perms,
    /// The software manager's variable map holds an entry for the byte
    /// although every current record may be held in hardware: a record
    /// that hardware no longer held for this thread (written back by an
    /// eviction, flushed after a thread switch, or never stored in
    /// hardware) was replaced, or was imported into hardware by a software
    /// check, which leaves the software's copy in place (RADISH Table 1),
    /// or a software check of the byte's line flushed the records of a
    /// thread switched out (RADISH §4.6's lazy flush). See
    /// [`ByteMeta::in_software`].
    pub in_variable_map: bool,
}

impl Default for ByteMeta {
    fn default() -> Self {
        ByteMeta::new()
    }
}

impl ByteMeta {
    /// An empty history (nothing in hardware).
    pub fn new() -> ByteMeta {
        ByteMeta {
            write: None,
            reads: Reads::default(),
            status: HwStatus::InSoftware,
            anchor: None,
            perms: Perms::default(),
            in_variable_map: false,
        }
    }

    /// Whether the byte holds an access history (a last write or a last
    /// read), not only hardware state.
    #[inline]
    pub fn has_history(&self) -> bool {
        self.write.is_some() || !self.reads.is_empty()
    }

    /// A copy of the records only, all in software (CopyHistory).
    pub fn software_copy(&self) -> ByteMeta {
        let strip = |r: &Rec| Rec { holder: None, ..*r };
        ByteMeta {
            write: self.write.as_ref().map(strip),
            reads: self.reads.iter().map(strip).collect(),
            status: HwStatus::InSoftware,
            anchor: None,
            perms: Perms::default(),
            in_variable_map: true,
        }
    }

    /// Whether the software manager holds part of the byte's history, so
    /// that ClearHistory or CopyHistory has a software history to clear
    /// or copy (LARD §5.3): an entry it kept ([`ByteMeta::in_variable_map`])
    /// or a current record that no resident metadata line holds (`cached`:
    /// the holder's line still has its fill, whichever thread its core
    /// runs now: thread switches flush lazily, RADISH §4.6). Software
    /// checks import records into hardware without writing the variable
    /// map and new records are stored in hardware, so a history that
    /// never left the caches exists in hardware only, and a history
    /// operation merely invalidates it there.
    pub fn in_software(&self, cached: &impl Fn(&Holder) -> bool) -> bool {
        self.in_variable_map
            || self
                .write
                .iter()
                .chain(self.reads.iter())
                .any(|r| !r.holder.is_some_and(|h| cached(&h)))
    }

    /// The status demoted by what is no longer held in hardware.
    pub fn effective_status(&self, valid: &impl Fn(&Holder) -> bool) -> HwStatus {
        match &self.anchor {
            Some(a) if valid(a) => {}
            _ => return HwStatus::InSoftware,
        }
        let (mut w, mut r) = self.status.parts();
        if w {
            if let Some(rec) = &self.write {
                w = rec.holder.is_some_and(|h| valid(&h));
            }
        }
        if r {
            r = self
                .reads
                .iter()
                .all(|x| x.holder.is_some_and(|h| valid(&h)));
        }
        HwStatus::from_parts(w, r, !self.reads.is_empty())
    }

    /// Recomputes the status after software imported records: a component
    /// is in hardware if all its records are held (no last write counts).
    pub fn import_status(&mut self, anchor: Holder, valid: &impl Fn(&Holder) -> bool) {
        let held = |r: &Rec| r.holder.is_some_and(|h| valid(&h));
        let w = match &self.write {
            None => true,
            Some(r) => held(r),
        };
        let r = self.reads.iter().all(held);
        self.status = HwStatus::from_parts(w, r, !self.reads.is_empty());
        self.anchor = Some(anchor);
    }

    /// Permission of thread `t` with clock `c` computed from what hardware
    /// holds (fill-time broadcast and hardware checks), comparing each
    /// record's clock as hardware holds it (`hw`: its merged clock-table
    /// entry's clock, never below its own).
    pub fn hw_perm(
        &self,
        t: ThreadIdx,
        c: ClockRef<'_>,
        valid: &impl Fn(&Holder) -> bool,
        hw: &impl Fn(&Rec) -> u64,
    ) -> Perm {
        let status = self.effective_status(valid);
        match status {
            HwStatus::Everything => self.perm_by(t, c, hw),
            HwStatus::LastWrite if self.write_ordered(t, c, hw) => Perm::Read,
            _ => Perm::None,
        }
    }

    fn write_ordered(&self, t: ThreadIdx, c: ClockRef<'_>, clock: &impl Fn(&Rec) -> u64) -> bool {
        match &self.write {
            None => true,
            Some(w) => w.thread == t || clock(w) <= c.get(w.thread),
        }
    }

    /// Permission of `t` computed from the complete history (software).
    pub fn exact_perm(&self, t: ThreadIdx, c: ClockRef<'_>) -> Perm {
        self.perm_by(t, c, &|r| r.clock)
    }

    /// Permission of `t` with each record's clock read by `clock`.
    fn perm_by(&self, t: ThreadIdx, c: ClockRef<'_>, clock: &impl Fn(&Rec) -> u64) -> Perm {
        if !self.write_ordered(t, c, clock) {
            Perm::None
        } else if self
            .reads
            .iter()
            .all(|r| r.thread == t || clock(r) <= c.get(r.thread))
        {
            Perm::Write
        } else {
            Perm::Read
        }
    }

    /// Whether a hardware race check can decide an access of `kind` by `t`
    /// (RADISH §4.5): a read needs the last write in hardware, or all last
    /// reads with one ordered before it; a write needs everything. With
    /// each record's clock as hardware holds it (`hw`): a record hardware
    /// finds unordered through a merged entry (its own clock is below the
    /// entry's) may be ordered, so the check goes to software.
    pub fn hw_decidable(
        &self,
        kind: AccessKind,
        t: ThreadIdx,
        c: ClockRef<'_>,
        valid: &impl Fn(&Holder) -> bool,
        hw: &impl Fn(&Rec) -> u64,
    ) -> bool {
        // A record compared: hardware decides unless it finds it unordered
        // through a merged entry.
        let sure = |r: &Rec| {
            let v = hw(r);
            r.thread == t || v == r.clock || v <= c.get(r.thread)
        };
        match (kind, self.effective_status(valid)) {
            (AccessKind::Read, HwStatus::Everything | HwStatus::LastWrite) => {
                self.write.as_ref().is_none_or(sure)
            }
            (AccessKind::Write, HwStatus::Everything) => {
                self.write.as_ref().is_none_or(sure) && self.reads.iter().all(sure)
            }
            (AccessKind::Read, HwStatus::AllLastReads) => self
                .reads
                .iter()
                .any(|r| r.thread == t || hw(r) <= c.get(r.thread)),
            _ => false,
        }
    }

    /// Core `core`'s permission slot.
    #[inline]
    pub fn perm_slot(&self, core: usize) -> PermSlot {
        self.perms.get(core).copied().unwrap_or(NO_PERM)
    }

    /// Sets core `core`'s permission slot.
    #[inline]
    pub fn set_perm_slot(&mut self, core: usize, slot: PermSlot) {
        while self.perms.len() <= core {
            self.perms.push(NO_PERM);
        }
        self.perms[core] = slot;
    }

    /// Downgrades every core's permission but `c`'s after `c`'s access.
    #[inline]
    pub fn downgrade_others(&mut self, c: usize, kind: AccessKind) {
        for p in 0..self.perms.len() {
            if p != c {
                self.downgrade(p, kind);
            }
        }
    }

    /// Downgrades core `p`'s permission after another core's access.
    pub fn downgrade(&mut self, p: usize, kind: AccessKind) {
        let cap = match kind {
            AccessKind::Write => Perm::None,
            AccessKind::Read => Perm::Read,
        };
        if let Some(s) = self.perms.get_mut(p) {
            if s.perm > cap {
                s.perm = cap;
                s.downgraded = true;
            }
        }
    }
}
