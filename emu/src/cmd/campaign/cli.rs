//! `lard campaign`'s command line and what it prints and exits with.

use super::spec::Campaign;
use super::{runner, slurm};
use clap::Subcommand;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `lard campaign`'s subcommands.
#[derive(Subcommand)]
pub enum CampaignCmd {
    /// Make this shard's runs that have no result yet.
    Run {
        /// The campaign file (TOML).
        file: PathBuf,
        /// The results directory (default: FILE without `.toml`, plus
        /// `.results`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Runs at a time (default: the host's cores).
        #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=4096))]
        jobs: Option<u64>,
        /// Make only the runs whose index is I modulo N.
        #[arg(long, value_name = "I/N", value_parser = super::spec::parse_shard)]
        shard: Option<(usize, usize)>,
        /// No progress bar (there is none anyway unless stderr is a terminal).
        #[arg(long)]
        no_progress: bool,
    },
    /// Merge a results directory into runs.csv/json, summary.csv/json, SVG
    /// figures and index.html.
    Collect {
        /// The results directory.
        dir: PathBuf,
    },
    /// Write a Slurm job array that runs the campaign in shards (and submit
    /// it with --submit).
    Slurm {
        /// The campaign file (TOML).
        file: PathBuf,
        /// The results directory, on storage every node sees (default as
        /// for `run`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Array tasks, one shard each.
        #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        tasks: u64,
        /// CPUs per task (each task's --jobs).
        #[arg(long, value_name = "C", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=4096))]
        cpus_per_task: u64,
        /// At most K array tasks at once (`--array=0-N%K`).
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=100_000))]
        array_limit: Option<u64>,
        /// The Slurm partition.
        #[arg(long, value_name = "P")]
        partition: Option<String>,
        /// An extra `#SBATCH` option (repeatable): `--sbatch=--time=1:00:00`.
        #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
        sbatch: Vec<String>,
        /// Submit the script with sbatch.
        #[arg(long)]
        submit: bool,
        /// With --submit: wait until every task has ended (sbatch --wait).
        #[arg(long, requires = "submit")]
        wait: bool,
    },
}

/// `lard campaign`'s exit status when the campaign file or the results
/// directory is unusable.
const EXIT_CAMPAIGN_INPUT: u8 = 1;

/// The results directory of `file` when `--out` is not given.
fn campaign_out(file: &Path, out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| file.with_extension("results"))
}

/// `p` made absolute (for the Slurm script, which runs elsewhere).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `lard campaign`: runs, collects or writes the Slurm script.
pub fn run(c: CampaignCmd) -> ExitCode {
    match c {
        CampaignCmd::Run {
            file,
            out,
            jobs,
            shard,
            no_progress,
        } => {
            let camp = match Campaign::load(&file) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("lard: {e}");
                    return ExitCode::from(EXIT_CAMPAIGN_INPUT);
                }
            };
            let out = absolute(&campaign_out(&file, out));
            let args = runner::RunArgs {
                lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
                out: out.clone(),
                jobs: crate::cmd::jobs_or_cores(jobs),
                shard: shard.unwrap_or((0, 1)),
                progress: !no_progress && std::io::stderr().is_terminal(),
                interrupt: crate::cmd::interrupt_flag(),
            };
            match runner::run(&camp, &args) {
                Ok(s) => {
                    println!(
                        "lard campaign {}: shard {}/{}: {} run(s), {} already done, {} made ({} failed){}; results in {}",
                        camp.name,
                        args.shard.0,
                        args.shard.1,
                        s.shard_runs,
                        s.already,
                        s.made,
                        s.failed,
                        if s.build_failures.is_empty() {
                            String::new()
                        } else {
                            format!("; build failed: {}", s.build_failures.join(", "))
                        },
                        out.display()
                    );
                    if s.interrupted {
                        ExitCode::from(130)
                    } else if s.build_failures.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(EXIT_CAMPAIGN_INPUT)
                    }
                }
                Err(e) => {
                    eprintln!("lard: campaign {}: {e}", camp.name);
                    ExitCode::from(match e {
                        runner::RunError::Input(_) => EXIT_CAMPAIGN_INPUT,
                        runner::RunError::Io(_) => crate::cmd::exit::EXIT_INTERNAL,
                    })
                }
            }
        }
        CampaignCmd::Collect { dir } => match super::collect_dir(&dir) {
            Ok(c) => {
                print!("{}", c.text);
                println!(
                    "{} run(s) collected into {}: {}",
                    c.runs,
                    dir.display(),
                    c.files.join(", ")
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("lard: {e}");
                ExitCode::from(EXIT_CAMPAIGN_INPUT)
            }
        },
        CampaignCmd::Slurm {
            file,
            out,
            tasks,
            cpus_per_task,
            array_limit,
            partition,
            sbatch,
            submit,
            wait,
        } => {
            let camp = match Campaign::load(&file) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("lard: {e}");
                    return ExitCode::from(EXIT_CAMPAIGN_INPUT);
                }
            };
            let a = slurm::SlurmArgs {
                lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
                campaign: absolute(&file),
                out: absolute(&campaign_out(&file, out)),
                name: camp.name.clone(),
                tasks: tasks as usize,
                cpus: cpus_per_task as usize,
                array_limit: array_limit.map(|k| k as usize),
                partition,
                sbatch,
            };
            let script = match slurm::write(&a) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("lard: {e}");
                    return ExitCode::from(crate::cmd::exit::EXIT_INTERNAL);
                }
            };
            println!("{}", script.display());
            if submit {
                match slurm::submit(&script, wait) {
                    Ok(job) => {
                        println!("submitted job {}", job.id);
                        if let Some(status) = job.failed {
                            eprintln!(
                                "lard: job {}: a task ended with status {status} (logs: {})",
                                job.id,
                                a.out.join(format!("slurm-{}_*.out", job.id)).display()
                            );
                            return ExitCode::from(EXIT_CAMPAIGN_INPUT);
                        }
                    }
                    Err(e) => {
                        eprintln!("lard: {e}");
                        return ExitCode::from(crate::cmd::exit::EXIT_INTERNAL);
                    }
                }
            }
            ExitCode::SUCCESS
        }
    }
}
