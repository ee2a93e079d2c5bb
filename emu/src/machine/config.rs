//! The emulator's configuration.

use crate::cpu::sched::SchedPolicy;
use crate::linux::process::Identity;
use lard_detector_hw::adversarial::AdversarialConfig;

/// Emulator configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Scheduler PRNG seed (also seeds AT_RANDOM and getrandom).
    pub seed: u64,
    /// Scheduling policy.
    pub sched: SchedPolicy,
    /// Quantum in basic blocks.
    pub quantum: u64,
    /// Number of simulated cores.
    pub cores: u16,
    /// Stop on unknown system calls instead of returning ENOSYS.
    pub strict_syscalls: bool,
    /// `--sysroot`: where the guest's absolute paths are looked up first.
    pub sysroot: Option<std::path::PathBuf>,
    /// Adversarial memory for Tracked reads (`--adversarial`), if on.
    pub adversarial: Option<AdversarialConfig>,
    /// LARD or binary mode (docs/binary-mode.md).
    pub mode: RunMode,
    /// `--program-code` patterns: functions (and, with dynamic loading,
    /// objects) that are program code besides the executable's own.
    pub program_code: Vec<String>,
    /// Binary mode: prune accesses that cannot race (`--no-prune` clears it).
    pub prune: bool,
    /// Binary mode: raise clock floors where the observer applies them
    /// (`--no-clock-floors` clears it; emu/src/machine/binary/floors.rs).
    pub clock_floors: bool,
    /// Translated code addresses guest memory below the direct window's end
    /// as host memory (`--no-direct-memory` clears it; cpu/memory.rs).
    pub direct_memory: bool,
    /// Binary mode: count a thread's repeated checked accesses without
    /// delivering them (`--no-repeat-filter` clears it; observe::repeats).
    pub repeat_filter: bool,
    /// Host descriptors lard owns while the guest runs (its stderr copy, the
    /// trace file): the guest can neither close nor replace them
    /// ([`crate::linux::hostfd`]).
    pub host_fds: Vec<i32>,
    /// Where reports go while the guest runs (lard's saved stderr; `None`:
    /// stderr).
    pub report_fd: Option<i32>,
    /// This process's place in its process tree (pids the guest sees).
    pub process: Identity,
    /// Whether programs the guest `execve`s run under lard too
    /// (`--trace-children`); when not, they run natively.
    pub trace_children: bool,
    /// Binary mode: check no access while the process has one thread
    /// (for detectors whose verdicts depend on happens-before only).
    pub skip_single_threaded: bool,
    /// CLOCK_REALTIME at the guest's start, in nanoseconds since the epoch
    /// (`--realtime-start`; `None`: the host's time when the run starts).
    pub realtime_start: Option<u64>,
    /// The first thread's signal mask when the lard of an `execve` was
    /// told it (`None`: the mask lard inherited on the host, as for a
    /// program the user started).
    pub sigmask: Option<u64>,
    /// `--suppressions`: the races no report shows
    /// ([`crate::report::reported`]).
    pub suppressions: std::sync::Arc<crate::report::suppressions::Suppressions>,
}

/// Which race-detection mode a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RunMode {
    /// LARD when the executable carries LARDx86 code, else binary.
    #[default]
    Auto,
    /// LARD: Tracked accesses and LARDx86 ops only.
    Lard,
    /// Binary: program-code accesses, intercepted library calls.
    Binary,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 0,
            sched: SchedPolicy::RoundRobin,
            quantum: 1000,
            cores: 8,
            strict_syscalls: false,
            sysroot: None,
            adversarial: None,
            mode: RunMode::Auto,
            program_code: Vec::new(),
            prune: true,
            clock_floors: true,
            direct_memory: true,
            repeat_filter: true,
            host_fds: Vec::new(),
            report_fd: None,
            process: Identity::root(),
            trace_children: true,
            skip_single_threaded: false,
            realtime_start: None,
            sigmask: None,
            suppressions: Default::default(),
        }
    }
}
