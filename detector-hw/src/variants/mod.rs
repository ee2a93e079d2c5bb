//! Detector variants for the accuracy analysis (LARD §4.4, §5.2, Table 3):
//! filters and adapters over the event stream in front of an exact detector.
//!
//! Every variant is a [`VariantDetector`]: one [`Variant`] plus an inner
//! [`Detector`] that implements LARD semantics ([`crate::lard`]; FastTrack by
//! default). The adapter decides which events the inner detector sees and in
//! what form; the inner detector only ever does what it does for LARD.
//! docs/accuracy.md defines each variant in terms of the emulator's events.
//!
//! | Variant | Accesses checked | Identity | WriteVC | Low-level sync | Clear | Copy |
//! |---|---|---|---|---|---|---|
//! | [`Variant::Lard`] | tracked | LARD (`lard_key`) | yes | no | yes | yes |
//! | [`Variant::AllMem`] | non-stack (tracked or not) | LARD | yes | no | yes | yes |
//! | [`Variant::AllSync`] | tracked | LARD | yes | yes | yes | yes |
//! | [`Variant::NoClear`] | tracked | LARD | yes | no | **no** | yes |
//! | [`Variant::NoCopy`] | tracked | LARD | yes | no | yes | **no** |
//! | [`Variant::NoThread`] | tracked | kernel thread | yes, entries bound to kernel threads | no | yes | yes |
//! | [`Variant::Naive`] | non-stack | kernel thread | **no** | yes | no | no |
//! | [`Variant::Object`] | tracked | LARD | ignored | thread exit only | ignored | moves objects |
//!
//! [`Variant::Object`] is not a LARD variant but the object race detector
//! ([`crate::object`]), which asks a different question on the same
//! execution; it sees every event unchanged (*direct*) and is shown beside
//! LARD, its differences being by design (docs/detectors.md).
//!
//! Three ways of feeding the inner detector:
//!
//! * **Pass-through** (Lard, AllMem, NoClear, NoCopy): events are forwarded,
//!   with the access filter applied to `tracked` and ClearHistory/CopyHistory
//!   dropped when ignored. The inner detector keeps the clocks.
//! * **Kernel identity** (NoThread): every origin is rewritten so the inner
//!   identity is the kernel thread (see [`Variant::NoThread`]); WriteVC
//!   entries are rewritten through the binding of language ids to kernel
//!   threads.
//! * **Clock-owning** (AllSync, Naive): the adapter owns the vector clocks
//!   (program clocks as LARD keeps them, plus low-level knowledge; module
//!   [`combined`]) and drives the inner detector through *virtual* language
//!   identities whose clock entries it sets with WriteVC just before each of
//!   their accesses. Race reports are translated back to real identities.

mod accuracy;
pub mod combined;
mod same_epoch;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::detector::Detector;
use crate::event::{
    Access, KernelThreadId, LangThreadId, LardOp, LowLevelSync, Origin, ProgramEvent, ThreadKey,
};
use crate::fasttrack::FastTrack;
use crate::race::Race;

pub use accuracy::{Accuracy, AccuracyRow, VariantSet};
pub use combined::Combined;

/// One detector of the accuracy analysis; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// LARD: tracked accesses, WriteVC only, Clear/Copy honoured, language
    /// identity. The ground truth.
    Lard,
    /// All non-stack accesses (tracked or not); tracked stack accesses are
    /// not checked either. Otherwise LARD.
    AllMem,
    /// LARD plus every low-level synchronization the hardware observes
    /// (atomic RMWs, futex wake/wait, thread create/exit/join) as
    /// happens-before edges. Racy set ⊆ LARD's (see [`combined`]).
    AllSync,
    /// LARD ignoring ClearHistory. Racy set ⊇ LARD's.
    NoClear,
    /// LARD ignoring CopyHistory.
    NoCopy,
    /// LARD ignoring Thread: identity = kernel thread. WriteVC `tid, v` by
    /// kernel thread `k` sets entry *bind(tid)* of `k`'s clock, where
    /// bind(tid) is the kernel thread on which language thread `tid` was
    /// first seen (Thread op or origin); entries of never-seen language
    /// threads are kept but belong to no kernel thread. Equal to LARD on 1:1
    /// executions; differs when language threads are multiplexed.
    NoThread,
    /// An unmodified low-level detector (RADISH-like): all non-stack
    /// accesses, all low-level synchronization, kernel identity, and no
    /// LARDx86 operation at all (WriteVC, ReadVC, Thread, ClearHistory,
    /// CopyHistory ignored).
    Naive,
    /// The object race detector ([`crate::object::ObjectDetector`]): object
    /// races, not data races; not in [`Variant::ALL`].
    Object,
}

impl Variant {
    /// Every variant, LARD first, in Table 3's column order (plus NoThread
    /// before Naïve).
    pub const ALL: [Variant; 7] = [
        Variant::Lard,
        Variant::AllMem,
        Variant::AllSync,
        Variant::NoClear,
        Variant::NoCopy,
        Variant::NoThread,
        Variant::Naive,
    ];

    /// [`Variant::ALL`] and the object race detector: what `lard accuracy`
    /// runs.
    pub const EXTENDED: [Variant; 8] = [
        Variant::Lard,
        Variant::AllMem,
        Variant::AllSync,
        Variant::NoClear,
        Variant::NoCopy,
        Variant::NoThread,
        Variant::Naive,
        Variant::Object,
    ];

    /// The lower-case CLI name (`lard`, `allmem`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Lard => "lard",
            Variant::AllMem => "allmem",
            Variant::AllSync => "allsync",
            Variant::NoClear => "noclear",
            Variant::NoCopy => "nocopy",
            Variant::NoThread => "nothread",
            Variant::Naive => "naive",
            Variant::Object => "object",
        }
    }

    /// The paper's label (`LARD`, `AllMem`, ..., `Naïve`).
    pub fn label(self) -> &'static str {
        match self {
            Variant::Lard => "LARD",
            Variant::AllMem => "AllMem",
            Variant::AllSync => "AllSync",
            Variant::NoClear => "NoClear",
            Variant::NoCopy => "NoCopy",
            Variant::NoThread => "NoThread",
            Variant::Naive => "Naïve",
            Variant::Object => "Object",
        }
    }

    /// True if the variant checks access `a`: tracked accesses (LARD), or
    /// every non-stack access (AllMem, Naïve).
    pub fn checks(self, a: &Access) -> bool {
        match self {
            Variant::AllMem | Variant::Naive => !a.stack,
            _ => a.tracked,
        }
    }

    /// True if the variant applies ClearHistory.
    pub fn honours_clear(self) -> bool {
        !matches!(self, Variant::NoClear | Variant::Naive)
    }

    /// True if the variant applies CopyHistory.
    pub fn honours_copy(self) -> bool {
        !matches!(self, Variant::NoCopy | Variant::Naive)
    }

    /// True if the variant turns low-level synchronization into edges.
    pub fn uses_low_level_sync(self) -> bool {
        matches!(self, Variant::AllSync | Variant::Naive)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of [`Variant::from_str`]: an unknown name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Variant::EXTENDED.iter().map(|v| v.name()).collect();
        write!(
            f,
            "unknown detector variant `{}` (expected one of: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;

    /// Parses a CLI name, case-insensitively; `naïve` is accepted for `naive`.
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        let lower = s.trim().to_lowercase();
        let lower = if lower == "naïve" { "naive" } else { &lower };
        Variant::EXTENDED
            .into_iter()
            .find(|v| v.name() == lower)
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

/// How a variant feeds its inner detector.
enum Adapter {
    /// Forward (filtered) events; the inner detector keeps the clocks.
    PassThrough,
    /// NoThread: kernel identities, WriteVC entries bound to kernel threads.
    Kernel(KernelBinding),
    /// AllSync, Naïve: the adapter owns the clocks.
    Owning(Box<Combined>),
    /// Object: every event reaches the inner detector unchanged.
    Direct,
}

/// First virtual id of an entry that names a language thread never seen
/// (NoThread); kernel threads use their own number (< 2^32).
const UNBOUND_BASE: u64 = 1 << 32;

/// NoThread's binding of language ids to kernel threads.
#[derive(Default)]
struct KernelBinding {
    /// Language thread → kernel thread it was first seen on.
    bound: HashMap<LangThreadId, KernelThreadId>,
    /// Language threads named by WriteVC before being seen: their entry's
    /// virtual id (`UNBOUND_BASE + n`).
    unbound: HashMap<LangThreadId, u64>,
}

impl KernelBinding {
    fn see(&mut self, l: LangThreadId, k: KernelThreadId) {
        self.bound.entry(l).or_insert(k);
    }

    /// The virtual (inner) id of entry `tid`.
    fn entry(&mut self, tid: LangThreadId) -> u64 {
        if let Some(&k) = self.bound.get(&tid) {
            return u64::from(k);
        }
        let n = self.unbound.len() as u64;
        *self.unbound.entry(tid).or_insert(UNBOUND_BASE + n)
    }

    fn origin(o: &Origin) -> Origin {
        Origin {
            lthread: Some(u64::from(o.kthread)),
            ..*o
        }
    }

    fn key(inner: ThreadKey) -> ThreadKey {
        match inner {
            ThreadKey::Lang(v) if v < UNBOUND_BASE => ThreadKey::Kernel(v as KernelThreadId),
            other => other,
        }
    }
}

/// A [`Variant`] in front of an inner [`Detector`]; see the module docs.
///
/// It implements [`Detector`]: feed it every event with
/// [`Detector::event`] (context switches and low-level synchronization
/// included; the clock-owning variants need them) and read the per-access
/// verdict from the returned `Option<Race>`. Reports name real identities
/// (language or kernel threads), never the adapter's virtual ones.
pub struct VariantDetector {
    variant: Variant,
    inner: Inner,
    adapter: Adapter,
}

/// The inner detector: FastTrack, called directly (the specialised path),
/// or any detector.
enum Inner {
    FastTrack(Box<FastTrack>),
    Other(Box<dyn Detector>),
}

impl Inner {
    #[inline]
    fn as_dyn(&mut self) -> &mut dyn Detector {
        match self {
            Inner::FastTrack(f) => f.as_mut(),
            Inner::Other(d) => d.as_mut(),
        }
    }

    #[inline]
    fn access(&mut self, a: &Access) -> Option<Race> {
        match self {
            Inner::FastTrack(f) => f.access(a),
            Inner::Other(d) => d.access(a),
        }
    }

    fn as_ref(&self) -> &dyn Detector {
        match self {
            Inner::FastTrack(f) => f.as_ref(),
            Inner::Other(d) => d.as_ref(),
        }
    }
}

impl VariantDetector {
    /// `variant` in front of `inner`, a fresh LARD detector (it must not have
    /// seen events yet); for [`Variant::Object`], a fresh
    /// [`ObjectDetector`](crate::object::ObjectDetector).
    pub fn new(variant: Variant, inner: Box<dyn Detector>) -> VariantDetector {
        VariantDetector::with_inner(variant, Inner::Other(inner))
    }

    /// `variant` in front of `inner` (fresh), called directly rather than
    /// through `dyn Detector`: the same verdicts and reports as
    /// [`VariantDetector::new`] with it, cheaper per access.
    pub fn with_fasttrack(variant: Variant, inner: FastTrack) -> VariantDetector {
        VariantDetector::with_inner(variant, Inner::FastTrack(Box::new(inner)))
    }

    fn with_inner(variant: Variant, inner: Inner) -> VariantDetector {
        let owning = |kernel_identity, program| {
            let mut c = Combined::new(kernel_identity, program);
            c.filter_repeats(inner.as_ref().repeats_in_epoch_are_noops());
            Adapter::Owning(Box::new(c))
        };
        let adapter = match variant {
            Variant::AllSync => owning(false, true),
            Variant::Naive => owning(true, false),
            Variant::NoThread => Adapter::Kernel(KernelBinding::default()),
            Variant::Object => Adapter::Direct,
            _ => Adapter::PassThrough,
        };
        VariantDetector {
            variant,
            inner,
            adapter,
        }
    }

    /// `variant` in front of a fresh byte-granular [`FastTrack`].
    pub fn fasttrack(variant: Variant) -> VariantDetector {
        VariantDetector::with_fasttrack(variant, FastTrack::new())
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The inner detector's name.
    pub fn inner_name(&self) -> &'static str {
        self.inner.as_ref().name()
    }

    /// The clock-owning adapter's state (AllSync, Naïve), for inspection.
    pub fn combined(&self) -> Option<&Combined> {
        match &self.adapter {
            Adapter::Owning(c) => Some(c),
            _ => None,
        }
    }

    fn history_op_allowed(&self, op: &LardOp) -> bool {
        match op {
            LardOp::ClearHistory { .. } => self.variant.honours_clear(),
            LardOp::CopyHistory { .. } => self.variant.honours_copy(),
            _ => true,
        }
    }
}

impl Detector for VariantDetector {
    fn name(&self) -> &'static str {
        self.variant.name()
    }

    #[inline]
    fn access(&mut self, a: &Access) -> Option<Race> {
        let checked = self.variant.checks(a);
        match &mut self.adapter {
            Adapter::PassThrough => {
                if !checked {
                    return None;
                }
                let fwd = Access {
                    tracked: true,
                    ..*a
                };
                let mut race = self.inner.access(&fwd)?;
                race.access = *a;
                Some(race)
            }
            Adapter::Kernel(b) => {
                if let Some(l) = a.origin.lthread {
                    b.see(l, a.origin.kthread);
                }
                if !checked {
                    return None;
                }
                let fwd = Access {
                    tracked: true,
                    origin: KernelBinding::origin(&a.origin),
                    ..*a
                };
                let mut race = self.inner.access(&fwd)?;
                race.access = *a;
                race.thread = KernelBinding::key(race.thread);
                for p in &mut race.priors {
                    p.thread = KernelBinding::key(p.thread);
                }
                race.priors.sort_unstable();
                Some(race)
            }
            Adapter::Owning(c) => match &mut self.inner {
                Inner::FastTrack(f) => c.access_fasttrack(f, a, checked),
                Inner::Other(d) => c.access(d.as_mut(), a, checked),
            },
            Adapter::Direct => self.inner.access(a),
        }
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        let allowed = self.history_op_allowed(op);
        match &mut self.adapter {
            Adapter::PassThrough => {
                if allowed {
                    self.inner.as_dyn().lard(origin, op);
                }
            }
            Adapter::Kernel(b) => {
                if let Some(l) = origin.lthread {
                    b.see(l, origin.kthread);
                }
                let o = KernelBinding::origin(origin);
                match *op {
                    LardOp::Thread { id } => b.see(id, origin.kthread),
                    // Never delivered: the variants do not accept floors
                    // (`Detector::accepts_floors`).
                    LardOp::ReadVc { .. } | LardOp::FloorVc { .. } => {}
                    LardOp::WriteVc { tid, value } => {
                        let tid = b.entry(tid);
                        self.inner
                            .as_dyn()
                            .lard(&o, &LardOp::WriteVc { tid, value });
                    }
                    LardOp::ClearHistory { .. } | LardOp::CopyHistory { .. } => {
                        if allowed {
                            self.inner.as_dyn().lard(&o, op);
                        }
                    }
                }
            }
            Adapter::Owning(c) => c.lard(self.inner.as_dyn(), origin, op, allowed),
            Adapter::Direct => self.inner.as_dyn().lard(origin, op),
        }
    }

    fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        match &mut self.adapter {
            Adapter::Owning(c) => c.sync(origin, s),
            Adapter::Direct => self.inner.as_dyn().sync(origin, s),
            _ => {}
        }
    }

    fn sync_at(&mut self, origin: &Origin, s: &LowLevelSync, pc: u64) {
        match &mut self.adapter {
            Adapter::Owning(c) => c.sync_at(origin, s, Some(pc)),
            Adapter::Direct => self.inner.as_dyn().sync_at(origin, s, pc),
            _ => {}
        }
    }

    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, pc: u64) {
        if let Adapter::Direct = self.adapter {
            self.inner.as_dyn().program(origin, ev, pc);
        }
    }

    fn context_switch(&mut self, origin: &Origin) {
        if let Adapter::Owning(c) = &mut self.adapter {
            c.context_switch(origin);
        }
    }
}
