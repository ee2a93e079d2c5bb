//! The emulated machine: one unicorn CPU multiplexed deterministically over
//! the guest's threads, with the LARDx86 units (the run loop that drives it
//! is [`crate::run`]).
//!
//! Hooks are raw `extern "C"` callbacks whose user data is the boxed
//! [`Machine`]; they run on the emulation thread while `uc_emu_start` is
//! active, and are the only code that touches the machine during that time.
//! Observation is decided when code is translated ([`Machine::observes`],
//! unicorn patch 0004): observed accesses and instruction calls (LARD
//! sites, intercepted entries) reach the machine without unicorn's hook
//! lists or its per-access PC recovery.
//!
//! The machine has three parts: the CPU ([`Cpu`]: unicorn, guest memory,
//! threads, scheduling, virtual time and the LARDx86 units), the Linux
//! process ([`Process`]: signals, pids, descriptors, exec state) and
//! observation ([`Observation`]: the observer and the observation policy,
//! statistics, the code map, binary mode's runtime, adversarial memory).
//! Events leave through one place ([`Machine::emit_from`]). The Linux
//! process works on a view of the machine that holds only what it may
//! touch ([`crate::linux::kernel::Kernel`], entered from `kernel.rs`) and
//! tells observation what happened through notices, acted on at the
//! notification points (code appearing and going away, `mapping.rs`; a
//! thread's and the process's life, `lifecycle.rs`). Binary mode's
//! runtime keeps its state and rules in [`crate::intercept::runtime`]; its
//! actions, which read the guest's registers and emit events, are the
//! machine's (`binary/`).

pub mod adversarial;
mod binary;
mod config;
mod cpu;
mod describe;
mod events;
mod hooks;
mod kernel;
mod lard_ops;
mod lifecycle;
mod mapping;
mod observes;
mod ranges;
mod reports;
mod stop;
mod thread;

pub use crate::linux::state::Process;
pub use crate::observe::observation::Observation;
pub use config::{Config, RunMode};
pub use cpu::Cpu;
pub use lard_ops::{call_before, gpr_reg};
pub use observes::{call, Observe};
pub use stop::{GuestFault, Stop};
pub use thread::{thread_name, Thread, ThreadState, Wait};

use crate::cpu::uc::observe;
use crate::observe::observer::AccessRecord;
use crate::observe::stats::AccessTally;

/// Process id the guest sees; the main thread's tid is the same.
pub const GUEST_PID: u32 = 4000;

// A buffered entry's info is an AccessRecord's bits (Machine::deliver_buffered).
const _: () = {
    assert!(AccessRecord::SIZE == observe::SIZE_MASK as u64);
    assert!(AccessRecord::WRITE == observe::WRITE as u64);
    assert!(AccessRecord::TRACKED == (Observe::TRACKED as u64) << observe::TAG_SHIFT);
    assert!(AccessRecord::STACK & (observe::HELPER as u64 | 0xffff_0000) == 0);
};

/// Entries the access buffer holds before a block entry flushes it (24
/// bytes each: 96 KiB, the order of a host L2's share, small enough that
/// the entries are still cached when the emulator reads them).
const ACCESS_BUFFER_ENTRIES: usize = 4096;
// A batch (at most the buffer's capacity) fits one AccessTally.
const _: () = assert!(
    (ACCESS_BUFFER_ENTRIES + crate::cpu::access_buffer::BUFFER_SLACK) as u64 <= AccessTally::MAX
);

/// From this many Tracked sites in the scanned code on, their accesses are
/// made inside the observation call ([`Observe::in_helper`]): at ~120 bytes
/// of translated code per site in the inline form, 8,192 sites fill a 1 MB
/// L2 (this host's; docs/performance-design.md, "Tracked sites in one call"). Below it,
/// the inline form is ~2 ns per access cheaper — and lard-cc programs, whose
/// Tracked accesses are in a few dozen runtime stubs, stay there.
pub const IN_HELPER_SITES: usize = 8192;

/// The whole machine state, shared with the hooks.
pub struct Machine {
    /// The CPU: unicorn, memory, threads, scheduling, clocks.
    pub cpu: Cpu,
    /// The Linux process the guest is.
    pub process: Process,
    /// What is observed and where events go.
    pub obs: Observation,
    /// Configuration.
    pub config: Config,
}
