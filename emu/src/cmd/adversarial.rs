//! `lard run --adversarial`: which locations to monitor (`--adversarial-at`
//! or a first FastTrack pass) and the summary printed after the run.

use crate::binary::elf::ElfFile;
use crate::cmd::report::RunReport;
use crate::linux::loader::PIE_BASE;
use lard_detector_hw::adversarial::{AdversarialStats, Heuristic, Triggers};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Parses `--adversarial-at`: comma-separated data symbols, data addresses
/// and PCs (numbers in decimal or `0x` hex, run-time addresses as reports
/// print them). A number inside a code section is a PC, otherwise a data
/// address (the byte at it).
pub fn parse_targets(file: &ElfFile, spec: &str) -> Result<Triggers, String> {
    let bias = if file.is_pie() { PIE_BASE } else { 0 };
    let in_code = |a: u64| {
        file.code_sections
            .iter()
            .any(|s| a >= s.addr + bias && a < s.addr + bias + s.size as u64)
    };
    let (mut pcs, mut ranges) = (Vec::new(), Vec::new());
    for item in spec.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("--adversarial-at: empty item in `{spec}`"));
        }
        let number = match item.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => item.parse::<u64>().ok(),
        };
        match number {
            Some(n) if in_code(n) => pcs.push(n),
            Some(n) => ranges.push((n, n + 1)),
            None => {
                let sym = file
                    .symbols
                    .iter()
                    .find(|s| s.name == item)
                    .ok_or_else(|| {
                        format!(
                            "--adversarial-at: no symbol `{item}` in {}",
                            file.path.display()
                        )
                    })?;
                if sym.is_func {
                    return Err(format!(
                        "--adversarial-at: `{item}` is a function; give a data symbol, an address or a PC"
                    ));
                }
                let start = sym.addr + bias;
                ranges.push((start, start + sym.size.max(1)));
            }
        }
    }
    Ok(Triggers::new(pcs, ranges))
}

/// The default monitored set: a first, FastTrack pass of the same program
/// with the same scheduling options (`run_args`), its output discarded;
/// every PC of a reported race becomes a trigger.
pub fn first_fasttrack_pass(
    lard: &Path,
    run_args: &[String],
    guest: &Path,
    guest_args: &[String],
) -> Result<Triggers, String> {
    let report = std::env::temp_dir().join(format!(
        "lard-first-pass-{}-{:x}.json",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let status = Command::new(lard)
        .arg("run")
        .args(run_args)
        .arg("--detector")
        .arg("fasttrack")
        .arg("--report-json")
        .arg(&report)
        .arg(guest)
        .args(guest_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run the first FastTrack pass: {e}"))?;
    let json = RunReport::read(&report);
    let _ = std::fs::remove_file(&report);
    let json = json.ok_or_else(|| {
        format!("the first FastTrack pass wrote no report (exit status {status})")
    })?;
    Ok(Triggers::new(json.racy_pcs(), Vec::new()))
}

/// The summary printed on stderr after an adversarial run.
pub fn summary(h: Heuristic, s: &AdversarialStats, triggers: &Triggers) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "== lard adversarial memory ({h}) ==\ntriggers: {} PCs, {} address ranges; monitored locations: {}",
        triggers.pcs().len(),
        triggers.ranges().len(),
        s.locations
    );
    let _ = writeln!(
        o,
        "reads: {} (with a choice: {}, stale values returned: {}), writes recorded: {}, evicted: {}",
        s.reads, s.choices, s.stale, s.writes, s.evicted
    );
    o
}
