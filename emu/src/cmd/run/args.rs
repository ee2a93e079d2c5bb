//! `lard run`'s command line: the options, and the value enums clap
//! parses them into (each accepted spelling is a variant's kebab-case
//! name).

use clap::ValueEnum;
use lard_detector_hw::adversarial::Heuristic;
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum SchedArg {
    /// Round-robin, fixed quantum.
    Rr,
    /// Seeded random thread choice and quantum length.
    Random,
    /// Probabilistic concurrency testing: seeded random priorities and
    /// `--pct-depth` - 1 priority change points among `--pct-steps` steps.
    Pct,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum ModeArg {
    /// LARD if the program carries LARDx86 code, else binary.
    Auto,
    /// LARD: Tracked accesses and LARDx86 ops.
    Lard,
    /// Binary: program-code accesses and intercepted library calls.
    Binary,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum ObserveArg {
    /// No per-access observation.
    None,
    /// Tracked accesses only.
    Tracked,
    /// Every data access (memory hook).
    All,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum SimdArg {
    /// The fastest form this CPU has (AVX-512, else AVX2, else scalar).
    Auto,
    /// One record at a time.
    Scalar,
    /// Four records at a time (AVX2).
    Avx2,
    /// Eight records at a time (AVX-512 F and DQ).
    Avx512,
}

/// `--detector`: the race detector behind the observer. The variants carry
/// no doc comments: `--help` lists their names only.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum DetectorArg {
    // FastTrack (detector-hw).
    Fasttrack,
    // The canonical vector-clock detector (detector-hw).
    Canonical,
    // LARDISH, the hardware model.
    Lardish,
    // Object races: ownership states and per-object locksets.
    Object,
    // No detector: the counting observer.
    None,
}

impl DetectorArg {
    /// The name `--detector` takes.
    pub(super) fn name(self) -> &'static str {
        match self {
            DetectorArg::Fasttrack => "fasttrack",
            DetectorArg::Canonical => "canonical",
            DetectorArg::Lardish => "lardish",
            DetectorArg::Object => "object",
            DetectorArg::None => "none",
        }
    }
}

/// `--on-race`: what a race does.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum OnRace {
    // Count it and continue.
    Report,
    // Fail-stop before the racy access takes effect.
    Exception,
}

/// `--trace-children`: whether programs the guest `execve`s run under lard.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum TraceChildren {
    // Under lard, with this run's options.
    Yes,
    // Natively.
    No,
}

/// `lard run`'s options and the guest's command line.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Scheduler seed (also seeds AT_RANDOM and getrandom).
    #[arg(long, default_value_t = 0)]
    pub(super) seed: u64,
    /// Scheduling policy.
    #[arg(long, value_enum, default_value = "rr")]
    pub(super) sched: SchedArg,
    /// Quantum in basic blocks (at most 2^25).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=super::MAX_QUANTUM))]
    pub(super) quantum: u64,
    /// With --sched pct: the bug depth D (D - 1 priority change points).
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(super) pct_depth: Option<u32>,
    /// With --sched pct: the change points are drawn from scheduling steps
    /// 1..=K (the steps of a run: `--stats`; docs/explore.md).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) pct_steps: Option<u64>,
    /// Number of simulated cores.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(super) cores: u16,
    /// Stop with an error on an unsupported system call instead of returning ENOSYS.
    #[arg(long)]
    pub(super) strict_syscalls: bool,
    /// Look up the program interpreter, its libraries and every absolute
    /// path the guest opens under DIR first (like qemu-user's -L).
    #[arg(long, short = 'L', value_name = "DIR")]
    pub(super) sysroot: Option<PathBuf>,
    /// Which memory accesses to observe (counted in --stats).
    #[arg(long, value_enum, default_value = "tracked")]
    pub(super) observe: ObserveArg,
    /// Also observe low-level synchronization (atomics, futexes, clone).
    #[arg(long)]
    pub(super) observe_sync: bool,
    /// With --detector none --observe all: the form of the counting
    /// observer's pass over each batch of accesses (for measurement and
    /// tests; every form gives the same counts and hash).
    #[arg(long, value_enum, default_value = "auto")]
    pub(super) simd: SimdArg,
    /// Detection mode: `auto` (LARD for programs with LARDx86 code, binary
    /// mode otherwise; docs/binary-mode.md), `lard` or `binary`.
    #[arg(long, value_enum, default_value = "auto")]
    pub(super) mode: ModeArg,
    /// Binary mode: functions whose symbol matches this glob (`*`, `?`) are
    /// program code too (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub(super) program_code: Vec<String>,
    /// Binary mode: observe every program-code access (no static pruning).
    #[arg(long)]
    pub(super) no_prune: bool,
    /// Binary mode: write every clock entry into every new language thread's
    /// clock (no clock floors; the same reports, slower with many OpenMP
    /// units).
    #[arg(long)]
    pub(super) no_clock_floors: bool,
    /// Reach guest memory through unicorn's softmmu TLB on every access
    /// instead of addressing it directly (the same run, slower).
    #[arg(long)]
    pub(super) no_direct_memory: bool,
    /// Binary mode: deliver every checked access to the detector, also the
    /// repeats FastTrack's same-epoch rule ignores (the same run, slower).
    #[arg(long)]
    pub(super) no_repeat_filter: bool,
    /// Race detector: fasttrack (default), canonical, lardish or object
    /// (object races: ownership states and per-object locksets).
    #[arg(long, value_enum, default_value = "fasttrack")]
    pub(super) detector: DetectorArg,
    /// Run several detector variants on the same execution and compare them
    /// with LARD (LARD paper Table 3): a comma-separated list of lard, allmem,
    /// allsync, noclear, nocopy, nothread, naive, or `all` (those seven), and
    /// `object` (the object race detector beside them; docs/accuracy.md).
    #[arg(long, value_name = "LIST", conflicts_with = "detector")]
    pub(super) detectors: Option<String>,
    /// With --detectors: run the variants on the emulation thread (the
    /// default; kept for scripts that pass it).
    #[arg(long, conflicts_with = "detector_thread")]
    pub(super) no_detector_thread: bool,
    /// With --detectors: run the variants on a second host thread, fed in
    /// batches (same results; less wall time only when the host has cores to
    /// spare: on 2 busy cores it costs ≈ 25% more CPU for no wall time,
    /// docs/performance.md).
    #[arg(long)]
    pub(super) detector_thread: bool,
    /// LARDISH hardware configuration (TOML; docs/lardish.md).
    #[arg(long, value_name = "FILE")]
    pub(super) hw_config: Option<PathBuf>,
    /// Print LARDISH hardware-model statistics on stderr.
    #[arg(long)]
    pub(super) hw_stats: bool,
    /// Write LARDISH statistics as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(super) hw_stats_json: Option<PathBuf>,
    /// With --detector lardish: write the model's instruction-level
    /// profile as JSON to FILE — per guest instruction, the checks,
    /// evictions, rollovers, history operations and cycles it caused
    /// (docs/lardish.md, "Instruction profile").
    #[arg(long, value_name = "FILE")]
    pub(super) hw_profile: Option<PathBuf>,
    /// What a race does: `report` (count and continue) or `exception`
    /// (fail-stop before the racy access takes effect).
    #[arg(long, value_enum, default_value = "report")]
    pub(super) on_race: OnRace,
    /// Exit with N when races were reported and the guest exited normally
    /// (like ThreadSanitizer's exitcode).
    #[arg(long, value_name = "N")]
    pub(super) race_exit_code: Option<u8>,
    /// Suppressions file in ThreadSanitizer's format (`race:PATTERN`,
    /// `called_from_lib:LIB`, `#` comments): matching races are counted,
    /// not reported, and set no race exit status (repeatable; docs/cli.md).
    #[arg(long, value_name = "FILE")]
    pub(super) suppressions: Vec<PathBuf>,
    /// Print a suppression entry for every reported race.
    #[arg(long)]
    pub(super) gen_suppressions: bool,
    /// Write the race report as JSON to FILE (docs/cli.md).
    #[arg(long, value_name = "FILE")]
    pub(super) report_json: Option<PathBuf>,
    /// Write the reported races as a SARIF 2.1.0 log to FILE, for GitHub
    /// code scanning and CI dashboards (`%p`: per process, as for
    /// --report-json).
    #[arg(long, value_name = "FILE")]
    pub(super) sarif: Option<PathBuf>,
    /// Write the reported races as one self-contained HTML page to FILE:
    /// both stacks with the source around each line, heap blocks and
    /// their allocation sites, the threads (`%p`: per process).
    #[arg(long, value_name = "FILE")]
    pub(super) report_html: Option<PathBuf>,
    /// Record the event stream to FILE (replay it without emulation with
    /// `cargo run --release -p lard-detector-hw --example replay -- FILE`).
    #[arg(long, value_name = "FILE")]
    pub(super) record_trace: Option<PathBuf>,
    /// Adversarial memory (JUMBLE) for Tracked reads of monitored locations:
    /// sc, oldest, oldest-different, random or random-different
    /// (docs/jumble.md). `random*` are seeded by --seed. `none` is plain
    /// memory (JUMBLE's "No Jumble" baseline; --adversarial-at is then not
    /// used).
    #[arg(long, value_name = "HEURISTIC", value_parser = parse_adversarial)]
    pub(super) adversarial: Option<AdversarialArg>,
    /// Locations to monitor: comma-separated data symbols, data addresses
    /// and PCs (default: the PCs of the races a first FastTrack pass finds).
    #[arg(long, value_name = "LIST", requires = "adversarial")]
    pub(super) adversarial_at: Option<String>,
    /// Entries per write buffer of adversarial memory.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub(super) write_buffer: u64,
    /// Stop the guest after N instructions (all threads), then report
    /// (exit status 120).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) max_insns: Option<u64>,
    /// Stop the guest after SECONDS of wall-clock time, then report (exit
    /// status 121).
    #[arg(long, value_name = "SECONDS", value_parser = crate::cmd::parse_seconds)]
    pub(super) timeout: Option<std::time::Duration>,
    /// Whether programs the guest runs with execve run under lard too,
    /// with these options (`yes`), or natively (`no`); forked processes
    /// are always emulated (docs/processes.md).
    #[arg(long, value_enum, default_value = "yes", value_name = "yes|no")]
    pub(super) trace_children: TraceChildren,
    /// For the lard an `execve` starts: this process's identity.
    #[arg(long, hide = true)]
    pub(super) process: Option<String>,
    /// For the lard an `execve` starts: the guest's argv[0].
    #[arg(long, hide = true)]
    pub(super) argv0: Option<std::ffi::OsString>,
    /// For the lard an `execve` starts: the descriptor reports go to.
    #[arg(long, hide = true)]
    pub(super) report_fd: Option<i32>,
    /// For the lard an `execve` starts: where relative option paths were
    /// given.
    #[arg(long, hide = true)]
    pub(super) options_dir: Option<PathBuf>,
    /// For the lard an `execve` starts: the guest's signal mask (lard
    /// blocks every signal on the host across the exec, so that none
    /// arrives before this lard can take it).
    #[arg(long, hide = true)]
    pub(super) sigmask: Option<u64>,
    /// CLOCK_REALTIME at the guest's start, in nanoseconds since the epoch
    /// (default: the host's time; `monitor seed` under --gdb prints the
    /// run's, so that its command line replays the run exactly).
    #[arg(long, value_name = "NS")]
    pub(super) realtime_start: Option<u64>,
    /// Wait for gdb on ADDR (`host:port`, a port on 127.0.0.1, or a Unix
    /// socket path) before the first instruction (docs/debugging.md).
    #[arg(long, value_name = "ADDR")]
    pub(super) gdb: Option<crate::gdb::ListenAddr>,
    /// Print run statistics on stderr.
    #[arg(long)]
    pub(super) stats: bool,
    /// Write run statistics as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(super) stats_json: Option<PathBuf>,
    /// The guest program (looked up in PATH when it has no `/`).
    pub(super) guest: PathBuf,
    /// Arguments for the guest.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(super) args: Vec<std::ffi::OsString>,
}

/// `--adversarial`'s value: a heuristic, or `None` for `none` (plain
/// memory).
#[derive(Clone, Copy, Debug)]
pub(super) struct AdversarialArg(pub(super) Option<Heuristic>);

fn parse_adversarial(s: &str) -> Result<AdversarialArg, String> {
    match s {
        "none" => Ok(AdversarialArg(None)),
        h => h.parse().map(|h| AdversarialArg(Some(h))),
    }
}

impl SchedArg {
    /// The name `--sched` takes.
    pub(super) fn name(self) -> &'static str {
        match self {
            SchedArg::Rr => "rr",
            SchedArg::Random => "random",
            SchedArg::Pct => "pct",
        }
    }
}
