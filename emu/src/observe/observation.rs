//! The observation part of the machine: what is observed, by whom, and
//! what it takes to decide (the code map, binary mode's runtime,
//! adversarial memory, stacks, the statistics).

use crate::binary::objects::ObjectRegistry;
use crate::cpu::code::{AddrMap, CodeMap};
use crate::cpu::stacks::StackMap;
use crate::cpu::uc::AccessBuffer;
use crate::intercept::names::LangUnits;
use crate::intercept::InterceptTable;
use crate::machine::adversarial::Adversary;
use crate::observe::observer::{AccessMode, Observer};
use crate::observe::repeats::RepeatFilter;
use crate::observe::stats::Stats;

/// The observation part of the machine ([`crate::machine::Machine::obs`]).
pub struct Observation {
    /// Where events go.
    pub observer: Box<dyn Observer>,
    /// How accesses are observed: chosen once, when the run's mode is
    /// known ([`Policy::choose`]).
    pub policy: Policy,
    /// Whether low-level synchronization is reported.
    pub report_sync: bool,
    /// Whether static objects and Block/Wake are reported
    /// ([`Observer::wants_objects`]).
    pub report_objects: bool,
    /// The observer applies clock floors (`Observer::accepts_floors`):
    /// binary mode's runtime may raise them.
    pub floors: bool,
    /// Counters.
    pub stats: Stats,
    /// Every ELF object mapped into the guest: symbols, lines and data
    /// naming for reports and messages (docs/dynamic.md).
    pub objects: ObjectRegistry,
    /// Stack mappings of all threads.
    pub stacks: StackMap,
    /// LARD sites and block sizes.
    pub code: CodeMap,
    /// PCs with an instruction call, and what it does ([`call`](crate::machine::call) bits).
    pub calls: AddrMap<u8>,
    /// Intercepted guest functions (program events).
    pub intercepts: InterceptTable,
    /// What each OpenMP language thread ran (task, section, loop chunk,
    /// team), for reports: binary mode's runtime and the lard-cc runtime's
    /// `lardcc_note_unit` fill it.
    pub lang_units: LangUnits,
    /// Adversarial memory (`None` when off: no extra hooks, no cost).
    pub adversary: Option<Box<Adversary>>,
    /// The executable's `lard_caller_pc` section `[start, end)` (empty if none):
    /// Tracked accesses there are attributed to their caller's call site.
    pub caller_pc_range: (u64, u64),
    /// The lard-cc runtime's call-stack table (`lardcc_stack_nodes`), 0 if
    /// the executable has none: then the stubs of `caller_pc_range` hand the
    /// current call-stack id over in `%ecx` (observe::callstack).
    pub call_stacks: u64,
    /// A Go program built without lard's race runtime, run unchecked:
    /// binary mode would check Go's scheduler and collector as program
    /// code (docs/go.md).
    pub unchecked_go: bool,
    /// The races (pc, previous pc) printed while the guest ran
    /// (`lard_note_report_count`), with their count when printed.
    pub printed_races: std::collections::BTreeMap<(u64, u64), u64>,
    /// The local variables of the stack addresses races are on
    /// (observe::locals).
    pub locals: crate::observe::locals::LocalNames,
    /// Binary mode (program without LARDx86 code), when it runs.
    pub binary: Option<Box<crate::intercept::runtime::BinaryRuntime>>,
    /// Buffered observation (unicorn patch 0008), when on: `--observe all`
    /// in LARD mode for an observer that never stops on an access
    /// ([`Machine::install_hooks`](crate::machine::Machine::install_hooks)).
    pub access_buffer: Option<AccessBuffer>,
    /// Binary mode's repeated checked accesses, counted without delivery
    /// (observe::repeats; off outside binary mode).
    pub repeats: RepeatFilter,
}

/// How a run observes accesses: chosen once, when the run's mode is known,
/// and the one input of every per-PC and per-access decision
/// ([`Machine::observes`](crate::machine::Machine::observes), the access
/// callback, the hooks installed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// No access is observed, only instruction calls (`--observe none`).
    Calls,
    /// LARD mode: Tracked accesses, delivered by translated code (the
    /// default).
    LardTracked,
    /// LARD mode: every access, Tracked ones tagged (`--observe all`).
    LardAll,
    /// LARD mode with adversarial memory: Tracked accesses are delivered by
    /// their instruction call, around which adversarial memory acts;
    /// `deliver` when the observer wants them (else only adversarial memory
    /// sees them).
    Adversarial {
        /// The observer wants Tracked accesses.
        deliver: bool,
    },
    /// Binary mode: every access is seen, and binary mode's runtime
    /// decides which are checked
    /// ([`BinaryRuntime::classify`](crate::intercept::runtime::BinaryRuntime::classify)).
    Binary,
}

impl Policy {
    /// The policy for an observer that asked for `mode`, in binary mode or
    /// not, with adversarial memory or not. (Adversarial memory acts on
    /// Tracked accesses only, so with `--observe all` in LARD mode it acts
    /// from the Tracked sites' instruction calls while translated code
    /// delivers every access.)
    pub fn choose(mode: AccessMode, binary: bool, adversarial: bool) -> Policy {
        match (mode, binary, adversarial) {
            (AccessMode::None, false, false) => Policy::Calls,
            (_, true, _) => Policy::Binary,
            (AccessMode::All, false, _) => Policy::LardAll,
            (mode, false, true) => Policy::Adversarial {
                deliver: mode == AccessMode::Tracked,
            },
            (AccessMode::Tracked, false, false) => Policy::LardTracked,
        }
    }

    /// The accesses that reach the observer, in `--stats`' words: binary
    /// mode sees every access (and filters them itself).
    pub fn observed(self) -> AccessMode {
        match self {
            Policy::Calls | Policy::Adversarial { deliver: false } => AccessMode::None,
            Policy::LardTracked | Policy::Adversarial { deliver: true } => AccessMode::Tracked,
            Policy::LardAll | Policy::Binary => AccessMode::All,
        }
    }
}
