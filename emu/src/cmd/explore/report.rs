//! `lard explore`'s report: text for the terminal, JSON for scripts
//! (docs/cli.md).

use super::classify::Kind;
use super::command::Strategy;
use super::ExploreResult;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

/// Findings of one kind listed in the text report (the JSON has all).
const SHOWN_PER_KIND: usize = 10;

/// `strategy` in words: `pct, depth 2` or `random`.
fn strategy_text(s: Strategy) -> String {
    match s {
        Strategy::Pct { depth } => format!("pct, depth {depth}"),
        Strategy::Random => "random".into(),
    }
}

/// The text report.
pub fn text(r: &ExploreResult, guest: &Path) -> String {
    let mut s = String::new();
    let f = &r.first;
    let _ = writeln!(
        s,
        "== lard explore: {} ({}, quantum {}, {} runs) ==",
        guest.display(),
        strategy_text(r.strategy),
        r.quantum,
        r.runs
    );
    let _ = writeln!(
        s,
        "first run: {}\n  exit {}, {} bytes of output, {} racy PC pair(s), {} instructions, {} scheduling steps",
        f.command,
        f.record.status,
        f.record.stdout.len(),
        f.record.races.as_ref().map_or(0, Vec::len),
        f.instructions,
        f.steps
    );
    let mut shown: std::collections::BTreeMap<Kind, usize> = Default::default();
    for (n, finding) in r.findings.list().iter().enumerate() {
        let o = &finding.observation;
        let count = shown.entry(o.kind).or_default();
        *count += 1;
        if *count > SHOWN_PER_KIND {
            continue;
        }
        let run = if finding.run == 0 {
            "the first run".to_string()
        } else {
            format!("run {} (seed {})", finding.run, finding.seed)
        };
        let _ = writeln!(
            s,
            "finding {}: {} in {run}, {} run(s)\n  {}\n  replay: {}",
            n + 1,
            o.kind.name(),
            finding.runs,
            o.detail,
            finding.command
        );
    }
    for (k, n) in &shown {
        if *n > SHOWN_PER_KIND {
            let _ = writeln!(
                s,
                "({} more {} findings: see --report-json)",
                n - SHOWN_PER_KIND,
                k.name()
            );
        }
    }
    let counts: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|k| r.counts.get(k).map(|n| format!("{} {n}", k.name())))
        .collect();
    let _ = writeln!(
        s,
        "runs: {} of {}{}, {} without new findings{}",
        r.completed,
        r.runs,
        if r.interrupted { " (interrupted)" } else { "" },
        r.clean,
        if counts.is_empty() {
            String::new()
        } else {
            format!(", {}", counts.join(", "))
        }
    );
    let _ = writeln!(
        s,
        "races: {} distinct racy PC pair(s) in all runs, {} in the first run",
        r.races,
        f.record.races.as_ref().map_or(0, Vec::len)
    );
    let first_run_findings = r.findings.list().iter().any(|x| x.run == 0);
    let n = r.findings.list().len();
    match r.first_finding {
        _ if n == 0 => {
            let _ = writeln!(s, "no findings");
        }
        _ if first_run_findings => {
            let _ = writeln!(s, "first finding in the first run; {n} distinct finding(s)");
        }
        Some(i) => {
            let _ = writeln!(s, "first finding in run {i}; {n} distinct finding(s)");
        }
        None => {
            let _ = writeln!(s, "{n} distinct finding(s)");
        }
    }
    s
}

/// The JSON report (docs/cli.md).
pub fn json(r: &ExploreResult, guest: &Path, args: &[String]) -> String {
    let f = &r.first;
    let findings: Vec<Value> = r
        .findings
        .list()
        .iter()
        .map(|x| {
            json!({
                "kind": x.observation.kind.name(),
                "detail": x.observation.detail,
                "run": x.run,
                "seed": x.seed,
                "runs": x.runs,
                "command": x.command,
            })
        })
        .collect();
    let counts: serde_json::Map<String, Value> = Kind::ALL
        .iter()
        .map(|k| {
            (
                k.name().to_string(),
                json!(r.counts.get(k).copied().unwrap_or(0)),
            )
        })
        .collect();
    let (depth, steps) = match r.strategy {
        Strategy::Pct { depth } => (json!(depth), json!(r.steps)),
        Strategy::Random => (Value::Null, Value::Null),
    };
    let v = json!({
        "guest": guest.to_string_lossy(),
        "args": args,
        "strategy": r.strategy.name(),
        "depth": depth,
        "pct_steps": steps,
        "quantum": r.quantum,
        "max_insns": r.max_insns,
        "first_run": {
            "command": f.command,
            "exit": f.record.status,
            "stdout_bytes": f.record.stdout.len(),
            "races": f.record.races.as_ref().map_or(0, Vec::len),
            "instructions": f.instructions,
            "steps": f.steps,
            "wall_seconds": f.seconds,
        },
        "runs": r.runs,
        "completed": r.completed,
        "clean": r.clean,
        "counts": counts,
        "first_finding": r.first_finding,
        "races": r.races,
        "findings": findings,
        "interrupted": r.interrupted,
        "wall_seconds": r.seconds,
    });
    format!("{v}\n")
}
