//! `lard campaign collect`: the result files of a campaign directory (of
//! any number of shards) merged into one table of runs (`runs.csv`,
//! `runs.json`), one table of configurations (`summary.csv`,
//! `summary.json`), the figures (`figures`) and a page that shows them
//! (`index.html`).

use crate::cmd::exit;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One run's result, as the tables need it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The program's name.
    pub program: String,
    /// Per axis, the value's label.
    pub params: BTreeMap<String, String>,
    /// `ok`, `timeout`, `killed`, `error`.
    pub outcome: String,
    /// Exit status as a shell shows it.
    pub exit: i64,
    /// Wall-clock seconds.
    pub wall: f64,
    /// CPU seconds (user + system).
    pub cpu: f64,
    /// Peak resident set, KiB.
    pub rss_kb: i64,
    /// Racy dynamic accesses of the verdict's detector.
    pub dre: Option<u64>,
    /// Distinct racy PCs of the verdict's detector.
    pub pcs: Option<u64>,
    /// Ground truth: the program has a race.
    pub racy: Option<bool>,
    /// The result file's key.
    pub key: String,
    /// The run's place in its campaign's order.
    pub index: u64,
    /// How the run behaved against its program's expectation (`None`: the
    /// program has none).
    pub behaviour: Option<Behaviour>,
    /// Per detector of a `--detectors` run that was compared with LARD:
    /// racy dynamic accesses, false and missed ones (the LARD paper's
    /// Table 3).
    pub variants: Vec<VariantCount>,
    /// The rows of the run's instruction profile (`hw_profile = true`;
    /// empty without one).
    pub profile: Vec<Value>,
}

/// One detector variant's Table-3 counts in one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VariantCount {
    /// The variant (`allmem`, `nothread`, …).
    pub name: String,
    /// Racy dynamic accesses.
    pub dre: u64,
    /// Racy here, not under LARD.
    pub false_dre: u64,
    /// Racy under LARD, not here.
    pub missed_dre: u64,
}

/// How a run behaved against its program's expected behaviour: the
/// classes of JUMBLE's Figure 9 (Flanagan & Freund, PLDI 2010, §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// The expected exit status and output.
    Same,
    /// Stopped by `--max-insns`: only slower (JUMBLE's QoS).
    Qos,
    /// Another output.
    Output,
    /// Another exit status.
    Exit,
    /// Killed by a signal, a fault, a deadlock, a timeout, or lard could
    /// not run it.
    Crash,
}

/// `lard run`'s exit status when `--max-insns` stopped the guest.
pub const EXIT_MAX_INSNS: i64 = exit::EXIT_MAX_INSNS as i64;
/// `lard run`'s exit statuses from here up are its own verdicts on the
/// guest (deadlock 122, a LARD fault, …) or a signal (128 + n).
const EXIT_CRASH_FROM: i64 = exit::EXIT_DEADLOCK as i64;

impl Behaviour {
    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Behaviour::Same => "same",
            Behaviour::Qos => "qos",
            Behaviour::Output => "output",
            Behaviour::Exit => "exit",
            Behaviour::Crash => "crash",
        }
    }

    /// The run behaved otherwise than expected.
    pub fn misbehaved(self) -> bool {
        self != Behaviour::Same
    }

    /// Whether the run was erroneous (anything but the same behaviour or
    /// only a slowdown).
    pub fn erroneous(self) -> bool {
        !matches!(self, Behaviour::Same | Behaviour::Qos)
    }
}

/// A result's behaviour against the `expect` it carries (`None` when it
/// carries none, or the run was interrupted).
pub fn behaviour(v: &Value) -> Option<Behaviour> {
    let e = v.get("expect").filter(|e| e.is_object())?;
    match v["outcome"].as_str() {
        Some("interrupted") => return None,
        Some("ok") => {}
        _ => return Some(Behaviour::Crash),
    }
    let exit = v["exit"].as_i64().unwrap_or(-1);
    let want = e["exit"].as_i64();
    if exit == EXIT_MAX_INSNS && want != Some(EXIT_MAX_INSNS) {
        return Some(Behaviour::Qos);
    }
    if want.is_some_and(|w| w != exit) {
        return Some(if exit >= EXIT_CRASH_FROM {
            Behaviour::Crash
        } else {
            Behaviour::Exit
        });
    }
    match e["stdout_fnv"].as_str() {
        Some(h) if v["stdout_fnv"].as_str() != Some(h) => Some(Behaviour::Output),
        _ => Some(Behaviour::Same),
    }
}

impl Row {
    /// The configuration: every parameter but the seed, `k=v, …`
    /// (`default` when there is none).
    pub fn configuration(&self) -> String {
        let s: Vec<String> = self
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != "seed")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if s.is_empty() {
            "default".into()
        } else {
            s.join(", ")
        }
    }

    /// Whether the run reported a race (`None` when it reported nothing).
    pub fn found_race(&self) -> Option<bool> {
        self.dre.map(|d| d > 0)
    }
}

/// A row from a result file, or `None` if it is not one.
pub fn row(v: &Value) -> Option<Row> {
    let params: BTreeMap<String, String> = v["params"]
        .as_object()?
        .iter()
        .map(|(k, x)| (k.clone(), x.as_str().unwrap_or_default().to_string()))
        .collect();
    // The verdict is the run's detector's; with several (`--detectors`),
    // LARD's, the ground truth of the others.
    let detectors = v["detectors"].as_object();
    let d = detectors.and_then(|m| {
        params
            .get("detector")
            .and_then(|name| m.get(name))
            .or_else(|| m.get("lard"))
            .or_else(|| m.values().next())
    });
    Some(Row {
        program: v["program"].as_str()?.to_string(),
        params,
        outcome: v["outcome"].as_str().unwrap_or("error").to_string(),
        exit: v["exit"].as_i64().unwrap_or(-1),
        wall: v["wall_seconds"].as_f64().unwrap_or(0.0),
        cpu: v["cpu_seconds"].as_f64().unwrap_or(0.0),
        rss_kb: v["max_rss_kb"].as_i64().unwrap_or(0),
        dre: d.and_then(|d| d["dre"].as_u64()),
        pcs: d.and_then(|d| d["pcs"].as_u64()),
        racy: v["racy"].as_bool(),
        key: v["key"].as_str().unwrap_or_default().to_string(),
        index: v["index"].as_u64().unwrap_or(u64::MAX),
        behaviour: behaviour(v),
        variants: detectors
            .map(|m| {
                m.iter()
                    .filter(|(_, d)| d.get("false_dre").is_some())
                    .map(|(name, d)| VariantCount {
                        name: name.clone(),
                        dre: d["dre"].as_u64().unwrap_or(0),
                        false_dre: d["false_dre"].as_u64().unwrap_or(0),
                        missed_dre: d["missed_dre"].as_u64().unwrap_or(0),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        profile: v["hw_profile"]["instructions"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    })
}

/// Table-3 totals over `rows`: per variant, in the LARD paper's order.
pub fn variant_totals(rows: &[Row]) -> Vec<VariantCount> {
    let mut out: Vec<VariantCount> = Vec::new();
    for v in rows.iter().flat_map(|r| &r.variants) {
        match out.iter_mut().find(|t| t.name == v.name) {
            Some(t) => {
                t.dre += v.dre;
                t.false_dre += v.false_dre;
                t.missed_dre += v.missed_dre;
            }
            None => out.push(v.clone()),
        }
    }
    // The LARD paper's column order; detectors it does not name after.
    let rank = |name: &str| {
        lard_detector_hw::variants::Variant::EXTENDED
            .iter()
            .position(|v| v.name() == name)
            .unwrap_or(usize::MAX)
    };
    out.sort_by_key(|v| rank(&v.name));
    out
}

/// Every result of `dir`, in the campaign's order (programs as listed,
/// axis values as listed, the last axis fastest).
pub fn load(dir: &Path) -> Result<Vec<Row>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut rows = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let is_result = name.is_some_and(|n| {
            n.len() == 21 && n.ends_with(".json") && n[..16].bytes().all(|b| b.is_ascii_hexdigit())
        });
        if !is_result {
            continue;
        }
        let v: Value = std::fs::read(&p)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| format!("{}: not a result file", p.display()))?;
        rows.push(row(&v).ok_or_else(|| format!("{}: not a result file", p.display()))?);
    }
    rows.sort_by(|a, b| {
        (a.index, &a.program, &a.params, &a.key).cmp(&(b.index, &b.program, &b.params, &b.key))
    });
    Ok(rows)
}

/// One configuration of one program: its runs summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The program.
    pub program: String,
    /// Its configuration (see [`Row::configuration`]).
    pub configuration: String,
    /// Runs.
    pub runs: u64,
    /// Runs whose outcome was not `ok`.
    pub failed: u64,
    /// Mean wall seconds of the runs.
    pub wall: f64,
    /// Mean CPU seconds.
    pub cpu: f64,
    /// Largest peak RSS, KiB.
    pub rss_kb: i64,
    /// Mean distinct racy PCs over runs that reported.
    pub pcs: Option<f64>,
    /// Runs that reported a race.
    pub racy_runs: u64,
    /// Ground truth.
    pub racy: Option<bool>,
    /// Runs that behaved otherwise than their program's expectation
    /// (`None`: no expectation).
    pub misbehaved: Option<u64>,
}

impl Cell {
    /// Percent of runs that misbehaved (JUMBLE's Figure 9 cell).
    pub fn misbehaved_percent(&self) -> Option<f64> {
        self.misbehaved
            .map(|m| m as f64 * 100.0 / self.runs.max(1) as f64)
    }
}

/// Rows grouped by (program, configuration), in first-seen order of
/// programs and configurations.
pub fn cells(rows: &[Row]) -> Vec<Cell> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        let k = (r.program.clone(), r.configuration());
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    order
        .into_iter()
        .map(|k| {
            let g = &groups[&k];
            let n = g.len() as f64;
            let reported: Vec<u64> = g.iter().filter_map(|r| r.pcs).collect();
            Cell {
                program: k.0.clone(),
                configuration: k.1.clone(),
                runs: g.len() as u64,
                failed: g.iter().filter(|r| r.outcome != "ok").count() as u64,
                wall: g.iter().map(|r| r.wall).sum::<f64>() / n,
                cpu: g.iter().map(|r| r.cpu).sum::<f64>() / n,
                rss_kb: g.iter().map(|r| r.rss_kb).max().unwrap_or(0),
                pcs: (!reported.is_empty())
                    .then(|| reported.iter().sum::<u64>() as f64 / reported.len() as f64),
                racy_runs: g.iter().filter(|r| r.found_race() == Some(true)).count() as u64,
                racy: g[0].racy,
                misbehaved: g.iter().any(|r| r.behaviour.is_some()).then(|| {
                    g.iter()
                        .filter(|r| r.behaviour.is_some_and(Behaviour::misbehaved))
                        .count() as u64
                }),
            }
        })
        .collect()
}

/// Precision and recall of one configuration over the programs with
/// ground truth, counted per run.
#[derive(Clone, Debug, PartialEq)]
pub struct Accuracy {
    /// The configuration.
    pub configuration: String,
    /// Runs of racy programs that reported a race.
    pub tp: u64,
    /// Runs of race-free programs that reported one.
    pub fp: u64,
    /// Runs of racy programs that reported none.
    pub fn_: u64,
    /// Runs of race-free programs that reported none.
    pub tn: u64,
}

impl Accuracy {
    /// TP / (TP + FP), 1 when nothing was reported.
    pub fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }

    /// TP / (TP + FN), 1 when no program is racy.
    pub fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Accuracy per configuration, over the runs that completed and whose
/// program has ground truth.
pub fn accuracy(rows: &[Row]) -> Vec<Accuracy> {
    let mut order: Vec<String> = Vec::new();
    let mut acc: BTreeMap<String, Accuracy> = BTreeMap::new();
    for r in rows {
        let (Some(truth), Some(found)) = (r.racy, r.found_race()) else {
            continue;
        };
        if r.outcome != "ok" {
            continue;
        }
        let c = r.configuration();
        let a = acc.entry(c.clone()).or_insert_with(|| {
            order.push(c.clone());
            Accuracy {
                configuration: c,
                tp: 0,
                fp: 0,
                fn_: 0,
                tn: 0,
            }
        });
        match (truth, found) {
            (true, true) => a.tp += 1,
            (false, true) => a.fp += 1,
            (true, false) => a.fn_ += 1,
            (false, false) => a.tn += 1,
        }
    }
    order.into_iter().map(|c| acc[&c].clone()).collect()
}

/// A CSV field.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// `runs.csv`: one line per run, one column per axis.
pub fn runs_csv(rows: &[Row]) -> String {
    let axes: std::collections::BTreeSet<&String> =
        rows.iter().flat_map(|r| r.params.keys()).collect();
    let mut s = String::from("program");
    for a in &axes {
        let _ = write!(s, ",{}", csv(a));
    }
    s.push_str(",outcome,exit,wall_seconds,cpu_seconds,max_rss_kb,dre,pcs,racy,behaviour,key\n");
    for r in rows {
        s.push_str(&csv(&r.program));
        for a in &axes {
            let _ = write!(s, ",{}", csv(r.params.get(*a).map_or("", String::as_str)));
        }
        let _ = writeln!(
            s,
            ",{},{},{:.3},{:.3},{},{},{},{},{},{}",
            r.outcome,
            r.exit,
            r.wall,
            r.cpu,
            r.rss_kb,
            opt(r.dre),
            opt(r.pcs),
            opt(r.racy),
            r.behaviour.map(Behaviour::name).unwrap_or_default(),
            r.key
        );
    }
    s
}

/// `summary.csv`: one line per program and configuration.
pub fn summary_csv(cells: &[Cell]) -> String {
    let mut s = String::from(
        "program,configuration,runs,failed,wall_seconds,cpu_seconds,max_rss_kb,mean_racy_pcs,racy_runs,racy,misbehaved\n",
    );
    for c in cells {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{:.3},{},{},{},{},{}",
            csv(&c.program),
            csv(&c.configuration),
            c.runs,
            c.failed,
            c.wall,
            c.cpu,
            c.rss_kb,
            c.pcs.map(|p| format!("{p:.2}")).unwrap_or_default(),
            c.racy_runs,
            opt(c.racy),
            opt(c.misbehaved)
        );
    }
    s
}

/// `summary.json`: the configurations and the accuracy table.
pub fn summary_json(cells: &[Cell], acc: &[Accuracy], variants: &[VariantCount]) -> Value {
    json!({
        "cells": cells.iter().map(|c| json!({
            "program": c.program, "configuration": c.configuration, "runs": c.runs,
            "failed": c.failed, "wall_seconds": c.wall, "cpu_seconds": c.cpu,
            "max_rss_kb": c.rss_kb, "mean_racy_pcs": c.pcs, "racy_runs": c.racy_runs,
            "racy": c.racy, "misbehaved": c.misbehaved,
        })).collect::<Vec<_>>(),
        "variants": variants.iter().map(|v| json!({
            "variant": v.name, "dre": v.dre, "false_dre": v.false_dre, "missed_dre": v.missed_dre,
        })).collect::<Vec<_>>(),
        "accuracy": acc.iter().map(|a| json!({
            "configuration": a.configuration, "tp": a.tp, "fp": a.fp, "fn": a.fn_,
            "tn": a.tn, "precision": a.precision(), "recall": a.recall(),
        })).collect::<Vec<_>>(),
    })
}

/// `runs.json`: every run.
pub fn runs_json(rows: &[Row]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "program": r.program, "params": r.params, "outcome": r.outcome,
                    "exit": r.exit, "wall_seconds": r.wall, "cpu_seconds": r.cpu,
                    "max_rss_kb": r.rss_kb, "dre": r.dre, "pcs": r.pcs, "racy": r.racy,
                    "behaviour": r.behaviour.map(Behaviour::name), "key": r.key,
                })
            })
            .collect(),
    )
}

/// The text table `lard campaign collect` prints.
pub fn text(cells: &[Cell], acc: &[Accuracy], variants: &[VariantCount]) -> String {
    let w = cells
        .iter()
        .map(|c| c.program.len() + c.configuration.len() + 2)
        .max()
        .unwrap_or(10)
        .max(24);
    let behaviour = cells.iter().any(|c| c.misbehaved.is_some());
    let mut s = format!(
        "{:<w$} {:>5} {:>6} {:>9} {:>9} {:>9} {:>9}{}\n",
        "program: configuration",
        "runs",
        "failed",
        "wall s",
        "cpu s",
        "RSS MiB",
        "racy PCs",
        if behaviour { "  misbehaved %" } else { "" }
    );
    for c in cells {
        let _ = writeln!(
            s,
            "{:<w$} {:>5} {:>6} {:>9.3} {:>9.3} {:>9.1} {:>9}{}",
            format!("{}: {}", c.program, c.configuration),
            c.runs,
            c.failed,
            c.wall,
            c.cpu,
            c.rss_kb as f64 / 1024.0,
            c.pcs
                .map(|p| format!("{p:.1}"))
                .unwrap_or_else(|| "-".into()),
            match (behaviour, c.misbehaved_percent()) {
                (false, _) => String::new(),
                (true, Some(p)) => format!(" {p:>14.0}"),
                (true, None) => format!(" {:>14}", "-"),
            }
        );
    }
    if !variants.is_empty() {
        let _ = writeln!(
            s,
            "\nracy dynamic accesses per detector variant, +false/-missed against LARD (Table 3):"
        );
        for v in variants {
            let _ = writeln!(
                s,
                "  {:<12} {} +{}/-{}",
                v.name, v.dre, v.false_dre, v.missed_dre
            );
        }
    }
    if !acc.is_empty() {
        let _ = writeln!(
            s,
            "\naccuracy against the programs' ground truth (per run):"
        );
        for a in acc {
            let _ = writeln!(
                s,
                "  {}: precision {:.3}, recall {:.3} (TP {}, FP {}, FN {}, TN {})",
                a.configuration,
                a.precision(),
                a.recall(),
                a.tp,
                a.fp,
                a.fn_,
                a.tn
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(program: &str, det: &str, seed: &str, dre: u64, racy: bool) -> Row {
        Row {
            program: program.into(),
            params: [
                ("detector".into(), det.into()),
                ("seed".into(), seed.into()),
            ]
            .into_iter()
            .collect(),
            outcome: "ok".into(),
            exit: 0,
            wall: 1.0,
            cpu: 2.0,
            rss_kb: 1024,
            dre: Some(dre),
            pcs: Some(dre.min(2)),
            racy: Some(racy),
            key: format!("{program}{det}{seed}"),
            index: 0,
            behaviour: None,
            variants: Vec::new(),
            profile: Vec::new(),
        }
    }

    #[test]
    fn configurations_drop_the_seed_and_accuracy_counts_runs() {
        let rows = vec![
            r("a", "fasttrack", "1", 3, true),
            r("a", "fasttrack", "2", 0, true),
            r("b", "fasttrack", "1", 1, false),
            r("b", "fasttrack", "2", 0, false),
        ];
        assert_eq!(rows[0].configuration(), "detector=fasttrack");
        let c = cells(&rows);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].runs, 2);
        assert_eq!(c[0].racy_runs, 1);
        let a = accuracy(&rows);
        assert_eq!((a[0].tp, a[0].fn_, a[0].fp, a[0].tn), (1, 1, 1, 1));
        assert_eq!(a[0].precision(), 0.5);
        let csv = runs_csv(&rows);
        assert!(csv.starts_with("program,detector,seed,outcome"), "{csv}");
        assert_eq!(csv.lines().count(), 5);
    }

    #[test]
    fn behaviour_follows_jumbles_classes() {
        let run = |outcome: &str, exit: i64, out: &str| {
            json!({"outcome": outcome, "exit": exit, "stdout_fnv": out,
                   "expect": {"exit": 0, "stdout_fnv": "aa"}})
        };
        for (v, want) in [
            (run("ok", 0, "aa"), Some(Behaviour::Same)),
            (run("ok", 0, "bb"), Some(Behaviour::Output)),
            (run("ok", 1, "aa"), Some(Behaviour::Exit)),
            (run("ok", 120, "aa"), Some(Behaviour::Qos)),
            (run("ok", 122, "aa"), Some(Behaviour::Crash)),
            (run("ok", 139, "aa"), Some(Behaviour::Crash)),
            (run("timeout", 121, "aa"), Some(Behaviour::Crash)),
            (run("interrupted", 130, "aa"), None),
            (json!({"outcome": "ok", "exit": 1}), None),
        ] {
            assert_eq!(behaviour(&v), want, "{v}");
        }
    }

    #[test]
    fn csv_quotes_commas() {
        assert_eq!(csv("a, b"), "\"a, b\"");
        assert_eq!(csv("x\"y"), "\"x\"\"y\"");
    }
}
