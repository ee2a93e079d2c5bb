//! The accounting: statistics, per-core cycles, and the causes of
//! hardware and software checks.

use crate::clock::FxHashMap;
use crate::lardish::cache::Hierarchy;
use crate::lardish::config::HwConfig;
use crate::lardish::history::{self, ByteMeta, Holder, HwStatus};
use crate::lardish::stats::{HwCause, HwStats, Mechanism, OccupancySample, SwCause};

use super::{FxHashSet, View};

/// The accounting: statistics and what they need to name causes.
#[derive(Debug)]
pub(in crate::lardish) struct Accounting {
    pub(in crate::lardish) stats: HwStats,
    /// Per core: its LARDISH cycles (for asynchronous checks).
    pub(in crate::lardish) time: Vec<u64>,
    /// Why each metadata line fill left the hierarchy (fill id → cause):
    /// the cause of later software checks (statistics only).
    pub(in crate::lardish) lost: FxHashMap<u64, SwCause>,
    /// Data lines whose history ClearHistory/CopyHistory changed
    /// (statistics only).
    pub(in crate::lardish) history_lines: FxHashSet<u64>,
    /// The event count at which the next occupancy sample is taken
    /// (`u64::MAX`: none, `sample_every` is 0).
    pub(in crate::lardish) next_sample: u64,
}

impl Accounting {
    /// Nothing counted yet.
    pub(in crate::lardish) fn new(cfg: &HwConfig) -> Accounting {
        Accounting {
            stats: HwStats::default(),
            time: vec![0; cfg.cores as usize],
            lost: FxHashMap::default(),
            history_lines: FxHashSet::default(),
            next_sample: match cfg.sample_every {
                0 => u64::MAX,
                n => n,
            },
        }
    }

    /// Charges `cycles` of LARDISH time to core `c`, as mechanism `why`.
    pub(in crate::lardish) fn charge(&mut self, c: usize, cycles: u64, why: Mechanism) {
        self.stats.cycles_lardish += cycles;
        self.stats.cycles_by_mechanism[why as usize] += cycles;
        self.time[c] += cycles;
    }

    /// Counts one event (and its instruction), and takes an occupancy
    /// sample of `hier` every `sample_every`-th event.
    pub(in crate::lardish) fn begin_event(&mut self, sample_every: u64, hier: &Hierarchy) {
        self.stats.events += 1;
        self.stats.instructions += 1;
        // Every `sample_every`-th event (a countdown, not a division per
        // event).
        if self.stats.events == self.next_sample {
            self.sample(hier);
            self.next_sample = self.next_sample.saturating_add(sample_every);
        }
    }

    /// Records one occupancy sample of `hier` now.
    pub(in crate::lardish) fn sample(&mut self, hier: &Hierarchy) {
        let (counts, cap) = hier.occupancy();
        self.stats.occupancy.push(OccupancySample {
            event: self.stats.events,
            data: counts[0],
            compact_md: counts[1],
            expanded_md: counts[2],
            invalid: cap.saturating_sub(counts.iter().sum()),
        });
    }
}

/// Why the deciding byte `x` (history `m`, before the access) of a software
/// check was not decidable in hardware: the first record or status slot
/// found missing (status anchor, last write, last reads). `lost` and
/// `history_lines` are [`Accounting`]'s fields of those names.
pub(in crate::lardish) fn sw_cause(
    v: &View,
    lost: &FxHashMap<u64, SwCause>,
    history_lines: &FxHashSet<u64>,
    x: u64,
    m: &ByteMeta,
) -> SwCause {
    let touched = || history_lines.contains(&v.layout.data_line(x));
    let untouched_cause = |otherwise: SwCause| {
        if touched() {
            SwCause::HistoryOp
        } else {
            otherwise
        }
    };
    if (m.write.is_none() && m.reads.is_empty()) || m.anchor.is_none() {
        // Nothing of it was ever set in hardware.
        return untouched_cause(SwCause::Cold);
    }
    let why = |h: &Option<Holder>| -> Option<SwCause> {
        let Some(h) = h else {
            // Records without a slot come from CopyHistory (or were made
            // while their line was being evicted).
            return Some(untouched_cause(SwCause::Evicted));
        };
        if *h == history::REFUSED {
            return Some(SwCause::ClockTable);
        }
        if v.holder_valid(x, h) {
            return None;
        }
        if v.gens.get(h.core as usize) != Some(&h.gen) {
            return Some(SwCause::ThreadSwitch);
        }
        // Fill ids are unique: either that fill left the hierarchy (`lost`
        // says why) or the byte's metadata line changed by inflation.
        Some(lost.get(&h.fill).copied().unwrap_or(SwCause::Inflated))
    };
    m.anchor
        .iter()
        .map(|a| why(&Some(*a)))
        .chain(m.write.iter().map(|r| why(&r.holder)))
        .chain(m.reads.iter().map(|r| why(&r.holder)))
        .flatten()
        .next()
        .unwrap_or(SwCause::StaleStatus)
}

/// Why byte `x`'s permission slot of core `c` did not allow the access.
pub(in crate::lardish) fn hw_cause(v: &View, c: usize, x: u64, m: &ByteMeta) -> HwCause {
    let slot = m.perm_slot(c);
    if slot.gen != v.gens[c] || v.fill(c, x) != Some(slot.fill) {
        HwCause::NoPermission
    } else if slot.downgraded {
        HwCause::RemoteAccess
    } else if m.effective_status(&|h| v.holder_valid(x, h)) != HwStatus::Everything {
        HwCause::PartialStatus
    } else {
        HwCause::Unordered
    }
}
