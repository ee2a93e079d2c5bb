//! The CPU's building blocks: the unicorn engine and its patches' entry
//! points, guest memory, the LARD sites found in guest code, stacks,
//! deterministic scheduling and the architectural vector clocks. The
//! machine that puts them together with the Linux process and observation
//! is [`crate::machine`].

pub mod access_buffer;
pub mod code;
pub mod memory;
pub mod sched;
pub mod stacks;
pub mod thread_sets;
pub mod uc;
pub mod vclock;
