//! Several detector variants on one execution: `lard run --detectors …`.
//!
//! Every variant (docs/accuracy.md) sees the same event stream; per access,
//! their verdicts are compared with LARD's, giving the LARD paper's Table 3
//! columns (DRE, PCs, false and missed DREs/PCs). The emulator delivers every
//! data access (AccessMode::All) when a variant checks untracked accesses,
//! and low-level synchronization when a variant uses it.

use crate::detect::RaceLog;
use crate::lines::SourceLines;
use crate::machine::Machine;
use crate::observer::{AccessMode, Control, Observer};
use lard_detector_hw::event::{Event, EventKind};
use lard_detector_hw::variants::{Variant, VariantSet};
use lard_detector_hw::FastTrack;
use std::cell::RefCell;
use std::rc::Rc;

/// What a multi-detector run found.
pub struct AccuracyLog {
    /// The variants and their table.
    pub set: VariantSet,
    /// One race log per variant, in the same order.
    pub logs: Vec<RaceLog>,
}

/// An observer that runs several variants side by side.
pub struct AccuracyObserver {
    log: Rc<RefCell<AccuracyLog>>,
    mode: AccessMode,
    sync: bool,
    exception: bool,
}

/// Parses `--detectors`: a comma-separated list of variant names, or `all`.
/// LARD is always included (it is the ground truth) and comes first.
pub fn parse_variants(list: &str) -> Result<Vec<Variant>, String> {
    let mut out = vec![Variant::Lard];
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            for v in Variant::ALL {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            continue;
        }
        let v: Variant = name.parse().map_err(|_| {
            let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
            format!(
                "unknown detector '{name}' (known: {}, all)",
                names.join(", ")
            )
        })?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

impl AccuracyObserver {
    /// Variants in front of FastTrack.
    pub fn new(
        variants: &[Variant],
    ) -> Result<(AccuracyObserver, Rc<RefCell<AccuracyLog>>), String> {
        let set = VariantSet::new(variants, || Box::new(FastTrack::new()))?;
        let logs = variants.iter().map(|v| RaceLog::new(v.name())).collect();
        let mode = if variants
            .iter()
            .any(|v| matches!(v, Variant::AllMem | Variant::Naive))
        {
            AccessMode::All
        } else {
            AccessMode::Tracked
        };
        let sync = variants.iter().any(|v| v.uses_low_level_sync());
        let log = Rc::new(RefCell::new(AccuracyLog { set, logs }));
        Ok((
            AccuracyObserver {
                log: log.clone(),
                mode,
                sync,
                exception: false,
            },
            log,
        ))
    }

    /// Makes LARD's first race a data-race exception.
    pub fn raise_on_race(mut self, yes: bool) -> Self {
        self.exception = yes;
        self
    }
}

impl Observer for AccuracyObserver {
    fn access_mode(&self) -> AccessMode {
        self.mode
    }

    fn wants_sync(&self) -> bool {
        self.sync
    }

    fn event(&mut self, e: &Event) -> Control {
        let mut guard = self.log.borrow_mut();
        let log = &mut *guard;
        let Some(races) = log.set.event(e) else {
            return Control::Continue;
        };
        let EventKind::Access(a) = &e.kind else {
            return Control::Continue;
        };
        let mut lard_racy = false;
        for (i, r) in races.iter().enumerate() {
            if let Some(r) = r {
                log.logs[i].record(a, r);
                lard_racy |= i == 0;
            }
        }
        if lard_racy && self.exception {
            Control::Stop
        } else {
            Control::Continue
        }
    }
}

impl AccuracyLog {
    /// The LARD variant's race log (the ground truth).
    pub fn lard(&self) -> &RaceLog {
        &self.logs[0]
    }

    /// The Table-3 text for stderr.
    pub fn table(&self) -> String {
        self.set.accuracy().to_table()
    }

    /// The report JSON: every variant's counts, Table-3 columns and races.
    pub fn json(&self, m: &Machine, lines: &SourceLines) -> String {
        let rows = self.set.accuracy().rows();
        let entries: Vec<String> = self
            .logs
            .iter()
            .map(|log| {
                let extra =
                    rows.iter()
                        .find(|r| r.name == log.detector)
                        .map_or(String::new(), |r| {
                            format!(
                        "\"false_dre\":{},\"false_pcs\":{},\"missed_dre\":{},\"missed_pcs\":{},",
                        r.false_dre, r.false_pcs, r.missed_dre, r.missed_pcs
                    )
                        });
                log.json_with(m, lines, &extra)
            })
            .collect();
        format!(
            "{{\"ground_truth\":\"lard\",\"detectors\":{{{}}}}}\n",
            entries.join(",")
        )
    }
}
