//! Several detector variants on one execution: `lard run --detectors …`.
//!
//! Every variant (docs/accuracy.md) sees the same event stream; per access,
//! their verdicts are compared with LARD's, giving the LARD paper's Table 3
//! columns (DRE, PCs, false and missed DREs/PCs). The emulator delivers every
//! data access (AccessMode::All) when a variant checks untracked accesses,
//! and low-level synchronization when a variant uses it.

use crate::machine::Machine;
use crate::observe::detect::RaceLog;
use crate::observe::observer::{AccessBatch, AccessMode, Control, Observer};
use lard_detector_hw::event::{Access, Event, EventKind};
use lard_detector_hw::variants::{Accuracy, Variant, VariantSet};
use lard_detector_hw::FastTrack;
use std::cell::RefCell;
use std::rc::Rc;

/// What a multi-detector run found.
pub struct AccuracyLog {
    /// The variants, while they run on this thread.
    set: Option<VariantSet>,
    /// The Table-3 aggregator, once the run has finished on another thread.
    table: Option<Accuracy>,
    /// One race log per variant, in the same order.
    pub logs: Vec<RaceLog>,
}

/// An observer that runs several variants side by side.
///
/// As built, the variants run on a second host thread: events go over a
/// bounded crossbeam channel in batches, in emulation order, to one consumer
/// that owns the detectors, so the results are exactly those of a sequential
/// run while emulation and detection overlap. [`AccuracyObserver::inline`]
/// runs them on the emulation thread instead: `lard run` does so unless
/// `--detector-thread` (the handoff cost ≈ 25% more CPU on pigz and bought
/// no wall time on 2 shared cores, docs/performance.md), and always with
/// `--on-race exception` (the LARD verdict is needed before the access
/// executes).
pub struct AccuracyObserver {
    log: Rc<RefCell<AccuracyLog>>,
    mode: AccessMode,
    sync: bool,
    objects: bool,
    exception: bool,
    /// The access the last data-race exception stopped before (checked
    /// already, not again when its instruction executes after all).
    raised: Option<Access>,
    variants: Vec<Variant>,
    pipeline: Option<Pipeline>,
}

/// Events batched per channel message.
const BATCH: usize = 8192;

struct Pipeline {
    batch: Vec<Event>,
    tx: crossbeam_channel::Sender<Vec<Event>>,
    worker: std::thread::JoinHandle<(Option<Accuracy>, Vec<RaceLog>)>,
}

impl Pipeline {
    /// Queues one event for the detector thread.
    #[inline]
    fn push(&mut self, e: Event) {
        self.batch.push(e);
        if self.batch.len() == BATCH {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
            // The worker only stops when the sender is dropped.
            let _ = self.tx.send(full);
        }
    }
}

/// Hands `e` to every variant and logs their races; true if LARD's (the
/// first variant's) race is of a new racy PC pair.
fn consume(log: &mut AccuracyLog, e: &Event) -> bool {
    let Some(set) = log.set.as_mut() else {
        return false;
    };
    let Some(races) = set.event(e) else {
        return false;
    };
    let EventKind::Access(a) = &e.kind else {
        return false;
    };
    let mut lard_racy = false;
    for (i, r) in races.iter().enumerate() {
        if let Some(r) = r {
            let new = log.logs[i].record(a, r);
            lard_racy |= i == 0 && new;
        }
    }
    lard_racy
}

fn new_log(variants: &[Variant]) -> Result<AccuracyLog, String> {
    let set = VariantSet::with_fasttrack(variants, || FastTrack::new().without_work())?;
    let logs = variants.iter().map(|v| RaceLog::new(v.name())).collect();
    Ok(AccuracyLog {
        set: Some(set),
        table: None,
        logs,
    })
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
            let names: Vec<&str> = Variant::EXTENDED.iter().map(|v| v.name()).collect();
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
        let mode = if variants
            .iter()
            .any(|v| matches!(v, Variant::AllMem | Variant::Naive))
        {
            AccessMode::All
        } else {
            AccessMode::Tracked
        };
        let sync = variants.iter().any(|v| v.uses_low_level_sync());
        let log = Rc::new(RefCell::new(new_log(variants)?));
        let mut obs = AccuracyObserver {
            log: log.clone(),
            mode,
            sync,
            objects: variants.contains(&Variant::Object),
            exception: false,
            raised: None,
            variants: variants.to_vec(),
            pipeline: None,
        };
        obs.start_pipeline();
        Ok((obs, log))
    }

    fn start_pipeline(&mut self) {
        let (tx, rx) = crossbeam_channel::bounded::<Vec<Event>>(16);
        let variants = self.variants.clone();
        // The detectors are built and dropped on the worker; only plain
        // results (the table and the race logs) come back.
        let worker = std::thread::spawn(move || {
            let mut log = new_log(&variants).expect("variants were validated");
            for batch in rx {
                for e in &batch {
                    consume(&mut log, e);
                }
            }
            let table = log.set.take().map(|s| s.accuracy().clone());
            (table, log.logs)
        });
        self.pipeline = Some(Pipeline {
            batch: Vec::with_capacity(BATCH),
            tx,
            worker,
        });
    }

    /// Makes LARD's first race of each racy PC pair a data-race exception
    /// (the first ends an undebugged run; the variants then run
    /// inline, on the emulation thread).
    pub fn raise_on_race(mut self, yes: bool) -> Self {
        self.exception = yes;
        self.inline(yes)
    }

    /// Runs the variants on the emulation thread (no detector thread).
    pub fn inline(mut self, yes: bool) -> Self {
        if yes {
            if let Some(p) = self.pipeline.take() {
                drop(p.tx);
                let _ = p.worker.join();
            }
        }
        self
    }
}

impl Observer for AccuracyObserver {
    /// The variants on a detector thread cannot follow a fork: their
    /// state lives on a thread the child would not have.
    fn prepare_fork(&mut self) -> Result<(), String> {
        match self.pipeline {
            Some(_) => Err("--detector-thread cannot follow a fork (run without it)".into()),
            None => Ok(()),
        }
    }

    fn access_mode(&self) -> AccessMode {
        self.mode
    }

    fn wants_sync(&self) -> bool {
        self.sync
    }

    fn wants_objects(&self) -> bool {
        self.objects
    }

    /// Only a data-race exception stops before an access; without one the
    /// variants may take every-access runs in batches (patch 0008).
    fn stops_on_access(&self) -> bool {
        self.exception
    }

    /// As one [`Observer::event`] per record, with the log borrowed once
    /// per batch when the variants run inline (never with an exception:
    /// then the emulator does not batch, see `stops_on_access`).
    fn accesses(&mut self, batch: &mut AccessBatch) {
        let origin = batch.origin;
        let event = |r: &crate::observe::observer::AccessRecord| Event {
            pc: r.pc,
            origin,
            kind: EventKind::Access(r.access(origin)),
        };
        if let Some(p) = &mut self.pipeline {
            batch.for_each(|r| p.push(event(r)));
            return;
        }
        let mut log = self.log.borrow_mut();
        batch.for_each(|r| {
            consume(&mut log, &event(r));
        });
    }

    fn event(&mut self, e: &Event) -> Control {
        if let Some(p) = &mut self.pipeline {
            p.push(*e);
            return Control::Continue;
        }
        if let EventKind::Access(a) = &e.kind {
            if self.raised.as_ref() == Some(a) {
                self.raised = None;
                return Control::Continue;
            }
        }
        let lard_racy = consume(&mut self.log.borrow_mut(), e);
        if lard_racy && self.exception {
            if let EventKind::Access(a) = &e.kind {
                self.raised = Some(*a);
            }
            Control::Stop
        } else {
            Control::Continue
        }
    }

    fn finish(&mut self) {
        if let Some(mut p) = self.pipeline.take() {
            if !p.batch.is_empty() {
                let _ = p.tx.send(std::mem::take(&mut p.batch));
            }
            drop(p.tx);
            match p.worker.join() {
                Ok((table, logs)) => {
                    let mut log = self.log.borrow_mut();
                    log.set = None;
                    log.table = table;
                    log.logs = logs;
                }
                Err(_) => {
                    log::error!("the detector thread panicked; the accuracy report is incomplete")
                }
            }
        }
    }
}

impl AccuracyLog {
    /// The LARD variant's race log (the ground truth).
    pub fn lard(&self) -> &RaceLog {
        &self.logs[0]
    }

    /// The Table-3 aggregator.
    pub fn accuracy(&self) -> Option<&Accuracy> {
        self.set
            .as_ref()
            .map(VariantSet::accuracy)
            .or(self.table.as_ref())
    }

    /// The Table-3 text for stderr.
    pub fn table(&self) -> String {
        self.accuracy().map_or(String::new(), Accuracy::to_table)
    }

    /// The report JSON: every variant's counts, Table-3 columns and races.
    pub fn json(&self, m: &Machine) -> String {
        let rows = self.accuracy().map_or(Vec::new(), Accuracy::rows);
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
                log.json_with(m, &extra)
            })
            .collect();
        format!(
            "{{\"ground_truth\":\"lard\",\"detectors\":{{{}}}}}\n",
            entries.join(",")
        )
    }
}
