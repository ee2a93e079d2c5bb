//! `lard`: run and inspect programs on a LARDx86 CPU.

use clap::{Parser, Subcommand, ValueEnum};
use lard_detector_hw::adversarial::{AdversarialConfig, Heuristic};
use lard_detector_hw::{HwConfig, Lardish, ObjectDetector};
use lard_emu::binary::disasm;
use lard_emu::binary::elf::{ElfError, ElfFile};
use lard_emu::cpu::sched::SchedPolicy;
use lard_emu::linux::hostfd::{self, StderrCopy};
use lard_emu::linux::process::{self, Identity};
use lard_emu::machine::{Config, RunMode};
use lard_emu::observe::accuracy::{parse_variants, AccuracyObserver};
use lard_emu::observe::detect::{DetectorObserver, RaceLog};
use lard_emu::observe::objects;
use lard_emu::observe::observer::{AccessMode, CountingObserver, Observer, Simd};
use lard_emu::run::{Emulator, Outcome, RunLimits, StopReason};
use std::cell::RefCell;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `lard run --max-insns`: the instruction limit stopped the guest.
const EXIT_MAX_INSNS: u8 = 120;
/// `lard run --timeout`: the wall-clock limit stopped the guest.
const EXIT_TIMEOUT: u8 = 121;
/// `lard run --sched pct` without `--pct-depth`.
const PCT_DEPTH: u32 = 2;
/// The largest `--quantum`: a random quantum (up to twice it) must fit the
/// clock's block count (emu/src/cpu/uc.rs, `Clock`).
const MAX_QUANTUM: u64 = 1 << 25;
/// `lard explore`: the runs' quantum.
const EXPLORE_QUANTUM: u64 = 20;
/// `lard run --sched pct` without `--pct-steps`.
const PCT_STEPS: u64 = 100_000;
/// Exit status of `lard disasm` when its input is unusable.
const EXIT_BAD_INPUT: u8 = 1;
/// `lard run`: every live guest thread blocked forever.
const EXIT_DEADLOCK: u8 = 122;
/// `lard run --strict-syscalls`: the guest made an unsupported system call.
const EXIT_UNSUPPORTED_SYSCALL: u8 = 123;
/// `lard run --on-race exception`: a data-race exception stopped the guest
/// before the racy access took effect.
const EXIT_RACE_EXCEPTION: u8 = 124;
/// `lard run --gdb`: lard could not listen for or accept gdb.
const EXIT_GDB: u8 = 119;
/// `lard run`: lard itself failed (cannot write a report, emulator error).
const EXIT_INTERNAL: u8 = 125;
/// `lard run`: the guest is not a runnable x86-64 executable (or its
/// interpreter is not).
const EXIT_NOT_RUNNABLE: u8 = 126;
/// `lard run`: the guest file, its interpreter (PT_INTERP) or the
/// `--sysroot` directory does not exist or cannot be read.
const EXIT_NOT_FOUND: u8 = 127;

#[derive(Clone, Copy, ValueEnum)]
enum SchedArg {
    /// Round-robin, fixed quantum.
    Rr,
    /// Seeded random thread choice and quantum length.
    Random,
    /// Probabilistic concurrency testing: seeded random priorities and
    /// `--pct-depth` - 1 priority change points among `--pct-steps` steps.
    Pct,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    /// LARD if the program carries LARDx86 code, else binary.
    Auto,
    /// LARD: Tracked accesses and LARDx86 ops.
    Lard,
    /// Binary: program-code accesses and intercepted library calls.
    Binary,
}

#[derive(Clone, Copy, ValueEnum)]
enum ObserveArg {
    /// No per-access observation.
    None,
    /// Tracked accesses only.
    Tracked,
    /// Every data access (memory hook).
    All,
}

#[derive(Clone, Copy, ValueEnum)]
enum SimdArg {
    /// The fastest form this CPU has (AVX-512, else AVX2, else scalar).
    Auto,
    /// One record at a time.
    Scalar,
    /// Four records at a time (AVX2).
    Avx2,
    /// Eight records at a time (AVX-512 F and DQ).
    Avx512,
}

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

#[derive(clap::Args)]
struct RunArgs {
    /// Scheduler seed (also seeds AT_RANDOM and getrandom).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Scheduling policy.
    #[arg(long, value_enum, default_value = "rr")]
    sched: SchedArg,
    /// Quantum in basic blocks (at most 2^25).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=MAX_QUANTUM))]
    quantum: u64,
    /// With --sched pct: the bug depth D (D - 1 priority change points).
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=64))]
    pct_depth: Option<u32>,
    /// With --sched pct: the change points are drawn from scheduling steps
    /// 1..=K (the steps of a run: `--stats`; docs/explore.md).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pct_steps: Option<u64>,
    /// Number of simulated cores.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    cores: u16,
    /// Stop with an error on an unsupported system call instead of returning ENOSYS.
    #[arg(long)]
    strict_syscalls: bool,
    /// Look up the program interpreter, its libraries and every absolute
    /// path the guest opens under DIR first (like qemu-user's -L).
    #[arg(long, short = 'L', value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// Which memory accesses to observe (counted in --stats).
    #[arg(long, value_enum, default_value = "tracked")]
    observe: ObserveArg,
    /// Also observe low-level synchronization (atomics, futexes, clone).
    #[arg(long)]
    observe_sync: bool,
    /// With --detector none --observe all: the form of the counting
    /// observer's pass over each batch of accesses (for measurement and
    /// tests; every form gives the same counts and hash).
    #[arg(long, value_enum, default_value = "auto")]
    simd: SimdArg,
    /// Detection mode: `auto` (LARD for programs with LARDx86 code, binary
    /// mode otherwise; docs/binary-mode.md), `lard` or `binary`.
    #[arg(long, value_enum, default_value = "auto")]
    mode: ModeArg,
    /// Binary mode: functions whose symbol matches this glob (`*`, `?`) are
    /// program code too (repeatable).
    #[arg(long, value_name = "PATTERN")]
    program_code: Vec<String>,
    /// Binary mode: observe every program-code access (no static pruning).
    #[arg(long)]
    no_prune: bool,
    /// Binary mode: write every clock entry into every new language thread's
    /// clock (no clock floors; the same reports, slower with many OpenMP
    /// units).
    #[arg(long)]
    no_clock_floors: bool,
    /// Reach guest memory through unicorn's softmmu TLB on every access
    /// instead of addressing it directly (the same run, slower).
    #[arg(long)]
    no_direct_memory: bool,
    /// Race detector: fasttrack (default), canonical, lardish or object
    /// (object races: ownership states and per-object locksets).
    #[arg(long, value_parser = ["fasttrack", "canonical", "lardish", "object", "none"], default_value = "fasttrack")]
    detector: String,
    /// Run several detector variants on the same execution and compare them
    /// with LARD (LARD paper Table 3): a comma-separated list of lard, allmem,
    /// allsync, noclear, nocopy, nothread, naive, or `all` (those seven), and
    /// `object` (the object race detector beside them; docs/accuracy.md).
    #[arg(long, value_name = "LIST", conflicts_with = "detector")]
    detectors: Option<String>,
    /// With --detectors: run the variants on the emulation thread (the
    /// default; kept for scripts that pass it).
    #[arg(long, conflicts_with = "detector_thread")]
    no_detector_thread: bool,
    /// With --detectors: run the variants on a second host thread, fed in
    /// batches (same results; less wall time only when the host has cores to
    /// spare: on 2 busy cores it costs ≈ 25% more CPU for no wall time,
    /// docs/performance.md).
    #[arg(long)]
    detector_thread: bool,
    /// LARDISH hardware configuration (TOML; docs/lardish.md).
    #[arg(long, value_name = "FILE")]
    hw_config: Option<PathBuf>,
    /// Print LARDISH hardware-model statistics on stderr.
    #[arg(long)]
    hw_stats: bool,
    /// Write LARDISH statistics as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    hw_stats_json: Option<PathBuf>,
    /// What a race does: `report` (count and continue) or `exception`
    /// (fail-stop before the racy access takes effect).
    #[arg(long, value_parser = ["report", "exception"], default_value = "report")]
    on_race: String,
    /// Exit with N when races were reported and the guest exited normally
    /// (like ThreadSanitizer's exitcode).
    #[arg(long, value_name = "N")]
    race_exit_code: Option<u8>,
    /// Write the race report as JSON to FILE (docs/cli.md).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Record the event stream to FILE (replay it without emulation with
    /// `cargo run --release -p lard-detector-hw --example replay -- FILE`).
    #[arg(long, value_name = "FILE")]
    record_trace: Option<PathBuf>,
    /// Adversarial memory (JUMBLE) for Tracked reads of monitored locations:
    /// sc, oldest, oldest-different, random or random-different
    /// (docs/jumble.md). `random*` are seeded by --seed. `none` is plain
    /// memory (JUMBLE's "No Jumble" baseline; --adversarial-at is then not
    /// used).
    #[arg(long, value_name = "HEURISTIC", value_parser = parse_adversarial)]
    adversarial: Option<AdversarialArg>,
    /// Locations to monitor: comma-separated data symbols, data addresses
    /// and PCs (default: the PCs of the races a first FastTrack pass finds).
    #[arg(long, value_name = "LIST", requires = "adversarial")]
    adversarial_at: Option<String>,
    /// Entries per write buffer of adversarial memory.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=64))]
    write_buffer: u64,
    /// Stop the guest after N instructions (all threads), then report
    /// (exit status 120).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_insns: Option<u64>,
    /// Stop the guest after SECONDS of wall-clock time, then report (exit
    /// status 121).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    timeout: Option<std::time::Duration>,
    /// Whether programs the guest runs with execve run under lard too,
    /// with these options (`yes`), or natively (`no`); forked processes
    /// are always emulated (docs/processes.md).
    #[arg(long, value_parser = ["yes", "no"], default_value = "yes", value_name = "yes|no")]
    trace_children: String,
    /// For the lard an `execve` starts: this process's identity.
    #[arg(long, hide = true)]
    process: Option<String>,
    /// For the lard an `execve` starts: the guest's argv[0].
    #[arg(long, hide = true)]
    argv0: Option<std::ffi::OsString>,
    /// For the lard an `execve` starts: the descriptor reports go to.
    #[arg(long, hide = true)]
    report_fd: Option<i32>,
    /// For the lard an `execve` starts: where relative option paths were
    /// given.
    #[arg(long, hide = true)]
    options_dir: Option<PathBuf>,
    /// For the lard an `execve` starts: the guest's signal mask (lard
    /// blocks every signal on the host across the exec, so that none
    /// arrives before this lard can take it).
    #[arg(long, hide = true)]
    sigmask: Option<u64>,
    /// CLOCK_REALTIME at the guest's start, in nanoseconds since the epoch
    /// (default: the host's time; `monitor seed` under --gdb prints the
    /// run's, so that its command line replays the run exactly).
    #[arg(long, value_name = "NS")]
    realtime_start: Option<u64>,
    /// Wait for gdb on ADDR (`host:port`, a port on 127.0.0.1, or a Unix
    /// socket path) before the first instruction (docs/debugging.md).
    #[arg(long, value_name = "ADDR")]
    gdb: Option<lard_emu::gdb::ListenAddr>,
    /// Print run statistics on stderr.
    #[arg(long)]
    stats: bool,
    /// Write run statistics as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// The guest program (looked up in PATH when it has no `/`).
    guest: PathBuf,
    /// Arguments for the guest.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<std::ffi::OsString>,
}

/// A positive, finite number of seconds (fractions allowed).
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e9 {
        return Err(format!("`{s}`: seconds must be positive"));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

/// The first SIGINT or SIGTERM sets the returned flag to the signal number
/// instead of killing lard, so the run loop can stop the guest and still
/// report; a second one kills lard as usual.
fn interrupt_flag() -> Option<Arc<AtomicUsize>> {
    use signal_hook::flag;
    let which = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered = flag::register_conditional_default(sig, seen.clone())
            .and_then(|_| flag::register(sig, seen.clone()))
            .and_then(|_| flag::register_usize(sig, which.clone(), sig as usize));
        if let Err(e) = registered {
            log::warn!("cannot handle signal {sig}: {e}");
            return None;
        }
    }
    Some(which)
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
        Command::Run(args) => run_guest(*args, &log_fd),
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

/// `--adversarial`'s value: a heuristic, or `None` for `none` (plain
/// memory).
#[derive(Clone, Copy, Debug)]
struct AdversarialArg(Option<Heuristic>);

fn parse_adversarial(s: &str) -> Result<AdversarialArg, String> {
    match s {
        "none" => Ok(AdversarialArg(None)),
        h => h.parse().map(|h| AdversarialArg(Some(h))),
    }
}

/// `--jobs J` of a many-run command, or the host's cores without it.
fn jobs_or_cores(jobs: Option<u64>) -> usize {
    jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        |j| j as usize,
    )
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

fn run_guest(mut args: RunArgs, log_fd: &std::sync::atomic::AtomicI32) -> ExitCode {
    let identity = match args.process.as_deref() {
        None => Identity::root(),
        Some(spec) => match Identity::decode(spec) {
            Some(id) => id,
            None => {
                eprintln!("lard: --process {spec}: not a process identity");
                return ExitCode::from(2);
            }
        },
    };
    // The guest's chdir is the process's: every path lard writes or reads
    // after the guest started is made absolute now (relative to where the
    // user gave it, for the lard of an exec'd program).
    let options_dir = args
        .options_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    for path in [
        &mut args.report_json,
        &mut args.hw_stats_json,
        &mut args.stats_json,
        &mut args.record_trace,
        &mut args.sysroot,
        &mut args.hw_config,
    ]
    .into_iter()
    .flatten()
    {
        if path.is_relative() {
            *path = options_dir.join(&*path);
        }
    }
    // What lard was asked to run: its options (for exec'd programs) and
    // the program, found as execvp finds it.
    let cmdline: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let lard_options = {
        let tail = 1 + args.args.len();
        let opts = cmdline
            .get(2..cmdline.len().saturating_sub(tail))
            .unwrap_or(&[]);
        process::inherited_options(opts)
    };
    let mut argv: Vec<Vec<u8>> = vec![args
        .argv0
        .clone()
        .unwrap_or_else(|| args.guest.clone().into_os_string())
        .into_encoded_bytes()];
    argv.extend(args.args.iter().map(|a| a.as_encoded_bytes().to_vec()));
    let mut program = args.guest.clone();
    if !args.guest.as_os_str().as_encoded_bytes().contains(&b'/') {
        match process::find_in_path(args.guest.as_os_str(), std::env::var_os("PATH").as_deref()) {
            Some(p) => program = p,
            None => {
                eprintln!("lard: {}: command not found in PATH", args.guest.display());
                return ExitCode::from(EXIT_NOT_FOUND);
            }
        }
    }
    if let Ok(process::Executable::Script { .. }) = process::classify(&program) {
        match process::resolve(&program, &argv) {
            Ok((interp, script_argv)) => {
                program = interp;
                argv = script_argv;
            }
            Err(e) => {
                let e = std::io::Error::from_raw_os_error(e);
                eprintln!(
                    "lard: {}: cannot run its interpreter: {e}",
                    args.guest.display()
                );
                return ExitCode::from(EXIT_NOT_FOUND);
            }
        }
    }
    let file = match ElfFile::open(&program) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(match e {
                ElfError::Io(..) => EXIT_NOT_FOUND,
                _ => EXIT_NOT_RUNNABLE,
            });
        }
    };
    let adversarial = match args.adversarial.and_then(|a| a.0) {
        None => None,
        Some(_) if matches!(args.observe, ObserveArg::All) => {
            eprintln!("lard: --adversarial needs Tracked observation (not --observe all)");
            return ExitCode::from(2);
        }
        Some(h) => {
            let triggers = match &args.adversarial_at {
                Some(spec) => lard_emu::cmd::adversarial::parse_targets(&file, spec),
                None => {
                    let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard"));
                    let sched = match args.sched {
                        SchedArg::Rr => "rr",
                        SchedArg::Random => "random",
                        SchedArg::Pct => "pct",
                    };
                    let mut run_args: Vec<String> = [
                        "--seed".to_string(),
                        args.seed.to_string(),
                        "--sched".into(),
                        sched.into(),
                        "--quantum".into(),
                        args.quantum.to_string(),
                        "--cores".into(),
                        args.cores.to_string(),
                    ]
                    .into();
                    for (name, v) in [
                        ("--pct-depth", args.pct_depth.map(u64::from)),
                        ("--pct-steps", args.pct_steps),
                    ] {
                        if let Some(v) = v {
                            run_args.extend([name.to_string(), v.to_string()]);
                        }
                    }
                    lard_emu::cmd::adversarial::first_fasttrack_pass(
                        &me,
                        &run_args,
                        &program,
                        &args
                            .args
                            .iter()
                            .map(|a| a.to_string_lossy().into_owned())
                            .collect::<Vec<_>>(),
                    )
                }
            };
            match triggers {
                Ok(triggers) => Some(AdversarialConfig {
                    heuristic: h,
                    seed: args.seed,
                    capacity: args.write_buffer as usize,
                    triggers,
                }),
                Err(e) => {
                    eprintln!("lard: {e}");
                    return ExitCode::from(EXIT_BAD_INPUT);
                }
            }
        }
    };
    let sched = match args.sched {
        SchedArg::Rr | SchedArg::Random if args.pct_depth.is_some() || args.pct_steps.is_some() => {
            eprintln!("lard: --pct-depth and --pct-steps need --sched pct");
            return ExitCode::from(2);
        }
        SchedArg::Rr => SchedPolicy::RoundRobin,
        SchedArg::Random => SchedPolicy::Random,
        SchedArg::Pct => SchedPolicy::Pct {
            depth: args.pct_depth.unwrap_or(PCT_DEPTH),
            steps: args.pct_steps.unwrap_or(PCT_STEPS),
        },
    };
    let mut config = Config {
        seed: args.seed,
        sched,
        quantum: args.quantum,
        cores: args.cores,
        strict_syscalls: args.strict_syscalls,
        sysroot: args.sysroot.clone(),
        adversarial,
        mode: match args.mode {
            // Without a detector nothing is checked: binary mode only on request.
            ModeArg::Auto if args.detector == "none" && args.detectors.is_none() => RunMode::Lard,
            ModeArg::Auto => RunMode::Auto,
            ModeArg::Lard => RunMode::Lard,
            ModeArg::Binary => RunMode::Binary,
        },
        program_code: args.program_code.clone(),
        prune: !args.no_prune,
        clock_floors: !args.no_clock_floors,
        direct_memory: !args.no_direct_memory,
        host_fds: Vec::new(),
        process: identity,
        trace_children: args.trace_children == "yes",
        // Accesses before a process's first thread cannot race: the
        // happens-before detectors need not see them (not the object
        // detector, whose ownership states do; not LARDISH, whose
        // statistics count every access; not the variants).
        skip_single_threaded: args.detectors.is_none()
            && matches!(args.detector.as_str(), "fasttrack" | "canonical"),
        realtime_start: args.realtime_start,
        sigmask: args.sigmask,
    };
    let stderr_copy = match args.report_fd {
        Some(fd) => StderrCopy::adopt(fd),
        None => StderrCopy::save(),
    };
    config.host_fds.extend(stderr_copy.fd());
    if let Some(fd) = stderr_copy.fd() {
        log_fd.store(fd, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(root) = &args.sysroot {
        if !root.is_dir() {
            eprintln!("lard: --sysroot {}: not a directory", root.display());
            return ExitCode::from(EXIT_NOT_FOUND);
        }
    }
    let simd = match args.simd {
        SimdArg::Auto => Simd::best(),
        SimdArg::Scalar => Simd::Scalar,
        SimdArg::Avx2 => Simd::Avx2,
        SimdArg::Avx512 => Simd::Avx512,
    };
    if !simd.available() {
        eprintln!("lard: --simd: this CPU does not run the {simd:?} form");
        return ExitCode::from(2);
    }
    let mode = match args.observe {
        ObserveArg::None => AccessMode::None,
        ObserveArg::Tracked => AccessMode::Tracked,
        ObserveArg::All => AccessMode::All,
    };
    let mut hw_model = None;
    let mut object_det = None;
    let mut race_log = None;
    let mut accuracy = None;
    let detector = if args.detectors.is_some() {
        "variants"
    } else {
        args.detector.as_str()
    };
    let observer: Box<dyn Observer> = match detector {
        "variants" => {
            let list = args.detectors.as_deref().unwrap_or("all");
            let built = parse_variants(list).and_then(|v| AccuracyObserver::new(&v));
            match built {
                Ok((obs, log)) => {
                    accuracy = Some(log);
                    let inline = args.on_race == "exception" || !args.detector_thread;
                    Box::new(
                        obs.raise_on_race(args.on_race == "exception")
                            .inline(inline),
                    )
                }
                Err(e) => {
                    eprintln!("lard: --detectors: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        "none" => Box::new(CountingObserver::new(mode, args.observe_sync).with_simd(simd)),
        "lardish" => {
            let cfg = match &args.hw_config {
                None => HwConfig::default(),
                Some(p) => match std::fs::read_to_string(p) {
                    Err(e) => {
                        eprintln!("lard: cannot read {}: {e}", p.display());
                        return ExitCode::from(EXIT_BAD_INPUT);
                    }
                    Ok(text) => match HwConfig::from_toml_str(&text) {
                        Ok(c) => c,
                        Err(e) => {
                            eprintln!("lard: {}: {e}", p.display());
                            return ExitCode::from(EXIT_BAD_INPUT);
                        }
                    },
                },
            };
            let model = Rc::new(RefCell::new(Lardish::new(cfg)));
            hw_model = Some(model.clone());
            let (obs, log) = DetectorObserver::hardware(model);
            race_log = Some(log);
            Box::new(obs.raise_on_race(args.on_race == "exception"))
        }
        "object" => {
            let det = Rc::new(RefCell::new(ObjectDetector::new()));
            object_det = Some(det.clone());
            let (obs, log) = DetectorObserver::object(det);
            race_log = Some(log);
            Box::new(obs.raise_on_race(args.on_race == "exception"))
        }
        name => {
            let (obs, log) = DetectorObserver::software(name).expect("clap checked the name");
            race_log = Some(log);
            Box::new(obs.raise_on_race(args.on_race == "exception"))
        }
    };
    let observer: Box<dyn Observer> = match &args.record_trace {
        None => observer,
        Some(path) => match std::fs::File::create(path).and_then(hostfd::move_high) {
            Ok(f) => {
                config.host_fds.push(f.as_raw_fd());
                Box::new(lard_emu::observe::observer::RecordingObserver::new(
                    observer, f,
                ))
            }
            Err(e) => {
                eprintln!("lard: cannot create {}: {e}", path.display());
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        },
    };
    let envp: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.into_encoded_bytes();
            e.push(b'=');
            e.extend(v.into_encoded_bytes());
            e
        })
        .collect();
    // lard's own handlers come first: the guest's first thread takes the
    // host's mask (and clears it), and a signal an `execve` kept pending
    // must find them.
    let interrupt = interrupt_flag();
    let mut emu = match Emulator::new(&file, &argv, &envp, config, observer) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("lard: {}: {e}", args.guest.display());
            return ExitCode::from(if e.is_missing_file() {
                EXIT_NOT_FOUND
            } else {
                EXIT_NOT_RUNNABLE
            });
        }
    };
    emu.set_limits(RunLimits {
        max_insns: args.max_insns,
        timeout: args.timeout,
        interrupt,
    });
    let mut gdb_replay = None;
    let mut outcome = match &args.gdb {
        None => emu.run(),
        Some(addr) => {
            let facts = gdb_facts(race_log.clone(), emu.machine().process.realtime_base);
            let announce = &mut |a: &str| eprintln!("lard: waiting for gdb on {a}");
            match lard_emu::gdb::serve(&mut emu, addr, &facts, announce) {
                Ok(served) => {
                    gdb_replay = Some(served.replay);
                    served.outcome
                }
                Err(e) => {
                    eprintln!("lard: --gdb: {e}");
                    return ExitCode::from(EXIT_GDB);
                }
            }
        }
    };
    // After a fork this is the child's identity.
    let identity = emu.machine().config.process;
    if let Outcome::Exec(_) = &outcome {
        // From here to the exec every signal waits (blocked); one that
        // came before it stops the run as it would have a moment earlier.
        lard_emu::linux::signals::host::block_for_exec(!0);
        if let Some(sig) = emu.interrupted() {
            outcome = Outcome::Stopped(StopReason::Signal(sig));
        }
    }
    // Everything this process reports goes out in one write at the end
    // (labelled with its pid when it is part of a process tree), so the
    // reports of processes that end together do not interleave.
    let mut out = String::new();
    let mut status = report_outcome(&emu, &outcome, &args.guest, &mut out);
    let mut failed_writes = Vec::new();
    let mut write_file = |path: &Option<PathBuf>, text: &str| {
        let Some(path) = path
            .as_deref()
            .and_then(|p| process::per_process_path(p, &identity))
        else {
            return;
        };
        if let Err(e) = std::fs::write(&path, text) {
            failed_writes.push(format!("lard: cannot write {}: {e}\n", path.display()));
        }
    };
    let mut races = 0;
    let mut race_text = String::new();
    if let Some(log) = &race_log {
        let log = log.borrow();
        races = log.dre;
        let extra = match &object_det {
            Some(det) => {
                let det = det.borrow();
                race_text.push_str(&objects::text(&det, emu.machine()));
                objects::json_fields(&det, emu.machine())
            }
            None => {
                race_text.push_str(&log.text(emu.machine()));
                String::new()
            }
        };
        let json = format!(
            "{{\"detectors\":{{{}}}}}\n",
            log.json_with(emu.machine(), &extra)
        );
        write_file(&args.report_json, &json);
    }
    if let Some(acc) = &accuracy {
        let acc = acc.borrow();
        races = acc.lard().dre;
        race_text.push_str(&acc.lard().text(emu.machine()));
        race_text.push_str(&acc.table());
        write_file(&args.report_json, &acc.json(emu.machine()));
    }
    if let (Some(code), Outcome::Exited(_)) = (args.race_exit_code, &outcome) {
        if races > 0 {
            status = code;
        }
    }
    // A process lard started for the guest reports in full when it found
    // races, in one line when not.
    if identity.descendant && races == 0 && !race_text.is_empty() {
        let what = match (&race_log, &accuracy) {
            (Some(log), _) => log.borrow().detector,
            _ => "variants",
        };
        race_text = format!("lard ({what}): no races\n");
    }
    out.push_str(&race_text);
    if let Some(model) = &hw_model {
        let mut model = model.borrow_mut();
        for t in &emu.machine().cpu.threads {
            model.add_instructions(t.core, t.insns);
        }
        if args.hw_stats {
            out.push_str(&model.stats().to_string());
        }
        write_file(&args.hw_stats_json, &model.stats().to_json());
    }
    if let (Some(adv), Some(c)) = (
        &emu.machine().obs.adversary,
        &emu.machine().config.adversarial,
    ) {
        out.push_str(&lard_emu::cmd::adversarial::summary(
            adv.memory.heuristic(),
            &adv.memory.stats(),
            &c.triggers,
        ));
    }
    if args.stats {
        out.push_str(&emu.report().text());
    }
    write_file(&args.stats_json, &emu.report().json());
    if !failed_writes.is_empty() {
        out.extend(failed_writes);
        status = EXIT_INTERNAL;
    }
    if identity.labelled {
        out = label_report(&out, &identity, &argv);
    }
    if let Outcome::Exec(req) = &outcome {
        // The program before the exec reports only what it found: its
        // races (shells fork and exec for every command).
        if races > 0 {
            emit_report(&out, stderr_copy.fd());
        }
        let err = if args.trace_children == "yes" {
            let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
            process::exec_lard(
                &me,
                &lard_options,
                &identity,
                stderr_copy.fd(),
                &options_dir,
                req,
            )
        } else {
            process::exec_native(req)
        };
        log_fd.store(2, std::sync::atomic::Ordering::Relaxed);
        stderr_copy.restore();
        eprintln!("lard: cannot execute {}: {err}", req.path.display());
        return ExitCode::from(EXIT_INTERNAL);
    }
    // The guest's file descriptors are lard's: a guest that closed (or
    // reopened) fd 2, as every coreutils program does at exit, must not
    // swallow the report.
    log_fd.store(2, std::sync::atomic::Ordering::Relaxed);
    stderr_copy.restore();
    emit_report(&out, None);
    // A process a guest started dies of its guest's signal, so that its
    // parent's wait sees what it would natively.
    // So does one lard's own SIGINT/SIGTERM handler stopped (the guest
    // left the signal at its default action).
    if identity.descendant {
        if let Outcome::Signaled { signal, .. } | Outcome::Stopped(StopReason::Signal(signal)) =
            outcome
        {
            process::die_of(signal);
        }
    }
    // Under --gdb with reverse execution, this process may be a replay's:
    // the process the shell started exits with the status.
    if let Some(r) = &gdb_replay {
        r.relay_exit(status);
    }
    ExitCode::from(status)
}

/// What `lard run --gdb`'s monitor commands know: the command line that
/// replays this run (without `--gdb`, with the run's `--realtime-start`),
/// the race report so far.
fn gdb_facts(race_log: Option<Rc<RefCell<RaceLog>>>, realtime: u64) -> lard_emu::gdb::MonitorData {
    let mut words: Vec<String> = Vec::new();
    let mut args = std::env::args().peekable();
    while let Some(a) = args.next() {
        if a == "--gdb" {
            args.next();
            continue;
        }
        if a.starts_with("--gdb=") {
            continue;
        }
        words.push(a);
    }
    // The guest's only input from the host clock, pinned.
    if !words.iter().any(|w| w.starts_with("--realtime-start")) {
        let at = words.len().min(2);
        words.splice(
            at..at,
            ["--realtime-start".to_string(), realtime.to_string()],
        );
    }
    let replay_command = words
        .iter()
        .map(|w| lard_emu::cmd::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    lard_emu::gdb::MonitorData {
        replay_command,
        race_text: race_log
            .map(|log| -> lard_emu::gdb::RaceText { Box::new(move |m| log.borrow().text(m)) }),
    }
}

/// `text` with every line prefixed by the process's `==PID==` label, after
/// a first line naming the process.
fn label_report(text: &str, identity: &Identity, argv: &[Vec<u8>]) -> String {
    let label = identity.label();
    let cmd: Vec<String> = argv
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut s = format!(
        "{label} process {} (parent {}): {}\n",
        identity.pid,
        identity.ppid,
        cmd.join(" ")
    );
    for line in text.lines() {
        s.push_str(&label);
        s.push(' ');
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// Writes a report in one `write` (to `fd`, else stderr).
fn emit_report(text: &str, fd: Option<i32>) {
    use std::io::Write;
    if text.is_empty() {
        return;
    }
    match fd {
        Some(fd) => {
            // SAFETY: fd is a descriptor this process owns; ManuallyDrop
            // keeps it open.
            let mut f = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
            });
            let _ = f.write_all(text.as_bytes());
        }
        None => {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

/// Says what ended the run (in `out`) and returns lard's exit status.
fn report_outcome(emu: &Emulator, outcome: &Outcome, guest: &Path, out: &mut String) -> u8 {
    use std::fmt::Write as _;
    let g = guest.display();
    match outcome {
        Outcome::Exited(code) => (*code & 0xff) as u8,
        Outcome::Signaled { signal, fault } => {
            if let Some(f) = fault {
                let t = &emu.machine().cpu.threads[emu.machine().cpu.cur];
                let addr = f
                    .addr
                    .map_or(String::new(), |a| format!(" at address {a:#x}"));
                let _ = writeln!(
                    out,
                    "lard: {g}: thread {}: {}{addr} (signal {signal}) at {}",
                    t.tid,
                    f.what,
                    emu.describe(f.pc)
                );
            } else {
                let _ = writeln!(out, "lard: {g}: killed by signal {signal}");
            }
            (128 + signal).clamp(0, 255) as u8
        }
        Outcome::Deadlock(report) => {
            let _ = writeln!(out, "lard: {g}: {report}");
            EXIT_DEADLOCK
        }
        Outcome::UnsupportedSyscall { nr, pc } => {
            let _ = writeln!(
                out,
                "lard: {g}: unsupported system call {nr} ({}) at {} (--strict-syscalls)",
                lard_emu::linux::syscalls::name(*nr),
                emu.describe(*pc)
            );
            EXIT_UNSUPPORTED_SYSCALL
        }
        Outcome::Stopped(why) => {
            let insns = emu.machine().obs.stats.insns;
            match why {
                StopReason::MaxInsns(_) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by --max-insns after {insns} instructions"
                    );
                    EXIT_MAX_INSNS
                }
                StopReason::Timeout(t) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by --timeout {}s after {insns} instructions",
                        t.as_secs_f64()
                    );
                    EXIT_TIMEOUT
                }
                StopReason::Signal(sig) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by signal {sig} after {insns} instructions"
                    );
                    (128 + sig).clamp(0, 255) as u8
                }
            }
        }
        Outcome::Paused => {
            let _ = writeln!(out, "lard: {g}: the run was left paused");
            EXIT_INTERNAL
        }
        Outcome::ObserverStop { pc } => {
            let t = &emu.machine().cpu.threads[emu.machine().cpu.cur];
            let _ = writeln!(
                    out,
                "lard: {g}: data-race exception in thread {}: the racy access did not take effect: {}",
                t.tid,
                emu.describe(*pc)
            );
            EXIT_RACE_EXCEPTION
        }
        Outcome::Exec(_) => 0,
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
