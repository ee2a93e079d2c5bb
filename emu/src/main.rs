//! `lard`: run and inspect programs on a LARDx86 CPU. The subcommands
//! live in `lard_emu::cmd`, each beside its options.

use clap::{Parser, Subcommand};
use lard_emu::cmd;
use lard_emu::cmd::accuracy::AccuracyArgs;
use lard_emu::cmd::campaign::cli::CampaignCmd;
use lard_emu::cmd::cargo::CargoArgs;
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
    /// Rust crates as LARD programs: cargo with lard-rustc (rustc's
    /// ThreadSanitizer instrumentation on lard's runtime), `test`, `run`
    /// and `bench` under `lard run`; other cargo subcommands pass through
    /// (docs/rust.md).
    Cargo(CargoArgs),
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
    /// Write a man page per command and subcommand into DIR (`make
    /// install`).
    #[command(hide = true)]
    Manpages {
        /// Where the pages go.
        dir: PathBuf,
        /// Where the documentation is installed (named in every page).
        #[arg(long, value_name = "DIR")]
        docs: Option<PathBuf>,
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit_with(e),
    };
    match cli.command {
        Command::Disasm { elf, symbol } => cmd::disasm::run(&elf, symbol.as_deref()),
        Command::Run(args) => cmd::run::run(*args, &log_fd),
        Command::Jumble(args) => cmd::jumble::run(args),
        Command::Explore(args) => cmd::explore::cli::run(args),
        Command::Go(args) => cmd::go::run(args),
        Command::Cargo(args) => cmd::cargo::run(args),
        Command::Campaign(c) => cmd::campaign::cli::run(c),
        Command::Accuracy(a) => cmd::accuracy::run(a),
        Command::CcAccuracy(a) => cmd::cc_accuracy::run(a),
        Command::Manpages { dir, docs } => {
            use clap::CommandFactory;
            match cmd::manpages::write(Cli::command(), &dir, docs.as_deref()) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("lard: cannot write man pages into {}: {e}", dir.display());
                    ExitCode::from(cmd::exit::EXIT_INTERNAL)
                }
            }
        }
    }
}

/// Prints clap's error and exits with its status; a mistyped subcommand
/// clap found no suggestion for (a transposition: `lard rnu`) gets one.
fn exit_with(e: clap::Error) -> ! {
    use clap::CommandFactory;
    use std::io::IsTerminal;
    // Help and version go to stdout, as clap prints them.
    if !e.use_stderr() || e.kind() != clap::error::ErrorKind::InvalidSubcommand {
        e.exit();
    }
    let styled = e.render();
    let mut text = if std::io::stderr().is_terminal() {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    if !text.contains("tip:") {
        let typed = std::env::args().nth(1).unwrap_or_default();
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        if let Some(near) = names.iter().find(|n| transposed_or_one_off(&typed, n)) {
            if let Some(end) = text.find('\n') {
                text.insert_str(
                    end + 1,
                    &format!("\n  tip: a similar subcommand exists: '{near}'\n"),
                );
            }
        }
    }
    eprint!("{text}");
    std::process::exit(e.exit_code());
}

/// `a` is `b` with two neighbouring characters swapped, or with one
/// character changed, added or removed.
fn transposed_or_one_off(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b {
        return false;
    }
    if a.len() == b.len() {
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        return diff.len() == 1
            || (diff.len() == 2
                && diff[1] == diff[0] + 1
                && a[diff[0]] == b[diff[1]]
                && a[diff[1]] == b[diff[0]]);
    }
    let (short, long) = if a.len() < b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() != short.len() + 1 {
        return false;
    }
    (0..long.len()).any(|skip| {
        long.iter()
            .enumerate()
            .filter(|&(i, _)| i != skip)
            .map(|(_, c)| c)
            .eq(short.iter())
    })
}

#[cfg(test)]
mod tests {
    use super::transposed_or_one_off as near;

    #[test]
    fn near_misses_of_a_subcommand() {
        for (typed, name, want) in [
            ("rnu", "run", true),
            ("urn", "run", true),
            ("rn", "run", true),
            ("runn", "run", true),
            ("rum", "run", true),
            ("run", "run", false),
            ("nur", "run", false),
            ("go", "run", false),
            ("exlpore", "explore", true),
        ] {
            assert_eq!(near(typed, name), want, "{typed} ~ {name}");
        }
    }
}
