//! `lard cc-accuracy`: the lard-cc ground truth (guests/cc/manifest.toml)
//! built with `lard-cc` (LARD mode) or with plain `gcc`/`g++` (`--plain`:
//! binary mode, docs/binary-mode.md), static or dynamic, run under
//! `lard run` with several `--sched random` seeds, scored as a race detector is scored on microbenchmarks:
//! per (program, seed) run, a racy program reported racy is a true
//! positive, a race-free one reported racy a false positive, a racy one
//! reported race-free a false negative; precision = TP / (TP + FP), recall =
//! TP / (TP + FN). Line correctness: the share of reported races whose
//! source line is one of the program's racing lines. docs/cli.md.
//!
//! The runs are a campaign (docs/campaigns.md, [`campaign`]): every
//! program crossed with a `seed` axis, made by the campaign runner into
//! `BUILD/cc-accuracy.results` beside its `BUILD/cc-accuracy.toml`, and
//! judged from their result files ([`judge`]).

use crate::binary::dwarf::lines::SourceLines;
use crate::cmd::campaign::spec::{Axis, AxisValue, Campaign};
use crate::cmd::manifest::GuestRun;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Exit status when the manifest or a build is unusable.
use crate::cmd::exit::EXIT_BAD_INPUT;

/// One (program, seed) run's outcome.
#[derive(Clone, Debug)]
pub struct CcRun {
    /// `name seed N`.
    pub label: String,
    /// Ground truth: the program is racy.
    pub racy: bool,
    /// lard reported at least one race.
    pub reported: bool,
    /// Reported races (distinct racy PCs) and how many lie on racing lines.
    pub races: usize,
    /// Of `races`, those on one of the program's racing lines.
    pub on_racing_lines: usize,
    /// The source lines of the reported races (-1: not in the program's
    /// source).
    pub lines: BTreeSet<i64>,
    /// `Ok` when output, status and the reported lines match the manifest.
    pub verdict: Result<(), String>,
}

/// Precision, recall and line correctness over runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// True positives.
    pub tp: usize,
    /// False positives.
    pub fp: usize,
    /// False negatives.
    pub fn_: usize,
    /// True negatives.
    pub tn: usize,
    /// TP / (TP + FP) (1 when nothing was reported).
    pub precision: f64,
    /// TP / (TP + FN) (1 when nothing is racy).
    pub recall: f64,
    /// Reported races on racing lines / reported races (1 when none).
    pub line_correctness: f64,
}

/// Scores a set of runs.
pub fn score(runs: &[CcRun]) -> Score {
    let tp = runs.iter().filter(|r| r.racy && r.reported).count();
    let fp = runs.iter().filter(|r| !r.racy && r.reported).count();
    let fn_ = runs.iter().filter(|r| r.racy && !r.reported).count();
    let tn = runs.iter().filter(|r| !r.racy && !r.reported).count();
    let races: usize = runs.iter().map(|r| r.races).sum();
    let good: usize = runs.iter().map(|r| r.on_racing_lines).sum();
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    Score {
        tp,
        fp,
        fn_,
        tn,
        precision: ratio(tp, tp + fp),
        recall: ratio(tp, tp + fn_),
        line_correctness: ratio(good, races),
    }
}

/// The manifest's programs with their lard-cc flags; with `dynamic`, built
/// as dynamically linked executables (in `build/dynamic/`) instead of
/// static ones.
pub fn programs(
    manifest: &Path,
    build: &Path,
    dynamic: bool,
) -> Result<Vec<(GuestRun, String)>, String> {
    // One run per program: the manifest's glibc entry (its glibc-dynamic
    // entries are for plain gcc builds of the C guests).
    let runs: Vec<GuestRun> = crate::cmd::manifest::read(manifest, build)?
        .into_iter()
        .filter(|r| r.libc != crate::cmd::manifest::DYNAMIC)
        .map(|mut r| {
            if dynamic {
                r.bin = build.join("dynamic").join(&r.name);
                r.label = format!("dynamic/{}", r.name);
            }
            r
        })
        .collect();
    let text =
        std::fs::read_to_string(manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let doc: toml::Value = toml::from_str(&text)
        .map_err(|e| super::toml_place::syntax_error(&manifest.display().to_string(), &text, &e))?;
    let guests = doc
        .get("guest")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| format!("{}: no [[guest]] tables", manifest.display()))?;
    let mut out = Vec::new();
    for r in runs {
        let flags = guests
            .iter()
            .find(|g| g.get("name").and_then(toml::Value::as_str) == Some(r.name.as_str()))
            .and_then(|g| g.get("cflags"))
            .and_then(toml::Value::as_str)
            .ok_or_else(|| format!("{}: {} has no cflags", manifest.display(), r.name))?
            .to_string();
        out.push((r, flags));
    }
    Ok(out)
}

/// The compiler the programs are built with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// The lard-cc driver (lard-c++ for `.cc`, found next to it).
    LardCc(PathBuf),
    /// Plain `gcc`/`g++`: no LARDx86 code, checked in binary mode.
    Plain,
}

impl Compiler {
    /// What the report's first line says after "lard-cc ground truth"
    /// (nothing for lard-cc builds).
    pub fn describe(&self) -> &'static str {
        match self {
            Compiler::LardCc(_) => "",
            Compiler::Plain => ", built with plain gcc/g++ (binary mode)",
        }
    }
}

/// Builds one program with `cc`, `-static` unless `dynamic`.
pub fn build(
    cc: &Compiler,
    guests: &Path,
    r: &GuestRun,
    flags: &str,
    dynamic: bool,
) -> Result<(), String> {
    let cxx = r.source.ends_with(".cc");
    let driver: PathBuf = match cc {
        Compiler::LardCc(c) if cxx => c.with_file_name("lard-c++"),
        Compiler::LardCc(c) => c.clone(),
        Compiler::Plain => PathBuf::from(if cxx { "g++" } else { "gcc" }),
    };
    if let Some(d) = r.bin.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let plain = *cc == Compiler::Plain;
    let out = Command::new(&driver)
        .arg("-g")
        .args((!dynamic).then_some("-static"))
        // lard-cc's own options mean nothing to gcc.
        .args(
            flags
                .split_whitespace()
                .filter(|f| !(plain && f.starts_with("--lard-"))),
        )
        .arg(guests.join(&r.source))
        .arg("-o")
        .arg(&r.bin)
        .output()
        .map_err(|e| format!("{}: {e}", driver.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{}: build failed: {}",
            r.name,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// The campaign of `lard cc-accuracy`: every program (as built in
/// `build`) under `lard run --sched random`, crossed with `seed` =
/// 1..=`seeds`; the manifest's output and exit status are each program's
/// `expect`.
pub fn campaign(programs: &[GuestRun], build: &Path, seeds: u64) -> Campaign {
    Campaign {
        name: "cc-accuracy".into(),
        dir: build.to_path_buf(),
        timeout: 600.0,
        env: Vec::new(),
        options: vec!["--sched".into(), "random".into()],
        programs: programs.iter().map(GuestRun::campaign_program).collect(),
        axes: vec![Axis {
            name: "seed".into(),
            values: (1..=seeds.max(1))
                .map(|s| AxisValue {
                    label: s.to_string(),
                    options: vec!["--seed".into(), s.to_string()],
                    env: Vec::new(),
                })
                .collect(),
        }],
        hw_profile: false,
    }
}

/// Judges the run of `r` with `seed` from its campaign result (`None`: no
/// result).
pub fn judge(r: &GuestRun, seed: &str, result: Option<&Value>) -> CcRun {
    let label = format!("{} seed {seed}", r.name);
    let mut run = CcRun {
        label: label.clone(),
        racy: r.racy,
        reported: false,
        races: 0,
        on_racing_lines: 0,
        lines: BTreeSet::new(),
        verdict: Ok(()),
    };
    let Some(v) = result else {
        run.verdict = Err(format!("{label}: no result"));
        return run;
    };
    if v["outcome"] != "ok" {
        let last = v["lard_messages"]
            .as_array()
            .and_then(|a| a.last())
            .and_then(Value::as_str)
            .unwrap_or("");
        run.verdict = Err(format!(
            "{label}: {} (exit {}): {last}",
            v["outcome"], v["exit"]
        ));
        return run;
    }
    let pcs: Vec<u64> = v["detectors"]
        .as_object()
        .and_then(|m| m.values().find_map(|d| d["racy_pcs"].as_array()))
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let file = Path::new(&r.source)
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    // A PIE (the dynamically linked builds) runs at the loader's base.
    let bias = match crate::binary::elf::ElfFile::open(&r.bin) {
        Ok(f) if f.is_pie() => crate::linux::loader::PIE_BASE,
        _ => 0,
    };
    let lines = SourceLines::open(&r.bin, bias);
    let mut got = BTreeSet::new();
    for pc in &pcs {
        let line = lines
            .frames(*pc)
            .into_iter()
            .find(|f| f.file.as_deref().is_some_and(|p| p.ends_with(&file)))
            .and_then(|f| f.line)
            .map_or(-1, i64::from);
        if r.race_lines.contains(&line) {
            run.on_racing_lines += 1;
        }
        got.insert(line);
    }
    run.races = pcs.len();
    run.reported = !pcs.is_empty();
    run.lines = got.clone();
    let status = v["exit"].as_i64().unwrap_or(-1);
    let stdout = v["stdout"].as_str().unwrap_or_default();
    run.verdict = if stdout != r.stdout || status != i64::from(r.exit) {
        Err(format!("{label}: output {stdout:?}, status {status}"))
    } else {
        r.check_lines(&got).map_err(|e| format!("{label}: {e}"))
    };
    run
}

/// Verdict stability over seeds: how many programs got the same verdict
/// (racy or not) in every run, and how many the same reported lines too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stability {
    /// Programs run.
    pub programs: usize,
    /// Programs whose runs all agree on racy / race-free.
    pub same_verdict: usize,
    /// Programs whose runs all report the same set of lines.
    pub same_lines: usize,
}

/// The program of a run (its label without ` seed N`).
fn program(r: &CcRun) -> &str {
    r.label
        .rsplit_once(" seed ")
        .map_or(r.label.as_str(), |x| x.0)
}

/// Verdict stability of `runs` (several seeds per program).
pub fn stability(runs: &[CcRun]) -> Stability {
    let mut by: std::collections::BTreeMap<&str, Vec<&CcRun>> = Default::default();
    for r in runs {
        by.entry(program(r)).or_default().push(r);
    }
    let all = |v: &[&CcRun], f: &dyn Fn(&CcRun, &CcRun) -> bool| v.iter().all(|r| f(r, v[0]));
    Stability {
        programs: by.len(),
        same_verdict: by
            .values()
            .filter(|v| all(v, &|a, b| a.reported == b.reported))
            .count(),
        same_lines: by
            .values()
            .filter(|v| all(v, &|a, b| a.lines == b.lines))
            .count(),
    }
}

/// The report: one line per run that missed its ground truth, then the score.
pub fn report(runs: &[CcRun], seeds: u64, cc: &Compiler) -> String {
    let mut s = String::new();
    let programs: BTreeSet<&str> = runs.iter().map(program).collect();
    let racy = runs.iter().filter(|r| r.racy).count();
    let _ = writeln!(
        s,
        "lard-cc ground truth{}: {} programs x {seeds} seed(s) = {} runs ({racy} of a racy program)",
        cc.describe(),
        programs.len(),
        runs.len()
    );
    for r in runs {
        if let Err(e) = &r.verdict {
            let _ = writeln!(s, "  WRONG {e}");
        }
    }
    let sc = score(runs);
    let right = runs.iter().filter(|r| r.verdict.is_ok()).count();
    let _ = writeln!(
        s,
        "runs right: {right}/{}\nTP {} FP {} FN {} TN {}\nprecision {:.3}  recall {:.3}  line correctness {:.3}",
        runs.len(),
        sc.tp,
        sc.fp,
        sc.fn_,
        sc.tn,
        sc.precision,
        sc.recall,
        sc.line_correctness
    );
    let st = stability(runs);
    let _ = writeln!(
        s,
        "verdict stability: {}/{} programs the same verdict on every seed, {}/{} the same lines",
        st.same_verdict, st.programs, st.same_lines, st.programs
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, reported: bool, lines: &[i64]) -> CcRun {
        CcRun {
            label: label.to_string(),
            racy: true,
            reported,
            races: lines.len(),
            on_racing_lines: lines.len(),
            lines: lines.iter().copied().collect(),
            verdict: Ok(()),
        }
    }

    #[test]
    fn stability_counts_programs_whose_seeds_agree() {
        let runs = [
            run("a seed 1", true, &[3, 4]),
            run("a seed 2", true, &[3]),
            run("b seed 1", false, &[]),
            run("b seed 2", true, &[7]),
            run("c seed 1", true, &[9]),
            run("c seed 2", true, &[9]),
        ];
        assert_eq!(
            stability(&runs),
            Stability {
                programs: 3,
                same_verdict: 2,
                same_lines: 1
            }
        );
    }
}

/// `lard cc-accuracy`'s options.
#[derive(clap::Args)]
pub struct CcAccuracyArgs {
    /// The manifest.
    #[arg(long, default_value = "guests/cc/manifest.toml")]
    manifest: PathBuf,
    /// The lard-cc driver (lard-c++ is taken from the same directory).
    #[arg(long, default_value = "lard-cc")]
    lard_cc: PathBuf,
    /// Where to build the programs.
    #[arg(long, default_value = "target/cc-accuracy")]
    build: PathBuf,
    /// Runs per program, with `--sched random --seed 1..=N`.
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Build the programs dynamically linked (the interposing runtime)
    /// instead of `-static`.
    #[arg(long)]
    dynamic: bool,
    /// Build with plain gcc/g++ instead of lard-cc (binary mode).
    #[arg(long)]
    plain: bool,
    /// Only programs whose name contains this text.
    #[arg(long)]
    only: Option<String>,
    /// Runs at a time (default: the host's cores).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
}

/// `lard cc-accuracy`: builds the programs, runs them as a campaign and
/// prints the report; exit status 0 when every run's verdict is right.
pub fn run(a: CcAccuracyArgs) -> ExitCode {
    let mut dir = std::path::absolute(&a.build).unwrap_or_else(|_| a.build.clone());
    if a.plain {
        dir = dir.join("plain");
    }
    let guests = a
        .manifest
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let programs = match programs(&a.manifest, &dir, a.dynamic) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let programs: Vec<_> = programs
        .into_iter()
        .filter(|(r, _)| a.only.as_deref().is_none_or(|o| r.name.contains(o)))
        .collect();
    if programs.is_empty() {
        eprintln!("lard: cc-accuracy: no program matches --only");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let me = std::env::current_exe().unwrap_or_else(|_| "lard".into());
    // The installed layout: lard-cc next to lard; else as given (PATH).
    let driver = match me.parent().map(|d| d.join("lard-cc")) {
        Some(p) if a.lard_cc == Path::new("lard-cc") && p.is_file() => p,
        _ => a.lard_cc.clone(),
    };
    let compiler = if a.plain {
        Compiler::Plain
    } else {
        Compiler::LardCc(driver)
    };
    for (r, flags) in &programs {
        if let Err(e) = build(&compiler, &guests, r, flags, a.dynamic) {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    }
    let runs: Vec<_> = programs.into_iter().map(|(r, _)| r).collect();
    let seeds = a.seeds.max(1);
    let camp = campaign(&runs, &dir, seeds);
    // Made afresh: the programs were just rebuilt.
    let results = match crate::cmd::campaign::make_afresh(&camp, &dir, a.jobs) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let results: Vec<_> = results
        .iter()
        .map(|(spec, v)| judge(&runs[spec.program], &spec.params["seed"], v.as_ref()))
        .collect();
    print!("{}", report(&results, seeds, &compiler));
    if results.iter().all(|r| r.verdict.is_ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
