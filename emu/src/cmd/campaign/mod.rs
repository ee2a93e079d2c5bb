//! `lard campaign`: one mechanism for many-run jobs (docs/campaigns.md).
//!
//! A campaign file ([`spec`]) names programs and the axes to cross;
//! `lard campaign run` ([`runner`]) makes its share of the runs, one
//! result file per run named by a hash of its parameters (resumable,
//! shardable); `lard campaign slurm` ([`slurm`]) makes a Slurm job array
//! of shards; `lard campaign collect` ([`collect`], [`figures`]) merges the
//! results into tables, SVG figures and a page.

pub mod cli;
pub mod collect;
pub mod figures;
pub mod profile;
pub mod runner;
pub mod slurm;
pub mod spec;

use runner::{RunError, RunSummary};
use serde_json::Value;
use spec::{Campaign, RunSpec};
use std::path::Path;
use std::process::ExitCode;

/// A campaign made here in one go by another command (`lard jumble`,
/// `lard accuracy`, `lard cc-accuracy`): what the runner did, and every
/// run with its result.
#[derive(Debug)]
pub struct Made {
    /// The runner's summary, or why it stopped.
    pub summary: Result<RunSummary, RunError>,
    /// Every run of the campaign (in [`Campaign::runs`] order) with its
    /// result file's contents (`None`: no readable result).
    pub results: Vec<(RunSpec, Option<Value>)>,
}

/// Writes `camp` to `file`, makes its runs into `args.out` and reads their
/// results; `Err` when the campaign file cannot be written (nothing ran).
pub fn make(camp: &Campaign, file: &Path, args: &runner::RunArgs) -> Result<Made, String> {
    camp.to_toml()
        .map_err(|e| e.0)
        .and_then(|t| std::fs::write(file, t).map_err(|e| e.to_string()))?;
    let summary = runner::run(camp, args);
    let results = camp
        .runs()
        .into_iter()
        .map(|spec| {
            let v = std::fs::read(runner::result_path(&args.out, &spec.key))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            (spec, v)
        })
        .collect();
    Ok(Made { summary, results })
}

/// [`make`] afresh for a command named as `camp` is: the campaign file
/// `dir/NAME.toml`, the results in `dir/NAME.results` (removed first),
/// `jobs` runs at a time (default: the host's cores), a progress bar when
/// stderr is a terminal. Errors are printed as `lard: NAME: …`; `Err` is
/// the command's exit status (130 when interrupted, else 125).
pub fn make_afresh(
    camp: &Campaign,
    dir: &Path,
    jobs: Option<u64>,
) -> Result<Vec<(RunSpec, Option<Value>)>, ExitCode> {
    use std::io::IsTerminal;
    let out = dir.join(format!("{}.results", camp.name));
    let _ = std::fs::remove_dir_all(&out);
    let args = runner::RunArgs {
        lard: std::env::current_exe().unwrap_or_else(|_| "lard".into()),
        out,
        jobs: crate::cmd::jobs_or_cores(jobs),
        shard: (0, 1),
        progress: std::io::stderr().is_terminal(),
        interrupt: crate::cmd::interrupt_flag(),
    };
    let made = make(camp, &dir.join(format!("{}.toml", camp.name)), &args).map_err(|e| {
        eprintln!("lard: {}: {}: {e}", camp.name, dir.display());
        ExitCode::from(crate::cmd::exit::EXIT_INTERNAL)
    })?;
    match made.summary {
        Ok(s) if s.interrupted => Err(ExitCode::from(130)),
        Ok(_) => Ok(made.results),
        Err(e) => {
            eprintln!("lard: {}: {e}", camp.name);
            Err(ExitCode::from(crate::cmd::exit::EXIT_INTERNAL))
        }
    }
}

/// Instructions per program and configuration `lard campaign collect`
/// prints (`instructions.json` has them all).
pub const TOP_SHOWN: usize = 10;

/// What `lard campaign collect` wrote, and the text table it prints.
#[derive(Clone, Debug)]
pub struct Collected {
    /// Result files read.
    pub runs: usize,
    /// The files written into the directory.
    pub files: Vec<String>,
    /// The summary table as text.
    pub text: String,
}

/// Merges the results in `dir` into `runs.csv`, `runs.json`,
/// `summary.csv`, `summary.json`, the figures and `index.html`.
pub fn collect_dir(dir: &Path) -> Result<Collected, String> {
    let rows = collect::load(dir)?;
    if rows.is_empty() {
        return Err(format!("{}: no campaign results", dir.display()));
    }
    let cells = collect::cells(&rows);
    let acc = collect::accuracy(&rows);
    let variants = collect::variant_totals(&rows);
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    write("runs.csv", collect::runs_csv(&rows))?;
    write("runs.json", format!("{}\n", collect::runs_json(&rows)))?;
    write("summary.csv", collect::summary_csv(&cells))?;
    write(
        "summary.json",
        format!("{}\n", collect::summary_json(&cells, &acc, &variants)),
    )?;
    let top = profile::top_instructions(&rows);
    if !top.is_empty() {
        write("instructions.json", format!("{}\n", profile::json(&top)))?;
    }
    let figures = figures::draw_all(dir, &cells, &acc, &variants)?;
    let name = dir
        .file_name()
        .map_or_else(|| "campaign".into(), |n| n.to_string_lossy().into_owned());
    write(
        "index.html",
        figures::page(&name, &cells, &acc, &variants, &figures),
    )?;
    let mut files: Vec<String> = [
        "runs.csv",
        "runs.json",
        "summary.csv",
        "summary.json",
        "index.html",
    ]
    .map(String::from)
    .to_vec();
    if !top.is_empty() {
        files.push("instructions.json".into());
    }
    files.extend(figures);
    Ok(Collected {
        runs: rows.len(),
        files,
        text: collect::text(&cells, &acc, &variants) + &profile::text(&top, TOP_SHOWN),
    })
}
