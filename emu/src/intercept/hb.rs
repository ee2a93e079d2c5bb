//! Happens-before for binary mode: the vector clocks of synchronization
//! objects (mutexes, rwlocks, condition variables, semaphores, barriers,
//! once controls, thread ends, atomic locations), kept by the emulator in
//! the role the lard-cc runtime plays inside the guest.
//!
//! Every rule is one of two primitives on a thread's architectural clock
//! (the [`VcFile`] ReadVC/WriteVC use) and an object's clock:
//!
//! * **release** `S`: `S := S ⊔ C_me`, then `C_me[me] += 1`;
//! * **acquire** `S`: `C_me := C_me ⊔ S`.
//!
//! Each change of the thread's clock is returned as a `(tid, value)`
//! WriteVC, which the emulator delivers as the LardOp event a runtime's
//! WriteVC instruction would have produced — so every detector stays
//! LARD-pure and unchanged. Which library call means which primitive is the
//! table in docs/binary-mode.md.
//!
//! The common case costs little: an object remembers which thread's clock
//! is known to dominate it (the last to acquire it, or a releaser that
//! dominated it already), so that thread re-acquiring it — a lock taken
//! again by the thread that released it last — joins nothing; and which
//! thread released it last, so that thread releasing it again with no
//! entry but its own changed anywhere ([`VcFile::others`]) joins only its
//! own entry. Joins and releases iterate the clocks in place, without
//! allocating.

use crate::cpu::code::AddrMap;
use crate::cpu::vclock::VcFile;
use lard_detector_hw::clock::FxHashMap;
use lard_detector_hw::event::ThreadKey;
use std::collections::VecDeque;

/// A synchronization object's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncKey {
    /// The object at this address (mutex, condition variable, semaphore,
    /// barrier, once control, spin lock, atomic location; an rwlock's
    /// writers).
    Object(u64),
    /// The readers of the rwlock at this address (released by read
    /// unlocks, acquired by write locks only: readers do not order each
    /// other).
    Readers(u64),
    /// The end of language thread `id` (acquired by its joiner).
    ThreadEnd(u64),
    /// The start of the teams of the `teams` constructs whose body is `fn`.
    TeamStart(u64),
    /// Their end (every team's body returned).
    TeamEnd(u64),
    /// The start of OpenMP team instance `t`: one `GOMP_parallel` call
    /// (its master's fork), whatever its body.
    RegionStart(u64),
    /// The end of team instance `t` (every member's body returned).
    RegionEnd(u64),
    /// The creation of the OpenMP tasks whose body is `fn`.
    TaskStart(u64),
    /// The end of every OpenMP task and worksharing unit that team
    /// instance `t` ran (acquired by its barriers and its region's end; 0:
    /// outside every region).
    Tasks(u64),
    /// One `GOMP_task`/taskloop call (its tasks acquire it).
    TaskCreated(u64),
    /// The end of the tasks language thread `id` created (its taskwait).
    Children(u64),
    /// The end of the tasks of a taskgroup (its `taskgroup_end`).
    Group(u64),
    /// `depend(out/inout)` tasks on address `a` among the children of
    /// `parent`: (parent, a).
    DepOut(u64, u64),
    /// `depend(in)` tasks on `a` among the children of `parent`.
    DepIn(u64, u64),
    /// An OpenMP construct lock (critical, atomic, ordered; libs.rs).
    Construct(u8),
    /// The barriers of team instance `t` (0: outside every region).
    Barrier(u64),
    /// Phase parity `p` (0 or 1) of the `pthread_barrier_t` at this
    /// address: a phase's waiters release into it and acquire it on
    /// return, and it is cleared when the next phase completes (the
    /// lard-cc runtime's `lardcc_barrier_arrive`/`_depart`,
    /// guest-sdk/cc/core.c).
    BarrierPhase(u64, u8),
    /// The end of the teams of a `teams` construct (the loop form,
    /// `GOMP_teams4`) encountered by language thread `id`.
    Teams(u64),
    /// The ends of the worksharing units of the implicit task with region
    /// token `t` while it holds heap memory of its own
    /// (machine/binary/worksharing.rs).
    Units(u64),
    /// `single copyprivate`'s broadcast.
    Copy,
    /// Iteration `index` (its vector's linear index) of doacross loop
    /// `l` (a team instance's token times 2^16 plus the loop's number in
    /// it): `depend(source)` releases it, `depend(sink)` acquires it.
    Doacross(u64, u64),
    /// `critical` or an OpenMP lock (`object`: the construct's number or
    /// the lock's address) in contention group `group` > 0, a team of a
    /// `teams` construct (machine/binary/contention.rs).
    Grouped {
        /// The contention group.
        group: u64,
        /// The construct's number or the lock's address.
        object: u64,
    },
}

/// One object's clock.
#[derive(Default)]
struct SyncClock {
    entries: AddrMap<u64>,
    /// `(me, lowered)`: language thread `me`'s clock dominated this one
    /// when [`VcFile::lowered`] was `lowered` — and still does while it is
    /// (clocks only grow, and a release by `me` keeps it so).
    covered: Option<(u64, u64)>,
    /// `(me, others)`: the last release into this clock was language
    /// thread `me`'s, when [`VcFile::others`] was `others`: while both
    /// hold, `me`'s clock has no entry but its own that this one lacks.
    synced: Option<(u64, u64)>,
    /// [`VcFile::floors`] when the entries at or below their floors were
    /// last dropped.
    pruned: u64,
}

/// The clocks of all synchronization objects.
#[derive(Default)]
pub struct SyncClocks {
    clocks: FxHashMap<SyncKey, SyncClock>,
    /// The addresses of the objects ([`SyncKey::Object`],
    /// [`SyncKey::Readers`]) that have a clock, for forgetting those in
    /// freed memory ([`SyncClocks::forget_range`]).
    addresses: std::collections::BTreeSet<u64>,
}

impl SyncClocks {
    /// Release by language thread `me` into `key`; the WriteVCs that follow
    /// are appended to `out`.
    pub fn release(&mut self, vc: &mut VcFile, me: u64, key: SyncKey, out: &mut Vec<(u64, u64)>) {
        let who = ThreadKey::Lang(me);
        let s = self.clocks.entry(key).or_insert_with(|| {
            // A new object: its address, for forget_range.
            if let SyncKey::Object(a) | SyncKey::Readers(a) = key {
                self.addresses.insert(a);
            }
            SyncClock::default()
        });
        // S ≤ C_me before makes S ⊔ C_me ≤ C_me after the tick.
        let covered = s.covered == Some((me, vc.lowered()));
        if s.synced == Some((me, vc.others())) {
            // Only the own entry can be new since `me`'s last release here.
            if let Some(v) = vc.own_entry(me) {
                let e = s.entries.entry(me).or_default();
                *e = (*e).max(v);
            }
        } else {
            vc.for_each_entry(who, |t, v| {
                let e = s.entries.entry(t).or_default();
                *e = (*e).max(v);
            });
        }
        tick(vc, me, out);
        s.covered = covered.then_some((me, vc.lowered()));
        s.synced = Some((me, vc.others()));
    }

    /// Acquire of `key` by language thread `me`.
    pub fn acquire(&mut self, vc: &mut VcFile, me: u64, key: SyncKey, out: &mut Vec<(u64, u64)>) {
        let Some(s) = self.clocks.get_mut(&key) else {
            return;
        };
        if s.covered == Some((me, vc.lowered())) {
            // Nothing in S is new to `me`: the join would change nothing.
            return;
        }
        if s.pruned != vc.floors() && matches!(key, SyncKey::Object(_) | SyncKey::Readers(_)) {
            // Entries at or below their floors join nothing (every clock
            // reads at least as much there): they go, so that a lock its
            // threads replace one another on holds the entries of the
            // threads that are not floored. Only objects' clocks, which
            // nothing reads entry by entry ([`SyncClocks::entry`]).
            s.pruned = vc.floors();
            s.entries.retain(|&t, &mut v| !vc.floored(t, v));
        }
        join_into(vc, me, s.entries.iter().map(|(&t, &v)| (t, v)), out);
        // C_me ⊒ S now, but for its own entry, which S can only hold from
        // `me`'s own earlier clock unless a write lowered it.
        s.covered = Some((me, vc.lowered()));
    }

    /// Every entry of `key`'s clock, as `(t, value)` in no order.
    pub fn entries(&self, key: SyncKey) -> Vec<(u64, u64)> {
        self.clocks.get(&key).map_or_else(Vec::new, |s| {
            s.entries.iter().map(|(&t, &v)| (t, v)).collect()
        })
    }

    /// Entry `t` of `key`'s clock (0 for an object never released).
    pub fn entry(&self, key: SyncKey, t: u64) -> u64 {
        self.clocks
            .get(&key)
            .and_then(|s| s.entries.get(&t).copied())
            .unwrap_or(0)
    }

    /// Forgets `key` (a pthread_t that will be reused, a freed object).
    pub fn forget(&mut self, key: SyncKey) {
        self.clocks.remove(&key);
    }

    /// Forgets the objects in `[addr, addr + len)`: memory freed, so that
    /// an object the memory holds next (another mutex, an atomic) starts
    /// with no clock, as a new object does — not with the releases of the
    /// one that was there, which order nothing for it.
    pub fn forget_range(&mut self, addr: u64, len: u64) {
        let end = addr.saturating_add(len);
        let gone: Vec<u64> = self.addresses.range(addr..end).copied().collect();
        for a in gone {
            self.addresses.remove(&a);
            self.clocks.remove(&SyncKey::Object(a));
            self.clocks.remove(&SyncKey::Readers(a));
        }
    }
}

/// Thread creation: `child` starts with `parent`'s clock (WriteVCs in
/// `child_out`), then `parent` ticks (in `parent_out`). The child's own
/// entry continues after everything `parent` knew of its id and after its
/// own (a reused id keeps the own entry its previous holder ended with,
/// one more than the last it published: [`IdPool`]), so its epochs are
/// new to every clock; a fresh id starts at 1.
pub fn fork(
    vc: &mut VcFile,
    parent: u64,
    child: u64,
    parent_out: &mut Vec<(u64, u64)>,
    child_out: &mut Vec<(u64, u64)>,
) {
    let from = vc.entries(ThreadKey::Lang(parent));
    vc.reserve(ThreadKey::Lang(child), from.len() + 1);
    join_into(vc, child, from.into_iter(), child_out);
    let me = ThreadKey::Lang(child);
    let own = vc.read(ThreadKey::Lang(parent), child) + 1;
    if own > vc.read(me, child) {
        vc.write(me, child, own);
        child_out.push((child, own));
    }
    tick(vc, parent, parent_out);
}

fn tick(vc: &mut VcFile, me: u64, out: &mut Vec<(u64, u64)>) {
    let who = ThreadKey::Lang(me);
    let next = vc.read(who, me) + 1;
    vc.write(who, me, next);
    out.push((me, next));
}

/// Language thread `me` acquires the clock `from` (entries as
/// [`VcFile::entries`] lists them: a task's final clock, read before it
/// went); the WriteVCs that follow are appended to `out`.
pub fn join_clock(vc: &mut VcFile, me: u64, from: Vec<(u64, u64)>, out: &mut Vec<(u64, u64)>) {
    join_into(vc, me, from.into_iter(), out);
}

fn join_into(
    vc: &mut VcFile,
    me: u64,
    from: impl Iterator<Item = (u64, u64)>,
    out: &mut Vec<(u64, u64)>,
) {
    let who = ThreadKey::Lang(me);
    for (t, v) in from {
        if t != me && v > vc.read(who, t) {
            vc.write(who, t, v);
            out.push((t, v));
        }
    }
}

/// How many retired ids [`IdPool::take`] tries: half of them the most
/// recently retired, half the oldest (the lard-cc runtime's `REUSE_SCAN`).
pub const REUSE_SCAN: usize = 8;

/// Language-thread ids whose holders ended, for reuse: an id is reused only
/// when its previous holder's last access happens before the new holder's
/// start (the start clock's entry for the id is at least the holder's own
/// entry at that access), so the two are ordered like one thread
/// continuing, and the new holder's own entry continues after every value
/// the previous one published ([`fork`]). The lard-cc runtime's rule and
/// queue (`lardcc_id_alloc`, guest-sdk/cc/clock.c). A few of the most
/// recently retired ids are tried first (a task's children it just waited
/// for), then a few of the oldest (after a barrier, the previous phase's
/// units), and the oldest not yet ordered go to the back, so that the
/// current phase's units, unordered with each other, never hide the
/// ordered ones behind them; trying a fixed number keeps allocation cheap
/// when thousands are retired.
#[derive(Default)]
pub struct IdPool {
    /// The retired ids, oldest first.
    freed: VecDeque<Retired>,
}

/// A retired id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// The id.
    pub id: u64,
    /// Its holder's own entry at its last access.
    pub last: u64,
    /// Its holder's own entry at its end (one more than the last it
    /// published), which the next holder's continues from.
    pub own: u64,
}

impl IdPool {
    /// Language thread `id` ended ([`Retired`]).
    pub fn retire(&mut self, id: u64, last: u64, own: u64) {
        self.freed.push_back(Retired { id, last, own });
    }

    /// A retired id whose holder happens before a start from a clock
    /// whose entry for an id is `knows(id)`, if one of those tried is.
    pub fn take(&mut self, knows: impl Fn(u64) -> u64) -> Option<Retired> {
        let ordered = |r: &Retired| knows(r.id) >= r.last;
        let n = self.freed.len();
        let newest = n.min(REUSE_SCAN / 2);
        if let Some(i) = (n - newest..n).rev().find(|&i| ordered(&self.freed[i])) {
            return self.freed.remove(i);
        }
        for _ in 0..(n - newest).min(REUSE_SCAN / 2) {
            let r = self.freed.pop_front()?;
            if ordered(&r) {
                return Some(r);
            }
            self.freed.push_back(r);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_acquire_orders_and_readers_do_not() {
        let mut vc = VcFile::default();
        let mut s = SyncClocks::default();
        let mut out = Vec::new();
        // T1 releases m: m = {1:1}, T1 ticks to 2.
        s.release(&mut vc, 1, SyncKey::Object(8), &mut out);
        assert_eq!(out, [(1, 2)]);
        out.clear();
        // T2 acquires m: learns T1's entry 1.
        s.acquire(&mut vc, 2, SyncKey::Object(8), &mut out);
        assert_eq!(out, [(1, 1)]);
        assert_eq!(vc.read(ThreadKey::Lang(2), 1), 1);
        out.clear();
        // Acquiring again changes nothing; an unknown object neither.
        s.acquire(&mut vc, 2, SyncKey::Object(8), &mut out);
        s.acquire(&mut vc, 2, SyncKey::Readers(8), &mut out);
        assert!(out.is_empty());
        // Fork: T3 gets T2's clock, T2 ticks.
        let (mut p, mut c) = (Vec::new(), Vec::new());
        fork(&mut vc, 2, 3, &mut p, &mut c);
        assert_eq!(p, [(2, 2)]);
        c.sort_unstable();
        assert_eq!(c, [(1, 1), (2, 1)]);
    }

    /// Ids are reused only by a start whose clock names the previous
    /// holder's last published entry; the queue tries the newest and the
    /// oldest, and what was not ordered stays for later.
    #[test]
    fn retired_ids_are_reused_only_once_ordered() {
        // (retired ids with their last published entry, what the start
        // clock of T1 knows of each id, the id taken)
        type Case = (&'static [(u64, u64)], &'static [(u64, u64)], Option<u64>);
        let cases: &[Case] = &[
            (&[], &[], None),
            (&[(5, 3)], &[], None),
            (&[(5, 3)], &[(5, 2)], None),
            (&[(5, 3)], &[(5, 3)], Some(5)),
            (&[(5, 3)], &[(5, 4)], Some(5)),
            // The newest ordered one first.
            (&[(5, 1), (6, 1)], &[(5, 1), (6, 1)], Some(6)),
            // Newest not ordered: the oldest ordered one.
            (
                &[(2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 1)],
                &[(2, 1)],
                Some(2),
            ),
            // Ordered, but neither among the newest nor the oldest tried.
            (
                &[
                    (2, 1),
                    (3, 1),
                    (4, 1),
                    (5, 1),
                    (6, 1),
                    (7, 1),
                    (8, 1),
                    (9, 1),
                    (10, 1),
                ],
                &[(6, 1)],
                None,
            ),
        ];
        for &(freed, knows, want) in cases {
            let mut vc = VcFile::default();
            for &(t, v) in knows {
                vc.write(ThreadKey::Lang(1), t, v);
            }
            let mut pool = IdPool::default();
            for &(id, last) in freed {
                pool.retire(id, last, last + 2);
            }
            let got = pool.take(|t| vc.read(ThreadKey::Lang(1), t));
            assert_eq!(
                got.map(|r| (r.id, r.own)),
                want.map(|id| (id, freed.iter().find(|f| f.0 == id).unwrap().1 + 2)),
                "freed {freed:?}, T1 knows {knows:?}"
            );
            let left = freed.len() - usize::from(want.is_some());
            assert_eq!(pool.freed.len(), left, "the others stay");
        }
        // The oldest that were tried and not ordered went to the back: the
        // ordered one behind them is tried next time.
        let mut pool = IdPool::default();
        for id in 2..=11 {
            pool.retire(id, 1, 3);
        }
        let mut vc = VcFile::default();
        vc.write(ThreadKey::Lang(1), 6, 1);
        let knows = |t: u64| vc.read(ThreadKey::Lang(1), t);
        assert_eq!(pool.take(knows), None);
        assert_eq!(pool.take(knows).map(|r| r.id), Some(6));
    }

    /// A reused id's clock continues after everything the parent knew of
    /// it and after the own entry its previous holder ended with; a fresh
    /// one starts at 1 without a write.
    #[test]
    fn fork_continues_a_reused_ids_clock() {
        // (what T2 knows of id 7, the own entry 7's previous holder ended
        // with (1: none), 7's own entry after the fork, whether a WriteVC
        // says so)
        for (knows, ended, own, written) in [
            (4, 1, 5, true),
            (4, 5, 5, false),
            (4, 9, 9, false),
            (8, 5, 9, true),
        ] {
            let mut vc = VcFile::default();
            vc.write(ThreadKey::Lang(2), 7, knows);
            if ended != 1 {
                vc.write(ThreadKey::Lang(7), 7, ended);
            }
            let (mut p, mut c) = (Vec::new(), Vec::new());
            fork(&mut vc, 2, 7, &mut p, &mut c);
            c.sort_unstable();
            let mut want = vec![(2, 1)];
            if written {
                want.push((7, own));
            }
            assert_eq!(c, want, "knows {knows}, ended {ended}");
            assert_eq!(vc.read(ThreadKey::Lang(7), 7), own);
            assert_eq!(p, [(2, 2)]);
        }
        let mut vc = VcFile::default();
        vc.write(ThreadKey::Lang(2), 7, 4);
        let (mut p, mut c) = (Vec::new(), Vec::new());
        fork(&mut vc, 2, 8, &mut p, &mut c);
        c.sort_unstable();
        assert_eq!(c, [(2, 1), (7, 4)]);
        assert_eq!(vc.read(ThreadKey::Lang(8), 8), 1);
    }

    #[test]
    fn a_dominated_object_is_not_joined_and_a_change_is() {
        let mut vc = VcFile::default();
        let mut s = SyncClocks::default();
        let mut out = Vec::new();
        let m = SyncKey::Object(8);
        // T1 releases, T2 acquires (learns 1:1), releases, acquires again:
        // the second acquire finds m dominated by T2's clock.
        s.release(&mut vc, 1, m, &mut out);
        s.acquire(&mut vc, 2, m, &mut out);
        s.release(&mut vc, 2, m, &mut out);
        out.clear();
        s.acquire(&mut vc, 2, m, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.clocks[&m].covered, Some((2, 0)));
        // T3 releases with a clock T2 has not seen: T2's acquire joins it.
        s.release(&mut vc, 3, m, &mut out);
        assert_eq!(s.clocks[&m].covered, None);
        out.clear();
        s.acquire(&mut vc, 2, m, &mut out);
        assert_eq!(out, [(3, 1)]);
        // A write that lowers an entry (a WriteVC) voids what was known.
        vc.write(ThreadKey::Lang(2), 3, 0);
        out.clear();
        s.acquire(&mut vc, 2, m, &mut out);
        assert_eq!(out, [(3, 1)]);
    }

    #[test]
    fn for_each_entry_gives_what_entries_gives() {
        let mut vc = VcFile::default();
        let me = ThreadKey::Lang(4);
        let mut seen = Vec::new();
        vc.for_each_entry(me, |t, v| seen.push((t, v)));
        assert_eq!(seen, [(4, 1)]);
        vc.write(me, 7, 3);
        vc.write(me, 9, 0);
        let mut all = vc.entries(me);
        all.sort_unstable();
        assert_eq!(all, [(4, 1), (7, 3)]);
        vc.write(me, 4, 0);
        assert_eq!(vc.entries(me), [(7, 3)]);
        assert_eq!(vc.lowered(), 1);
    }

    /// Releases and acquires with every shortcut (an object dominated by
    /// its acquirer, a release by the last releaser with no other entry
    /// changed, an object's floored entries dropped at its acquire) give
    /// the objects' clocks (above the floors), the threads' clocks and the
    /// WriteVCs of the two primitives applied in full (every entry joined
    /// every time), over random sequences that also change other entries,
    /// raise floors, lower entries and forget objects.
    #[test]
    fn shortcuts_give_the_full_joins_results() {
        type Full = std::collections::HashMap<SyncKey, std::collections::BTreeMap<u64, u64>>;
        let full_release = |objs: &mut Full, vc: &mut VcFile, me: u64, key: SyncKey| {
            let o = objs.entry(key).or_default();
            vc.for_each_entry(ThreadKey::Lang(me), |t, v| {
                let e = o.entry(t).or_insert(0);
                *e = (*e).max(v);
            });
            let mut out = Vec::new();
            tick(vc, me, &mut out);
            out
        };
        let full_acquire = |objs: &Full, vc: &mut VcFile, me: u64, key: SyncKey| {
            let mut out = Vec::new();
            if let Some(o) = objs.get(&key) {
                join_into(vc, me, o.iter().map(|(&t, &v)| (t, v)), &mut out);
            }
            out
        };
        for seed in 1..=40u64 {
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut next = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let (mut vc, mut s) = (VcFile::default(), SyncClocks::default());
            let (mut vc_full, mut objs) = (VcFile::default(), Full::default());
            for step in 0..400 {
                let me = 1 + next(4);
                let key = SyncKey::Object(next(3));
                let mut out = Vec::new();
                let full_out = match next(20) {
                    0..=8 => {
                        s.release(&mut vc, me, key, &mut out);
                        full_release(&mut objs, &mut vc_full, me, key)
                    }
                    9..=16 => {
                        s.acquire(&mut vc, me, key, &mut out);
                        full_acquire(&objs, &mut vc_full, me, key)
                    }
                    17 => {
                        // Another entry raised (a fork, a join elsewhere)
                        // or lowered (a WriteVC).
                        let (t, v) = (1 + next(5), next(40));
                        vc.write(ThreadKey::Lang(me), t, v);
                        vc_full.write(ThreadKey::Lang(me), t, v);
                        Vec::new()
                    }
                    18 => {
                        let (t, v) = (1 + next(5), next(10));
                        vc.raise_floor(t, v);
                        vc_full.raise_floor(t, v);
                        Vec::new()
                    }
                    _ => {
                        s.forget(key);
                        objs.remove(&key);
                        Vec::new()
                    }
                };
                out.sort_unstable();
                let mut full_out = full_out;
                full_out.sort_unstable();
                assert_eq!(out, full_out, "seed {seed} step {step}: WriteVCs");
                for t in 1..=5 {
                    let mut a = vc.entries(ThreadKey::Lang(t));
                    let mut b = vc_full.entries(ThreadKey::Lang(t));
                    a.sort_unstable();
                    b.sort_unstable();
                    assert_eq!(a, b, "seed {seed} step {step}: clock of {t}");
                }
                for k in 0..3 {
                    // Entries at or below their floors may have gone from
                    // an object's clock (they join nothing); every other
                    // entry is the full join's.
                    let key = SyncKey::Object(k);
                    let mut a = s.entries(key);
                    a.retain(|&(t, v)| !vc.floored(t, v));
                    a.sort_unstable();
                    let b: Vec<(u64, u64)> = objs
                        .get(&key)
                        .map(|o| o.iter().map(|(&t, &v)| (t, v)).collect())
                        .unwrap_or_default();
                    let b: Vec<(u64, u64)> =
                        b.into_iter().filter(|&(t, v)| !vc.floored(t, v)).collect();
                    assert_eq!(a, b, "seed {seed} step {step}: object {k}");
                }
            }
        }
    }
}
