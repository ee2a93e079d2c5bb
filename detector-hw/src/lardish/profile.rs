//! The instruction-level profile of the LARDISH model (`lard run
//! --hw-profile`): what each guest instruction cost the model.
//!
//! Every event is one instruction (an access, a LARDx86 operation, a
//! system call's synchronization); the profile charges each event's change
//! of the model's counters to its PC. The rows therefore sum exactly to the
//! run's figures: a counter's total over the rows is its value in
//! [`HwStats`], and the cycles' total is LARDISH's cycles over no detection
//! (docs/lardish.md, "Instruction profile").

use super::stats::{HwStats, SwCause};
use crate::clock::FxHashMap;

/// The counters the profile keeps per instruction (and in total).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileCounters {
    /// Events of the instruction (each execution of it).
    pub events: u64,
    /// Checked accesses resolved by a hardware race check.
    pub hw_checks: u64,
    /// Checked accesses that needed a software race check.
    pub sw_checks: u64,
    /// Software checks by cause, indexed like [`SwCause::ALL`].
    pub sw_causes: [u64; 9],
    /// Metadata lines evicted from the last-level cache.
    pub md_evictions: u64,
    /// Epoch rollovers.
    pub rollovers: u64,
    /// ClearHistory and CopyHistory operations.
    pub history_ops: u64,
    /// LARDISH's cycles over the no-detection machine's (may be negative
    /// for one instruction: the two machines' caches differ).
    pub cycles: i64,
}

impl ProfileCounters {
    /// The counters of `s` (`events`: its events; cycles: LARDISH's over
    /// no detection).
    pub fn of(s: &HwStats) -> ProfileCounters {
        ProfileCounters {
            events: s.events,
            hw_checks: s.hw_checks,
            sw_checks: s.sw_checks,
            sw_causes: s.sw_causes,
            md_evictions: s.md_evictions,
            rollovers: s.rollovers,
            history_ops: s.clear_ops + s.copy_ops,
            cycles: s.cycles_lardish as i64 - s.cycles_no_detection as i64,
        }
    }

    /// `self - before`, counter by counter.
    fn since(&self, before: &ProfileCounters) -> ProfileCounters {
        let mut causes = [0; 9];
        for (i, c) in causes.iter_mut().enumerate() {
            *c = self.sw_causes[i] - before.sw_causes[i];
        }
        ProfileCounters {
            events: self.events - before.events,
            hw_checks: self.hw_checks - before.hw_checks,
            sw_checks: self.sw_checks - before.sw_checks,
            sw_causes: causes,
            md_evictions: self.md_evictions - before.md_evictions,
            rollovers: self.rollovers - before.rollovers,
            history_ops: self.history_ops - before.history_ops,
            cycles: self.cycles - before.cycles,
        }
    }

    /// Adds `d`, counter by counter.
    fn add(&mut self, d: &ProfileCounters) {
        self.events += d.events;
        self.hw_checks += d.hw_checks;
        self.sw_checks += d.sw_checks;
        for (c, x) in self.sw_causes.iter_mut().zip(d.sw_causes) {
            *c += x;
        }
        self.md_evictions += d.md_evictions;
        self.rollovers += d.rollovers;
        self.history_ops += d.history_ops;
        self.cycles += d.cycles;
    }

    /// The counters as JSON members (no braces).
    pub fn json_members(&self) -> String {
        let causes: Vec<String> = SwCause::ALL
            .iter()
            .zip(self.sw_causes)
            .map(|(c, n)| format!("\"{}\":{n}", c.name()))
            .collect();
        format!(
            "\"events\":{},\"hw_checks\":{},\"sw_checks\":{},\"sw_causes\":{{{}}},\
             \"md_evictions\":{},\"rollovers\":{},\"history_ops\":{},\"cycles\":{}",
            self.events,
            self.hw_checks,
            self.sw_checks,
            causes.join(","),
            self.md_evictions,
            self.rollovers,
            self.history_ops,
            self.cycles
        )
    }
}

/// Per instruction (PC, without the call-stack bits of a site), what its
/// events cost the model.
#[derive(Clone, Debug, Default)]
pub struct HwProfile {
    rows: FxHashMap<u64, ProfileCounters>,
}

/// Bits of an event's PC that address the instruction (a site carries a
/// call-stack id above them).
const PC_MASK: u64 = (1 << 47) - 1;

impl HwProfile {
    /// Charges the change from `before` to `after` to instruction `pc`.
    pub(super) fn charge(&mut self, pc: u64, before: &ProfileCounters, after: &ProfileCounters) {
        let d = after.since(before);
        self.rows.entry(pc & PC_MASK).or_default().add(&d);
    }

    /// Every instruction that made an event, costliest first (by cycles,
    /// then software checks, then PC), with its counters.
    pub fn rows(&self) -> Vec<(u64, ProfileCounters)> {
        let mut v: Vec<(u64, ProfileCounters)> =
            self.rows.iter().map(|(&pc, c)| (pc, *c)).collect();
        v.sort_by(|a, b| {
            b.1.cycles
                .cmp(&a.1.cycles)
                .then(b.1.sw_checks.cmp(&a.1.sw_checks))
                .then(a.0.cmp(&b.0))
        });
        v
    }

    /// The sum of every instruction's counters.
    pub fn totals(&self) -> ProfileCounters {
        let mut t = ProfileCounters::default();
        for c in self.rows.values() {
            t.add(c);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_to_the_totals_one_row_per_instruction() {
        let mut p = HwProfile::default();
        let zero = ProfileCounters::default();
        let a = ProfileCounters {
            events: 1,
            sw_checks: 1,
            sw_causes: [1, 0, 0, 0, 0, 0, 0, 0, 0],
            cycles: 40,
            ..zero
        };
        let idle = ProfileCounters { events: 1, ..zero };
        p.charge(0x1000, &zero, &a);
        p.charge(0x1000 | (5 << 47), &zero, &a);
        p.charge(0x2000, &zero, &idle);
        let rows = p.rows();
        // A site's call-stack bits do not make another instruction.
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 0x1000);
        assert_eq!(rows[1].0, 0x2000);
        assert_eq!(rows[0].1.sw_checks, 2);
        assert_eq!(rows[0].1.cycles, 80);
        let t = p.totals();
        assert_eq!(t.events, 3);
        assert_eq!(t.sw_causes[0], 2);
    }
}
