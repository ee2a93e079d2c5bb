//! `lard`: run and inspect programs on a LARDx86 CPU. The subcommands
//! live in `lard_emu::cmd`, each beside its options.

use clap::{Parser, Subcommand};
use lard_emu::cmd;
use lard_emu::cmd::accuracy::AccuracyArgs;
use lard_emu::cmd::campaign::cli::CampaignCmd;
use lard_emu::cmd::cc_accuracy::CcAccuracyArgs;
use lard_emu::cmd::explore::cli::ExploreCli;
use lard_emu::cmd::go::GoArgs;
use lard_emu::cmd::jumble::JumbleCli;
use lard_emu::cmd::run::RunArgs;
use lard_emu::linux::hostfd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
    /// Go programs as LARD programs: `go build|test|run|install -race` with
    /// lard's race runtime, `test` and `run` under `lard run`; other go
    /// subcommands pass through (docs/go.md).
    Go(GoArgs),
    /// Many-run jobs from a campaign file: programs crossed with detectors,
    /// hardware configurations, environments, seeds and schedulers; run
    /// here or as a Slurm job array, then collected into tables and
    /// figures (docs/campaigns.md).
    #[command(subcommand)]
    Campaign(CampaignCmd),
    /// Every manifest guest under all detector variants: the LARD paper's
    /// Table 3 for this project's guests, LARD checked against ground truth.
    Accuracy(AccuracyArgs),
    /// The lard-cc ground truth (guests/cc) built with lard-cc and run with
    /// random schedules: precision, recall and line correctness.
    CcAccuracy(CcAccuracyArgs),
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
        Command::Disasm { elf, symbol } => cmd::disasm::run(&elf, symbol.as_deref()),
        Command::Run(args) => cmd::run::run(*args, &log_fd),
        Command::Jumble(args) => cmd::jumble::run(args),
        Command::Explore(args) => cmd::explore::cli::run(args),
        Command::Go(args) => cmd::go::run(args),
        Command::Campaign(c) => cmd::campaign::cli::run(c),
        Command::Accuracy(a) => cmd::accuracy::run(a),
        Command::CcAccuracy(a) => cmd::cc_accuracy::run(a),
    }
}
