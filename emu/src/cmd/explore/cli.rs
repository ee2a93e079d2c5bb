//! `lard explore`'s command line and what it prints and exits with.

use super::command::Strategy;
use super::{report, ExploreArgs, Until};
use clap::ValueEnum;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// `lard explore`: the runs' quantum.
const EXPLORE_QUANTUM: u64 = 20;

/// `--until`.
#[derive(Clone, Copy, ValueEnum)]
pub(super) enum UntilArg {
    /// Stop after the first run with a finding.
    First,
    /// Make every run.
    All,
}

/// `lard explore`'s command line.
#[derive(clap::Args)]
pub struct ExploreCli {
    /// PCT schedules for bugs of depth D (`lard run --sched pct
    /// --pct-depth D`); the default, with D = 2.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=64), conflicts_with = "random")]
    pct: Option<u32>,
    /// Random schedules (`lard run --sched random`) instead of PCT.
    #[arg(long)]
    random: bool,
    /// Schedules to try after the first run.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    runs: u64,
    /// Child processes at a time (default: the host's cores).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
    /// Stop after the first run with a finding, or make all runs.
    #[arg(long, value_enum, default_value = "all")]
    until: UntilArg,
    /// Run i (1..N) uses `--seed SEED+i`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The runs' quantum in basic blocks (the first run keeps lard run's
    /// default).
    #[arg(long, value_name = "Q", default_value_t = EXPLORE_QUANTUM, value_parser = clap::value_parser!(u64).range(1..=crate::cmd::run::MAX_QUANTUM))]
    quantum: u64,
    /// Wall-clock limit of each run (fractions allowed).
    #[arg(long, value_name = "SECONDS", value_parser = crate::cmd::parse_seconds, default_value = "60")]
    timeout: std::time::Duration,
    /// Write the result as JSON to FILE (docs/cli.md).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// A `lard run` option for every run (repeatable, one word each:
    /// `--run-option=--detector --run-option=lardish`).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    run_option: Vec<String>,
    /// No progress bar (there is none anyway unless stderr is a terminal).
    #[arg(long)]
    no_progress: bool,
    /// The guest program (after `--`).
    #[arg(required = true)]
    guest: PathBuf,
    /// Arguments for the guest.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// `lard explore`: the exploration, its report on stdout and its JSON
/// report; exit status 1 when a run found something.
pub fn run(a: ExploreCli) -> ExitCode {
    if let Some(own) = a.run_option.iter().find(|o| {
        super::OWN_OPTIONS
            .iter()
            .any(|x| o.as_str() == *x || o.starts_with(&format!("{x}=")))
    }) {
        eprintln!("lard: --run-option {own}: lard explore sets it for each run");
        return ExitCode::from(2);
    }
    if let Err(e) = crate::cmd::run::check_options(&a.run_option) {
        eprintln!("lard: --run-option: {e}");
        return ExitCode::from(2);
    }
    let argv0 = std::env::args().next().unwrap_or_default();
    let args = ExploreArgs {
        lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
        lard_name: if argv0.contains('/') {
            argv0
        } else {
            "lard".into()
        },
        guest: a.guest.clone(),
        args: a.args.clone(),
        strategy: if a.random {
            Strategy::Random
        } else {
            Strategy::Pct {
                depth: a.pct.unwrap_or(crate::cmd::run::PCT_DEPTH),
            }
        },
        runs: a.runs,
        jobs: crate::cmd::jobs_or_cores(a.jobs),
        until: match a.until {
            UntilArg::First => Until::First,
            UntilArg::All => Until::All,
        },
        seed: a.seed,
        quantum: a.quantum,
        timeout: a.timeout,
        options: a.run_option.clone(),
        progress: !a.no_progress && std::io::stderr().is_terminal(),
        interrupt: crate::cmd::interrupt_flag(),
    };
    let result = match super::explore(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lard: {}: {e}", a.guest.display());
            return ExitCode::from(e.exit_status());
        }
    };
    print!("{}", report::text(&result, &a.guest));
    if let Some(path) = &a.report_json {
        if let Err(e) = std::fs::write(path, report::json(&result, &a.guest, &a.args)) {
            eprintln!("lard: cannot write {}: {e}", path.display());
            return ExitCode::from(crate::cmd::exit::EXIT_INTERNAL);
        }
    }
    if result.interrupted {
        ExitCode::from(130)
    } else if result.findings.list().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
