//! LARD semantics: how a LARD-aware detector interprets events.
//!
//! This is the one place that decides *which* accesses are checked, *which*
//! identity an event belongs to and *what* each LARDx86 operation does to
//! vector clocks and access histories (LARD §3, §4.1). Detectors
//! ([`crate::canonical::Canonical`], [`crate::fasttrack::FastTrack`]) only
//! implement the race check and the access-history representation, so later
//! variants (check all accesses, ignore ClearHistory, ...) can be layered by
//! changing this module's decisions rather than each detector.
//!
//! * **Tracked** (§3.1, Rule 1): only accesses with the Tracked prefix are
//!   checked and recorded; untracked accesses are ignored entirely (they
//!   neither race nor enter the access history).
//! * **Synchronization** (§3.2, Rule 2): low-level synchronization
//!   ([`LowLevelSync`](crate::event::LowLevelSync)) is ignored; only WriteVC
//!   changes vector clocks.
//! * **Identity** (§3.5, Rule 5): every event is attributed to
//!   [`Origin::lard_key`]: the language thread last declared with `Thread`
//!   on the kernel thread, else the kernel thread itself.
//! * **End** (`ProgramEvent::ThreadExit`, the only program event exact
//!   detectors act on): the identity's clock is dropped once its kernel
//!   thread runs another identity ([`ClockTable::ended`]); no verdict
//!   depends on it, only memory does.
//! * **ReadVC** is informational: the emulator owns the architectural clock
//!   values and reports what it returned.
//! * **WriteVC `tid, v`** sets entry `ThreadKey::Lang(tid)` of the current
//!   identity's vector clock to `v`.
//! * **FloorVc `tid, v`** (binary mode's runtime) makes entry
//!   `ThreadKey::Lang(tid)` of every clock at least `v`
//!   ([`ClockTable::raise_floor`]).
//! * **ClearHistory** (§3.3, Rule 3) empties the access histories of the
//!   region. **CopyHistory** (§3.4, Rule 4) replaces each destination byte's
//!   history with a copy of the corresponding source byte's history (a
//!   source byte without history makes the destination byte empty).
//!   Regions of length 0 are ignored and lengths are clamped to
//!   [`MAX_REGION_LEN`] (the emulator already rejects regions that cross a
//!   page; the clamp only keeps detectors bounded on any input).

use crate::clock::ClockTable;
use crate::event::{Access, LardOp, Origin, ProgramEvent, ThreadKey};

/// Largest region ClearHistory/CopyHistory act on (one 4 KiB page); longer
/// regions are clamped to this length.
pub const MAX_REGION_LEN: u64 = 4096;

/// Largest access size (in bytes) a detector checks; larger sizes are
/// clamped (the emulator reports 1 to 64).
pub const MAX_ACCESS_SIZE: u32 = 4096;

/// The identity LARD attributes an event from `origin` to.
#[inline]
pub fn identity(origin: &Origin) -> ThreadKey {
    origin.lard_key()
}

/// True if LARD checks and records access `a` (it carries the Tracked prefix).
#[inline]
pub fn is_checked(a: &Access) -> bool {
    a.tracked
}

/// What a LARD operation asks of a detector's access history, after the
/// clock effects have been applied by [`apply_clock_effects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryOp {
    /// Empty the histories of bytes `addr .. addr+len` (addresses wrap).
    Clear {
        /// First byte.
        addr: u64,
        /// Length, `1..=MAX_REGION_LEN`.
        len: u64,
    },
    /// Replace the histories of `dst .. dst+len` with copies of
    /// `src .. src+len` (taken before any destination byte changes, so
    /// overlapping regions behave like `memmove`).
    Copy {
        /// First source byte.
        src: u64,
        /// First destination byte.
        dst: u64,
        /// Length, `1..=MAX_REGION_LEN`.
        len: u64,
    },
}

/// Applies the vector-clock effects of `op` issued by `origin` to `clocks`
/// and returns the access-history effect, if any, for the detector to apply.
pub fn apply_clock_effects(
    clocks: &mut ClockTable,
    origin: &Origin,
    op: &LardOp,
) -> Option<HistoryOp> {
    let me = identity(origin);
    match *op {
        LardOp::Thread { .. } => {
            // The emulator already attributes this kernel thread's events to
            // the new language thread (`origin.lthread`); making sure the
            // identity exists (and dropping the clock of one that ended
            // there) is all there is to do.
            clocks.switched(origin);
            clocks.identity(me);
            None
        }
        LardOp::ReadVc { .. } => None,
        LardOp::WriteVc { tid, value } => {
            clocks.set_entry(me, ThreadKey::Lang(tid), value);
            None
        }
        LardOp::FloorVc { tid, value } => {
            clocks.raise_floor(ThreadKey::Lang(tid), value);
            None
        }
        LardOp::ClearHistory { addr, len } => {
            clamp_region(len).map(|len| HistoryOp::Clear { addr, len })
        }
        LardOp::CopyHistory { src, dst, len } => {
            clamp_region(len).map(|len| HistoryOp::Copy { src, dst, len })
        }
    }
}

/// Applies program event `ev` from `origin` to `clocks`: an identity's end
/// lets its clock go (the other program events carry no happens-before).
pub fn apply_program_event(clocks: &mut ClockTable, origin: &Origin, ev: &ProgramEvent) {
    if let ProgramEvent::ThreadExit = ev {
        clocks.ended(origin);
    }
}

/// `None` for an empty region, else the length clamped to [`MAX_REGION_LEN`].
fn clamp_region(len: u64) -> Option<u64> {
    if len == 0 {
        None
    } else {
        Some(len.min(MAX_REGION_LEN))
    }
}
