//! `lard`: run and inspect programs on a LARDx86 CPU.

use clap::{Parser, Subcommand, ValueEnum};
use lard_detector_hw::adversarial::Heuristic;
use lard_emu::binary::disasm;
use lard_emu::binary::elf::ElfFile;
use lard_emu::cmd::run::{RunArgs, EXIT_INTERNAL, MAX_QUANTUM, PCT_DEPTH};
use lard_emu::cmd::{interrupt_flag, jobs_or_cores, parse_seconds};
use lard_emu::linux::hostfd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// `lard explore`: the runs' quantum.
const EXPLORE_QUANTUM: u64 = 20;
/// Exit status of `lard disasm` when its input is unusable.
const EXIT_BAD_INPUT: u8 = 1;

#[derive(Parser)]
#[command(
    name = "lard",
    version,
    about = "A user-mode x86-64 emulator with a LARDx86 race-detecting CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// LARD-aware disassembly of an ELF file's code sections.
    Disasm {
        /// The ELF file.
        elf: PathBuf,
        /// Disassemble only this function.
        #[arg(long)]
        symbol: Option<String>,
    },
    /// Run an x86-64 Linux program (static or dynamically linked) on the LARDx86 CPU.
    Run(Box<RunArgs>),
    /// Adversarial memory (JUMBLE): run the program on adversarial memory,
    /// one racy location at a time, and tell destructive races from benign
    /// ones (docs/jumble.md).
    Jumble(JumbleCli),
    /// Run the program under many schedules (PCT or random) and report
    /// crashes, deadlocks, hangs, other results and new races, each with
    /// the `lard run` command that replays it (docs/explore.md).
    Explore(ExploreCli),
    /// Many-run jobs from a campaign file: programs crossed with detectors,
    /// hardware configurations, environments, seeds and schedulers; run
    /// here or as a Slurm job array, then collected into tables and
    /// figures (docs/campaigns.md).
    #[command(subcommand)]
    Campaign(CampaignCmd),
    /// Every manifest guest under all detector variants: the LARD paper's
    /// Table 3 for this project's guests, LARD checked against ground truth.
    Accuracy {
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
    },
    /// The lard-cc ground truth (guests/cc) built with lard-cc and run with
    /// random schedules: precision, recall and line correctness.
    CcAccuracy(CcAccuracyArgs),
}

/// `lard cc-accuracy`'s options.
#[derive(clap::Args)]
struct CcAccuracyArgs {
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

#[derive(clap::Args)]
struct JumbleCli {
    /// Runs per configuration (each heuristic, `sc`, and `none`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100000))]
    runs: u64,
    /// Adversarial heuristics to try (comma-separated; `sc` and `none` are
    /// always run as baselines).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "oldest,oldest-different,random,random-different"
    )]
    heuristics: String,
    /// Child processes at a time (default: the host's cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Write the result as JSON to FILE (docs/cli.md).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Keep the runs as a campaign in DIR (its campaign.toml and one result
    /// per run): a second jumble with the same DIR makes only the runs
    /// missing, and `lard campaign collect DIR` draws JUMBLE's Figure 9.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// The guest program (after `--`).
    #[arg(required = true)]
    guest: PathBuf,
    /// Arguments for the guest.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum UntilArg {
    /// Stop after the first run with a finding.
    First,
    /// Make every run.
    All,
}

#[derive(clap::Args)]
struct ExploreCli {
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
    #[arg(long, value_name = "Q", default_value_t = EXPLORE_QUANTUM, value_parser = clap::value_parser!(u64).range(1..=MAX_QUANTUM))]
    quantum: u64,
    /// Wall-clock limit of each run (fractions allowed).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value = "60")]
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

#[derive(Subcommand)]
enum CampaignCmd {
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
        #[arg(long, value_name = "I/N", value_parser = lard_emu::cmd::campaign::spec::parse_shard)]
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

fn main() -> ExitCode {
    // lard's warnings go where its reports go: the guest's fd 2 may be a
    // pipe its parent reads (`lard run` of a program that captures a
    // child's stderr must not find lard's messages in it).
    let log_fd = Arc::new(std::sync::atomic::AtomicI32::new(2));
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .format_timestamp(None)
        .target(env_logger::Target::Pipe(Box::new(hostfd::FdWriter(
            log_fd.clone(),
        ))))
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Disasm { elf, symbol } => run_disasm(&elf, symbol.as_deref()),
        Command::Run(args) => lard_emu::cmd::run::run(*args, &log_fd),
        Command::Jumble(args) => run_jumble(args),
        Command::Explore(args) => run_explore(args),
        Command::Campaign(c) => run_campaign(c),
        Command::Accuracy {
            guests,
            build,
            only,
            jobs,
        } => run_accuracy(&guests, &build, only.as_deref(), jobs),
        Command::CcAccuracy(a) => run_cc_accuracy(a),
    }
}

fn run_cc_accuracy(a: CcAccuracyArgs) -> ExitCode {
    use lard_emu::cmd::campaign::runner;
    use lard_emu::cmd::cc_accuracy as cc;
    use std::io::IsTerminal;
    let mut build = std::path::absolute(&a.build).unwrap_or_else(|_| a.build.clone());
    if a.plain {
        build = build.join("plain");
    }
    let guests = a
        .manifest
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let programs = match cc::programs(&a.manifest, &build, a.dynamic) {
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
        cc::Compiler::Plain
    } else {
        cc::Compiler::LardCc(driver)
    };
    for (r, flags) in &programs {
        if let Err(e) = cc::build(&compiler, &guests, r, flags, a.dynamic) {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    }
    let runs: Vec<_> = programs.into_iter().map(|(r, _)| r).collect();
    let seeds = a.seeds.max(1);
    let camp = cc::campaign(&runs, &build, seeds);
    // Made afresh: the programs were just rebuilt.
    let out = build.join("cc-accuracy.results");
    let _ = std::fs::remove_dir_all(&out);
    if let Err(e) = camp
        .to_toml()
        .map_err(|e| e.0)
        .and_then(|t| std::fs::write(build.join("cc-accuracy.toml"), t).map_err(|e| e.to_string()))
    {
        eprintln!("lard: cc-accuracy: {}: {e}", build.display());
        return ExitCode::from(EXIT_INTERNAL);
    }
    let args = runner::RunArgs {
        lard: me,
        out: out.clone(),
        jobs: jobs_or_cores(a.jobs),
        shard: (0, 1),
        progress: std::io::stderr().is_terminal(),
        interrupt: interrupt_flag(),
    };
    match runner::run(&camp, &args) {
        Ok(s) if s.interrupted => return ExitCode::from(130),
        Ok(_) => {}
        Err(e) => {
            eprintln!("lard: cc-accuracy: {e}");
            return ExitCode::from(EXIT_INTERNAL);
        }
    }
    let results: Vec<_> = camp
        .runs()
        .iter()
        .map(|spec| {
            let v: Option<serde_json::Value> = std::fs::read(runner::result_path(&out, &spec.key))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            cc::judge(&runs[spec.program], &spec.params["seed"], v.as_ref())
        })
        .collect();
    print!("{}", cc::report(&results, seeds, &compiler));
    if results.iter().all(|r| r.verdict.is_ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run_jumble(a: JumbleCli) -> ExitCode {
    if let Err(e) = ElfFile::open(&a.guest) {
        eprintln!("lard: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let mut heuristics = Vec::new();
    for h in a.heuristics.split(',').map(str::trim) {
        match h.parse::<Heuristic>() {
            Ok(h) => heuristics.push(h.name().to_string()),
            Err(e) => {
                eprintln!("lard: --heuristics: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let args = lard_emu::cmd::jumble::JumbleArgs {
        lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
        guest: a.guest.clone(),
        args: a.args,
        runs: a.runs,
        heuristics,
        jobs: jobs_or_cores(a.jobs.map(|j| j as u64)),
        progress: !a.no_progress,
        out: a.out.clone(),
        interrupt: interrupt_flag(),
    };
    let result = match lard_emu::cmd::jumble::jumble(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    print!("{}", result.table(&a.guest));
    if let Some(path) = &a.report_json {
        if let Err(e) = std::fs::write(path, result.json()) {
            eprintln!("lard: cannot write {}: {e}", path.display());
            return ExitCode::from(EXIT_INTERNAL);
        }
    }
    if result.interrupted {
        eprintln!("lard: jumble interrupted: the table counts the runs made");
        return ExitCode::from(130);
    }
    ExitCode::SUCCESS
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

fn run_campaign(c: CampaignCmd) -> ExitCode {
    use lard_emu::cmd::campaign::{self, runner, slurm, spec::Campaign};
    use std::io::IsTerminal;
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
                jobs: jobs_or_cores(jobs),
                shard: shard.unwrap_or((0, 1)),
                progress: !no_progress && std::io::stderr().is_terminal(),
                interrupt: interrupt_flag(),
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
                        runner::RunError::Io(_) => EXIT_INTERNAL,
                    })
                }
            }
        }
        CampaignCmd::Collect { dir } => match campaign::collect_dir(&dir) {
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
                    return ExitCode::from(EXIT_INTERNAL);
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
                        return ExitCode::from(EXIT_INTERNAL);
                    }
                }
            }
            ExitCode::SUCCESS
        }
    }
}

fn run_explore(a: ExploreCli) -> ExitCode {
    use lard_emu::cmd::explore::{self, command::Strategy, report, ExploreArgs, Until};
    use std::io::IsTerminal;
    if let Some(own) = a.run_option.iter().find(|o| {
        explore::OWN_OPTIONS
            .iter()
            .any(|x| o.as_str() == *x || o.starts_with(&format!("{x}=")))
    }) {
        eprintln!("lard: --run-option {own}: lard explore sets it for each run");
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
                depth: a.pct.unwrap_or(PCT_DEPTH),
            }
        },
        runs: a.runs,
        jobs: jobs_or_cores(a.jobs),
        until: match a.until {
            UntilArg::First => Until::First,
            UntilArg::All => Until::All,
        },
        seed: a.seed,
        quantum: a.quantum,
        timeout: a.timeout,
        options: a.run_option.clone(),
        progress: !a.no_progress && std::io::stderr().is_terminal(),
        interrupt: interrupt_flag(),
    };
    let result = match explore::explore(&args) {
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
            return ExitCode::from(EXIT_INTERNAL);
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

/// `lard accuracy`'s runs as a campaign in `build/accuracy.results`
/// (made afresh: the guests were just rebuilt), judged against the
/// manifest.
fn accuracy_campaign(
    runs: &[lard_emu::cmd::manifest::GuestRun],
    build: &Path,
    jobs: Option<u64>,
) -> Result<Vec<lard_emu::cmd::accuracy::RunResult>, ExitCode> {
    use lard_emu::cmd::{accuracy, campaign::runner};
    use std::io::IsTerminal;
    let camp = accuracy::campaign(runs, build);
    let out = build.join("accuracy.results");
    let _ = std::fs::remove_dir_all(&out);
    if let Err(e) = camp
        .to_toml()
        .map_err(|e| e.0)
        .and_then(|t| std::fs::write(build.join("accuracy.toml"), t).map_err(|e| e.to_string()))
    {
        eprintln!("lard: accuracy: {}: {e}", build.display());
        return Err(ExitCode::from(EXIT_INTERNAL));
    }
    let args = runner::RunArgs {
        lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
        out: out.clone(),
        jobs: jobs_or_cores(jobs),
        shard: (0, 1),
        progress: std::io::stderr().is_terminal(),
        interrupt: interrupt_flag(),
    };
    let summary = runner::run(&camp, &args).map_err(|e| {
        eprintln!("lard: accuracy: {e}");
        ExitCode::from(EXIT_INTERNAL)
    })?;
    if summary.interrupted {
        return Err(ExitCode::from(130));
    }
    Ok(runs
        .iter()
        .zip(camp.runs())
        .map(|(r, spec)| {
            let v: Option<serde_json::Value> = std::fs::read(runner::result_path(&out, &spec.key))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            accuracy::judge(r, v.as_ref())
        })
        .collect())
}

fn run_accuracy(guests: &Path, build: &Path, only: Option<&str>, jobs: Option<u64>) -> ExitCode {
    let manifest = guests.join("manifest.toml");
    if !manifest.is_file() {
        eprintln!(
            "lard: {}: no manifest (use --guests DIR)",
            manifest.display()
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let build = std::path::absolute(build).unwrap_or_else(|_| build.to_path_buf());
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
    let runs = match lard_emu::cmd::manifest::read(&manifest, &build) {
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
    let results = match accuracy_campaign(&runs, &build, jobs) {
        Ok(r) => r,
        Err(code) => return code,
    };
    print!("{}", lard_emu::cmd::accuracy::matrix(&results));
    let mismatches = results.iter().filter(|r| r.verdict.is_err()).count();
    let unmet = if only.is_none() {
        lard_emu::cmd::accuracy::unmet_expectations(&results)
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

fn run_disasm(path: &std::path::Path, symbol: Option<&str>) -> ExitCode {
    let file = match ElfFile::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match disasm::disasm(&file, symbol, &mut out) {
        Ok(counts) => {
            drop(out);
            eprintln!("lard: {}", disasm::summary(&counts));
            ExitCode::SUCCESS
        }
        Err(disasm::DisasmError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lard: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
