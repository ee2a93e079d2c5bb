//! The accuracy table (LARD Table 3): per-access verdicts of LARD (ground
//! truth) and of each variant over one execution, aggregated into DRE, PCs,
//! false and missed counts; JSON and text output without dependencies.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Variant, VariantDetector};
use crate::detector::Detector;
use crate::event::{Event, EventKind};
use crate::race::Race;

/// Counts for one detector, as accumulated.
#[derive(Clone, Debug, Default)]
struct Counts {
    dre: u64,
    pcs: BTreeSet<u64>,
    false_dre: u64,
    missed_dre: u64,
    false_dre_pcs: BTreeSet<u64>,
    missed_dre_pcs: BTreeSet<u64>,
    first_false: Option<u64>,
    first_missed: Option<u64>,
}

/// One detector's row of the accuracy table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccuracyRow {
    /// Detector name (a variant's CLI name).
    pub name: String,
    /// Racy dynamic accesses (DRE).
    pub dre: u64,
    /// Distinct PCs of racy accesses.
    pub pcs: u64,
    /// Accesses racy under this detector but not under the ground truth.
    pub false_dre: u64,
    /// PCs racy under this detector and never racy under the ground truth.
    pub false_pcs: u64,
    /// Accesses racy under the ground truth but not under this detector.
    pub missed_dre: u64,
    /// PCs racy under the ground truth and never racy under this detector.
    pub missed_pcs: u64,
    /// Distinct PCs of false DREs (the paper's "F PC").
    pub false_dre_pcs: u64,
    /// Distinct PCs of missed DREs (the paper's "M PC").
    pub missed_dre_pcs: u64,
    /// Event index of the first false DRE.
    pub first_false_event: Option<u64>,
    /// Event index of the first missed DRE.
    pub first_missed_event: Option<u64>,
}

/// Aggregates per-access verdicts of several detectors against a ground
/// truth; see docs/accuracy.md for the columns.
#[derive(Clone, Debug)]
pub struct Accuracy {
    names: Vec<String>,
    truth: usize,
    counts: Vec<Counts>,
    accesses: u64,
}

impl Accuracy {
    /// One column per variant, in the given order; [`Variant::Lard`] is the
    /// ground truth and must appear exactly once (no variant may repeat).
    pub fn new(variants: &[Variant]) -> Result<Accuracy, String> {
        for (i, v) in variants.iter().enumerate() {
            if variants[..i].contains(v) {
                return Err(format!("detector variant `{v}` listed twice"));
            }
        }
        let truth = variants
            .iter()
            .position(|v| *v == Variant::Lard)
            .ok_or("the accuracy table needs `lard` (the ground truth)")?;
        let names = variants.iter().map(|v| v.name().to_string()).collect();
        Ok(Accuracy::with_names(names, truth))
    }

    /// Arbitrary detector names; `truth` indexes the ground truth.
    ///
    /// # Panics
    ///
    /// If `truth` is out of range.
    pub fn with_names(names: Vec<String>, truth: usize) -> Accuracy {
        assert!(truth < names.len(), "ground truth index out of range");
        let counts = vec![Counts::default(); names.len()];
        Accuracy {
            names,
            truth,
            counts,
            accesses: 0,
        }
    }

    /// Number of detectors.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True if there are no detectors (never: the ground truth is one).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Dynamic accesses observed.
    pub fn accesses(&self) -> u64 {
        self.accesses
    }

    /// Records one dynamic access (event number `event_index`, instruction
    /// `pc`): `verdicts[i]` is true if detector `i` found it racy. Missing
    /// verdicts count as not racy.
    pub fn observe(&mut self, event_index: u64, pc: u64, verdicts: &[bool]) {
        self.accesses += 1;
        if !verdicts.contains(&true) {
            // Nobody found a race: no column changes.
            return;
        }
        let verdict = |i: usize| verdicts.get(i).copied().unwrap_or(false);
        let truth = verdict(self.truth);
        for (i, c) in self.counts.iter_mut().enumerate() {
            let racy = verdict(i);
            if racy {
                c.dre += 1;
                c.pcs.insert(pc);
            }
            if racy && !truth {
                c.false_dre += 1;
                c.false_dre_pcs.insert(pc);
                c.first_false.get_or_insert(event_index);
            }
            if truth && !racy {
                c.missed_dre += 1;
                c.missed_dre_pcs.insert(pc);
                c.first_missed.get_or_insert(event_index);
            }
        }
    }

    /// The table rows, in detector order.
    pub fn rows(&self) -> Vec<AccuracyRow> {
        let truth_pcs = &self.counts[self.truth].pcs;
        self.names
            .iter()
            .zip(&self.counts)
            .map(|(name, c)| AccuracyRow {
                name: name.clone(),
                dre: c.dre,
                pcs: c.pcs.len() as u64,
                false_dre: c.false_dre,
                false_pcs: c.pcs.difference(truth_pcs).count() as u64,
                missed_dre: c.missed_dre,
                missed_pcs: truth_pcs.difference(&c.pcs).count() as u64,
                false_dre_pcs: c.false_dre_pcs.len() as u64,
                missed_dre_pcs: c.missed_dre_pcs.len() as u64,
                first_false_event: c.first_false,
                first_missed_event: c.first_missed,
            })
            .collect()
    }

    /// The row of detector `name`.
    pub fn row(&self, name: &str) -> Option<AccuracyRow> {
        self.rows().into_iter().find(|r| r.name == name)
    }

    /// The JSON object described in docs/accuracy.md.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        s.push_str("{\n");
        let _ = writeln!(
            s,
            "  \"ground_truth\": {},",
            json_str(&self.names[self.truth])
        );
        let _ = writeln!(s, "  \"accesses\": {},", self.accesses);
        s.push_str("  \"detectors\": {");
        let rows = self.rows();
        for (i, r) in rows.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            let opt = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
            let _ = write!(
                s,
                "    {}: {{\"dre\": {}, \"pcs\": {}, \"false_dre\": {}, \"false_pcs\": {}, \
                 \"missed_dre\": {}, \"missed_pcs\": {}, \"false_dre_pcs\": {}, \
                 \"missed_dre_pcs\": {}, \"first_false_event\": {}, \"first_missed_event\": {}}}",
                json_str(&r.name),
                r.dre,
                r.pcs,
                r.false_dre,
                r.false_pcs,
                r.missed_dre,
                r.missed_pcs,
                r.false_dre_pcs,
                r.missed_dre_pcs,
                opt(r.first_false_event),
                opt(r.first_missed_event),
            );
        }
        s.push_str("\n  }\n}\n");
        s
    }

    /// A plain-text table with Table 3's columns (plus the PC variants).
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<10} {:>10} {:>6} {:>10} {:>6} {:>10} {:>6} {:>8} {:>8}",
            "detector", "DRE", "PCs", "F-DRE", "F-PC", "M-DRE", "M-PC", "F-DRE-PC", "M-DRE-PC"
        );
        for r in self.rows() {
            let _ = writeln!(
                s,
                "{:<10} {:>10} {:>6} {:>10} {:>6} {:>10} {:>6} {:>8} {:>8}",
                r.name,
                r.dre,
                r.pcs,
                r.false_dre,
                r.false_pcs,
                r.missed_dre,
                r.missed_pcs,
                r.false_dre_pcs,
                r.missed_dre_pcs
            );
        }
        let _ = writeln!(
            s,
            "({} dynamic accesses; ground truth: {})",
            self.accesses, self.names[self.truth]
        );
        s
    }
}

/// A JSON string literal.
fn json_str(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// Several variants run side by side over one event stream, feeding an
/// [`Accuracy`] table: what `lard run` needs for the accuracy analysis.
pub struct VariantSet {
    detectors: Vec<VariantDetector>,
    accuracy: Accuracy,
    races: Vec<Option<Race>>,
    verdicts: Vec<bool>,
    index: u64,
}

impl VariantSet {
    /// The `variants` (which must include [`Variant::Lard`]), each in front
    /// of a fresh inner detector from `make_inner` ([`Variant::Object`]: a
    /// fresh object race detector).
    pub fn new(
        variants: &[Variant],
        mut make_inner: impl FnMut() -> Box<dyn Detector>,
    ) -> Result<VariantSet, String> {
        VariantSet::build(variants, |v| VariantDetector::new(v, make_inner()))
    }

    /// The `variants` (which must include [`Variant::Lard`]), each in front
    /// of a fresh FastTrack from `make_inner`, called directly
    /// ([`VariantDetector::with_fasttrack`]: the same results as
    /// [`VariantSet::new`] with these detectors, cheaper per access;
    /// [`Variant::Object`]: a fresh object race detector).
    pub fn with_fasttrack(
        variants: &[Variant],
        mut make_inner: impl FnMut() -> crate::FastTrack,
    ) -> Result<VariantSet, String> {
        VariantSet::build(variants, |v| {
            VariantDetector::with_fasttrack(v, make_inner())
        })
    }

    /// The set of `variants`, each (but Object) made by `make`.
    fn build(
        variants: &[Variant],
        mut make: impl FnMut(Variant) -> VariantDetector,
    ) -> Result<VariantSet, String> {
        let accuracy = Accuracy::new(variants)?;
        let detectors: Vec<VariantDetector> = variants
            .iter()
            .map(|v| match v {
                Variant::Object => {
                    VariantDetector::new(*v, Box::new(crate::object::ObjectDetector::new()))
                }
                _ => make(*v),
            })
            .collect();
        let n = detectors.len();
        Ok(VariantSet {
            detectors,
            accuracy,
            races: vec![None; n],
            verdicts: vec![false; n],
            index: 0,
        })
    }

    /// Every variant in front of FastTrack.
    pub fn all_fasttrack() -> VariantSet {
        VariantSet::with_fasttrack(&Variant::ALL, crate::FastTrack::new)
            .expect("Variant::ALL includes lard once")
    }

    /// Feeds one event to every variant. For an access, returns each
    /// variant's report (same order as the variants) after recording the
    /// verdicts; events are numbered from 0 in the order given.
    pub fn event(&mut self, e: &Event) -> Option<&[Option<Race>]> {
        let index = self.index;
        self.index += 1;
        let EventKind::Access(a) = &e.kind else {
            // Only accesses have reports (the last access's stay stored but
            // are only returned with the access).
            for d in &mut self.detectors {
                d.event(e);
            }
            return None;
        };
        for ((d, r), v) in self
            .detectors
            .iter_mut()
            .zip(&mut self.races)
            .zip(&mut self.verdicts)
        {
            // Most accesses have no report: test the returned value's tag
            // and copy the (large) report only when there is one (a plain
            // `*r = ...` copied all 88 bytes of every returned value).
            match d.access(a) {
                None => *r = None,
                race => *r = race,
            }
            *v = r.is_some();
        }
        self.accuracy.observe(index, a.pc, &self.verdicts);
        Some(&self.races)
    }

    /// The variants, in order.
    pub fn variants(&self) -> Vec<Variant> {
        self.detectors.iter().map(|d| d.variant()).collect()
    }

    /// Accesses the clock-owning variants skipped as exact repeats within
    /// an epoch (module `same_epoch`), summed over the variants.
    pub fn repeats_skipped(&self) -> u64 {
        self.detectors
            .iter()
            .filter_map(VariantDetector::combined)
            .map(super::Combined::repeats_skipped)
            .sum()
    }

    /// The table so far.
    pub fn accuracy(&self) -> &Accuracy {
        &self.accuracy
    }
}
