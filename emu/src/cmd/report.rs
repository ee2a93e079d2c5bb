//! What `lard run --report-json FILE` wrote, read back typed: the one
//! reader every subcommand that runs `lard run` children uses (explore,
//! jumble, campaigns and the accuracy commands through them, adversarial
//! memory's first pass). The file's layout is docs/cli.md's; fields a
//! reader does not need are kept as JSON ([`DetectorReport::figures`]).

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// A `--report-json` file: one entry per detector that ran.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RunReport {
    /// The detectors' reports, by detector name.
    #[serde(default)]
    pub detectors: BTreeMap<String, DetectorReport>,
}

/// One detector's report.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct DetectorReport {
    /// The races, one per pair of racing instructions.
    #[serde(default)]
    pub races: Vec<RaceReport>,
    /// Every other field (`dre`, `pcs`, `racy_pcs`, `mode`, a detector's
    /// own figures), as written.
    #[serde(flatten)]
    pub figures: Map<String, Value>,
}

/// One race: the access that found it and the earlier one.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RaceReport {
    /// The later access's instruction.
    #[serde(default)]
    pub pc: u64,
    /// The earlier access's instruction.
    #[serde(default)]
    pub prev_pc: u64,
    /// `symbol+offset` of `pc`.
    #[serde(default)]
    pub symbol: Option<String>,
    /// `symbol+offset` of `prev_pc`.
    #[serde(default)]
    pub prev_symbol: Option<String>,
    /// The data accessed, in words (`counter+0x0`, `heap block …`).
    #[serde(default)]
    pub data: Option<String>,
    /// `write-read`, `read-write` or `write-write`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The later access's call stack, innermost first.
    #[serde(default)]
    pub frames: Vec<Frame>,
    /// The earlier access's call stack, innermost first.
    #[serde(default)]
    pub prev_frames: Vec<Frame>,
}

/// One frame of a race's call stack.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Frame {
    /// The function, if known.
    #[serde(default)]
    pub function: Option<String>,
    /// The source file, if known.
    #[serde(default)]
    pub file: Option<String>,
    /// The source line, if known.
    #[serde(default)]
    pub line: Option<u64>,
}

impl RunReport {
    /// The report in JSON text, if it is one.
    pub fn parse(text: &str) -> Option<RunReport> {
        serde_json::from_str(text).ok()
    }

    /// The report `path` holds, if it holds one (a run that ended before
    /// writing it leaves none).
    pub fn read(path: &Path) -> Option<RunReport> {
        Self::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// The first detector's report (by name).
    pub fn first(&self) -> Option<&DetectorReport> {
        self.detectors.values().next()
    }

    /// The racy dynamic accesses detector `name` counted (0 if it did not
    /// run).
    pub fn dre(&self, name: &str) -> u64 {
        self.detectors
            .get(name)
            .and_then(|d| d.figures.get("dre"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    /// Both instructions of every race of every detector, sorted, once each.
    pub fn racy_pcs(&self) -> Vec<u64> {
        let mut pcs: Vec<u64> = self
            .detectors
            .values()
            .flat_map(|d| &d.races)
            .flat_map(|r| [r.pc, r.prev_pc])
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        pcs
    }

    /// Each detector's figures without its races, as JSON (campaign
    /// results keep them).
    pub fn figures(&self) -> Value {
        Value::Object(
            self.detectors
                .iter()
                .map(|(name, d)| (name.clone(), Value::Object(d.figures.clone())))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{"detectors":{"fasttrack":{"dre":3,"pcs":2,"racy_pcs":[10,20],
        "races":[{"pc":20,"symbol":"w+0x4","prev_pc":10,"prev_symbol":"w+0x0","addr":64,
        "data":"counter+0x0","size":8,"kind":"write-read","thread":"T2","kthread":4001,
        "prev_thread":"T1","unit":null,"prev_unit":null,"count":3,
        "frames":[{"function":"w","file":"/src/a.c","line":7}],"prev_frames":[]}],
        "mode":"binary"}}}"#;

    #[test]
    fn a_report_reads_back_with_its_races_and_figures() {
        let r = RunReport::parse(REPORT).expect("a report");
        assert_eq!(r.dre("fasttrack"), 3);
        assert_eq!(r.dre("canonical"), 0);
        assert_eq!(r.racy_pcs(), vec![10, 20]);
        let race = &r.first().expect("one detector").races[0];
        assert_eq!(race.kind.as_deref(), Some("write-read"));
        assert_eq!(race.frames[0].line, Some(7));
        assert_eq!(race.frames[0].file.as_deref(), Some("/src/a.c"));
        let figures = r.figures();
        assert_eq!(figures["fasttrack"]["pcs"], 2);
        assert_eq!(figures["fasttrack"]["mode"], "binary");
        assert!(figures["fasttrack"].get("races").is_none());
    }

    #[test]
    fn what_is_not_a_report_reads_as_none() {
        assert!(RunReport::parse("").is_none());
        assert!(RunReport::parse("[1, 2]").is_none());
        assert_eq!(RunReport::parse("{}").map(|r| r.detectors.len()), Some(0));
    }
}
