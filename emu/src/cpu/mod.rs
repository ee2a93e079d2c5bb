//! The machine: one unicorn CPU with the LARDx86 units, guest memory, the
//! LARD sites found in guest code, deterministic scheduling and the
//! architectural vector clocks.

pub mod adversary;
pub mod code;
pub mod machine;
pub mod memory;
pub mod sched;
pub mod stacks;
pub mod uc;
pub mod vclock;
