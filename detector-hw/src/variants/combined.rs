//! The clock-owning adapter behind AllSync and Naïve: program clocks (exactly
//! LARD's) combined with low-level synchronization, fed to an unmodified
//! LARD detector through virtual identities.
//!
//! # State, per identity `u`
//!
//! * `P_u`: the *program clock*, exactly LARD's: own entry starts at
//!   [`INITIAL_OWN_CLOCK`], WriteVC `tid, v` sets `P_u[Lang(tid)] = v`
//!   (raw: values may go down, as in LARD). Naïve ignores WriteVC, so its
//!   `P_u` stays `{u: 1}`.
//! * `K_u`: *low-level knowledge*, a vector of encoded values, only ever
//!   joined (entry-wise max), never lowered.
//! * `l_u`: the number of low-level releases `u` made since its own program
//!   entry last changed (reset to 0 when WriteVC changes `P_u[u]`).
//!
//! # Encoding: one scalar epoch per access
//!
//! An access by `u` gets the epoch `enc(P_u[u], l_u)` where
//! `enc(p, l) = p·2^32 + l` (both parts saturated to `2^32 − 1`, and
//! `enc(0, l) = 0` so that LARD's "epoch 0 is ordered before everything"
//! survives). `u`'s view of another identity `x` is the scalar
//!
//! ```text
//! C_u[x] = max( enc(P_u[x], 2^32 − 1),  K_u[x] )
//! ```
//!
//! and the inner detector's usual check applies: an earlier access by `x`
//! with epoch `e` is ordered before the current access by `u` iff `u == x`
//! or `e <= C_u[x]`.
//!
//! # Soundness: AllSync's racy accesses ⊆ LARD's
//!
//! Take an access `a` by `x` at LARD epoch `p = P_x[x]` (so AllSync epoch
//! `enc(p, l) <= enc(p, 2^32−1)`) and a later access `b` by `u`. If LARD
//! orders them, `u == x` (same identity in both: AllSync uses LARD's
//! identities) or `p <= P_u[x]`, and then `enc(p, l) <= enc(P_u[x], 2^32−1)
//! <= C_u[x]` (enc is monotone in `p`, saturation included): AllSync orders
//! them too. Nothing else in this module can lower `C_u[x]` below
//! `enc(P_u[x], 2^32−1)`, whatever low-level events do. So every pair LARD
//! orders, AllSync orders. With an inner detector whose access history does
//! not depend on the ordering — [`Canonical`](crate::Canonical): the last
//! write and each identity's last read since it — both detectors hold the
//! same access records for every byte, so an access racy under AllSync
//! (some record unordered) is racy under LARD. This holds on *any* event
//! stream. With FastTrack inside, it holds whenever FastTrack agrees with
//! Canonical on LARD (a runtime whose clocks describe happens-before; see
//! [`crate::fasttrack`]): FastTrack keeps a subset of Canonical's records,
//! so FastTrack-AllSync ⊆ Canonical-AllSync ⊆ Canonical-LARD =
//! FastTrack-LARD.
//!
//! # Low-level edges (the `K` part)
//!
//! A *release* by `u` into a clock `S` joins `u`'s whole view (`C_u[x]` for
//! `x != u`, own entry `enc(P_u[u], l_u)`) into `S`, then increments `l_u`,
//! so `u`'s later accesses are not covered. An *acquire* of `S` by `u`
//! joins `S` into `K_u`. Because a release publishes `C_u`, which includes
//! `enc(P_u[x], 2^32−1)`, a program edge followed by a low-level edge
//! orders accesses (transitivity, case 1).
//!
//! Case 2, a low-level edge followed by a program edge: when WriteVC
//! changes `u`'s own program entry from `p` to something else, the adapter
//! keeps a snapshot `Snap_u[p]` of `u`'s view (joined with any earlier
//! snapshot for `p`). When WriteVC sets `P_w[u] = v` (`w != u`), `w`
//! acquires `Snap_u[q]` for the largest recorded `q <= v`. For a runtime
//! like [`SyncModel`](crate::trace::SyncModel) (release publishes the clock,
//! then increments the own entry), `Snap_u[v]` is exactly what `u` knew when
//! it published `v`. A value learned while `u` is still at it ("open") has
//! no snapshot yet; the previous one is used, which only forgoes ordering.
//! At most [`MAX_SNAPSHOTS`] are kept per identity (oldest dropped); a
//! missing snapshot also only forgoes ordering. None of this touches the
//! soundness argument, which only uses `C_u[x] >= enc(P_u[x], 2^32−1)`.
//!
//! # Low-level synchronization objects
//!
//! * `AtomicRmw { addr }` by `u`: acquire the clock of `addr`, then release
//!   into it. The release is deferred until the instruction's own accesses
//!   are done: it happens before the next event that is not an access by
//!   the same kernel thread (and same PC, when known) overlapping the atomic
//!   bytes. The emulator reports AtomicRmw before the instruction's
//!   accesses; this keeps consecutive atomics on one word ordered.
//! * `FutexWake { addr }` by `u`: release into the clock of `addr` (the same
//!   per-address table as atomics: a sync object is an address).
//! * `FutexWaitDone { addr }` by `w`: `w` (the identity at this event)
//!   acquires the clock of `addr` before the next event of its kernel thread
//!   other than FutexWaitDone/ThreadJoin — so the order in which the
//!   emulator reports the waker's FutexWake and the woken thread's
//!   FutexWaitDone does not matter.
//! * `ThreadCreate { child }` by `u`: release into a clock kept for `child`;
//!   the identity of `child`'s first event (other than
//!   FutexWaitDone/ThreadJoin) acquires it before that event.
//! * `ThreadExit` by `u`: release into the exit clock of `u`'s kernel thread.
//!   `ThreadJoin { child }` by `w`: deferred acquire of `child`'s exit clock,
//!   like FutexWaitDone.
//!
//! # Feeding the inner detector
//!
//! Identity `u` (dense index `i`) is `ThreadKey::Lang(i)` inside the inner
//! detector. Before each checked access by `u`, the entries of `u`'s clock
//! that changed since its last access are written into the inner detector
//! with WriteVC (the inner detector reads a clock only for the accessing
//! identity, so this lazy update is exact). ClearHistory/CopyHistory are
//! forwarded when the variant honours them. Race reports are translated back
//! to real identities.

use std::collections::BTreeMap;

use crate::clock::{FxHashMap, ThreadIdx, ThreadIndex, INITIAL_OWN_CLOCK};
use crate::detector::Detector;
use crate::event::{Access, KernelThreadId, LardOp, LowLevelSync, Origin, ThreadKey};
use crate::fasttrack::FastTrack;
use crate::race::Race;

use super::same_epoch::SameEpochFilter;

/// Saturation bound of both halves of an encoded epoch.
pub const HALF_MAX: u64 = (1 << 32) - 1;

/// Program-value snapshots kept per identity.
pub const MAX_SNAPSHOTS: usize = 1024;

/// The epoch of an access at program own value `p` after `l` low-level
/// releases: `p·2^32 + l`, halves saturated; `enc(0, _) = 0`.
#[inline]
pub fn enc(p: u64, l: u64) -> u64 {
    if p == 0 {
        0
    } else {
        (p.min(HALF_MAX) << 32) | l.min(HALF_MAX)
    }
}

/// What program knowledge `P_u[x] = p` means as an encoded value: every
/// epoch of `x` at program value `<= p`.
#[inline]
pub fn knows(p: u64) -> u64 {
    enc(p, HALF_MAX)
}

#[inline]
fn at(v: &[u64], i: ThreadIdx) -> u64 {
    v.get(i as usize).copied().unwrap_or(0)
}

fn put(v: &mut Vec<u64>, i: ThreadIdx, value: u64) {
    let i = i as usize;
    if i >= v.len() {
        if value == 0 {
            return;
        }
        v.resize(i + 1, 0);
    }
    v[i] = value;
}

fn join_into(dst: &mut Vec<u64>, src: &[u64]) {
    if src.len() > dst.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

/// One identity's clocks.
#[derive(Clone, Debug)]
struct Ident {
    /// `P_u`.
    prog: Vec<u64>,
    /// `K_u`.
    low: Vec<u64>,
    /// `l_u`.
    l: u64,
    /// The values the inner detector holds for this identity's clock.
    shown: Vec<u64>,
    /// Entries that may differ from `shown`.
    dirty: Vec<ThreadIdx>,
    /// Every entry may differ from `shown`.
    all_dirty: bool,
    /// `Snap_u[p]`.
    snaps: BTreeMap<u64, Vec<u64>>,
}

impl Ident {
    fn new(idx: ThreadIdx) -> Ident {
        let mut own = Vec::new();
        put(&mut own, idx, INITIAL_OWN_CLOCK);
        Ident {
            prog: own.clone(),
            low: Vec::new(),
            l: 0,
            // The inner detector creates the virtual identity the same way.
            shown: own,
            dirty: vec![idx],
            all_dirty: false,
            snaps: BTreeMap::new(),
        }
    }
}

/// Where a deferred acquire takes its clock from.
#[derive(Clone, Debug)]
enum Source {
    /// The per-address clock (futex wait).
    Object(u64),
    /// A kernel thread's exit clock (join).
    Exit(KernelThreadId),
    /// A clock released at thread creation.
    Clock(Vec<u64>),
}

/// A deferred acquire by a kernel thread.
#[derive(Clone, Debug)]
struct Pending {
    /// The acquiring identity; `None`: the identity of the event that applies it.
    who: Option<ThreadIdx>,
    from: Source,
}

/// The deferred release of an atomic RMW.
#[derive(Clone, Copy, Debug)]
struct AtomicRelease {
    kthread: KernelThreadId,
    pc: Option<u64>,
    addr: u64,
    size: u32,
    who: ThreadIdx,
}

/// The clock-owning adapter; see the module docs.
#[derive(Clone, Debug)]
pub struct Combined {
    kernel_identity: bool,
    program: bool,
    index: ThreadIndex,
    ids: Vec<Ident>,
    objects: FxHashMap<u64, Vec<u64>>,
    exited: FxHashMap<KernelThreadId, Vec<u64>>,
    pending: FxHashMap<KernelThreadId, Vec<Pending>>,
    atomic: Option<AtomicRelease>,
    /// Repeated accesses to skip (module `same_epoch`), when the inner
    /// detector allows it.
    repeats: Option<Box<SameEpochFilter>>,
    /// The identity of the last checked access (the filter's entries are
    /// that identity's).
    last: Option<ThreadIdx>,
    /// FastTrack's index of each virtual identity, or [`NO_INDEX`]
    /// ([`Combined::access_fasttrack`]; one inner detector per adapter).
    inner_index: Vec<ThreadIdx>,
}

/// An identity whose inner index is not known yet.
const NO_INDEX: ThreadIdx = ThreadIdx::MAX;

impl Combined {
    /// An adapter with kernel-thread identities (`kernel_identity`, else
    /// LARD's) that honours WriteVC (`program`) or not.
    pub fn new(kernel_identity: bool, program: bool) -> Combined {
        Combined {
            kernel_identity,
            program,
            index: ThreadIndex::new(),
            ids: Vec::new(),
            objects: FxHashMap::default(),
            exited: FxHashMap::default(),
            pending: FxHashMap::default(),
            atomic: None,
            repeats: None,
            last: None,
            inner_index: Vec::new(),
        }
    }

    /// Skips exact repeats within an epoch (module `same_epoch`); only
    /// for an inner detector whose
    /// [`repeats_in_epoch_are_noops`](Detector::repeats_in_epoch_are_noops).
    pub fn filter_repeats(&mut self, yes: bool) {
        self.repeats = yes.then(|| Box::new(SameEpochFilter::new()));
        self.last = None;
    }

    /// Accesses skipped as exact repeats within an epoch so far.
    pub fn repeats_skipped(&self) -> u64 {
        self.repeats.as_ref().map_or(0, |f| f.skipped())
    }

    /// Forgets the accesses the filter remembers (an event that may change
    /// a clock or an access history).
    #[inline]
    fn new_epoch(&mut self) {
        if let Some(f) = &mut self.repeats {
            f.invalidate();
        }
    }

    /// The identity key of events from `origin`.
    pub fn key_of(&self, origin: &Origin) -> ThreadKey {
        if self.kernel_identity {
            origin.kernel_key()
        } else {
            origin.lard_key()
        }
    }

    #[inline]
    fn intern(&mut self, key: ThreadKey) -> ThreadIdx {
        let (idx, fresh) = self.index.intern(key);
        if fresh {
            self.add_ident(idx);
        }
        idx
    }

    /// The state of new identity `idx` (rare: kept out of the inlined path).
    #[cold]
    fn add_ident(&mut self, idx: ThreadIdx) {
        self.ids.push(Ident::new(idx));
    }

    #[inline]
    fn ident(&mut self, origin: &Origin) -> ThreadIdx {
        let key = self.key_of(origin);
        self.intern(key)
    }

    /// `who`'s view of `x` (`C_u[x]`; own entry: the current epoch), or 0
    /// for an unknown identity.
    pub fn view(&self, who: ThreadKey, x: ThreadKey) -> u64 {
        match (self.index.get(who), self.index.get(x)) {
            (Some(u), Some(x)) => self.desired(u, x),
            _ => 0,
        }
    }

    fn desired(&self, u: ThreadIdx, x: ThreadIdx) -> u64 {
        let id = &self.ids[u as usize];
        if x == u {
            enc(at(&id.prog, u), id.l)
        } else {
            knows(at(&id.prog, x)).max(at(&id.low, x))
        }
    }

    /// `u`'s whole view, as released.
    fn view_of(&self, u: ThreadIdx) -> Vec<u64> {
        (0..self.ids.len() as ThreadIdx)
            .map(|x| self.desired(u, x))
            .collect()
    }

    fn mark(&mut self, u: ThreadIdx, x: ThreadIdx) {
        let n = self.ids.len();
        let id = &mut self.ids[u as usize];
        if id.all_dirty {
            return;
        }
        id.dirty.push(x);
        if id.dirty.len() > n.max(16) {
            id.dirty.clear();
            id.all_dirty = true;
        }
    }

    /// Releases `u`'s view into `clock`, then starts a new low-level epoch.
    fn release_into(&mut self, u: ThreadIdx, clock: &mut Vec<u64>) {
        join_into(clock, &self.view_of(u));
        let id = &mut self.ids[u as usize];
        id.l = (id.l + 1).min(HALF_MAX);
        self.mark(u, u);
    }

    fn acquire(&mut self, u: ThreadIdx, clock: &[u64]) {
        for (x, &v) in clock.iter().enumerate() {
            let x = x as ThreadIdx;
            if x == u || v <= at(&self.ids[u as usize].low, x) {
                continue;
            }
            put(&mut self.ids[u as usize].low, x, v);
            self.mark(u, x);
        }
    }

    fn release_object(&mut self, u: ThreadIdx, addr: u64) {
        let mut clock = self.objects.remove(&addr).unwrap_or_default();
        self.release_into(u, &mut clock);
        self.objects.insert(addr, clock);
    }

    /// Performs the deferred atomic release unless `access` (by kernel
    /// thread `k` at `pc`) belongs to the atomic instruction.
    #[inline]
    fn flush_atomic(&mut self, k: KernelThreadId, access: Option<(&Access, Option<u64>)>) {
        if self.atomic.is_some() {
            self.flush_atomic_pending(k, access);
        }
    }

    #[cold]
    fn flush_atomic_pending(&mut self, k: KernelThreadId, access: Option<(&Access, Option<u64>)>) {
        let Some(r) = self.atomic else {
            return;
        };
        if let Some((a, pc)) = access {
            let same_pc = match (r.pc, pc) {
                (Some(x), Some(y)) => x == y,
                _ => true,
            };
            let overlaps = a.addr < r.addr.wrapping_add(u64::from(r.size))
                && r.addr < a.addr.wrapping_add(u64::from(a.size));
            if r.kthread == k && same_pc && overlaps {
                return;
            }
        }
        self.atomic = None;
        self.release_object(r.who, r.addr);
    }

    /// Applies the deferred acquires of `origin`'s kernel thread.
    #[inline]
    fn apply_pending(&mut self, origin: &Origin) {
        if !self.pending.is_empty() {
            self.apply_pending_list(origin);
        }
    }

    #[cold]
    fn apply_pending_list(&mut self, origin: &Origin) {
        let Some(list) = self.pending.remove(&origin.kthread) else {
            return;
        };
        for p in list {
            let who = match p.who {
                Some(w) => w,
                None => self.ident(origin),
            };
            let clock = match p.from {
                Source::Object(addr) => self.objects.get(&addr).cloned().unwrap_or_default(),
                Source::Exit(child) => self.exited.get(&child).cloned().unwrap_or_default(),
                Source::Clock(c) => c,
            };
            self.acquire(who, &clock);
        }
    }

    /// Everything due before a non-sync event of `origin`.
    #[inline]
    fn before(&mut self, origin: &Origin, access: Option<(&Access, Option<u64>)>) {
        self.flush_atomic(origin.kthread, access);
        self.apply_pending(origin);
    }

    fn virtual_origin(origin: &Origin, u: ThreadIdx) -> Origin {
        Origin {
            lthread: Some(u64::from(u)),
            ..*origin
        }
    }

    /// Writes `u`'s changed clock entries into `inner`.
    #[inline]
    fn flush(&mut self, inner: &mut dyn Detector, origin: &Origin, u: ThreadIdx) {
        let id = &self.ids[u as usize];
        if !id.all_dirty && id.dirty.is_empty() {
            // The common case: nothing changed since u's last event.
            return;
        }
        self.new_epoch();
        self.flush_dirty(inner, origin, u);
    }

    #[cold]
    fn flush_dirty(&mut self, inner: &mut dyn Detector, origin: &Origin, u: ThreadIdx) {
        let n = self.ids.len() as ThreadIdx;
        let id = &mut self.ids[u as usize];
        let list: Vec<ThreadIdx> = if id.all_dirty {
            id.all_dirty = false;
            id.dirty.clear();
            (0..n).collect()
        } else {
            std::mem::take(&mut id.dirty)
        };
        let o = Self::virtual_origin(origin, u);
        for x in list {
            let want = self.desired(u, x);
            let shown = &mut self.ids[u as usize].shown;
            if at(shown, x) != want {
                put(shown, x, want);
                inner.lard(
                    &o,
                    &LardOp::WriteVc {
                        tid: u64::from(x),
                        value: want,
                    },
                );
            }
        }
    }

    fn real_key(&self, inner: ThreadKey) -> ThreadKey {
        match inner {
            ThreadKey::Lang(v) if v <= u64::from(ThreadIdx::MAX) => {
                self.index.key(v as ThreadIdx).unwrap_or(ThreadKey::Lang(v))
            }
            other => other,
        }
    }

    /// An access (`checked`: the variant checks it). `pc` is the event's PC
    /// when known (it is the access's own PC for access events).
    pub fn access(&mut self, inner: &mut dyn Detector, a: &Access, checked: bool) -> Option<Race> {
        let u = self.prepare(inner, a, checked)?;
        let race = inner.access(&Self::forwarded(a, u));
        self.conclude(a, race)
    }

    /// [`Combined::access`] with a FastTrack inside (the same verdicts and
    /// reports): FastTrack's index of each virtual identity is looked up
    /// once and kept, and the call is direct.
    #[inline]
    pub fn access_fasttrack(
        &mut self,
        inner: &mut FastTrack,
        a: &Access,
        checked: bool,
    ) -> Option<Race> {
        let u = self.prepare(inner, a, checked)?;
        let fwd = Self::forwarded(a, u);
        let t = match self.inner_index.get(u as usize) {
            Some(&t) if t != NO_INDEX => t,
            _ => self.learn_inner_index(inner, &fwd, u),
        };
        let race = inner.access_as(t, &fwd);
        self.conclude(a, race)
    }

    /// Looks up and keeps FastTrack's index of virtual identity `u`.
    #[cold]
    fn learn_inner_index(
        &mut self,
        inner: &mut FastTrack,
        fwd: &Access,
        u: ThreadIdx,
    ) -> ThreadIdx {
        let t = inner.identity_index(crate::lard::identity(&fwd.origin));
        if self.inner_index.len() <= u as usize {
            self.inner_index.resize(u as usize + 1, NO_INDEX);
        }
        self.inner_index[u as usize] = t;
        t
    }

    /// Everything before an access reaches the inner detector; the
    /// accessing identity if it must be checked (`None`: not checked, or
    /// an exact repeat skipped, module `same_epoch`).
    #[inline]
    fn prepare(
        &mut self,
        inner: &mut dyn Detector,
        a: &Access,
        checked: bool,
    ) -> Option<ThreadIdx> {
        self.before(&a.origin, Some((a, Some(a.pc))));
        if !checked {
            return None;
        }
        let u = self.ident(&a.origin);
        if self.last != Some(u) {
            self.last = Some(u);
            self.new_epoch();
        }
        self.flush(inner, &a.origin, u);
        if let Some(f) = &mut self.repeats {
            if f.repeats(a) {
                return None;
            }
        }
        Some(u)
    }

    /// The access the inner detector sees: by virtual identity `u`.
    #[inline]
    fn forwarded(a: &Access, u: ThreadIdx) -> Access {
        Access {
            tracked: true,
            origin: Self::virtual_origin(&a.origin, u),
            ..*a
        }
    }

    /// Records the inner detector's verdict on `a` and translates its
    /// report back to real identities.
    #[inline]
    fn conclude(&mut self, a: &Access, race: Option<Race>) -> Option<Race> {
        if let Some(f) = &mut self.repeats {
            f.record(a, race.is_none());
        }
        let race = race?;
        Some(self.real_report(a, race))
    }

    #[cold]
    fn real_report(&self, a: &Access, mut race: Race) -> Race {
        race.access = *a;
        race.thread = self.real_key(race.thread);
        for p in &mut race.priors {
            p.thread = self.real_key(p.thread);
        }
        crate::race::dedup_priors(&mut race.priors);
        race
    }

    /// A LARDx86 operation; `history_allowed`: the variant applies
    /// ClearHistory/CopyHistory.
    pub fn lard(
        &mut self,
        inner: &mut dyn Detector,
        origin: &Origin,
        op: &LardOp,
        history_allowed: bool,
    ) {
        self.before(origin, None);
        self.new_epoch();
        let u = self.ident(origin);
        match *op {
            // Never delivered: the variants do not accept floors
            // (`Detector::accepts_floors`).
            LardOp::Thread { .. } | LardOp::ReadVc { .. } | LardOp::FloorVc { .. } => {}
            LardOp::WriteVc { tid, value } => {
                if self.program {
                    self.write_vc(u, ThreadKey::Lang(tid), value);
                }
            }
            LardOp::ClearHistory { .. } | LardOp::CopyHistory { .. } => {
                if history_allowed {
                    inner.lard(&Self::virtual_origin(origin, u), op);
                }
            }
        }
    }

    /// WriteVC by `u` of entry `entry`.
    fn write_vc(&mut self, u: ThreadIdx, entry: ThreadKey, value: u64) {
        let x = self.intern(entry);
        let old = at(&self.ids[u as usize].prog, x);
        if x == u {
            if value != old {
                let snap = self.view_of(u);
                let id = &mut self.ids[u as usize];
                join_into(id.snaps.entry(old).or_default(), &snap);
                if id.snaps.len() > MAX_SNAPSHOTS {
                    id.snaps.pop_first();
                }
                put(&mut id.prog, u, value);
                id.l = 0;
                self.mark(u, u);
            }
            return;
        }
        put(&mut self.ids[u as usize].prog, x, value);
        self.mark(u, x);
        if value > 0 {
            let snap = self.ids[x as usize]
                .snaps
                .range(..=value)
                .next_back()
                .map(|(_, s)| s.clone());
            if let Some(s) = snap {
                self.acquire(u, &s);
            }
        }
    }

    /// A context switch: an event of its kernel thread.
    pub fn context_switch(&mut self, origin: &Origin) {
        self.before(origin, None);
        self.new_epoch();
    }

    /// Low-level synchronization by `origin`; `pc` is the event's PC if known.
    pub fn sync_at(&mut self, origin: &Origin, s: &LowLevelSync, pc: Option<u64>) {
        self.flush_atomic(origin.kthread, None);
        self.new_epoch();
        let waits = matches!(
            s,
            LowLevelSync::FutexWaitDone { .. } | LowLevelSync::ThreadJoin { .. }
        );
        if !waits {
            self.apply_pending(origin);
        }
        let u = self.ident(origin);
        match *s {
            LowLevelSync::AtomicRmw { addr, size } => {
                let clock = self.objects.get(&addr).cloned().unwrap_or_default();
                self.acquire(u, &clock);
                self.atomic = Some(AtomicRelease {
                    kthread: origin.kthread,
                    pc,
                    addr,
                    size: size.max(1),
                    who: u,
                });
            }
            LowLevelSync::FutexWake { addr } => self.release_object(u, addr),
            LowLevelSync::FutexWaitDone { addr } => {
                self.pending
                    .entry(origin.kthread)
                    .or_default()
                    .push(Pending {
                        who: Some(u),
                        from: Source::Object(addr),
                    });
            }
            LowLevelSync::ThreadCreate { child } => {
                let mut clock = Vec::new();
                self.release_into(u, &mut clock);
                self.pending.entry(child).or_default().push(Pending {
                    who: None,
                    from: Source::Clock(clock),
                });
            }
            LowLevelSync::ThreadExit => {
                let mut clock = self.exited.remove(&origin.kthread).unwrap_or_default();
                self.release_into(u, &mut clock);
                self.exited.insert(origin.kthread, clock);
            }
            LowLevelSync::ThreadJoin { child } => {
                self.pending
                    .entry(origin.kthread)
                    .or_default()
                    .push(Pending {
                        who: Some(u),
                        from: Source::Exit(child),
                    });
            }
        }
    }

    /// [`Combined::sync_at`] without a PC.
    pub fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        self.sync_at(origin, s, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_monotone_and_saturates() {
        assert_eq!(enc(0, 5), 0);
        assert!(enc(1, 0) > enc(0, HALF_MAX));
        assert!(enc(1, HALF_MAX) < enc(2, 0));
        assert!(enc(3, 7) <= knows(3));
        assert!(enc(4, 0) > knows(3));
        assert_eq!(enc(u64::MAX, u64::MAX), knows(HALF_MAX));
        assert!(enc(u64::MAX, 3) <= knows(1 << 40));
    }
}
