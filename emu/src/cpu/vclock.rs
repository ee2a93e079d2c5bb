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
}

impl VcFile {
    /// Entry `tid` of `who`'s clock.
    pub fn read(&self, who: ThreadKey, tid: u64) -> u64 {
        match self.clocks.get(&who).and_then(|c| c.get(&tid)) {
            Some(&v) => v,
            None if who == ThreadKey::Lang(tid) => 1,
            None => 0,
        }
    }

    /// Every non-zero entry of `who`'s clock as `(tid, value)`, own entry
    /// included (in no particular order).
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
                if v != 0 {
                    own_seen |= who == ThreadKey::Lang(t);
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
        self.clocks.remove(&who);
    }

    /// Drops `who`'s clock but for its own entry: an identity that ended
    /// (`Endings`). Its other entries were never lowered by a WriteVC, so
    /// [`VcFile::lowered`] stays (nothing compares with an ended clock).
    pub fn retire(&mut self, who: ThreadKey) {
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
        let who = ThreadKey::Lang(id);
        self.clocks.remove(&who);
        if own != 1 {
            self.clocks.entry(who).or_default().insert(id, own);
        }
        id
    }

    /// Sets entry `tid` of `who`'s clock.
    pub fn write(&mut self, who: ThreadKey, tid: u64, value: u64) {
        let old = self.read(who, tid);
        if value < old {
            self.lowered += 1;
        }
        self.clocks.entry(who).or_default().insert(tid, value);
    }

    /// How many writes lowered an entry so far: while it is unchanged, a
    /// clock that dominated another still does (clocks only grew).
    pub fn lowered(&self) -> u64 {
        self.lowered
    }
}
