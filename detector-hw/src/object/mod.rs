//! Object race detection (von Praun and Gross, "Object race detection",
//! OOPSLA 2001): ownership states per object and a per-object locking
//! discipline, as a [`Detector`] on the same event stream as LARD's exact
//! detectors (docs/detectors.md, "The object race detector").
//!
//! * **Objects** come from [`ProgramEvent::Alloc`]/[`ProgramEvent::Free`]:
//!   heap blocks (with their allocation site) and static objects (one per
//!   data symbol, which the emulator reports at start when this detector
//!   runs). A CopyHistory whose source is the start of a live object moves
//!   the object (a copying collector's move keeps the object's identity).
//! * **Accesses** are the ones LARD checks (Tracked, [`lard::is_checked`]),
//!   attributed to LARD's identity ([`lard::identity`]); accesses outside
//!   every object are counted and otherwise ignored.
//! * **Ownership** follows [`ownership`] (Figure 4, §4.2); whether an owner
//!   is blocked or terminated comes from [`ProgramEvent::Block`]/`Wake`,
//!   [`ProgramEvent::ThreadExit`] (language threads) and
//!   [`LowLevelSync::ThreadExit`] (kernel threads).
//! * **Locks** come from [`ProgramEvent::Acquire`]/`Release`; in the shared
//!   states each access refines the object's lockset ([`lockset`]).
//! * **An object race** is reported when a shared-modified object's lockset
//!   becomes empty, once per object ([`OwnershipState::Conflict`]), with
//!   the current access, the most recent conflicting access by another
//!   thread, the object and both lock sets ([`ObjectRace`]).
//!
//! Vector clocks (ReadVC/WriteVC) play no part: this is a lockset detector,
//! so it reports lock-discipline violations that are not data races (two
//! fields under two locks, hand-offs by other synchronization after the
//! second owner) and may miss data races hidden by ownership transfers.

pub mod lockset;
pub mod ownership;

use crate::clock::{ThreadIdx, ThreadIndex};
use crate::detector::Detector;
use crate::event::{
    Access, AccessKind, LardOp, LockId, LowLevelSync, ObjectKind, Origin, ProgramEvent, ThreadKey,
};
use crate::lard;
use crate::race::{PriorAccess, Race, RaceKind};
use lockset::{HeldLocks, LockSet};
pub use ownership::{Accessor, Incident, OwnerStatus, OwnershipState};
use std::collections::BTreeMap;

/// No thread (an empty access record).
const NO_THREAD: ThreadIdx = ThreadIdx::MAX;
/// No object (an empty cache).
const NO_OBJECT: u32 = u32::MAX;
/// Entries of the direct-mapped address → object cache (a power of two).
const LOOKUP_SLOTS: usize = 4096;
/// Bytes per cache granule (log2): the slot of `addr` is `addr >> 4`.
const GRANULE_SHIFT: u32 = 4;

/// What the detector knows about one object, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// First byte.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Allocation site (0 unknown; static objects: 0).
    pub site: u64,
    /// Heap block or static object.
    pub kind: ObjectKind,
    /// The thread that allocated it.
    pub creator: ThreadKey,
    /// True once it was freed (or replaced by an overlapping allocation).
    pub freed: bool,
}

/// One access as an object remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rec {
    thread: ThreadIdx,
    pc: u64,
    write: bool,
}

const NO_REC: Rec = Rec {
    thread: NO_THREAD,
    pc: 0,
    write: false,
};

/// The detector's state of one object.
#[derive(Clone, Debug)]
struct Object {
    start: u64,
    end: u64,
    /// False once freed or replaced.
    live: bool,
    state: OwnershipState,
    owner: ThreadIdx,
    lockset: LockSet,
    /// Most recent access, and the most recent one by another thread than
    /// `last`'s; the same for writes. The race report's earlier access.
    last: Rec,
    other: Rec,
    last_write: Rec,
    other_write: Rec,
}

impl Object {
    #[inline]
    fn note(&mut self, r: Rec) {
        if self.last.thread != r.thread {
            self.other = self.last;
        }
        self.last = r;
        if r.write {
            if self.last_write.thread != r.thread {
                self.other_write = self.last_write;
            }
            self.last_write = r;
        }
    }

    /// The most recent access by a thread other than `t` that conflicts
    /// with an access of kind `write` (a write when `t` reads, if any).
    fn prior(&self, t: ThreadIdx, write: bool) -> Option<Rec> {
        let pick = |a: Rec, b: Rec| if a.thread != t { a } else { b };
        let w = pick(self.last_write, self.other_write);
        if !write && w.thread != NO_THREAD && w.thread != t {
            return Some(w);
        }
        let any = pick(self.last, self.other);
        (any.thread != NO_THREAD && any.thread != t).then_some(any)
    }
}

/// What the detector tracks per thread.
#[derive(Clone, Debug, Default)]
struct ThreadInfo {
    terminated: bool,
    blocked: bool,
    held: HeldLocks,
}

/// An earlier access in an object race report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectAccess {
    /// Who made it.
    pub thread: ThreadKey,
    /// Its PC.
    pub pc: u64,
    /// True for a write.
    pub write: bool,
}

/// One object race: a shared-modified object whose lockset became empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRace {
    /// The object (index into [`ObjectDetector::objects`]).
    pub object: usize,
    /// The access that emptied the lockset.
    pub access: Access,
    /// Its thread.
    pub thread: ThreadKey,
    /// The most recent conflicting access by another thread, if any.
    pub prior: Option<ObjectAccess>,
    /// The object's state before this access.
    pub state_before: OwnershipState,
    /// The object's lockset before this access (empty when the object
    /// became shared with this access).
    pub lockset_before: Vec<LockId>,
    /// The locks that protected this access (exclusively held ones for a write).
    pub held: Vec<LockId>,
}

/// Statistics in the spirit of the paper's Tables 3 to 5.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectStats {
    /// Checked accesses by the object's state before the access
    /// (index [`OwnershipState::index`]).
    pub accesses: [u64; 6],
    /// Checked accesses outside every object (stack, unreported memory).
    pub outside: u64,
    /// Own accesses (the owner to its exclusive/exclusive2 object).
    pub own: u64,
    /// First accesses to virgin objects.
    pub first_owner: u64,
    /// Transfers to a second owner while the owner was active ("block").
    pub transfers: u64,
    /// Transfers while the owner was blocked ("steal").
    pub steals: u64,
    /// Inherits from terminated owners.
    pub inherits: u64,
    /// Revocations of the second owner (object becomes shared).
    pub revokes: u64,
    /// Lockset operations (start or refinement).
    pub lockset_ops: u64,
    /// Object races reported.
    pub object_races: u64,
    /// Heap objects allocated.
    pub heap_objects: u64,
    /// Static objects reported.
    pub static_objects: u64,
    /// Objects freed (or replaced by an overlapping allocation).
    pub freed: u64,
    /// Objects moved by CopyHistory.
    pub moved: u64,
    /// Lock acquires reported.
    pub acquires: u64,
}

/// The object race detector; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct ObjectDetector {
    threads: ThreadIndex,
    info: Vec<ThreadInfo>,
    objects: Vec<Object>,
    infos: Vec<ObjectInfo>,
    /// Live objects by first byte.
    live: BTreeMap<u64, u32>,
    /// The object of the previous access (most accesses hit it again).
    cached: u32,
    /// Direct-mapped cache: granule `addr >> GRANULE_SHIFT` → an object
    /// that contained an address of it (checked on use: live and
    /// containing the address; live objects never overlap, so a hit is
    /// the answer). Empty until the first miss.
    recent: Vec<u32>,
    /// A range `[lo, hi)` known to hold no live object (the gap around the
    /// previous miss): accesses outside objects skip the map too. Emptied
    /// whenever an object appears.
    gap: (u64, u64),
    stats: ObjectStats,
    races: Vec<ObjectRace>,
}

impl ObjectDetector {
    /// An empty detector.
    pub fn new() -> ObjectDetector {
        ObjectDetector {
            cached: NO_OBJECT,
            ..ObjectDetector::default()
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> &ObjectStats {
        &self.stats
    }

    /// The object races so far, in detection order.
    pub fn races(&self) -> &[ObjectRace] {
        &self.races
    }

    /// Every object ever reported, live or freed.
    pub fn objects(&self) -> &[ObjectInfo] {
        &self.infos
    }

    /// The state of object `i` (index into [`ObjectDetector::objects`]).
    pub fn state(&self, i: usize) -> Option<OwnershipState> {
        self.objects.get(i).map(|o| o.state)
    }

    /// The live object containing `addr`, if any.
    pub fn object_at(&self, addr: u64) -> Option<usize> {
        let (_, &i) = self.live.range(..=addr).next_back()?;
        (addr < self.objects[i as usize].end).then_some(i as usize)
    }

    /// Objects by final state (index [`OwnershipState::index`]), freed
    /// objects included; since states only advance, the number of objects
    /// that *reached* state `s` (Table 5) is the sum over states `>= s`.
    pub fn final_states(&self) -> [u64; 6] {
        let mut n = [0; 6];
        for o in &self.objects {
            n[o.state.index()] += 1;
        }
        n
    }

    /// The identity with index `t`.
    fn key(&self, t: ThreadIdx) -> ThreadKey {
        self.threads.key(t).unwrap_or(ThreadKey::Kernel(0))
    }

    fn thread(&mut self, key: ThreadKey) -> ThreadIdx {
        let (t, fresh) = self.threads.intern(key);
        if fresh {
            self.info.push(ThreadInfo::default());
        }
        t
    }

    #[inline]
    fn lookup(&mut self, addr: u64) -> Option<u32> {
        if let Some(o) = self.objects.get(self.cached as usize) {
            if addr >= o.start && addr < o.end {
                return Some(self.cached);
            }
        }
        if addr >= self.gap.0 && addr < self.gap.1 {
            return None;
        }
        let slot = (addr >> GRANULE_SHIFT) as usize & (LOOKUP_SLOTS - 1);
        if let Some(&i) = self.recent.get(slot) {
            if let Some(o) = self.objects.get(i as usize) {
                if o.live && addr >= o.start && addr < o.end {
                    self.cached = i;
                    return Some(i);
                }
            }
        }
        self.lookup_slow(addr, slot)
    }

    #[inline(never)]
    fn lookup_slow(&mut self, addr: u64, slot: usize) -> Option<u32> {
        let before = self.live.range(..=addr).next_back();
        if let Some((_, &i)) = before {
            if addr < self.objects[i as usize].end {
                self.cached = i;
                if self.recent.is_empty() {
                    self.recent = vec![NO_OBJECT; LOOKUP_SLOTS];
                }
                self.recent[slot] = i;
                return Some(i);
            }
        }
        let lo = before.map_or(0, |(_, &i)| self.objects[i as usize].end);
        let hi = self
            .live
            .range(addr.saturating_add(1)..)
            .next()
            .map_or(u64::MAX, |(&s, _)| s);
        self.gap = (lo, hi);
        None
    }

    fn retire(&mut self, i: u32) {
        let o = &mut self.objects[i as usize];
        o.live = false;
        self.live.remove(&o.start);
        self.infos[i as usize].freed = true;
        self.stats.freed += 1;
        if self.cached == i {
            self.cached = NO_OBJECT;
        }
    }

    /// Live objects overlapping `[start, end)` (no allocation when none).
    fn overlapping(&self, start: u64, end: u64) -> Vec<u32> {
        if self.live.range(start..end).next().is_none() && self.object_at(start).is_none() {
            return Vec::new();
        }
        let mut v: Vec<u32> = self.live.range(start..end).map(|(_, &i)| i).collect();
        if let Some(i) = self.object_at(start) {
            if !v.contains(&(i as u32)) {
                v.push(i as u32);
            }
        }
        v
    }

    fn alloc(&mut self, creator: ThreadKey, addr: u64, size: u64, site: u64, kind: ObjectKind) {
        if size == 0 {
            return;
        }
        let end = addr.saturating_add(size);
        let overlap = self.overlapping(addr, end);
        match kind {
            // Symbol aliases and nested symbols: the first one wins.
            ObjectKind::Static if !overlap.is_empty() => return,
            ObjectKind::Static => self.stats.static_objects += 1,
            // A heap block overlapping live objects: they were freed
            // without a report (or by a path the program does not report).
            ObjectKind::Heap => {
                for i in overlap {
                    self.retire(i);
                }
                self.stats.heap_objects += 1;
            }
        }
        let i = self.objects.len() as u32;
        self.objects.push(Object {
            start: addr,
            end,
            live: true,
            state: OwnershipState::Virgin,
            owner: NO_THREAD,
            lockset: LockSet::default(),
            last: NO_REC,
            other: NO_REC,
            last_write: NO_REC,
            other_write: NO_REC,
        });
        self.infos.push(ObjectInfo {
            addr,
            size,
            site,
            kind,
            creator,
            freed: false,
        });
        self.live.insert(addr, i);
        self.gap = (0, 0);
    }

    /// A CopyHistory from the first byte of a live object moves the object.
    fn copy_history(&mut self, src: u64, dst: u64) {
        let Some(&i) = self.live.get(&src) else {
            return;
        };
        if src == dst {
            return;
        }
        let size = self.objects[i as usize].end - src;
        self.live.remove(&src);
        let end = dst.saturating_add(size);
        for j in self.overlapping(dst, end) {
            self.retire(j);
        }
        let o = &mut self.objects[i as usize];
        o.start = dst;
        o.end = end;
        self.infos[i as usize].addr = dst;
        self.live.insert(dst, i);
        self.cached = NO_OBJECT;
        self.gap = (0, 0);
        self.stats.moved += 1;
    }

    fn status(&self, owner: ThreadIdx) -> OwnerStatus {
        match self.info.get(owner as usize) {
            Some(t) if t.terminated => OwnerStatus::Terminated,
            Some(t) if t.blocked => OwnerStatus::Blocked,
            _ => OwnerStatus::Active,
        }
    }

    fn terminate(&mut self, key: ThreadKey) {
        let t = self.thread(key);
        let info = &mut self.info[t as usize];
        info.terminated = true;
        info.blocked = false;
    }

    /// The checks after the owner fast path: ownership changes, lockset
    /// refinement and the object race.
    #[inline(never)]
    fn slow_access(&mut self, i: u32, t: ThreadIdx, a: &Access) -> Option<Race> {
        let write = a.kind == AccessKind::Write;
        let o = &self.objects[i as usize];
        let before = o.state;
        let who = if before.is_owned() && o.owner == t {
            Accessor::Owner
        } else if before.is_owned() {
            Accessor::Foreign(self.status(o.owner))
        } else {
            Accessor::Owner
        };
        let (mut state, incident) = ownership::ownership_step(before, who, write);
        let s = &mut self.stats;
        match incident {
            Incident::Own => s.own += 1,
            Incident::FirstOwner => s.first_owner += 1,
            Incident::Transfer => s.transfers += 1,
            Incident::Steal => s.steals += 1,
            Incident::Inherit => s.inherits += 1,
            Incident::Revoke => s.revokes += 1,
            Incident::Lockset | Incident::Unchecked => {}
        }
        let held = &self.info[t as usize].held;
        let o = &mut self.objects[i as usize];
        let mut lockset_before = None;
        if incident.takes_ownership() {
            o.owner = t;
        } else if incident.uses_lockset() {
            self.stats.lockset_ops += 1;
            let empty = if incident == Incident::Revoke {
                o.owner = NO_THREAD;
                lockset_before = Some(Vec::new());
                o.lockset = LockSet::start(held, write);
                o.lockset.is_empty()
            } else {
                if state == OwnershipState::SharedModified {
                    lockset_before = Some(o.lockset.locks().to_vec());
                }
                o.lockset.refine(held, write)
            };
            state = ownership::lockset_step(state, empty);
        }
        o.state = state;
        let race = if state == OwnershipState::Conflict && before != OwnershipState::Conflict {
            let prior = o.prior(t, write);
            let held = held.protecting(write);
            Some((prior, lockset_before.unwrap_or_default(), held))
        } else {
            None
        };
        o.note(Rec {
            thread: t,
            pc: a.pc,
            write,
        });
        let (prior, lockset_before, held) = race?;
        self.stats.object_races += 1;
        let thread = self.key(t);
        let prior = prior.map(|p| ObjectAccess {
            thread: self.key(p.thread),
            pc: p.pc,
            write: p.write,
        });
        self.races.push(ObjectRace {
            object: i as usize,
            access: *a,
            thread,
            prior,
            state_before: before,
            lockset_before,
            held,
        });
        let p = prior.unwrap_or(ObjectAccess {
            thread,
            pc: a.pc,
            write,
        });
        let kind = match (p.write, write) {
            (true, true) => RaceKind::WriteWrite,
            (true, false) => RaceKind::WriteRead,
            (false, _) => RaceKind::ReadWrite,
        };
        // (Objects keep no clocks: the epochs are unknown.)
        Some(Race {
            thread,
            clock: 0,
            access: *a,
            priors: vec![PriorAccess::new(kind, p.thread, p.pc, 0)],
        })
    }
}

impl Detector for ObjectDetector {
    /// It keeps no vector clocks.
    fn accepts_floors(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "object"
    }

    #[inline]
    fn access(&mut self, a: &Access) -> Option<Race> {
        if !lard::is_checked(a) {
            return None;
        }
        let Some(i) = self.lookup(a.addr) else {
            self.stats.outside += 1;
            return None;
        };
        let t = self.thread(lard::identity(&a.origin));
        if self.info[t as usize].terminated {
            // A terminated identity that runs again is alive.
            self.info[t as usize].terminated = false;
        }
        let o = &mut self.objects[i as usize];
        self.stats.accesses[o.state.index()] += 1;
        // Fast path: the owner accessing its object.
        if o.state.is_owned() && o.owner == t {
            self.stats.own += 1;
            o.note(Rec {
                thread: t,
                pc: a.pc,
                write: a.kind == AccessKind::Write,
            });
            return None;
        }
        self.slow_access(i, t, a)
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        let _ = origin;
        if let LardOp::CopyHistory { src, dst, len } = *op {
            if len > 0 {
                self.copy_history(src, dst);
            }
        }
    }

    fn sync(&mut self, origin: &Origin, s: &LowLevelSync) {
        if let LowLevelSync::ThreadExit = s {
            // The kernel thread ends, and with it the language thread it ran.
            self.terminate(origin.kernel_key());
            self.terminate(lard::identity(origin));
        }
    }

    fn program(&mut self, origin: &Origin, ev: &ProgramEvent, pc: u64) {
        let _ = pc;
        let key = lard::identity(origin);
        match *ev {
            ProgramEvent::Alloc {
                addr,
                size,
                site,
                kind,
            } => self.alloc(key, addr, size, site, kind),
            ProgramEvent::Free { addr } => {
                if let Some(&i) = self.live.get(&addr) {
                    self.retire(i);
                }
            }
            ProgramEvent::Acquire { lock, mode } => {
                self.stats.acquires += 1;
                let t = self.thread(key);
                self.info[t as usize].held.acquire(lock, mode);
            }
            ProgramEvent::Release { lock } => {
                let t = self.thread(key);
                self.info[t as usize].held.release(lock);
            }
            ProgramEvent::ThreadExit => self.terminate(key),
            ProgramEvent::Block => {
                let t = self.thread(key);
                self.info[t as usize].blocked = true;
            }
            ProgramEvent::Wake => {
                let t = self.thread(key);
                self.info[t as usize].blocked = false;
            }
        }
    }
}

#[cfg(test)]
mod tests;
