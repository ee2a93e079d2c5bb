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
use crate::observe::stats::Stats;

/// The observation part of the machine ([`crate::machine::Machine::obs`]).
pub struct Observation {
    /// Where events go.
    pub observer: Box<dyn Observer>,
    /// Access mode the observer asked for.
    pub mode: AccessMode,
    /// Whether low-level synchronization is reported.
    pub report_sync: bool,
    /// Whether static objects and Block/Wake are reported
    /// ([`Observer::wants_objects`](crate::observe::observer::Observer::wants_objects)).
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
    /// PCs with an instruction call, and what it does ([`call`] bits).
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
    /// Binary mode (program without LARDx86 code), when it runs.
    pub binary: Option<Box<crate::intercept::runtime::BinaryRuntime>>,
    /// Buffered observation (unicorn patch 0008), when on: `--observe all`
    /// in LARD mode for an observer that never stops on an access
    /// ([`Machine::install_hooks`]).
    pub access_buffer: Option<AccessBuffer>,
}
