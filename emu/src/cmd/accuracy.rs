//! `lard accuracy`: every guest of the manifest (all libcs, every minivm
//! collector and threading configuration) under all detector variants, as a
//! Table-3 matrix, with LARD checked against the manifest's ground truth.
//!
//! The runs are a campaign (docs/campaigns.md): each a child `lard run
//! --detectors all,object` process, several at a time, so a guest's output
//! is captured and checked and one guest cannot take the others down. The object race detector's column is shown beside
//! LARD's; its verdict is checked against the manifest's `object_expect`
//! where the manifest gives one.

use crate::binary::dwarf::lines::SourceLines;
use crate::cmd::campaign::spec::Campaign;
use crate::cmd::manifest::GuestRun;
use lard_detector_hw::variants::Variant;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status when the manifest or the guests' build is unusable.
use crate::cmd::exit::EXIT_BAD_INPUT;

/// Table-3 counts of one detector in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// Racy dynamic accesses.
    pub dre: u64,
    /// False DREs (racy here, not under LARD).
    pub false_dre: u64,
    /// Missed DREs (racy under LARD, not here).
    pub missed_dre: u64,
}

/// One run's results.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The run.
    pub label: String,
    /// One cell per variant, in `Variant::EXTENDED` order.
    pub cells: Vec<Cell>,
    /// `Ok` when output, status and LARD's racy lines match the manifest.
    pub verdict: Result<(), String>,
}

/// The campaign of `lard accuracy`: every run of the manifest, as built in
/// `build`, under `lard run --detectors all,object`; its results go to
/// `build/accuracy.results` (docs/campaigns.md).
pub fn campaign(runs: &[GuestRun], build: &Path) -> Campaign {
    Campaign {
        name: "accuracy".into(),
        dir: build.to_path_buf(),
        timeout: 600.0,
        env: Vec::new(),
        options: vec!["--detectors".into(), "all,object".into()],
        programs: runs.iter().map(GuestRun::campaign_program).collect(),
        axes: Vec::new(),
        hw_profile: false,
    }
}

/// Judges one manifest run from its campaign result (`None`: no result).
pub fn judge(r: &GuestRun, result: Option<&Value>) -> RunResult {
    let fail = |why: String| RunResult {
        label: r.label.clone(),
        cells: vec![Cell::default(); Variant::EXTENDED.len()],
        verdict: Err(why),
    };
    let Some(v) = result else {
        return fail("no result".into());
    };
    let detectors = &v["detectors"];
    if detectors.as_object().is_none_or(|m| m.is_empty()) {
        let last = v["lard_messages"]
            .as_array()
            .and_then(|a| a.last())
            .and_then(Value::as_str)
            .unwrap_or("");
        return fail(format!("no report ({}): {last}", v["outcome"]));
    }
    let n = |d: &Value, k: &str| d[k].as_u64().unwrap_or(0);
    let cells: Vec<Cell> = Variant::EXTENDED
        .iter()
        .map(|var| {
            let d = &detectors[var.name()];
            Cell {
                dre: n(d, "dre"),
                false_dre: n(d, "false_dre"),
                missed_dre: n(d, "missed_dre"),
            }
        })
        .collect();
    let stdout = v["stdout"].as_str().unwrap_or_default();
    let status = v["exit"].as_i64().unwrap_or(-1);
    let verdict = if stdout != r.stdout {
        Err(format!("stdout {stdout:?}, expected {:?}", r.stdout))
    } else if status != i64::from(r.exit) {
        Err(format!("exit status {status}, expected {}", r.exit))
    } else {
        let pcs: Vec<u64> = detectors["lard"]["racy_pcs"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let object_dre = cells.last().map_or(0, |c| c.dre);
        source_lines(&r.bin, &r.source, &pcs)
            .and_then(|got| r.check_lines(&got))
            .and_then(|()| match r.object_racy {
                Some(racy) if racy != (object_dre > 0) => Err(format!(
                    "object races: {object_dre}, expected {}",
                    if racy { "some" } else { "none" }
                )),
                _ => Ok(()),
            })
    };
    RunResult {
        label: r.label.clone(),
        cells,
        verdict,
    }
}

/// The guest-source lines of racy PCs (innermost inline frame in `source`).
fn source_lines(bin: &Path, source: &str, pcs: &[u64]) -> Result<BTreeSet<i64>, String> {
    let file = Path::new(source)
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let elf = crate::binary::elf::ElfFile::open(bin).map_err(|e| e.to_string())?;
    let bias = if elf.is_pie() {
        crate::linux::loader::PIE_BASE
    } else {
        0
    };
    let lines = SourceLines::open(bin, bias);
    let mut set = BTreeSet::new();
    for &pc in pcs {
        let frame = lines.frames(pc).into_iter().find(|f| {
            f.file.as_deref().is_some_and(|p| {
                Path::new(p)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == file)
            })
        });
        match frame.and_then(|f| f.line) {
            Some(l) => {
                set.insert(i64::from(l));
            }
            None => return Err(format!("racy pc {pc:#x} has no line in {file}")),
        }
    }
    Ok(set)
}

/// The matrix as text: one row per run, `DRE +false/-missed` per variant.
pub fn matrix(results: &[RunResult]) -> String {
    let mut s = String::new();
    let w = results
        .iter()
        .map(|r| r.label.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = write!(s, "{:w$}", "guest");
    for v in Variant::EXTENDED {
        let _ = write!(s, " {:>16}", v.name());
    }
    let _ = writeln!(s, "  vs ground truth");
    let mut total = vec![Cell::default(); Variant::EXTENDED.len()];
    for r in results {
        let _ = write!(s, "{:w$}", r.label);
        for (i, c) in r.cells.iter().enumerate() {
            let _ = write!(
                s,
                " {:>16}",
                format!("{} +{}/-{}", c.dre, c.false_dre, c.missed_dre)
            );
            total[i].dre += c.dre;
            total[i].false_dre += c.false_dre;
            total[i].missed_dre += c.missed_dre;
        }
        let _ = writeln!(
            s,
            "  {}",
            match &r.verdict {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("MISMATCH: {e}"),
            }
        );
    }
    let _ = write!(s, "{:w$}", "total");
    for c in &total {
        let _ = write!(
            s,
            " {:>16}",
            format!("{} +{}/-{}", c.dre, c.false_dre, c.missed_dre)
        );
    }
    let _ = writeln!(s, "\n(cell: racy dynamic accesses +false/-missed against LARD; LARD's own column is checked against the manifest, and so is the object race detector's verdict (object races, one per object; it answers another question, docs/detectors.md))");
    s
}

/// The paper's expectation: which variants must show false (+) and missed
/// (-) races somewhere. Returns the variants that never did.
pub fn unmet_expectations(results: &[RunResult]) -> Vec<String> {
    let expect: [(Variant, bool, bool); 6] = [
        (Variant::AllMem, true, false),
        (Variant::AllSync, false, true),
        (Variant::NoClear, true, false),
        (Variant::NoCopy, false, true),
        (Variant::NoThread, false, true),
        (Variant::Naive, true, true),
    ];
    let mut out = Vec::new();
    for (v, want_false, want_missed) in expect {
        let i = Variant::ALL
            .iter()
            .position(|x| *x == v)
            .expect("variant listed");
        let f = results.iter().any(|r| r.cells[i].false_dre > 0);
        let m = results.iter().any(|r| r.cells[i].missed_dre > 0);
        if want_false && !f {
            out.push(format!("{} shows no false race", v.name()));
        }
        if want_missed && !m {
            out.push(format!("{} shows no missed race", v.name()));
        }
    }
    out
}

/// `lard accuracy`'s options.
#[derive(clap::Args)]
pub struct AccuracyArgs {
    /// The guests directory (with manifest.toml and its Makefile).
    #[arg(long, default_value = "guests")]
    guests: PathBuf,
    /// Where to build the guests.
    #[arg(long, default_value = "target/accuracy-guests")]
    build: PathBuf,
    /// Only runs whose label contains this text (e.g. `glibc/`, `minivm`).
    #[arg(long)]
    only: Option<String>,
    /// Runs at a time (default: the host's cores).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
}

/// `lard accuracy`: builds the guests, runs them as a campaign
/// (`BUILD/accuracy.results`, made afresh) and prints the matrix; exit
/// status 0 when LARD matches the ground truth everywhere.
pub fn run(a: AccuracyArgs) -> ExitCode {
    let (guests, only) = (&a.guests, a.only.as_deref());
    let manifest = guests.join("manifest.toml");
    if !manifest.is_file() {
        eprintln!(
            "lard: {}: no manifest (use --guests DIR)",
            manifest.display()
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let build = std::path::absolute(&a.build).unwrap_or_else(|_| a.build.clone());
    eprintln!("lard: building the guests into {}", build.display());
    let made = std::process::Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(guests)
        .arg(format!("BUILD={}", build.display()))
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprint!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            eprintln!(
                "lard: building the guests failed (make -C {})",
                guests.display()
            );
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        Err(e) => {
            eprintln!("lard: cannot run make: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    }
    let runs = match crate::cmd::manifest::read(&manifest, &build) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let runs: Vec<_> = runs
        .into_iter()
        .filter(|r| only.is_none_or(|o| r.label.contains(o)))
        .collect();
    let camp = campaign(&runs, &build);
    let results = match crate::cmd::campaign::make_afresh(&camp, &build, a.jobs) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let results: Vec<RunResult> = runs
        .iter()
        .zip(&results)
        .map(|(r, (_, v))| judge(r, v.as_ref()))
        .collect();
    print!("{}", matrix(&results));
    let mismatches = results.iter().filter(|r| r.verdict.is_err()).count();
    let unmet = if only.is_none() {
        unmet_expectations(&results)
    } else {
        Vec::new()
    };
    for u in &unmet {
        println!("expectation not met: {u}");
    }
    println!(
        "{} runs: LARD matches ground truth in {}, mismatches {}",
        results.len(),
        results.len() - mismatches,
        mismatches
    );
    if mismatches == 0 && unmet.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
