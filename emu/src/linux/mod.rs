//! The Linux side of a user-mode emulator: the process image and initial
//! stack the kernel would build, and the system calls.

pub mod host_wait;
pub mod hostfd;
pub mod kernel;
pub mod loader;
pub mod process;
pub mod signals;
pub mod state;
pub mod syscalls;
pub mod sysroot;
