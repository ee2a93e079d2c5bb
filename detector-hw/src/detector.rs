//! The [`Detector`] trait the emulator drives, one synchronous call per event,
//! and the [`Granularity`] configuration knob.
//!
//! # Semantics shared by every detector
//!
//! * [`Detector::access`] is called *before* the access takes effect. It
//!   checks the access against the access history and then records it (a racy
//!   access is recorded too, so a race does not hide later races). An access
//!   is racy iff any of its bytes races; the report lists the distinct earlier
//!   accesses `(thread, pc, kind)` found across all bytes.
//! * What is checked, who an event belongs to and what LARDx86 operations do
//!   is defined once in [`crate::lard`] (Tracked accesses only, identity =
//!   [`Origin::lard_key`](crate::event::Origin::lard_key), WriteVC sets an
//!   entry of the current identity's vector clock, ...).
//! * Vector clocks start with own entry 1 and all other entries 0; see
//!   [`crate::clock`] for why.
//! * An identity never races with itself (program order), whatever its clock
//!   entries say.

use crate::event::{Access, Event, EventKind, LardOp, LowLevelSync, Origin, ProgramEvent};
use crate::lard::MAX_ACCESS_SIZE;
use crate::race::Race;

/// One access a detector's history holds for a byte ([`Detector::history`]):
/// what a later access of the byte is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remembered {
    /// The identity that made it.
    pub thread: crate::event::ThreadKey,
    /// Its clock entry (epoch) then.
    pub clock: u64,
    /// Where it was made (a site: the PC or an attributed call site).
    pub pc: u64,
    /// A write (else a read).
    pub write: bool,
}

/// A data-race detector consuming the [`crate::event`] model.
pub trait Detector {
    /// A short name for reports ("canonical", "fasttrack", ...).
    fn name(&self) -> &'static str;

    /// Checks access `a` (before it takes effect) and records it. Returns the
    /// race report if any byte of `a` races with an earlier access.
    fn access(&mut self, a: &Access) -> Option<Race>;

    /// Applies a LARDx86 operation issued by `origin`.
    fn lard(&mut self, origin: &Origin, op: &LardOp);

    /// True if the detector applies `LardOp::FloorVc` (docs/lardx86.md,
    /// "Clock floors"): a runtime may then leave the floored entries out of
    /// the clocks it makes. False by default, and then binary mode's
    /// runtime raises no floor and writes every entry.
    fn accepts_floors(&self) -> bool {
        false
    }

    /// True if an access that repeats an earlier race-free access exactly
    /// (same identity, first byte, size, kind and PC), with no event in
    /// between that changed the identity's clock or touched the 8-byte
    /// granule of the access, changes nothing: its verdict is "no race" and
    /// every later report is the same whether or not it was made. Adapters
    /// may then skip such repeats (`variants::same_epoch`). False by
    /// default; byte-granular FastTrack says true.
    fn repeats_in_epoch_are_noops(&self) -> bool {
        false
    }

    /// The access history of byte `addr`: the last write and the reads a
    /// later access is checked against; `None` if the detector keeps no
    /// per-byte history it can show.
    fn history(&self, addr: u64) -> Option<Vec<Remembered>> {
        let _ = addr;
        None
    }

    /// Low-level synchronization; LARD detectors ignore it (Rule 2).
    fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        let _ = (origin, s);
    }

    /// Low-level synchronization together with the PC of the instruction
    /// (or system call) that caused it; by default the same as
    /// [`Detector::sync`]. Detectors that need the PC override this.
    fn sync_at(&mut self, origin: &Origin, s: &LowLevelSync, pc: u64) {
        let _ = pc;
        self.sync(origin, s);
    }

    /// A program-level fact (allocation, lock identity, thread end). Exact
    /// detectors ignore these (the default): their happens-before comes from
    /// LARDx86 only.
    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, pc: u64) {
        let _ = (origin, ev, pc);
    }

    /// The core now runs `origin`'s thread. LARD's identity comes from each
    /// event's origin, so exact detectors ignore this (the default); a
    /// hardware model charges the switch.
    fn context_switch(&mut self, origin: &Origin) {
        let _ = origin;
    }

    /// Dispatches one event to [`Detector::access`], [`Detector::lard`],
    /// [`Detector::sync_at`], [`Detector::context_switch`] or
    /// [`Detector::program`].
    fn event(&mut self, e: &Event) -> Option<Race> {
        dispatch(self, e)
    }
}

/// What [`Detector::event`] does unless a detector wraps it: one event to
/// [`Detector::access`], [`Detector::lard`], [`Detector::sync_at`],
/// [`Detector::context_switch`] or [`Detector::program`].
pub fn dispatch<D: Detector + ?Sized>(d: &mut D, e: &Event) -> Option<Race> {
    match &e.kind {
        EventKind::Access(a) => d.access(a),
        EventKind::Lard(op) => {
            d.lard(&e.origin, op);
            None
        }
        EventKind::Sync(s) => {
            d.sync_at(&e.origin, s, e.pc);
            None
        }
        EventKind::ContextSwitch => {
            d.context_switch(&e.origin);
            None
        }
        EventKind::Program(p) => {
            d.program(&e.origin, p, e.pc);
            None
        }
    }
}

/// The unit an access history describes (RADISH §5.2, "metadata coarsening").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// One access history per byte: exact for any program.
    #[default]
    Byte,
    /// Type-safe coarsening: an access of power-of-two size `n` aligned to
    /// `n` is tracked as one unit, whose history lives in the shadow of its
    /// first byte. Other accesses fall back to bytes.
    ///
    /// Exact only for programs that, between allocation and
    /// ClearHistory, always access each item with the same size and
    /// alignment (and move/clear whole items); otherwise races between an
    /// item and a partial access to it (e.g. an 8-byte write and a 1-byte
    /// read at offset 5) are missed.
    TypeSafe,
}

/// The addresses whose access histories an access checks and records:
/// `(first, count)`, addresses `first, first+1, ...` (wrapping).
///
/// For [`Granularity::Byte`] these are all bytes (size clamped to
/// [`MAX_ACCESS_SIZE`]); for [`Granularity::TypeSafe`] an aligned
/// power-of-two access is the single unit at its first byte.
#[inline]
pub fn history_units(a: &Access, granularity: Granularity) -> (u64, u32) {
    let size = a.size.min(MAX_ACCESS_SIZE);
    match granularity {
        Granularity::TypeSafe
            if size.is_power_of_two() && a.addr.is_multiple_of(u64::from(size)) =>
        {
            (a.addr, 1)
        }
        _ => (a.addr, size),
    }
}
