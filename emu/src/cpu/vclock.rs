//! The architectural vector-clock state that ReadVC and WriteVC access.
//!
//! It belongs to the CPU, not to a detector: ReadVC returns what WriteVC last
//! stored for the same identity and entry, whichever detectors are attached.
//! A fresh identity's own entry is 1 and all others 0 (docs/lardx86.md §1).

use crate::cpu::code::AddrMap;
use lard_detector_hw::clock::FxHashMap;
use lard_detector_hw::event::ThreadKey;

/// Per-identity vector clocks, sparse.
#[derive(Default)]
pub struct VcFile {
    clocks: FxHashMap<ThreadKey, AddrMap<u64>>,
    /// Writes that lowered an entry so far (a WriteVC may store any value;
    /// binary mode's joins and ticks only raise entries): while it stays
    /// the same, every clock only grew.
    lowered: u64,
    /// Clock floors (`LardOp::FloorVc`, docs/lardx86.md): entry `t` of
    /// every clock reads at least `floor[t]`. A stored entry at or below
    /// its floor counts as absent ([`VcFile::stored`], [`VcFile::entries`]
    /// leave it out) and goes at the next sweep.
    floor: AddrMap<u64>,
    /// Floors raised since the clocks were last swept of such entries: a
    /// sweep visits every entry of every clock, so with more than
    /// [`DIRECT_FLOOR_CLOCKS`] clocks it waits until as many floors were
    /// raised as there are clocks (a lard-cc phase raises one per unit,
    /// and thousands of ended units keep a clock each); with fewer, a
    /// floor removes its entry from each clock at once.
    unswept: usize,
    /// Changes so far of anything but a clock's own entry (a write of
    /// another entry, a floor, a clock dropped or restarted): while it
    /// stays the same, every clock's other entries read as they did.
    others: u64,
    /// Floors raised so far: while it stays the same, so does
    /// [`VcFile::floored`].
    floors: u64,
}

/// Up to this many clocks, a floor removes its entry from every clock at
/// once ([`VcFile::raise_floor`]); beyond, clocks are swept now and then.
const DIRECT_FLOOR_CLOCKS: usize = 1024;

impl VcFile {
    /// Entry `tid` of `who`'s clock.
    #[inline]
    pub fn read(&self, who: ThreadKey, tid: u64) -> u64 {
        let v = match self.clocks.get(&who).and_then(|c| c.get(&tid)) {
            Some(&v) => v,
            None if who == ThreadKey::Lang(tid) => 1,
            None => 0,
        };
        if self.floor.is_empty() {
            v
        } else {
            v.max(self.floor.get(&tid).copied().unwrap_or(0))
        }
    }

    /// Entry `tid` of every clock is at least `value` from now on (every
    /// clock that can still run holds it already: the caller's rule). The
    /// clocks' stored entries at or below it count as absent from now on.
    pub fn raise_floor(&mut self, tid: u64, value: u64) {
        self.others += 1;
        self.floors += 1;
        let f = self.floor.entry(tid).or_insert(0);
        *f = (*f).max(value);
        let value = *f;
        if self.clocks.len() <= DIRECT_FLOOR_CLOCKS {
            // Few clocks (some of them large: a task tree's root names
            // every task): remove the entry from each now.
            for (who, c) in self.clocks.iter_mut() {
                if *who != ThreadKey::Lang(tid) && c.get(&tid).is_some_and(|&v| v <= value) {
                    c.remove(&tid);
                }
            }
            return;
        }
        self.unswept += 1;
        if self.unswept >= self.clocks.len() {
            self.sweep();
        }
    }

    /// Removes every stored entry at or below its floor but a clock's own.
    fn sweep(&mut self) {
        self.unswept = 0;
        let floor = &self.floor;
        for (who, c) in self.clocks.iter_mut() {
            c.retain(|&t, &mut v| {
                *who == ThreadKey::Lang(t) || floor.get(&t).is_none_or(|&f| v > f)
            });
        }
    }

    /// How many floors were raised so far ([`VcFile::floored`] answers
    /// the same while this does).
    pub fn floors(&self) -> u64 {
        self.floors
    }

    /// Whether a stored `(tid, value)` is at or below its floor: every
    /// clock reads at least `value` there.
    #[inline]
    pub fn floored(&self, tid: u64, value: u64) -> bool {
        !self.floor.is_empty() && self.floor.get(&tid).is_some_and(|&f| value <= f)
    }

    /// The entries `who`'s clock stores (not those its floors give), but
    /// its own.
    pub fn stored(&self, who: ThreadKey) -> Vec<(u64, u64)> {
        self.clocks.get(&who).map_or_else(Vec::new, |c| {
            c.iter()
                .filter(|&(&t, &v)| who != ThreadKey::Lang(t) && !self.floored(t, v))
                .map(|(&t, &v)| (t, v))
                .collect()
        })
    }

    /// Every non-zero entry `who`'s clock stores as `(tid, value)`, own
    /// entry included (in no particular order; the entries its floors give
    /// are left out: every clock has them).
    pub fn entries(&self, who: ThreadKey) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.for_each_entry(who, |t, v| out.push((t, v)));
        out
    }

    /// Calls `f(tid, value)` for every entry [`VcFile::entries`] returns,
    /// without collecting them.
    pub fn for_each_entry(&self, who: ThreadKey, mut f: impl FnMut(u64, u64)) {
        let clock = self.clocks.get(&who);
        let mut own_seen = false;
        if let Some(c) = clock {
            for (&t, &v) in c {
                let own = who == ThreadKey::Lang(t);
                if v != 0 && (own || !self.floored(t, v)) {
                    own_seen |= own;
                    f(t, v);
                }
            }
        }
        if let ThreadKey::Lang(me) = who {
            // The own entry is 1 until written (and reported once).
            if !own_seen && !clock.is_some_and(|c| c.contains_key(&me)) {
                f(me, 1);
            }
        }
    }

    /// Forgets `who`'s clock (an identity that will never run again).
    pub fn forget(&mut self, who: ThreadKey) {
        self.others += 1;
        self.clocks.remove(&who);
    }

    /// Drops `who`'s clock but for its own entry: an identity that ended
    /// (`Endings`). Its other entries were never lowered by a WriteVC, so
    /// [`VcFile::lowered`] stays (nothing compares with an ended clock).
    pub fn retire(&mut self, who: ThreadKey) {
        self.others += 1;
        let ThreadKey::Lang(me) = who else {
            self.clocks.remove(&who);
            return;
        };
        let own = self.read(who, me);
        self.clocks.remove(&who);
        if own != 1 {
            self.clocks.entry(who).or_default().insert(me, own);
        }
    }

    /// Starts the clock of ended identity `Lang(id)`'s next holder from the
    /// own entry `own` its previous holder ended with, which the detectors
    /// kept (docs/lardx86.md, "Ended identities"); returns `id`.
    pub fn reuse(&mut self, id: u64, own: u64) -> u64 {
        self.others += 1;
        let who = ThreadKey::Lang(id);
        self.clocks.remove(&who);
        if own != 1 {
            self.clocks.entry(who).or_default().insert(id, own);
        }
        id
    }

    /// Makes room in `who`'s clock for `more` entries (a fork about to
    /// copy its parent's): one allocation instead of a growth per doubling.
    pub fn reserve(&mut self, who: ThreadKey, more: usize) {
        self.clocks.entry(who).or_default().reserve(more);
    }

    /// Sets entry `tid` of `who`'s clock.
    pub fn write(&mut self, who: ThreadKey, tid: u64, value: u64) {
        let old = self.read(who, tid);
        if value < old {
            self.lowered += 1;
        }
        if who != ThreadKey::Lang(tid) {
            self.others += 1;
        }
        self.clocks.entry(who).or_default().insert(tid, value);
    }

    /// How many changes of anything but a clock's own entry were made so
    /// far: while it is unchanged, [`VcFile::for_each_entry`] gives the
    /// same entries but for the own one ([`VcFile::own_entry`]).
    pub fn others(&self) -> u64 {
        self.others
    }

    /// The own entry of language thread `me`'s clock as
    /// [`VcFile::for_each_entry`] gives it (1 until written; none if
    /// written 0).
    pub fn own_entry(&self, me: u64) -> Option<u64> {
        match self
            .clocks
            .get(&ThreadKey::Lang(me))
            .and_then(|c| c.get(&me))
        {
            Some(0) => None,
            Some(&v) => Some(v),
            None => Some(1),
        }
    }

    /// How many writes lowered an entry so far: while it is unchanged, a
    /// clock that dominated another still does (clocks only grew).
    pub fn lowered(&self) -> u64 {
        self.lowered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A floor makes an entry read at least its value in every clock,
    /// fresh ones included; the copies stored at or below it go, so that
    /// [`VcFile::entries`] (what a fork copies) leaves them out; an entry
    /// stored above it, and a clock's own entry, stay.
    #[test]
    fn floors_read_in_every_clock_and_prune_the_copies() {
        let (a, b, c) = (ThreadKey::Lang(1), ThreadKey::Lang(2), ThreadKey::Lang(3));
        let mut vc = VcFile::default();
        vc.write(a, 7, 4);
        vc.write(b, 7, 6);
        vc.write(a, 8, 2);
        vc.write(ThreadKey::Lang(7), 7, 5);
        vc.raise_floor(7, 4);
        assert_eq!(vc.read(a, 7), 4);
        assert_eq!(vc.read(b, 7), 6);
        assert_eq!(vc.read(c, 7), 4, "a clock never written");
        assert_eq!(vc.read(ThreadKey::Lang(7), 7), 5, "its own entry");
        let mut e = vc.entries(a);
        e.sort_unstable();
        assert_eq!(e, [(1, 1), (8, 2)], "the floored copy went");
        assert_eq!(vc.stored(b), [(7, 6)]);
        assert_eq!(vc.read(a, 8), 2, "other entries keep no floor");
    }

    /// With many clocks the floored copies stay stored until a sweep, but
    /// read, list and fork as if gone; the sweep removes them.
    #[test]
    fn many_clocks_are_swept_later_and_read_the_same() {
        let mut vc = VcFile::default();
        let n = DIRECT_FLOOR_CLOCKS as u64 + 8;
        for who in 100..100 + n {
            vc.write(ThreadKey::Lang(who), 7, 4);
            vc.write(ThreadKey::Lang(who), 8, 9);
        }
        vc.raise_floor(7, 5);
        let a = ThreadKey::Lang(100);
        assert_eq!(vc.read(a, 7), 5);
        assert_eq!(
            vc.stored(a),
            [(8, 9)],
            "the copy below the floor is not listed"
        );
        assert!(vc.entries(a).iter().all(|&(t, _)| t != 7));
        assert!(vc.clocks[&a].contains_key(&7), "not swept yet");
        for t in 0..n {
            vc.raise_floor(1000 + t, 1);
        }
        assert!(!vc.clocks[&a].contains_key(&7), "swept");
        assert_eq!(vc.read(a, 7), 5);
        assert_eq!(vc.read(a, 8), 9);
    }
}
