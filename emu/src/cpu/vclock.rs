//! The architectural vector-clock state that ReadVC and WriteVC access.
//!
//! It belongs to the CPU, not to a detector: ReadVC returns what WriteVC last
//! stored for the same identity and entry, whichever detectors are attached.
//! A fresh identity's own entry is 1 and all others 0 (docs/lardx86.md §1).

use crate::cpu::code::AddrMap;
use lard_detector_hw::event::ThreadKey;
use std::collections::HashMap;

/// Per-identity vector clocks, sparse.
#[derive(Default)]
pub struct VcFile {
    clocks: HashMap<ThreadKey, AddrMap<u64>>,
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
        let mut out: Vec<(u64, u64)> = self
            .clocks
            .get(&who)
            .map(|c| {
                c.iter()
                    .filter(|(_, &v)| v != 0)
                    .map(|(&t, &v)| (t, v))
                    .collect()
            })
            .unwrap_or_default();
        if let ThreadKey::Lang(me) = who {
            if !out.iter().any(|&(t, _)| t == me) && self.read(who, me) != 0 {
                out.push((me, self.read(who, me)));
            }
        }
        out
    }

    /// Forgets `who`'s clock (an identity that will never run again).
    pub fn forget(&mut self, who: ThreadKey) {
        self.clocks.remove(&who);
    }

    /// Sets entry `tid` of `who`'s clock.
    pub fn write(&mut self, who: ThreadKey, tid: u64, value: u64) {
        self.clocks.entry(who).or_default().insert(tid, value);
    }
}
