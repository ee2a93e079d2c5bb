//! `lard campaign collect`'s top instructions: the instruction profiles
//! (`lard run --hw-profile`, docs/lardish.md, "Instruction profile") of a
//! campaign's runs summed per program, configuration and instruction.

use super::collect::Row;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The counters of a profile row, summed over runs.
pub const COUNTERS: [&str; 7] = [
    "events",
    "hw_checks",
    "sw_checks",
    "md_evictions",
    "rollovers",
    "history_ops",
    "cycles",
];

/// One instruction of one program and configuration, over the runs whose
/// profiles name it.
#[derive(Clone, Debug, PartialEq)]
pub struct TopInstruction {
    /// The program.
    pub program: String,
    /// The configuration ([`Row::configuration`]).
    pub configuration: String,
    /// Run-time address.
    pub pc: u64,
    /// Innermost function, source file and line (as the profile names them).
    pub function: String,
    /// Source file (empty when unknown).
    pub file: String,
    /// Source line (0 when unknown).
    pub line: u64,
    /// Profiled runs of the configuration (the sums are over these).
    pub runs: u64,
    /// [`COUNTERS`], summed.
    pub counters: [i64; COUNTERS.len()],
    /// Software checks by cause, summed.
    pub sw_causes: BTreeMap<String, i64>,
}

/// Every instruction of the profiled runs of `rows`, summed per program,
/// configuration and instruction (PC, function, file, line): programs and
/// configurations in the campaign's order, each costliest first (model
/// cycles, then PC).
pub fn top_instructions(rows: &[Row]) -> Vec<TopInstruction> {
    /// Program and configuration.
    type Key = (String, String);
    /// PC, function, file, line.
    type Place = (u64, String, String, u64);
    let mut order: Vec<Key> = Vec::new();
    let mut runs: BTreeMap<Key, u64> = BTreeMap::new();
    let mut sums: BTreeMap<Key, BTreeMap<Place, TopInstruction>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.profile.is_empty()) {
        let key = (r.program.clone(), r.configuration());
        if !runs.contains_key(&key) {
            order.push(key.clone());
        }
        *runs.entry(key.clone()).or_default() += 1;
        let cell = sums.entry(key.clone()).or_default();
        for i in &r.profile {
            let text = |k: &str| i[k].as_str().unwrap_or_default().to_string();
            let (pc, line) = (
                i["pc"].as_u64().unwrap_or(0),
                i["line"].as_u64().unwrap_or(0),
            );
            let t = cell
                .entry((pc, text("function"), text("file"), line))
                .or_insert_with(|| TopInstruction {
                    program: key.0.clone(),
                    configuration: key.1.clone(),
                    pc,
                    function: text("function"),
                    file: text("file"),
                    line,
                    runs: 0,
                    counters: [0; COUNTERS.len()],
                    sw_causes: BTreeMap::new(),
                });
            for (n, k) in t.counters.iter_mut().zip(COUNTERS) {
                *n += i[k].as_i64().unwrap_or(0);
            }
            for (cause, n) in i["sw_causes"].as_object().into_iter().flatten() {
                *t.sw_causes.entry(cause.clone()).or_default() += n.as_i64().unwrap_or(0);
            }
        }
    }
    let cycles = COUNTERS.len() - 1;
    let mut out = Vec::new();
    for key in order {
        let n = runs[&key];
        let mut v: Vec<TopInstruction> = sums
            .remove(&key)
            .unwrap_or_default()
            .into_values()
            .collect();
        v.iter_mut().for_each(|t| t.runs = n);
        v.sort_by(|a, b| (b.counters[cycles], a.pc).cmp(&(a.counters[cycles], b.pc)));
        out.extend(v);
    }
    out
}

/// `instructions.json`: one object per instruction.
pub fn json(top: &[TopInstruction]) -> Value {
    Value::Array(
        top.iter()
            .map(|t| {
                let mut o = Map::new();
                o.insert("program".into(), json!(t.program));
                o.insert("configuration".into(), json!(t.configuration));
                o.insert("runs".into(), json!(t.runs));
                o.insert("pc".into(), json!(t.pc));
                o.insert("function".into(), json!(t.function));
                o.insert("file".into(), json!(t.file));
                o.insert("line".into(), json!(t.line));
                for (k, n) in COUNTERS.iter().zip(t.counters) {
                    o.insert((*k).into(), json!(n));
                }
                o.insert("sw_causes".into(), json!(t.sw_causes));
                Value::Object(o)
            })
            .collect(),
    )
}

/// The text `lard campaign collect` prints: the `shown` costliest
/// instructions of each program and configuration.
pub fn text(top: &[TopInstruction], shown: usize) -> String {
    let mut s = String::new();
    let mut last: Option<(&str, &str)> = None;
    let mut n = 0;
    for t in top {
        if last != Some((&t.program, &t.configuration)) {
            last = Some((&t.program, &t.configuration));
            n = 0;
            let _ = write!(
                s,
                "\ntop instructions of {}: {} (LARDISH model, sum over {} profiled run{}):\n\
                 {:>14} {:>9} {:>9} {:>9} {:>8} {:>7}  instruction\n",
                t.program,
                t.configuration,
                t.runs,
                if t.runs == 1 { "" } else { "s" },
                "cycles",
                "sw chk",
                "hw chk",
                "md evict",
                "rollover",
                "hist op"
            );
        }
        n += 1;
        if n > shown {
            continue;
        }
        let [_, hw, sw, md, ro, ho, cy] = t.counters;
        let place = if t.line > 0 {
            format!("{} {}:{}", t.function, t.file, t.line)
        } else {
            t.function.clone()
        };
        let _ = writeln!(
            s,
            "{cy:>14} {sw:>9} {hw:>9} {md:>9} {ro:>8} {ho:>7}  {:#x} {place}",
            t.pc
        );
    }
    s
}
